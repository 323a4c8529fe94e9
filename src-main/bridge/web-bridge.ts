/**
 * The web bridge: the UI and the IPC contract over HTTP and WebSocket on loopback, for the
 * headless plane (`agentplane serve`) and for scripts. The same `plane.dispatch` serves it as
 * serves Electron IPC, so the two transports cannot disagree about what a command means.
 *
 * Order of refusals on every request (each tested):
 *   1. Host not this loopback address and port → 403 (DNS rebinding);
 *   2. Origin present and not the UI's own → 403 (cross-site requests from the user's browser);
 *   3. under /api: missing or wrong per-launch token → 401 (compared in constant time);
 *   4. body over the cap → 413; not JSON → 400; unknown command → 404; bad request → 400.
 * Static UI assets need no token: they are the same public files in every install and read no
 * plane state. Everything that acts or reads state is under /api and needs the token.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { NO_ROUTE_SCHEMAS } from '../base/fastify-schemas';
import websocket from '@fastify/websocket';
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { Plane } from '../plane/plane';
import { loopbackGuard } from '../net/loopback-guard';
import { apiPlugin } from './api-plugin';
import { sendError } from './send-error';
import { staticUiPlugin } from './static-ui-plugin';

export const BRIDGE_BODY_LIMIT = 1024 * 1024;

export interface WebBridgeOptions {
  plane: Plane;
  /** 0 picks a free port. */
  port: number;
  /** Loopback only unless the operator says otherwise; see docs/DESIGN.md's "Security baseline". */
  host?: string;
  /** The per-launch token; generated when absent. */
  token?: string;
  /** Folder of the built renderer; null serves no UI (API only). */
  rendererDir: string | null;
}

export interface WebBridge {
  readonly app: FastifyInstance;
  readonly port: number;
  readonly token: string;
  /** The address to open, token included: `http://127.0.0.1:<port>/?token=<token>`. */
  readonly url: string;
  close(): Promise<void>;
}

export async function buildBridgeApp(options: WebBridgeOptions & { token: string; port: number }): Promise<{
  app: FastifyInstance;
  boundPort: () => number;
}> {
  // forceCloseConnections: a browser's keep-alive socket must not hold up a clean shutdown.
  const app = Fastify({ logger: false, schemaController: NO_ROUTE_SCHEMAS, bodyLimit: BRIDGE_BODY_LIMIT, forceCloseConnections: true });
  // Commands are JSON only; a text/plain body is refused (415 → AP_BAD_REQUEST) rather than
  // parsed into a string that fails the schema with a less helpful message.
  app.removeContentTypeParser('text/plain');
  // Registered first: its onRequest hook marks upgrade requests so that, when one of our hooks
  // refuses an upgrade, its onResponse hook destroys the socket instead of leaving it open.
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  // Before listen the port is the requested one; after listen the bound one (for --ui-port 0).
  let boundPort = options.port;
  app.addHook('onListen', async () => {
    boundPort = (app.server.address() as AddressInfo).port;
  });
  const guard = loopbackGuard(() => boundPort);

  app.addHook('onRequest', async (request, reply) => {
    if (!guard.hostAllowed(request.headers.host)) {
      return sendError(reply, { code: ErrorCode.Forbidden, message: 'Host header is not this plane\'s loopback address' });
    }
    if (!guard.originAllowed(request.headers.origin)) {
      return sendError(reply, { code: ErrorCode.Forbidden, message: 'cross-origin requests are refused' });
    }
  });

  app.addHook('onSend', async (_request, reply, payload) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    // The token rides in the UI's first URL; no page may learn it through a Referer.
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('Cross-Origin-Opener-Policy', 'same-origin');
    reply.header('Cross-Origin-Resource-Policy', 'same-origin');
    return payload;
  });

  app.setErrorHandler((error: { code?: string; statusCode?: number }, _request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendError(reply, { code: ErrorCode.PayloadTooLarge, message: `request body exceeds ${BRIDGE_BODY_LIMIT} bytes` });
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendError(reply, { code: ErrorCode.BadRequest, message: 'send the request as application/json' });
    }
    if (error.statusCode === 400) {
      return sendError(reply, { code: ErrorCode.BadRequest, message: 'request body is not valid JSON' });
    }
    options.plane.logger.log('error', 'web bridge fault', { code: error.code });
    return sendError(reply, { code: ErrorCode.Internal, message: 'the web bridge failed; the plane\'s log has the detail' });
  });

  await app.register(apiPlugin, { prefix: '/api', plane: options.plane, token: options.token });
  if (options.rendererDir) await app.register(staticUiPlugin, { rendererDir: options.rendererDir });
  return { app, boundPort: () => boundPort };
}

export async function startWebBridge(options: WebBridgeOptions): Promise<WebBridge> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(32).toString('base64url');
  const { app, boundPort } = await buildBridgeApp({ ...options, token });
  await app.listen({ host, port: options.port });
  const port = boundPort();
  const urlHost = host.includes(':') ? `[${host}]` : host;
  return {
    app,
    port,
    token,
    url: `http://${urlHost}:${port}/?token=${token}`,
    close: () => app.close(),
  };
}
