/**
 * The peers a REPL starts (`ReadyTo`) and stops (`StopTo`, and every one of them when it ends),
 * each an `agentplane peer start` child process. Invariants, each carried over from a bug of the
 * protocol's original client (docs/PEER-PROTOCOL.md, "The interactive client"):
 * - A peer is reported only once it has written its port file, printed its addresses and passed
 *   `/mcpv2/health`. The child's stdout and stderr go to a log FILE, never to a pipe: a pipe
 *   nobody reads fills (~64 KB) and the peer then blocks forever in write() — the original
 *   client's `subprocess.PIPE` deadlock. A peer that fails to start is reported with its own
 *   words (the `agentplane: …` line it wrote to the log), not with a timeout.
 * - A stop is confirmed by the port refusing connections afterwards, not by a message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Mcpv2Client, endpointOf } from '../peers/peer-client';
import { bannerLine, launchPeerProcess, PeerLaunchError, type Exit, type PeerProcess } from '../peers/peer-process';

/** How long a peer may take from spawn to a passing health check. */
const READY_TIMEOUT_MS = 30_000;
/** SIGTERM, then this long for a clean exit (the peer closes its journal), then SIGKILL. */
const STOP_GRACE_MS = 5_000;
/** After exit, how long the port may take to refuse connections before we say it did not. */
const PORT_FREE_TIMEOUT_MS = 2_000;
/** A peer bound to a wildcard address is probed on its loopback. */
const WILDCARD_PROBE: Record<string, string> = { '0.0.0.0': '127.0.0.1', '::': '::1' };

/** A command that failed for a reason outside the REPL (a peer that would not start): printed as is. */
export class ReplCommandFailed extends Error {
  override readonly name = 'ReplCommandFailed';
}

export interface TrackedPeer {
  port: number;
  /** Where to probe health and the port: the bind host, or loopback for a wildcard bind. */
  probeHost: string;
  address: string;
  /** Null when the peer printed no demo address. */
  demoAddress: string | null;
  pid: number;
  process: PeerProcess;
  logFile: string;
  exit: Exit | null;
}

const sleep = (ms: number) => new Promise<void>((done) => setTimeout(done, ms));

/** Whether host:port accepts a TCP connection right now. */
function acceptsConnections(host: string, port: number): Promise<boolean> {
  return new Promise((answer) => {
    const socket = connect({ host, port });
    socket.setTimeout(1000);
    socket.once('connect', () => (socket.destroy(), answer(true)));
    socket.once('timeout', () => (socket.destroy(), answer(false)));
    socket.once('error', () => answer(false));
  });
}

async function portRefusesWithin(host: string, port: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!(await acceptsConnections(host, port))) return true;
    if (Date.now() >= deadline) return false;
    await sleep(100);
  }
}

/** The peers one REPL started, by port; the log and port files they write live in its launch dir. */
export class ReplPeers {
  private readonly peers = new Map<number, TrackedPeer>();
  private workDir: string | null = null;
  private launches = 0;

  constructor(
    private readonly dataDir: string,
    private readonly cliPath: string,
    private readonly say: (line: string) => void,
    /** Called as a peer is stopped: the REPL forgets the session it kept for it. */
    private readonly onStop: (peer: TrackedPeer) => void,
  ) {}

  /** The peer this REPL started on `port`, if any. */
  get(port: number): TrackedPeer | undefined {
    return this.peers.get(port);
  }

  has(port: number): boolean {
    return this.peers.has(port);
  }

  ports(): number[] {
    return [...this.peers.keys()];
  }

  /** Stops every peer this REPL started and removes the launch dir; used by exit, end of input and signals. */
  async stopAll(): Promise<void> {
    const running = [...this.peers.values()];
    if (running.length > 0) this.say(`stopping ${running.length} peer${running.length === 1 ? '' : 's'} this REPL started…`);
    await Promise.all(running.map((peer) => this.stop(peer)));
    if (this.workDir) rmSync(this.workDir, { recursive: true, force: true });
    this.workDir = null;
  }

  /** Last resort on a second signal: SIGKILL every peer still running, without waiting. */
  killAllNow(): void {
    for (const peer of this.peers.values()) if (!peer.exit) peer.process.child.kill('SIGKILL');
  }

  /**
   * The peers' logs and port files. mkdtemp makes it readable by this user only, which matters:
   * a peer's log holds its demo session token. Removed when the REPL ends.
   */
  private launchDir(): string {
    this.workDir ??= mkdtempSync(join(tmpdir(), 'agentplane-repl-'));
    return this.workDir;
  }

  /** Starts a peer with `argv` and `env`, and answers once it is healthy (ReplCommandFailed when it is not). */
  async launch(argv: string[], env: NodeJS.ProcessEnv, bindHost: string | null): Promise<TrackedPeer> {
    const n = ++this.launches;
    const logFile = join(this.launchDir(), `peer-${n}.log`);
    // The watchdog pipe: a peer started here stops when the REPL ends, however it ends.
    const launched = launchPeerProcess({
      command: [process.execPath, this.cliPath],
      args: [...argv, '--data-dir', this.dataDir],
      logFile,
      logMode: 'truncate',
      portFile: join(this.launchDir(), `peer-${n}.port`),
      env,
    });
    let lastHealthError = '';
    let probeHost = '';
    let announcement;
    try {
      announcement = await launched.announced(READY_TIMEOUT_MS, async ({ port, address }) => {
        const endpoint = endpointOf(address);
        probeHost = bindHost ? (WILDCARD_PROBE[bindHost] ?? bindHost) : endpoint.host;
        try {
          await new Mcpv2Client({ host: probeHost, port, sessionId: null }, 2000).health();
          return true;
        } catch (error) {
          lastHealthError = (error as Error).message;
          return false;
        }
      });
    } catch (error) {
      if (!(error instanceof PeerLaunchError)) throw error;
      if (error.reason === 'exited') throw new ReplCommandFailed(`ReadyTo failed — the peer exited before it was ready: ${launched.ownError()}`);
      throw new ReplCommandFailed(
        `ReadyTo failed — the peer was not healthy within ${READY_TIMEOUT_MS / 1000} s${lastHealthError ? ` (${lastHealthError})` : ''}; it was killed. Its log:\n${launched.ownError()}`,
      );
    }
    const demoAddress = bannerLine(launched.log(), 'MCPV2_DEMO_SESSION_ADDRESS') ?? null;
    const peer: TrackedPeer = { port: announcement.port, probeHost, address: announcement.address, demoAddress, pid: launched.pid, process: launched, logFile, exit: null };
    void launched.exited.then((e) => (peer.exit = e));
    this.peers.set(peer.port, peer);
    return peer;
  }

  /** Stops a peer (SIGTERM, SIGKILL after a grace) and says how, and whether its port is free. */
  async stop(peer: TrackedPeer): Promise<void> {
    this.peers.delete(peer.port);
    this.onStop(peer);
    let how: string;
    if (peer.exit) {
      how = `had already exited (${peer.exit.code ?? peer.exit.signal}); its log: ${peer.process.ownError()}`;
    } else {
      const ended = await peer.process.stop(STOP_GRACE_MS);
      how = ended === 'killed' ? `did not exit within ${STOP_GRACE_MS / 1000} s of SIGTERM and was killed (SIGKILL)` : 'stopped (SIGTERM)';
    }
    const free = await portRefusesWithin(peer.probeHost, peer.port, PORT_FREE_TIMEOUT_MS);
    this.say(
      `peer on port ${peer.port} (pid ${peer.pid}) ${how}; ` +
        (free ? `port ${peer.port} is free (connections are refused)` : `WARNING: port ${peer.port} still accepts connections — something else holds it`),
    );
  }
}
