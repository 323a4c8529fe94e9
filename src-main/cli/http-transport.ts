/**
 * The contract over a running plane's local API (the web bridge), for Node callers: the CLI,
 * scripts and tests. Commands are `POST /api/commands/<name>` with the bridge token as a bearer
 * header; events come over the `/api/events` WebSocket (the `ws` package: Node 20 has no global
 * WebSocket), with the same header, so the token never sits in a URL.
 *
 * Like every transport it moves bytes only: the answer goes up as parsed JSON (or, when the
 * body is not JSON, as the text itself), and the contract client checks it.
 *
 * Commands go through `node:http`, not the undici package: the plane is on loopback over plain
 * HTTP/1.1, which Node's own client does as well, and loading undici from node_modules was the
 * largest single cost of a CLI call (149 ms of a 609 ms `agentplane runs list` in its CPU
 * profile; Node's own modules load from its snapshot). Node's default agent keeps the
 * connection alive between a command's calls and lets an idle one go when the process ends.
 */
import { request } from 'node:http';
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
        text = await postJson(`${options.url}/api/commands/${encodeURIComponent(command)}`, options.token, JSON.stringify(body ?? {}), timeout);
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

/**
 * POSTs `body` and resolves with the answer's text, whatever its status (the contract's failures
 * travel as 4xx and 5xx bodies). Rejects when no answer comes: refused, reset, or `timeoutMs`
 * without a byte moving either way.
 */
function postJson(url: string, token: string, body: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', reject);
    req.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      // A connection that breaks mid-answer errors ('aborted') and closes the response without 'end'.
      const cut = () => {
        if (!response.complete) reject(new Error('the connection closed before the whole answer arrived'));
      };
      response.once('error', cut);
      response.once('close', cut);
    });
    req.end(body);
  });
}
