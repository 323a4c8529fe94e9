/**
 * `/api`: the contract over HTTP (commands) and WebSocket (events). Every route here needs the
 * per-launch token, as `Authorization: Bearer <token>` (the scheme in any case, RFC 9110 §11.1,
 * as the peers accept it) or, on the WebSocket upgrade of `/api/events` only (a browser cannot
 * give a WebSocket headers), the `token` query parameter. A query token anywhere else is
 * ignored: URLs end up in logs, history and Referer headers, so a command never accepts one.
 * The check runs before the upgrade, so a socket is never opened for a caller without it.
 */
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { Plane } from '../plane/plane';
import { secretsEqual } from '../base/constant-time';
import { sendError } from './send-error';

interface ApiOptions {
  plane: Plane;
  token: string;
}

/** Route config of the one route that takes the token from the query string. */
interface TokenConfig {
  queryToken?: boolean;
}

function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header !== undefined) return /^bearer\s+(.+)$/i.exec(header)?.[1]?.trim();
  // `request.ws` is set by @fastify/websocket for a real upgrade request; the route must also
  // be the events socket, so an upgrade header on a command route does not unlock the query.
  if (!request.ws || (request.routeOptions.config as TokenConfig).queryToken !== true) return undefined;
  const query = request.query as Record<string, unknown> | undefined;
  const fromQuery = query?.token;
  return typeof fromQuery === 'string' ? fromQuery : undefined;
}

export const apiPlugin: FastifyPluginAsync<ApiOptions> = async (app, { plane, token }) => {
  app.addHook('onRequest', async (request, reply) => {
    reply.header('Cache-Control', 'no-store');
    const presented = presentedToken(request);
    if (presented === undefined || !secretsEqual(presented, token)) {
      reply.header('WWW-Authenticate', 'Bearer');
      return sendError(reply, { code: ErrorCode.Unauthorized, message: 'missing or wrong bridge token' });
    }
  });

  app.post<{ Params: { name: string } }>('/commands/:name', async (request, reply) => {
    const result = await plane.dispatch(request.params.name, request.body ?? {}, { transport: 'web' });
    if (!result.ok) return sendError(reply, result.error);
    return result;
  });

  app.get('/events', { websocket: true, config: { queryToken: true } satisfies TokenConfig }, (socket) => {
    // Live events (`{name, payload}`) from the moment of connection; the client asks
    // `journal.changes` for what it missed and drops duplicates by journal seq
    // (src-shared/ipc/event-stream.ts).
    const unsubscribe = plane.events.subscribe((event) => {
      if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(event));
    });
    socket.on('close', unsubscribe);
    socket.on('error', unsubscribe);
    // The channel is one-way; anything a client sends is ignored rather than parsed.
    socket.on('message', () => undefined);
  });

  // Everything else under /api is answered here (after the token check), so no /api path ever
  // falls through to the static UI's catch-all.
  app.all('/*', async (request, reply) =>
    sendError(reply, { code: ErrorCode.NotFound, message: `no API route ${request.method} ${request.url.split('?')[0]}` }),
  );
};
