/**
 * The bounded queue between the tap's forwarding and its journal. Forwarding only ever pushes,
 * and a push never waits: when the journal falls behind and the queue is full, the event is
 * dropped and counted, and the run later gets one `gap` saying how many messages were lost and
 * which wire indices they had. A slow or dead journal therefore costs observations, never the
 * editor's connection to its agent.
 *
 * The bound is in bytes (each event's line plus a fixed overhead), not in items: what the bound
 * protects is memory, and a count small enough to matter for memory (a few thousand) is smaller
 * than one ordinary burst of small messages (an editor pasting a file, an agent streaming
 * chunks), so it dropped messages the journal would have caught up with a moment later. With
 * the default (64 MB, set in acp-tap.ts) a 10,000-message burst of 1 KB each way fits whole.
 *
 * Two ways out:
 * - to the journal worker (acp-tap-worker.ts, the direct-journal path): `takeHeld` hands on
 *   everything queued, but its bytes stay counted against the bound until the worker says it
 *   has committed them (`release`), so the bound covers what waits in the worker too;
 * - to an ObservationSink on this thread (the plane's API, or a test's sink): `takeWhenQuiet`
 *   waits for the wire to pause before handing a slice on, since whatever the sink does runs on
 *   the forwarding thread. Only a queue half full, or an item waiting longer than `maxDelayMs`
 *   under traffic that never pauses, makes it hand on during traffic.
 */
import type { WireEvent } from './session-runs';

export type QueueItem = WireEvent | { kind: 'end' };

/** What an item counts against the byte bound. */
export function sizeOf(item: QueueItem): number {
  if (item.kind === 'line') return item.bytes.length + 64;
  if (item.kind === 'overlong') return item.head.length + 64;
  return 64;
}

export class ObservationQueue {
  private items: QueueItem[] = [];
  /** Bytes queued here. */
  private bytes = 0;
  /** Bytes handed on by takeHeld and not yet released: still within the bound. */
  private held = 0;
  private dropped: { dropped: number; fromWire: number; toWire: number; at: string } | null = null;
  private waiter: (() => void) | null = null;
  private ended = false;
  private lastPushAt = 0;
  /** When the oldest item now queued was queued (about: reset when a slice is taken). */
  private oldestAt = 0;

  constructor(private readonly maxBytes: number) {}

  /** Never blocks: an event that does not fit is counted into the next gap. */
  push(event: WireEvent): void {
    if (this.ended) return;
    const size = sizeOf(event);
    if (this.bytes + this.held + size > this.maxBytes) {
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
      const high = (this.bytes + this.held) * 2 >= this.maxBytes;
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

  /** Everything queued now, without waiting; its `bytes` stay counted against the bound until release(bytes). */
  takeHeld(): { items: QueueItem[]; bytes: number } {
    const items = this.items;
    const bytes = this.bytes;
    this.items = [];
    this.bytes = 0;
    this.held += bytes;
    return { items, bytes };
  }

  /** What takeHeld handed on has been committed (or given up on): its bytes no longer count. */
  release(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
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
