/**
 * What the plane's memory costs (docs/PERFORMANCE.md): `agentplane serve`'s resident set idle on a
 * journal of RECORDS records (1,000,000 unless BENCH_MEMORY_RECORDS says otherwise), and how
 * much it grows while a person browses that journal in the UI. Goal: at most 50 MB of growth,
 * judged as a ratio against 50 MB (so 1.00× is the goal exactly). Shown beside it: the idle
 * plane against `node` running a bare fastify server, and how long the plane took to come up
 * on the journal (spawn to its URL line), with its start-up phases.
 *
 * The journal is written through the real Journal API (appendBatch, about 1,000 drafts a call,
 * drafts from test-support's `runDrafts`, the default checkpoint cadence), into a temp data dir
 * before `serve` starts on it, so the plane opens a journal a plane could have written: one run
 * of RECORDS/10 records (a long timeline) and runs of 1,000 records for the rest (a long runs
 * list). Nothing is kept between bench runs.
 *
 * RSS is VmRSS from /proc/<pid>/status, summed over the plane's descendant processes (none with
 * demo peers off; the journal workers are threads and are in the plane's own figure). Peak is
 * VmHWM. "Settled" is 2 s after the last action, and after the journal's idle workers have been
 * ended (WORKER_IDLE_MS: the start-up scan's, a verification's), so idle and browsed are both
 * read without them and compare like for like. A preload written by this bench (`--require`)
 * adds one SIGUSR2 handler to the plane and nothing else: it runs a full GC and writes
 * process.memoryUsage() before and after it to stderr, so the notes can say whether growth is JS
 * heap, external memory (SQLite, buffers) or neither; RSS read after it is the "after a forced
 * GC" figure. The plane runs with AGENTPLANE_STARTUP_TRACE=1 (src-main/base/startup-trace.ts).
 *
 * The browse script, in headless Chromium through the bridge: the Runs list (scrolled to its
 * end), Approvals, Spend, the long run's timeline scrolled to its end in steps (waiting at each
 * for its rows to hold records), a search of that whole run, a verification of the whole
 * journal, and SMALL_RUNS_OPENED runs of 1,000 records opened and scrolled to their end, one row
 * selected in each. RSS is read after each step, so a note shows which step grew it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { WORKER_IDLE_MS } from '../src-main/journal/journal-worker-pool';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Page } from 'playwright-core';
import { launchChromium } from '../e2e/support/chromium';
import { CLI, REPO_ROOT, requireBuild } from '../e2e/support/serve-process';
import { STARTUP_TRACE_ENV, STARTUP_TRACE_PREFIX } from '../src-main/base/startup-trace';
import { JOURNAL_CHECKED_MARK } from '../src-main/runtime/runtime';
import { Journal } from '../src-main/journal/journal';
import type { AnyRecordDraft } from '../src-shared/journal/records';
import { runDrafts } from '../tests/support/journal-support';
import type { Benchmark, BenchResult } from './bench-types';
import { BASELINE_LINE, parseStartupTrace, writeBaselineScript } from './serve-startup.bench';

const RECORDS = Number(process.env.BENCH_MEMORY_RECORDS ?? 1_000_000);
const SMALL_RUN_RECORDS = 1000;
const BIG_RUN_RECORDS = RECORDS / 10;
const SMALL_RUNS = (RECORDS - BIG_RUN_RECORDS) / SMALL_RUN_RECORDS;
const BATCH = 1000;
const SMALL_RUNS_OPENED = 20;
const GROWTH_GOAL_MB = 50;
const SETTLE_MS = 2000;
const START_TIMEOUT_MS = 300_000;
const STEP_TIMEOUT_MS = 180_000;
const MB = 1024 * 1024;
const URL_LINE = 'AGENTPLANE_UI_URL=';
const PROBE_PREFIX = 'agentplane-bench-memory';

const runId = (n: number) => `run-${n.toString(16).padStart(20, '0')}`;
const BIG_RUN = runId(1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => bytes / MB;
const fmt = (bytes: number) => `${mb(bytes).toFixed(1)} MB`;
/** BENCH_MEMORY_PROGRESS=1: a stderr line as each stage ends (the bench runs for minutes). */
const progress = (line: string) => {
  if (process.env.BENCH_MEMORY_PROGRESS === '1') console.error(`[memory] ${line}`);
};

/** Fails before anything is written when the size cannot be laid out as one long run plus runs of 1,000. */
function checkSize(): void {
  if (!Number.isInteger(RECORDS) || RECORDS < 20_000 || RECORDS % 20_000 !== 0) {
    throw new Error(`BENCH_MEMORY_RECORDS must be a multiple of 20,000 (one run of a tenth, the rest in runs of 1,000); got ${process.env.BENCH_MEMORY_RECORDS}`);
  }
}

async function populate(dataDir: string): Promise<number> {
  const started = performance.now();
  const journal = await Journal.open({ dataDir });
  try {
    const append = async (drafts: AnyRecordDraft[]) => {
      for (let i = 0; i < drafts.length; i += BATCH) {
        await journal.appendBatch(drafts.slice(i, i + BATCH));
        // Let the periodic checkpoints be signed as they come due.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    };
    // runDrafts(id, n) is 2n + 2 records.
    await append(runDrafts(BIG_RUN, BIG_RUN_RECORDS / 2 - 1));
    for (let n = 0; n < SMALL_RUNS; n += 1) await append(runDrafts(runId(n + 2), SMALL_RUN_RECORDS / 2 - 1));
    const head = (await journal.head()).seq;
    if (head !== RECORDS) throw new Error(`the journal holds ${head} records, expected ${RECORDS}`);
  } finally {
    await journal.close();
  }
  return performance.now() - started;
}

// ---- the plane's memory, from outside ----

interface ProcMemory {
  rss: number;
  peak: number;
  threads: number;
}

function statusField(pid: number, field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(match[1]);
}

/** The process and every descendant (children listed per thread, recursively). */
function processTree(pid: number): number[] {
  const children: number[] = [];
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let text = '';
    try {
      text = readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
    } catch {
      // The thread ended between the listing and the read: it has no children to count.
    }
    if (text) children.push(...text.split(/\s+/).map(Number));
  }
  return [pid, ...children.flatMap((child) => (safeExists(child) ? processTree(child) : []))];
}

function safeExists(pid: number): boolean {
  try {
    readFileSync(`/proc/${pid}/status`);
    return true;
  } catch {
    return false;
  }
}

/** RSS and peak RSS (bytes) summed over the tree, and the plane's own thread count. */
function treeMemory(pid: number): ProcMemory & { processes: number } {
  const tree = processTree(pid).filter(safeExists);
  const sum = (field: string) => tree.reduce((total, p) => total + statusField(p, field) * 1024, 0);
  return { rss: sum('VmRSS'), peak: sum('VmHWM'), threads: statusField(pid, 'Threads'), processes: tree.length };
}

// ---- the spawned processes ----

interface Spawned {
  child: ChildProcess;
  pid: number;
  /** The line's text after its prefix. */
  value: string;
  /** ms from spawn to the line. */
  ms: number;
  stderr(): string;
  exited: Promise<number | null>;
  /** performance.now() at its spawn. */
  spawnedAt: number;
}

/** Spawns node with `args`, resolves once stdout has a line starting `line`. stderr is kept in memory. */
async function spawnUntilLine(args: string[], line: string, env: NodeJS.ProcessEnv): Promise<Spawned> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const lines = createInterface({ input: child.stdout! });
  // Keep reading stdout after the line, so the child never blocks on a full pipe.
  const value = await new Promise<{ value: string; ms: number }>((resolveLine, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} printed no ${line} line within ${START_TIMEOUT_MS} ms; stderr:\n${stderr}`));
    }, START_TIMEOUT_MS);
    lines.on('line', (text) => {
      if (!text.startsWith(line)) return;
      clearTimeout(timer);
      resolveLine({ value: text.slice(line.length), ms: performance.now() - started });
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited (${code}) before printing ${line}; stderr:\n${stderr}`));
    });
  });
  return { child, pid: child.pid!, ...value, stderr: () => stderr, exited, spawnedAt: started };
}

/** Waits until the spawned process's stderr holds `text`; the ms from its spawn to when it was seen. */
async function untilStderr(spawned: Spawned, text: string): Promise<number> {
  const deadline = performance.now() + START_TIMEOUT_MS;
  while (!spawned.stderr().includes(text)) {
    if (performance.now() > deadline) throw new Error(`no "${text.trim()}" on stderr within ${START_TIMEOUT_MS} ms; stderr:\n${spawned.stderr()}`);
    if (spawned.child.exitCode !== null) throw new Error(`exited before "${text.trim()}" on stderr; stderr:\n${spawned.stderr()}`);
    await sleep(20);
  }
  return performance.now() - spawned.spawnedAt;
}

async function stop(spawned: Spawned): Promise<void> {
  if (spawned.child.exitCode !== null || spawned.child.signalCode !== null) return;
  spawned.child.kill('SIGTERM');
  const timeout = sleep(30_000).then(() => 'timeout' as const);
  if ((await Promise.race([spawned.exited, timeout])) === 'timeout') {
    spawned.child.kill('SIGKILL');
    await spawned.exited;
  }
}

function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  // No data dir override from the shell that runs the bench; no demo peers (nothing to spawn).
  const env: NodeJS.ProcessEnv = { ...process.env, AGENTPLANE_DEMO_PEERS: '0', ...extra };
  delete env.AGENTPLANE_DATA_DIR;
  return env;
}

/**
 * The preload: on SIGUSR2, process.memoryUsage() before and after a full GC, one stderr line.
 * gc is reached through a V8 flag set at run time, so the plane runs without --expose-gc.
 */
function writeProbeScript(dir: string): string {
  const file = join(dir, 'memory-probe.cjs');
  writeFileSync(
    file,
    [
      "'use strict';",
      "const v8 = require('node:v8');",
      "v8.setFlagsFromString('--expose-gc');",
      "const gc = require('node:vm').runInNewContext('gc');",
      "process.on('SIGUSR2', () => {",
      '  const before = process.memoryUsage();',
      '  gc();',
      '  const after = process.memoryUsage();',
      '  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size]));',
      `  process.stderr.write(${JSON.stringify(`${PROBE_PREFIX} `)} + JSON.stringify({ before, after, spaces }) + '\\n');`,
      '});',
      '',
    ].join('\n'),
  );
  return file;
}

type Usage = Record<'rss' | 'heapTotal' | 'heapUsed' | 'external' | 'arrayBuffers', number>;
interface Probe {
  before: Usage;
  after: Usage;
  spaces: Record<string, number>;
}

/** Signals the probe and waits for its next line. */
async function probe(plane: Spawned): Promise<Probe> {
  const seen = plane.stderr().split('\n').filter((l) => l.startsWith(`${PROBE_PREFIX} `)).length;
  plane.child.kill('SIGUSR2');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const lines = plane.stderr().split('\n').filter((l) => l.startsWith(`${PROBE_PREFIX} `));
    if (lines.length > seen) return JSON.parse(lines[seen]!.slice(PROBE_PREFIX.length + 1)) as Probe;
    if (Date.now() > deadline) throw new Error('the memory probe did not answer SIGUSR2 within 30 s');
    await sleep(20);
  }
}

// ---- the browse script ----

interface Step {
  step: string;
  ms: number;
  rss: number;
}

/**
 * Resolves in the page once every row the timeline shows holds a record (none still
 * "Loading"). Polled from inside the page: the bridge's CSP has no 'unsafe-eval', which
 * waitForFunction with a string needs.
 */
const ROWS_LOADED = `new Promise((resolve, reject) => {
  const deadline = performance.now() + ${STEP_TIMEOUT_MS};
  const check = () => {
    const options = [...document.querySelectorAll('[role="listbox"][aria-label^="Timeline of"] [role="option"]')];
    if (options.length > 0 && options.every((o) => !o.textContent.startsWith('Loading'))) resolve(true);
    else if (performance.now() > deadline) reject(new Error('the timeline rows did not fill in'));
    else setTimeout(check, 20);
  };
  check();
})`;

async function go(page: Page, hash: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
}

/** Scrolls the open timeline to its end in `steps` jumps, waiting at each for its rows. */
async function scrollTimeline(page: Page, id: string, steps: number): Promise<void> {
  const listbox = page.getByRole('listbox', { name: `Timeline of ${id}` });
  await listbox.waitFor({ timeout: STEP_TIMEOUT_MS });
  await page.evaluate(ROWS_LOADED);
  for (let k = 1; k <= steps; k += 1) {
    await page.evaluate(`(() => {
      const box = document.querySelector('[role="listbox"][aria-label^="Timeline of ${id}:"]');
      box.scrollTop = Math.round(((box.scrollHeight - box.clientHeight) * ${k}) / ${steps});
    })()`);
    // Pages are asked for once the view holds still (80 ms); then the rows fill in.
    await page.waitForTimeout(100);
    await page.evaluate(ROWS_LOADED);
  }
}

async function browse(page: Page, url: string, pid: number): Promise<Step[]> {
  const steps: Step[] = [];
  const step = async (name: string, work: () => Promise<void>) => {
    const started = performance.now();
    await work();
    progress(`${name}: ${(performance.now() - started).toFixed(0)} ms`);
    steps.push({ step: name, ms: performance.now() - started, rss: treeMemory(pid).rss });
  };
  const listed = Math.min(1 + SMALL_RUNS, 1000);
  await step('open the UI, Runs list', async () => {
    await page.goto(url.replace(/#.*$/, ''));
    await go(page, '#/runs');
    await page.getByText(new RegExp(`^Showing ${listed.toLocaleString('en-US')} of ${listed.toLocaleString('en-US')} runs`)).waitFor({ timeout: STEP_TIMEOUT_MS });
  });
  await step('scroll the Runs list to its end', async () => {
    await page.evaluate(`(async () => {
      const rows = [...document.querySelectorAll('table.runs-table tbody tr')];
      for (let i = 0; i < rows.length; i += 25) {
        rows[i].scrollIntoView({ block: 'end' });
        await new Promise((r) => requestAnimationFrame(r));
      }
      rows[rows.length - 1].scrollIntoView({ block: 'end' });
    })()`);
  });
  await step('Approvals, Spend', async () => {
    await go(page, '#/approvals');
    await page.waitForLoadState('networkidle');
    await go(page, '#/spend');
    await page.waitForLoadState('networkidle');
  });
  await step(`the ${BIG_RUN_RECORDS.toLocaleString('en-US')}-record run's timeline, scrolled to its end in 50 steps`, async () => {
    await go(page, `#/runs/${BIG_RUN}`);
    await scrollTimeline(page, BIG_RUN, 50);
  });
  await step('a search of that whole run', async () => {
    await page.getByLabel('Search records').fill('"echoed":4242');
    // The loaded pages are searched first; when they are not the whole run, it offers the rest.
    await page.getByText(/(in all [\d,]+ records|among the [\d,]+ records loaded so far)\.$/).waitFor({ timeout: STEP_TIMEOUT_MS });
    const searchAll = page.getByRole('button', { name: /^Search all / });
    if ((await searchAll.count()) > 0) {
      await searchAll.click();
      await page.getByText(/ in all [\d,]+ records\.$/).waitFor({ timeout: STEP_TIMEOUT_MS });
    }
    await page.getByRole('button', { name: 'Clear search' }).click();
  });
  await step('verify the whole journal', async () => {
    // A journal this long is not verified by itself on opening a run; a short one (a small
    // BENCH_MEMORY_RECORDS) already is, and its button then reads "Verify again".
    await page.getByRole('button', { name: /^Verify (journal|again)$/ }).click();
    await page.getByText(/^Verified up to seq /).waitFor({ timeout: STEP_TIMEOUT_MS });
  });
  await step(`${SMALL_RUNS_OPENED} runs of ${SMALL_RUN_RECORDS.toLocaleString('en-US')} records, each scrolled to its end, a row selected`, async () => {
    for (let k = 0; k < SMALL_RUNS_OPENED; k += 1) {
      const id = runId(2 + Math.floor((k * SMALL_RUNS) / SMALL_RUNS_OPENED));
      // As a person would: back to the list, then the run's button.
      await go(page, '#/runs');
      await page.getByRole('table', { name: 'Runs' }).getByRole('button', { name: id, exact: true }).click({ timeout: STEP_TIMEOUT_MS });
      await scrollTimeline(page, id, 5);
      await page.getByRole('listbox', { name: `Timeline of ${id}` }).getByRole('option').last().click();
    }
  });
  await step('back to the Runs list', async () => {
    await go(page, '#/runs');
    await page.waitForLoadState('networkidle');
  });
  return steps;
}

// ---- the bench ----

function usageLine(label: string, p: Probe): string {
  const u = (x: Usage) => `heapUsed ${fmt(x.heapUsed)}, heapTotal ${fmt(x.heapTotal)}, external ${fmt(x.external)} (arrayBuffers ${fmt(x.arrayBuffers)})`;
  return `${label}: before GC ${u(p.before)}; after GC ${u(p.after)}`;
}

function spacesLine(idle: Probe, browsed: Probe): string {
  const names = Object.keys(browsed.spaces).filter((n) => Math.abs((browsed.spaces[n] ?? 0) - (idle.spaces[n] ?? 0)) >= 0.5 * MB);
  if (names.length === 0) return 'JS heap spaces after GC: no space moved by 0.5 MB or more';
  return `JS heap spaces after GC, change from idle: ${names.map((n) => `${n} ${((mb(browsed.spaces[n] ?? 0) - mb(idle.spaces[n] ?? 0)) >= 0 ? '+' : '')}${(mb(browsed.spaces[n] ?? 0) - mb(idle.spaces[n] ?? 0)).toFixed(1)} MB`).join(', ')}`;
}

async function run(): Promise<BenchResult> {
  checkSize();
  requireBuild();
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-memory-'));
  const dataDir = join(root, 'data');
  let plane: Spawned | undefined;
  let baseline: Spawned | undefined;
  let context: Awaited<ReturnType<typeof launchChromium>> | undefined;
  try {
    const populateMs = await populate(dataDir);
    progress(`journal written: ${populateMs.toFixed(0)} ms`);

    // The baseline first, alone: a bare fastify server's settled RSS.
    baseline = await spawnUntilLine([writeBaselineScript(root)], BASELINE_LINE, childEnv({}));
    await sleep(SETTLE_MS);
    const baselineRss = treeMemory(baseline.pid).rss;
    await stop(baseline);

    const probeScript = writeProbeScript(root);
    const serveArgs = ['--require', probeScript, CLI, 'serve', '--no-open', '--ui-port', '0', '--mcp-port', '0', '--a2a-port', '0', '--data-dir', dataDir];
    plane = await spawnUntilLine(serveArgs, URL_LINE, childEnv({ [STARTUP_TRACE_ENV]: '1' }));
    const startMs = plane.ms;
    progress(`plane up: ${startMs.toFixed(0)} ms`);
    // serve answers before its start-up check of the journal ends (it runs on, in the journal
    // workers): idle is read once it has ended, so its workers are not counted as idle.
    const checkedMs = await untilStderr(plane, `${STARTUP_TRACE_PREFIX} ${JOURNAL_CHECKED_MARK} `);
    progress(`journal checked: ${checkedMs.toFixed(0)} ms`);
    const phases = parseStartupTrace(plane.stderr());
    await sleep(WORKER_IDLE_MS + SETTLE_MS);
    const idle = treeMemory(plane.pid);
    const idleProbe = await probe(plane);
    const idleAfterGc = treeMemory(plane.pid);

    context = await launchChromium(join(root, 'profile'));
    const page = context.pages()[0] ?? (await context.newPage());
    const commands = new Map<string, number>();
    page.on('request', (request) => {
      const match = /\/api\/commands\/([\w.]+)/.exec(request.url());
      if (match) commands.set(match[1]!, (commands.get(match[1]!) ?? 0) + 1);
    });
    const browseStarted = performance.now();
    const steps = await browse(page, plane.value, plane.pid);
    const browseMs = performance.now() - browseStarted;
    await sleep(WORKER_IDLE_MS + SETTLE_MS);
    const browsed = treeMemory(plane.pid);
    const browsedProbe = await probe(plane);
    const browsedAfterGc = treeMemory(plane.pid);

    const growth = browsed.rss - idle.rss;
    const growthAfterGc = browsedAfterGc.rss - idleAfterGc.rss;
    const dominant = [...phases].sort((a, b) => b.ms - a.ms)[0];
    const heapGrowth = browsedProbe.after.heapUsed - idleProbe.after.heapUsed;
    const externalGrowth = browsedProbe.after.external - idleProbe.after.external;
    const missed = mb(growth) > GROWTH_GOAL_MB;
    return {
      subject: `agentplane serve (built CLI, --no-open, demo peers off) on a ${RECORDS.toLocaleString('en-US')}-record journal: RSS growth from idle to after the browse script`,
      baseline: `${GROWTH_GOAL_MB} MB (the issue's allowance); idle RSS beside a bare fastify server in node (shown only)`,
      measurements: [
        { metric: 'RSS growth after browsing (settled, idle workers ended)', unit: 'MB', subject: mb(growth), baseline: GROWTH_GOAL_MB, better: 'lower', judged: true },
        { metric: 'RSS growth after browsing, both after a forced GC', unit: 'MB', subject: mb(growthAfterGc), baseline: GROWTH_GOAL_MB, better: 'lower', judged: false },
        { metric: 'idle RSS vs bare fastify in node', unit: 'MB', subject: mb(idle.rss), baseline: mb(baselineRss), better: 'lower', judged: false },
        { metric: 'RSS after browsing vs bare fastify', unit: 'MB', subject: mb(browsed.rss), baseline: mb(baselineRss), better: 'lower', judged: false },
      ],
      notes: [
        `journal: one run of ${BIG_RUN_RECORDS.toLocaleString('en-US')} records and ${SMALL_RUNS.toLocaleString('en-US')} runs of ${SMALL_RUN_RECORDS.toLocaleString('en-US')}; writing it (Journal.appendBatch of ${BATCH}, default checkpoints) took ${(populateMs / 1000).toFixed(1)} s (BENCH_MEMORY_RECORDS sets the size)`,
        `start-up on it: spawn → URL line ${(startMs / 1000).toFixed(2)} s, → the start-up check of the journal ended (runs may start; it runs on after the URL line, in the journal workers) ${(checkedMs / 1000).toFixed(2)} s (with the probe preload); phases (ms, from the mark before): ${phases.map((p) => `${p.phase} ${p.ms.toFixed(0)}`).join(', ')}; the largest is ${dominant?.phase ?? '?'} (${((dominant?.ms ?? 0) / 1000).toFixed(2)} s)`,
        `RSS (process tree of ${idle.processes}; ${idle.threads} threads idle, ${browsed.threads} after browsing): idle ${fmt(idle.rss)} (after GC ${fmt(idleAfterGc.rss)}), peak during start-up ${fmt(idle.peak)}; after browsing ${fmt(browsed.rss)} (after GC ${fmt(browsedAfterGc.rss)}), peak ${fmt(browsed.peak)}`,
        `browse script: ${(browseMs / 1000).toFixed(1)} s; RSS after each step:`,
        ...steps.map((s) => `  ${fmt(s.rss).padStart(9)}  ${(s.ms / 1000).toFixed(1).padStart(6)} s  ${s.step}`),
        `commands the page sent: ${[...commands].sort((a, b) => b[1] - a[1]).map(([name, n]) => `${name} ×${n}`).join(', ')}`,
        `where it goes (main thread, process.memoryUsage(); journal workers' heaps are in RSS only): JS heap after GC ${heapGrowth >= 0 ? '+' : ''}${fmt(heapGrowth)}, external ${externalGrowth >= 0 ? '+' : ''}${fmt(externalGrowth)} from idle to after browsing${missed ? `; the other ${fmt(growth - heapGrowth - externalGrowth)} of the RSS growth is outside the main thread's JS heap (journal workers' heaps, SQLite page caches, freed heap not returned to the OS)` : ''}`,
        `  ${usageLine('idle', idleProbe)}`,
        `  ${usageLine('after browsing', browsedProbe)}`,
        `  ${spacesLine(idleProbe, browsedProbe)}`,
        `bare fastify baseline: node running a script that loads fastify, adds one route and listens on 127.0.0.1:0, RSS ${SETTLE_MS / 1000} s after its URL line`,
      ],
    };
  } finally {
    await context?.close().catch(() => undefined);
    if (plane) await stop(plane);
    if (baseline) await stop(baseline);
    rmSync(root, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'memory',
  goal: { maxRatio: 1, text: `agentplane serve's RSS grows at most ${GROWTH_GOAL_MB} MB above idle after browsing a ${RECORDS.toLocaleString('en-US')}-record journal in the UI` },
  run,
};

export default benchmark;
