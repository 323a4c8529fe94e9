/**
 * How long the renderer takes to load (docs/PERFORMANCE.md). Subject: `agentplane serve`'s page,
 * opened cold in headless Chromium on a data dir with four peers registered, from navigation
 * start until the Peers view (the default view) shows its first rows: the rows are in the DOM
 * and a frame has been produced with them. Baseline: a blank React page (React and ReactDOM
 * rendering one element), built at bench start with Vite's `build` and the renderer's minify
 * settings, served over loopback by the same bridge: a web bridge of this process
 * (startWebBridge over a plane of its own on a temp data dir) whose renderer folder is the blank
 * page's, so its files go out with everything `serve` sends the UI's (the bridge's response
 * headers, the static plugin's CSP and cache rules); measured the same way, until
 * its element is on screen.
 *
 * The bridge's headers matter to the comparison: with `Cross-Origin-Opener-Policy: same-origin`
 * on its document, a page opened in a fresh browser context is moved into a new browsing
 * context group, which headless Chromium does with a new renderer process, about 45 ms before
 * the page's first script is even requested (measured: the UI's script requested at 74 ms with
 * the header, 32 ms without). Served without the bridge's headers, the blank page was spared
 * that and the UI was not.
 *
 * Every round is a new browser context (an empty cache, a new session storage: what a first
 * visit costs), subject and baseline alternated so drift in the machine hits both alike; one
 * warm-up pair is dropped. Medians are judged.
 *
 * Where the time goes (item 6): each page's own phases, read in the page from the Navigation
 * and Resource Timing APIs and a MutationObserver installed before any script runs, and the
 * main thread's busy time from the Chrome DevTools Protocol's Performance.getMetrics (script,
 * style, layout), printed as medians under the result. The plane itself runs in the `serve`
 * child process, outside this process's CPU profile; what run.ts's profile shows is the bench
 * driver and the baseline's server.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium, type Browser } from 'playwright-core';
import { build } from 'vite';
import { CHROMIUM_ARGS, CHROMIUM_PATH, requireChromium, VIEWPORT } from '../e2e/support/chromium';
import { callCommand, REPO_ROOT, requireBuild, startServe } from '../e2e/support/serve-process';
import { startWebBridge } from '../src-main/bridge/web-bridge';
import { createPlane } from '../src-main/plane/plane';
import type { Benchmark, BenchResult, Measurement } from './bench-types';
import { scriptName, summariseProfile, type CpuProfile } from './cpu-profile';

const ROUNDS = 9;
const WARMUP = 1;
const GOAL_RATIO = 1.5;
/** Peers beside the two demo peers, so the table has a few rows to show. */
const EXTRA_PEERS = ['gamma', 'delta'];
/** The Peers view's first row: a peer's name cell in its table. */
const SUBJECT_ROWS = '#content table tbody th[scope="row"]';
const BASELINE_ELEMENT = '#root > p';

/** What the page reports about one load; every time in ms from navigation start. */
interface PageLoad {
  /** The rows (or the baseline's element) are in the DOM and a frame was produced with them. */
  firstRows: number;
  /** The first element React put into #root (the shell, for the subject). */
  firstRender: number;
  firstContentfulPaint: number | null;
  htmlEnd: number;
  domInteractive: number;
  /** When the last script of index.html (entry and modulepreloads) had arrived. */
  initialScriptsEnd: number;
  initialScripts: number;
  /** The view's own chunk (subject only). */
  viewChunkEnd: number | null;
  /** The first command answer the rows came from (subject only: peers.list). */
  dataStart: number | null;
  dataEnd: number | null;
  /** Commands answered before the first rows. */
  commandsBefore: number;
  /** Main-thread busy time up to the first rows (CDP Performance.getMetrics), ms. */
  scriptMs: number;
  styleMs: number;
  layoutMs: number;
  taskMs: number;
}

/**
 * Runs in every page before its own scripts (an init script, which the page's CSP does not
 * govern): notes when #root gets its first element and when `selector` matches, then waits a
 * frame, as timeline.bench.ts does.
 */
const observerScript = (selector: string) => `(() => {
  const marks = {};
  let loaded;
  window.__benchLoad = marks;
  window.__benchLoaded = new Promise((resolve) => { loaded = resolve; });
  const check = () => {
    const root = document.getElementById('root');
    if (marks.firstRender === undefined && root && root.firstElementChild) marks.firstRender = performance.now();
    if (marks.rowsInDom === undefined && document.querySelector(${JSON.stringify(selector)})) {
      marks.rowsInDom = performance.now();
      observer.disconnect();
      requestAnimationFrame(() => { marks.firstRows = performance.now(); loaded(); });
    }
  };
  const observer = new MutationObserver(check);
  observer.observe(document, { subtree: true, childList: true });
})()`;

/** Runs in the page once the rows are there: its timing entries, reduced to the phases. */
const readPhases = (initialScripts: string[], viewChunk: string | null, dataCommand: string | null) => `(() => {
  const marks = window.__benchLoad;
  const nav = performance.getEntriesByType('navigation')[0];
  const resources = performance.getEntriesByType('resource');
  const file = (r) => new URL(r.name).pathname.split('/').pop();
  const initial = resources.filter((r) => ${JSON.stringify(initialScripts)}.includes(file(r)));
  const viewChunk = ${JSON.stringify(viewChunk)};
  const view = viewChunk ? resources.find((r) => file(r).startsWith(viewChunk + '-')) : undefined;
  const commands = resources.filter((r) => new URL(r.name).pathname.startsWith('/api/commands/') && r.responseEnd <= marks.firstRows);
  const dataCommand = ${JSON.stringify(dataCommand)};
  const data = dataCommand ? commands.find((r) => new URL(r.name).pathname === '/api/commands/' + dataCommand) : undefined;
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  return {
    firstRows: marks.firstRows,
    firstRender: marks.firstRender,
    firstContentfulPaint: fcp ? fcp.startTime : null,
    htmlEnd: nav.responseEnd,
    domInteractive: nav.domInteractive,
    initialScriptsEnd: Math.max(...initial.map((r) => r.responseEnd)),
    initialScripts: initial.length,
    viewChunkEnd: view ? view.responseEnd : null,
    dataStart: data ? data.startTime : null,
    dataEnd: data ? data.responseEnd : null,
    commandsBefore: commands.length,
  };
})()`;

/** The scripts index.html loads before anything else: its module script and modulepreloads. */
function initialScriptsOf(indexHtml: string): string[] {
  return [...indexHtml.matchAll(/<(?:script|link)\b[^>]*(?:src|href)="\.\/assets\/([^"]+\.js)"/g)].map((m) => m[1]!);
}

/** Gzip -9 of the initial scripts, as scripts/renderer-size.mjs counts them. */
function initialGzipKb(dir: string): number {
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  return initialScriptsOf(html).reduce((sum, name) => sum + gzipSync(readFileSync(join(dir, 'assets', name)), { level: 9 }).length, 0) / 1000;
}

/**
 * The blank React page, built like the renderer (Vite, minified, same chunk names). It lives
 * in a temp folder outside the repository, so React is aliased to the repository's copy.
 */
async function buildBlankReactPage(root: string): Promise<string> {
  const src = join(root, 'blank-src');
  const out = join(root, 'blank-out');
  mkdirSync(src, { recursive: true });
  writeFileSync(
    join(src, 'index.html'),
    `<!doctype html>
<html lang="en">
  <head>
    <meta charset="UTF-8" />
    <title>Blank React page</title>
    <script type="module" src="./main.js"></script>
  </head>
  <body>
    <div id="root"></div>
  </body>
</html>
`,
  );
  writeFileSync(
    join(src, 'main.js'),
    `import { createElement } from 'react';
import { createRoot } from 'react-dom/client';
createRoot(document.getElementById('root')).render(createElement('p', null, 'AgentPlane'));
`,
  );
  const require = createRequire(join(REPO_ROOT, 'package.json'));
  await build({
    configFile: false,
    root: src,
    base: './',
    logLevel: 'warn',
    mode: 'production',
    resolve: {
      alias: [
        { find: /^react$/, replacement: require.resolve('react') },
        { find: /^react-dom\/client$/, replacement: require.resolve('react-dom/client') },
      ],
    },
    build: {
      outDir: out,
      emptyOutDir: true,
      minify: true,
      modulePreload: { polyfill: false },
      rolldownOptions: { output: { entryFileNames: 'assets/[name]-[hash].js', chunkFileNames: 'assets/[name]-[hash].js' } },
    },
  });
  return out;
}

/** A web bridge of this process, over a plane of its own, serving `dir` as its UI. */
async function serveThroughBridge(dir: string, dataDir: string): Promise<{ url: string; close(): Promise<void> }> {
  const plane = await createPlane({ dataDir, version: '0.0.0-bench', host: 'headless' });
  try {
    const bridge = await startWebBridge({ plane, port: 0, rendererDir: dir });
    return {
      url: `http://127.0.0.1:${bridge.port}/`,
      close: async () => {
        await bridge.close();
        await plane.close();
      },
    };
  } catch (error) {
    await plane.close();
    throw error;
  }
}

interface Target {
  url: string;
  selector: string;
  initialScripts: string[];
  viewChunk: string | null;
  dataCommand: string | null;
}

/**
 * One cold load in a new context; resolves once the first rows are on screen. With `profile`,
 * the page's main thread is sampled (V8's profiler, through CDP) from before navigation until
 * then; that load is an extra one, never one of the measured rounds.
 */
async function load(browser: Browser, target: Target, profile = false): Promise<PageLoad & { profile?: CpuProfile }> {
  const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: 'light', locale: 'en-US', timezoneId: 'UTC' });
  try {
    await context.addInitScript({ content: observerScript(target.selector) });
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable', { timeDomain: 'timeTicks' });
    if (profile) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
      await cdp.send('Profiler.start');
    }
    await page.goto(target.url, { waitUntil: 'commit' });
    // A string evaluated through the protocol, not in the page: the page's CSP forbids eval.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${target.url}: nothing matched ${target.selector} within 30 s`)), 30_000);
    });
    await Promise.race([page.evaluate('window.__benchLoaded'), timeout]).finally(() => clearTimeout(timer));
    const sampled = profile ? ((await cdp.send('Profiler.stop')).profile as CpuProfile) : undefined;
    const { metrics } = await cdp.send('Performance.getMetrics');
    const metric = (name: string) => (metrics.find((m) => m.name === name)?.value ?? 0) * 1000;
    const phases = (await page.evaluate(readPhases(target.initialScripts, target.viewChunk, target.dataCommand))) as Omit<PageLoad, 'scriptMs' | 'styleMs' | 'layoutMs' | 'taskMs'>;
    if (phases.initialScripts !== target.initialScripts.length) throw new Error(`the page fetched ${phases.initialScripts} of its ${target.initialScripts.length} initial scripts`);
    return { ...phases, scriptMs: metric('ScriptDuration'), styleMs: metric('RecalcStyleDuration'), layoutMs: metric('LayoutDuration'), taskMs: metric('TaskDuration'), profile: sampled };
  } finally {
    await context.close();
  }
}

/**
 * The page's main thread by script file (minified function names say little; the file names
 * are the chunks'), V8's pseudo-frames (GC, program, idle) by their own name.
 */
function pageProfileNotes(label: string, profile: CpuProfile | undefined): string[] {
  if (!profile) return [];
  const byFile = summariseProfile(profile, 8, REPO_ROOT, (frame) => (frame.url ? scriptName(frame.url) : frame.functionName || '(anonymous)'));
  return [
    `${label}'s page main thread in one extra profiled load, by script: ${byFile.busyMs.toFixed(0)} ms busy, ${byFile.idleMs.toFixed(0)} ms idle until the first rows`,
    ...byFile.top.map((f) => `  ${f.percent.toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(5)} ms  ${f.where}`),
  ];
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median of one field over the rounds; null when no round had it. */
function medianOf(loads: readonly PageLoad[], key: keyof PageLoad): number | null {
  const values = loads.map((l) => l[key]).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
  return values.length === 0 ? null : median(values);
}

const ms = (value: number | null) => (value === null ? '—' : `${value.toFixed(1)} ms`);

/** The phase lines printed under the result: a timeline from navigation start, then busy time. */
function phaseNotes(label: string, loads: readonly PageLoad[], withData: boolean): string[] {
  const at = (key: keyof PageLoad) => ms(medianOf(loads, key));
  const lines = [
    `${label}, medians from navigation start (phases overlap: the view's chunk and the first commands load beside the shell):`,
    `  html received ${at('htmlEnd')} · DOM interactive ${at('domInteractive')} · initial scripts received ${at('initialScriptsEnd')} (${loads[0]?.initialScripts ?? 0} files)`,
    `  first React render ${at('firstRender')} · first contentful paint ${at('firstContentfulPaint')}` +
      (withData ? ` · view chunk received ${at('viewChunkEnd')} · peers.list sent ${at('dataStart')}, answered ${at('dataEnd')}` : '') +
      ` · first rows on screen ${at('firstRows')}`,
    `  main thread until then: script ${at('scriptMs')}, style ${at('styleMs')}, layout ${at('layoutMs')}, all tasks ${at('taskMs')}` +
      (withData ? `; ${medianOf(loads, 'commandsBefore') ?? 0} commands answered before the rows` : ''),
  ];
  return lines;
}

async function run(): Promise<BenchResult> {
  requireBuild();
  requireChromium();
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-renderer-load-'));
  const rendererDir = join(REPO_ROOT, 'out', 'renderer');
  const blankDir = await buildBlankReactPage(root);
  const blank = await serveThroughBridge(blankDir, join(root, 'blank-data'));
  const plane = await startServe({ dataDir: join(root, 'data'), env: { AGENTPLANE_DEMO_PEERS: '1' }, timeoutMs: 60_000 });
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
  try {
    for (const id of EXTRA_PEERS) {
      const created = await callCommand(plane, 'peers.create', { id, port: 0 });
      if (created.status !== 200) throw new Error(`peers.create ${id}: ${created.status} ${JSON.stringify(created.body)}`);
    }
    const peers = await callCommand(plane, 'peers.list', {});
    const peerCount = (peers.body as { value?: { peers?: unknown[] } }).value?.peers?.length ?? 0;
    if (peerCount < 3) throw new Error(`expected a few peers registered, the plane lists ${peerCount}`);

    const subjectTarget: Target = {
      url: plane.url,
      selector: SUBJECT_ROWS,
      initialScripts: initialScriptsOf(readFileSync(join(rendererDir, 'index.html'), 'utf8')),
      viewChunk: 'peers-section',
      dataCommand: 'peers.list',
    };
    const baselineTarget: Target = {
      url: blank.url,
      selector: BASELINE_ELEMENT,
      initialScripts: initialScriptsOf(readFileSync(join(blankDir, 'index.html'), 'utf8')),
      viewChunk: null,
      dataCommand: null,
    };
    const subject: PageLoad[] = [];
    const baseline: PageLoad[] = [];
    for (let round = 0; round < WARMUP + ROUNDS; round++) {
      // Alternate which goes first, so neither always follows the other's garbage.
      const first = round % 2 === 0;
      const a = first ? await load(browser, subjectTarget) : await load(browser, baselineTarget);
      const b = first ? await load(browser, baselineTarget) : await load(browser, subjectTarget);
      if (round < WARMUP) continue;
      subject.push(first ? a : b);
      baseline.push(first ? b : a);
    }
    const subjectProfile = (await load(browser, subjectTarget, true)).profile;
    const baselineProfile = (await load(browser, baselineTarget, true)).profile;
    const line = (metric: string, key: keyof PageLoad, judged: boolean): Measurement => ({
      metric,
      unit: 'ms',
      subject: medianOf(subject, key) ?? Number.NaN,
      baseline: medianOf(baseline, key) ?? Number.NaN,
      better: 'lower',
      judged,
    });
    const rowsSpread = (loads: PageLoad[]) => `${Math.min(...loads.map((l) => l.firstRows)).toFixed(0)}–${Math.max(...loads.map((l) => l.firstRows)).toFixed(0)} ms`;
    return {
      subject: `agentplane serve's page, cold, until the Peers view shows its first rows (${peerCount} peers), headless Chromium`,
      baseline: 'a blank React page (React + ReactDOM rendering one <p>), built with the same minify settings, served by a web bridge of this process on loopback, as serve sends the UI',
      measurements: [
        line('time to first rows (median)', 'firstRows', true),
        line('time to first React render (median)', 'firstRender', false),
        line('main-thread script time until then', 'scriptMs', false),
        { metric: 'initial JavaScript, gzip -9', unit: 'kB', subject: initialGzipKb(rendererDir), baseline: initialGzipKb(blankDir), better: 'lower', judged: false },
      ],
      notes: [
        `${ROUNDS} rounds each after ${WARMUP} warm-up, alternated, each a new browser context (empty cache); first rows ranged ${rowsSpread(subject)} (subject), ${rowsSpread(baseline)} (baseline)`,
        ...phaseNotes('subject', subject, true),
        ...phaseNotes('baseline', baseline, false),
        ...pageProfileNotes('subject', subjectProfile),
        ...pageProfileNotes('baseline', baselineProfile),
        'the plane runs in the serve child process, outside this process\'s CPU profile below; the baseline\'s bridge (and its plane, idle) runs in this process',
      ],
    };
  } finally {
    await browser.close();
    await blank.close();
    plane.dispose();
    rmSync(root, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'renderer-load',
  goal: { maxRatio: GOAL_RATIO, text: `time to the Peers view's first rows within ${GOAL_RATIO}× of a blank React page served the same way` },
  run,
};

export default benchmark;
