/**
 * Fifty peers on one plane (docs/PERFORMANCE.md, "Fifty peers"). A real plane (`agentplane serve`
 * from the build, ports 0, no demo peers) with PEERS peers and one more, `solo`, registered, on a
 * fresh data dir: a peer's start also scans the whole journal it shares with the plane, which
 * this bench does not grow (docs/PERFORMANCE.md says what that costs on a large one).
 *
 * Start. Subject: one `agentplane peer up p01 … p50` (the built CLI, a process of its own), from
 * spawn until it exits, every peer healthy (the plane answers each start only once the peer's
 * health check passes). Baseline: `agentplane peer up solo`, the same way, the median of
 * SOLO_ROUNDS starts (each stopped again before the next), measured before the fifty. Judged
 * against START_RATIO × the baseline: START_RATIO is 15 s over one start's time on the machine
 * where the goal was set (0.48 s from spawn to exit), so 1.00× here is "fifty in 15 s" at
 * that speed; the note prints the absolute seconds beside the 15 s goal.
 *
 * Memory. Each peer's VmRSS from /proc/<pid>/status, idle (SETTLE_MS after the last one is up):
 * mean judged against 45 MB, max shown. RSS counts the pages a peer shares with the others (the
 * node binary, the shared libraries) in full for each; the note gives the proportional figure
 * (Pss, /proc/<pid>/smaps_rollup) and the split into private anonymous memory (V8's heap, code,
 * native allocations) and file-backed pages, which is where the memory goes. The plane's own
 * RSS is shown too.
 *
 * Ping. The plane's `peers.ping` (a session opened, then the peer's `ping` skill timed by the
 * plane): to `solo` alone PINGS times before the fifty start (baseline), then to each of the
 * fifty in turn, then to all fifty at once; p50s shown, not judged.
 *
 * The UI. The Peers view in headless Chromium (the plane's own page, its URL and token) with the
 * fifty running: the gaps between animation frames are recorded in the page while it is scrolled
 * to its end, while all fifty are pinged at once, and while all fifty are stopped by one
 * `peer down` (fifty status changes streamed to the page). The longest gap is judged against
 * 50 ms, the frame budget the issue sets.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { CLI, REPO_ROOT, childEnv, makeTempDir, requireBuild, startServe, stopWith, type ServeProcess } from '../e2e/support/serve-process';
import { launchChromium } from '../e2e/support/chromium';
import type { PeerSummary } from '../src-shared/ipc/contract';
import type { Benchmark, BenchResult } from './bench-types';
import { summarise } from './measure';

const PEERS = 50;
const SOLO_ROUNDS = 3;
const PINGS = 20;
const SETTLE_MS = 3000;
const START_GOAL_S = 15;
/** One `peer up` of one peer took 0.48 s from spawn to exit (2 cores, node 20) when the goal was set: 15 s / 0.48 s. */
const START_RATIO = 31;
const RSS_GOAL_MB = 45;
const FRAME_GOAL_MS = 50;

/** Runs in the page: records the gap between consecutive animation frames until `window.__benchStop` is set. */
const RECORD_FRAMES = `(() => {
  window.__benchGaps = [];
  window.__benchStop = false;
  let last = performance.now();
  const tick = (now) => {
    window.__benchGaps.push(now - last);
    last = now;
    if (!window.__benchStop) requestAnimationFrame(tick);
  };
  requestAnimationFrame((now) => { last = now; requestAnimationFrame(tick); });
})()`;
/** Runs in the page: scrolls the page's scrolling element to its end, a viewport's height a frame. */
const SCROLL_PAGE = `(async () => {
  const box = document.scrollingElement;
  while (box.scrollTop + box.clientHeight < box.scrollHeight - 1) {
    box.scrollTop += box.clientHeight;
    await new Promise((r) => requestAnimationFrame(r));
  }
})()`;

interface UpRun {
  ms: number;
  /** ms from spawn to each peer's report, in the order they came. */
  reports: number[];
  peers: PeerSummary[];
}

/** `agentplane peer up|down <ids> --json` as a process: its time to exit, and when each peer's line came. */
function peerCli(plane: ServeProcess, dataDir: string, verb: 'up' | 'down', ids: readonly string[]): Promise<UpRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, 'peer', verb, ...ids, '--json', '--data-dir', dataDir], { cwd: REPO_ROOT, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const reports: number[] = [];
  const peers: PeerSummary[] = [];
  const failures: string[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  createInterface({ input: child.stdout }).on('line', (line) => {
    reports.push(performance.now() - started);
    const report = JSON.parse(line) as { ok: boolean; id?: string; result?: PeerSummary; error?: { message: string } };
    if (report.ok && report.result) peers.push(report.result);
    else failures.push(`${report.id ?? '(all)'}: ${report.error?.message ?? line}`);
  });
  return new Promise((resolve, reject) => {
    child.once('close', (code) => {
      const ms = performance.now() - started;
      if (code !== 0 || failures.length > 0) reject(new Error(`agentplane peer ${verb} exited ${code}: ${failures.join('; ')} ${stderr} (plane stderr: ${plane.stderr().slice(-2000)})`));
      else resolve({ ms, reports, peers });
    });
  });
}

async function command<T>(plane: ServeProcess, name: string, request: unknown): Promise<T> {
  const response = await fetch(`${plane.origin}/api/commands/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${plane.token}` },
    body: JSON.stringify(request),
  });
  const body = (await response.json()) as { value?: T };
  if (response.status !== 200 || body.value === undefined) throw new Error(`${name} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
  return body.value;
}

const pingMs = async (plane: ServeProcess, id: string) => (await command<{ latencyMs: number }>(plane, 'peers.ping', { id })).latencyMs;

interface ProcessMemory {
  rssMb: number;
  pssMb: number;
  anonMb: number;
  fileMb: number;
}

function kbField(text: string, name: string): number {
  const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
  if (!match) throw new Error(`no ${name} in /proc status text`);
  return Number(match[1]);
}

function memoryOf(pid: number): ProcessMemory {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  return { rssMb: kbField(status, 'VmRSS') / 1024, pssMb: kbField(rollup, 'Pss') / 1024, anonMb: kbField(status, 'RssAnon') / 1024, fileMb: kbField(status, 'RssFile') / 1024 };
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
function cpuSecondsOf(pid: number): number {
  // The fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const mean = (values: readonly number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
/** Polls `read` until it answers `want` (a page's rows catching up with the plane), or fails naming `what`. */
async function expectCount(read: () => Promise<number>, want: number, what: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while ((await read()) !== want) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** What bench/peers-as-workers.mjs prints: fifty peers as worker threads of one host process. */
interface WorkerHost {
  peers: number;
  upMs: number;
  before: { rssMb: number; anonMb: number };
  after: { rssMb: number; anonMb: number };
  perPeerRssMb: number;
  perPeerAnonMb: number;
}

/** The same number of peers as worker threads of one host process (not how the plane runs them), in a process of its own. */
async function peersAsWorkers(dir: string): Promise<WorkerHost> {
  mkdirSync(dir, { recursive: true });
  const { stdout } = await promisify(execFile)(process.execPath, [join(REPO_ROOT, 'bench', 'peers-as-workers.mjs'), String(PEERS), String(SETTLE_MS), dir], { cwd: REPO_ROOT, env: childEnv(), timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as WorkerHost;
}

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function run(): Promise<BenchResult> {
  if (process.platform !== 'linux') throw new Error('fifty-peers reads /proc: it runs on Linux');
  requireBuild();
  const dataDir = makeTempDir('fifty-peers');
  const plane = await startServe({ dataDir, env: { AGENTPLANE_DEMO_PEERS: '0' }, timeoutMs: 60_000 });
  const ids = Array.from({ length: PEERS }, (_, i) => `p${String(i + 1).padStart(2, '0')}`);
  try {
    for (const id of ['solo', ...ids]) await command(plane, 'peers.create', { id, port: 0 });

    const soloStarts: number[] = [];
    const soloPings: number[] = [];
    for (let round = 0; round < SOLO_ROUNDS; round++) {
      soloStarts.push((await peerCli(plane, dataDir, 'up', ['solo'])).ms);
      if (round === SOLO_ROUNDS - 1) for (let i = 0; i < PINGS; i++) soloPings.push(await pingMs(plane, 'solo'));
      await peerCli(plane, dataDir, 'down', ['solo']);
    }
    const oneStartMs = median(soloStarts);

    const planeBefore = memoryOf(plane.pid);
    const planeCpuBefore = cpuSecondsOf(plane.pid);
    const all = await peerCli(plane, dataDir, 'up', ids);
    const planeCpu = cpuSecondsOf(plane.pid) - planeCpuBefore;
    if (all.peers.length !== PEERS || all.peers.some((p) => p.status !== 'running' || p.pid === null)) throw new Error(`not every peer reported running: ${all.peers.length} of ${PEERS}`);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const memory = all.peers.map((p) => memoryOf(p.pid!));
    const peerCpu = all.peers.map((p) => cpuSecondsOf(p.pid!));
    const planeAfter = memoryOf(plane.pid);

    const inTurn: number[] = [];
    for (const id of ids) inTurn.push(await pingMs(plane, id));

    // The Peers view with the fifty running: frames while it scrolls, while all are pinged at once, while all stop.
    const browser = await launchChromium(join(dataDir, 'chromium-profile'));
    let frames: { longest: number; p95: number; count: number; rows: number; phases: { scroll: number; scrollFrames: number; ping: number; stop: number } };
    let atOnce: number[];
    try {
      const page = browser.pages()[0] ?? (await browser.newPage());
      await page.goto(plane.url);
      const stopLabels = page.getByRole('button', { name: /^Stop p\d\d$/ });
      await expectCount(() => stopLabels.count(), PEERS, 'the Peers view to show all fifty running');
      const rows = await stopLabels.count();
      // Each phase's frames apart, so a long one says when it came.
      const phase = async (work: () => Promise<unknown>) => {
        await page.evaluate(RECORD_FRAMES);
        await work();
        return (await page.evaluate('(() => { window.__benchStop = true; return window.__benchGaps; })()')) as number[];
      };
      const scrolled = await phase(() => page.evaluate(SCROLL_PAGE));
      let pinged: number[] = [];
      const pings = await phase(async () => (pinged = await Promise.all(ids.map((id) => pingMs(plane, id)))));
      atOnce = pinged;
      const stopped = await phase(async () => {
        await peerCli(plane, dataDir, 'down', ids);
        await expectCount(() => page.getByRole('button', { name: /^Start p\d\d$/ }).count(), PEERS, 'the Peers view to show all fifty stopped');
      });
      const longest = (gaps: number[]) => Math.max(0, ...gaps);
      const all = [...scrolled, ...pings, ...stopped].sort((a, b) => a - b);
      frames = { longest: all[all.length - 1] ?? 0, p95: all[Math.floor(all.length * 0.95)] ?? 0, count: all.length, rows, phases: { scroll: longest(scrolled), scrollFrames: scrolled.length, ping: longest(pings), stop: longest(stopped) } };
    } finally {
      await browser.close();
    }

    // After the fifty processes have stopped, so the two designs do not share the machine's memory.
    const workers = await peersAsWorkers(join(dataDir, 'peers-as-workers'));
    const rss = memory.map((m) => m.rssMb);
    const seconds = all.ms / 1000;
    const ping = { solo: summarise(soloPings).p50, inTurn: summarise(inTurn).p50, atOnce: summarise(atOnce).p50 };
    return {
      subject: `one \`agentplane peer up\` of ${PEERS} peers on a running plane (spawn to exit, all healthy); their idle RSS`,
      baseline: `\`agentplane peer up\` of one peer (median of ${SOLO_ROUNDS}) × ${START_RATIO}; ${RSS_GOAL_MB} MB per peer`,
      measurements: [
        { metric: `${PEERS} at once vs one × ${START_RATIO}`, unit: 'ms', subject: all.ms, baseline: oneStartMs * START_RATIO, better: 'lower', judged: true },
        { metric: 'idle RSS per peer, mean', unit: 'MB', subject: mean(rss), baseline: RSS_GOAL_MB, better: 'lower', judged: true },
        { metric: 'idle RSS per peer, max', unit: 'MB', subject: Math.max(...rss), baseline: RSS_GOAL_MB, better: 'lower', judged: false },
        { metric: 'as workers of one host (not built), RSS per peer', unit: 'MB', subject: workers.perPeerRssMb, baseline: RSS_GOAL_MB, better: 'lower', judged: false },
        { metric: 'ping p50, each in turn vs one peer alone', unit: 'ms', subject: ping.inTurn, baseline: ping.solo, better: 'lower', judged: false },
        { metric: `ping p50, all ${PEERS} at once vs one peer alone`, unit: 'ms', subject: ping.atOnce, baseline: ping.solo, better: 'lower', judged: false },
        { metric: `Peers view longest frame vs ${FRAME_GOAL_MS} ms`, unit: 'ms', subject: frames.longest, baseline: FRAME_GOAL_MS, better: 'lower', judged: true },
      ],
      notes: [
        `${PEERS} peers healthy ${seconds.toFixed(1)} s after \`peer up\` was spawned (goal ≤ ${START_GOAL_S} s): first reported at ${(all.reports[0]! / 1000).toFixed(1)} s, half at ${(all.reports[PEERS / 2 - 1]! / 1000).toFixed(1)} s; one peer alone ${(oneStartMs / 1000).toFixed(2)} s (${soloStarts.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s)`,
        `idle RSS per peer: mean ${mean(rss).toFixed(1)} MB, max ${Math.max(...rss).toFixed(1)} MB, ${PEERS} together ${(rss.reduce((a, b) => a + b, 0) / 1024).toFixed(2)} GB counted in full each`,
        `where it goes, per peer (mean): ${mean(memory.map((m) => m.anonMb)).toFixed(1)} MB private anonymous (V8 heap and code, native allocations, thread stacks) + ${mean(memory.map((m) => m.fileMb)).toFixed(1)} MB file-backed (the node binary and shared libraries, the same pages in every peer); proportional (Pss) ${mean(memory.map((m) => m.pssMb)).toFixed(1)} MB, ${(memory.reduce((a, m) => a + m.pssMb, 0) / 1024).toFixed(2)} GB for all ${PEERS}`,
        `what would meet ${RSS_GOAL_MB} MB (bench/peers-as-workers.mjs; not how the plane runs peers): the same ${workers.peers} peers as worker threads of one host process that loaded their code once, each its own runPeer and data dir, young generation 2 MB: ${workers.perPeerRssMb.toFixed(1)} MB RSS a peer (${workers.perPeerAnonMb.toFixed(1)} MB private), the host ${workers.before.rssMb.toFixed(0)} MB before them and ${(workers.after.rssMb / 1024).toFixed(2)} GB with all ${workers.peers}; started one after another in ${(workers.upMs / 1000).toFixed(1)} s`,
        `CPU: each peer ${mean(peerCpu).toFixed(2)} s from spawn to idle (mean; ${peerCpu.reduce((a, b) => a + b, 0).toFixed(1)} s for all ${PEERS}, on ${availableParallelism()} cores), the plane ${planeCpu.toFixed(1)} s while they started`,
        `the plane itself: RSS ${planeBefore.rssMb.toFixed(0)} MB with one peer's runs behind it, ${planeAfter.rssMb.toFixed(0)} MB with ${PEERS} peers running`,
        `ping p50 (the plane's peers.ping, the peer's ping skill timed by the plane): one peer alone ${ping.solo.toFixed(1)} ms, each of ${PEERS} in turn ${ping.inTurn.toFixed(1)} ms, all ${PEERS} at once ${ping.atOnce.toFixed(1)} ms (p99 ${summarise(atOnce).p99.toFixed(1)} ms)`,
        `the Peers view (headless Chromium, ${frames.rows} peers listed): ${frames.count} frames while it scrolled to its end, all ${PEERS} were pinged at once and all stopped by one \`peer down\`: longest ${frames.longest.toFixed(1)} ms, p95 ${frames.p95.toFixed(1)} ms (goal < ${FRAME_GOAL_MS} ms); the longest of each phase: scrolling ${frames.phases.scrollFrames === 0 ? 'none (the view fits the window)' : `${frames.phases.scroll.toFixed(1)} ms`}, the pings ${frames.phases.ping.toFixed(1)} ms, the stops ${frames.phases.stop.toFixed(1)} ms`,
        `peers start ${PEERS} side by side, at most STARTS_AT_ONCE between spawn and healthy (peer-supervisor.ts); node ${process.version}, ${process.platform}/${process.arch}`,
      ],
    };
  } finally {
    await stopWith(plane, 'SIGTERM', 60_000).catch(() => plane.dispose());
    plane.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'fifty-peers',
  goal: { maxRatio: 1, text: `fifty peers up in one \`peer up\` within ${START_RATIO}× one peer's start (≈ ${START_GOAL_S} s), idle RSS ≤ ${RSS_GOAL_MB} MB per peer, the Peers view's frames under ${FRAME_GOAL_MS} ms` },
  run,
};

export default benchmark;
