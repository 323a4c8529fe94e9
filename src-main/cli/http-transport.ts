/**
 * The contract over a running plane's local API (the web bridge), for Node callers: the CLI,
 * scripts and tests. Commands are `POST /api/commands/<name>` with the bridge token as a bearer
 * header; events come over the `/api/events` WebSocket (the `ws` package: Node 20 has no global
 * WebSocket), with the same header, so the token never sits in a URL.
 *
 * Like every transport it moves bytes only: the answer goes up as parsed JSON (or, when the
 * body is not JSON, as the text itself), and the contract client checks it.
 */
import { request } from 'undici';
import WebSocket from 'ws';
import type { ContractTransport } from '../../src-shared/ipc/client';

export interface HttpTransportOptions {
  /** `http://127.0.0.1:<port>`: the plane's local API. */
  url: string;
  token: string;
  /** Who answers there, for the message when nothing does: "the plane for <dir> (pid <n>)". */
  name?: string;
  /** A command may run long (`runs.start` with `wait`). */
  timeoutMs?: number;
}

export function createHttpTransport(options: HttpTransportOptions): ContractTransport {
  const timeout = options.timeoutMs ?? 600_000;
  const who = options.name ?? 'the plane';
  return {
    async invoke(command, body) {
      let text: string;
      try {
        const response = await request(`${options.url}/api/commands/${encodeURIComponent(command)}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body ?? {}),
          headersTimeout: timeout,
          bodyTimeout: timeout,
        });
        text = await response.body.text();
      } catch (error) {
        throw new Error(`${who} did not answer at ${options.url}: ${(error as Error).message}`);
      }
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    },
    connectEvents(handlers) {
      const socket = new WebSocket(`${options.url.replace(/^http/, 'ws')}/api/events`, { headers: { authorization: `Bearer ${options.token}` } });
      socket.on('open', () => handlers.onOpen());
      socket.on('message', (data: WebSocket.RawData) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(String(data));
        } catch {
          return; // not JSON: not an event; the seq check catches anything lost
        }
        handlers.onMessage(parsed);
      });
      socket.on('close', () => handlers.onClose());
      // A refused upgrade or a reset: 'close' follows and the client retries.
      socket.on('error', () => undefined);
      return { close: () => socket.close() };
    },
  };
}
