/**
 * Scale probe: opening a plane on a journal of 10,000,000 records (BENCH_SCALE_RECORDS;
 * tests/support/scale-journal-generator.ts). Subject: the built CLI's `agentplane serve
 * --no-open` (ports 0) on a copy of the generated data dir, from spawn until its
 * `AGENTPLANE_UI_URL=` line, measured as bench serve-startup measures it (its timeStart, the
 * same environment and start-up trace). Goal: the URL line within 2 s, judged as the p50 against
 * that budget. Shown beside it: the same start on the 100,000-record journal and on a bare
 * fastify script, and, from one extra start of each journal, how long until the runtime's
 * start-up scan has verified and indexed the whole journal (runs may start then; reads answer
 * from the URL line).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { CLI, REPO_ROOT, requireBuild } from '../e2e/support/serve-process';
import { STARTUP_TRACE_ENV, STARTUP_TRACE_PREFIX } from '../src-main/base/startup-trace';
import { JOURNAL_CHECKED_MARK } from '../src-main/runtime/runtime';
import type { Benchmark, BenchResult } from './bench-types';
import { summarise } from './measure';
import { copyOfDataDir, count, originNote, scaleJournal, scaleRecords, SMALL_RECORDS } from './scale-support';
import { BASELINE_LINE, childEnv, parseStartupTrace, phaseNote, timeStart, writeBaselineScript, type Start } from './serve-startup.bench';

const ROUNDS = 5;
const GOAL_MS = 2000;
const URL_LINE = 'AGENTPLANE_UI_URL=';
/** The start-up scan of 10,000,000 records takes minutes on 2 cores. */
const SCAN_TIMEOUT_MS = 20 * 60_000;

const serveArgs = (dataDir: string) => [CLI, 'serve', '--no-open', '--ui-port', '0', '--mcp-port', '0', '--a2a-port', '0', '--data-dir', dataDir];

/** One serve from spawn to its URL line and on to the end of its start-up scan (stderr's JOURNAL_CHECKED_MARK line), then SIGTERM. */
async function timeScan(dataDir: string, env: NodeJS.ProcessEnv): Promise<{ urlMs: number; checkedMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, serveArgs(dataDir), { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const out = createInterface({ input: child.stdout });
  const err = createInterface({ input: child.stderr });
  let stderr = '';
  try {
    return await new Promise<{ urlMs: number; checkedMs: number }>((resolve, reject) => {
      let urlMs = Number.NaN;
      const timer = setTimeout(() => reject(new Error(`serve on ${dataDir} did not finish its start-up scan within ${SCAN_TIMEOUT_MS / 60_000} min; stderr:\n${stderr.slice(-2000)}`)), SCAN_TIMEOUT_MS);
      out.on('line', (line) => {
        if (line.startsWith(URL_LINE)) urlMs = performance.now() - started;
      });
      err.on('line', (line) => {
        stderr += `${line}\n`;
        if (!line.startsWith(`${STARTUP_TRACE_PREFIX} ${JOURNAL_CHECKED_MARK} `)) return;
        clearTimeout(timer);
        resolve({ urlMs, checkedMs: performance.now() - started });
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`serve on ${dataDir} exited (${code}) before its start-up scan ended; stderr:\n${stderr.slice(-2000)}`));
      });
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
    out.close();
    err.close();
  }
}

async function run(): Promise<BenchResult> {
  requireBuild();
  const records = scaleRecords();
  const large = await scaleJournal(records);
  const small = await scaleJournal(SMALL_RECORDS);
  // serve writes to its data dir (checkpoints, the plane's own records): each side gets a copy.
  const largeCopy = copyOfDataDir(large.dataDir, 'serve-large');
  const smallCopy = copyOfDataDir(small.dataDir, 'serve-small');
  const root = mkdtempSync(join(tmpdir(), 'agentplane-scale-serve-'));
  try {
    const baselineScript = writeBaselineScript(root);
    const env = childEnv({ [STARTUP_TRACE_ENV]: '1' });
    const operations = {
      large: () => timeStart(serveArgs(largeCopy.dataDir), URL_LINE, env),
      small: () => timeStart(serveArgs(smallCopy.dataDir), URL_LINE, env),
      baseline: () => timeStart([baselineScript], BASELINE_LINE, env),
    };
    // One untimed start of each: the page cache then holds node_modules and each journal's pages.
    for (const start of Object.values(operations)) await start();
    const names = Object.keys(operations) as Array<keyof typeof operations>;
    const samples = Object.fromEntries(names.map((n) => [n, [] as Start[]])) as Record<keyof typeof operations, Start[]>;
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(round + k) % names.length]!;
        samples[name].push(await operations[name]());
      }
    }
    const p50 = (name: keyof typeof operations) => summarise(samples[name].map((s) => s.ms)).p50;
    const [largeMs, smallMs, baseMs] = [p50('large'), p50('small'), p50('baseline')];
    const largeScan = await timeScan(largeCopy.dataDir, env);
    const smallScan = await timeScan(smallCopy.dataDir, env);
    return {
      subject: `agentplane serve (built CLI, ports 0, --no-open) on a ${count(records)}-record journal, spawn to its URL line (p50)`,
      baseline: `the ${(GOAL_MS / 1000).toFixed(0)} s goal; shown: the same serve on ${count(SMALL_RECORDS)} records, and node starting a bare fastify server`,
      measurements: [
        { metric: `${count(records)} records: spawn → URL vs the goal`, unit: 'ms', subject: largeMs, baseline: GOAL_MS, better: 'lower', judged: true },
        { metric: `spawn → URL, ${count(records)} vs ${count(SMALL_RECORDS)} records`, unit: 'ms', subject: largeMs, baseline: smallMs, better: 'lower', judged: false },
        { metric: `${count(SMALL_RECORDS)} records: spawn → URL vs bare fastify`, unit: 'ms', subject: smallMs, baseline: baseMs, better: 'lower', judged: false },
        { metric: `spawn → journal checked, ${count(records)} vs ${count(SMALL_RECORDS)} records (one start each)`, unit: 'ms', subject: largeScan.checkedMs, baseline: smallScan.checkedMs, better: 'lower', judged: false },
      ],
      notes: [
        `large: ${originNote(large)}`,
        `small: ${originNote(small)}`,
        `copies made for this run (serve writes to its data dir; the cache is never written): large ${largeCopy.seconds.toFixed(0)} s, small ${smallCopy.seconds.toFixed(1)} s`,
        `${ROUNDS} rounds of each after one untimed start of each, interleaved (order rotating); every process stopped with SIGTERM and awaited before the next`,
        phaseNote(`${count(records)} records`, samples.large.map((s) => parseStartupTrace(s.stderr))),
        phaseNote(`${count(SMALL_RECORDS)} records`, samples.small.map((s) => parseStartupTrace(s.stderr))),
        `the start-up scan (verify and index every record; runs may start when it ends, reads answer from the URL line): ${count(records)} records ${(largeScan.checkedMs / 1000).toFixed(1)} s after spawn (URL at ${largeScan.urlMs.toFixed(0)} ms), ${count(SMALL_RECORDS)} records ${(smallScan.checkedMs / 1000).toFixed(1)} s`,
      ],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
    largeCopy.remove();
    smallCopy.remove();
  }
}

const benchmark: Benchmark = {
  name: 'scale-serve',
  scale: true,
  goal: { maxRatio: 1, text: `agentplane serve's URL line within ${GOAL_MS / 1000} s on the 10M-record journal (p50)` },
  run,
};

export default benchmark;
