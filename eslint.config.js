// ESLint flat config. The layer rules of docs/DESIGN.md live here, as VS Code keeps its import
// patterns in lint: which folder may import which, and which packages each layer may use.
// tests/lint-layers.test.ts lints a deliberately bad fixture for every rule to prove it bites.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

const NODE_ONLY = ['better-sqlite3', 'fastify', '@fastify/*', 'undici', 'ws', 'pino', 'jose', 'commander'];
const NODE_BUILTINS = ['node:*', 'fs', 'fs/*', 'path', 'os', 'child_process', 'crypto', 'net', 'http', 'https', 'worker_threads', 'stream', 'url', 'util'];

const layer = (...groups) => ({ patterns: groups.filter(Boolean) });

/** src-main's folders, lowest first: a folder may import those before it, never after. */
const MAIN_LAYERS = ['base', 'journal', 'runtime', 'net', 'providers', 'peers', 'protocols', 'plane', 'bridge', 'cli', 'electron'];
const deny = (group, message) => ({ group, message });

/** The renderer's tests and their support: Node-side files that never reach the bundle. */
const RENDERER_TESTS = ['src-renderer/**/*.test.{ts,tsx}', 'src-renderer/**/testing/**/*.{ts,tsx}'];

/** Files whose layer rules are proved by fixtures; typed rules cannot run on virtual paths. */
const FIXTURE = '**/*.lint-fixture.{ts,tsx}';

/**
 * The journal's door: outside src-main/journal nothing reaches the journal's store. The layers
 * above read through the Journal's own methods (journal.ts), the seam a second backend plugs in
 * beneath, so neither a `<journal>.store` nor an import of a store module may appear outside it.
 * From those modules only plain data and plain helpers may be imported: row types, and the
 * data dir's file name and the hash every layer shares. The check of `.store` is by name (a
 * journal is a value called `journal`, `…Journal`, or a `journal` property).
 */
const JOURNAL_DOOR_SYNTAX = [
  {
    selector: "MemberExpression[property.name='store']:matches([object.name=/(^j|J)ournal$/], [object.property.name=/(^j|J)ournal$/])",
    message: "outside src-main/journal, ask the Journal (journal.ts's methods), never its store: the journal's door (eslint.config.js).",
  },
];
const JOURNAL_DOOR_IMPORTS = [
  {
    regex: '(^|/)journal/sqlite-store$',
    allowImportNames: ['journalPath', 'sha256Hex'],
    message: 'outside src-main/journal, the SQLite store is not imported (only journalPath and sha256Hex): ask the Journal, the journal\'s door (eslint.config.js).',
  },
  {
    regex: '(^|/)journal/journal$',
    importNames: ['journalStoreOf'],
    message: "outside src-main/journal, a journal's store is not reached through journalStoreOf: ask the Journal, the journal's door (eslint.config.js).",
  },
  {
    regex: '(^|/)journal/postgres-(store|schema)$',
    message: "outside src-main/journal, the PostgreSQL store is not imported: open a Journal with databaseUrl (postgres-url.ts chooses it), the journal's door (eslint.config.js).",
  },
  { regex: '(^|/)journal/sqlite-reader$', message: 'outside src-main/journal, the SQLite reader is not imported: ask the Journal, the journal\'s door (eslint.config.js).' },
  {
    regex: '(^|/)journal/journal-store$',
    allowImportNames: ['PreparedDraft', 'StoredRecord', 'JournalHead', 'RunSummaryRow', 'ObservedRunRow', 'ChildRunRow', 'OwnedRunRow', 'OwnedRunsQuery'],
    message: "outside src-main/journal, only journal-store.ts's plain row types are imported, never the store's interface: ask the Journal, the journal's door (eslint.config.js).",
  },
];

/** Security defaults that must not be weakened anywhere (docs/DESIGN.md "Security baseline"). */
const SECURITY_SYNTAX = [
  { selector: "Property[key.name='nodeIntegration'][value.value=true]", message: 'nodeIntegration stays off.' },
  { selector: "Property[key.name='contextIsolation'][value.value=false]", message: 'contextIsolation stays on.' },
  { selector: "Property[key.name='sandbox'][value.value=false]", message: 'sandbox stays on.' },
  { selector: "Property[key.name='webSecurity'][value.value=false]", message: 'webSecurity stays on.' },
];

export default tseslint.config(
  {
    ignores: [
      'out/**', 'dist/**', 'node_modules/**', 'native/**', 'tests/lint-fixtures/**', 'test-results/**', 'coverage/**',
      // The build's temporary config bundles: `npm test` lints beside the build, and a file the
      // build deletes mid-lint fails lint with ENOENT (tests/lint-layers.test.ts).
      '**/*.config.ts.*.mjs', '**/*.config.ts.timestamp-*.mjs',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    ignores: [FIXTURE],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { attributes: false } }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.{js,mjs,cjs}'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['src-renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
  },

  // ---- Layer rules (docs/DESIGN.md "Layout", docs/STYLE.md 1 and 2) ----
  {
    // src-shared: pure TypeScript, imports nothing of ours and no package but zod.
    files: ['src-shared/**/*.{ts,tsx}'],
    ignores: ['src-shared/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        layer(
          deny(['**/src-main/**', '**/src-renderer/**', '**/src-preload/**'], 'src-shared imports nothing of ours (docs/DESIGN.md layer rules).'),
          deny(NODE_BUILTINS, 'src-shared is pure: no Node built-ins, so it runs in the renderer too.'),
          { regex: '^(?!zod(/|$))[^.]', message: 'src-shared may import only zod among packages.' },
        ),
      ],
    },
  },
  {
    // src-renderer: the page. Only src-shared of ours; never Node, never Electron.
    files: ['src-renderer/**/*.{ts,tsx}'],
    ignores: RENDERER_TESTS,
    rules: {
      'no-restricted-imports': [
        'error',
        layer(
          deny(['**/src-main/**', '**/src-preload/**'], 'the renderer talks to main only through the IPC contract (src-shared/ipc).'),
          deny(['electron', 'electron/*'], 'only src-main/electron and src-preload import electron.'),
          deny([...NODE_BUILTINS, ...NODE_ONLY], 'Node-only modules never reach the renderer bundle.'),
        ),
      ],
    },
  },
  {
    // The renderer's own tests (and their testing/ support, which nothing in the app imports)
    // run in Node beside a real plane. They still reach it only as the page does, through the
    // contract client; tests/support builds the plane and the transport.
    files: RENDERER_TESTS,
    languageOptions: { globals: { ...globals.node } },
    rules: {
      'no-restricted-imports': [
        'error',
        layer(
          deny(['**/src-main/**', '**/src-preload/**'], 'renderer tests reach the plane through tests/support and the contract client, as the page does.'),
          deny(['electron', 'electron/*'], 'only src-main/electron and src-preload import electron.'),
        ),
      ],
    },
  },
  {
    // src-preload: src-shared and electron, nothing else (it is bundled into one sandboxed file).
    files: ['src-preload/**/*.{ts,tsx}'],
    rules: {
      'no-restricted-imports': [
        'error',
        layer(
          deny(['**/src-main/**', '**/src-renderer/**'], 'the preload imports only src-shared of ours.'),
          deny([...NODE_BUILTINS, ...NODE_ONLY, 'react', 'react-dom', 'zustand'], 'the preload is sandboxed: src-shared and electron only.'),
        ),
      ],
    },
  },
  {
    // Tests under src-main: free to assemble any layers, but still plain Node.
    files: ['src-main/**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        layer(
          deny(['**/src-renderer/**', '**/src-preload/**'], 'main never imports renderer or preload code.'),
          deny(['electron', 'electron/*'], "only src-main/electron imports 'electron': the rest runs on plain Node (CLI, headless plane)."),
          deny(['react', 'react-dom', 'zustand'], 'UI packages belong to the renderer.'),
        ),
      ],
    },
  },
  // src-main's inner layers (docs/ARCHITECTURE.md), lowest first: each folder imports only
  // folders before it in MAIN_LAYERS, never one after it, and production code never imports
  // tests/. Tests beside the code (*.test.ts) are exempt: they assemble whole planes.
  ...MAIN_LAYERS.map((name, index) => {
    const above = MAIN_LAYERS.slice(index + 1);
    return {
      files: [`src-main/${name}/**/*.{ts,tsx}`],
      ignores: ['src-main/**/*.test.ts'],
      rules: {
        'no-restricted-imports': [
          'error',
          layer(
            deny(['**/src-renderer/**', '**/src-preload/**'], 'main never imports renderer or preload code.'),
            name === 'electron' ? null : deny(['electron', 'electron/*'], "only src-main/electron imports 'electron': the rest runs on plain Node (CLI, headless plane)."),
            deny(['react', 'react-dom', 'zustand'], 'UI packages belong to the renderer.'),
            above.length > 0
              ? { regex: `^(\\.\\./)+(${above.join('|')})(/|$)`, message: `src-main/${name} sits below ${above.join(', ')} and imports none of them (docs/ARCHITECTURE.md); reach up through an interface this layer owns.` }
              : null,
            { regex: '^(\\.\\./)+tests(/|$)', message: 'production code never imports tests/ (test doubles and support live there).' },
          ),
        ],
      },
    };
  }),
  // The journal's door (JOURNAL_DOOR_SYNTAX, JOURNAL_DOOR_IMPORTS): every file outside
  // src-main/journal, tests too. The imports go through the typescript-eslint rule of the same
  // job, a rule of its own name, so they add to the layer rules above instead of replacing them
  // (a file's options for one rule are replaced, not merged, by a later block). bench/ is left
  // out: a bench measures the SQLite store itself (its WAL syncs and commit counters).
  {
    files: ['**/*.{ts,tsx}'],
    ignores: ['src-main/journal/**', 'bench/**'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { patterns: JOURNAL_DOOR_IMPORTS }] },
  },
  {
    files: ['tests/**/*.{ts,tsx}', 'e2e/**/*.{ts,tsx}'],
    rules: { 'no-restricted-syntax': ['error', ...JOURNAL_DOOR_SYNTAX] },
  },
  {
    // Security defaults that must not be weakened anywhere (SECURITY_SYNTAX), and the journal's door.
    files: ['src-*/**/*.{ts,tsx}'],
    rules: { 'no-restricted-syntax': ['error', ...SECURITY_SYNTAX, ...JOURNAL_DOOR_SYNTAX] },
  },
  {
    // Inside the journal its own files reach its store; the security defaults hold as everywhere.
    files: ['src-main/journal/**/*.{ts,tsx}'],
    rules: { 'no-restricted-syntax': ['error', ...SECURITY_SYNTAX] },
  },
);
