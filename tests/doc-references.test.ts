/**
 * Every document this repository's own text cites is in the repository, so a person who clones
 * it can follow every citation. Two rules, each reported as file:line:
 *
 * - A document path that does not exist. A document path is a `.md` path under `docs/`, or one
 *   whose file name is written in capitals (`README.md`, `docs/STYLE.md`, `./SECURITY.md`),
 *   or, in a Markdown file, any `.md` link target. It resolves against the repository root or
 *   the citing file's folder. Lower-case names elsewhere (`notes/a.md` in a test) are data, not
 *   citations; anything inside a URL is someone else's page.
 * - A citation of a document kept outside the repository: a numbered source text ("seed" and
 *   three digits, also when a comment wraps between the two) or a path into a folder beside the
 *   repository (`../shared`, `shared/DESIGN.md`), "the seed's" rule, or a numbered issue of a
 *   tracker the clone does not carry ("issue 16"). docs/PEER-PROTOCOL.md and
 *   docs/GOVERNED-RUNTIME.md are where those rules live now.
 *
 * The files scanned are git's (tracked, and untracked but not ignored), less node_modules,
 * build output, fixture data, this file, whose examples are the bad references, and the vendored
 * A2A TCK (tools/a2a-tck), whose text and README name upstream's own documents, not this
 * repository's.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

const TEXT_FILE = /\.(?:ts|tsx|mts|cts|js|mjs|cjs|json|md|yml|yaml|sh|html|css|txt)$/;
const NOT_SCANNED = [/^node_modules\//, /\/node_modules\//, /^out\//, /^tests\/fixtures\//, /(^|\/)package-lock\.json$/, /^tests\/doc-references\.test\.ts$/, /^tools\/a2a-tck\//];

interface Hit {
  line: number;
  text: string;
}

const PATH = /(?<![\w/.-])((?:\.{1,2}\/)*(?:[\w.-]+\/)*[\w.-]+\.md)(?![\w-])/g;
const URL = /\b[a-z][a-z0-9+.-]*:\/\/[^\s)'"`<>\]]+/gi;

/** Whether `path` (as written) names a document rather than a data file. */
function isDocumentPath(path: string, markdownLink: boolean): boolean {
  if (path.includes('node_modules/')) return false;
  const name = path.slice(path.lastIndexOf('/') + 1);
  return markdownLink || /^[A-Z][A-Z0-9_-]*\.md$/.test(name) || /^(?:\.{1,2}\/)*docs\//.test(path);
}

/** The document paths a text cites, with their lines. `markdown`: the text is a Markdown file. */
function findDocumentReferences(text: string, markdown: boolean): Hit[] {
  const hits: Hit[] = [];
  text.split('\n').forEach((line, index) => {
    const urls = [...line.matchAll(URL)].map((m) => [m.index, m.index + m[0].length] as const);
    for (const match of line.matchAll(PATH)) {
      const start = match.index;
      if (urls.some(([from, to]) => start >= from && start < to)) continue;
      const path = match[1]!;
      const before = line.slice(0, start);
      const after = line.slice(start + path.length);
      // A Markdown link's label ([`SECURITY.md`](docs/SECURITY.md)) names its target, which is checked.
      if (markdown && /^`?\]\(/.test(after)) continue;
      // A quoted segment of a path built in code (join(root, 'docs', 'X.md')) is checked by running it.
      if (/\b(?:join|resolve)\([^()]*['"]$/.test(before) && /^['"]/.test(after)) continue;
      const markdownLink = markdown && before.endsWith('](');
      if (isDocumentPath(path, markdownLink)) hits.push({ line: index + 1, text: path });
    }
  });
  return hits;
}

const FOREIGN = [/\bseeds?\s+\d{3}\b/i, /\bthe seeds?'s?(?=\s)/i, /\bissues?\s+#?\d+\b/i, /(?<![\w-])\.\.\/shared(?![\w-])/, /(?<![\w-])shared\/(?:DESIGN|STYLE|TOOLCHAIN|seeds)\b/, /\/work\/shared\b/];
const COMMENT_LEAD = /^\s*(?:\*|\/\/|#)?\s*/;

/** Citations of documents kept outside the repository, with their lines. */
function findForeignCitations(text: string): Hit[] {
  const lines = text.split('\n');
  const hits: Hit[] = [];
  lines.forEach((line, index) => {
    const next = lines[index + 1]?.replace(COMMENT_LEAD, '') ?? '';
    const wrapped = /\bseeds?\s*$/i.test(line) && /^\d{3}\b/.test(next);
    if (wrapped || FOREIGN.some((rule) => rule.test(line))) hits.push({ line: index + 1, text: line.trim() });
  });
  return hits;
}

function scannedFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return listed
    .split('\n')
    .filter((file) => (TEXT_FILE.test(file) || file.startsWith('.ci/')) && !NOT_SCANNED.some((rule) => rule.test(file)))
    .filter((file) => existsSync(join(root, file)) && statSync(join(root, file)).isFile());
}

function resolves(file: string, path: string): boolean {
  const bare = path.replace(/#.*$/, '');
  return existsSync(join(root, bare)) || existsSync(join(root, dirname(file), bare));
}

describe('the reference finders', () => {
  it('find a document path, and know a data file name and a URL from one', () => {
    const text = [
      'see docs/NOPE.md and (docs/DESIGN.md, "Layout")',
      "save('notes/a.md') and join(dir, 'upload.md')",
      'https://github.com/owner/repo/blob/main/README.md and ./CONTRIBUTING.md',
      'the README.md of node_modules/some-package/README.md',
      "readFileSync(join(root, 'docs', 'ARCHITECTURE.md'))",
    ].join('\n');
    expect(findDocumentReferences(text, false)).toEqual([
      { line: 1, text: 'docs/NOPE.md' },
      { line: 1, text: 'docs/DESIGN.md' },
      { line: 3, text: './CONTRIBUTING.md' },
      { line: 4, text: 'README.md' },
    ]);
    expect(findDocumentReferences('[the rules](./rules.md), `notes/b.md`, [`GONE.md`](docs/GONE.md)', true)).toEqual([
      { line: 1, text: './rules.md' },
      { line: 1, text: 'docs/GONE.md' },
    ]);
  });

  it('resolve against the root and the citing folder, and refuse what is in neither', () => {
    expect(resolves('src-main/x.ts', 'docs/DESIGN.md')).toBe(true);
    expect(resolves('docs/ARCHITECTURE.md', 'SECURITY.md')).toBe(true);
    expect(resolves('src-main/x.ts', 'DESIGN.md')).toBe(false);
    expect(resolves('src-main/x.ts', 'docs/NOPE.md')).toBe(false);
  });

  it('find a citation of an outside document, also when a comment wraps inside it', () => {
    const numbered = 'seed 002';
    const text = [
      ` * rules (${numbered}, "Model providers")`,
      ' * never reported failed (seed',
      ' *   002: "the run stays among the waiting runs")',
      "import { x } from '../src-shared/ipc/client';",
      'read ../shared/DESIGN.md first',
      'a seeded PRNG; the seed is printed',
      "the seed's deadlock",
      'found in issue 16',
    ].join('\n');
    expect(findForeignCitations(text).map((hit) => hit.line)).toEqual([1, 2, 5, 7, 8]);
  });
});

describe('the repository cites only documents it has', () => {
  const files = scannedFiles();

  it('scans the repository', () => {
    expect(files).toContain('docs/ARCHITECTURE.md');
    expect(files).toContain('eslint.config.js');
    expect(files.length).toBeGreaterThan(100);
  });

  it('every document path cited exists', () => {
    const missing: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const hit of findDocumentReferences(text, file.endsWith('.md'))) {
        if (!resolves(file, hit.text)) missing.push(`${file}:${hit.line}: ${hit.text}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('no document outside the repository is cited', () => {
    const foreign: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8');
      for (const hit of findForeignCitations(text)) foreign.push(`${file}:${hit.line}: ${hit.text}`);
    }
    expect(foreign).toEqual([]);
  });
});
