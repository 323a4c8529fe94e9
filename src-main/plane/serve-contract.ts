/**
 * The server end of the contract over a message channel (src-shared/ipc/message-transport.ts):
 * an in-memory linked pair for tests and for a CLI that is its own plane, and the message
 * channel of a child process or an Electron `utilityProcess` hosting the plane. Commands go
 * through `plane.dispatch` exactly as over Electron IPC or the web bridge, and each reply is the
 * same `{ok, …}` envelope, checked by the client on arrival.
 *
 * A message that is not of the protocol is ignored: the other end is our own client, and a
 * malformed message from it has no id to answer to.
 */
import type { ContractTransport } from '../../src-shared/ipc/client';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { ClientMessageSchema, createLinkedPair, createMessageTransport, type MessagePort, type ServerMessage } from '../../src-shared/ipc/message-transport';
import type { CallContext } from './dispatch';
import type { Plane } from './plane';

export function serveContract(port: MessagePort, plane: Pick<Plane, 'dispatch' | 'events'>, context: CallContext = { transport: 'local' }): () => void {
  const subscriptions = new Map<number, () => void>();
  let closed = false;

  const send = (message: ServerMessage) => {
    if (closed) return;
    try {
      port.send(message);
    } catch {
      // The other end went away between the request and the answer: nobody is left to tell.
    }
  };

  const stopAll = () => {
    closed = true;
    for (const unsubscribe of subscriptions.values()) unsubscribe();
    subscriptions.clear();
  };

  port.start({
    message(raw) {
      const parsed = ClientMessageSchema.safeParse(raw);
      if (!parsed.success) return;
      const message = parsed.data;
      if (message.type === 'invoke') {
        void plane.dispatch(message.command, message.request, context).then(
          (result) => send({ type: 'reply', id: message.id, result }),
          () => send({ type: 'reply', id: message.id, result: { ok: false, error: { code: ErrorCode.Internal, message: `${message.command} failed inside the plane` } } }),
        );
      } else if (message.type === 'subscribe') {
        if (subscriptions.has(message.subscription)) return;
        const subscription = message.subscription;
        subscriptions.set(
          subscription,
          plane.events.subscribe((event) => send({ type: 'event', subscription, event })),
        );
        // Events published from here on follow this message on the same ordered channel.
        send({ type: 'subscribed', subscription });
      } else {
        subscriptions.get(message.subscription)?.();
        subscriptions.delete(message.subscription);
      }
    },
    close: stopAll,
  });

  return () => {
    stopAll();
    port.close();
  };
}

/**
 * The contract to a plane in this process, through a linked pair of ports: what the CLI uses
 * when it is the plane for its run, and what tests use. Nothing but JSON crosses, as it would
 * between processes, so a caller here cannot rely on anything a real transport would lose.
 */
export function inProcessTransport(plane: Pick<Plane, 'dispatch' | 'events'>): ContractTransport {
  return createMessageTransport(() => {
    const [client, server] = createLinkedPair();
    serveContract(server, plane);
    return client;
  });
}
