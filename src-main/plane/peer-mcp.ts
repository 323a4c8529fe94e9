/**
 * MCP on a peer's own port: its skills served to MCP hosts as tools, at
 * `http://127.0.0.1:<peer port>/mcp`, by the same code that serves the plane's agents
 * (protocols/mcp/mcp-http.ts for the wire and who may use it, plane-surface.ts for the tools).
 * Only the door differs: the plane's surface reaches the plane through `plane.dispatch`; here it
 * reaches this peer's runtime through `peerDoor`, which answers the same commands (`agents.list`,
 * `runs.start`, `runs.get`, `runs.list`, `runs.cancel`, `journal.records`, `approvals.decide`)
 * through the plane's one dispatcher (plane/dispatch.ts: the contract's schemas, its error
 * mapping) with handlers over the peer's runtime. So a skill call over MCP is a skill run like
 * any other: admitted in this peer's runtime (host `peer:<id>`), journaled, metered, replayed.
 *
 * Who may call: a holder of the data dir's MCP token (the plane's, `mcp-address.json`, created by
 * whichever of the plane and its peers starts first: loadOrCreateMcpToken; read when the peer
 * starts, as the plane reads it when its endpoint starts), as principal `mcp:local`, from a
 * loopback address. The peer's own MCPv2 routes are untouched: the MCP hooks live in an
 * encapsulated plugin that holds only `/mcp`. What still applies to `/mcp` is the peer app's
 * root hooks, which run first for every route: a Host that is not this peer's own address and
 * port is 403, and so is ANY Origin (a peer is not a browser API), which is stricter than the
 * plane's endpoint (there a loopback Origin passes): a browser page cannot call a peer's skills
 * with the plane's token.
 *
 * The MCPv2 server's admission rules (peer-server.ts, dispatchSlot and runSkill), one by one, as
 * they apply to an MCP caller holding the plane's token:
 * - Policy: applies. Every call is `runtime.start` with chain `[mcp:local]`, so the peer's policy
 *   (the plane's policy.json plus the registry, PeerPolicy) is asked about `mcp:local` and a
 *   refusal is journaled (AdmissionRefused). The bundled policy.json allows `mcp:local` to call
 *   skills (`mcpv2:skill.call` on `skill:*`), as it allows it to start agents: the token's holder
 *   is the person at this machine through their MCP host; an operator narrows it with a deny rule.
 * - PeerPolicy's allowlists: do not apply. They say which skills another PEER may call (a
 *   `peer:<id>` caller presenting an identity credential); an MCP host holding the plane's token
 *   is not a peer, and holds the same trust as the shared-secret sessions (below).
 * - Rate limits: apply, the same budgets in the same order: the caller's own (keyed by its
 *   principal, `mcp:local`, one bucket for every MCP host) then its address's, which it shares
 *   with every MCPv2 session from that address (one local caller cannot starve the others by
 *   changing doors). Every HTTP request pays, as every MCPv2 request (and batch slot) does.
 * - Input bounds: apply, checked by the very door an MCPv2 call is admitted through
 *   (peers/skill-admission.ts), so both refuse alike. Nesting deeper than 64 levels is refused
 *   (-32602) before the SDK's recursive validation walks the body; a skill's arguments over 1 MB
 *   are refused before admission (a refused call journals nothing); arguments over 64 KiB go to
 *   the peer's blobs and are named in the journal by digest; an upload's bytes are staged, never
 *   journaled, and a content that is not the base64 it claims is refused. The body
 *   cap is the MCP route's (4 MiB, mcp-json.ts), not MCPv2's 24 MiB: an upload near the file
 *   store's 16 MiB goes through MCPv2.
 * - Arguments: checked against the skill's own argument schema (the very validator its run
 *   parses with) BEFORE admission, so a bad argument is -32602 naming the field and costs the
 *   journal nothing. (Over MCPv2 the run is admitted and fails with -32602 inside; MCP wants the
 *   protocol's error, and the surface maps the door's "input.<field>: ..." to it.)
 * - Conversations (LLM mode): the default conversation of an MCP caller is its principal's:
 *   holders of the one token are one trust domain, like the shared-secret holders sharing a
 *   named conversation.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../peers/input-bounds';
import type { RateLimiter } from '../peers/rate-limiter';
import { canonicalIp } from '../peers/session-token';
import { PRINCIPAL_ANONYMOUS } from '../protocols/mcp/mcp-factory';
import { registerMcpRoute, type McpRoute } from '../protocols/mcp/mcp-http';
import { firstRequestId, jsonRpcErrorBody, MCP_SERVER_ERROR } from '../protocols/mcp/mcp-json';
import { createPlaneSurface } from '../protocols/mcp/plane-surface';
import { loadOrCreateMcpToken } from './mcp-address';
import { peerDoor, type PeerDoorDeps } from './peer-door';

const JSONRPC_INVALID_PARAMS = -32602;
const JSONRPC_RATE_LIMITED = -32005;

export interface PeerMcpOptions extends PeerDoorDeps {
  version: string;
  /** The peer's MCPv2 budgets, the same instances its routes spend from (see the module comment). */
  requestLimiter: RateLimiter;
  addressLimiter: RateLimiter;
  /** How long a tools/call waits for its run (ms); tests shorten it. */
  settleMs?: number;
}

function isLoopback(ip: string): boolean {
  return ip === '::1' || /^127\./.test(ip);
}

function refuse(reply: FastifyReply, status: number, code: number, message: string, id: string | number | null = null): FastifyReply {
  return reply.code(status).header('content-type', 'application/json').send(jsonRpcErrorBody(code, message, id));
}

/** Mounts `/mcp` on the peer's app (before it listens); answers the route, to close with the peer. */
export async function mountPeerMcp(app: FastifyInstance, options: PeerMcpOptions): Promise<McpRoute> {
  const token = loadOrCreateMcpToken(options.dataDir);
  const factory = createPlaneSurface(peerDoor(options), { version: options.version, logger: options.logger, ...(options.settleMs ? { settleMs: options.settleMs } : {}) });
  let route: McpRoute | undefined;
  await app.register(async (scope) => {
    // The plane's token never leaves this machine: a peer may bind every interface (or a public
    // address) for its MCPv2 callers, but its /mcp answers loopback callers only, whatever Host
    // they claim (a Host header is the caller's to write).
    scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const ip = canonicalIp(request.ip) ?? request.ip;
      if (!isLoopback(ip)) return refuse(reply, 403, MCP_SERVER_ERROR, "Forbidden: MCP on a peer's port answers callers on this machine (loopback) only");
    });
    // After the route's own onRequest hooks (Host, Origin, the token), so only an authenticated
    // request spends, and with the body parsed: the peer's depth cap and its rate budgets.
    scope.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
      const body = request.body;
      if (nestsDeeperThan(body, MAX_JSON_DEPTH)) {
        return refuse(reply, 400, JSONRPC_INVALID_PARAMS, `Invalid params: the request nests deeper than ${MAX_JSON_DEPTH} levels; the cap is ${MAX_JSON_DEPTH}`, firstRequestId(body));
      }
      const principal = (request.raw as { auth?: { clientId?: string } }).auth?.clientId ?? PRINCIPAL_ANONYMOUS;
      const own = options.requestLimiter.take(principal);
      const address = own.ok ? options.addressLimiter.take(canonicalIp(request.ip) ?? request.ip) : own;
      if (!address.ok) {
        const message = own.ok ? 'rate limited: too many requests from this address (all its MCP and MCPv2 callers together)' : 'rate limited: too many MCP requests to this peer';
        reply.header('retry-after', String(Math.ceil(address.retryAfterMs / 1000)));
        return refuse(reply, 429, JSONRPC_RATE_LIMITED, message, firstRequestId(body));
      }
    });
    route = await registerMcpRoute(scope, { factory, token, logger: options.logger });
  });
  if (!route) throw new Error('the MCP route was not registered');
  return route;
}
