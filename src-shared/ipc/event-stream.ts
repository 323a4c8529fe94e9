/**
 * The live half of the contract client, written once for every transport: a stream of plane
 * events that survives dropped connections and resumes from the last journal seq it saw.
 *
 * The journal is the only cursor (docs/DESIGN.md, "the stream is a view of the journal"):
 * - on every (re)connect the stream asks `journal.changes` for what happened after the last
 *   seq it delivered, delivers that as one `journal.appended` before any live event (live
 *   events arriving meanwhile are held back), and then calls `onSync` so the client re-reads
 *   the snapshots (plane status, peers), which are resent whole rather than replayed;
 * - the first connect, a plane that cannot list what changed (too much, or not its journal)
 *   and a journal that is not the one followed before give `onSync({reset: true})`: re-read
 *   every view;
 * - a `journal.appended` at or below the last seq is a duplicate (or was covered by a
 *   catch-up) and is dropped; one that starts past the next seq means something was missed
 *   (a reordered or lost message), and triggers the same catch-up instead of being applied
 *   out of order. So duplicates and reordering cost at most one `journal.changes`, never a
 *   lost run.
 *
 * Every message is validated against the contract's event schemas here: a transport hands
 * over what it received, unchecked.
 */
import { PlaneEventSchema, type JournalChanges, type PlaneEvent } from './contract';
import type { Result } from './result';

export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'closed';

export interface RawChannelHandlers {
  /** Events flow from now on: the stream asks what it missed. */
  onOpen(): void;
  /** One message as it arrived; validated by the stream. */
  onMessage(raw: unknown): void;
  onClose(): void;
}

/** One transport's event channel: each `connect` is one connection, closed for good by `close`. */
export interface RawEventChannel {
  connect(handlers: RawChannelHandlers): { close(): void };
}

export interface SyncInfo {
  /** The journal seq the client is now current to. */
  head: number;
  /** True: re-read every view. False: only the snapshots (the journal's changes were delivered). */
  reset: boolean;
}

export interface EventStreamHandlers {
  /** Events in order; each journal seq is covered by exactly one delivered `journal.appended`. */
  onEvent(event: PlaneEvent): void;
  /** After every (re)connect's catch-up. */
  onSync(sync: SyncInfo): void;
  onState(state: ConnectionState): void;
}

export interface ReconnectTiming {
  /** Reconnect delays grow from min to max (ms). */
  minDelayMs?: number;
  maxDelayMs?: number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

export interface ResumeOptions extends ReconnectTiming {
  /** `journal.changes` through the client (validated there). */
  changes(afterSeq: number | null): Promise<Result<JournalChanges>>;
}

export function openResumableEvents(channel: RawEventChannel, handlers: EventStreamHandlers, options: ResumeOptions): () => void {
  const minDelay = options.minDelayMs ?? 250;
  const maxDelay = options.maxDelayMs ?? 5000;
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));

  /** The last journal seq delivered; null until the first catch-up answered. */
  let lastSeq: number | null = null;
  let journalId: string | null = null;
  let closed = false;
  let syncing = false;
  /** The current connection has caught up once: until then every event waits in `held`. */
  let ready = false;
  let held: PlaneEvent[] = [];
  let drop: (() => void) | null = null;
  let retryTimer: unknown = null;
  let delay = minDelay;
  let everConnected = false;
  /** Bumped per connection: an answer that arrives after its connection dropped is ignored. */
  let generation = 0;

  const receive = (event: PlaneEvent): void => {
    if (syncing || !ready || lastSeq === null) {
      held.push(event);
      return;
    }
    if (event.name !== 'journal.appended') {
      handlers.onEvent(event);
      return;
    }
    const { fromSeq, seq } = event.payload;
    if (seq <= lastSeq) return;
    if (fromSeq <= lastSeq + 1) {
      lastSeq = seq;
      handlers.onEvent(event);
      return;
    }
    held.push(event);
    void catchUp(false, generation);
  };

  const catchUp = async (reconnected: boolean, gen: number): Promise<void> => {
    if (syncing || closed) return;
    syncing = true;
    let answer: Result<JournalChanges>;
    try {
      answer = await options.changes(lastSeq);
    } catch (error) {
      answer = { ok: false, error: { code: 'AP_UNAVAILABLE', message: String(error) } };
    }
    if (closed || gen !== generation) return;
    syncing = false;
    if (!answer.ok) {
      // The channel is up but the catch-up failed: drop it and let the retry loop take over.
      drop?.();
      return;
    }
    const changes = answer.value;
    const reset = lastSeq === null || changes.truncated || changes.journalId !== journalId || changes.head < lastSeq;
    journalId = changes.journalId;
    if (reset) {
      lastSeq = changes.head;
      handlers.onSync({ head: changes.head, reset: true });
    } else {
      const from = lastSeq! + 1;
      if (changes.head > lastSeq!) {
        lastSeq = changes.head;
        handlers.onEvent({ name: 'journal.appended', payload: { fromSeq: from, seq: changes.head, runs: changes.runs } });
      }
      if (reconnected) handlers.onSync({ head: lastSeq!, reset: false });
    }
    if (reconnected) {
      ready = true;
      delay = minDelay;
      everConnected = true;
      handlers.onState('connected');
    }
    const pending = held;
    held = [];
    for (const event of pending) receive(event);
  };

  const scheduleReconnect = () => {
    if (closed || retryTimer !== null) return;
    handlers.onState('reconnecting');
    retryTimer = setTimer(() => {
      retryTimer = null;
      connect();
    }, delay);
    delay = Math.min(maxDelay, delay * 2);
  };

  const connect = () => {
    if (closed) return;
    if (!everConnected) handlers.onState('connecting');
    const gen = ++generation;
    ready = false;
    let open = true;
    const onClose = () => {
      if (!open) return;
      open = false;
      syncing = false;
      held = [];
      scheduleReconnect();
    };
    const connection = channel.connect({
      onOpen: () => {
        if (open) void catchUp(true, gen);
      },
      onMessage: (raw) => {
        if (!open) return;
        const parsed = PlaneEventSchema.safeParse(raw);
        // A message that is not an event of the contract is ignored; the seq check catches anything lost.
        if (parsed.success) receive(parsed.data);
      },
      onClose,
    });
    drop = () => {
      connection.close();
      onClose();
    };
  };

  connect();
  return () => {
    closed = true;
    if (retryTimer !== null) clearTimer(retryTimer);
    drop?.();
    handlers.onState('closed');
  };
}
