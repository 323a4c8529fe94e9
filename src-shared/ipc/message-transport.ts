/**
 * The contract over any message channel: an in-memory linked pair (tests, the CLI's own
 * in-process plane), a Node child process's IPC channel or an Electron `utilityProcess` port.
 * The server end is `serveContract` (src-main/plane/serve-contract.ts).
 *
 * Every message is a plain JSON object with a `type` field, so the same code runs over
 * `process.send` / `child.on('message')`, `parentPort.postMessage` or the linked pair, which
 * serialises each message to JSON and back so that nothing but JSON ever crosses:
 *
 *   client → server  {type: 'invoke', id, command, request}
 *                    {type: 'subscribe', subscription}   {type: 'unsubscribe', subscription}
 *   server → client  {type: 'reply', id, result}          result: the `{ok, …}` envelope
 *                    {type: 'subscribed', subscription}    events flow from here on
 *                    {type: 'event', subscription, event}  event: `{name, payload}`
 *
 * A channel delivers in order. When it closes, every invoke still waiting fails (the client
 * reports AP_UNAVAILABLE) and subscriptions see their connection close; the next use opens a
 * new port through `open`, so a restarted server is reconnected to.
 */
import { z } from 'zod';
import type { CommandName } from './contract';
import type { ContractTransport } from './client';
import type { RawChannelHandlers } from './event-stream';

/** One end of a message channel (the MCP SDK's Transport shape: start, send, close). */
export interface MessagePort {
  /** Starts delivery: messages and the close arrive at these handlers, asynchronously. */
  start(handlers: { message(message: unknown): void; close(): void }): void;
  /** Sends one plain-JSON message; throws when the port is closed. */
  send(message: ClientMessage | ServerMessage): void;
  close(): void;
}

const Id = z.number().int().nonnegative();

export const ClientMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('invoke'), id: Id, command: z.string(), request: z.unknown() }),
  z.object({ type: z.literal('subscribe'), subscription: Id }),
  z.object({ type: z.literal('unsubscribe'), subscription: Id }),
]);
export type ClientMessage = z.infer<typeof ClientMessageSchema>;

export const ServerMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('reply'), id: Id, result: z.unknown() }),
  z.object({ type: z.literal('subscribed'), subscription: Id }),
  z.object({ type: z.literal('event'), subscription: Id, event: z.unknown() }),
]);
export type ServerMessage = z.infer<typeof ServerMessageSchema>;

interface Connection {
  port: MessagePort;
  closed: boolean;
  waiting: Map<number, { resolve(result: unknown): void; reject(error: Error): void }>;
  subscriptions: Map<number, RawChannelHandlers>;
}

/** A `ContractTransport` over ports from `open`, called again whenever the last one closed. */
export function createMessageTransport(open: () => MessagePort): ContractTransport {
  let current: Connection | null = null;
  let nextId = 0;

  const connection = (): Connection => {
    if (current && !current.closed) return current;
    const port = open();
    const conn: Connection = { port, closed: false, waiting: new Map(), subscriptions: new Map() };
    current = conn;
    port.start({
      message(raw) {
        const parsed = ServerMessageSchema.safeParse(raw);
        if (!parsed.success) return;
        const message = parsed.data;
        if (message.type === 'reply') {
          const waiter = conn.waiting.get(message.id);
          conn.waiting.delete(message.id);
          waiter?.resolve(message.result);
        } else if (message.type === 'subscribed') {
          conn.subscriptions.get(message.subscription)?.onOpen();
        } else {
          conn.subscriptions.get(message.subscription)?.onMessage(message.event);
        }
      },
      close() {
        if (conn.closed) return;
        conn.closed = true;
        for (const waiter of conn.waiting.values()) waiter.reject(new Error('the connection to the plane closed'));
        conn.waiting.clear();
        const subscriptions = [...conn.subscriptions.values()];
        conn.subscriptions.clear();
        for (const handlers of subscriptions) handlers.onClose();
      },
    });
    return conn;
  };

  return {
    invoke(command: CommandName, request: unknown): Promise<unknown> {
      return new Promise((resolve, reject) => {
        const conn = connection();
        const id = nextId++;
        conn.waiting.set(id, { resolve, reject });
        try {
          conn.port.send({ type: 'invoke', id, command, request: request ?? {} });
        } catch (error) {
          conn.waiting.delete(id);
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
    },
    connectEvents(handlers) {
      const conn = connection();
      const subscription = nextId++;
      conn.subscriptions.set(subscription, handlers);
      try {
        conn.port.send({ type: 'subscribe', subscription });
      } catch {
        conn.subscriptions.delete(subscription);
        queueMicrotask(() => handlers.onClose());
      }
      return {
        close() {
          if (!conn.subscriptions.delete(subscription)) return;
          try {
            conn.port.send({ type: 'unsubscribe', subscription });
          } catch {
            // The port is already closed: nothing flows to this subscription anyway.
          }
          handlers.onClose();
        },
      };
    },
  };
}

/**
 * Two ports joined back to back, in memory (the MCP SDK's `InMemoryTransport.createLinkedPair`).
 * What one end sends the other receives, in order and asynchronously (a later microtask, never
 * inside `send`), after a round trip through JSON: a Map, a Date or an undefined field arrives
 * as it would over a real channel. Closing either end closes both.
 */
export function createLinkedPair(): [MessagePort, MessagePort] {
  interface End {
    handlers: { message(message: unknown): void; close(): void } | null;
    inbox: unknown[];
    closeDelivered: boolean;
  }
  const ends: [End, End] = [
    { handlers: null, inbox: [], closeDelivered: false },
    { handlers: null, inbox: [], closeDelivered: false },
  ];
  let closed = false;

  const drain = (end: End) => {
    if (!end.handlers) return;
    for (const message of end.inbox.splice(0)) end.handlers.message(message);
  };
  const deliverClose = (end: End) => {
    if (!closed || !end.handlers || end.closeDelivered) return;
    end.closeDelivered = true;
    end.handlers.close();
  };

  const port = (self: End, other: End): MessagePort => ({
    start(handlers) {
      self.handlers = handlers;
      queueMicrotask(() => {
        drain(self);
        deliverClose(self);
      });
    },
    send(message) {
      if (closed) throw new Error('the port is closed');
      other.inbox.push(JSON.parse(JSON.stringify(message)) as unknown);
      queueMicrotask(() => drain(other));
    },
    close() {
      if (closed) return;
      closed = true;
      // After what was already sent: a close never overtakes a message.
      queueMicrotask(() => {
        for (const end of ends) {
          drain(end);
          deliverClose(end);
        }
      });
    },
  });
  return [port(ends[0], ends[1]), port(ends[1], ends[0])];
}
