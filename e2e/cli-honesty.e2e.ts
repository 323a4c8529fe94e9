/**
 * The CLI never lies, against the built CLI as real processes: a peer
 * command that needs a live plane refuses when none runs, `run --wait` exits non-zero on a
 * failed run, `--json` has one shape for success and failure (usage errors included), a
 * malformed run id reads like an unknown one, help speaks to users, a fresh data dir gets
 * the demo peers whichever command opens it first, and an ad hoc `peer start` says what it
 * starts and leaves the registry when it stops (unless --keep).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI, childEnv, makeTempDir, REPO_ROOT, requireBuild, runCli } from './support/serve-process';

const dirs: string[] = [];
beforeAll(() => requireBuild());
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(name: string): string {
  const dir = makeTempDir(name);
  dirs.push(dir);
  return dir;
}

function lastJson(stdout: string): Record<string, unknown> {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON: ${stdout}`);
  }
}

describe('peer commands that need a live plane', () => {
  it('refuse when no plane is running, naming the data dir and `agentplane serve`', async () => {
    const dataDir = tempDir('no-plane');
    await runCli(['peer', 'create', 'solo', '--port', '0', '--data-dir', dataDir, '--json'], { timeoutMs: 30_000 });
    for (const args of [['peer', 'up', 'solo'], ['peer', 'stop', 'solo'], ['peer', 'restart', 'solo'], ['peer', 'sessions', 'solo'], ['peer', 'revoke-session', 'solo', 'x']]) {
      const run = await runCli([...args, '--data-dir', dataDir], { timeoutMs: 30_000 });
      expect(run.code, args.join(' ')).toBe(1);
      expect(run.stdout, args.join(' ')).not.toMatch(/running|mcpv2:\/\//);
      expect(run.stderr, args.join(' ')).toContain(`no plane is running for ${dataDir}: start one with \`agentplane serve\``);
      const json = await runCli([...args, '--data-dir', dataDir, '--json'], { timeoutMs: 30_000 });
      expect(json.code).toBe(1);
      expect(lastJson(json.stdout)).toEqual({ ok: false, error: { code: 'AP_UNAVAILABLE', message: `no plane is running for ${dataDir}: start one with \`agentplane serve\`` } });
    }
  }, 120_000);
});

describe('--json has one shape, and exit codes tell the truth', () => {
  it('success is {ok: true, result}', async () => {
    const dataDir = tempDir('json-ok');
    const run = await runCli(['agents', 'list', '--data-dir', dataDir, '--json'], { timeoutMs: 30_000 });
    expect(run.code).toBe(0);
    const json = lastJson(run.stdout);
    expect(json.ok).toBe(true);
    expect(((json.result as { agents: Array<{ name: string }> }).agents).map((a) => a.name)).toContain('write-note');
  }, 60_000);

  it('`run --wait` of a run that fails exits 1, with {ok: false, error} under --json', async () => {
    const dataDir = tempDir('run-fails');
    // ask-peer calls the demo peer beta, which this data dir does not have: the run fails.
    const plain = await runCli(['run', 'ask-peer', '--input', '{"query":"hi"}', '--wait', '--data-dir', dataDir], { timeoutMs: 30_000 });
    expect(plain.code).toBe(1);
    expect(plain.stdout + plain.stderr).toMatch(/failed/);
    const json = await runCli(['run', 'ask-peer', '--input', '{"query":"hi"}', '--wait', '--data-dir', dataDir, '--json'], { timeoutMs: 30_000 });
    expect(json.code).toBe(1);
    const doc = lastJson(json.stdout);
    expect(doc.ok).toBe(false);
    expect(doc.error).toMatchObject({ code: expect.stringMatching(/^AP_/), message: expect.stringMatching(/failed/) });
  }, 60_000);

  it('usage errors (unknown option, missing argument) are {ok: false, error} under --json', async () => {
    const unknown = await runCli(['runs', 'list', '--bogus', '--json'], { timeoutMs: 30_000 });
    expect(unknown.code).toBe(1);
    expect(lastJson(unknown.stdout)).toMatchObject({ ok: false, error: { code: 'AP_BAD_REQUEST', message: expect.stringMatching(/--bogus/) } });
    const missing = await runCli(['runs', 'show', '--json'], { timeoutMs: 30_000 });
    expect(missing.code).toBe(1);
    expect(lastJson(missing.stdout)).toMatchObject({ ok: false, error: { code: 'AP_BAD_REQUEST', message: expect.stringMatching(/runId/) } });
  }, 60_000);
});

describe('ids', () => {
  it('a malformed id gets the same "no run <id>" as an unknown one', async () => {
    const dataDir = tempDir('bad-id');
    for (const args of [['runs', 'show', 'nonsense'], ['runs', 'cancel', 'nonsense'], ['approvals', 'approve', 'nonsense/w1'], ['approvals', 'deny', 'nonsense/w1', '--reason', 'no'], ['recovery', 'resolve', 'nonsense', '--as', 'fail']]) {
      const run = await runCli([...args, '--data-dir', dataDir, '--json'], { timeoutMs: 30_000 });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(1);
      expect(lastJson(run.stdout), args.join(' ')).toEqual({ ok: false, error: { code: 'AP_NOT_FOUND', message: 'no run nonsense' } });
    }
  }, 120_000);
});

describe('help and defaults', () => {
  it('help speaks to users and every subcommand has a description', async () => {
    for (const group of ['peer', 'runs', 'approvals', 'recovery', 'agents', 'journal']) {
      const help = await runCli([group, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).not.toMatch(/seed/i);
      const commands = help.stdout.split('Commands:')[1] ?? '';
      for (const line of commands.split('\n').filter((l) => /^ {2}\S/.test(l) && !l.trim().startsWith('help'))) {
        // commander puts the description after the usage, two or more spaces apart.
        expect(line.trim(), `${group}: ${line}`).toMatch(/\S\s{2,}\S/);
      }
    }
    const start = await runCli(['peer', 'start', '--help']);
    expect(start.stdout).not.toMatch(/seed/i);
  }, 60_000);

  it('`peer create` without --port picks any free port (0), as the UI does', async () => {
    const dataDir = tempDir('create-port');
    const run = await runCli(['peer', 'create', 'gamma', '--data-dir', dataDir, '--json'], { timeoutMs: 30_000 });
    expect(run.code).toBe(0);
    expect(lastJson(run.stdout)).toMatchObject({ ok: true, result: { id: 'gamma', port: 0 } });
  }, 60_000);
});

describe('a fresh data dir', () => {
  it('gets the demo peers whichever command opens it first, unless AGENTPLANE_DEMO_PEERS=0', async () => {
    const fresh = tempDir('demo-peers');
    const listed = await runCli(['peer', 'list', '--data-dir', fresh, '--json'], { env: { AGENTPLANE_DEMO_PEERS: '1' }, timeoutMs: 30_000 });
    expect(listed.code).toBe(0);
    expect(((lastJson(listed.stdout).result as { peers: Array<{ id: string }> }).peers).map((p) => p.id).sort()).toEqual(['alpha', 'beta']);
    const none = tempDir('no-demo-peers');
    const empty = await runCli(['peer', 'list', '--data-dir', none, '--json'], { timeoutMs: 30_000 });
    expect(lastJson(empty.stdout)).toEqual({ ok: true, result: { peers: [] } });
  }, 60_000);
});

/** The ids in the data dir's peer registry, with their ephemeral flag. */
function registered(dataDir: string): Record<string, boolean | undefined> {
  const file = join(dataDir, 'peers', 'registry.json');
  if (!existsSync(file)) return {};
  const { peers } = JSON.parse(readFileSync(file, 'utf8')) as { peers: Array<{ id: string; ephemeral?: boolean }> };
  return Object.fromEntries(peers.map((p) => [p.id, p.ephemeral]));
}

/** `peer start` processes still running, with what each was waiting for and since when. */
const peerStarts = new Map<ChildProcess, { what: string; phase: string; since: number }>();
afterEach(() => {
  // A test that timed out (or failed) leaves its peer here: said, then ended.
  for (const [child, { what, phase, since }] of peerStarts) {
    console.error(`${what} was still ${phase} after ${((Date.now() - since) / 1000).toFixed(1)} s; killing it`);
    child.kill('SIGKILL');
  }
  peerStarts.clear();
});

/**
 * `peer start` with only these flags, until it is up; then SIGTERM, and its exit code and stdout lines.
 *
 * Each step waits for its event (the " is up" line, or the process's exit), bounded only by
 * the test's timeout. This used to SIGKILL the peer 20 s after spawning it: on a loaded
 * 2-core machine a start and stop (Node's boot, the CLI, the journal, the peer's server: about
 * a second of CPU alone) took longer than that, and the kill read as "exit code null", like a
 * crash. Reproduced with 36 busy loops pinned to the test's core (a start then took over 20 s).
 */
async function startAndStop(dataDir: string, flags: string[], whileUp: () => void): Promise<{ code: number | null; lines: string[] }> {
  const child = spawn(process.execPath, [CLI, 'peer', 'start', '--data-dir', dataDir, ...flags], { cwd: REPO_ROOT, env: childEnv({ MCPV2_PORT: '0' }), stdio: ['ignore', 'pipe', 'inherit'] });
  const state = { what: `peer start ${flags.join(' ')}`, phase: 'waiting for " is up"', since: Date.now() };
  peerStarts.set(child, state);
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const lines: string[] = [];
  const up = new Promise<boolean>((resolveUp) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (line.includes(' is up')) resolveUp(true);
    });
    void exited.then(() => resolveUp(false));
  });
  if (!(await up)) {
    peerStarts.delete(child);
    throw new Error(`${state.what} exited (code ${await exited}) before saying it is up; its stdout:\n${lines.join('\n')}`);
  }
  try {
    whileUp();
  } finally {
    // Stopped whatever whileUp found: a failed expectation must not leave the peer running.
    Object.assign(state, { phase: 'stopping after SIGTERM', since: Date.now() });
    child.kill('SIGTERM');
  }
  const code = await exited;
  peerStarts.delete(child);
  return { code, lines };
}

describe('peer start', () => {
  it('says what it starts, and an ad hoc peer leaves the registry when it stops', async () => {
    const dataDir = tempDir('ephemeral');
    let id = '';
    const run = await startAndStop(dataDir, [], () => {
      const ids = Object.keys(registered(dataDir));
      expect(ids).toHaveLength(1);
      id = ids[0]!;
      expect(registered(dataDir)[id]).toBe(true);
    });
    expect(run.code).toBe(0);
    expect(run.lines[0]).toBe(`starting peer ${id} on any free port for data dir ${dataDir}; it leaves the registry when it stops (--keep keeps it)`);
    expect(registered(dataDir)).toEqual({});
    // One start and stop; generous, as a loaded machine needs (startAndStop says why).
  }, 180_000);

  it('--keep keeps it; a registered peer named by --peer-id is never removed', async () => {
    const dataDir = tempDir('keep');
    expect((await startAndStop(dataDir, ['--name', 'kept', '--keep'], () => undefined)).code).toBe(0);
    expect(registered(dataDir)).toEqual({ kept: false });
    const again = await startAndStop(dataDir, ['--peer-id', 'kept'], () => undefined);
    expect(again.code).toBe(0);
    expect(again.lines[0]).toBe(`starting peer kept on any free port for data dir ${dataDir}`);
    expect(registered(dataDir)).toEqual({ kept: false });
    // Two starts and stops, each waiting on its events only (startAndStop).
  }, 180_000);
});
