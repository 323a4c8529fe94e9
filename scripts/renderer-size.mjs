// The renderer's initial JavaScript, gzipped, against its budget (docs/PERFORMANCE.md: the renderer loads
// at once; initial JavaScript ≤ 120 kB gzip). "Initial" is what the browser fetches before the
// first view can paint: the entry script of out/renderer/index.html and every chunk it lists as
// a modulepreload (Vite lists there exactly the chunks the entry imports statically, however
// deep). The chunks of the views, the palette and everything else loaded by a dynamic import
// are not counted: they are fetched after, or beside, the first paint.
//
// Sizes are gzip at level 9 of each file as built, which is about what a browser receives from
// a server that compresses; the bridge serves the files as they are over loopback, so this is
// a budget on the code to parse, measured in the unit the issue states it in.
//
// Needs the build (`electron-vite build`); prints one line per file and the total, and exits 1
// over budget. RENDERER_BUDGET_KB overrides the budget (to see it fail, or to try a tighter one).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const ROOT = resolve(import.meta.dirname, '..');
const OUT = join(ROOT, 'out', 'renderer');
const INDEX = join(OUT, 'index.html');
const DEFAULT_BUDGET_KB = 120;
/** kB as the issue and Vite's build report use it: 1,000 bytes. */
const KB = 1000;

function budgetKb() {
  const raw = process.env.RENDERER_BUDGET_KB;
  if (raw === undefined || raw === '') return DEFAULT_BUDGET_KB;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`renderer-size: RENDERER_BUDGET_KB must be a positive number of kB, got ${JSON.stringify(raw)}`);
    process.exit(2);
  }
  return value;
}

/** The entry script(s) and modulepreloads of index.html, in the order the page lists them. */
function initialScripts(html) {
  const files = [];
  const tag = /<(script|link)\b[^>]*>/gi;
  for (const [element, name] of html.matchAll(tag)) {
    const attr = (key) => new RegExp(`\\b${key}\\s*=\\s*["']([^"']*)["']`, 'i').exec(element)?.[1];
    const isScript = name.toLowerCase() === 'script' && attr('type') === 'module' && attr('src');
    const isPreload = name.toLowerCase() === 'link' && attr('rel') === 'modulepreload' && attr('href');
    if (isScript) files.push({ kind: 'entry', href: attr('src') });
    else if (isPreload) files.push({ kind: 'preload', href: attr('href') });
  }
  return files;
}

const kb = (bytes) => (bytes / KB).toFixed(2).padStart(8);

function main() {
  if (!existsSync(INDEX)) {
    console.error('renderer-size: out/renderer/index.html is missing: run `electron-vite build` first');
    return 2;
  }
  const budget = budgetKb();
  const scripts = initialScripts(readFileSync(INDEX, 'utf8'));
  if (!scripts.some((s) => s.kind === 'entry')) {
    console.error('renderer-size: index.html has no <script type="module" src>: the build changed shape, update this script');
    return 2;
  }
  const rows = [];
  for (const { kind, href } of scripts) {
    if (/^[a-z]+:/i.test(href)) {
      console.error(`renderer-size: ${href} is not a file of the build; the renderer must load nothing from elsewhere`);
      return 2;
    }
    const file = resolve(dirname(INDEX), href);
    const bytes = readFileSync(file);
    rows.push({ kind, name: relative(OUT, file), raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length });
  }
  rows.sort((a, b) => b.gzip - a.gzip);
  const total = rows.reduce((sum, r) => sum + r.gzip, 0);
  const totalRaw = rows.reduce((sum, r) => sum + r.raw, 0);
  console.log('renderer initial JavaScript (entry + modulepreloads of out/renderer/index.html), kB = 1,000 bytes');
  console.log(`${'gzip -9'.padStart(8)}  ${'raw'.padStart(8)}  file`);
  for (const r of rows) console.log(`${kb(r.gzip)}  ${kb(r.raw)}  ${r.name}${r.kind === 'entry' ? ' (entry)' : ''}`);
  console.log(`${kb(total)}  ${kb(totalRaw)}  total of ${rows.length} files; budget ${budget} kB gzip`);
  if (total > budget * KB) {
    console.error(
      `renderer-size: over budget: the initial JavaScript is ${(total / KB).toFixed(2)} kB gzip, more than ${budget} kB. ` +
        'Something the first paint does not need is imported statically from main.tsx or app.tsx (load it with a dynamic import, ' +
        'or move it out of the modules the shell imports), or code the renderer build leaves out came back (electron.vite.config.ts); ' +
        'the largest files are listed first above.',
    );
    return 1;
  }
  console.log(`renderer-size: within budget (${((total / (budget * KB)) * 100).toFixed(0)}% of ${budget} kB)`);
  return 0;
}

process.exitCode = main();
