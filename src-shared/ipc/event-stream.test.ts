import { describe, expect, it } from 'vitest';
import type { ConnectionState } from './client';
import type { EventEnvelope } from './contract';
import { openResumableEvents, type RawChannelHandlers, type SinceAnswer } from './event-stream';

/** A hand-driven channel and plane: the test decides when sockets open, drop and what is sent. */
function harness(initialEpoch = 'A') {
  let epoch = initialEpoch;
  const log: EventEnvelope[] = [];
  const publish = (n = 1) => {
    for (let i = 0; i < n; i++) log.push({ epoch, seq: log.filter((e) => e.epoch === epoch).length + 1, name: 'peers.changed', payload: { peers: [] } });
    return log[log.length - 1]!;
  };
  let live: RawChannelHandlers | null = null;
  const timers: Array<() => void> = [];
  const delivered: number[] = [];
  const resets: number[] = [];
  const states: ConnectionState[] = [];
  const since = async (e: string | null, afterSeq: number): Promise<SinceAnswer> => {
    const mine = log.filter((x) => x.epoch === epoch);
    const latestSeq = mine.length;
    if (e !== epoch) return { epoch, reset: e !== null, latestSeq, events: [] };
    return { epoch, reset: false, latestSeq, events: mine.filter((x) => x.seq > afterSeq) };
  };
  const close = openResumableEvents(
    {
      connect(handlers) {
        live = handlers;
        return { close: () => handlers.onClose() };
      },
    },
    { onEvent: (e) => delivered.push(e.seq), onReset: (_e, s) => resets.push(s), onState: (s) => states.push(s) },
    { since, setTimer: (fn) => timers.push(fn), clearTimer: () => undefined },
  );
  const flush = () => new Promise((r) => setTimeout(r, 0));
  return {
    publish,
    restartPlane(newEpoch: string) {
      epoch = newEpoch;
    },
    get live() {
      return live!;
    },
    timers,
    delivered,
    resets,
    states,
    close,
    flush,
  };
}

describe('openResumableEvents', () => {
  it('first connect resets (reads state), then delivers live events in order', async () => {
    const h = harness();
    h.publish(3);
    h.live.onOpen();
    await h.flush();
    expect(h.resets).toEqual([3]);
    expect(h.states).toEqual(['connecting', 'connected']);
    h.live.onEvent(h.publish());
    h.live.onEvent(h.publish());
    expect(h.delivered).toEqual([4, 5]);
  });

  it('after a drop, replays exactly what was missed, then continues, dropping duplicates', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    h.live.onEvent(h.publish());
    h.live.onClose();
    expect(h.states.at(-1)).toBe('reconnecting');
    h.publish(3); // missed while away
    h.timers.shift()!();
    h.live.onOpen();
    await h.flush();
    expect(h.delivered).toEqual([1, 2, 3, 4]);
    h.live.onEvent({ epoch: 'A', seq: 3, name: 'peers.changed', payload: {} }); // duplicate
    h.live.onEvent(h.publish());
    expect(h.delivered).toEqual([1, 2, 3, 4, 5]);
    expect(h.states.at(-1)).toBe('connected');
  });

  it('holds live events that arrive during catch-up and applies them after, in order', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    h.live.onClose();
    h.publish(2);
    h.timers.shift()!();
    h.live.onOpen(); // catch-up in flight
    const next = h.publish();
    h.live.onEvent(next); // arrives before catch-up resolves
    await h.flush();
    expect(h.delivered).toEqual([1, 2, 3]);
  });

  it('a gap in live events triggers a catch-up rather than out-of-order delivery', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    h.publish(); // seq 1 never arrives live
    h.live.onEvent(h.publish()); // seq 2
    await h.flush();
    expect(h.delivered).toEqual([1, 2]);
  });

  it('a restarted plane (new epoch) resets instead of replaying', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    h.live.onEvent(h.publish());
    h.live.onClose();
    h.restartPlane('B');
    h.publish(2);
    h.timers.shift()!();
    h.live.onOpen();
    await h.flush();
    expect(h.resets).toEqual([0, 2]);
    expect(h.delivered).toEqual([1]);
  });

  it('close stops reconnecting', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    h.close();
    expect(h.states.at(-1)).toBe('closed');
    expect(h.timers).toEqual([]);
  });
});
