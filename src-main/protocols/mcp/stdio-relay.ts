/**
 * `agentplane mcp --stdio` beside a running plane: the host's stdio connection relayed, message
 * for message, to the plane's own MCP endpoint over HTTP (its URL and token from plane.json).
 * The CLI never opens a data dir a live plane holds, and a relay keeps one surface, one set of
 * idempotency keys and one journal writer: the plane's. The caller is the plane's token holder
 * (`mcp:local`), as any host configured with the token is.
 *
 * Messages cross unchanged. The SDK's HTTP client transport derives the 2026-07-28 headers
 * (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) from each request's own `_meta` envelope,
 * keeps the 2025-11-25 session id from the `initialize` answer, and opens the session's SSE
 * stream; what it cannot see is the version a 2025 `initialize` settled on, so the relay tells
 * it (`setProtocolVersion`) when that answer passes. A request the HTTP side could not deliver
 * (plane gone, 401, 4xx) is answered to the host as a JSON-RPC error for that id, never dropped:
 * a host waiting on an id nobody answers would hang.
 *
 * The host closing stdin ends the relay once every request read before it has been answered
 * (stdio-drain.ts; bounded by STDIO_DRAIN_MS, after which what is left is answered with an error).
 *
 * stdout is the protocol: nothing else is written there; the logger goes to stderr.
 */
import type { Readable, Writable } from 'node:stream';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { Logger } from '../../base/logger';
import { errorFields } from '../../base/logger';
import { drainingStdio } from './stdio-drain';

const INTERNAL_ERROR = -32603;

export interface StdioRelayOptions {
  url: string;
  token: string;
  logger: Logger;
  streams?: { stdin: Readable; stdout: Writable };
  /** How long after stdin closes unanswered requests are waited for (ms); STDIO_DRAIN_MS by default. */
  drainMs?: number;
}

type Message = JSONRPCMessage & { id?: string | number; method?: string; result?: { protocolVersion?: unknown }; error?: unknown };

export async function relayStdioToHttp(options: StdioRelayOptions): Promise<{ closed: Promise<void>; close(): Promise<void> }> {
  const streams = options.streams ?? { stdin: process.stdin, stdout: process.stdout };
  // The host closing stdin ends the relay only once every request read before it is answered
  // (or the drain deadline passed): closing the HTTP side at the EOF aborted them unanswered.
  const drain = drainingStdio(streams, { logger: options.logger, ...(options.drainMs !== undefined ? { drainMs: options.drainMs } : {}) });
  const down = new StdioServerTransport(drain.stdin, drain.stdout);
  const up = new StreamableHTTPClientTransport(new URL(options.url), { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } });
  /** An `initialize` sent up and not answered yet: what the host sends next waits for it (see below). */
  const opening = new Map<string | number, () => void>();
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => (resolveClosed = resolve));
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      await Promise.allSettled([up.close(), down.close()]);
      drain.release();
      resolveClosed();
    })();
    return closing;
  };

  const forward = (message: Message) =>
    up.send(message).catch((error: unknown) => {
      options.logger.log('warn', 'mcp relay: the plane did not take a message', { method: message.method, ...errorFields(error) });
      if (message.id !== undefined) opening.get(message.id)?.();
      if (message.id === undefined || message.method === undefined) return;
      const code = typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : INTERNAL_ERROR;
      const reply = { jsonrpc: '2.0' as const, id: message.id, error: { code, message: `the plane's MCP endpoint did not answer: ${(error as Error).message ?? String(error)}` } };
      void down.send(reply as JSONRPCMessage).catch(() => undefined);
    });
  // Messages go up in the order the host wrote them, and nothing passes an `initialize` until
  // its answer is back: the 2025-11-25 session id (and the version the HTTP transport must
  // send) come with that answer, so a request sent beside it would reach the plane without
  // them. A host that writes its handshake and requests in one go (and may close stdin right
  // after) is served as one that waited.
  let queue: Promise<void> = Promise.resolve();
  down.onmessage = (raw) => {
    const message = raw as Message;
    queue = queue.then(() => {
      if (message.method !== 'initialize' || message.id === undefined) {
        void forward(message);
        return;
      }
      const id = message.id;
      const answered = new Promise<void>((resolve) => opening.set(id, resolve));
      void forward(message);
      return answered;
    });
  };
  up.onmessage = (raw) => {
    const message = raw as Message;
    if (message.id !== undefined && message.method === undefined && opening.has(message.id)) {
      if (typeof message.result?.protocolVersion === 'string') up.setProtocolVersion(message.result.protocolVersion);
      const release = opening.get(message.id)!;
      opening.delete(message.id);
      release();
    }
    void down.send(message).catch((error: unknown) => options.logger.log('warn', 'mcp relay: could not write to the host', errorFields(error)));
  };
  up.onerror = (error) => options.logger.log('warn', 'mcp relay: HTTP side', errorFields(error));
  down.onerror = (error) => options.logger.log('warn', 'mcp relay: stdio side', errorFields(error));
  // The transport closing by itself (its stdout failed) ends the relay.
  down.onclose = () => void close();
  void drain.drained.then(() => close());
  await up.start();
  await down.start();
  return { closed, close };
}
