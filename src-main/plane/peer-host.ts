/**
 * One MCPv2 peer process: its journal (the plane's data dir, shared), its runtime (host
 * `peer:<id>`, running its skills), its file store, sessions and limits, and its HTTP server.
 *
 * Binding, as the protocol hardened it (docs/PEER-PROTOCOL.md, "Addresses"): the requested port
 * strictly (a busy port is a fast, clear error, not a silent move; `portFallback` opts into
 * scanning forward), on the advertised address (a public IP that is not on a local interface is a
 * clear error naming the fix), and the port that was really bound printed as `MCPV2_BOUND_PORT=`
 * and written to the port file, so nobody downstream has to guess.
 *
 * The same port also serves MCP at `/mcp` (plane/peer-mcp.ts): the peer's skills as MCP tools,
 * behind the data dir's MCP token, for loopback callers, through the plane's own MCP route and
 * surface. Its hooks are scoped to `/mcp`; the MCPv2 routes are as they were.
 */
import { mkdirSync } from 'node:fs';
import { writePrivateFileAtomically } from '../base/private-files';
import { isAbsolute, join, resolve } from 'node:path';
import type { AddressInfo } from 'node:net';
import { formatPeerAddress } from '../../src-shared/protocol/mcpv2';
import { Journal } from '../journal/journal';
import { chooseDatabase, databaseOptions } from '../journal/postgres-url';
import { appVersion } from '../base/app-paths';
import { errorFields, type Logger } from '../base/logger';
import { loadPolicy, loadProviders } from './plane-config';
import { createNetguard, guardedRequest, type Netguard } from '../net/netguard';
import { NetAllowStore, planeAllowList } from './net-allow';
import type { ModelProvider } from '../runtime/model-provider';
import { Runtime } from '../runtime/runtime';
import { builtinTools, workspaceOf } from '../runtime/tools';
import { FileLabels } from '../runtime/file-labels';
import { CustomSkillRunner, loadCustomSkills, type CustomSkill } from '../peers/custom-skills';
import { FileStore } from '../peers/file-store';
import { InputBlobs } from '../peers/input-blobs';
import { UploadStaging } from '../peers/upload-staging';
import { acquirePeerLock, PeerLockHeld, type PeerLock } from '../peers/peer-lock';
import { PeerRegistry, type PeerRecord } from '../peers/peer-registry';
import { aiProgram, buildPeerApp } from '../peers/peer-server';
import { RateLimiter } from '../peers/rate-limiter';
import { createSkillAdmission } from '../peers/skill-admission';
import { sandboxWarning } from '../peers/skill-sandbox';
import { RevocationFileError } from '../peers/revocation-file';
import { mintSession, SessionBook } from '../peers/session-token';
import { BUILTIN_SKILLS, describeSkills, skillPrograms } from '../peers/skills';
import Fastify, { type FastifyInstance } from 'fastify';
import { NO_ROUTE_SCHEMAS } from '../base/fastify-schemas';
import { mcpRouteUrls } from '../protocols/mcp/resource-metadata';
import { JSONRPC_INTERNAL_ERROR, writeJsonRpcError } from '../protocols/mcp/mcp-json';
import { mountLazily, type LazyFront } from './lazy-routes';
import { peerMcpUrl } from './peer-door';
import { mountPeerA2a, peerA2aUrl, type PeerA2a } from './peer-a2a';
import { PeerPolicy } from '../peers/peer-policy';

export interface PeerSettings {
  ttlSeconds: number;
  clockSkewSeconds: number;
  ratePerSecond: number;
  sessionRatePerSecond: number;
  /** Requests per second per client address, all its sessions together; default twice `ratePerSecond`. */
  ipRatePerSecond?: number;
  fileStore?: string;
  mtls: boolean;
  maxFileBytes: number;
}

/** The protocol's environment variables, with its defaults (docs/PEER-PROTOCOL.md). */
export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): PeerSettings & { port: number; secret?: string; llmMode: boolean } {
  const int = (name: string, fallback: number, min = 1) => {
    const value = env[name];
    if (value === undefined || value === '') return fallback;
    if (!/^\d+$/.test(value) || Number(value) < min) throw new PeerStartError(`${name} must be a whole number of at least ${min}, not "${value}"`);
    return Number(value);
  };
  return {
    port: int('MCPV2_PORT', 8000, 0),
    ...(env.MCPV2_SECRET ? { secret: env.MCPV2_SECRET } : {}),
    llmMode: env.MCPV2_LLM_MODE === '1' || env.MCPV2_LLM_MODE === 'true',
    ttlSeconds: int('MCPV2_SESSION_TIMEOUT', 3600),
    clockSkewSeconds: int('MCPV2_CLOCK_SKEW', 300, 0),
    ratePerSecond: int('MCPV2_RATE_LIMIT', 200),
    sessionRatePerSecond: int('MCPV2_SESSION_RATE_LIMIT', 20),
    ...(env.MCPV2_IP_RATE_LIMIT ? { ipRatePerSecond: int('MCPV2_IP_RATE_LIMIT', 400) } : {}),
    ...(env.MCPV2_FILE_STORE ? { fileStore: env.MCPV2_FILE_STORE } : {}),
    mtls: env.MCPV2_ENABLE_MTLS === '1' || env.MCPV2_ENABLE_MTLS === 'true',
    maxFileBytes: 16 * 1024 * 1024,
  };
}

export class PeerStartError extends Error {
  override readonly name = 'PeerStartError';
}

export interface StartedPeer {
  record: PeerRecord;
  app: FastifyInstance;
  port: number;
  address: string;
  demoAddress: string;
  /** Where a loopback MCP host reaches this peer's skills (`http://127.0.0.1:<port>/mcp`); null when it binds no loopback address. */
  mcpUrl: string | null;
  /** Where a loopback A2A client reaches this peer (`http://127.0.0.1:<port>/`, cards under `.well-known/` and `a2a/<skill>/`); null when it binds no loopback address. */
  a2aUrl: string | null;
  runtime: Runtime;
  journal: Journal;
  close(): Promise<void>;
}

export interface StartPeerOptions {
  dataDir: string;
  record: PeerRecord;
  settings: PeerSettings;
  logger: Logger;
  portFile?: string;
  providers?: Map<string, ModelProvider>;
  adminToken?: string | null;
  /** How long a blocking A2A SendMessage waits for its run (ms); tests shorten it. */
  a2aBlockMs?: number;
}

const WILDCARDS = new Set(['0.0.0.0', '::']);

async function listenStrict(app: FastifyInstance, host: string, port: number, fallback: boolean): Promise<number> {
  const last = fallback && port !== 0 ? Math.min(65535, port + 100) : port;
  for (let candidate = port; candidate <= last; candidate++) {
    try {
      await app.listen({ host, port: candidate });
      return (app.server.address() as AddressInfo).port;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' && candidate < last) continue;
      if (code === 'EADDRINUSE') {
        throw new PeerStartError(
          fallback ? `no free port from ${port} to ${last} on ${host}` : `port ${port} on ${host} is already in use (pass --port-fallback to scan forward, or choose another --port)`,
        );
      }
      if (code === 'EADDRNOTAVAIL' || code === 'EINVAL') {
        throw new PeerStartError(
          `cannot bind ${host}: that address is not on a local interface of this machine. Behind NAT or a load balancer the public IP is translated at the network edge and cannot be bound. Run where ${host} is local, or pass --bind-host 0.0.0.0 to bind every local interface while still advertising --public-ip ${host}.`,
        );
      }
      throw error;
    }
  }
  throw new PeerStartError(`no port could be bound on ${host}`);
}

export async function startPeer(options: StartPeerOptions): Promise<StartedPeer> {
  const { dataDir, record } = options;
  if (record.revoked) throw new PeerStartError(`peer ${record.id} is revoked; create a new one`);
  const registry = new PeerRegistry(dataDir);
  // Before anything is opened: a second process for the same peer stops here.
  const peerDir = join(registry.dir, record.id);
  mkdirSync(peerDir, { recursive: true, mode: 0o700 });
  let lock: PeerLock;
  try {
    lock = acquirePeerLock(peerDir, record.id);
  } catch (error) {
    if (error instanceof PeerLockHeld) throw new PeerStartError(error.message);
    throw error;
  }
  try {
    return await startLocked(options, registry, lock);
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function startLocked(options: StartPeerOptions, registry: PeerRegistry, lock: PeerLock): Promise<StartedPeer> {
  const { dataDir, record, settings, logger } = options;
  // The peer's model calls and its A2A push deliveries leave through netguard too, under the
  // plane's allow list (its file and the base URL the environment configures; a peer reads no
  // Settings). The file is read on every question, not once at start: a person changes the list
  // at the plane (`agentplane net allow`) while this process runs, and an entry added or removed
  // there must hold here too. It is a small file, asked per new connection (undici pools), as the
  // derived entries already are.
  const allowSources = { dataDir, env: process.env, storedProviders: () => ({}) };
  const netguard = createNetguard({ allow: { allows: (origin) => planeAllowList(new NetAllowStore(dataDir), allowSources).allows(origin) } });
  const providers = options.providers ?? loadProviders(process.env, { dispatcher: netguard.dispatcher });
  const model = providers.get('openai-compatible') ?? providers.get('local')!;
  const storeRoot = settings.fileStore ? (isAbsolute(settings.fileStore) ? settings.fileStore : resolve(settings.fileStore)) : join(registry.dir, record.id, 'files');
  mkdirSync(storeRoot, { recursive: true, mode: 0o700 });
  const files = new FileStore({ root: storeRoot, maxFileBytes: settings.maxFileBytes });
  const custom: CustomSkill[] = record.customSkills ? loadCustomSkills(record.customSkills, [...BUILTIN_SKILLS, 'ai']) : [];
  // Said once at start: where bubblewrap is missing, scripts are confined only by Node's permission model.
  const sandboxNote = custom.some((skill) => skill.kind === 'script') ? sandboxWarning() : null;
  if (sandboxNote) logger.log('warn', `peer ${record.id}: ${sandboxNote}`);

  const staging = new UploadStaging(join(registry.dir, record.id, 'staging'));
  const blobs = new InputBlobs(join(registry.dir, record.id, 'inputs'));
  // Revocations outlive the process: read before anything is opened, so a revocation file the
  // peer cannot read stops it here, naming the file, rather than starting it with none.
  let sessions: SessionBook;
  try {
    sessions = new SessionBook({ revocationFile: join(registry.dir, record.id, 'revoked.jsonl') });
  } catch (error) {
    throw error instanceof RevocationFileError ? new PeerStartError(error.message) : error;
  }
  // The plane that started this peer named its journal's database in the environment (none: SQLite).
  const journal = await Journal.open({ dataDir, ...databaseOptions(chooseDatabase(undefined, process.env)) });
  let runtime: Runtime;
  try {
    const skillDeps = { peerId: record.id, peerName: record.name, files, model, llmMode: record.llmMode, journal, custom, customRunner: new CustomSkillRunner(), staging, blobs };
    runtime = await Runtime.create({
      journal,
      agents: [],
      programs: [...skillPrograms(skillDeps), aiProgram(model, blobs)],
      policy: new PeerPolicy(loadPolicy(dataDir).policy, registry, record.id),
      providers,
      tools: builtinTools,
      toolContext: { workspace: workspaceOf(dataDir), labels: new FileLabels(dataDir) },
      logger,
      // On a team plane, the instance's peer of this name (another instance may run one too).
      host: `peer:${record.id}${journal.instanceId ? `@${journal.instanceId}` : ''}`,
    });
  } catch (error) {
    await journal.close();
    throw error;
  }

  const bindHost = record.bindHost ?? record.publicIp;
  let boundPort = record.port;
  const secret = registry.secretOf(record.id);
  const requestLimiter = new RateLimiter({ ratePerSecond: settings.ratePerSecond });
  // Twice one session's rate by default: one caller may run two sessions at full speed, and
  // twenty share what two would have (every local caller shares 127.0.0.1's budget).
  const addressLimiter = new RateLimiter({ ratePerSecond: settings.ipRatePerSecond ?? 2 * settings.ratePerSecond });
  // Built once: the skill list turns every skill's schema into JSON Schema, which costs more
  // than a whole bare round trip if done per call.
  const skills = ((descriptors) => () => descriptors)(describeSkills({ custom }));
  // The one door into this runtime, for every surface below (MCPv2, MCP, A2A): one set of checks.
  const admission = createSkillAdmission({ runtime, staging, blobs });
  const app = await buildPeerApp({
    peerId: record.id,
    name: record.name,
    version: appVersion(),
    secret,
    auth: record.auth,
    registry,
    sessions,
    sessionLimiter: new RateLimiter({ ratePerSecond: settings.sessionRatePerSecond }),
    requestLimiter,
    addressLimiter,
    admission,
    model,
    skills,
    llmMode: record.llmMode,
    mtls: settings.mtls,
    ttlSeconds: settings.ttlSeconds,
    clockSkewSeconds: settings.clockSkewSeconds,
    publicIp: record.publicIp,
    bindHost,
    port: () => boundPort,
    startedAt: Date.now(),
    logger,
    blobs,
    adminToken: options.adminToken ?? null,
    fetchJwks: (url, init) => jwksThrough(netguard, url, init),
  });
  let mcp: LazyFront;
  let a2a: PeerA2a | undefined;
  try {
    // MCP is loaded on its first request (plane/lazy-routes.ts), into an app of its own that this
    // app hands `/mcp` and its metadata URLs to. The same budgets as the MCPv2 routes: an MCP
    // host and an MCPv2 session on one address share its rate.
    mcp = await mountLazily(app, {
      urls: mcpRouteUrls('/mcp'),
      name: `peer ${record.id}'s MCP server`,
      logger,
      failed: (res) => writeJsonRpcError(res, 500, JSONRPC_INTERNAL_ERROR, 'Internal error: the MCP server could not be loaded'),
      async load() {
        const { mountPeerMcp } = await import('./peer-mcp');
        const routes = Fastify({ logger: false, schemaController: NO_ROUTE_SCHEMAS, onProtoPoisoning: 'remove', onConstructorPoisoning: 'remove' });
        const route = await mountPeerMcp(routes, { peerId: record.id, runtime, journal, skills, custom, admission, dataDir, logger, version: appVersion(), requestLimiter, addressLimiter });
        return { app: routes, close: () => route.close() };
      },
    });
    // A2A on the same port, the same door and token (plane/peer-a2a.ts); its push store is this
    // peer's own file in its own folder, delivered through this process's netguard.
    a2a = await mountPeerA2a(app, {
      peerId: record.id,
      runtime,
      journal,
      skills,
      custom,
      admission,
      dataDir,
      logger,
      version: appVersion(),
      port: () => boundPort,
      pushDir: join(registry.dir, record.id),
      netguard,
      ...(options.a2aBlockMs !== undefined ? { blockMs: options.a2aBlockMs } : {}),
    });
    boundPort = await listenStrict(app, bindHost, record.port, record.portFallback);
  } catch (error) {
    await a2a?.close();
    await app.close().catch(() => undefined);
    await runtime.close();
    await journal.close();
    throw error;
  }
  if (WILDCARDS.has(bindHost)) logger.log('warn', `peer ${record.id} binds every interface (${bindHost}); it is reachable beyond this machine`);
  const mcpUrl = peerMcpUrl(bindHost, boundPort);
  const a2aUrl = peerA2aUrl(bindHost, boundPort);
  if (a2aUrl) logger.log('info', `peer ${record.id} serves its skills over A2A at ${a2aUrl} (directory card at ${a2aUrl}.well-known/agent-card.json)`);
  if (mcpUrl) logger.log('info', `peer ${record.id} serves its skills over MCP at ${mcpUrl} (the data dir's MCP token)`);
  else logger.log('info', `peer ${record.id} binds no loopback address (${bindHost}), so its /mcp, which answers loopback callers only, is not reachable`);
  const address = formatPeerAddress(record.publicIp, boundPort);
  const demo = mintSession({ secret, clientIp: record.publicIp, ttlSeconds: settings.ttlSeconds });
  const demoAddress = formatPeerAddress(record.publicIp, boundPort, demo.sessionId);
  // Journaled before the port is published: whoever waits for the port file (the plane's
  // supervisor) then finds the start already in the journal.
  await journal.append({ runId: null, kind: 'PeerLifecycle', body: { peerId: record.id, event: 'started', address } });
  lock.setPort(boundPort);
  // Atomic: a reader polling the file sees no port or the whole port, never its first digits.
  if (options.portFile) writePrivateFileAtomically(options.portFile, `${boundPort}\n`);

  let closing: Promise<void> | undefined;
  return {
    record,
    app,
    port: boundPort,
    address,
    demoAddress,
    mcpUrl,
    a2aUrl,
    runtime,
    journal,
    close() {
      closing ??= (async () => {
        try {
          // The push worker first (it never throws): no delivery then reads a closing runtime, and
          // none is lost, since the next start resumes every config from its durable cursor.
          await a2a?.close();
          // MCP sessions and open streams next, so no call is left waiting on a closing runtime.
          await mcp.close();
          await app.close();
          await runtime.close();
          await journal.append({ runId: null, kind: 'PeerLifecycle', body: { peerId: record.id, event: 'stopped', address } });
        } catch (error) {
          logger.log('error', `peer ${record.id} did not stop cleanly`, errorFields(error));
        } finally {
          await journal.close();
          await netguard.close();
          lock.release();
        }
      })();
      return closing;
    },
  };
}

/** The most a token issuer's key set may weigh: a JWKS is a few keys. */
const JWKS_MAX_BYTES = 64 * 1024;
const JWKS_DEADLINE_MS = 10_000;

/** A trusted issuer's key set, fetched through the peer's netguard (delegated-tokens.ts): jose's fetch, answered as a Response. */
async function jwksThrough(netguard: Netguard, url: string, init: RequestInit): Promise<Response> {
  const answer = await guardedRequest(netguard, url, { method: 'GET', headers: { accept: 'application/json' }, maxBytes: JWKS_MAX_BYTES, deadlineMs: JWKS_DEADLINE_MS, ...(init.signal ? { signal: init.signal } : {}) });
  const headers = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) if (typeof value === 'string') headers.set(name, value);
  return new Response(new Uint8Array(answer.body), { status: answer.status, headers });
}
