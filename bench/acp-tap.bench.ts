/**
 * What `agentplane acp tap` costs an editor. Subject: the built CLI started as an editor starts
 * it, `node bin/agentplane.js acp tap --data-dir <fresh temp dir> --name bench -- node
 * tests/doubles/acp-echo-agent.mjs`, with no plane running for that data dir, so the tap writes
 * every observation into the data dir's journal directly (JournalSink: SQLite WAL with
 * synchronous=FULL, so each commit is an fsync). Baseline: the same echo agent spawned directly
 * by this process and talked to over its own stdio pipes. Both are driven by the same client
 * code in the same process and run: newline-delimited JSON-RPC, 1 KB `session/prompt` requests
 * and 1 KB answers.
 *
 * After initialize and session/new (so the session's run exists), two passes:
 *  - latency: WARM_UP and then SEQUENTIAL request→response round trips, one at a time,
 *    alternating tap and pipe call by call (measure.ts's interleavedLatencies);
 *  - throughput: bursts of PIPELINED requests written at once, counting answers, in
 *    alternating order (tap first, then pipe first). After each tap burst the bench waits (the
 *    wait is not timed as forwarding) until the journal holds every message so far, so the
 *    tap's journaling never runs during a pipe burst; how long that took is reported as the
 *    throughput "until journaled".
 * Then the tap's stdin is closed as an editor would, the tap must exit, and the journal is read
 * back: the session's run must hold tap/started, the initialize and session/new exchanges,
 * every request and every answer (wire indices 1..n, none missing, no gap or malformed), and
 * tap/ended, then be sealed with the right record count; and `agentplane journal verify
 * --data-dir` must say OK over every record. Any of that failing throws: a tap that loses
 * messages is broken, not slow.
 *
 * The goal is two different ratios, and the runner judges one maxRatio (1.5): latency is
 * judged as tap p50 ÷ (pipe p50 + 0.2 ms) ≤ 1.5 exactly; throughput ≥ 0.5× the pipe's is judged
 * as the same 1.5× against ¾ of the pipe's throughput (0.75 × 2 = 1.5, so the line passes
 * exactly when the tap reaches half the pipe). The plain ratios are shown beside them.
 */
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { journalPath } from '../src-main/journal/sqlite-store';
import type { Benchmark, BenchResult } from './bench-types';
import { summariseProfile, type CpuProfile } from './cpu-profile';
import { interleavedLatencies, summarise } from './measure';

const WARM_UP = 200;
const SEQUENTIAL = 2000;
const PIPELINED = 10_000;
/** Bursts per side, alternating which side goes first. */
const BURSTS = 2;
const LINE_BYTES = 1024;
/** The allowance on top of the pipe's p50. */
const ALLOWANCE_US = 200;
const LATENCY_GOAL = 1.5;
const THROUGHPUT_GOAL = 2;
/** How long anything (an answer, the journal catching up, the tap's exit) may take before the bench gives up. */
const PATIENCE_MS = 120_000;
/** A journal whose count has not moved for this long has caught up with all it will hold before the tap exits. */
const SETTLED_MS = 2000;

const ROOT = resolve(import.meta.dirname, '..');
const CLI = join(ROOT, 'bin', 'agentplane.js');
const BUILT_CLI = join(ROOT, 'out', 'main', 'cli.js');
const ECHO_AGENT = join(ROOT, 'tests', 'doubles', 'acp-echo-agent.mjs');

/** A `session/prompt` line of exactly LINE_BYTES (newline included) for ids of the same width. */
function promptLine(sessionId: string, id: number): string {
  const line = (pad: string) => `${JSON.stringify({ jsonrpc: '2.0', id, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: pad }] } })}\n`;
  return line('x'.repeat(Math.max(0, LINE_BYTES - line('').length)));
}

function withTimeout<T>(promise: Promise<T>, what: string, ms = PATIENCE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * One side of the comparison: a child process spoken to in newline-delimited JSON-RPC, as an
 * editor speaks to its agent. Every answer is split out and parsed, on both sides alike.
 */
class Wire {
  private buffered = '';
  private nextId = 1;
  private readonly waiting = new Map<number, (message: Record<string, unknown>) => void>();
  private burst: { left: number; done: () => void } | null = null;
  private stderrText = '';
  private exitError: Error | null = null;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Requests written and answers read, initialize and session/new included. */
  sent = 0;
  answered = 0;
  sessionId = '';

  constructor(
    readonly label: string,
    readonly child: ChildProcessWithoutNullStreams,
  ) {
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => this.read(chunk));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (this.stderrText = (this.stderrText + chunk).slice(-4096)));
    child.stdin.on('error', () => undefined); // EPIPE if it died: the exit says why
    this.exited = new Promise((resolveExit) => {
      child.on('exit', (code, signal) => {
        this.exitError = new Error(`${label} exited (code ${code}, signal ${signal}); stderr: ${this.stderrText.trim() || '(none)'}`);
        resolveExit({ code, signal });
      });
    });
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** One request; resolves with its answer. */
  request(method: string, params: unknown): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return this.send(id, `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  }

  async open(): Promise<void> {
    await this.request('initialize', { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'acp-tap-bench', version: '0' } });
    const opened = await this.request('session/new', { cwd: ROOT, mcpServers: [] });
    const sessionId = (opened.result as { sessionId?: unknown } | undefined)?.sessionId;
    if (typeof sessionId !== 'string') throw new Error(`${this.label}: session/new answered ${JSON.stringify(opened).slice(0, 200)}`);
    this.sessionId = sessionId;
  }

  /** One 1 KB request → 1 KB answer round trip. */
  readonly call = async (): Promise<void> => {
    const id = this.nextId++;
    const answer = await this.send(id, promptLine(this.sessionId, id));
    if ((answer.result as { stopReason?: unknown } | undefined)?.stopReason !== 'end_turn') throw new Error(`${this.label}: answered ${JSON.stringify(answer).slice(0, 200)}`);
  };

  /** `count` 1 KB requests written at once; resolves with the ms until the last answer was read. */
  async pipelined(count: number): Promise<number> {
    if (this.burst || this.waiting.size > 0) throw new Error(`${this.label}: a burst while requests are in flight`);
    const template = promptLine(this.sessionId, 0);
    const lines: string[] = [];
    for (let i = 0; i < count; i += 1) lines.push(template.replace('"id":0,', `"id":${this.nextId++},`));
    const text = lines.join('');
    const done = new Promise<void>((resolveDone) => (this.burst = { left: count, done: resolveDone }));
    const started = performance.now();
    this.sent += count;
    this.child.stdin.write(text);
    await withTimeout(this.race(done), `${this.label}: a burst of ${count}`);
    return performance.now() - started;
  }

  /** Closes stdin as an editor does when it is done; resolves with how the process ended. */
  async close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin.end();
    return withTimeout(this.exited, `${this.label}: exit after stdin closed`);
  }

  private send(id: number, line: string): Promise<Record<string, unknown>> {
    const answer = new Promise<Record<string, unknown>>((resolveAnswer) => this.waiting.set(id, resolveAnswer));
    this.sent += 1;
    this.child.stdin.write(line);
    return withTimeout(this.race(answer), `${this.label}: request ${id}`);
  }

  private race<T>(promise: Promise<T>): Promise<T> {
    return Promise.race([
      promise,
      this.exited.then(() => {
        throw this.exitError!;
      }),
    ]);
  }

  private read(chunk: string): void {
    this.buffered += chunk;
    let start = 0;
    for (let nl = this.buffered.indexOf('\n'); nl !== -1; nl = this.buffered.indexOf('\n', start)) {
      const line = this.buffered.slice(start, nl);
      start = nl + 1;
      const message = JSON.parse(line) as Record<string, unknown>;
      if (typeof message.id !== 'number') throw new Error(`${this.label}: an answer without a numeric id: ${line.slice(0, 200)}`);
      this.answered += 1;
      const waiter = this.waiting.get(message.id);
      if (waiter) {
        this.waiting.delete(message.id);
        waiter(message);
      } else if (this.burst) {
        this.burst.left -= 1;
        if (this.burst.left === 0) {
          const { done } = this.burst;
          this.burst = null;
          done();
        }
      } else throw new Error(`${this.label}: an answer nobody asked for: ${line.slice(0, 200)}`);
    }
    this.buffered = this.buffered.slice(start);
  }
}

function start(label: string, file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Wire {
  return new Wire(label, spawn(file, args, { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] }));
}

/**
 * Observation records committed so far, and how many are gaps, counted incrementally: records
 * are only ever appended, so each poll reads just the rows past the last seq it saw (by the
 * primary key). Counting the whole table every 5 ms took half of this process's CPU by the end
 * of the bursts (44,000 records), on a machine whose other core the tap's journaling worker
 * needs to catch up. Read-only: a reader never blocks the writer.
 */
class ObservationCounter {
  private lastSeq = 0;
  private counts = { count: 0, gaps: 0, dropped: 0 };

  constructor(private readonly dataDir: string) {}

  poll(): { count: number; gaps: number; dropped: number } {
    const file = journalPath(this.dataDir);
    if (!existsSync(file)) return { ...this.counts };
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const rows = db
        .prepare(
          `SELECT max(seq) AS lastSeq,
                  coalesce(sum(kind = 'Observation'), 0) AS count,
                  coalesce(sum(kind = 'Observation' AND json_extract(body, '$.update') = 'gap'), 0) AS gaps,
                  coalesce(sum(CASE WHEN kind = 'Observation' AND json_extract(body, '$.update') = 'gap' THEN json_extract(body, '$.detail.dropped') END), 0) AS dropped
             FROM records WHERE seq > ?`,
        )
        .get(this.lastSeq) as { lastSeq: number | null; count: number; gaps: number; dropped: number };
      if (rows.lastSeq !== null) {
        this.lastSeq = rows.lastSeq;
        this.counts = { count: this.counts.count + rows.count, gaps: this.counts.gaps + rows.gaps, dropped: this.counts.dropped + rows.dropped };
      }
      return { ...this.counts };
    } finally {
      db.close();
    }
  }
}

/** One counter per data dir, kept across waits. */
const counters = new Map<string, ObservationCounter>();

/**
 * Waits until the journal holds `count` observations (tap/started and every message so far);
 * resolves with how long that took. A tap that dropped messages never gets there: once the
 * count has stopped moving for SETTLED_MS it resolves with what is missing, and the final check
 * fails the benchmark (after the tap's exit, which flushes the last gap) with the numbers
 * measured meanwhile.
 */
async function journaled(dataDir: string, count: number, tap: Wire): Promise<{ ms: number; missing: number }> {
  const started = performance.now();
  let counter = counters.get(dataDir);
  if (!counter) counters.set(dataDir, (counter = new ObservationCounter(dataDir)));
  let last = -1;
  let lastMoved = started;
  for (;;) {
    const now = counter.poll();
    const messages = now.count - now.gaps;
    if (messages >= count) return { ms: performance.now() - started, missing: 0 };
    if (tap.child.exitCode !== null || tap.child.signalCode !== null) throw new Error(`the tap exited before journaling: ${tap.stderr}`);
    if (now.count !== last) [last, lastMoved] = [now.count, performance.now()];
    else if (performance.now() - lastMoved > SETTLED_MS) return { ms: lastMoved - started, missing: count - messages };
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface RecordRow {
  seq: number;
  run_id: string | null;
  kind: string;
  body: string;
}

/**
 * Everything the tap saw must be in the journal, in one run, sealed: throws otherwise.
 * `requests`/`answers`: what the bench wrote to the tap and read from it (initialize and
 * session/new included). Returns the number of records, for the verifier's count.
 */
function checkJournal(dataDir: string, requests: number, answers: number, sessionId: string): { records: number; observations: number } {
  const db = new Database(journalPath(dataDir), { readonly: true, fileMustExist: true });
  let rows: RecordRow[];
  try {
    rows = db.prepare('SELECT seq, run_id, kind, body FROM records ORDER BY seq').all() as RecordRow[];
  } finally {
    db.close();
  }
  const runs = new Set(rows.map((r) => r.run_id));
  if (runs.size !== 1 || rows[0]?.run_id === null) throw new Error(`expected every record in one session run; runs: ${[...runs].join(', ')}`);
  const updates = new Map<string, number>();
  const wires = { toAgent: 0, toEditor: 0 } as Record<string, number>;
  const seen = new Set<number>();
  let sealed: { records?: number; outcome?: string } | null = null;
  for (const row of rows) {
    const body = JSON.parse(row.body) as { update?: string; sessionId?: string; detail?: { dir?: string; wire?: number; reason?: string }; records?: number; outcome?: string };
    if (row.kind === 'RunSealed') {
      if (row.seq !== rows.length) throw new Error(`RunSealed at seq ${row.seq} is not the last record (${rows.length})`);
      sealed = body;
      continue;
    }
    if (row.kind !== 'Observation') throw new Error(`unexpected ${row.kind} record at seq ${row.seq}`);
    if (body.sessionId !== sessionId) throw new Error(`seq ${row.seq} is of session ${body.sessionId}, expected ${sessionId}`);
    updates.set(body.update ?? '?', (updates.get(body.update ?? '?') ?? 0) + 1);
    if (body.update === 'message') {
      wires[body.detail?.dir ?? '?'] = (wires[body.detail?.dir ?? '?'] ?? 0) + 1;
      seen.add(body.detail?.wire ?? 0);
    }
    if (body.update === 'tap/ended' && body.detail?.reason !== 'editor-disconnect') throw new Error(`tap/ended says ${JSON.stringify(body.detail)}`);
  }
  const messages = requests + answers;
  const problems: string[] = [];
  if (wires.toAgent !== requests) problems.push(`${wires.toAgent} requests journaled of ${requests} sent`);
  if (wires.toEditor !== answers) problems.push(`${wires.toEditor} answers journaled of ${answers} read`);
  if (seen.size !== messages || [...seen].some((w) => w < 1 || w > messages)) problems.push(`wire indices are not exactly 1..${messages} (${seen.size} distinct)`);
  for (const update of ['tap/started', 'tap/ended']) if (updates.get(update) !== 1) problems.push(`${updates.get(update) ?? 0} ${update}`);
  for (const update of ['gap', 'malformed']) if (updates.has(update)) problems.push(`${updates.get(update)} ${update} observations`);
  const observations = rows.length - 1;
  if (observations !== messages + 2) problems.push(`${observations} observations, expected ${messages + 2}`);
  if (!sealed) problems.push('the run is not sealed');
  else if (sealed.outcome !== 'observed' || sealed.records !== observations) problems.push(`the seal says ${JSON.stringify(sealed)}`);
  if (problems.length > 0) throw new Error(`the journal is missing what the tap forwarded: ${problems.join('; ')}`);
  return { records: rows.length, observations };
}

/** `agentplane journal verify --data-dir`: must say OK over every record, with nothing unsigned. */
function verifyJournal(dataDir: string, records: number): string {
  let out: string;
  try {
    out = execFileSync(process.execPath, [CLI, 'journal', 'verify', '--data-dir', dataDir], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; status?: number };
    throw new Error(`journal verify failed (exit ${e.status}): ${e.stdout ?? ''} ${e.stderr ?? ''}`.trim());
  }
  if (!out.startsWith(`OK ${records} records`) || out.includes('UNSIGNED')) throw new Error(`journal verify said: ${out}; expected OK ${records} records`);
  return out.split('\n')[0]!;
}

function fileSystemOf(dir: string): string {
  try {
    return execFileSync('df', ['-T', dir], { encoding: 'utf8' }).trim().split('\n').at(-1)?.split(/\s+/)[1] ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Where the tap's own time goes (docs/PERFORMANCE.md): the bench process's profile sees only the
 * driver, so one more tap, never one of the measured ones, is run under `node --cpu-prof` on a
 * data dir of its own for one burst, until its journal has caught up and it has exited. Node
 * writes a profile per thread: the main thread (forwarding) and the journaling worker
 * (acp-tap-worker.js). Each is summarised as its busy and idle time and its top functions.
 */
async function profiledTapNotes(): Promise<string[]> {
  const root = mkdtempSync(join(process.env.AGENTPLANE_BENCH_DIR ?? tmpdir(), 'agentplane-bench-acp-tap-profile-'));
  const dataDir = join(root, 'data');
  const profiles = join(root, 'profiles');
  const tap = start('the profiled tap', process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profiles}`, CLI, 'acp', 'tap', '--data-dir', dataDir, '--name', 'bench', '--', process.execPath, ECHO_AGENT], {
    ...process.env,
    AGENTPLANE_DATA_DIR: dataDir,
  });
  try {
    await tap.open();
    const ms = await tap.pipelined(PIPELINED);
    const caughtUp = await journaled(dataDir, tap.sent + tap.answered + 1, tap);
    await tap.close();
    // CPU.<date>.<time>.<pid>.<thread id>.<seq>.cpuprofile; thread 0 is the main thread.
    const files = readdirSync(profiles).filter((f) => f.endsWith('.cpuprofile'));
    const threadOf = (file: string) => Number(/\.(\d+)\.\d+\.cpuprofile$/.exec(file)?.[1] ?? -1);
    const lines = [
      `the tap's own threads in one extra, profiled burst of ${PIPELINED.toLocaleString('en-US')} (node --cpu-prof, not a measured run): forwarded in ${ms.toFixed(0)} ms, journal caught up ${caughtUp.ms.toFixed(0)} ms later`,
    ];
    for (const file of files.sort((a, b) => threadOf(a) - threadOf(b))) {
      const summary = summariseProfile(JSON.parse(readFileSync(join(profiles, file), 'utf8')) as CpuProfile, 6);
      const name = threadOf(file) === 0 ? 'main thread (forwarding)' : 'journaling worker';
      lines.push(`  ${name}: ${summary.busyMs.toFixed(0)} ms busy, ${summary.idleMs.toFixed(0)} ms idle (the whole life of the process); top functions by self time:`);
      lines.push(...summary.top.map((f) => `    ${f.percent.toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(5)} ms  ${f.where}`));
    }
    if (files.length === 0) lines.push('  (node wrote no profile: the tap did not exit cleanly)');
    return lines;
  } finally {
    if (tap.child.exitCode === null && tap.child.signalCode === null) tap.child.kill('SIGKILL');
    await tap.exited;
    rmSync(root, { recursive: true, force: true });
  }
}

async function run(): Promise<BenchResult> {
  if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: build first (npm run bench builds; or npx electron-vite build)`);
  const dataDir = mkdtempSync(join(process.env.AGENTPLANE_BENCH_DIR ?? tmpdir(), 'agentplane-bench-acp-tap-'));
  const env = { ...process.env, AGENTPLANE_DATA_DIR: dataDir };
  const tap = start('the tap', process.execPath, [CLI, 'acp', 'tap', '--data-dir', dataDir, '--name', 'bench', '--', process.execPath, ECHO_AGENT], env);
  const pipe = start('the echo agent', process.execPath, [ECHO_AGENT]);
  try {
    await Promise.all([
      tap.open().catch((error: unknown) => {
        if (tap.stderr.includes("unknown command 'acp'")) throw new Error(`${BUILT_CLI} predates \`acp tap\`: rebuild (npx electron-vite build)`, { cause: error });
        throw error;
      }),
      pipe.open(),
    ]);
    if (!tap.stderr.includes('writing observations to its journal directly')) {
      await new Promise((r) => setTimeout(r, 200));
      if (!tap.stderr.includes('writing observations to its journal directly')) throw new Error(`the tap is not writing to the journal directly: ${tap.stderr}`);
    }

    // Latency: one request at a time, tap and pipe alternating call by call.
    await interleavedLatencies([tap.call, pipe.call], WARM_UP);
    const [tapUs, pipeUs] = (await interleavedLatencies([tap.call, pipe.call], SEQUENTIAL)).map(summarise);
    const afterLatency = await journaled(dataDir, tap.sent + tap.answered + 1, tap);
    let missing = afterLatency.missing;

    // Throughput: bursts written at once, alternating which side goes first; the tap's
    // journal catches up (untimed as forwarding) before the pipe's next burst. Each side's first
    // burst warms it up and is shown, not judged, as the latency pass's first calls are: a
    // process's first burst of 10,000 runs its burst path (many lines a read) cold, grows its heap
    // and, for the tap, starts its journal worker's commits, and it came 2-3× slower than every
    // later one on both sides (six bursts a side, alternated: tap 15-25k msg/s first, then
    // 29-104k; pipe 52-80k first, then 41-184k), so two timed bursts after it read mostly how
    // cold the first one was. A session's bursts are mostly not its first.
    const cold = { tapMs: 0, pipeMs: 0 };
    for (const side of [tap, pipe]) {
      const ms = await side.pipelined(PIPELINED);
      if (side === tap) cold.tapMs = ms;
      else cold.pipeMs = ms;
    }
    const coldCatchUpMs = (await journaled(dataDir, tap.sent + tap.answered + 1, tap)).ms;
    let catchUpMs = 0;
    let tapMs = 0;
    let pipeMs = 0;
    for (let burst = 0; burst < BURSTS; burst += 1) {
      for (const side of burst % 2 === 0 ? [tap, pipe] : [pipe, tap]) {
        const ms = await side.pipelined(PIPELINED);
        if (side === tap) {
          tapMs += ms;
          const caughtUp = await journaled(dataDir, tap.sent + tap.answered + 1, tap);
          catchUpMs += caughtUp.ms;
          missing = caughtUp.missing;
        } else pipeMs += ms;
      }
    }
    const rate = (ms: number) => (PIPELINED * BURSTS) / (ms / 1000);
    const [tapRps, pipeRps, tapJournaledRps] = [rate(tapMs), rate(pipeMs), rate(tapMs + catchUpMs)];

    // The editor goes away: the tap must end its agent, journal tap/ended, seal and exit.
    const closing = performance.now();
    const [tapExit] = await Promise.all([tap.close(), pipe.close()]);
    const exitMs = performance.now() - closing;
    let verified: string;
    try {
      verified = verifyJournal(dataDir, checkJournal(dataDir, tap.sent, tap.answered, tap.sessionId).records);
    } catch (error) {
      // A broken subject, but the numbers measured on the way are still worth reading.
      const measured =
        `measured meanwhile: p50 ${tapUs!.p50.toFixed(0)} µs tap vs ${pipeUs!.p50.toFixed(0)} µs pipe, p99 ${tapUs!.p99.toFixed(0)} vs ${pipeUs!.p99.toFixed(0)} µs; ` +
        `throughput ${tapRps.toFixed(0)} vs ${pipeRps.toFixed(0)} msg/s; ${missing} messages missing from the journal after the last burst`;
      // What the tap itself said (a journal it could not write, a worker that stopped) is the first clue.
      throw new Error(`${(error as Error).message}\n   ${measured}\n   the tap's stderr: ${tap.stderr.trim() || '(none)'}`, { cause: error });
    }
    const profileNotes = await profiledTapNotes();

    return {
      subject: 'node bin/agentplane.js acp tap (observe, direct journal sink, no plane) in front of the echo agent',
      baseline: 'the same echo agent spawned directly, spoken to over its stdio pipes',
      measurements: [
        { metric: `p50 latency vs pipe p50 + ${ALLOWANCE_US / 1000} ms`, unit: 'µs', subject: tapUs!.p50, baseline: pipeUs!.p50 + ALLOWANCE_US, better: 'lower', judged: true },
        { metric: `throughput vs ¾ pipe (≡ ≥ ${1 / THROUGHPUT_GOAL}× pipe)`, unit: 'msg/s', subject: tapRps, baseline: (pipeRps * LATENCY_GOAL) / THROUGHPUT_GOAL, better: 'higher', judged: true },
        { metric: 'p50 latency', unit: 'µs', subject: tapUs!.p50, baseline: pipeUs!.p50, better: 'lower', judged: false },
        { metric: 'p99 latency', unit: 'µs', subject: tapUs!.p99, baseline: pipeUs!.p99, better: 'lower', judged: false },
        { metric: 'mean latency', unit: 'µs', subject: tapUs!.mean, baseline: pipeUs!.mean, better: 'lower', judged: false },
        { metric: 'throughput', unit: 'msg/s', subject: tapRps, baseline: pipeRps, better: 'higher', judged: false },
        { metric: 'throughput until journaled', unit: 'msg/s', subject: tapJournaledRps, baseline: pipeRps, better: 'higher', judged: false },
        { metric: 'throughput, first burst (cold)', unit: 'msg/s', subject: PIPELINED / (cold.tapMs / 1000), baseline: PIPELINED / (cold.pipeMs / 1000), better: 'higher', judged: false },
      ],
      notes: [
        `messages: ${LINE_BYTES}-byte session/prompt requests and ${LINE_BYTES}-byte answers (msg/s counts round trips: one message each way)`,
        `latency: warm-up ${WARM_UP} round trips each, then ${SEQUENTIAL} sequential round trips each, interleaved call by call`,
        `throughput: ${BURSTS} bursts of ${PIPELINED.toLocaleString('en-US')} requests written at once per side, alternating which goes first, after one untimed burst each (the cold burst, shown)`,
        `journal catch-up (untimed as forwarding): ${afterLatency.ms.toFixed(0)} ms after the latency pass, ${coldCatchUpMs.toFixed(0)} ms after the cold burst, ${catchUpMs.toFixed(0)} ms in all after the timed ones`,
        `editor close → tap exit (ends the agent, journals tap/ended, seals, checkpoints): ${exitMs.toFixed(0)} ms, exit ${tapExit.code ?? tapExit.signal}`,
        `durability: ${tap.sent.toLocaleString('en-US')} requests + ${tap.answered.toLocaleString('en-US')} answers + tap/started + tap/ended journaled in one sealed run; ${verified}`,
        `journal: ${dataDir} on ${fileSystemOf(dataDir)} (WAL, synchronous=FULL)`,
        ...profileNotes,
        `node ${process.version}, ${process.platform}/${process.arch}`,
      ],
    };
  } finally {
    for (const side of [tap, pipe]) if (side.child.exitCode === null && side.child.signalCode === null) side.child.kill('SIGKILL');
    await Promise.all([tap.exited, pipe.exited]);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'acp-tap',
  goal: {
    maxRatio: LATENCY_GOAL,
    text: `acp tap vs a direct pipe, 1 KB each way: p50 ≤ ${LATENCY_GOAL}× (pipe p50 + ${ALLOWANCE_US / 1000} ms), throughput ≥ ${1 / THROUGHPUT_GOAL}× the pipe's, every message journaled`,
  },
  run,
};

export default benchmark;
