/**
 * The skill sandbox, layer by layer, with real processes: bubblewrap alone, Node's permission
 * model alone, and the address-space limit, each proved to hold on its own (so losing one
 * layer is a failing test, not a silent downgrade). custom-skills.test.ts drives the same
 * escapes end to end through the skill runner.
 *
 * On Linux a missing bwrap fails these tests (CI installs bubblewrap) unless
 * AGENTPLANE_ALLOW_NO_BWRAP=1 says this machine knowingly lacks it.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressSpaceLimit, runSandboxed, sandboxKind, sandboxWarning, type SandboxOutcome, type SandboxRequest } from './skill-sandbox';

const onLinux = process.platform === 'linux';
const bwrapInstalled = (process.env.PATH ?? '').split(delimiter).concat('/usr/bin', '/bin').some((dir) => dir && existsSync(join(dir, 'bwrap')));
const allowNoBwrap = process.env.AGENTPLANE_ALLOW_NO_BWRAP === '1';
const MISSING_BWRAP = 'bubblewrap (bwrap) is not installed: skill scripts run without namespace isolation here. Install the bubblewrap package, or set AGENTPLANE_ALLOW_NO_BWRAP=1 to run without it knowingly.';

/** A test only bubblewrap can pass: it runs where bwrap is, and fails on Linux without it. */
const isolated = (name: string, fn: () => Promise<void>, timeout?: number) => {
  if (onLinux && bwrapInstalled) return it(name, fn, timeout);
  if (onLinux && !allowNoBwrap) return it(name, () => Promise.reject(new Error(MISSING_BWRAP)));
  return it.skip(name, fn);
};
const linuxOnly = onLinux ? it : it.skip;

const token = randomBytes(8).toString('hex');
const scratches: string[] = [];

function newScratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ap-sandbox-test-'));
  scratches.push(dir);
  return dir;
}

function run(program: string, options: Partial<SandboxRequest> = {}): Promise<SandboxOutcome> {
  return runSandboxed({ scratch: options.scratch ?? newScratch(), scratchBytes: 16 * 1024 * 1024, program, input: '', timeoutMs: 10_000, memoryMb: 64, maxOutputBytes: 1024 * 1024, ...options });
}

/** Runs a program that prints one JSON value, and returns that value. */
async function report<T = Record<string, unknown>>(program: string, options: Partial<SandboxRequest> = {}): Promise<T> {
  const outcome = await run(program, options);
  if (outcome.kind !== 'exited' || outcome.code !== 0) throw new Error(`the program did not finish: ${JSON.stringify(outcome).slice(0, 600)}`);
  return JSON.parse(outcome.stdout) as T;
}

/** `attempt(label, expression)` records the value, or the error code, of each attempt. */
const ATTEMPT = `const seen = {};
const attempt = (label, f) => { try { seen[label] = f(); } catch (error) { seen[label] = 'refused:' + (error.code || error.message); } };`;

/**
 * A JS expression that evaluates to `text` without containing it, so that a program passed on
 * argv (bwrap's, prlimit's, node's) does not itself match `processesWith(text)`.
 */
const unspelled = (text: string) => `${JSON.stringify([...text].reverse().join(''))}.split('').reverse().join('')`;

function processesWith(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) found.push(Number(entry));
    } catch {
      // gone between readdir and read
    }
  }
  return found;
}

async function waitFor(check: () => boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

let secretFile: string;
let server: Server;
let serverPort: number;
let connections = 0;

beforeAll(async () => {
  const dataDir = newScratch();
  secretFile = join(dataDir, 'secret');
  writeFileSync(secretFile, `SECRET-${token}`);
  server = createServer((socket) => {
    connections++;
    socket.end(`HELLO-${token}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  serverPort = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  for (const dir of scratches) rmSync(dir, { recursive: true, force: true });
});

describe('which sandbox this machine gives scripts', () => {
  it('is bubblewrap on Linux (CI installs it), and says so plainly where it is not', () => {
    if (onLinux && !bwrapInstalled && !allowNoBwrap) throw new Error(MISSING_BWRAP);
    expect(sandboxKind()).toBe(onLinux && bwrapInstalled ? 'bubblewrap' : 'permission-model-only');
    if (sandboxKind() === 'bubblewrap') expect(sandboxWarning()).toBeNull();
    else expect(sandboxWarning()).toMatch(/without namespace isolation/);
  });
});

describe('bubblewrap alone (permission model off)', () => {
  const bwrapOnly = { layers: { permissionModel: false } };

  isolated('sees only /usr, the lib links, its own /proc, /dev, /tmp and its scratch folder', async () => {
    const seen = await report<{ root: string[]; etc: string; secret: string; cwd: string; uid: number; gid: number; pid: number }>(
      `${ATTEMPT}
      attempt('root', () => require('fs').readdirSync('/').sort());
      attempt('etc', () => require('fs').readFileSync('/etc/passwd', 'utf8'));
      attempt('secret', () => require('fs').readFileSync(${JSON.stringify(secretFile)}, 'utf8'));
      Object.assign(seen, { cwd: process.cwd(), uid: process.getuid(), gid: process.getgid(), pid: process.pid });
      console.log(JSON.stringify(seen));`,
      bwrapOnly,
    );
    expect(seen.root.filter((name) => !['bin', 'dev', 'lib', 'lib32', 'lib64', 'libx32', 'proc', 'scratch', 'tmp', 'usr'].includes(name))).toEqual([]);
    expect(seen.etc).toBe('refused:ENOENT');
    expect(seen.secret).toBe('refused:ENOENT');
    expect(seen.cwd).toBe('/scratch');
    expect([seen.uid, seen.gid]).toEqual([65534, 65534]);
    expect(seen.pid).toBeLessThan(10);
  });

  isolated("cannot read the peer's /proc entries, and no process in there carries the peer's environment", async () => {
    process.env.AGENTPLANE_SANDBOX_PROBE = `ENV-${token}`;
    try {
      const seen = await report<Record<string, string>>(
        `${ATTEMPT}
        attempt('peerCmdline', () => require('fs').readFileSync('/proc/${process.pid}/cmdline', 'utf8'));
        attempt('peerEnviron', () => require('fs').readFileSync('/proc/${process.pid}/environ', 'utf8'));
        for (const pid of require('fs').readdirSync('/proc').filter((p) => /^\\d+$/.test(p))) attempt('environ' + pid, () => require('fs').readFileSync('/proc/' + pid + '/environ', 'utf8'));
        console.log(JSON.stringify(seen));`,
        bwrapOnly,
      );
      // The peer's pid may exist in the sandbox's namespace only by coincidence (it is small here).
      if (process.pid > 10) expect([seen.peerCmdline, seen.peerEnviron]).toEqual(['refused:ENOENT', 'refused:ENOENT']);
      expect(JSON.stringify(seen)).not.toContain(token);
    } finally {
      delete process.env.AGENTPLANE_SANDBOX_PROBE;
    }
  });

  isolated('has no route to a server on the host loopback', async () => {
    const before = connections;
    const outcome = await run(
      `require('net').connect(${serverPort}, '127.0.0.1').on('data', (d) => console.log('reached ' + d)).on('error', (e) => console.log('refused:' + e.code));`,
      bwrapOnly,
    );
    expect(outcome).toMatchObject({ kind: 'exited', code: 0 });
    expect((outcome as { stdout: string }).stdout.trim()).toBe('refused:ECONNREFUSED');
    expect(connections).toBe(before);
  });

  isolated('writes only in its scratch folder, a tmpfs of its own: nothing lands on the host', async () => {
    const scratch = newScratch();
    const outsideTarget = join(newScratch(), 'written');
    const seen = await report<Record<string, unknown>>(
      `${ATTEMPT}
      attempt('scratch', () => (require('fs').writeFileSync('/scratch/ok.txt', 'ok'), require('fs').readFileSync('/scratch/ok.txt', 'utf8')));
      attempt('usr', () => (require('fs').writeFileSync('/usr/pwned', 'x'), 'wrote'));
      attempt('outside', () => (require('fs').writeFileSync(${JSON.stringify(outsideTarget)}, 'x'), 'wrote'));
      attempt('filesystem', () => require('fs').statfsSync('/scratch').blocks * require('fs').statfsSync('/scratch').bsize);
      console.log(JSON.stringify(seen));`,
      { ...bwrapOnly, scratch, scratchBytes: 4 * 1024 * 1024 },
    );
    // The scratch is a filesystem of exactly the size asked for, and the host folder stays empty.
    expect(seen).toEqual({ scratch: 'ok', usr: 'refused:EROFS', outside: 'refused:ENOENT', filesystem: 4 * 1024 * 1024 });
    expect(readdirSync(scratch)).toEqual([]);
    expect(existsSync(outsideTarget)).toBe(false);
  });

  isolated('kills grandchildren at the deadline, even one in a new session', async () => {
    const scratch = newScratch();
    const program = `const { spawn } = require('child_process');
      spawn('/usr/bin/setsid', ['/usr/bin/sh', '-c', 'sleep 1; echo late > /scratch/' + ${unspelled(`setsid-${token}`)}], { detached: true, stdio: 'ignore' }).unref();
      spawn('/usr/bin/sh', ['-c', 'sleep 1; echo late > /scratch/' + ${unspelled(`detached-${token}`)}], { detached: true, stdio: 'ignore' }).unref();
      for (;;) {}`;
    const outcome = run(program, { ...bwrapOnly, scratch, timeoutMs: 600 });
    // Both grandchildren really started (so the checks below can fail)...
    expect(await waitFor(() => processesWith(`setsid-${token}`).length > 0 && processesWith(`detached-${token}`).length > 0, 2_000)).toBe(true);
    expect(await outcome).toEqual({ kind: 'timeout' });
    // ...and neither lived on to write its file. (The file would land in the sandbox's own
    // tmpfs, which the host cannot see: what proves it is that no process of theirs is left.)
    expect(await waitFor(() => processesWith(token).length === 0, 2_000)).toBe(true);
    expect(readdirSync(scratch)).toEqual([]);
  }, 15_000);
});

describe('a peer that dies', () => {
  isolated('takes its running script with it (--die-with-parent), though nobody kills the script', async () => {
    const title = `ap-sandbox-orphan-${token}`;
    const scratch = newScratch();
    // A stand-in for the peer: a Node process running one script with a long deadline.
    const peer = spawn(
      process.execPath,
      [
        '--import', 'tsx', '--input-type=module', '-e',
        `import { runSandboxed } from ${JSON.stringify(join(import.meta.dirname, 'skill-sandbox.ts'))};
        await runSandboxed({ scratch: ${JSON.stringify(scratch)}, scratchBytes: 1048576, program: ${JSON.stringify(`process.title = ${unspelled(title)}; for (;;) {}`)}, input: '', timeoutMs: 60000, memoryMb: 64, maxOutputBytes: 100 });`,
      ],
      { stdio: 'ignore' },
    );
    try {
      expect(await waitFor(() => processesWith(title).length > 0, 10_000)).toBe(true);
      peer.kill('SIGKILL');
      expect(await waitFor(() => processesWith(title).length === 0, 2_000)).toBe(true);
    } finally {
      peer.kill('SIGKILL');
    }
  }, 20_000);
});

describe("Node's permission model alone (bubblewrap off)", () => {
  const permissionsOnly = { layers: { bubblewrap: false } };

  linuxOnly('refuses files outside scratch, child processes and workers', async () => {
    const scratch = newScratch();
    const seen = await report<Record<string, unknown>>(
      `${ATTEMPT}
      attempt('secret', () => require('fs').readFileSync(${JSON.stringify(secretFile)}, 'utf8'));
      attempt('passwd', () => require('fs').readFileSync('/etc/passwd', 'utf8'));
      attempt('environ', () => require('fs').readFileSync('/proc/${process.pid}/environ', 'utf8'));
      attempt('parent', () => require('fs').readdirSync('..'));
      attempt('writeOutside', () => (require('fs').writeFileSync(${JSON.stringify(join(tmpdir(), `ap-sandbox-${token}`))}, 'x'), 'wrote'));
      attempt('child', () => require('child_process').execSync('id').toString());
      attempt('worker', () => new (require('worker_threads').Worker)('1', { eval: true }) && 'started');
      attempt('wasm', () => typeof WebAssembly);
      attempt('scratch', () => (require('fs').writeFileSync('ok.txt', 'ok'), require('fs').readFileSync('ok.txt', 'utf8')));
      console.log(JSON.stringify(seen));`,
      { ...permissionsOnly, scratch },
    );
    const denied = 'refused:ERR_ACCESS_DENIED';
    expect(seen).toEqual({ secret: denied, passwd: denied, environ: denied, parent: denied, writeOutside: denied, child: denied, worker: denied, wasm: 'undefined', scratch: 'ok' });
    expect(existsSync(join(tmpdir(), `ap-sandbox-${token}`))).toBe(false);
  });

  it('starts the script with no variable of the peer\'s environment', async () => {
    process.env.AGENTPLANE_SANDBOX_PROBE = `ENV-${token}`;
    try {
      const env = await report<Record<string, string>>('console.log(JSON.stringify(process.env));', permissionsOnly);
      expect(JSON.stringify(env)).not.toContain(token);
      expect(Object.keys(env).filter((name) => !['MALLOC_ARENA_MAX', 'ELECTRON_RUN_AS_NODE'].includes(name))).toEqual([]);
    } finally {
      delete process.env.AGENTPLANE_SANDBOX_PROBE;
    }
  });
});

describe('limits', () => {
  linuxOnly('bounds the whole process, not only the V8 heap, yet leaves room for the declared memory', async () => {
    // Buffers live outside the V8 heap: only the address-space limit refuses them.
    const huge = await report<Record<string, unknown>>(
      `${ATTEMPT} attempt('buffers', () => { const held = []; for (let i = 0; i < 4; i++) held.push(Buffer.alloc(512 * 1024 * 1024)); return held.length; });
      console.log(JSON.stringify(seen));`,
    );
    expect(huge.buffers).toMatch(/^refused:.*(ERR_MEMORY_ALLOCATION_FAILED|allocation failed)/i);
    // A script that uses what it declared still runs: half in a Buffer, half in the JS heap.
    const fits = await report<{ buffer: number; heapMb: number }>(
      `const buffer = Buffer.alloc(32 * 1024 * 1024, 1);
      const held = []; while (process.memoryUsage().heapUsed < 40 * 1024 * 1024) held.push(new Array(10000).fill(1.5));
      console.log(JSON.stringify({ buffer: buffer.length, heapMb: process.memoryUsage().heapUsed >> 20 }));`,
    );
    expect(fits.buffer).toBe(32 * 1024 * 1024);
    expect(fits.heapMb).toBeGreaterThanOrEqual(40);
    // Node starts at both ends of the range a skill may declare.
    for (const memoryMb of [16, 1024]) expect(await report<number>('console.log(1)', { memoryMb })).toBe(1);
    // The formula: the measured startup reservation + 64 MiB + 1.5 × memoryMb.
    expect((await addressSpaceLimit(1024)) - (await addressSpaceLimit(64))).toBe(1.5 * 960 * 1024 * 1024);
  }, 30_000);

  linuxOnly('reports a JS heap exhausted past its cap as out of memory', async () => {
    const outcome = await run('const a = []; for (;;) a.push(new Array(1e6).fill(1));', { memoryMb: 32, timeoutMs: 20_000 });
    expect(outcome.kind).toBe('out-of-memory');
  }, 30_000);

  it('ends a program that prints too much, or runs past its deadline', async () => {
    expect(await run("process.stdout.write('x'.repeat(2 * 1024 * 1024));")).toEqual({ kind: 'output-limit' });
    expect(await run('for (;;) {}', { timeoutMs: 300 })).toEqual({ kind: 'timeout' });
  });

  linuxOnly('kills the process group at the deadline: nothing is left running', async () => {
    const title = `ap-sandbox-busy-${token}`;
    const outcome = run(`process.title = ${unspelled(title)}; for (;;) {}`, { timeoutMs: 1_000 });
    expect(await waitFor(() => processesWith(title).length > 0, 2_000)).toBe(true);
    expect(await outcome).toEqual({ kind: 'timeout' });
    expect(await waitFor(() => processesWith(title).length === 0, 1_000)).toBe(true);
  }, 15_000);
});
