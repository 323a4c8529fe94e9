/**
 * A2A 1.0 on a peer's own port: its skills served to A2A clients at
 * `http://127.0.0.1:<peer port>/` — a directory card at `/.well-known/agent-card.json`, one card
 * per skill at `/a2a/<skill>/.well-known/agent-card.json`, the JSON-RPC interface at
 * `/a2a/<skill>` — by the same code that serves the plane's agents (protocols/a2a/a2a-server.ts),
 * exactly as plane/peer-mcp.ts reuses the MCP surface. Only the door differs: `peerDoor`
 * (plane/peer-door.ts) answers the plane's commands with handlers over this peer's runtime, so an A2A
 * task is a skill run like any other: admitted in this peer's runtime (host `peer:<id>`),
 * journaled, metered, replayed; a task belongs to the caller that admitted it.
 *
 * Who may call: the same as the peer's `/mcp` — a holder of the data dir's MCP token
 * (`mcp-address.json`, loadOrCreateMcpToken), from a loopback address. The caller is principal
 * `a2a:local` (a2a-server.ts), so the peer's policy is asked about `a2a:local`: the bundled
 * policy grants it `mcpv2:skill.call` on `skill:*`, as it does `mcp:local`; without that grant
 * every SendMessage is answered by a decline Message (a2a-server.ts declineOf).
 * Cards stay public (a caller reads a card before it has credentials), but only to loopback
 * callers here: the peer's MCPv2 callers on other interfaces are not A2A callers.
 *
 * Push notifications, served exactly as on the plane's endpoint and by the same wiring
 * (a2a-push-wiring.ts): the cards say `pushNotifications: true` and the push methods answer.
 * What is the peer's own: its store, `<dataDir>/peers/<id>/a2a-push.json` (`pushDir`), because a
 * peer is its own process beside the plane and other peers on one data dir and a store's file is
 * replaced whole from one process's memory; its netguard, the peer's (peer-host.ts), honouring
 * the data dir's outbound allow list, so a loopback receiver needs an allow entry here as there;
 * and its journal notifications, `peerDoor`'s onJournal (this process's own commits, where every
 * run it hosts appends, a decision made at the plane included, through the runtime's follower).
 * The worker resumes from each config's durable cursor when the peer starts again, and the peer's
 * close awaits it (the handle mountPeerA2a answers).
 *
 * Signing: a peer holds no signing key of its own (its identity to other peers is the MCPv2
 * secret and, with mTLS, a certificate — neither is an Ed25519 JWS key), so its cards are signed
 * with the data dir's plane key, the key the plane's own cards carry: a client pinning the
 * plane's key accepts the peer's cards as the same publisher's.
 *
 * Mounted as an encapsulated fastify plugin holding only these paths: the body is left unread
 * for a2a-server.ts (which reads it under its own 1 MiB cap), and the peer app's root hooks
 * still run first (a Host that is not the peer's own address is 403, so is any Origin). The
 * server itself (a2a-server.ts and what it imports) is loaded on the first request to these
 * paths, as the peer's MCP server is (plane/lazy-routes.ts); the push worker starts with the peer,
 * so a config stored before a restart is delivered without waiting for a call.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../base/logger';
import { loadOrCreatePlaneKey } from '../journal/plane-key';
import { loopbackGuard } from '../net/loopback-guard';
import type { Netguard } from '../net/netguard';
import { canonicalIp } from '../peers/session-token';
import { errorFields } from '../base/logger';
import { A2A_ERRORS, RpcError, rpcErrorBody } from '../protocols/a2a/a2a-wire';
import { loadOnce } from './lazy-routes';
import { startA2aPush } from './a2a-push-wiring';
import { loadOrCreateMcpToken } from './mcp-address';
import { peerDoor, peerMcpUrl, type PeerDoorDeps } from './peer-door';

export interface PeerA2aOptions extends PeerDoorDeps {
  version: string;
  logger: Logger;
  /** The bound port (known once the peer listens; cards are built per request). */
  port: () => number;
  /** How long a blocking SendMessage waits for its run (ms); tests shorten it. */
  blockMs?: number;
  /** The peer's own folder: its push store lives there, never in the plane's file. */
  pushDir: string;
  /** The peer's netguard: every push POST leaves through it. */
  netguard: Netguard;
}

export interface PeerA2a {
  /** Stops the push worker (awaited by the peer's close, before its runtime and journal close). */
  close(): Promise<void>;
}

function isLoopback(ip: string): boolean {
  return ip === '::1' || /^127\./.test(ip);
}

/** Mounts the A2A routes on the peer's app (before it listens); answers the handle its close awaits. */
export async function mountPeerA2a(app: FastifyInstance, options: PeerA2aOptions): Promise<PeerA2a> {
  const token = loadOrCreateMcpToken(options.dataDir);
  // One door for the handler and the push worker: the worker reads tasks as their owner through it.
  const door = peerDoor({ ...options, via: 'a2a' });
  // Started here, closed below if anything after it throws: a peer that fails to mount leaves no
  // worker following its journal.
  const pushWiring = startA2aPush({ dir: options.pushDir, door, netguard: options.netguard, logger: options.logger });
  try {
    // The server and the plane key its cards are signed with, on the first request (see above).
    const handler = loadOnce(async () => {
      const { createA2aHandler } = await import('../protocols/a2a/a2a-server');
      return createA2aHandler({
        host: `peer:${options.peerId}`,
        door,
        push: pushWiring.push,
        token,
        key: await loadOrCreatePlaneKey(options.dataDir),
        guard: loopbackGuard(options.port),
        origin: () => `http://127.0.0.1:${options.port()}`,
        version: options.version,
        logger: options.logger,
        ...(options.blockMs !== undefined ? { blockMs: options.blockMs } : {}),
      });
    });
    await app.register(async (scope) => {
      // a2a-server.ts reads the body itself, under its cap; fastify must leave the stream unread.
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
      scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
        const ip = canonicalIp(request.ip) ?? request.ip;
        if (!isLoopback(ip)) return reply.code(403).send(rpcErrorBody(null, new RpcError(A2A_ERRORS.invalidRequest, "A2A on a peer's port answers callers on this machine (loopback) only")));
      });
      const serve = async (request: FastifyRequest, reply: FastifyReply) => {
        reply.hijack();
        let handle: Awaited<ReturnType<typeof handler.get>>;
        try {
          handle = await handler.get();
        } catch (error) {
          options.logger.log('error', `peer ${options.peerId}'s A2A server could not be loaded`, errorFields(error));
          reply.raw.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify(rpcErrorBody(null, new RpcError(A2A_ERRORS.internal, 'Internal error: the A2A server could not be loaded'))));
          return;
        }
        handle(request.raw, reply.raw);
      };
      scope.get('/.well-known/agent-card.json', serve);
      scope.all('/a2a/*', serve);
    });
  } catch (error) {
    await pushWiring.close();
    throw error;
  }
  return { close: () => pushWiring.close() };
}

/** Where a loopback A2A client reaches a peer bound at `bindHost` (its directory card's base), or null. */
export function peerA2aUrl(bindHost: string, port: number): string | null {
  return peerMcpUrl(bindHost, port)?.replace(/mcp$/, '') ?? null;
}
