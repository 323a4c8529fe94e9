/**
 * The bounded queue between the tap's forwarding and its journal sink. Forwarding only ever
 * pushes, and a push never waits: when the sink falls behind and the queue is full (by count
 * or by bytes), the event is dropped and counted, and the run later gets one `gap` saying how
 * many messages were lost and which wire indices they had. A slow or dead journal therefore
 * costs observations, never the editor's connection to its agent.
 *
 * The journal runs on the same event loop as the forwarding (SQLite answers synchronously, and
 * a journaled message costs far more than a forwarded one), so the drain waits for the wire to
 * go quiet before it writes (`takeWhenQuiet`): a burst is forwarded at the speed of the pipes
 * and journaled just after it. Only a queue half full, or an item waiting longer than
 * `maxDelayMs` under traffic that never pauses, makes it write during traffic, one bounded
 * slice at a time.
 */
import type { WireEvent } from './session-runs';

export type QueueItem = WireEvent | { kind: 'end' };

function sizeOf(item: QueueItem): number {
  if (item.kind === 'line') return item.bytes.length + 64;
  if (item.kind === 'overlong') return item.head.length + 64;
  return 64;
}

export class ObservationQueue {
  private items: QueueItem[] = [];
  private bytes = 0;
  private dropped: { dropped: number; fromWire: number; toWire: number; at: string } | null = null;
  private waiter: (() => void) | null = null;
  private ended = false;
  private lastPushAt = 0;
  /** When the oldest item now queued was queued (about: reset when a slice is taken). */
  private oldestAt = 0;

  constructor(
    private readonly maxItems: number,
    private readonly maxBytes: number,
  ) {}

  /** Never blocks: an event that does not fit is counted into the next gap. */
  push(event: WireEvent): void {
    if (this.ended) return;
    const size = sizeOf(event);
    if (this.items.length >= this.maxItems || this.bytes + size > this.maxBytes) {
      const wire = event.kind === 'gap' ? event.fromWire : event.wire;
      const d = this.dropped;
      this.dropped = d ? { ...d, dropped: d.dropped + 1, toWire: wire } : { dropped: 1, fromWire: wire, toWire: wire, at: new Date().toISOString() };
      return;
    }
    this.flushGap();
    this.add(event);
  }

  /** The last item: after it, take() returns what is left and then null. */
  end(): void {
    if (this.ended) return;
    this.flushGap();
    this.add({ kind: 'end' });
    this.ended = true;
  }

  /**
   * Up to `max` items once the wire has been quiet for `quietMs` (or the queue is half full, or
   * its oldest item has waited `maxDelayMs`, or the queue has ended).
   */
  async takeWhenQuiet(max: number, quietMs: number, maxDelayMs: number): Promise<QueueItem[]> {
    for (;;) {
      while (this.items.length === 0) await new Promise<void>((resolve) => (this.waiter = resolve));
      const now = Date.now();
      const quiet = now - this.lastPushAt >= quietMs;
      const overdue = now - this.oldestAt >= maxDelayMs;
      const high = this.bytes * 2 >= this.maxBytes || this.items.length * 2 >= this.maxItems;
      if (this.ended || quiet || overdue || high) return this.take(max);
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.min(quietMs - (now - this.lastPushAt), maxDelayMs - (now - this.oldestAt)))));
    }
  }

  /**
   * The drain has just held the event loop (a commit): nothing could be pushed meanwhile, so the
   * wire only looks quiet. The next quiet window is measured from now, with the loop free.
   */
  restartQuiet(): void {
    this.lastPushAt = Date.now();
  }

  /** Up to `max` items, waiting while there are none; the 'end' item is the last one ever returned. */
  async take(max: number): Promise<QueueItem[]> {
    while (this.items.length === 0) await new Promise<void>((resolve) => (this.waiter = resolve));
    const batch = this.items.splice(0, max);
    for (const item of batch) this.bytes -= sizeOf(item);
    this.oldestAt = Date.now();
    return batch;
  }

  private flushGap(): void {
    if (!this.dropped) return;
    // The gap marker itself may overshoot the bound by one item: it is what makes the loss visible.
    this.add({ kind: 'gap', ...this.dropped });
    this.dropped = null;
  }

  private add(item: QueueItem): void {
    const now = Date.now();
    if (this.items.length === 0) this.oldestAt = now;
    this.lastPushAt = now;
    this.items.push(item);
    this.bytes += sizeOf(item);
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}
