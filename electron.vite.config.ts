/**
 * One build for the three bundles. Main (Electron entry and the CLI) stays ESM with its npm
 * dependencies external; the preload is one CommonJS file with everything bundled in, so it
 * runs under `sandbox: true`; the renderer is a Vite React app rooted at src-renderer, minified,
 * with one lazily loaded chunk per view.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parse as parseYaml } from 'yaml';
import { defineConfig } from 'electron-vite';
import type { Plugin } from 'vite';
import react from '@vitejs/plugin-react';

const ZOD_JSON_SCHEMA = '\0renderer-zod-json-schema:';

/**
 * Leaves zod's JSON Schema output out of the renderer (docs/PERFORMANCE.md: initial JavaScript ≤ 120 kB
 * gzip; scripts/renderer-size.mjs checks it). zod's classic schemas import the JSON Schema
 * generator and one processor per schema type for `.toJSONSchema()` and Standard Schema's
 * `jsonSchema`, so every bundle that validates with zod carries it (about 5 kB gzip, in the
 * chunk the contract client needs before the first rows). The renderer only parses: it never
 * asks a schema for its JSON Schema (the plane sends agents' input schemas as JSON already).
 *
 * So, in the renderer build only, classic/schemas.js's two imports of that code resolve to a
 * module with the same export names, each a function that throws if it is ever called;
 * `aggregateChecks` stays the real one, because the `.minLength`, `.isInt`, `.format`… getters
 * read it. Parsing, errors and messages are untouched. Should zod move these files, nothing is
 * replaced and the bundle is only larger again, which the size check reports.
 */
function rendererWithoutZodJsonSchema(): Plugin {
  const replaced = new Set(['../core/json-schema-processors.js', '../core/to-json-schema.js']);
  const kept = new Set(['aggregateChecks']);
  return {
    name: 'agentplane:renderer-without-zod-json-schema',
    enforce: 'pre',
    resolveId(source, importer) {
      if (!importer || !replaced.has(source) || !/[\\/]zod[\\/]v4[\\/]classic[\\/]schemas\.js$/.test(importer)) return null;
      const real = resolve(dirname(importer), source);
      return existsSync(real) ? ZOD_JSON_SCHEMA + real : null;
    },
    load(id) {
      if (!id.startsWith(ZOD_JSON_SCHEMA)) return null;
      const real = id.slice(ZOD_JSON_SCHEMA.length);
      const names = [...readFileSync(real, 'utf8').matchAll(/^export (?:const|function) (\w+)/gm)].map((m) => m[1]!);
      const refuse = `() => { throw new Error('zod JSON Schema output is left out of the renderer bundle (electron.vite.config.ts)'); }`;
      const keep = names.filter((name) => kept.has(name));
      return [
        ...(keep.length > 0 ? [`export { ${keep.join(', ')} } from ${JSON.stringify(real)};`] : []),
        // createToJSONSchemaMethod and createStandardJSONSchemaMethod are factories called when a
        // schema's `~standard` is read: they must return, and only what they return refuses.
        ...names.filter((name) => !kept.has(name)).map((name) => `export const ${name} = ${name.startsWith('create') ? `() => ${refuse}` : refuse};`),
      ].join('\n');
    },
  };
}

/**
 * zod without generated code in the renderer. The page's Content-Security-Policy has no
 * 'unsafe-eval' (src-renderer/index.html, the bridge's static plugin), so zod's generated
 * parsers can never run there; but unless its global config says `jitless`, zod finds that out
 * by trying `new Function("")` as it builds its first object schema, which the policy refuses
 * and reports as a violation (and a console error) on every load of the page
 * (e2e/shell.e2e.ts checks none is reported). The config must hold before any schema is built,
 * and schemas are built as the shared modules load, before the entry's own code runs: so zod's
 * config is created with `jitless: true` where zod creates it. Should zod change that line, the
 * build stops here rather than shipping the probe again.
 */
function rendererZodJitless(): Plugin {
  const created = '(_a.__zod_globalConfig = {})';
  return {
    name: 'agentplane:renderer-zod-jitless',
    transform(code, id) {
      if (!/[\\/]zod[\\/]v4[\\/]core[\\/]core\.js$/.test(id)) return null;
      if (!code.includes(created)) this.error(`zod/v4/core/core.js no longer creates its global config as ${created}; see rendererZodJitless in electron.vite.config.ts`);
      return code.replace(created, '(_a.__zod_globalConfig = { jitless: true })');
    },
  };
}

/**
 * The bundled agents' YAML manifests (resources/agents), parsed at build time into
 * out/main/bundled-agents.json: by file name, the SHA-256 of the text and what it parsed to
 * (PreParsedManifests, src-main/runtime/manifest.ts). The YAML files stay the source, comments
 * and all, since they are the examples people copy; at start the plane hashes each one and takes
 * the parsed form only for the exact text it came from, so the yaml package is not loaded at
 * all (bench serve-startup). A manifest that parses to anything JSON cannot hold stops the build.
 */
function bundledAgentsParsed(): Plugin {
  return {
    name: 'agentplane:bundled-agents',
    generateBundle() {
      const dir = resolve('resources/agents');
      const parsed: Record<string, { sha256: string; value: unknown }> = {};
      for (const file of readdirSync(dir).filter((f) => /\.ya?ml$/.test(f)).sort()) {
        const text = readFileSync(join(dir, file), 'utf8');
        const value: unknown = parseYaml(text);
        if (!isDeepStrictEqual(JSON.parse(JSON.stringify(value)) as unknown, value)) this.error(`resources/agents/${file} parses to something JSON cannot hold`);
        parsed[file] = { sha256: createHash('sha256').update(text).digest('hex'), value };
      }
      this.emitFile({ type: 'asset', fileName: 'bundled-agents.json', source: JSON.stringify(parsed) });
    },
  };
}

/**
 * Every module the renderer's entry loads statically (main.tsx and its imports, however deep),
 * found once the module graph is built; the renderer's one `shell` chunk is exactly these. Left
 * to the default splitting, each module the entry shares with a view became a chunk of its own,
 * and the page fetched ten files before its first line ran: over HTTP/1.1 that is two rounds on
 * Chromium's six connections per host, each file answered while the main thread was already
 * compiling the first. As one file the page's first rows came about 4% sooner (25 cold loads of
 * each build, alternated, against one `serve`: median 1,051 ms against 1,093 ms, with the
 * formatters of display-format.ts), and gzip counts 116 kB against 118 kB, one file compressing
 * better than ten. The views stay dynamic imports, each its own chunk, importing what they share
 * from the shell.
 *
 * The shell also takes the shared components (src-renderer/src/components) that the default
 * view, the Peers view, imports: the first view needs them anyway, and as chunks of their own
 * (200 to 1,600 bytes each) they were four more files fetched, parsed and linked after the
 * view's chunk before its first render could run. In the shell they cost about 1 kB gzip, and
 * the first rows came sooner (bench renderer-load, four alternating runs, medians: 457 -> 425 ms,
 * the page's script time before the rows 128 -> 112 ms). The view's own modules stay its chunk.
 * DEFAULT_VIEW names that view; the build stops if its file is gone.
 */
/** The view the page opens on (src-renderer/src/lib/route.ts DEFAULT_ROUTE), and where the shared components live. */
const DEFAULT_VIEW = '/src-renderer/src/sections/peers-section.tsx';
const SHARED_COMPONENTS = '/src-renderer/src/components/';

function rendererShellChunk(): { plugin: Plugin; test: (id: string) => boolean } {
  const shell = new Set<string>();
  return {
    test: (id) => shell.has(id),
    plugin: {
      name: 'agentplane:renderer-shell-chunk',
      buildEnd() {
        shell.clear();
        const entries = [...this.getModuleIds()].filter((id) => this.getModuleInfo(id)?.isEntry);
        if (entries.length !== 1) this.error(`the renderer has ${entries.length} entry modules; rendererShellChunk expects one (src-renderer/src/main.tsx)`);
        const stack = [...entries];
        while (stack.length > 0) {
          const id = stack.pop()!;
          if (shell.has(id)) continue;
          shell.add(id);
          stack.push(...(this.getModuleInfo(id)?.importedIds ?? []));
        }
        // The shared components the default view imports (its own modules stay its chunk).
        const view = [...this.getModuleIds()].find((id) => id.endsWith(DEFAULT_VIEW));
        if (!view) this.error(`the renderer's default view ${DEFAULT_VIEW} is not in the build; see rendererShellChunk in electron.vite.config.ts`);
        const reached = new Set<string>();
        const walk = [...(this.getModuleInfo(view)?.importedIds ?? [])];
        while (walk.length > 0) {
          const id = walk.pop()!;
          if (reached.has(id) || shell.has(id) || id === view) continue;
          reached.add(id);
          walk.push(...(this.getModuleInfo(id)?.importedIds ?? []));
        }
        for (const id of reached) if (id.includes(SHARED_COMPONENTS)) shell.add(id);
      },
    },
  };
}
const rendererShell = rendererShellChunk();

export default defineConfig({
  main: {
    plugins: [bundledAgentsParsed()],
    build: {
      // Dependencies stay in node_modules, loaded by Node at run time, except these two: both
      // are ES module packages of many small files (zod about 97 loaded at start, jose 46), and
      // Node resolves, reads and links each file on its own. Bundled, zod loads in about 84 ms
      // against 140 ms from its folder, and `serve` reaches its URL line about 85 ms sooner
      // (bench serve-startup: 3.19x -> 3.08x of bare fastify). Both are pure JavaScript with no
      // files of their own to find at run time. zod's schema registry is shared across copies
      // (globalThis.__zod_globalRegistry), so a copy a dependency loads agrees with this one.
      // Bundling the large CommonJS packages too (undici, ajv, yaml) moved nothing measurable.
      externalizeDeps: { exclude: ['zod', 'jose'] },
      outDir: 'out/main',
      rolldownOptions: {
        input: {
          index: resolve('src-main/electron/main.ts'),
          cli: resolve('src-main/cli/main.ts'),
          // The process that hosts the plane (a utilityProcess in the app, a child process elsewhere).
          'plane-host': resolve('src-main/electron/plane-host-entry.ts'),
          // A worker thread's entry (journal-workers.ts starts it from out/main/journal-worker.js).
          'journal-worker': resolve('src-main/journal/journal-worker.ts'),
          // The acp tap's journal worker thread (observation-worker.ts starts out/main/acp-tap-worker.js).
          'acp-tap-worker': resolve('src-main/protocols/acp/acp-tap-worker.ts'),
          // The demo ACP agent as its own process (demo-agent-command.ts starts out/main/acp-demo-agent.js).
          'acp-demo-agent': resolve('src-main/protocols/acp/demo/demo-agent.ts'),
        },
        output: {
          codeSplitting: {
            groups: [
              // The start-up trace is imported first thing by the CLI's entry; left to the default
              // splitting it lands in the plane's chunk, and every CLI call (`agentplane peer list`,
              // `--version`) then loads the whole plane and its dependencies before doing anything.
              { name: 'startup-trace', test: /src-main[\\/]base[\\/]startup-trace\.ts$/ },
            ],
          },
        },
      },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      externalizeDeps: false,
      rolldownOptions: {
        input: { index: resolve('src-preload/index.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: 'src-renderer',
    base: './',
    plugins: [rendererWithoutZodJsonSchema(), rendererZodJitless(), rendererShell.plugin, react()],
    build: {
      outDir: resolve('out/renderer'),
      emptyOutDir: true,
      // electron-vite's renderer preset leaves the bundle unminified; the page is parsed on
      // every window and every browser tab of `serve`, so ship it minified (docs/PERFORMANCE.md).
      minify: true,
      rolldownOptions: {
        input: { index: resolve('src-renderer/index.html') },
        output: {
          // Each view is a dynamic import (sections/section-chunks.ts), so it is its own chunk,
          // named for its module: assets/peers-section-<hash>.js. Names stay readable in the
          // bench's breakdown and in a browser's network panel.
          entryFileNames: 'assets/[name]-[hash].js',
          chunkFileNames: 'assets/[name]-[hash].js',
          // The entry and everything it imports statically, as one chunk (rendererShellChunk).
          codeSplitting: { groups: [{ name: 'shell', test: rendererShell.test }] },
        },
      },
    },
  },
});
