/**
 * The two resource bounds a custom skill script's caller cannot push past, with real
 * bubblewrap and real processes:
 *
 * - file space: a script writes at most its declared `scratchMb`, on a size-limited tmpfs inside
 *   the sandbox, never on the host's disk (a caller could otherwise fill the host's disk: a
 *   `memoryMb: 64` script once wrote 400 MB into the host's temporary folder in 3.6 s);
 * - processes: a peer runs at most `maxRunning` scripts at once and holds at most `maxWaiting`
 *   more; past that a call is refused as busy (-32005), so one session's parallel calls cannot
 *   fill the process table (30 parallel calls once ran 30 sandboxes, 90 processes).
 *
 * Nothing here waits a fixed time or asserts on timing: scripts that must stay alive hold until
 * the test kills them, and every wait is for an observable event (a process appearing or
 * leaving /proc, a call settling).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Mcpv2Error } from '../../src-shared/protocol/mcpv2';
import { silentLogger } from '../base/logger';
import { settingsFromEnv, startPeer, type StartedPeer } from '../plane/peer-host';
import { createLocalProvider } from '../providers/local-provider';
import { EffectFailure } from '../runtime/run-signals';
import { CustomSkillRunner, DEFAULT_MAX_RUNNING_SCRIPTS, DEFAULT_MAX_WAITING_SCRIPTS, loadCustomSkills, type CustomSkill } from './custom-skills';
import { PeerRegistry } from './peer-registry';
import { mintSession } from './session-token';
import { runSandboxed } from './skill-sandbox';

const onLinux = process.platform === 'linux';
const bwrapInstalled = (process.env.PATH ?? '').split(delimiter).concat('/usr/bin', '/bin').some((dir) => dir && existsSync(join(dir, 'bwrap')));
const MISSING_BWRAP = 'bubblewrap (bwrap) is not installed: skill scripts run without namespace isolation here. Install the bubblewrap package, or set AGENTPLANE_ALLOW_NO_BWRAP=1 to run without it knowingly.';
/** A test only bubblewrap can pass: it runs where bwrap is, and fails on Linux without it. */
const isolated = (name: string, fn: () => Promise<void>, timeout?: number) => {
  if (onLinux && bwrapInstalled) return it(name, fn, timeout);
  if (onLinux && process.env.AGENTPLANE_ALLOW_NO_BWRAP !== '1') return it(name, () => Promise.reject(new Error(MISSING_BWRAP)));
  return it.skip(name, fn);
};
/** Reads /proc: Linux only. */
const linuxOnly = onLinux ? it : it.skip;

const MiB = 1024 * 1024;
const token = randomBytes(8).toString('hex');
const made: string[] = [];

const peers: StartedPeer[] = [];

afterAll(async () => {
  for (const peer of peers) await peer.close();
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function skillsFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'ap-limits-'));
  made.push(dir);
  const file = join(dir, 'skills.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

function scriptSkill(script: string, declared: Record<string, unknown> = {}): CustomSkill {
  const [skill] = loadCustomSkills(skillsFile({ skills: [{ name: 'probe', description: 'a caller\'s script', script, ...declared }] }), []);
  return skill!;
}

/** Processes (other than this one) whose command line contains `needle`, with that command line. */
function processesWith(needle: string): Array<{ pid: number; cmdline: string }> {
  const found: Array<{ pid: number; cmdline: string }> = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(needle)) found.push({ pid: Number(entry), cmdline });
    } catch {
      // gone between readdir and read
    }
  }
  return found;
}

/** Polls `check` until it holds; false if it never did within `ms` (a bound for a hung test, not a timing claim). */
async function waitFor(check: () => boolean, ms = 30_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * Cleanup after a failed assertion: kills this test's held scripts until every call has ended
 * (a killed one lets a queued one start, which holds in its turn), so nothing outlives the test.
 */
async function drain(needle: string, allEnded: () => boolean): Promise<void> {
  while (!allEnded()) {
    for (const p of processesWith(needle)) kill(p.pid);
    if (!(await waitFor(() => processesWith(needle).length > 0 || allEnded()))) return;
  }
}

type Settled = { ok: true; value: unknown } | { ok: false; error: Error };
const settle = (run: Promise<unknown>): Promise<Settled> => run.then((value) => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error: error as Error }));

function expectSkillError(outcome: Settled, code: number, pattern: RegExp): void {
  if (outcome.ok) throw new Error(`the call was not refused: it returned ${JSON.stringify(outcome.value)?.slice(0, 300)}`);
  expect(outcome.error).toBeInstanceOf(EffectFailure);
  expect((outcome.error as EffectFailure).code).toBe(`mcpv2:${code}`);
  expect(outcome.error.message).toMatch(pattern);
}

/**
 * A script that stays alive until something kills it, named `args.title` in /proc so the test
 * can see (and count, and kill) it. A setInterval keeps its event loop busy forever.
 */
const HELD = 'process.title = args.title; await new Promise(() => setInterval(() => {}, 1 << 30));';

/** Files named `name` directly inside any folder of the host's temporary folder, with their sizes. */
function hostCopiesOf(name: string): Array<{ path: string; bytes: number }> {
  const found: Array<{ path: string; bytes: number }> = [];
  for (const entry of readdirSync(tmpdir())) {
    const candidate = join(tmpdir(), entry, name);
    try {
      found.push({ path: candidate, bytes: statSync(candidate).size });
    } catch {
      // not there (or not a folder)
    }
  }
  return found;
}

describe("a script's file space is its declared scratchMb, never the host's disk", () => {
  isolated('a script writing past its scratchMb fails with a clear error, and the runner keeps serving', async () => {
    const runner = new CustomSkillRunner();
    const fill = "const fs = require('fs'); const chunk = Buffer.alloc(1 << 20, 1); const fd = fs.openSync('fill.bin', 'w'); for (let i = 0; i < 64; i++) fs.writeSync(fd, chunk); return 'wrote 64 MB';";
    // Declared nothing: the default, 16 MB.
    expectSkillError(await settle(runner.run(scriptSkill(fill, { timeoutMs: 30_000 }), {})), Mcpv2Error.SkillExecutionError, /exceeded its 16 MB scratch limit.*ENOSPC/);
    const within = "const fs = require('fs'); fs.writeFileSync('a.bin', Buffer.alloc(args.mb << 20, 1)); return fs.statSync('a.bin').size;";
    expect(await runner.run(scriptSkill(within, { timeoutMs: 30_000 }), { mb: 12 })).toBe(12 * MiB);
    // Declared: the size is the declared one. 8 MB holds 6 MB, not 64.
    expectSkillError(await settle(runner.run(scriptSkill(fill, { scratchMb: 8, timeoutMs: 30_000 }), {})), Mcpv2Error.SkillExecutionError, /exceeded its 8 MB scratch limit.*ENOSPC/);
    expect(await runner.run(scriptSkill(within, { scratchMb: 8, timeoutMs: 30_000 }), { mb: 6 })).toBe(6 * MiB);
    expect(await runner.run(scriptSkill('return args.a + args.b;'), { a: 2, b: 40 })).toBe(42);
  }, 60_000);

  isolated('what the script wrote is not on the host: nothing of it in the host temporary folder, even while it runs', async () => {
    const runner = new CustomSkillRunner();
    const name = `fill-${token}.bin`;
    const title = `ap-fill-${token}`;
    // Writes as much as it is let (up to 64 MB), says how far it got in its process title, then
    // holds, so the host can be searched while the sandbox still exists.
    const script = `const fs = require('fs'); const chunk = Buffer.alloc(1 << 20, 1); let written = 0, code = 'none';
      try { const fd = fs.openSync(args.name, 'w'); for (let i = 0; i < 64; i++) written += fs.writeSync(fd, chunk); } catch (error) { code = error.code; }
      process.title = args.title + '-' + written + '-' + code + '-';
      await new Promise(() => setInterval(() => {}, 1 << 30));`;
    // Declares no scratchMb: the default, 16 MB.
    const call = settle(runner.run(scriptSkill(script, { timeoutMs: 60_000 }), { name, title }));
    expect(await waitFor(() => processesWith(`${title}-`).length > 0)).toBe(true);
    const [held] = processesWith(`${title}-`);
    try {
      const [, written, code] = new RegExp(`${title}-(\\d+)-(\\w+)-`).exec(held!.cmdline)!;
      expect(Number(written)).toBeLessThanOrEqual(16 * MiB);
      expect(code).toBe('ENOSPC');
      // Under bubblewrap the scratch is a tmpfs in the sandbox: the file exists in no folder of
      // the host's temporary folder at all.
      expect(hostCopiesOf(name)).toEqual([]);
    } finally {
      kill(held!.pid);
    }
    expect((await call).ok).toBe(false);
  }, 90_000);

  linuxOnly('without bubblewrap, the scratch folder on the host is bounded too: per file (RLIMIT_FSIZE) and in total (watched)', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'ap-limits-scratch-'));
    made.push(scratch);
    const permissionsOnly = { layers: { bubblewrap: false }, input: '', timeoutMs: 60_000, memoryMb: 64, maxOutputBytes: MiB, scratchBytes: 8 * MiB };
    // One file: the kernel stops it at the limit.
    const oneFile = await runSandboxed({
      ...permissionsOnly,
      scratch,
      program: `const fs = require('fs'); const chunk = Buffer.alloc(1 << 20, 1); let written = 0, code = 'none';
        try { const fd = fs.openSync('one.bin', 'w'); for (let i = 0; i < 64; i++) written += fs.writeSync(fd, chunk); } catch (error) { code = error.code; }
        console.log(JSON.stringify({ written, code }));`,
    });
    expect(oneFile.kind).toBe('exited');
    const seen = JSON.parse((oneFile as { stdout: string }).stdout) as { written: number; code: string };
    expect(seen.written).toBeLessThanOrEqual(8 * MiB);
    expect(seen.code).toBe('EFBIG');
    expect(statSync(join(scratch, 'one.bin')).size).toBeLessThanOrEqual(8 * MiB);
    // Many files, each under the limit: the total is over it, so the run is ended as such.
    const manyScratch = mkdtempSync(join(tmpdir(), 'ap-limits-scratch-'));
    made.push(manyScratch);
    const many = await runSandboxed({
      ...permissionsOnly,
      scratch: manyScratch,
      program: "const fs = require('fs'); for (let i = 0; i < 64; i++) fs.writeFileSync('part' + i, Buffer.alloc(1 << 20, 1)); console.log('wrote 64 MB');",
    });
    expect(many).toEqual({ kind: 'scratch-limit' });
  }, 60_000);
});

describe('a peer runs a bounded number of scripts at once', () => {
  it('defaults to a small bound, and refuses a bound that is not a positive integer', () => {
    expect([DEFAULT_MAX_RUNNING_SCRIPTS, DEFAULT_MAX_WAITING_SCRIPTS]).toEqual([4, 16]);
    expect(new CustomSkillRunner().bounds).toEqual({ maxRunning: 4, maxWaiting: 16 });
    expect(() => new CustomSkillRunner({ maxRunning: 0 })).toThrow(/maxRunning/);
    expect(() => new CustomSkillRunner({ maxWaiting: -1 })).toThrow(/maxWaiting/);
  });

  linuxOnly('never runs more than maxRunning at once, queues maxWaiting more, and refuses the rest as busy', async () => {
    const runner = new CustomSkillRunner({ maxRunning: 2, maxWaiting: 3 });
    const held = scriptSkill(HELD, { timeoutMs: 60_000 });
    const prefix = `ap-held-${token}-`;
    const started = new Set<string>();
    let peak = 0;
    /** Live sandboxes of this test, counted from /proc; every count is checked against the bound. */
    const live = () => {
      const found = processesWith(prefix);
      for (const p of found) started.add(/ap-held-\w+-(\d+)/.exec(p.cmdline)![1]!);
      peak = Math.max(peak, found.length);
      return found;
    };
    const outcomes: Array<Settled | undefined> = [];
    const calls = Array.from({ length: 8 }, (_, i) =>
      settle(runner.run(held, { title: `${prefix}${i}` })).then((outcome) => {
        outcomes[i] = outcome;
      }),
    );
    const settledCount = () => outcomes.filter(Boolean).length;
    try {
      // Two start, three wait, three are refused at once (the last three called: first come,
      // first served).
      expect(await waitFor(() => (live().length >= 2 && settledCount() >= 3) || peak > 2)).toBe(true);
      expect(peak).toBeLessThanOrEqual(2);
      for (const i of [5, 6, 7]) expectSkillError(outcomes[i]!, Mcpv2Error.RateLimited, /busy: 2 skill scripts are running and 3 are waiting/);
      // Ending one running script lets exactly one waiting script start, until all five ran.
      for (let round = 0; round < 5; round++) {
        const expected = Math.min(2, 5 - round);
        expect(await waitFor(() => live().length === expected || peak > 2)).toBe(true);
        expect(peak).toBeLessThanOrEqual(2);
        kill(live()[0]!.pid);
        expect(await waitFor(() => settledCount() === 3 + round + 1)).toBe(true);
      }
      await Promise.all(calls);
      expect(peak).toBe(2);
      expect([...started].sort()).toEqual(['0', '1', '2', '3', '4']);
      for (const i of [0, 1, 2, 3, 4]) expect(outcomes[i]!.ok).toBe(false);
    } finally {
      await drain(prefix, () => settledCount() === 8);
    }
  }, 120_000);

  linuxOnly('a waiting call still ends at its deadline or when cancelled, without ever starting', async () => {
    const runner = new CustomSkillRunner({ maxRunning: 1, maxWaiting: 4 });
    const prefix = `ap-queued-${token}-`;
    const first = settle(runner.run(scriptSkill(HELD, { timeoutMs: 60_000 }), { title: `${prefix}first` }));
    try {
      expect(await waitFor(() => processesWith(`${prefix}first`).length === 1)).toBe(true);
      // Its deadline (the skill's timeoutMs) passes while it waits for the one slot.
      expectSkillError(await settle(runner.run(scriptSkill(HELD, { timeoutMs: 300 }), { title: `${prefix}late` })), Mcpv2Error.RateLimited, /busy: no sandbox was free within the skill's 300 ms limit/);
      // Its run is cancelled while it waits.
      const abort = new AbortController();
      const cancelled = settle(runner.run(scriptSkill(HELD, { timeoutMs: 60_000 }), { title: `${prefix}cancelled` }, { signal: abort.signal }));
      abort.abort();
      expectSkillError(await cancelled, Mcpv2Error.SkillExecutionError, /cancelled before its script started/);
      // Neither started, and neither holds a place: once the slot frees, a new call runs at once.
      expect(processesWith(`${prefix}late`)).toEqual([]);
      expect(processesWith(`${prefix}cancelled`)).toEqual([]);
      for (const p of processesWith(`${prefix}first`)) kill(p.pid);
      expect((await first).ok).toBe(false);
      expect(await runner.run(scriptSkill('return args.a + args.b;'), { a: 2, b: 40 })).toBe(42);
      expect(processesWith(prefix)).toEqual([]);
    } finally {
      for (const p of processesWith(prefix)) kill(p.pid);
    }
  }, 60_000);
});

describe('a skill declaration with a bad scratchMb is refused, naming the field', () => {
  it.each([
    ['negative', -1],
    ['zero', 0],
    ['huge', 1_000_000],
    ['not a number', '16'],
    ['not an integer', 1.5],
  ])('%s', (_what, scratchMb) => {
    expect(() => scriptSkill('return 1;', { scratchMb })).toThrow(/skills\.0\.scratchMb: /);
  });

  it('takes one in range, and defaults to 16 MB', () => {
    expect(scriptSkill('return 1;', { scratchMb: 256 }).spec.scratchMb).toBe(256);
    expect(scriptSkill('return 1;').spec.scratchMb).toBe(16);
  });
});

describe('over the wire, a peer with the default bounds', () => {
  const SECRET = 'skill-limits-secret';

  async function launch(): Promise<StartedPeer> {
    const dataDir = mkdtempSync(join(tmpdir(), 'ap-limits-peer-'));
    made.push(dataDir);
    const skills = join(dataDir, 'skills.json');
    writeFileSync(skills, JSON.stringify({ skills: [{ name: 'held', description: 'holds until killed', inputSchema: { type: 'object' }, script: HELD, timeoutMs: 60_000 }] }));
    const record = new PeerRegistry(dataDir).create({ id: 'limits', port: 0, publicIp: '127.0.0.1', secret: SECRET, llmMode: false, customSkills: skills });
    const peer = await startPeer({ dataDir, record, settings: { ...settingsFromEnv({}), ratePerSecond: 100_000 }, logger: silentLogger, providers: new Map([['local', createLocalProvider()]]) });
    peers.push(peer);
    return peer;
  }

  interface Slot {
    id: unknown;
    result?: unknown;
    error?: { code: number; message: string };
  }

  /** One tools/call, in a request of its own, from one session (all calls share it). */
  async function call(peer: StartedPeer, sessionId: string, id: number, args: unknown): Promise<Slot> {
    const response = await fetch(`http://127.0.0.1:${peer.port}/mcpv2`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sessionId}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'held', arguments: args } }]),
    });
    return ((await response.json()) as Slot[])[0]!;
  }

  linuxOnly('one session\'s 21 parallel calls: 4 run, 16 wait, the 21st is answered -32005 busy; a cancelled waiting call never starts', async () => {
    const peer = await launch();
    const sessionId = mintSession({ secret: SECRET, clientIp: '127.0.0.1', ttlSeconds: 3600 }).sessionId;
    const prefix = `ap-wire-${token}-`;
    const started = new Set<string>();
    let peak = 0;
    const live = () => {
      const found = processesWith(prefix);
      for (const p of found) started.add(/ap-wire-\w+-(\d+)/.exec(p.cmdline)![1]!);
      peak = Math.max(peak, found.length);
      return found;
    };
    const answers: Array<Slot | undefined> = [];
    const calls = Array.from({ length: 21 }, (_, i) =>
      call(peer, sessionId, i, { title: `${prefix}${i}` }).then(
        (answer) => {
          answers[i] = answer;
        },
        (error: unknown) => {
          answers[i] = { id: i, error: { code: 0, message: `no answer: ${String(error)}` } };
        },
      ),
    );
    const answered = () => answers.filter(Boolean) as Slot[];
    try {
      expect(await waitFor(() => (live().length >= 4 && answered().length >= 1) || peak > 4)).toBe(true);
      expect(peak).toBeLessThanOrEqual(4);
      expect(answered()).toHaveLength(1);
      expect(answered()[0]!.error).toEqual({ code: Mcpv2Error.RateLimited, message: expect.stringMatching(/the peer is busy: 4 skill scripts are running and 16 are waiting/) });
      // Cancel one call that waits (its run is open, its script never seen): it ends cancelled.
      const open = (await peer.runtime.listRuns(100)).filter((run) => run.agent === 'skill:held' && run.status !== 'sealed');
      const waiting = open.find((run) => !started.has(/-(\d+)$/.exec((run.input as { arguments: { title: string } }).arguments.title)![1]!))!;
      const waitingTitle = (waiting.input as { arguments: { title: string } }).arguments.title;
      expect((await peer.runtime.cancel(waiting.runId, 'test')).outcome).toBe('cancelled');
      // Drain: end whatever runs; the waiting calls start in turn, never more than 4 at once.
      while (answered().length < 21) {
        for (const p of live()) kill(p.pid);
        expect(await waitFor(() => live().length > 0 || answered().length === 21)).toBe(true);
        expect(peak).toBeLessThanOrEqual(4);
      }
      await Promise.all(calls);
      expect(peak).toBe(4);
      // 21 called, 1 refused, 1 cancelled while waiting: 19 ran, and the cancelled one not.
      expect(started.size).toBe(19);
      expect(started.has(/-(\d+)$/.exec(waitingTitle)![1]!)).toBe(false);
      expect(answers.filter((a) => a!.error?.code === Mcpv2Error.RateLimited)).toHaveLength(1);
    } finally {
      await drain(prefix, () => answered().length === 21);
    }
  }, 120_000);
});
