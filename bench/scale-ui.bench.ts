/**
 * Scale probe: the UI on a journal of 10,000,000 records (BENCH_SCALE_RECORDS;
 * tests/support/scale-journal-generator.ts), in headless Chromium through the built CLI's
 * `agentplane serve --no-open` (ports 0, started as bench scale-serve starts it) on a copy of the
 * generated data dir. Each figure is set against the same probe on the 100,000-record journal in
 * the same run; the absolute goals are in a note with PASS/MISS:
 * - the Runs view: from navigation (the page's own clock starts there) to the first frame with
 *   rows of runs in its table, on a plane nothing has read from yet (goal < 1 s);
 * - the longest run's timeline (1,000,000 records at 10M; 10,000 in the 100k journal): from the
 *   click on that run in the Runs table to the first frame with rows holding records (goal
 *   < 1 s), and the longest frame while it is scrolled to its end (goal < 50 ms), both measured
 *   in the page as bench timeline measures them (its SCROLL_TO_END: about 100 frames whatever
 *   the run's length);
 * - the plane's resident set (VmRSS of the serve process, /proc/<pid>/status) after those
 *   (goal ≤ 300 MB), judged once the journal's idle workers have ended, as bench memory reads
 *   it "settled": the workers are threads of the plane, each ended WORKER_IDLE_MS after its last
 *   job (the start-up scan's may still be alive when the browsing ends), so the reading waits
 *   for the plane's thread count to fall, for at most WORKER_IDLE_MS and 5 s. The reading right
 *   after the browsing is shown too.
 * The page is opened once the plane's start-up work has ended (its stderr says so,
 * AGENTPLANE_STARTUP_TRACE=1): the scan that verifies and indexes the whole journal, which keeps
 * both cores busy for a while at 10M (bench scale-serve), then the fold of its newest runs'
 * summaries, which the Runs view reads first (RuntimeOptions.warmRunSummaries). What is measured
 * here is the plane in use, not its start; when each ended is in the notes.
 * One plane and one browser per journal, the 100k one first, each stopped before the next.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Page } from 'playwright-core';
import { launchChromium } from '../e2e/support/chromium';
import { CLI, REPO_ROOT, requireBuild } from '../e2e/support/serve-process';
import { STARTUP_TRACE_ENV, STARTUP_TRACE_PREFIX } from '../src-main/base/startup-trace';
import { SqliteJournalReader } from '../src-main/journal/sqlite-reader';
import { journalPath } from '../src-main/journal/sqlite-store';
import { JOURNAL_CHECKED_MARK, RUNS_WARMED_MARK } from '../src-main/runtime/runtime';
import { WORKER_IDLE_MS } from '../src-main/journal/journal-worker-pool';
import { longRunSizes } from '../tests/support/scale-journal-generator';
import type { Benchmark, BenchResult } from './bench-types';
import { copyOfDataDir, count, originNote, scaleJournal, scaleRecords, SMALL_RECORDS } from './scale-support';
import { childEnv } from './serve-startup.bench';
import { clickUntilRecordRows, SCROLL_TO_END, UNTIL_ROWS_HOLD_RECORDS, type ScrollResult } from './timeline.bench';

const URL_LINE = 'AGENTPLANE_UI_URL=';
/** The start-up scan of 10,000,000 records takes minutes on 2 cores (bench scale-serve). */
const SCAN_TIMEOUT_MS = 20 * 60_000;
/** Waits in the page: a list or a page of records on a busy machine, not a hang. */
const PAGE_TIMEOUT_MS = 120_000;
const FRAMES = 100;
const ROW_HEIGHT = 30;
const GOAL_RUNS_MS = 1000;
const GOAL_FIRST_ROWS_MS = 1000;
const GOAL_FRAME_MS = 50;
const GOAL_RSS_MB = 300;
/** The judged ratios: the 10M journal's figure within this many times the 100k one's. */
const MAX_RATIO = 2;

const serveArgs = (dataDir: string) => [CLI, 'serve', '--no-open', '--ui-port', '0', '--mcp-port', '0', '--a2a-port', '0', '--data-dir', dataDir];

/**
 * In the page from its first script on: the page's clock when a frame was first produced with a
 * row of runs in the Runs table (performance.now() counts from the navigation's start).
 */
const RUNS_ROWS_WATCH = `(() => {
  const seen = () => document.querySelector('table.runs-table tbody tr') !== null;
  const observer = new MutationObserver(() => {
    if (!seen()) return;
    observer.disconnect();
    requestAnimationFrame(() => { window.__runsRowsAt = performance.now(); });
  });
  observer.observe(document, { subtree: true, childList: true });
})();`;

interface Plane {
  child: ChildProcess;
  pid: number;
  url: string;
  urlMs: number;
  /** When the start-up scan ended (JOURNAL_CHECKED_MARK), and when the newest runs' summaries were folded after it (RUNS_WARMED_MARK): the page opens then. */
  scanMs: number;
  checkedMs: number;
  exited: Promise<number | null>;
}

/** serve on `dataDir` until its URL line, the end of its start-up scan (JOURNAL_CHECKED_MARK) and its newest runs' summaries folded (RUNS_WARMED_MARK), from stderr's start-up trace. */
async function startPlane(dataDir: string): Promise<Plane> {
  const started = performance.now();
  const child = spawn(process.execPath, serveArgs(dataDir), { cwd: REPO_ROOT, env: childEnv({ [STARTUP_TRACE_ENV]: '1' }), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  // Both pipes are read to the end, so the plane never blocks on a full one.
  const out = createInterface({ input: child.stdout! });
  const err = createInterface({ input: child.stderr! });
  let stderr = '';
  let url = '';
  let urlMs = Number.NaN;
  let scanMs = Number.NaN;
  try {
    const checkedMs = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve on ${dataDir} did not end its start-up scan within ${SCAN_TIMEOUT_MS / 60_000} min; stderr:\n${stderr.slice(-2000)}`)), SCAN_TIMEOUT_MS);
      out.on('line', (line) => {
        if (!line.startsWith(URL_LINE)) return;
        url = line.slice(URL_LINE.length);
        urlMs = performance.now() - started;
      });
      err.on('line', (line) => {
        stderr = `${stderr}${line}\n`.slice(-20_000);
        if (line.startsWith(`${STARTUP_TRACE_PREFIX} ${JOURNAL_CHECKED_MARK} `)) scanMs = performance.now() - started;
        // The start-up work ends with the newest runs' summaries folded (what the Runs view reads first).
        if (!line.startsWith(`${STARTUP_TRACE_PREFIX} ${RUNS_WARMED_MARK} `)) return;
        clearTimeout(timer);
        resolve(performance.now() - started);
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`serve on ${dataDir} exited (${code}) before its start-up scan ended; stderr:\n${stderr.slice(-2000)}`));
      });
    });
    if (url === '') throw new Error(`serve on ${dataDir} ended its start-up scan without printing ${URL_LINE}`);
    return { child, pid: child.pid!, url, urlMs, scanMs, checkedMs, exited };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

async function stopPlane(plane: Plane): Promise<void> {
  if (plane.child.exitCode === null && plane.child.signalCode === null) plane.child.kill('SIGTERM');
  await plane.exited;
}

/** A field of /proc/<pid>/status in MB (VmRSS, VmHWM), or its count (Threads). */
function status(pid: number, field: 'VmRSS' | 'VmHWM' | 'Threads'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
  return field === 'Threads' ? Number(match[1]) : Number(match[1]) / 1024;
}

/**
 * Waits until the plane has fewer threads than `threads` (an idle journal worker ended) and none
 * more has ended for 1.5 s (the others of a job end about together), or until WORKER_IDLE_MS and
 * 5 s have passed with none ending (none was alive); the ms it waited.
 */
async function workersEnded(pid: number, threads: number): Promise<number> {
  const started = performance.now();
  const deadline = started + WORKER_IDLE_MS + 5000;
  const tick = () => new Promise((resolve) => setTimeout(resolve, 100));
  let now = threads;
  while (performance.now() < deadline && now >= threads) {
    await tick();
    now = status(pid, 'Threads');
  }
  for (let quiet = performance.now(); now < threads && performance.now() - quiet < 1500 && performance.now() < deadline + 5000; ) {
    await tick();
    const next = status(pid, 'Threads');
    if (next < now) quiet = performance.now();
    now = next;
  }
  return performance.now() - started;
}

/** The journal's longest run (the generator's first long run, admitted first of them) and its records, read before serve opens it. */
function longestRun(dataDir: string, records: number): { runId: string; records: number; lastSeq: number } {
  const reader = SqliteJournalReader.open(journalPath(dataDir));
  try {
    const runId = reader.connection
      .prepare(`SELECT run_id FROM records WHERE kind = 'RunAdmitted' AND json_extract(body, '$.agent') = 'batch-indexer' ORDER BY seq LIMIT 1`)
      .pluck()
      .get() as string | undefined;
    if (runId === undefined) throw new Error(`${dataDir} holds no long run (agent batch-indexer): not a generated journal`);
    const { held, lastSeq } = reader.connection.prepare('SELECT COUNT(*) AS held, MAX(seq) AS lastSeq FROM records WHERE run_id = ?').get(runId) as { held: number; lastSeq: number };
    const expected = longRunSizes(records)[0];
    if (held !== expected) throw new Error(`${runId} holds ${held} records, where the generator writes ${expected} for its longest run`);
    return { runId, records: held, lastSeq };
  } finally {
    reader.close();
  }
}

interface Side {
  records: number;
  longRun: { runId: string; records: number; lastSeq: number };
  urlMs: number;
  scanMs: number;
  checkedMs: number;
  runsMs: number;
  runsShown: number;
  firstRowsMs: number;
  scroll: ScrollResult;
  endRowsMs: number;
  domRows: number;
  /** Right after the browsing; then settled (see the header). */
  rssNowMb: number;
  threadsNow: number;
  rssMb: number;
  peakMb: number;
  threads: number;
  settleMs: number;
}

/** The Runs view from navigation; then the long run's timeline from the click, scrolled to its end (as bench timeline does). */
async function browse(page: Page, url: string, { runId, records, lastSeq }: Side['longRun']): Promise<Pick<Side, 'runsMs' | 'runsShown' | 'firstRowsMs' | 'scroll' | 'endRowsMs' | 'domRows'>> {
  const runsUrl = new URL(url);
  runsUrl.hash = '#/runs';
  await page.goto(runsUrl.toString());
  // The page's CSP refuses a string waitForFunction (eval); a promise in the page waits instead.
  const runsMs = (await page.evaluate(`new Promise((resolve) => {
    const check = () => (window.__runsRowsAt !== undefined ? resolve(window.__runsRowsAt) : requestAnimationFrame(check));
    check();
  })`)) as number;
  const button = page.getByRole('table', { name: 'Runs' }).getByRole('button', { name: runId, exact: true });
  await button.waitFor({ timeout: PAGE_TIMEOUT_MS });
  const runsShown = (await page.evaluate(`document.querySelectorAll('table.runs-table tbody tr').length`)) as number;
  // Measure the timeline on an idle plane, as bench timeline does: the other reads of connect are answered.
  await page.waitForLoadState('networkidle', { timeout: PAGE_TIMEOUT_MS });
  const firstRowsMs = (await page.evaluate(clickUntilRecordRows(runId, 'table.runs-table button'))) as number;
  const listbox = page.getByRole('listbox', { name: /^Timeline of run-/ });
  await listbox.waitFor();
  await page.waitForLoadState('networkidle', { timeout: PAGE_TIMEOUT_MS });
  await page.evaluate(`window.__benchBox = document.querySelector('[role="listbox"][aria-label^="Timeline of"]')`);
  const scroll = (await page.evaluate(`(${SCROLL_TO_END})(${(records * ROW_HEIGHT) / FRAMES})`)) as ScrollResult;
  const endRowsMs = (await page.evaluate(UNTIL_ROWS_HOLD_RECORDS)) as number;
  // The end reached: the run's last record (its seal, named by its journal seq) is on screen.
  await listbox.getByRole('option', { name: new RegExp(`^${lastSeq} .*Sealed`) }).waitFor({ timeout: PAGE_TIMEOUT_MS });
  const domRows = (await page.evaluate(`document.querySelectorAll('[role="listbox"] [role="option"]').length`)) as number;
  return { runsMs, runsShown, firstRowsMs, scroll, endRowsMs, domRows };
}

async function measure(dataDir: string, records: number): Promise<Side> {
  const longRun = longestRun(dataDir, records);
  const plane = await startPlane(dataDir);
  const profile = mkdtempSync(join(tmpdir(), 'agentplane-scale-ui-profile-'));
  try {
    const context = await launchChromium(profile, { initScript: RUNS_ROWS_WATCH });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const seen = await browse(page, plane.url, longRun);
      const [rssNowMb, threadsNow] = [status(plane.pid, 'VmRSS'), status(plane.pid, 'Threads')];
      const settleMs = await workersEnded(plane.pid, threadsNow);
      return { records, longRun, urlMs: plane.urlMs, scanMs: plane.scanMs, checkedMs: plane.checkedMs, ...seen, rssNowMb, threadsNow, rssMb: status(plane.pid, 'VmRSS'), peakMb: status(plane.pid, 'VmHWM'), threads: status(plane.pid, 'Threads'), settleMs };
    } finally {
      await context.close();
    }
  } finally {
    await stopPlane(plane);
    rmSync(profile, { recursive: true, force: true });
  }
}

const ok = (pass: boolean) => (pass ? 'PASS' : 'MISS');

function goalsNote(side: Side): string {
  return (
    `${count(side.records)} records, absolute goals: Runs view ${side.runsMs.toFixed(0)} ms (< ${GOAL_RUNS_MS} ms: ${ok(side.runsMs < GOAL_RUNS_MS)}); ` +
    `the ${count(side.longRun.records)}-record timeline's first rows ${side.firstRowsMs.toFixed(0)} ms (< ${GOAL_FIRST_ROWS_MS} ms: ${ok(side.firstRowsMs < GOAL_FIRST_ROWS_MS)}), ` +
    `longest frame ${side.scroll.longest.toFixed(1)} ms (< ${GOAL_FRAME_MS} ms: ${ok(side.scroll.longest < GOAL_FRAME_MS)}); ` +
    `RSS ${side.rssMb.toFixed(0)} MB (<= ${GOAL_RSS_MB} MB: ${ok(side.rssMb <= GOAL_RSS_MB)})`
  );
}

function sideNote(side: Side): string {
  return (
    `${count(side.records)} records: URL line ${(side.urlMs / 1000).toFixed(1)} s, start-up scan ended ${(side.scanMs / 1000).toFixed(1)} s and the newest runs' summaries folded ${(side.checkedMs / 1000).toFixed(1)} s after spawn (the page opened then); ` +
    `${side.runsShown} runs in the table; the timeline of ${side.longRun.runId} scrolled to its end in ${side.scroll.frames} frames ` +
    `(${count((side.longRun.records * ROW_HEIGHT) / FRAMES)} px a frame), its rows at the end held records ${side.endRowsMs.toFixed(0)} ms after, ${side.domRows} rows in the DOM; ` +
    `the plane's RSS right after the browsing ${side.rssNowMb.toFixed(0)} MB (${side.threadsNow} threads), ${side.rssMb.toFixed(0)} MB (${side.threads} threads) ${(side.settleMs / 1000).toFixed(1)} s later, settled; its peak ${side.peakMb.toFixed(0)} MB`
  );
}

async function run(): Promise<BenchResult> {
  requireBuild();
  const records = scaleRecords();
  const large = await scaleJournal(records);
  const small = await scaleJournal(SMALL_RECORDS);
  // serve writes to its data dir (checkpoints, the plane's own records): each side gets a copy.
  const smallCopy = copyOfDataDir(small.dataDir, 'ui-small');
  const largeCopy = copyOfDataDir(large.dataDir, 'ui-large');
  try {
    const s = await measure(smallCopy.dataDir, SMALL_RECORDS);
    const l = await measure(largeCopy.dataDir, records);
    const vs = `${count(records)} vs ${count(SMALL_RECORDS)} records`;
    return {
      subject: `the UI in headless Chromium through agentplane serve (built CLI, ports 0) on a ${count(records)}-record journal: the Runs view, the ${count(l.longRun.records)}-record run's timeline, the plane's RSS`,
      baseline: `the same on the ${count(SMALL_RECORDS)}-record journal (its longest run: ${count(s.longRun.records)} records), same run; absolute goals in a note`,
      measurements: [
        { metric: `Runs view: navigation → first rows, ${vs}`, unit: 'ms', subject: l.runsMs, baseline: s.runsMs, better: 'lower', judged: true },
        { metric: `longest run's timeline: click → first rows, ${vs}`, unit: 'ms', subject: l.firstRowsMs, baseline: s.firstRowsMs, better: 'lower', judged: true },
        { metric: `longest run's timeline: longest frame scrolling to its end, ${vs}`, unit: 'ms', subject: l.scroll.longest, baseline: s.scroll.longest, better: 'lower', judged: true },
        { metric: `longest run's timeline: p95 frame scrolling to its end, ${vs}`, unit: 'ms', subject: l.scroll.p95, baseline: s.scroll.p95, better: 'lower', judged: false },
        { metric: `plane's RSS after those, settled (idle workers ended), ${vs}`, unit: 'MB', subject: l.rssMb, baseline: s.rssMb, better: 'lower', judged: true },
        { metric: `plane's RSS right after those, ${vs}`, unit: 'MB', subject: l.rssNowMb, baseline: s.rssNowMb, better: 'lower', judged: false },
      ],
      notes: [
        goalsNote(l),
        goalsNote(s),
        sideNote(l),
        sideNote(s),
        `large: ${originNote(large)}`,
        `small: ${originNote(small)}`,
        `copies made for this run (serve writes to its data dir; the cache is never written): large ${largeCopy.seconds.toFixed(0)} s, small ${smallCopy.seconds.toFixed(1)} s`,
      ],
    };
  } finally {
    smallCopy.remove();
    largeCopy.remove();
  }
}

const benchmark: Benchmark = {
  name: 'scale-ui',
  scale: true,
  goal: {
    maxRatio: MAX_RATIO,
    text: `on the 10M-record journal, the Runs view, the 1M-record run's timeline and the plane's RSS within ${MAX_RATIO}× of the 100k journal; absolute goals in a note: Runs view and first rows < 1 s, no frame ≥ 50 ms, RSS ≤ ${GOAL_RSS_MB} MB`,
  },
  run,
};

export default benchmark;
