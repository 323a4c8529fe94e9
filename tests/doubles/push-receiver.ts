/**
 * An A2A push-notification receiver: a node:http server on 127.0.0.1 that records every POST it
 * accepts. The one receiver of the push tests of the plane's endpoint (protocols/a2a) and of a
 * peer's port (plane/peer-a2a), so what a delivery is judged by is written once.
 *
 * - Each accepted POST is recorded in `got`, in arrival order: the `X-AgentPlane-Event-Id`, the
 *   `X-A2A-Notification-Token` and `Authorization` headers, and the JSON body (a StreamResponse).
 * - `hits()` counts every request that arrived, refused or redirected ones included.
 * - `failFirst` answers 503 to that many requests first; `redirectTo` answers every request with a
 *   302 to that address (and records nothing); `answerAfterMs` records an event at once and
 *   answers its 200 that much later (a receiver slow to answer what it already has).
 * - `close()` also drops open connections: a sender's pooled keep-alive socket must not hold it open.
 *
 * `pushReceivers(cleanups)` makes receivers closed with the test file's other cleanups (in their
 * order: one started before the plane or peer is closed after it); `capturingLogger()` keeps the
 * lines the sender logs, where a test reads what it said about a delivery it could not make.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../src-main/base/logger';

export interface PushReceived {
  eventId: string;
  token: string | undefined;
  authorization: string | undefined;
  body: Record<string, Record<string, unknown>>;
}

export interface PushReceiverOptions {
  /** Answers 503 to this many requests before accepting any. */
  failFirst?: number;
  /** Answers every request with a 302 to this address. */
  redirectTo?: string;
  /** Records each accepted event at once and answers it 200 this many ms later. */
  answerAfterMs?: number;
}

export interface PushReceiver {
  origin: string;
  /** Where configs point: `<origin>/hook`. */
  url: string;
  got: PushReceived[];
  hits(): number;
  close(): Promise<void>;
}

export async function startPushReceiver(options: PushReceiverOptions = {}): Promise<PushReceiver> {
  const got: PushReceived[] = [];
  let hits = 0;
  let failures = options.failFirst ?? 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      hits++;
      if (options.redirectTo) {
        res.writeHead(302, { Location: options.redirectTo }).end();
        return;
      }
      if (failures > 0) {
        failures--;
        res.writeHead(503).end();
        return;
      }
      got.push({
        eventId: String(req.headers['x-agentplane-event-id']),
        token: req.headers['x-a2a-notification-token'] as string | undefined,
        authorization: req.headers.authorization,
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as PushReceived['body'],
      });
      if (options.answerAfterMs) setTimeout(() => res.writeHead(200).end(), options.answerAfterMs);
      else res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: `${origin}/hook`,
    got,
    hits: () => hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A maker of receivers, each one's `close` pushed onto `cleanups` (which the test file runs in reverse after each test). */
export function pushReceivers(cleanups: Array<() => Promise<void> | void>): (options?: PushReceiverOptions) => Promise<PushReceiver> {
  return async (options) => {
    const receiver = await startPushReceiver(options);
    cleanups.push(() => receiver.close());
    return receiver;
  };
}

/** A logger keeping each line as `<level> <message> <fields as JSON>`. */
export function capturingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, log: (level, message, fields) => lines.push(`${level} ${message} ${JSON.stringify(fields ?? {})}`) };
}
