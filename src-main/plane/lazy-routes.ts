/**
 * Routes whose server is loaded on their first request. A peer is a process of its own, and a
 * plane may run fifty: each one loading the MCP SDK (with its JSON Schema validator) and the A2A
 * server at start cost about a third of its start-up CPU and 11 MB of private memory
 * (docs/PERFORMANCE.md, "Fifty peers"), for protocols most peers are never called over. So a
 * peer registers only a light front for those URLs, with the rest of its routes, before it
 * listens (fastify takes no routes after that); the first request through the front loads the
 * server into an app of its own, and every request is handed to it, raw, to route.
 *
 * What the front keeps: the peer app's own root hooks (its Host and Origin checks, which run for
 * every route) run first, as they did when the routes were the peer app's; the body is left
 * unread for the loaded app, whose parsers and limits apply as before; nothing is answered by
 * the front except a load that failed (500, logged; the next request tries again).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { errorFields, type Logger } from '../base/logger';

/** An async value made on first use and shared by every caller after; made again if making it failed. */
export function loadOnce<T>(load: () => Promise<T>): { get(): Promise<T>; peek(): Promise<T> | undefined } {
  let pending: Promise<T> | undefined;
  return {
    get() {
      pending ??= load().catch((error: unknown) => {
        pending = undefined;
        throw error;
      });
      return pending;
    },
    peek: () => pending,
  };
}

/** A server loaded behind a front: the app it routes with (ready, never listening) and how to close it. */
export interface LoadedRoutes {
  app: FastifyInstance;
  close(): Promise<void>;
}

export interface LazyFront {
  /** Closes the loaded server, if a request ever loaded it. */
  close(): Promise<void>;
}

export interface LazyFrontOptions {
  /** The exact URLs the loaded app answers. */
  urls: readonly string[];
  /** What the front is for, in a log line: "mcp". */
  name: string;
  logger: Logger;
  /** Answers a request when loading failed. */
  failed(res: ServerResponse): void;
  load(): Promise<LoadedRoutes>;
}

/** Registers `urls` on `app` (before it listens), each handed to the app `load` makes on the first request. */
export async function mountLazily(app: FastifyInstance, options: LazyFrontOptions): Promise<LazyFront> {
  const server = loadOnce(async () => {
    const loaded = await options.load();
    await loaded.app.ready();
    return loaded;
  });
  await app.register(async (scope) => {
    // The loaded app parses the body under its own limits: the front leaves the stream unread.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    const forward = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      let loaded: LoadedRoutes;
      try {
        loaded = await server.get();
      } catch (error) {
        options.logger.log('error', `${options.name} could not be loaded`, errorFields(error));
        options.failed(reply.raw);
        return;
      }
      loaded.app.routing(request.raw, reply.raw);
    };
    for (const url of options.urls) scope.all(url, forward);
  });
  return {
    async close() {
      const loading = server.peek();
      if (!loading) return;
      const loaded = await loading.catch(() => undefined);
      if (!loaded) return;
      await loaded.close();
      await loaded.app.close();
    },
  };
}
