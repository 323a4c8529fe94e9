/**
 * MCPv2 peers as real child processes, the way the protocol's test suite runs them
 * (docs/PEER-PROTOCOL.md): `node bin/agentplane.js peer start --port … --secret … --public-ip …`,
 * each binding its own address. A peer's stdout and stderr go to a log FILE, never to a pipe
 * (docs/PEER-PROTOCOL.md, "Running peers as processes"): a child writing into an unread pipe blocks
 * once the OS buffer (~64 KB) is full, silently hanging the parent. The bound port is read from the
 * `MCPV2_BOUND_PORT=` line of that file, never guessed.
 *
 * The HTTP helpers send from a chosen source address (an undici `Agent` with
 * `localAddress`), so a test can be "a caller at 127.0.0.2" against a peer that binds
 * sessions to the caller's IP.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { parsePeerAddress } from '../../src-shared/protocol/mcpv2';
import type { PeerAuthMode } from '../../src-shared/vocabulary/peers';
import { launchPeerProcess, type PeerProcess as LaunchedPeer } from '../../src-main/peers/peer-process';
import { CLI, REPO_ROOT, type Exit } from './serve-process';

export const BOUND_PORT_LINE = 'MCPV2_BOUND_PORT=';
export const PEER_ADDRESS_LINE = 'MCPV2_PEER_ADDRESS=';
export const DEMO_ADDRESS_LINE = 'MCPV2_DEMO_SESSION_ADDRESS=';

export interface PeerOptions {
  dataDir: string;
  /** Display name; also the registry id when `peerId` is absent. */
  name?: string;
  peerId?: string;
  /** The address advertised and bound (default 127.0.0.1). */
  publicIp?: string;
  bindHost?: string;
  /** Default 0 (any free port; the real one is read back from the log). */
  port?: number;
  /** Passed as --secret; leave out to use MCPV2_SECRET from `env` or the registry's. */
  secret?: string;
  llmMode?: boolean;
  customSkills?: string;
  portFallback?: boolean;
  portFile?: string;
  auth?: PeerAuthMode;
  /** Added to the child's environment (MCPV2_RATE_LIMIT and friends). */
  env?: Record<string, string>;
  /** Where stdout and stderr go; `<dataDir>/<name>-<n>.log` when absent. */
  logFile?: string;
  timeoutMs?: number;
}

export interface PeerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** The advertised (and, here, bound) address. */
  readonly host: string;
  readonly port: number;
  /** `http://host:port`. */
  readonly origin: string;
  /** The printed MCPV2_PEER_ADDRESS. */
  readonly address: string;
  /** The printed MCPV2_DEMO_SESSION_ADDRESS's session (valid only from the peer's own IP); '' when none was printed. */
  readonly demoSessionId: string;
  readonly logFile: string;
  readonly exited: Promise<Exit>;
  log(): string;
  /** SIGTERM (by default) and wait for the exit. */
  stop(signal?: NodeJS.Signals, withinMs?: number): Promise<Exit>;
  /** SIGKILL if still running (for afterAll: a failed test may leave it up). */
  dispose(): void;
}

let logCounter = 0;

/** The caller's environment without anything that would change what a test peer does. */
export function peerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('MCPV2_') || key.startsWith('AGENTPLANE_')) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** The flags after `peer start` (the launcher adds `--port-file`). */
function argsOf(options: PeerOptions): string[] {
  const args = ['--port', String(options.port ?? 0), '--public-ip', options.publicIp ?? '127.0.0.1', '--data-dir', options.dataDir];
  if (options.name) args.push('--name', options.name);
  if (options.peerId) args.push('--peer-id', options.peerId);
  if (options.secret) args.push('--secret', options.secret);
  if (options.bindHost) args.push('--bind-host', options.bindHost);
  if (options.llmMode) args.push('--llm-mode');
  if (options.customSkills) args.push('--custom-skills', options.customSkills);
  if (options.portFallback) args.push('--port-fallback');
  if (options.auth) args.push('--auth', options.auth);
  return args;
}

/**
 * The same launcher the plane's supervisor and the REPL use (src-main/peers/peer-process.ts):
 * log to a file, ready when the port file and the banner agree, and a watchdog pipe so no
 * peer outlives the test process that started it.
 */
function spawnPeer(options: PeerOptions): LaunchedPeer & { logFile: string } {
  // 0700 whatever the umask: the plane refuses a data dir group or others can write.
  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const logFile = options.logFile ?? join(options.dataDir, `${options.name ?? options.peerId ?? 'peer'}-${++logCounter}.log`);
  const launched = launchPeerProcess({
    command: [process.execPath, CLI],
    args: argsOf(options),
    logFile,
    logMode: 'truncate',
    portFile: options.portFile ?? `${logFile}.port`,
    env: peerEnv(options.env),
    cwd: REPO_ROOT,
  });
  return Object.assign(launched, { logFile });
}

const lineValue = (text: string, prefix: string): string | undefined =>
  text
    .split('\n')
    .find((l) => l.startsWith(prefix))
    ?.slice(prefix.length)
    .trim();

/** Starts a peer and resolves once it has printed its bound port and its address. */
export async function startPeerProcess(options: PeerOptions): Promise<PeerProcess> {
  const launched = spawnPeer(options);
  const { child, logFile, exited } = launched;
  const read = launched.log;
  try {
    await launched.announced(options.timeoutMs ?? 15_000);
  } catch (error) {
    throw new Error(`peer ${options.name ?? options.peerId} did not announce itself (${(error as Error).message}); its log:\n${read()}`);
  }
  const text = read();
  const port = Number(lineValue(text, BOUND_PORT_LINE));
  const address = lineValue(text, PEER_ADDRESS_LINE) ?? '';
  const host = options.publicIp ?? '127.0.0.1';
  return {
    child,
    pid: child.pid!,
    host,
    port,
    origin: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    address,
    // Read when asked: the demo line follows the address line, and may be switched off.
    get demoSessionId() {
      return parsePeerAddress(lineValue(read(), DEMO_ADDRESS_LINE) ?? '')?.sessionId ?? '';
    },
    logFile,
    exited,
    log: read,
    async stop(signal: NodeJS.Signals = 'SIGTERM', withinMs = 5000) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`peer ${options.name ?? options.peerId} did not exit within ${withinMs} ms of ${signal}`)), withinMs);
      });
      try {
        return await Promise.race([exited, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    dispose() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Starts a peer that must refuse to start; resolves with its exit and everything it printed. */
export async function startPeerExpectingFailure(options: PeerOptions): Promise<Exit & { output: string; elapsedMs: number }> {
  const started = performance.now();
  const launched = spawnPeer(options);
  const { child, exited } = launched;
  const read = launched.log;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`peer ${options.name} was expected to fail but is still running after ${options.timeoutMs ?? 15_000} ms; its log:\n${read()}`));
    }, options.timeoutMs ?? 15_000);
  });
  try {
    const exit = await Promise.race([exited, late]);
    return { ...exit, output: read(), elapsedMs: performance.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

// ---- HTTP, from a chosen source address ----

const agents = new Map<string, Agent>();

/** One keep-alive client per source address, so the peer observes that address as the caller's IP. */
export function agentFrom(localAddress: string): Agent {
  let agent = agents.get(localAddress);
  if (!agent) {
    // The client option, not `connect.localAddress`: undici 7 passes the client's own
    // localAddress (null unless set here) to the connector after the connect options, so
    // `connect: { localAddress }` is silently overridden and every call leaves from 127.0.0.1.
    agent = new Agent({ localAddress, keepAliveTimeout: 2_000 });
    agents.set(localAddress, agent);
  }
  return agent;
}

export async function closeAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map((a) => a.close()));
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed body, or undefined when it is empty or not JSON. */
  json: unknown;
}

export interface HttpInit {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. */
  body?: unknown;
  /** Source address of the connection (default 127.0.0.1). */
  from?: string;
}

export async function http(origin: string, path: string, init: HttpInit = {}): Promise<HttpAnswer> {
  const hasBody = init.body !== undefined;
  const response = await request(`${origin}${path}`, {
    method: init.method ?? (hasBody ? 'POST' : 'GET'),
    headers: { ...(hasBody ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(hasBody ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) } : {}),
    dispatcher: agentFrom(init.from ?? '127.0.0.1'),
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

export interface SessionAnswer {
  sessionId: string;
  expiresAt: number;
  ttl: number;
}

/** GET /mcpv2/session from `from`; throws unless the peer issues one. */
export async function getSession(peer: Pick<PeerProcess, 'origin'>, from = '127.0.0.1'): Promise<SessionAnswer> {
  const answer = await http(peer.origin, '/mcpv2/session', { from });
  if (answer.status !== 200) throw new Error(`${peer.origin} refused a session: HTTP ${answer.status} ${answer.text}`);
  return answer.json as SessionAnswer;
}

export interface BatchOptions {
  from?: string;
  /** How the token travels: the Authorization header (default) or the protocol's `?sessionId=`. */
  via?: 'bearer' | 'query';
}

/** POST /mcpv2 with a token (session or credential); the raw answer. */
export async function sendBatch(peer: Pick<PeerProcess, 'origin'>, token: string, body: unknown, options: BatchOptions = {}): Promise<HttpAnswer> {
  const path = options.via === 'query' ? `/mcpv2?sessionId=${encodeURIComponent(token)}` : '/mcpv2';
  return http(peer.origin, path, { body, headers: options.via === 'query' ? {} : { authorization: `Bearer ${token}` }, ...(options.from ? { from: options.from } : {}) });
}

export type SlotAnswer = { jsonrpc: '2.0'; id: string | number | null; result?: unknown; error?: { code: number; message: string } };

export function toolCall(id: string | number, name: string, args: Record<string, unknown> = {}, context?: Record<string, unknown>) {
  return { jsonrpc: '2.0' as const, id, method: 'tools/call', params: { name, arguments: args }, ...(context ? { context } : {}) };
}

/** One tools/call as a one-slot batch; the slot's answer (result or error). Throws on a non-200. */
export async function callSkill(
  peer: Pick<PeerProcess, 'origin'>,
  token: string,
  name: string,
  args: Record<string, unknown> = {},
  options: BatchOptions & { context?: Record<string, unknown> } = {},
): Promise<SlotAnswer> {
  const answer = await sendBatch(peer, token, [toolCall(1, name, args, options.context)], options);
  if (answer.status !== 200 || !Array.isArray(answer.json) || answer.json.length !== 1) {
    throw new Error(`${name} on ${peer.origin}: HTTP ${answer.status} ${answer.text.slice(0, 300)}`);
  }
  return answer.json[0] as SlotAnswer;
}

/** The session token's payload fields (`ip:nonce:issued_at:ttl`), for assertions. */
export function sessionPayload(token: string): { ip: string; nonce: string; issuedAt: number; ttl: number } {
  const text = Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('latin1');
  const parts = text.split(':');
  const ttl = Number(parts.pop());
  const issuedAt = Number(parts.pop());
  const nonce = parts.pop() ?? '';
  return { ip: parts.join(':'), nonce, issuedAt, ttl };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
