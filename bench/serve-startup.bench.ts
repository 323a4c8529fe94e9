/**
 * How long `agentplane serve` takes to come up (docs/PERFORMANCE.md). Subject: the built CLI
 * (`node bin/agentplane.js serve --no-open`, ports 0) from spawn until its
 * `AGENTPLANE_UI_URL=` line is on stdout, on a fresh data dir each round and on one whose
 * journal already holds EXISTING_RECORDS records. Baseline: `node` running a tiny script (written
 * by this bench) that loads fastify, registers one route, listens on 127.0.0.1 and prints its
 * URL. Rounds are interleaved (the order rotates each round), each serve stopped with SIGTERM
 * and awaited before the next, so a round never competes with the last one's shutdown.
 *
 * Where the time goes: every serve runs with AGENTPLANE_STARTUP_TRACE=1, which makes it write
 * one stderr line per phase (src-main/base/startup-trace.ts); the notes give each phase's p50.
 * One extra, untimed round runs under `--cpu-prof` and the notes list its top functions and
 * its self time by package, because module load is where a plane's start-up goes.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { CLI, REPO_ROOT, requireBuild } from '../e2e/support/serve-process';
import { Journal } from '../src-main/journal/journal';
import { STARTUP_TRACE_ENV, STARTUP_TRACE_PREFIX } from '../src-main/base/startup-trace';
import { JOURNAL_CHECKED_MARK } from '../src-main/runtime/runtime';
import { runDrafts } from '../tests/support/journal-support';
import type { Benchmark, BenchResult } from './bench-types';
import { summariseProfile, displayFile, type CpuProfile } from './cpu-profile';
import { summarise } from './measure';

const ROUNDS = 7;
/** 10 runs of 1,000 effects: 20,020 records the start-up scan verifies and folds. */
const EXISTING_RUNS = 10;
const EFFECTS_PER_RUN = 1000;
const EXISTING_RECORDS = EXISTING_RUNS * (2 * EFFECTS_PER_RUN + 2);
const URL_LINE = 'AGENTPLANE_UI_URL=';
export const BASELINE_LINE = 'BASELINE_URL=';
const TIMEOUT_MS = 60_000;

/** One start: ms from spawn to the line, and whatever the child wrote on stderr. */
export interface Start {
  ms: number;
  stderr: string;
  /** ms from spawn to `then` on stderr, when asked for. */
  thenMs?: number;
}

/** A phase and the ms it took (from the previous mark; the first from the process's start). */
export interface Phase {
  phase: string;
  ms: number;
}

/**
 * The phases in a start-up trace (`agentplane-startup <phase> <ms>` lines, other stderr lines
 * ignored), each as the time since the mark before it. A malformed trace line is an error, so a
 * broken trace cannot quietly print a wrong breakdown.
 */
export function parseStartupTrace(stderr: string): Phase[] {
  const phases: Phase[] = [];
  let previous = 0;
  for (const line of stderr.split('\n')) {
    if (!line.startsWith(`${STARTUP_TRACE_PREFIX} `)) continue;
    const match = /^\S+ ([a-z0-9.-]+) (\d+(?:\.\d+)?)$/.exec(line);
    if (!match) throw new Error(`a start-up trace line is malformed: ${JSON.stringify(line)}`);
    const at = Number(match[2]);
    if (at < previous) throw new Error(`start-up trace marks go backwards at ${match[1]} (${at} ms after ${previous} ms)`);
    phases.push({ phase: match[1]!, ms: at - previous });
    previous = at;
  }
  return phases;
}

/** Each phase's median over several traces (phases in the first trace's order). */
export function medianPhases(traces: readonly Phase[][]): Phase[] {
  const first = traces[0] ?? [];
  return first.map(({ phase }) => {
    const values = traces.map((t) => t.find((p) => p.phase === phase)?.ms).filter((v): v is number => v !== undefined);
    return { phase, ms: summarise(values).p50 };
  });
}

export function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  // What a person's `agentplane serve` sees: no data dir or demo-peer override from the shell
  // that runs the bench (the demo peers are registered as by default, never started).
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.AGENTPLANE_DATA_DIR;
  delete env.AGENTPLANE_DEMO_PEERS;
  return env;
}

/**
 * Spawns `args`, resolves when stdout has a line starting `line` (and, given `then`, once stderr
 * holds it too: serve's start-up check of the journal, which runs on after the URL line); then
 * SIGTERM and the exit.
 */
export async function timeStart(args: string[], line: string, env: NodeJS.ProcessEnv, then?: string): Promise<Start> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const lines = createInterface({ input: child.stdout });
  try {
    const ms = await new Promise<number>((resolveLine, reject) => {
      const timer = setTimeout(() => reject(new Error(`${args.join(' ')} printed no ${line} line within ${TIMEOUT_MS} ms; stderr:\n${stderr}`)), TIMEOUT_MS);
      lines.on('line', (text) => {
        if (!text.startsWith(line)) return;
        clearTimeout(timer);
        resolveLine(performance.now() - started);
      });
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`${args.join(' ')} exited (${code}) before printing ${line}; stderr:\n${stderr}`));
      });
    });
    if (then === undefined) return { ms, stderr };
    while (!stderr.includes(then)) {
      if (performance.now() - started > TIMEOUT_MS) throw new Error(`${args.join(' ')} wrote no "${then.trim()}" within ${TIMEOUT_MS} ms; stderr:\n${stderr}`);
      if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited before "${then.trim()}"; stderr:\n${stderr}`);
      await new Promise((resolveWait) => setTimeout(resolveWait, 5));
    }
    return { ms, stderr, thenMs: performance.now() - started };
  } finally {
    child.kill('SIGTERM');
    await exited;
    lines.close();
  }
}

/** The baseline script: fastify, one route, listen, print the URL (memory.bench.ts starts it too). */
export function writeBaselineScript(dir: string): string {
  const fastify = pathToFileURL(createRequire(import.meta.url).resolve('fastify')).href;
  const file = join(dir, 'bare-fastify.mjs');
  writeFileSync(
    file,
    [
      `import Fastify from ${JSON.stringify(fastify)};`,
      'const app = Fastify();',
      "app.get('/', async () => ({ ok: true }));",
      "const url = await app.listen({ host: '127.0.0.1', port: 0 });",
      `process.stdout.write(${JSON.stringify(BASELINE_LINE)} + url + '\\n');`,
      "process.once('SIGTERM', () => void app.close());",
      '',
    ].join('\n'),
  );
  return file;
}

async function writeExistingJournal(dataDir: string): Promise<void> {
  const journal = await Journal.open({ dataDir });
  try {
    for (let run = 1; run <= EXISTING_RUNS; run += 1) {
      await journal.appendBatch(runDrafts(`run-${run.toString(16).padStart(20, '0')}`, EFFECTS_PER_RUN));
    }
  } finally {
    await journal.close();
  }
  const written = (await countRecords(dataDir)) ?? 0;
  if (written !== EXISTING_RECORDS) throw new Error(`the existing journal holds ${written} records, expected ${EXISTING_RECORDS}`);
}

async function countRecords(dataDir: string): Promise<number | undefined> {
  const journal = await Journal.open({ dataDir, readOnly: true });
  try {
    return (await journal.head()).seq;
  } finally {
    await journal.close();
  }
}

/** Self time by package (or by file of ours): where module load and start-up go. */
export function byPackage(profile: CpuProfile, limit: number): string[] {
  const summary = summariseProfile(profile, limit, REPO_ROOT, (frame) => {
    const file = displayFile(frame.url, REPO_ROOT);
    if (file === '') return frame.functionName;
    if (file.startsWith('node:')) return 'node internals (module loader, fs, …)';
    const scoped = /^(@[^/]+\/[^/]+|[^/]+)\//.exec(file);
    return file.startsWith('out/') ? file.replace(/-[A-Za-z0-9_-]{8}\.js$/, '.js') : (scoped?.[1] ?? file);
  });
  return summary.top.map((f) => `${f.percent.toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(5)} ms  ${f.where}`);
}

async function profiledStart(root: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const profileDir = join(root, 'cpu-prof');
  await timeStart(['--cpu-prof', '--cpu-prof-dir', profileDir, CLI, 'serve', '--no-open', '--ui-port', '0', '--mcp-port', '0', '--a2a-port', '0', '--data-dir', join(root, 'profiled')], URL_LINE, env);
  const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error('the profiled serve wrote no .cpuprofile');
  const profile = JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as CpuProfile;
  // The profile runs to the exit, so it includes the shutdown after SIGTERM; start-up dominates.
  const functions = summariseProfile(profile, 8, REPO_ROOT);
  return [
    `one extra serve (fresh data dir) under --cpu-prof, spawn to exit (${(functions.busyMs / 1000).toFixed(2)} s busy): self time by package`,
    ...byPackage(profile, 10).map((l) => `    ${l}`),
    'and its top functions by self time',
    ...functions.top.map((f) => `    ${f.percent.toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(5)} ms  ${f.where}`),
  ];
}

export function phaseNote(label: string, traces: Phase[][]): string {
  const phases = medianPhases(traces);
  return `${label}, p50 ms by phase: ${phases.map((p) => `${p.phase} ${p.ms.toFixed(0)}`).join(', ')}`;
}

async function run(): Promise<BenchResult> {
  requireBuild();
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-startup-'));
  try {
    const baselineScript = writeBaselineScript(root);
    const existingDir = join(root, 'existing');
    await writeExistingJournal(existingDir);
    const env = childEnv({ [STARTUP_TRACE_ENV]: '1' });
    const serveArgs = (dataDir: string) => [CLI, 'serve', '--no-open', '--ui-port', '0', '--mcp-port', '0', '--a2a-port', '0', '--data-dir', dataDir];
    let fresh = 0;
    const operations = {
      baseline: () => timeStart([baselineScript], BASELINE_LINE, env),
      fresh: () => timeStart(serveArgs(join(root, `fresh-${(fresh += 1)}`)), URL_LINE, env),
      existing: () => timeStart(serveArgs(existingDir), URL_LINE, env, `${STARTUP_TRACE_PREFIX} ${JOURNAL_CHECKED_MARK} `),
      nodeBoot: () => timeStart(['-e', "process.stdout.write('BOOTED\\n'); setTimeout(() => {}, 60000)"], 'BOOTED', env),
    };
    // One start of each first, untimed: the OS file cache then holds node_modules for every side.
    for (const start of Object.values(operations)) await start();
    const names = Object.keys(operations) as (keyof typeof operations)[];
    const samples = Object.fromEntries(names.map((n) => [n, [] as Start[]])) as Record<keyof typeof operations, Start[]>;
    for (let round = 0; round < ROUNDS; round += 1) {
      for (let k = 0; k < names.length; k += 1) {
        const name = names[(round + k) % names.length]!;
        samples[name].push(await operations[name]());
      }
    }
    const stats = (name: keyof typeof operations) => summarise(samples[name].map((s) => s.ms));
    const [base, freshStats, existingStats, boot] = [stats('baseline'), stats('fresh'), stats('existing'), stats('nodeBoot')];
    const checkedStats = summarise(samples.existing.map((s) => s.thenMs!));
    const records = await countRecords(existingDir);
    const profileNotes = await profiledStart(root, childEnv({}));
    return {
      subject: 'agentplane serve (built CLI, ports 0, --no-open) from spawn to its AGENTPLANE_UI_URL line',
      baseline: 'node running a script that loads fastify, adds one route, listens on 127.0.0.1:0 and prints its URL',
      measurements: [
        { metric: 'spawn → URL, fresh data dir (p50)', unit: 'ms', subject: freshStats.p50, baseline: base.p50, better: 'lower', judged: true },
        { metric: `spawn → URL, ${EXISTING_RECORDS.toLocaleString('en-US')}-record journal (p50)`, unit: 'ms', subject: existingStats.p50, baseline: base.p50, better: 'lower', judged: true },
        { metric: 'spawn → URL, fresh data dir (mean)', unit: 'ms', subject: freshStats.mean, baseline: base.mean, better: 'lower', judged: false },
        { metric: 'spawn → URL, existing journal (mean)', unit: 'ms', subject: existingStats.mean, baseline: base.mean, better: 'lower', judged: false },
        { metric: 'spawn → journal checked (runs may start), existing journal (p50)', unit: 'ms', subject: checkedStats.p50, baseline: base.p50, better: 'lower', judged: false },
      ],
      notes: [
        `${ROUNDS} rounds of each after one untimed start of each, interleaved (order rotating); every process stopped with SIGTERM and awaited before the next start`,
        `bare node (spawn to its first stdout line, nothing loaded): p50 ${boot.p50.toFixed(0)} ms — the floor under both sides`,
        `the existing data dir's journal holds ${records?.toLocaleString('en-US')} records (${EXISTING_RUNS} runs of ${EFFECTS_PER_RUN.toLocaleString('en-US')} effects); serve verifies and folds it at every start (the runtime's start-up scan), after its URL line: reads answer from the URL line, and runs may start once the scan has ended (its own line)`,
        phaseNote('fresh data dir', samples.fresh.map((s) => parseStartupTrace(s.stderr))),
        phaseNote('existing journal', samples.existing.map((s) => parseStartupTrace(s.stderr))),
        'phases: cli.modules-loaded = node boot + loading every module of the CLI; plane.journal-open = SQLite open, migrations, key, Merkle catch-up; plane.runtime = the runtime built (agents compiled, authority checked; the start-up scan of the journal starts here and runs on, in-thread below 100,000 records, else in the journal workers); serve.*-listen = the bridge, MCP and A2A listeners; runtime.journal-checked = the scan ended, runs may start',
        ...profileNotes,
      ],
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'serve-startup',
  goal: { maxRatio: 3, text: 'agentplane serve up (URL line) within 3× of node starting a bare fastify server (p50)' },
  run,
};

export default benchmark;
