/**
 * One MCPv2 peer's HTTP surface: a fastify app with one plugin per surface (health, session,
 * agent card, the batch endpoint, the provider-native endpoint, the admin endpoint the plane
 * uses). Every `tools/call` is admitted as a run through the peer's one door (skill-admission.ts,
 * the same door its MCP and A2A surfaces use) and answered from that run.
 *
 * Refusals, in order, on every request: a Host that is not one of this peer's addresses (403,
 * DNS rebinding); any Origin (403: a peer is not a browser API); then per route: a missing or
 * invalid session or credential (401, -32001), a rate limit (429, -32005: the session's own,
 * then its client address's, shared by all its sessions), a body over the cap (413). Then per slot: nesting deeper than
 * 64 levels, or skill arguments over 1 MB, are -32602 before anything is journaled (see
 * input-bounds.ts; the arguments' check is the door's, skill-admission.ts). Nothing secret is logged: request lines carry the path without its query
 * string.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { NO_ROUTE_SCHEMAS } from '../base/fastify-schemas';
import { z } from 'zod';
import { historyToIR, HistoryTranslationError, PROVIDERS, type Provider } from '../../src-shared/protocol/history';
import {
  Mcpv2Error,
  MAX_BATCH_SIZE,
  MCPV2_PROTOCOL_VERSION,
  MCPV2_SUPPORTED_VERSIONS,
  SlotCallerSchema,
  SlotSchema,
  type SlotCaller,
  UNSUPPORTED_PROVIDER_MESSAGE,
  PAY_PROTOCOL_STATUS,
  PENDING_APPROVAL,
  payTransactionId,
  ToolCallParamsSchema,
  type AgentCard,
  type Health,
  type JsonRpcId,
  type SkillDescriptor,
  type SlotResponse,
} from '../../src-shared/protocol/mcpv2';
import { PlaneError } from '../base/plane-error';
import { errorFields, type Logger } from '../base/logger';
import { JournalError } from '../journal/journal-error';
import { callModel } from '../runtime/model-effect';
import type { RunHistory } from '../runtime/run-history';
import type { RunProgram } from '../runtime/run-program';
import { EffectFailure } from '../runtime/run-signals';
import type { ModelProvider } from '../runtime/model-provider';
import { looksLikePeerCredential, verifyPeerCredential } from './peer-credentials';
import { delegatedPrincipal, verifyDelegatedToken, type JwksFetch } from './delegated-tokens';
import { restoreArguments, DigestRefSchema, type InputBlobs } from './input-blobs';
import { jsonBytes, MAX_JSON_DEPTH, MAX_SKILL_ARGUMENT_BYTES, describeBytes, nestsDeeperThan } from './input-bounds';
import type { PeerRegistry } from './peer-registry';
import type { PeerAuthMode } from '../../src-shared/vocabulary/peers';
import type { RateDecision, RateLimiter } from './rate-limiter';
import { canonicalIp, mintSession, labelOf, ProvenTokens, verifySession, type SessionBook } from './session-token';
import type { SkillAdmission, SkillCall } from './skill-admission';

export const PEER_BODY_LIMIT = 24 * 1024 * 1024;

export interface PeerContext {
  peerId: string;
  name: string;
  version: string;
  secret: string;
  auth: PeerAuthMode;
  registry: PeerRegistry;
  sessions: SessionBook;
  sessionLimiter: RateLimiter;
  /** Requests (each slot of a batch counts) per session or peer credential. */
  requestLimiter: RateLimiter;
  /**
   * Requests per client address, across all its sessions and credentials: the per-session
   * limit alone is multiplied by every session a caller holds (twenty fresh sessions once sent
   * 4,000 calls in 0.39 s against 200/s each). Taken after the session's own (see spendBudget).
   */
  addressLimiter: RateLimiter;
  /**
   * The peer's one door into its runtime (skill-admission.ts): every skill call is admitted
   * there, with the argument checks every surface of this peer shares.
   */
  admission: SkillAdmission;
  model: ModelProvider;
  skills: () => SkillDescriptor[];
  llmMode: boolean;
  mtls: boolean;
  ttlSeconds: number;
  clockSkewSeconds: number;
  publicIp: string;
  bindHost: string;
  port: () => number;
  startedAt: number;
  logger: Logger;
  /** Where large values live, named in the journal by digest and size (translate_history's answer is read back from here). */
  blobs: InputBlobs;
  /** The plane's handle on this process (sessions, revocation); loopback only. */
  adminToken: string | null;
  /** A trusted token issuer's key set is fetched through this (the peer's netguard; delegated-tokens.ts). */
  fetchJwks: JwksFetch;
}

interface Caller {
  /** Policy principal: `peer:<id>` for a credential, `session:<label>` for a session, `delegated:<sub>` for a delegated token. */
  principal: string;
  /** LLM mode conversation default: the session's label or the peer's id. */
  conversation: string;
  /** The client address (canonical), whose budget every request of any of its sessions spends. */
  ip: string;
  /** The calling peer's id, when it presented an identity credential. */
  identity?: string;
}

function rpcError(id: JsonRpcId, code: number, message: string, data?: unknown): SlotResponse {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } };
}

function clientIpOf(request: FastifyRequest): string {
  return canonicalIp(request.ip) ?? request.ip;
}

function hostsOf(ctx: PeerContext): Set<string> {
  const names = new Set(['localhost', '127.0.0.1', '[::1]', ctx.publicIp, ctx.bindHost].map((h) => (h.includes(':') && !h.startsWith('[') ? `[${h}]` : h)));
  if (ctx.bindHost === '0.0.0.0' || ctx.bindHost === '::') {
    for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) names.add(i.family === 'IPv6' ? `[${i.address}]` : i.address);
  }
  return names;
}

/**
 * One request's (or one further slot's) share of the caller's budgets: its session's (or
 * credential's) own, then its address's. In that order, so that a request its own limit
 * refuses spends nothing of the address's budget: one session's burst cannot starve the other
 * sessions of its address, while all of them together are held to the address's rate.
 */
function spendBudget(ctx: PeerContext, caller: Caller): (RateDecision & { ok: true }) | { ok: false; retryAfterMs: number; message: string } {
  const own = ctx.requestLimiter.take(caller.principal);
  if (!own.ok) return { ...own, message: 'rate limited: too many requests for this session' };
  const address = ctx.addressLimiter.take(caller.ip);
  if (!address.ok) return { ...address, message: 'rate limited: too many requests from this address (all its sessions together)' };
  return { ok: true };
}

export async function buildPeerApp(ctx: PeerContext): Promise<FastifyInstance> {
  // A "__proto__" or "constructor.prototype" key in a body is dropped, not a 400 for the whole
  // body: it can pollute nothing either way, and refusing the body would leave every valid
  // request of a batch unanswered for one bad slot (JSON-RPC answers each slot on its own).
  const app = Fastify({ logger: false, schemaController: NO_ROUTE_SCHEMAS, bodyLimit: PEER_BODY_LIMIT, forceCloseConnections: true, onProtoPoisoning: 'remove', onConstructorPoisoning: 'remove' });
  app.removeContentTypeParser('text/plain');
  const hosts = hostsOf(ctx);

  app.addHook('onRequest', async (request, reply) => {
    const host = request.headers.host ?? '';
    const at = host.lastIndexOf(':');
    const name = at > 0 ? host.slice(0, at).toLowerCase() : host.toLowerCase();
    if (Number(host.slice(at + 1)) !== ctx.port() || !hosts.has(name)) {
      return reply.code(403).send(rpcError(null, Mcpv2Error.InvalidRequest, "Host is not this peer's address"));
    }
    if (request.headers.origin !== undefined) return reply.code(403).send(rpcError(null, Mcpv2Error.InvalidRequest, 'cross-origin requests are refused'));
  });
  // The access log: a debug line per request, so the hook is only there when debug lines are
  // kept (base/logger.ts says what they cost a loaded peer).
  if (ctx.logger.enabled?.('debug') ?? true) {
    app.addHook('onResponse', async (request, reply) => {
      ctx.logger.log('debug', `${request.method} ${request.url.split('?')[0]} ${reply.statusCode}`);
    });
  }
  app.setErrorHandler((error: { code?: string; statusCode?: number }, _request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return reply.code(413).send(rpcError(null, Mcpv2Error.InvalidRequest, `request body exceeds ${PEER_BODY_LIMIT} bytes`));
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return reply.code(415).send(rpcError(null, Mcpv2Error.InvalidRequest, 'send application/json'));
    if (error.statusCode === 400) return reply.code(200).send(rpcError(null, Mcpv2Error.ParseError, 'parse error: the body is not valid JSON'));
    ctx.logger.log('error', 'peer server fault', { code: error.code });
    return reply.code(500).send(rpcError(null, Mcpv2Error.InternalError, 'internal error'));
  });

  const health = (): Health => ({
    status: 'ok',
    peerId: ctx.peerId,
    name: ctx.name,
    version: ctx.version,
    protocolVersion: MCPV2_PROTOCOL_VERSION,
    llmMode: ctx.llmMode,
    mtls: ctx.mtls,
    uptimeSeconds: Math.round((Date.now() - ctx.startedAt) / 1000),
    activeSessions: ctx.sessions.liveCount(),
  });
  app.get('/mcpv2/health', async () => health());
  // The old path, kept so monitors pointed at it keep working (the protocol's alias).
  app.get('/health', async () => health());

  app.get('/mcpv2/agent-card', async (): Promise<AgentCard> => {
    const record = ctx.registry.get(ctx.peerId);
    return {
      name: ctx.name,
      peerId: ctx.peerId,
      protocol: 'mcpv2',
      protocolVersions: [...MCPV2_SUPPORTED_VERSIONS],
      address: `mcpv2://${ctx.publicIp.includes(':') ? `[${ctx.publicIp}]` : ctx.publicIp}:${ctx.port()}/mcpv2`,
      ...(record ? { identity: record.publicKey } : {}),
      capabilities: {
        llmMode: ctx.llmMode,
        mtls: ctx.mtls,
        batch: { maxSize: MAX_BATCH_SIZE },
        auth: record?.tokenIssuer ? ['delegated-token'] : ctx.auth === 'both' ? ['session', 'peer-credential'] : ctx.auth === 'identity' ? ['peer-credential'] : ['session'],
      },
      skills: ctx.skills(),
    };
  });

  app.get('/mcpv2/session', async (request, reply) => {
    if (ctx.auth === 'identity' || ctx.registry.get(ctx.peerId)?.tokenIssuer) return reply.code(404).send(rpcError(null, Mcpv2Error.InvalidSession, 'this peer issues no sessions: it accepts identity credentials only'));
    const ip = clientIpOf(request);
    const limited = ctx.sessionLimiter.take(ip);
    if (!limited.ok) {
      reply.header('Retry-After', String(Math.ceil(limited.retryAfterMs / 1000)));
      return reply.code(429).send(rpcError(null, Mcpv2Error.RateLimited, 'too many sessions requested from this address; slow down'));
    }
    const session = mintSession({ secret: ctx.secret, clientIp: ip, ttlSeconds: ctx.ttlSeconds });
    ctx.sessions.record(session, `${request.ip}:${request.socket.remotePort ?? 0}`);
    return { sessionId: session.sessionId, expiresAt: Math.floor(session.expiresAt / 1000), ttl: session.ttl };
  });

  // Session tokens this peer's secret has already proved (session-token.ts, ProvenTokens).
  const provenTokens = new ProvenTokens();

  /** The caller, or a reply already sent (401 / 429). */
  async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<Caller | null> {
    const query = request.query as Record<string, unknown>;
    const header = request.headers.authorization;
    // The scheme is case-insensitive (RFC 9110 section 11.1).
    const bearer = header ? /^bearer\s+(.+)$/i.exec(header)?.[1]?.trim() : undefined;
    const token = bearer ?? (typeof query.sessionId === 'string' ? query.sessionId : '');
    const refuse = (why: string) => {
      reply.header('WWW-Authenticate', 'Bearer');
      void reply.code(401).send(rpcError(null, Mcpv2Error.InvalidSession, `invalid session: ${why}`));
      return null;
    };
    if (!token) return refuse('no session (GET /mcpv2/session, then pass sessionId or a Bearer token)');
    let caller: Caller;
    let sessionDigest: string | null = null;
    // A peer that trusts a token issuer takes that issuer's tokens and nothing else (delegated-tokens.ts).
    const trust = ctx.registry.get(ctx.peerId)?.tokenIssuer;
    if (trust) {
      const check = looksLikePeerCredential(token) ? await verifyDelegatedToken(trust, ctx.peerId, token, ctx.fetchJwks) : { ok: false as const, reason: `this peer accepts access tokens from ${trust.issuer} only` };
      if (!check.ok) return refuse(check.reason);
      caller = { principal: delegatedPrincipal(check.subject), conversation: delegatedPrincipal(check.subject), ip: clientIpOf(request) };
    } else if (looksLikePeerCredential(token)) {
      if (ctx.auth === 'shared-secret') return refuse('this peer accepts shared-secret sessions only');
      const check = await verifyPeerCredential(ctx.registry, ctx.peerId, token);
      if (!check.ok) return refuse(check.reason === 'wrong-audience' ? 'the credential was minted for another peer' : check.reason);
      caller = { principal: `peer:${check.caller}`, conversation: `peer:${check.caller}`, ip: clientIpOf(request), identity: check.caller };
    } else {
      if (ctx.auth === 'identity') return refuse('this peer accepts peer credentials only');
      const verdict = verifySession({ secret: ctx.secret, token, observedIp: clientIpOf(request), clockSkewSeconds: ctx.clockSkewSeconds, book: ctx.sessions, proven: provenTokens });
      if (!verdict.ok) return refuse(verdict.reason);
      const label = labelOf(verdict.digest);
      sessionDigest = verdict.digest;
      caller = { principal: `session:${label}`, conversation: `session:${label}`, ip: clientIpOf(request) };
    }
    const limited = spendBudget(ctx, caller);
    if (!limited.ok) {
      reply.header('Retry-After', String(Math.ceil(limited.retryAfterMs / 1000)));
      void reply.code(429).send(rpcError(null, Mcpv2Error.RateLimited, limited.message));
      return null;
    }
    // Authenticated and admitted: one call on this session or credential (what Sessions lists).
    if (caller.identity !== undefined) ctx.sessions.identityUsed(caller.identity, caller.ip);
    else if (sessionDigest !== null) ctx.sessions.usedDigest(sessionDigest);
    return caller;
  }

  // Authentication runs in onRequest, before the body is read or parsed: a caller without a
  // session is refused before it can make the peer parse up to the body cap.
  const authenticated = async (request: FastifyRequest, reply: FastifyReply) => {
    const caller = await authenticate(request, reply);
    if (caller) callers.set(request, caller);
  };
  const callers = new WeakMap<FastifyRequest, Caller>();

  app.post('/mcpv2', { onRequest: authenticated }, async (request, reply) => {
    const caller = callers.get(request)!;
    const body = request.body;
    if (!Array.isArray(body)) {
      // A single request object is answered as a single response (JSON-RPC 2.0 section 4).
      if (body !== null && typeof body === 'object') {
        const answer = await answerSlot(ctx, body, caller);
        return answer ?? reply.code(204).send();
      }
      return rpcError(null, Mcpv2Error.InvalidRequest, 'invalid request: expected a JSON-RPC request or a batch of them');
    }
    if (body.length === 0) return rpcError(null, Mcpv2Error.InvalidRequest, 'invalid request: an empty batch');
    if (body.length > MAX_BATCH_SIZE) return reply.code(400).send(rpcError(null, Mcpv2Error.InvalidRequest, `invalid request: a batch holds at most ${MAX_BATCH_SIZE} slots, this one ${body.length}`));
    const answers: SlotResponse[] = [];
    for (const [index, slot] of body.entries()) {
      // The request paid one unit of the caller's rates at the door; every further slot pays
      // one too, so a batch of a hundred is a hundred requests' worth, not one.
      const limited = index > 0 ? spendBudget(ctx, caller) : null;
      if (limited && !limited.ok) {
        const id = (slot as { id?: unknown } | null)?.id;
        if (id !== undefined) answers.push(rpcError(typeof id === 'string' || typeof id === 'number' ? id : null, Mcpv2Error.RateLimited, limited.message));
        continue;
      }
      const answer = await answerSlot(ctx, slot, caller);
      if (answer) answers.push(answer);
    }
    // A batch of notifications only has no answer at all.
    return answers.length > 0 ? answers : reply.code(204).send();
  });

  app.post<{ Params: { provider: string } }>('/mcpv2/ai/:provider', { onRequest: authenticated }, async (request, reply) => {
    const caller = callers.get(request)!;
    const provider = request.params.provider;
    if (!(PROVIDERS as readonly string[]).includes(provider)) {
      return reply.code(404).send(rpcError(null, Mcpv2Error.UnsupportedProvider, `unsupported provider ${provider}: use one of ${PROVIDERS.join(', ')}`));
    }
    return answerNative(ctx, provider as Provider, request.body, caller, reply);
  });

  if (ctx.adminToken) {
    const expected = createHash('sha256').update(ctx.adminToken).digest();
    const admin = (request: FastifyRequest) => {
      const presented = createHash('sha256').update(request.headers['x-agentplane-admin'] === undefined ? '' : String(request.headers['x-agentplane-admin'])).digest();
      const loopback = ['127.0.0.1', '::1'].includes(clientIpOf(request));
      return loopback && timingSafeEqual(presented, expected);
    };
    app.get('/mcpv2/admin/sessions', async (request, reply) => (admin(request) ? { sessions: ctx.sessions.live(), identities: ctx.sessions.identities() } : reply.code(404).send()));
    app.post('/mcpv2/admin/sessions/revoke', async (request, reply) => {
      if (!admin(request)) return reply.code(404).send();
      const parsed = z.object({ label: z.string() }).safeParse(request.body);
      if (!parsed.success) return reply.code(400).send({ error: 'label is required' });
      try {
        return { revoked: ctx.sessions.revokeLabel(parsed.data.label) };
      } catch (error) {
        // Not on disk means not revoked: say so, rather than answer as if it had worked.
        ctx.logger.log('error', `peer ${ctx.peerId} could not revoke a session`, errorFields(error));
        return reply.code(500).send({ error: `not revoked: ${error instanceof Error ? error.message : String(error)}` });
      }
    });
  }
  return app;
}

/** One slot, answered independently: a notification gets null. */
export async function answerSlot(ctx: PeerContext, raw: unknown, caller: Caller): Promise<SlotResponse | null> {
  const idOf = (value: unknown): JsonRpcId => {
    const id = (value as { id?: unknown } | null)?.id;
    return typeof id === 'string' || typeof id === 'number' || id === null ? (id as JsonRpcId) : null;
  };
  // Before anything walks the slot recursively (zod, canonical JSON, the history adapters):
  // depth is measured with an explicit stack, so even 100,000 levels are only counted.
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) {
    // A notification (a request without an id) is refused without an answer, like any other.
    const slotLike = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
    const notification = slotLike !== null && !('id' in slotLike) && slotLike.jsonrpc === '2.0' && typeof slotLike.method === 'string';
    return notification ? null : rpcError(idOf(raw), Mcpv2Error.InvalidParams, `invalid params: the request nests deeper than ${MAX_JSON_DEPTH} levels; the cap is ${MAX_JSON_DEPTH}`);
  }
  const parsed = SlotSchema.safeParse(raw);
  if (!parsed.success) return rpcError(idOf(raw), Mcpv2Error.InvalidRequest, 'invalid request: a slot needs jsonrpc "2.0" and a method');
  const slot = parsed.data;
  const notification = slot.id === undefined;
  let answer: SlotOutcome;
  try {
    answer = await dispatchSlot(ctx, slot, caller);
  } catch (error) {
    // One slot's failure is that slot's answer: the batch still answers every other slot.
    if (error instanceof JournalError && error.code === 'Refused') {
      answer = { error: { code: Mcpv2Error.InvalidParams, message: 'invalid params: the arguments hold a value that cannot be journaled (a lone surrogate, or an integer beyond 2^53)' } };
    } else {
      ctx.logger.log('error', 'slot failed inside the peer', errorFields(error));
      answer = { error: { code: Mcpv2Error.InternalError, message: 'internal error' } };
    }
  }
  if (notification) return null;
  return 'error' in answer ? rpcError(slot.id ?? null, answer.error.code, answer.error.message, answer.error.data) : { jsonrpc: '2.0', id: slot.id ?? null, result: answer.result };
}

type SlotOutcome = { result: unknown } | { error: { code: number; message: string; data?: unknown } };

async function dispatchSlot(ctx: PeerContext, slot: z.infer<typeof SlotSchema>, caller: Caller): Promise<SlotOutcome> {
  if (slot.method !== 'tools/list' && slot.method !== 'tools/call') return { error: { code: Mcpv2Error.MethodNotFound, message: `method not found: ${slot.method.slice(0, 80)}` } };
  // A slot that names a history format the protocol does not know is refused as the protocol
  // says (-32010 "Unsupported provider", docs/PEER-PROTOCOL.md), whatever its method: answering
  // it normally would let a caller believe its provider was honoured. Exact names only, so the
  // check and the adapters agree on what is supported.
  const provider = slot.context?.provider;
  if (provider !== undefined && !(PROVIDERS as readonly string[]).includes(provider)) {
    return { error: { code: Mcpv2Error.UnsupportedProvider, message: UNSUPPORTED_PROVIDER_MESSAGE, data: { provider: provider.slice(0, 80), supported: [...PROVIDERS] } } };
  }
  if (slot.method === 'tools/list') return { result: { tools: ctx.skills() } };
  const params = ToolCallParamsSchema.safeParse(slot.params ?? {});
  if (!params.success) return { error: { code: Mcpv2Error.InvalidParams, message: 'invalid params: tools/call takes {name, arguments}' } };
  const { name, arguments: args } = params.data;
  if (!ctx.skills().some((s) => s.name === name)) return { error: { code: Mcpv2Error.SkillNotFound, message: `skill not found: ${name.slice(0, 80)}` } };
  // Whose context a conversation key reaches. Holders of the shared secret are one trust domain
  // (the protocol's model: all fully trusted), so a key they name is shared among them: that is how
  // two agents hold one conversation. A caller with a peer identity gets its own namespace. A
  // session's default conversation is its own, and the prefixes that name those defaults are
  // reserved, so nobody reaches another session's context by spelling its (non-secret) label.
  const named = slot.context?.conversation;
  if (named && /^(session|peer):/.test(named)) {
    return { error: { code: Mcpv2Error.InvalidParams, message: 'invalid params: context.conversation names starting with session: or peer: are reserved' } };
  }
  const scoped = named ? (caller.principal.startsWith('peer:') ? `${caller.principal}/${named}` : `shared/${named}`) : caller.conversation;
  // Which run called, as the caller states it: recorded on the skill run (parentRunId,
  // parentStep) and confirmed by the plane against that run's own record before it is shown
  // as a link (runtime/run-links.ts). A malformed one is refused by name, not ignored.
  let parent: SlotCaller | undefined;
  if (slot.context?.caller !== undefined) {
    const stated = SlotCallerSchema.safeParse(slot.context.caller);
    if (!stated.success) return { error: { code: Mcpv2Error.InvalidParams, message: 'invalid params: context.caller must be {runId: "run-<20 hex>", step: <integer ≥ 0>}' } };
    parent = stated.data;
  }
  const skillContext = { conversation: scoped, ...(slot.context?.provider ? { provider: slot.context.provider } : {}) };
  // Through the peer's one door (skill-admission.ts): the arguments' size, an upload's bytes
  // and large arguments are checked and kept out of the journal there, before the run is
  // admitted, exactly as for a call over MCP or A2A; a refused call journals nothing.
  return runSkill(ctx, { skill: name, arguments: args, skillContext, principal: caller.principal, via: 'peer', ...(parent ? { parent } : {}) });
}

/** Admits a skill run for the caller through the peer's door and answers from how it ended (or that it waits). */
async function runSkill(ctx: PeerContext, call: SkillCall): Promise<SlotOutcome> {
  let run: RunHistory;
  try {
    // Admitted and run to its end or its first wait: a skill of local effects (ping, a listing)
    // is one commit, made before the caller is answered (Runtime.run).
    run = await ctx.admission.run(call);
  } catch (error) {
    if (error instanceof PlaneError) {
      if (error.code === 'AP_FORBIDDEN') return { error: { code: Mcpv2Error.CapabilityViolation, message: 'capability violation: this caller may not call this skill' } };
      if (error.code === 'AP_BAD_REQUEST') return { error: { code: Mcpv2Error.InvalidParams, message: `invalid params: ${error.message}` } };
      if (error.code === 'AP_NOT_FOUND') return { error: { code: Mcpv2Error.SkillNotFound, message: error.message } };
      return { error: { code: Mcpv2Error.InternalError, message: error.message } };
    }
    throw error;
  }
  const runId = run.runId;
  if (run.status === 'suspended') {
    const waiting = {
      status: PENDING_APPROVAL,
      approval: PENDING_APPROVAL,
      runId,
      waitId: run.pending?.waitId,
      reason: run.pending?.reason,
      moved: false,
      note: 'A person must approve this in the AgentPlane approvals inbox; nothing has been done yet.',
    };
    return { result: call.skill === 'pay' ? withPayProtocolFields(waiting, runId) : waiting };
  }
  if (run.outcome === 'succeeded') {
    if (call.skill === 'pay') return { result: withPayProtocolFields(run.result, runId) };
    return { result: call.skill === 'translate_history' ? await restoreResult(ctx, run.result) : run.result };
  }
  const code = run.error?.code ?? '';
  const mapped = code.startsWith('mcpv2:') ? Number(code.slice(6)) : code === 'NotGranted' ? Mcpv2Error.CapabilityViolation : code.startsWith('Model') ? Mcpv2Error.ToolExecutionError : Mcpv2Error.SkillExecutionError;
  const message = run.outcome === 'denied' ? 'declined by a person' : run.error?.message ?? `the skill ${run.outcome}`;
  return { error: { code: Number.isInteger(mapped) ? mapped : Mcpv2Error.SkillExecutionError, message } };
}

/**
 * `pay`'s answer with the protocol's fields (docs/PEER-PROTOCOL.md) beside AgentPlane's: `status`
 * is the protocol's `pending` (no payment is ever settled), `transaction_id` names no real
 * transaction, and AgentPlane's own status (waiting for a person, or an approved intent) moves
 * to `approval`, the one field every answer that waits for a person carries.
 */
function withPayProtocolFields(answer: unknown, runId: string): Record<string, unknown> {
  const ours = answer !== null && typeof answer === 'object' && !Array.isArray(answer) ? (answer as Record<string, unknown>) : { value: answer };
  return { ...ours, approval: ours.approval ?? ours.status, status: PAY_PROTOCOL_STATUS, transaction_id: payTransactionId(runId), moved: false };
}

/**
 * translate_history seals a large translation as its digest (skills.ts); the caller is answered
 * with the translation itself. Only that skill's result is read back this way: a custom skill's
 * result is shaped by its caller's arguments, and must never be a way to ask for a blob.
 */
async function restoreResult(ctx: PeerContext, result: unknown): Promise<unknown> {
  const sealed = result as { external?: unknown } | null;
  if (sealed === null || typeof sealed !== 'object' || sealed.external === undefined) return result;
  const refs = z.record(z.string(), DigestRefSchema).safeParse(sealed.external);
  if (!refs.success) return result;
  const { external: _external, ...rest } = sealed;
  const restored = await restoreArguments(rest, refs.data, ctx.blobs);
  if (!restored.ok) throw new Error(`translate_history's answer (${restored.missing}) is no longer on this peer`);
  return restored.arguments;
}

const NativeBodySchema = z.record(z.string(), z.unknown());

/** `/mcpv2/ai/{provider}`: a provider-native request in, the same provider's response shape out. */
async function answerNative(ctx: PeerContext, provider: Provider, body: unknown, caller: Caller, reply: FastifyReply): Promise<unknown> {
  // Depth first (iteratively), before the history adapters walk it recursively; then size,
  // before the run is admitted and journals it.
  if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    return reply.code(400).send(rpcError(null, Mcpv2Error.InvalidParams, `invalid params: the request nests deeper than ${MAX_JSON_DEPTH} levels; the cap is ${MAX_JSON_DEPTH}`));
  }
  const parsed = NativeBodySchema.safeParse(body);
  if (!parsed.success) return reply.code(400).send(rpcError(null, Mcpv2Error.InvalidRequest, 'invalid request: a JSON object is required'));
  const native = parsed.data;
  const size = jsonBytes(native);
  if (size > MAX_SKILL_ARGUMENT_BYTES) {
    return reply.code(400).send(rpcError(null, Mcpv2Error.InvalidParams, `invalid params: the request is ${describeBytes(size)}; the cap is ${describeBytes(MAX_SKILL_ARGUMENT_BYTES)}`));
  }
  const history =
    provider === 'claude'
      ? { ...(native.system !== undefined ? { system: native.system } : {}), messages: native.messages }
      : provider === 'gemini'
        ? { ...(native.systemInstruction !== undefined ? { systemInstruction: native.systemInstruction } : {}), contents: native.contents }
        : native.messages;
  let messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  try {
    const ir = historyToIR(provider, history);
    messages = [
      ...(ir.system ? [{ role: 'system' as const, content: ir.system }] : []),
      ...ir.messages
        .filter((m) => m.role !== 'tool')
        .map((m) => ({ role: m.role as 'user' | 'assistant', content: m.blocks.map((b) => (b.type === 'text' ? b.text : '')).join(' ').trim() }))
        .filter((m) => m.content.length > 0),
    ];
  } catch (error) {
    if (error instanceof HistoryTranslationError) return reply.code(400).send(rpcError(null, Mcpv2Error.InvalidParams, `invalid params: ${error.message}`));
    throw error;
  }
  const maxTokens = Number(native.max_tokens ?? (native.generationConfig as { maxOutputTokens?: number } | undefined)?.maxOutputTokens ?? 256);
  const outcome = await runSkill(ctx, {
    skill: 'ai',
    arguments: { provider, messages, maxTokens: Number.isInteger(maxTokens) && maxTokens > 0 ? Math.min(maxTokens, 4096) : 256 },
    skillContext: {},
    principal: caller.principal,
    via: 'peer',
  });
  if ('error' in outcome) return reply.code(outcome.error.code === Mcpv2Error.CapabilityViolation ? 403 : 400).send(rpcError(null, outcome.error.code, outcome.error.message));
  const answer = outcome.result as { text: string; usage: { inputTokens: number; outputTokens: number }; model: string | null; truncated: boolean };
  const id = `ap-${createHash('sha256').update(JSON.stringify(answer)).digest('hex').slice(0, 24)}`;
  const model = answer.model ?? ctx.model.id;
  if (provider === 'claude') {
    return { id, type: 'message', role: 'assistant', model, content: [{ type: 'text', text: answer.text }], stop_reason: answer.truncated ? 'max_tokens' : 'end_turn', stop_sequence: null, usage: { input_tokens: answer.usage.inputTokens, output_tokens: answer.usage.outputTokens } };
  }
  if (provider === 'gemini') {
    return {
      candidates: [{ content: { role: 'model', parts: [{ text: answer.text }] }, finishReason: answer.truncated ? 'MAX_TOKENS' : 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: answer.usage.inputTokens, candidatesTokenCount: answer.usage.outputTokens, totalTokenCount: answer.usage.inputTokens + answer.usage.outputTokens },
      modelVersion: model,
    };
  }
  return {
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content: answer.text }, finish_reason: answer.truncated ? 'length' : 'stop' }],
    usage: { prompt_tokens: answer.usage.inputTokens, completion_tokens: answer.usage.outputTokens, total_tokens: answer.usage.inputTokens + answer.usage.outputTokens },
  };
}

/**
 * The hidden program behind `/mcpv2/ai/{provider}`: one model call, governed like `ask`. Its
 * messages, when large, were admitted by digest (see input-blobs.ts) and are read back here.
 */
export function aiProgram(model: ModelProvider, blobs: InputBlobs): RunProgram {
  const Arguments = z.object({
    provider: z.string(),
    messages: z.array(z.object({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).min(1),
    maxTokens: z.number().int().min(1).max(4096),
  });
  const Admitted = z.object({ arguments: z.record(z.string(), z.unknown()), external: z.record(z.string(), DigestRefSchema).optional(), context: z.unknown().optional() });
  return {
    id: 'skill:ai',
    description: 'provider-native model call',
    admission: { action: 'mcpv2:skill.call', resource: 'skill:ai' },
    grants: new Map([[`model:${model.id}`, { approve: false }]]),
    approveEveryEffect: false,
    budget: { maxEffects: 5 },
    inputSchema: { type: 'object' },
    // Checked before admission as before; large messages (externalized, so more than 64 KiB of
    // them) are checked again once read back.
    validateInput: (input) => {
      const admitted = Admitted.safeParse(input);
      const valid =
        admitted.success &&
        (admitted.data.external?.messages
          ? Arguments.omit({ messages: true }).safeParse(admitted.data.arguments).success
          : Arguments.safeParse(admitted.data.arguments).success);
      return valid ? [] : ['a provider-native request with at least one message'];
    },
    async run(input, cx) {
      const admitted = Admitted.parse(input);
      const restored = await restoreArguments(admitted.arguments, admitted.external, blobs);
      if (!restored.ok) throw new EffectFailure(`mcpv2:${Mcpv2Error.SkillExecutionError}`, `the bytes of ${restored.missing} are no longer on this peer; send the request again`, 'DidNotHappen');
      const parsedArgs = Arguments.safeParse(restored.arguments);
      if (!parsedArgs.success) throw new EffectFailure(`mcpv2:${Mcpv2Error.InvalidParams}`, 'invalid params: a provider-native request with at least one message', 'DidNotHappen');
      const args = parsedArgs.data;
      const completion = await callModel(cx, model, { model: '', messages: args.messages, maxTokens: args.maxTokens });
      return { text: completion.text, usage: completion.usage, model: completion.model, truncated: completion.truncated };
    },
  };
}
