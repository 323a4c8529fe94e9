/**
 * A resumable event stream over any raw channel (a WebSocket, Electron IPC). Written once so
 * both transports have the same reconnect semantics:
 *
 * - on every (re)connect it asks `events.since(epoch, lastSeq)` and delivers what was missed,
 *   in order, before any live event; live events that arrive meanwhile are held back;
 * - a live event that skips a seq triggers the same catch-up rather than being applied out of
 *   order; one at or below `lastSeq` is a duplicate and dropped;
 * - a plane that cannot replay (restarted, or the window passed) and every first connect call
 *   `onReset`, whose job is to re-read state through commands.
 */
import type { EventStreamHandlers } from './client';
import type { EventEnvelope } from './contract';

export interface RawChannelHandlers {
  onOpen(): void;
  onEvent(event: EventEnvelope): void;
  onClose(): void;
}

export interface RawEventChannel {
  connect(handlers: RawChannelHandlers): { close(): void };
}

export interface SinceAnswer {
  epoch: string;
  reset: boolean;
  latestSeq: number;
  events: EventEnvelope[];
}

export interface ResumeOptions {
  since(epoch: string | null, afterSeq: number): Promise<SinceAnswer>;
  /** Reconnect delays grow from min to max (ms). */
  minDelayMs?: number;
  maxDelayMs?: number;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
}

export function openResumableEvents(
  channel: RawEventChannel,
  handlers: EventStreamHandlers,
  options: ResumeOptions,
): () => void {
  const minDelay = options.minDelayMs ?? 250;
  const maxDelay = options.maxDelayMs ?? 5000;
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms));
  const clearTimer = options.clearTimer ?? ((h) => clearTimeout(h as ReturnType<typeof setTimeout>));

  let epoch: string | null = null;
  let lastSeq = 0;
  let closed = false;
  let syncing = false;
  let held: EventEnvelope[] = [];
  let connection: { close(): void } | null = null;
  let retryTimer: unknown = null;
  let delay = minDelay;
  let everConnected = false;

  const deliver = (event: EventEnvelope) => {
    if (event.epoch !== epoch || event.seq <= lastSeq) return;
    lastSeq = event.seq;
    handlers.onEvent(event);
  };

  const catchUp = async (): Promise<void> => {
    if (syncing || closed) return;
    syncing = true;
    try {
      const answer = await options.since(epoch, lastSeq);
      if (closed) return;
      if (answer.reset || epoch === null || answer.epoch !== epoch) {
        epoch = answer.epoch;
        lastSeq = answer.latestSeq;
        handlers.onReset(answer.epoch, answer.latestSeq);
      } else {
        for (const event of answer.events) deliver(event);
      }
      const pending = held.sort((a, b) => a.seq - b.seq);
      held = [];
      syncing = false;
      for (const event of pending) onLive(event);
      delay = minDelay;
      everConnected = true;
      handlers.onState('connected');
    } catch {
      syncing = false;
      // The channel is up but the catch-up failed: drop it and let the retry loop take over.
      connection?.close();
    }
  };

  const onLive = (event: EventEnvelope) => {
    if (syncing) {
      held.push(event);
      return;
    }
    if (event.epoch === epoch && event.seq === lastSeq + 1) return deliver(event);
    if (event.epoch === epoch && event.seq <= lastSeq) return; // duplicate
    held.push(event); // a gap or another epoch: catch up, then re-apply what was held
    void catchUp();
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
    let open = true;
    connection = channel.connect({
      onOpen: () => void catchUp(),
      onEvent: (event) => {
        if (open) onLive(event);
      },
      onClose: () => {
        if (!open) return;
        open = false;
        syncing = false;
        held = [];
        scheduleReconnect();
      },
    });
  };

  connect();
  return () => {
    closed = true;
    if (retryTimer !== null) clearTimer(retryTimer);
    connection?.close();
    handlers.onState('closed');
  };
}
