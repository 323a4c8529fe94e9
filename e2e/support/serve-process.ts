/**
 * The built CLI as a real child process, the way a person or a script runs it:
 * `node bin/agentplane.js serve …`. stdout is read line by line until the
 * `AGENTPLANE_UI_URL=` line; stderr goes to a file (an unread pipe fills up and blocks the
 * child once its buffer is full, which would look like a hang in the plane).
 *
 * Nothing here imports the plane: the tests talk to it only through its process, its port
 * and its files, so they exercise the build that ships.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
export const CLI = join(REPO_ROOT, 'bin', 'agentplane.js');
export const PACKAGE_VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const URL_LINE = 'AGENTPLANE_UI_URL=';

/** Fails with the one instruction that fixes it when the CLI has not been built. */
export function requireBuild(): void {
  if (!existsSync(join(REPO_ROOT, 'out', 'main', 'cli.js')) || !existsSync(join(REPO_ROOT, 'out', 'renderer', 'index.html'))) {
    throw new Error('out/ is missing: run `npm run build` first (the e2e tests drive the built CLI and UI)');
  }
}

export function makeTempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `agentplane-e2e-${prefix}-`));
}

/**
 * The environment a spawned plane sees: the caller's, minus AGENTPLANE_DATA_DIR (so a value
 * set in the developer's shell cannot redirect a test's plane into their real data), plus
 * whatever the test adds.
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  // No demo peers unless a test asks for them: a test sees exactly the peers it creates.
  const env: NodeJS.ProcessEnv = { ...process.env, AGENTPLANE_DEMO_PEERS: '0', ...extra };
  if (!('AGENTPLANE_DATA_DIR' in extra)) delete env.AGENTPLANE_DATA_DIR;
  return env;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** The printed URL, token included. */
  readonly url: string;
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  readonly port: number;
  readonly token: string;
  readonly stderrFile: string;
  /** Every stdout line seen so far (the lines before the URL line included). */
  readonly stdoutLines: string[];
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  stderr(): string;
  /**
   * SIGKILL if still running, and remove the stderr file's temp folder when this module made
   * it. For afterAll/afterEach (a failed test may leave the plane up), never the tested path.
   */
  dispose(): void;
}

export interface ServeOptions {
  /** Passed as --data-dir when given; leave out to test AGENTPLANE_DATA_DIR or the default. */
  dataDir?: string;
  uiPort?: number | null;
  env?: Record<string, string>;
  /** Where stderr is written; a temp file when absent. */
  stderrFile?: string;
  timeoutMs?: number;
  /** Hears every stdout line as it comes, before the URL line too (a plane waiting for its journal says so). */
  onLine?: (line: string) => void;
}

/** Starts `agentplane serve … --no-open` and resolves once it printed its URL. */
export async function startServe(options: ServeOptions = {}): Promise<ServeProcess> {
  // `uiPort: null` leaves the flag out: the plane then reuses its data dir's last address.
  const args = [CLI, 'serve', ...(options.uiPort === null ? [] : ['--ui-port', String(options.uiPort ?? 0)]), '--no-open'];
  if (options.dataDir !== undefined) args.push('--data-dir', options.dataDir);
  const ownStderrDir = options.stderrFile === undefined ? makeTempDir('stderr') : null;
  const stderrFile = options.stderrFile ?? join(ownStderrDir!, 'stderr.log');
  const stderrFd = openSync(stderrFile, 'w');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, args, { cwd: REPO_ROOT, env: childEnv(options.env), stdio: ['ignore', 'pipe', stderrFd] });
  } finally {
    // The child holds its own copy of the descriptor; ours is no longer needed.
    closeSync(stderrFd);
  }
  const exited = new Promise<Exit>((resolveExit) => child.once('exit', (code, signal) => resolveExit({ code, signal })));
  const readStderr = () => (existsSync(stderrFile) ? readFileSync(stderrFile, 'utf8') : '');
  const stdoutLines: string[] = [];
  const lines = createInterface({ input: child.stdout! });

  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agentplane serve printed no ${URL_LINE} line within ${options.timeoutMs ?? 15_000} ms; stderr:\n${readStderr()}`));
    }, options.timeoutMs ?? 15_000);
    lines.on('line', (line) => {
      stdoutLines.push(line);
      options.onLine?.(line);
      if (line.startsWith(URL_LINE)) {
        clearTimeout(timer);
        resolveUrl(line.slice(URL_LINE.length));
      }
    });
    void exited.then((exit) => {
      clearTimeout(timer);
      reject(new Error(`agentplane serve exited (${exit.code ?? exit.signal}) before printing its URL; stderr:\n${readStderr()}`));
    });
  });

  const parsed = new URL(url);
  const token = parsed.searchParams.get('token');
  if (!token) throw new Error(`the printed URL carries no token: ${url}`);
  return {
    child,
    pid: child.pid!,
    url,
    origin: parsed.origin,
    port: Number(parsed.port),
    token,
    stderrFile,
    stdoutLines,
    exited,
    stderr: readStderr,
    dispose() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (ownStderrDir) rmSync(ownStderrDir, { recursive: true, force: true });
    },
  };
}

/** Sends a signal and waits for the exit, failing if it takes longer than `withinMs`. */
export async function stopWith(plane: ServeProcess, signal: NodeJS.Signals, withinMs = 5000): Promise<Exit & { elapsedMs: number }> {
  const started = performance.now();
  plane.child.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`agentplane did not exit within ${withinMs} ms of ${signal}; stderr:\n${plane.stderr()}`)), withinMs);
  });
  try {
    const exit = await Promise.race([plane.exited, timeout]);
    return { ...exit, elapsedMs: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

/** True when something accepts a TCP connection on 127.0.0.1:port. */
export function portAcceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolveProbe) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.setTimeout(2000);
    socket.once('connect', () => (socket.destroy(), resolveProbe(true)));
    socket.once('timeout', () => (socket.destroy(), resolveProbe(false)));
    socket.once('error', () => resolveProbe(false));
  });
}

/** One contract command through the web bridge, as a script would send it. */
export async function callCommand(plane: Pick<ServeProcess, 'origin' | 'token'>, name: string, request: unknown = {}): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${plane.origin}/api/commands/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${plane.token}` },
    body: JSON.stringify(request),
  });
  return { status: response.status, body: await response.json() };
}

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  elapsedMs: number;
}

/**
 * The end of a browser test against `serve`: the browser closed, then the plane stopped with
 * SIGTERM (not the SIGKILL of dispose(), so it stops the peer processes it started and none
 * outlives the test), then whatever else the test opened, then its folders removed.
 */
export async function closeServeAndBrowser(
  context: { close(): Promise<void> } | undefined,
  plane: ServeProcess | undefined,
  options: { also?: (() => unknown)[]; dirs?: (string | undefined)[] } = {},
): Promise<void> {
  await context?.close();
  if (plane && plane.child.exitCode === null && plane.child.signalCode === null) await stopWith(plane, 'SIGTERM', 15_000).catch(() => undefined);
  plane?.dispose();
  for (const close of options.also ?? []) await close();
  for (const dir of options.dirs ?? []) if (dir) rmSync(dir, { recursive: true, force: true });
}

/**
 * Runs the CLI to completion (for commands that exit on their own) with a deadline. `stdin`
 * given: piped in and closed (a key read with --key-stdin); else stdin is closed from the start.
 */
export function runCli(args: string[], options: { env?: Record<string, string>; timeoutMs?: number; stdin?: string } = {}): Promise<CliRun> {
  return new Promise((resolveRun, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: childEnv(options.env), stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (options.stdin !== undefined) child.stdin!.end(options.stdin);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`agentplane ${args.join(' ')} did not exit within ${options.timeoutMs ?? 15_000} ms; stdout:\n${stdout}\nstderr:\n${stderr}`));
    }, options.timeoutMs ?? 15_000);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolveRun({ code, signal, stdout, stderr, elapsedMs: performance.now() - started });
    });
  });
}

/**
 * A data dir whose path is the same on every run on this machine, so screenshots that show it
 * in the status bar do not change from run to run. When a live plane already holds it (two
 * runs at once on one machine), a fresh temp dir is used instead of sharing.
 */
export function stableDataDir(name: string): string {
  const dir = join(tmpdir(), 'agentplane-e2e', name);
  const planeFile = join(dir, 'plane.json');
  if (existsSync(planeFile) && planeFileOwnerAlive(planeFile)) return makeTempDir(name);
  rmSync(dir, { recursive: true, force: true });
  // 0700 whatever the umask: the plane refuses a data dir group or others can write.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

function planeFileOwnerAlive(planeFile: string): boolean {
  let pid: unknown;
  try {
    pid = (JSON.parse(readFileSync(planeFile, 'utf8')) as { pid?: unknown }).pid;
  } catch {
    return false; // unreadable: no plane can be using it
  }
  if (typeof pid !== 'number') return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else, so it is alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
