/**
 * One way to start a peer process (`agentplane peer start …`), used by the plane's supervisor,
 * the REPL's ReadyTo and the e2e tests alike, so the traps below are handled once:
 *
 * - Output goes to a file, never a pipe: a pipe nobody reads fills at about 64 KB and the child
 *   then blocks on write forever (docs/PEER-PROTOCOL.md, "Running peers as processes"). The log is
 *   opened without following a symlink and kept 0600: a peer started by hand prints a live demo
 *   session.
 * - The peer is ready when it has announced itself whole: the port file (written atomically
 *   after the bind) and the banner's MCPV2_BOUND_PORT and MCPV2_PEER_ADDRESS lines, agreeing on
 *   the port. Neither alone is enough: the file can be left from an earlier start, the banner
 *   read half-written.
 * - With `watchdog` (the default) the peer gets the read end of a pipe on fd 3 and stops when
 *   it closes, so it cannot outlive whoever started it, however that process ends
 *   (parent-watchdog.ts).
 * - Under Electron the same binary must run as plain Node (ELECTRON_RUN_AS_NODE).
 * - A peer that exits before it is ready is reported with what it said went wrong (its
 *   `agentplane: …` lines), not with a timeout.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, fstatSync, readFileSync, rmSync } from 'node:fs';
import { openPrivateFile } from '../base/private-files';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface PeerLaunchOptions {
  /**
   * The argv prefix that runs the `agentplane` command: an executable and its leading arguments
   * (under Node, the node binary and the CLI's script). The caller says what it is; this module
   * knows no path of the install.
   */
  command: readonly string[];
  /** Flags after `peer start` (`--port-file` is added). */
  args: readonly string[];
  logFile: string;
  /** `append` keeps earlier starts' lines (the supervisor's per-peer log); `truncate` starts fresh. */
  logMode: 'append' | 'truncate';
  portFile: string;
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Stop the peer when this process ends (default true). */
  watchdog?: boolean;
}

export interface Announcement {
  port: number;
  /** The printed MCPV2_PEER_ADDRESS. */
  address: string;
}

export interface PeerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<Exit>;
  /** The exit, once it happened. */
  exit(): Exit | null;
  /** What this start wrote to the log (an appended log's earlier starts left out). */
  log(): string;
  /** What the peer said went wrong: its `agentplane: …` lines, else the end of its log. */
  ownError(): string;
  /**
   * Resolves once the peer announced itself and `ready(port)` (a health check) holds; rejects
   * with the peer's own reason if it exits first, or after `timeoutMs` (it is then killed).
   */
  announced(timeoutMs: number, ready?: (announcement: Announcement) => Promise<boolean>): Promise<Announcement>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves how it ended. */
  stop(graceMs: number): Promise<'had exited' | 'stopped' | 'killed'>;
}

export class PeerLaunchError extends Error {
  override readonly name = 'PeerLaunchError';
  constructor(
    readonly reason: 'exited' | 'timeout',
    message: string,
  ) {
    super(message);
  }
}

function readText(file: string, from = 0): string {
  try {
    const bytes = readFileSync(file);
    return bytes.subarray(Math.min(from, bytes.length)).toString('utf8');
  } catch {
    return '';
  }
}

export function bannerLine(log: string, name: string): string | undefined {
  return new RegExp(`^${name}=(\\S+)$`, 'm').exec(log)?.[1];
}

/** The port file and the banner, once all of it is there and agreeing. */
export function readAnnouncement(log: string, portFileText: string): Announcement | null {
  if (!/^\d+\n$/.test(portFileText)) return null;
  const port = Number(portFileText.trim());
  const bound = bannerLine(log, 'MCPV2_BOUND_PORT');
  const address = bannerLine(log, 'MCPV2_PEER_ADDRESS');
  if (bound === undefined || address === undefined || Number(bound) !== port) return null;
  return { port, address };
}

export function peerOwnError(log: string): string {
  const lines = log.split('\n').map((l) => l.trimEnd()).filter(Boolean);
  const own = lines.filter((l) => l.startsWith('agentplane: ')).map((l) => l.slice('agentplane: '.length));
  if (own.length > 0) return own.join('\n');
  return lines.length > 0 ? lines.slice(-8).join('\n') : '(the peer wrote nothing to its log)';
}

async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([promise.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

export function launchPeerProcess(options: PeerLaunchOptions): PeerProcess {
  const [executable, ...leading] = options.command;
  if (executable === undefined) throw new Error('launchPeerProcess needs a command to run: an executable and its leading arguments');
  const watchdog = options.watchdog ?? true;
  rmSync(options.portFile, { force: true });
  const log = openPrivateFile(options.logFile, options.logMode);
  // Where this start's output begins: an appended log holds earlier starts' banners, whose
  // ports must not be taken for this one's.
  const logStart = fstatSync(log).size;
  let child: ChildProcess;
  try {
    child = spawn(executable, [...leading, 'peer', 'start', ...options.args, '--port-file', options.portFile, ...(watchdog ? ['--watch-fd', '3'] : [])], {
      cwd: options.cwd,
      stdio: watchdog ? ['ignore', log, log, 'pipe'] : ['ignore', log, log],
      env: { ...options.env, ...(process.versions.electron ? { ELECTRON_RUN_AS_NODE: '1' } : {}) },
      detached: false,
    });
  } finally {
    // The child holds its own copy of the descriptor.
    closeSync(log);
  }
  let exit: Exit | null = null;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => resolve((exit = { code, signal })));
    child.once('error', () => resolve((exit = { code: null, signal: null })));
  });
  const readLog = () => readText(options.logFile, logStart);
  const kill = (signal: NodeJS.Signals) => {
    if (exit === null) child.kill(signal);
  };
  return {
    child,
    pid: child.pid ?? 0,
    exited,
    exit: () => exit,
    log: readLog,
    ownError: () => peerOwnError(readLog()),
    async announced(timeoutMs, ready = async () => true) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (exit !== null) throw new PeerLaunchError('exited', `the peer exited (${exit.code ?? exit.signal}) before it was ready: ${peerOwnError(readLog())}`);
        const announcement = readAnnouncement(readLog(), readText(options.portFile));
        if (announcement && (await ready(announcement))) return announcement;
        await settlesWithin(exited, 50);
      }
      kill('SIGKILL');
      await settlesWithin(exited, 2000);
      throw new PeerLaunchError('timeout', `the peer was not ready within ${timeoutMs / 1000} s and was killed: ${peerOwnError(readLog())}`);
    },
    async stop(graceMs) {
      if (exit !== null) return 'had exited';
      kill('SIGTERM');
      if (await settlesWithin(exited, graceMs)) return 'stopped';
      kill('SIGKILL');
      await settlesWithin(exited, 2000);
      return 'killed';
    },
  };
}
