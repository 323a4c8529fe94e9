/**
 * A transport to a real plane for tests that watch the client side (the renderer's store, the
 * benchmarks): the in-memory linked pair served by `serveContract`, plus what such a test needs
 * to see and to script: every command the client sent, in order; connections it can drop (a
 * plane restart, a lost socket); notifications it can publish itself (out of order, twice);
 * and commands it can make fail with any stable error code, answer outside the contract, or
 * not answer at all. Failures are answered by the server end, as a plane would send them.
 */
import type { ContractTransport } from '../../src-shared/ipc/client';
import type { CommandName } from '../../src-shared/ipc/contract';
import { ErrorCode, type ErrorBody } from '../../src-shared/ipc/errors';
import { createLinkedPair, createMessageTransport } from '../../src-shared/ipc/message-transport';
import { EventHub } from '../../src-main/plane/event-hub';
import type { Plane } from '../../src-main/plane/plane';
import { serveContract } from '../../src-main/plane/serve-contract';

/** How a scripted command fails: a refusal with a code, an answer outside the contract, or no answer. */
export type ScriptedFailure = ErrorBody | 'malformed' | 'unreachable';

export interface TestTransport {
  transport: ContractTransport;
  /** Every command the client sent, in order. */
  requests: CommandName[];
  /** Events for the client when `scriptedEvents` is set (the plane's own are not forwarded then). */
  events: EventHub;
  /** Closes every open connection, as a plane restart or a dropped socket would. */
  drop(): void;
  /** Makes every call of `command` fail this way until `fail(command, null)`. */
  fail(command: CommandName, failure: ScriptedFailure | null): void;
  /** How many connections have been opened so far. */
  readonly connections: number;
  /** Commands sent and not yet answered. */
  readonly inFlight: number;
}

export function testTransport(plane: Plane, options: { scriptedEvents?: boolean } = {}): TestTransport {
  const requests: CommandName[] = [];
  const failures = new Map<CommandName, ScriptedFailure>();
  const events = options.scriptedEvents ? new EventHub() : plane.events;
  const open: Array<() => void> = [];
  let connections = 0;
  let inFlight = 0;

  const served: Pick<Plane, 'dispatch' | 'events'> = {
    events,
    async dispatch(name, request, context) {
      const failure = failures.get(name as CommandName);
      if (failure === 'malformed') return { ok: true, value: { surprise: 'not what the contract says' } };
      if (failure !== undefined && failure !== 'unreachable') return { ok: false, error: failure };
      return plane.dispatch(name, request, context);
    },
  };
  const inner = createMessageTransport(() => {
    connections++;
    const [client, server] = createLinkedPair();
    open.push(serveContract(server, served));
    return client;
  });

  return {
    transport: {
      async invoke(command, request) {
        requests.push(command);
        inFlight++;
        try {
          if (failures.get(command) === 'unreachable') throw new Error('connection refused (scripted)');
          return await inner.invoke(command, request);
        } finally {
          inFlight--;
        }
      },
      connectEvents: (handlers) => inner.connectEvents(handlers),
    },
    requests,
    events,
    drop() {
      for (const stop of open.splice(0)) stop();
    },
    fail(command, failure) {
      if (failure === null) failures.delete(command);
      else failures.set(command, failure);
    },
    get connections() {
      return connections;
    },
    get inFlight() {
      return inFlight;
    },
  };
}

/** Every stable error code with a message naming it: for "fails with each code" tests. */
export const everyErrorBody: ErrorBody[] = Object.values(ErrorCode).map((code) => ({ code, message: `scripted ${code}` }));
