/**
 * The plane's hands on its peers: each peer runs as its own process (`agentplane peer start
 * --peer-id ID`), started, stopped and restarted from here, by click or by CLI.
 *
 * A peer's output goes to a file (peers/<id>/peer.log), never to a pipe: a pipe nobody reads
 * fills at about 64 KB and the child then blocks on write forever (the deadlock docs/PEER-PROTOCOL.md records). The
 * peer tells us its real port through a port file and we confirm it with a health check before
 * calling it running; a peer that exits first is "failed", with the reason it printed.
 *
 * A peer stops with the plane that started it and starts again only when a person asks (a click,
 * `agentplane peer up`): a plane never opens a peer's port by itself. So that a restart does not
 * leave them stopped without a word, `peers/running.json` names the peers running when the plane
 * last stopped (a peer a person started, or one adopted, is added; one a person stopped or
 * revoked, or one that exited on its own while the plane ran, is removed; the plane's own
 * shutdown removes none, and a plane killed outright removes nothing), and the next plane says
 * which of them are stopped now (stoppedSinceLastRun).
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { writePrivateFileAtomically } from '../base/private-files';
import { connect } from 'node:net';
import { join } from 'node:path';
import { undici } from '../net/undici';
import { z } from 'zod';
import type { PeerSummary } from '../../src-shared/ipc/contract';
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { Logger } from '../base/logger';
import { PlaneError } from '../base/plane-error';
import { Mcpv2Client, PeerClientError } from './peer-client';
import { audienceOf, mintPeerCredential } from './peer-credentials';
import { processAlive } from '../base/pid-lock-file';
import { readPeerLock } from './peer-lock';
import { launchPeerProcess, PeerLaunchError } from './peer-process';
import { PeerRegistry, RegistryError, type NewPeer, type PeerRecord, type TokenIssuerTrust } from './peer-registry';
import { IdentityRowSchema, SessionRowSchema, type LivePeerStatus } from '../../src-shared/vocabulary/peers';
import { redactSession } from './session-token';
import { Slots } from './slots';

interface Running {
  /** Our child, or null for a peer adopted from an earlier plane or a terminal. */
  child: ChildProcess | null;
  pid: number;
  status: LivePeerStatus;
  port: number | null;
  startedAt: number;
  /** The admin routes' token; null for an adopted peer (it was never told one of ours). */
  adminToken: string | null;
  exited: Promise<number | null>;
}

/** The token a supervised peer's admin routes accept; it travels in the peer's environment, never argv. */
function newAdminToken(): string {
  return randomBytes(24).toString('base64url');
}

function adminTokenOf(id: string, entry: Running): string {
  if (entry.adminToken === null) throw new PlaneError(ErrorCode.Unavailable, `peer ${id} was adopted from an earlier run (process ${entry.pid}); restart it from this plane to manage its sessions`);
  return entry.adminToken;
}

/**
 * A supervised peer's environment: the plane's, less the protocol's MCPV2_* variables. Those
 * configure a peer started by hand; inherited by every peer the plane runs, MCPV2_SECRET would
 * overwrite each peer's own secret with one shared value, and MCPV2_PORT would put them all on
 * one port. A registered peer's settings come from the registry.
 */
export function supervisedPeerEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([key]) => !key.startsWith('MCPV2_')));
}

/**
 * V8 settings for a supervised peer, which sits idle most of its life (docs/PERFORMANCE.md,
 * "Fifty peers"): a young generation of 2 MB semi-spaces instead of V8's 16 MB (an idle peer
 * kept most of them resident: about 13 MB of its RSS), and one V8 platform thread instead of
 * four (about 4 MB more). A peer's work is short calls that allocate little; its large inputs
 * are buffers, outside the heap. Added to the NODE_OPTIONS the plane was given, never replacing them.
 */
export const PEER_NODE_OPTIONS = '--max-semi-space-size=2 --v8-pool-size=1';

export function peerNodeOptions(inherited: string | undefined): string {
  return inherited?.trim() ? `${inherited.trim()} ${PEER_NODE_OPTIONS}` : PEER_NODE_OPTIONS;
}

/** `env` with `changes` applied: a value set, undefined removed. */
function withEnv(env: NodeJS.ProcessEnv, changes: Readonly<Record<string, string | undefined>>): NodeJS.ProcessEnv {
  const next = { ...env };
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) delete next[key];
    else next[key] = value;
  }
  return next;
}

/** Resolves when a process that is not our child has gone (polled: there is no wait for it). */
function exitOf(pid: number): Promise<number | null> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (!processAlive(pid)) {
        clearInterval(timer);
        resolve(null);
      }
    }, 200);
    timer.unref();
  });
}

/** A peer's admin answer to GET /mcpv2/admin/sessions. */
const SessionsAnswerSchema = z.object({ sessions: z.array(SessionRowSchema), identities: z.array(IdentityRowSchema) });
export type PeerSessions = z.infer<typeof SessionsAnswerSchema>;

const START_TIMEOUT_MS = 20_000;

/**
 * How many peers may be between spawn and healthy at once. A peer's start is mostly CPU (loading
 * its modules, opening the journal): fifty spawned together on two cores would each take the
 * whole batch's time to come up, past START_TIMEOUT_MS, and the first healthy one would wait for
 * all. Two per core keeps the cores busy (one peer's file and socket waits leave room for
 * another's work) while each start is timed from its own spawn; the rest wait their turn, none
 * on another's whole start (docs/PERFORMANCE.md, "Fifty peers").
 */
export const STARTS_AT_ONCE = Math.max(4, 2 * availableParallelism());

/** peers/running.json: the peers running now, or when the plane last stopped. */
const RunningFileSchema = z.object({ version: z.literal(1), peers: z.array(z.string()) });
/**
 * How a peer process reports a busy port (peer-host's listenStrict). Its own text names CLI
 * flags (--port-fallback, --port), which mean nothing in the UI: the plane answers with
 * AP_PORT_IN_USE and a message free of flags, and each surface phrases its own remedy.
 */
const PORT_IN_USE = /port (\d+) on (\S+) is already in use/;

/** A peer's failure as the plane reports it: without the CLI flags the peer process suggests. */
export function neutralFailure(text: string): string {
  return text.replace(/ \(pass --port-fallback[^)]*\)/g, '');
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

/**
 * Where the plane reaches a peer it runs: the address it binds, unless that is a wildcard
 * (0.0.0.0 or ::), which cannot be dialled; then the address it advertises.
 */
function dialHost(record: PeerRecord): string {
  const bind = record.bindHost;
  return hostForUrl(bind && bind !== '0.0.0.0' && bind !== '::' ? bind : record.publicIp);
}

export class PeerSupervisor {
  readonly registry: PeerRegistry;
  private readonly running = new Map<string, Running>();
  private readonly failures = new Map<string, string>();
  /** Peers asked to start and waiting for a slot (STARTS_AT_ONCE), so a second start of one is refused. */
  private readonly queued = new Set<string>();
  private readonly startSlots = new Slots(STARTS_AT_ONCE);
  /** Set by stopAll: the plane is closing, and the peers it stops stay in running.json. */
  private closing = false;
  private stoppedAtStart: string[] = [];

  /**
   * `command` is the argv prefix that runs the `agentplane` command (an executable and its
   * leading arguments), given by the plane's composition (plane/plane.ts): each peer is started
   * as `<command> peer start --peer-id <id> …`. The supervisor knows no path of the install.
   */
  constructor(
    readonly dataDir: string,
    private readonly logger: Logger,
    private readonly onChange: () => void,
    private readonly command: readonly string[],
    /** Set in every peer's environment over the plane's (undefined: removed), e.g. where the plane's journal is. */
    private readonly peerEnv: Readonly<Record<string, string | undefined>> = {},
  ) {
    this.registry = new PeerRegistry(dataDir);
  }

  create(spec: NewPeer): PeerRecord {
    // A fixed port a running peer of this plane holds would only fail at start: refuse now.
    if (spec.port !== 0) {
      for (const [other, entry] of this.running) {
        if (entry.port === spec.port) throw new PlaneError(ErrorCode.PortInUse, `port ${spec.port} is in use by the running peer ${other}`);
      }
    }
    try {
      const record = this.registry.create(spec);
      this.onChange();
      return record;
    } catch (error) {
      if (error instanceof RegistryError) throw new PlaneError(ErrorCode.BadRequest, error.message);
      throw error;
    }
  }

  private record(id: string): PeerRecord {
    const record = this.registry.get(id);
    if (!record) throw new PlaneError(ErrorCode.NotFound, `no peer named ${id}`);
    return record;
  }

  logFile(id: string): string {
    return join(this.registry.dir, id, 'peer.log');
  }

  /**
   * Starts a peer and resolves once it is healthy. Starts asked for together run side by side,
   * up to STARTS_AT_ONCE at a time: each is refused or reported on its own, as soon as it is.
   */
  async start(id: string): Promise<PeerSummary> {
    this.startable(id);
    if (this.queued.has(id)) throw new PlaneError(ErrorCode.Conflict, `peer ${id} is already starting`);
    this.queued.add(id);
    try {
      return await this.startSlots.run(() => {
        this.queued.delete(id);
        return this.startNow(id);
      });
    } finally {
      this.queued.delete(id);
    }
  }

  /** The peer's record, when it may start now: known, not revoked, not running. */
  private startable(id: string): PeerRecord {
    const record = this.record(id);
    if (record.revoked) throw new PlaneError(ErrorCode.Conflict, `peer ${id} is revoked`);
    const current = this.running.get(id);
    if (current) throw new PlaneError(ErrorCode.Conflict, `peer ${id} is already ${current.status}`);
    return record;
  }

  private async startNow(id: string): Promise<PeerSummary> {
    // Checked again: while it waited for a slot, it may have been revoked or adopted, or the plane began to close.
    if (this.closing) throw new PlaneError(ErrorCode.Unavailable, `peer ${id} was not started: the plane is closing`);
    const record = this.startable(id);
    this.failures.delete(id);
    const peerDir = join(this.registry.dir, id);
    // Never a second process for one peer: one already alive is adopted, or the start refused.
    if (await this.adopt(record)) return this.summary(record);
    const holder = readPeerLock(peerDir);
    if (holder) throw new PlaneError(ErrorCode.Conflict, `peer ${id} is already running as process ${holder.pid}, which this plane did not start and which does not answer as ${id}; stop that process first`);
    mkdirSync(peerDir, { recursive: true, mode: 0o700 });
    const adminToken = newAdminToken();
    const env = withEnv(supervisedPeerEnv(process.env), this.peerEnv);
    const launched = launchPeerProcess({
      command: this.command,
      args: ['--peer-id', id, '--data-dir', this.dataDir, '--no-demo-session'],
      logFile: this.logFile(id),
      logMode: 'append',
      portFile: join(peerDir, 'port'),
      env: { ...env, NODE_OPTIONS: peerNodeOptions(env.NODE_OPTIONS), AGENTPLANE_PEER_ADMIN_TOKEN: adminToken },
    });
    const exited = launched.exited.then((e) => e.code);
    const entry: Running = { child: launched.child, pid: launched.pid, status: 'starting', port: null, startedAt: Date.now(), adminToken, exited };
    this.running.set(id, entry);
    this.onChange();
    void exited.then((code) => {
      if (this.running.get(id) === entry) {
        this.running.delete(id);
        if (entry.status !== 'stopping') this.failures.set(id, `exited with code ${code ?? 'signal'}: ${this.lastLines(id)}`);
        // Gone on its own while the plane runs: not running when the plane stops, so not one to name then.
        if (entry.status !== 'stopping' && !this.closing) this.rememberRunning(id, false);
        this.onChange();
      }
    });

    try {
      const { port } = await launched.announced(START_TIMEOUT_MS, ({ port }) => this.healthy(record, port));
      entry.port = port;
      entry.status = 'running';
      this.rememberRunning(id, true);
      this.onChange();
      return this.summary(record);
    } catch (error) {
      if (!(error instanceof PeerLaunchError)) throw error;
      // The exit handler above (registered first) has recorded why by the time this resumes.
      await exited;
      if (error.reason === 'timeout') this.failures.set(id, `did not become healthy within ${START_TIMEOUT_MS / 1000} s: ${this.lastLines(id)}`);
    }
    this.onChange();
    const failure = this.failures.get(id) ?? 'unknown reason';
    const portInUse = PORT_IN_USE.exec(failure);
    if (portInUse) throw new PlaneError(ErrorCode.PortInUse, `peer ${id} could not start: port ${portInUse[1]} on ${portInUse[2]} is already in use`);
    throw new PlaneError(ErrorCode.Conflict, `peer ${id} could not start: ${failure}`);
  }

  async stop(id: string): Promise<PeerSummary> {
    const record = this.record(id);
    const entry = this.running.get(id);
    if (!entry) throw new PlaneError(ErrorCode.Conflict, `peer ${id} is not running`);
    entry.status = 'stopping';
    this.onChange();
    const signal = (name: NodeJS.Signals) => {
      try {
        if (entry.child) entry.child.kill(name);
        else process.kill(entry.pid, name);
      } catch {
        // Already gone.
      }
    };
    signal('SIGTERM');
    const timer = setTimeout(() => signal('SIGKILL'), 8000);
    await entry.exited;
    clearTimeout(timer);
    this.running.delete(id);
    // Stopped by a person: not one to mention at the next start. Stopped with the plane: one to.
    if (!this.closing) this.rememberRunning(id, false);
    if (entry.port) await this.waitPortFree(record, entry.port);
    this.onChange();
    return this.summary(record);
  }

  async restart(id: string): Promise<PeerSummary> {
    if (this.running.has(id)) await this.stop(id);
    return this.start(id);
  }

  /** The port a running peer listens on now; null when it is not running. */
  portOf(id: string): number | null {
    const entry = this.running.get(id);
    return entry?.status === 'running' ? entry.port : null;
  }

  list(): PeerSummary[] {
    return this.registry.list().map((r) => this.summary(r));
  }

  summary(record: PeerRecord): PeerSummary {
    const entry = this.running.get(record.id);
    const failure = this.failures.get(record.id);
    const port = entry?.port ?? record.port;
    return {
      id: record.id,
      name: record.name,
      status: entry ? entry.status : failure ? 'failed' : 'stopped',
      address: entry?.status === 'running' ? `mcpv2://${hostForUrl(record.publicIp)}:${port}/mcpv2` : null,
      port,
      publicIp: record.publicIp,
      llmMode: record.llmMode,
      auth: record.auth,
      revoked: record.revoked,
      pid: entry?.pid ?? null,
      startedAt: entry ? new Date(entry.startedAt).toISOString() : null,
      error: failure ? neutralFailure(failure) : null,
      allow: record.allow,
    };
  }

  /** The peer's sessions and the identity credentials in use on it, with their use. */
  async sessions(id: string): Promise<PeerSessions> {
    const { entry, record } = this.live(id);
    const response = await undici().request(`http://${dialHost(record)}:${entry.port}/mcpv2/admin/sessions`, {
      headers: { 'x-agentplane-admin': adminTokenOf(id, entry) },
    });
    if (response.statusCode !== 200) throw new PlaneError(ErrorCode.Unavailable, `peer ${id} did not list its sessions (HTTP ${response.statusCode})`);
    const listed = SessionsAnswerSchema.safeParse(await response.body.json());
    if (!listed.success) throw new PlaneError(ErrorCode.Unavailable, `peer ${id} listed its sessions in a form this plane does not read`);
    return listed.data;
  }

  /**
   * Opens a shared-secret session on a running peer (GET /mcpv2/session, as any caller does) and
   * calls its `ping` skill with it: the peer then lists that session, used once. Answers the session's label
   * (never the token) and the ping's round trip. A peer that accepts peer credentials only
   * issues no sessions, so it is refused with why.
   */
  async ping(id: string): Promise<{ label: string; latencyMs: number }> {
    const { entry, record } = this.live(id);
    if (record.auth === 'identity') throw new PlaneError(ErrorCode.Conflict, `peer ${id} accepts peer credentials only, so it issues no sessions to ping with`);
    const client = new Mcpv2Client({ host: record.publicIp, port: entry.port, sessionId: null }, 10_000);
    try {
      const sessionId = await client.freshSession();
      const started = performance.now();
      // The peer's `ping` skill: an authenticated call like any other (admitted as a skill run).
      await client.callTool('ping', {}, { auth: { sessionId } });
      const latencyMs = Math.round((performance.now() - started) * 10) / 10;
      return { label: redactSession(sessionId), latencyMs };
    } catch (error) {
      if (error instanceof PeerClientError) throw new PlaneError(ErrorCode.Unavailable, `peer ${id}: ${error.message}`);
      throw error;
    }
  }

  async revokeSession(id: string, label: string): Promise<boolean> {
    const { entry, record } = this.live(id);
    const response = await undici().request(`http://${dialHost(record)}:${entry.port}/mcpv2/admin/sessions/revoke`, {
      method: 'POST',
      headers: { 'x-agentplane-admin': adminTokenOf(id, entry), 'content-type': 'application/json' },
      body: JSON.stringify({ label }),
    });
    if (response.statusCode !== 200) throw new PlaneError(ErrorCode.Unavailable, `peer ${id} did not revoke (HTTP ${response.statusCode})`);
    return ((await response.body.json()) as { revoked: boolean }).revoked;
  }

  /** `from` calls `to`'s skill with its own identity (a credential for `to` alone). */
  async call(from: string, to: string, skill: string, args: Record<string, unknown>): Promise<unknown> {
    const caller = this.record(from);
    if (caller.revoked) throw new PlaneError(ErrorCode.Conflict, `peer ${from} is revoked`);
    const { entry, record } = this.live(to);
    const credential = await mintPeerCredential(this.registry, from, to);
    const client = new Mcpv2Client({ host: record.publicIp, port: entry.port, sessionId: null });
    try {
      return await client.callTool(skill, args, { auth: { credential, audience: audienceOf(to) } });
    } catch (error) {
      if (error instanceof PeerClientError) {
        const code = (error as PeerClientError & { code?: number }).code;
        throw new PlaneError(code === -32009 ? ErrorCode.Forbidden : ErrorCode.Conflict, `${to} answered ${from}: ${error.message}`);
      }
      throw error;
    }
  }

  allow(callee: string, caller: string, skills: string[]): PeerSummary {
    try {
      const record = this.registry.allow(callee, caller, skills);
      this.onChange();
      return this.summary(record);
    } catch (error) {
      if (error instanceof RegistryError) throw new PlaneError(ErrorCode.BadRequest, error.message);
      throw error;
    }
  }

  /** Sets (or, with null, clears) the token issuer whose delegated tokens alone the peer accepts; a running peer reads it on its next request. */
  trustIssuer(id: string, trust: TokenIssuerTrust | null): PeerSummary {
    this.record(id);
    const record = this.registry.update(id, ({ tokenIssuer: _old, ...rest }) => (trust ? { ...rest, tokenIssuer: trust } : rest));
    this.onChange();
    return this.summary(record);
  }

  revoke(id: string): PeerSummary {
    this.record(id);
    const record = this.registry.revoke(id);
    this.rememberRunning(id, false);
    this.onChange();
    return this.summary(record);
  }

  /** Stops every peer this plane started (the plane is closing). */
  async stopAll(): Promise<void> {
    this.closing = true;
    await Promise.allSettled([...this.running.keys()].map((id) => this.stop(id)));
  }

  /**
   * Takes over a live peer process this plane did not start (left by a plane that died before
   * its watchdog could act, or started in a terminal): only when its lock names a live process
   * and its port answers a health check with this peer's id. Returns whether it adopted one.
   */
  async adopt(record: PeerRecord): Promise<boolean> {
    if (this.running.has(record.id)) return false;
    const holder = readPeerLock(join(this.registry.dir, record.id));
    if (!holder || holder.port === null || holder.pid === process.pid) return false;
    if (!(await this.healthy(record, holder.port, record.id))) return false;
    const entry: Running = { child: null, pid: holder.pid, status: 'running', port: holder.port, startedAt: Date.parse(holder.startedAt) || Date.now(), adminToken: null, exited: exitOf(holder.pid) };
    this.running.set(record.id, entry);
    this.failures.delete(record.id);
    void entry.exited.then(() => {
      if (this.running.get(record.id) !== entry) return;
      this.running.delete(record.id);
      if (entry.status !== 'stopping') this.failures.set(record.id, 'the adopted peer process exited');
      if (entry.status !== 'stopping' && !this.closing) this.rememberRunning(record.id, false);
      this.onChange();
    });
    this.logger.log('info', `adopted peer ${record.id} (process ${holder.pid}, port ${holder.port})`);
    this.rememberRunning(record.id, true);
    this.onChange();
    return true;
  }

  /**
   * At plane start: every registered peer whose process is still alive is adopted, not restarted.
   * Those that were running when the plane last stopped and are not now (they stopped with it)
   * are noted for stoppedSinceLastRun, and logged.
   */
  async adoptRunning(): Promise<void> {
    const before = this.readRunningFile();
    await Promise.allSettled(this.registry.list().map((record) => this.adopt(record)));
    this.stoppedAtStart = before.filter((id) => {
      const record = this.registry.get(id);
      return record !== null && !record.revoked && !record.ephemeral && !this.running.has(id);
    });
    if (this.stoppedAtStart.length > 0) {
      this.logger.log('info', `peers running when the plane last stopped, stopped now: ${this.stoppedAtStart.join(', ')} (a peer starts again only when asked: agentplane peer up <id>)`);
    }
  }

  /** The peers that were running when this data dir's plane last stopped and are stopped now (read at adoptRunning). */
  stoppedSinceLastRun(): string[] {
    return [...this.stoppedAtStart];
  }

  /**
   * Said to the person (by `serve`, at its start): from now on running.json names what runs now,
   * so the next start speaks of this run's peers, not the last one's. A CLI command that opens the
   * data dir for a moment does not call this, and leaves the notice for the plane a person starts.
   */
  acknowledgeStoppedSinceLastRun(): void {
    this.stoppedAtStart = [];
    this.writeRunningFile([...this.running.keys()]);
  }

  private get runningFile(): string {
    return join(this.registry.dir, 'running.json');
  }

  private readRunningFile(): string[] {
    try {
      const parsed = RunningFileSchema.safeParse(JSON.parse(readFileSync(this.runningFile, 'utf8')));
      return parsed.success ? parsed.data.peers : [];
    } catch {
      // None yet (or not ours to read): nothing to say at start, which is all it is for.
      return [];
    }
  }

  private writeRunningFile(ids: string[]): void {
    try {
      mkdirSync(this.registry.dir, { recursive: true, mode: 0o700 });
      writePrivateFileAtomically(this.runningFile, `${JSON.stringify({ version: 1, peers: [...new Set(ids)].sort() })}\n`);
    } catch (error) {
      // A notice at the next start is not worth failing a start or a stop over.
      this.logger.log('warn', `could not write ${this.runningFile}`, { message: (error as Error).message });
    }
  }

  /** Adds `id` to running.json (it runs) or removes it (a person stopped or revoked it). */
  private rememberRunning(id: string, running: boolean): void {
    const ids = this.readRunningFile();
    if (ids.includes(id) === running) return;
    this.writeRunningFile(running ? [...ids, id] : ids.filter((other) => other !== id));
  }

  private live(id: string): { entry: Running & { port: number }; record: PeerRecord } {
    const record = this.record(id);
    const entry = this.running.get(id);
    if (!entry || entry.status !== 'running' || entry.port === null) throw new PlaneError(ErrorCode.Conflict, `peer ${id} is not running`);
    return { entry: entry as Running & { port: number }, record };
  }

  private async healthy(record: PeerRecord, port: number, expectId?: string): Promise<boolean> {
    try {
      const response = await undici().request(`http://${dialHost(record)}:${port}/mcpv2/health`, { headersTimeout: 2000, bodyTimeout: 2000 });
      if (expectId === undefined) {
        await response.body.dump();
        return response.statusCode === 200;
      }
      const health = (await response.body.json()) as { peerId?: unknown };
      return response.statusCode === 200 && health.peerId === expectId;
    } catch {
      return false;
    }
  }

  private waitPortFree(record: PeerRecord, port: number): Promise<void> {
    const host = dialHost(record).replace(/^\[|\]$/g, '');
    return new Promise((resolve) => {
      const attempt = (left: number) => {
        const socket = connect({ host, port });
        socket.once('connect', () => {
          socket.destroy();
          if (left <= 0) return resolve();
          setTimeout(() => attempt(left - 1), 50);
        });
        socket.once('error', () => resolve());
      };
      attempt(100);
    });
  }

  private lastLines(id: string): string {
    try {
      const lines = readFileSync(this.logFile(id), 'utf8').trim().split('\n').filter((l) => !l.startsWith('{'));
      return lines.slice(-2).join(' ').slice(0, 300) || 'no output';
    } catch {
      return 'no output';
    }
  }
}
