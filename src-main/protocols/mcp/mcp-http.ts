/**
 * MCP over Streamable HTTP, as a fastify plugin scoped to one path (`/mcp`): the official SDK
 * speaks the wire, this module governs who may use it.
 *
 * Two revisions on one URL:
 * - 2026-07-28 (a request carrying the per-request `_meta` envelope) goes to the SDK's
 *   `createMcpHandler`, which is stateless: one factory call per request. `legacy: 'reject'`,
 *   because 2025-era traffic is routed here instead, to the sessionful path.
 * - 2025-11-25 (everything `classifyInboundRequest` calls legacy: `initialize`, traffic without
 *   the envelope) gets a session: one `NodeStreamableHTTPServerTransport` and one server per
 *   session, kept in a table that says whose it is (mcp-sessions.ts). The stateless legacy
 *   fallback of `createMcpHandler` would serve the revision too, but without sessions there is
 *   nothing to own, to count or to close.
 *
 * In the scope, in this order, before anything reaches the SDK: Host, then Origin (DNS
 * rebinding: a page on another site must not reach a loopback server through the browser), then
 * the bearer token. The token is compared in constant time, and it is never logged: log lines
 * carry the principal (`mcp:local`), never the credential, and a digest of a session id, never
 * the id (mcp-sessions.ts).
 *
 * No SSE keep-alive (`keepAliveMs: 0`): a comment frame every 15 s keeps an idle stream looking
 * alive to a proxy, which is the point for a public server and the opposite of what a loopback
 * plane wants, where a stream with nothing to say should be seen as idle (docs/GOVERNED-RUNTIME.md
 * makes the same call for A2A streams: "The stream is a view of the journal, not an event bus").
 *
 * After `reply.hijack()` fastify no longer answers a thrown error, and the request would hang:
 * every path below ends in a written response, including the catch.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { NO_ROUTE_SCHEMAS } from '../../base/fastify-schemas';
import {
  type AuthInfo,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  type ServerNotifier,
  classifyInboundRequest,
  createMcpHandler,
  isInitializeRequest,
} from '@modelcontextprotocol/server';
import { NodeStreamableHTTPServerTransport, toNodeHandler } from '@modelcontextprotocol/node';
import { localhostHostValidation, localhostOriginValidation } from '@modelcontextprotocol/fastify';
import type { Logger } from '../../base/logger';
import { errorFields } from '../../base/logger';
import { secretsEqual } from '../../base/constant-time';
import { PRINCIPAL_ANONYMOUS, PRINCIPAL_LOCAL, type McpCaller, type McpServerFactory } from './mcp-factory';
import { SessionEventStore } from './mcp-event-store';
import { LegacySessions, sessionRef, type LegacySession } from './mcp-sessions';
import { bearerChallenge, resourceMetadata, resourceMetadataUrls } from './resource-metadata';
import {
  JSONRPC_INTERNAL_ERROR,
  JSONRPC_INVALID_REQUEST,
  JSONRPC_PARSE_ERROR,
  MCP_MAX_BODY_BYTES,
  MCP_SERVER_ERROR,
  MCP_SESSION_NOT_FOUND,
  firstRequestId,
  isUnparsable,
  jsonRpcErrorBody,
  messagesOf,
  parseJsonBody,
  requestIdsOf,
  writeJsonRpcError,
} from './mcp-json';

export interface McpHttpOptions {
  factory: McpServerFactory;
  /** The bearer token a caller must present; null: no auth (the conformance fixtures only). */
  token: string | null;
  logger: Logger;
  /** Live 2025-11-25 sessions one principal may hold (8). */
  maxSessionsPerCaller?: number;
}

export interface McpRoute {
  sessionCount(): number;
  /** Publishes list-changed events to the open 2026-07-28 `subscriptions/listen` streams. */
  notify: ServerNotifier;
  /** Closes the live sessions and their transports, and the open 2026-07-28 streams. */
  close(): Promise<void>;
}

/**
 * Older revision labels read as the session's own revision on an existing 2025-11-25 session.
 * The session can only have been opened at 2025-11-25 (the server's `initialize` counter-offers
 * that for anything older, which is where an older revision is refused); a client that then
 * labels a follow-up request with an older `MCP-Protocol-Version` (the 0.1.16 conformance suite
 * sends 2025-03-26 inside its sessions) is still talking inside the session this plane
 * negotiated, and is answered in that session's dialect rather than dropped or downgraded. Any
 * other label (an unknown or future one) still reaches the transport as sent and is refused.
 */
const OLDER_REVISION_LABELS = new Set(['2025-06-18', '2025-03-26']);
/** How long a 2025-11-25 client waits before reconnecting a closed SSE stream (the `retry:` field). */
const SSE_RETRY_MS = 1000;
/** Distinct modern callers remembered for the once-per-caller version log line. */
const MAX_LOGGED_MODERN_CALLERS = 1024;

type AuthedRequest = IncomingMessage & { auth?: AuthInfo };

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function principalOf(req: IncomingMessage): string {
  return (req as AuthedRequest).auth?.clientId ?? PRINCIPAL_ANONYMOUS;
}

function clientOf(body: unknown): { client?: string; clientVersion?: string; requested?: string } {
  const first = messagesOf(body)[0];
  const params = first?.params as Record<string, unknown> | undefined;
  const meta = params?._meta as Record<string, unknown> | undefined;
  const info = (first?.method === 'initialize' ? params?.clientInfo : meta?.[CLIENT_INFO_META_KEY]) as { name?: unknown; version?: unknown } | undefined;
  const requested = first?.method === 'initialize' ? params?.protocolVersion : meta?.[PROTOCOL_VERSION_META_KEY];
  return {
    client: typeof info?.name === 'string' ? info.name.slice(0, 200) : undefined,
    clientVersion: typeof info?.version === 'string' ? info.version.slice(0, 100) : undefined,
    requested: typeof requested === 'string' ? requested.slice(0, 40) : undefined,
  };
}

function negotiatedVersion(server: LegacySession['server']): string | undefined {
  return ('server' in server ? server.server : server).getNegotiatedProtocolVersion();
}

/** See OLDER_REVISION_LABELS. The SDK's Node adapter reads `rawHeaders`, its web adapter `headers`: both are set. */
function relabelOlderRevision(req: IncomingMessage, session: LegacySession): void {
  const label = header(req, 'mcp-protocol-version');
  const negotiated = negotiatedVersion(session.server);
  if (label === undefined || negotiated === undefined || !OLDER_REVISION_LABELS.has(label)) return;
  req.headers['mcp-protocol-version'] = negotiated;
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === 'mcp-protocol-version') req.rawHeaders[i + 1] = negotiated;
  }
}

export async function registerMcpRoute(app: FastifyInstance, options: McpHttpOptions & { path?: string }): Promise<McpRoute> {
  const path = options.path ?? '/mcp';
  const { factory, logger, token } = options;
  const sessions = new LegacySessions(options.maxSessionsPerCaller ?? 8);
  const loggedModernCallers = new Set<string>();

  const modernHandler = createMcpHandler((ctx) => factory({ principal: ctx.authInfo?.clientId ?? PRINCIPAL_ANONYMOUS, era: 'modern' }), {
    legacy: 'reject',
    keepAliveMs: 0,
    onerror: (error) => logger.log('debug', 'mcp request refused or failed (2026-07-28)', errorFields(error)),
  });
  const modern = toNodeHandler(modernHandler);

  function logModernCaller(principal: string, body: unknown): void {
    const { client, clientVersion, requested } = clientOf(body);
    const key = JSON.stringify([principal, client, clientVersion, requested]);
    if (loggedModernCallers.has(key)) return;
    if (loggedModernCallers.size >= MAX_LOGGED_MODERN_CALLERS) loggedModernCallers.clear();
    loggedModernCallers.add(key);
    logger.log('info', 'mcp caller (2026-07-28)', { principal, client, clientVersion, protocolVersion: requested });
  }

  async function openSession(req: IncomingMessage, res: ServerResponse, body: unknown, principal: string): Promise<void> {
    const place = sessions.reserveOrEvict(principal);
    if (!place.reserved) {
      const limit = sessions.maxPerPrincipal;
      writeJsonRpcError(res, 429, MCP_SERVER_ERROR, `too many MCP sessions: a caller may hold at most ${limit} live sessions, and all of yours are busy; close one (HTTP DELETE with its Mcp-Session-Id) before opening another`, {
        id: firstRequestId(body),
        data: { limit },
      });
      return;
    }
    if (place.evicted) {
      // At the cap: its least recently active idle session made room (mcp-sessions.ts). Already
      // forgotten, so its id answers 404 from now on; its transport and server close here.
      const evicted = place.evicted;
      logger.log('warn', 'mcp session closed to make room: the caller is at its session limit and this was its least recently active idle session', {
        principal,
        session: sessionRef(evicted.id),
        limit: sessions.maxPerPrincipal,
      });
      void evicted.transport.close().catch((error: unknown) => logger.log('debug', 'mcp session close failed', errorFields(error)));
    }
    const id = randomUUID();
    let session: LegacySession | undefined;
    let added = false;
    let server;
    let transport;
    try {
      const caller: McpCaller = { principal, sessionId: id, era: 'legacy' };
      server = factory(caller);
      transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        eventStore: new SessionEventStore(),
        retryInterval: SSE_RETRY_MS,
        keepAliveMs: 0,
        onsessioninitialized: () => {
          if (!session) return;
          sessions.add(session);
          added = true;
        },
      });
      session = { id, principal, transport, server, requestIds: new Set() };
      const opened = session;
      transport.onclose = () => {
        if (sessions.remove(id)) logger.log('info', 'mcp session closed', { principal, session: sessionRef(id) });
        void opened.server.close().catch(() => undefined);
      };
      await server.connect(transport);
      sessions.claimRequestIds(session, requestIdsOf(body));
      sessions.track(session, res, true);
      await transport.handleRequest(req, res, body);
      if (added) {
        const { client, clientVersion } = clientOf(body);
        logger.log('info', 'mcp session opened (2025-11-25)', { principal, session: sessionRef(id), client, clientVersion, protocolVersion: negotiatedVersion(server) });
      }
    } finally {
      // An initialize that was refused (bad params, an unsupported era) opened nothing: give the
      // place back. (Once added, the place is given back by the session's own close.)
      if (!added) {
        sessions.release(principal);
        if (transport) transport.onclose = undefined;
        await server?.close().catch(() => undefined);
      }
    }
  }

  async function serveLegacy(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const principal = principalOf(req);
    const sessionId = header(req, 'mcp-session-id');
    if (sessionId === undefined) {
      if (req.method === 'POST' && messagesOf(body).some((m) => isInitializeRequest(m))) return openSession(req, res, body, principal);
      writeJsonRpcError(res, 400, MCP_SERVER_ERROR, 'Bad Request: no Mcp-Session-Id header; a 2025-11-25 client opens a session with initialize first', { id: firstRequestId(body) });
      return;
    }
    const session = sessions.find(sessionId, principal);
    if (!session) {
      writeJsonRpcError(res, 404, MCP_SESSION_NOT_FOUND, 'Session not found', { id: firstRequestId(body) });
      return;
    }
    if (req.method === 'POST') {
      const repeated = sessions.claimRequestIds(session, requestIdsOf(body));
      if (repeated !== undefined) {
        writeJsonRpcError(res, 400, JSONRPC_INVALID_REQUEST, `Invalid Request: duplicate request id ${JSON.stringify(repeated)}: a request id must not be reused within a session`, { id: repeated });
        return;
      }
    }
    relabelOlderRevision(req, session);
    sessions.track(session, res, req.method === 'POST');
    await session.transport.handleRequest(req, res, body);
  }

  async function serve(request: FastifyRequest, res: ServerResponse): Promise<void> {
    const req = request.raw;
    const body = request.body;
    if (req.method === 'POST') {
      if (isUnparsable(body)) {
        writeJsonRpcError(res, 400, JSONRPC_PARSE_ERROR, 'Parse error: the request body is not valid JSON');
        return;
      }
      const inbound = classifyInboundRequest({
        httpMethod: 'POST',
        protocolVersionHeader: header(req, 'mcp-protocol-version'),
        mcpMethodHeader: header(req, 'mcp-method'),
        body,
      });
      if (inbound.kind === 'legacy') return serveLegacy(req, res, body);
      if (inbound.kind === 'modern') logModernCaller(principalOf(req), body);
      return modern(req, res, body);
    }
    // GET (a 2025-11-25 session's SSE stream) and DELETE (its end) name a session; without one they
    // are the 2026-07-28 handler's to answer (it has no such operations).
    if (header(req, 'mcp-session-id') !== undefined) return serveLegacy(req, res, body);
    return modern(req, res);
  }

  await app.register(async (guarded) => {
    guarded.addHook('onRequest', localhostHostValidation());
    guarded.addHook('onRequest', localhostOriginValidation());
    // RFC 9728 metadata (resource-metadata.ts), behind the same Host and Origin checks and
    // before the token: a host reads it to learn that this resource takes a bearer token. Not
    // served without a token (the conformance fixtures), where there is nothing to describe.
    if (token !== null) {
      for (const url of resourceMetadataUrls(path)) {
        guarded.get(url, async (request, reply) => reply.header('cache-control', 'no-store').send(resourceMetadata(request.raw, path)));
      }
    }
    await guarded.register(async (scope) => {
      scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
        const raw = request.raw as AuthedRequest;
        if (token === null) {
          raw.auth = { token: '', clientId: PRINCIPAL_ANONYMOUS, scopes: [] };
          return;
        }
        const presented = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
        if (presented === undefined || !secretsEqual(presented, token)) {
          const message = presented === undefined ? 'Unauthorized: send the plane\'s MCP token as "Authorization: Bearer <token>"' : 'Unauthorized: the bearer token is not the plane\'s MCP token';
          return reply.code(401).header('www-authenticate', bearerChallenge(request.raw, path)).header('content-type', 'application/json').send(jsonRpcErrorBody(MCP_SERVER_ERROR, message));
        }
        // The SDK forwards `req.auth` to the factory as `authInfo`; the token itself is not needed
        // past this check, so it is not carried (nothing downstream can log what it never holds).
        raw.auth = { token: '', clientId: PRINCIPAL_LOCAL, scopes: [] };
      });

      // Our own body parsing in this scope: fastify's answers bad JSON with its own 400 shape, an
      // MCP client expects JSON-RPC -32700. The body is handed to the SDK already parsed.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MCP_MAX_BODY_BYTES }, (request, text, done) => {
        const type = String(request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
        if (type !== 'application/json' && !type.endsWith('+json')) {
          done(Object.assign(new Error(`Unsupported Media Type: Content-Type must be application/json, not ${JSON.stringify(type.slice(0, 100))}`), { statusCode: 415 }));
          return;
        }
        done(null, parseJsonBody(String(text)));
      });
      scope.setErrorHandler((error: Error & { statusCode?: number; code?: string }, _request, reply) => {
        const status = error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? 413 : (error.statusCode ?? 500);
        const message =
          status === 413
            ? `Payload Too Large: an MCP request body may be at most ${MCP_MAX_BODY_BYTES / 1024 / 1024} MiB`
            : status >= 500
              ? 'Internal error'
              : error.message;
        if (status >= 500) logger.log('error', 'mcp request failed', errorFields(error));
        return reply.code(status).header('content-type', 'application/json').send(jsonRpcErrorBody(status === 413 ? JSONRPC_INVALID_REQUEST : status >= 500 ? JSONRPC_INTERNAL_ERROR : MCP_SERVER_ERROR, message));
      });

      scope.route({
        method: ['GET', 'POST', 'DELETE'],
        url: path,
        bodyLimit: MCP_MAX_BODY_BYTES,
        handler: async (request, reply) => {
          reply.hijack();
          try {
            await serve(request, reply.raw);
          } catch (error) {
            logger.log('error', 'mcp request failed', errorFields(error));
            writeJsonRpcError(reply.raw, 500, JSONRPC_INTERNAL_ERROR, 'Internal error', { id: firstRequestId(request.body) });
          }
        },
      });
    });
  });

  return {
    sessionCount: () => sessions.size,
    notify: modernHandler.notify,
    async close() {
      await Promise.allSettled(sessions.all().map((s) => s.transport.close()));
      await modernHandler.close();
    },
  };
}

export async function startMcpHttpServer(
  options: McpHttpOptions & { port: number; host?: string },
): Promise<{ port: number; url: string; notify: ServerNotifier; close(): Promise<void> }> {
  const host = options.host ?? '127.0.0.1';
  const app = Fastify({ logger: false, schemaController: NO_ROUTE_SCHEMAS, forceCloseConnections: true });
  const route = await registerMcpRoute(app, options);
  await app.listen({ port: options.port, host });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : options.port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    port,
    url: `http://${urlHost}:${port}/mcp`,
    notify: route.notify,
    async close() {
      await route.close();
      await app.close();
    },
  };
}
