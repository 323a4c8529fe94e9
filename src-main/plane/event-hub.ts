/**
 * Seq-numbered plane events for live views. Each plane process has an `epoch` (random, per
 * start); `seq` increases by one per event within it. A client remembers `(epoch, seq)` and,
 * after a dropped connection, asks `events.since` for what it missed. A bounded window of
 * recent events is kept for exactly that; a client further behind (or from another epoch) is
 * told to reset and re-read state through commands, so nothing is silently lost.
 *
 * The journal is the durable account of what happened; this hub only carries notifications
 * ("something changed, here is its seq"), never a second history of runs.
 */
import { randomBytes } from 'node:crypto';
import type { EventEnvelope, EventName, EventPayload } from '../../src-shared/ipc/contract';

export type EventListener = (event: EventEnvelope) => void;

export interface EventsSince {
  epoch: string;
  reset: boolean;
  latestSeq: number;
  events: EventEnvelope[];
}

export class EventHub {
  readonly epoch = randomBytes(8).toString('hex');
  private seq = 0;
  private readonly window: EventEnvelope[] = [];
  private readonly listeners = new Set<EventListener>();

  constructor(private readonly windowSize = 1000) {}

  get latestSeq(): number {
    return this.seq;
  }

  publish<K extends EventName>(name: K, payload: EventPayload<K>): EventEnvelope {
    this.seq += 1;
    const event: EventEnvelope = { epoch: this.epoch, seq: this.seq, name, payload };
    this.window.push(event);
    if (this.window.length > this.windowSize) this.window.shift();
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch {
        // A broken subscriber (a closed socket mid-send) must not stop delivery to the rest.
      }
    }
    return event;
  }

  subscribe(listener: EventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  since(epoch: string | null, afterSeq: number): EventsSince {
    const oldest = this.window[0]?.seq ?? this.seq + 1;
    const sameEpoch = epoch === this.epoch;
    // Replayable iff the client is in this epoch and every event after afterSeq is still held.
    const replayable = sameEpoch && afterSeq <= this.seq && afterSeq + 1 >= oldest;
    if (!replayable) {
      // A client from no epoch (first connect) has nothing to reset; it simply starts here.
      return { epoch: this.epoch, reset: epoch !== null, latestSeq: this.seq, events: [] };
    }
    return { epoch: this.epoch, reset: false, latestSeq: this.seq, events: this.window.filter((e) => e.seq > afterSeq) };
  }
}
