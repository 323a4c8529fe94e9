import { describe, expect, it } from 'vitest';
import type { JournalChanges, PlaneEvent, RunChange } from './contract';
import { openResumableEvents, type ConnectionState, type RawChannelHandlers, type SyncInfo } from './event-stream';
import type { Result } from './result';

type Appended = Extract<PlaneEvent, { name: 'journal.appended' }>;

/**
 * A hand-driven channel and journal: the test decides when connections open and drop, what is
 * committed, and which notifications arrive in which order.
 */
function harness(options: { maxListed?: number } = {}) {
  let journalId = 'journal-A';
  /** runs[seq - 1]: the run that record seq belongs to. */
  let records: string[] = [];
  let announced = 0;
  let failChanges = false;
  let live: RawChannelHandlers | null = null;
  const timers: Array<() => void> = [];
  const delivered: Array<{ fromSeq: number; seq: number; runs: string[] }> = [];
  const others: string[] = [];
  const syncs: SyncInfo[] = [];
  const states: ConnectionState[] = [];
  const asked: Array<number | null> = [];

  const change = (runId: string): RunChange => ({ runId, kind: 'EffectDone', status: 'running', outcome: null });
  const runsIn = (from: number, to: number) => [...new Set(records.slice(from - 1, to))].map(change);

  const changes = async (afterSeq: number | null): Promise<Result<JournalChanges>> => {
    asked.push(afterSeq);
    if (failChanges) return { ok: false, error: { code: 'AP_UNAVAILABLE', message: 'not now' } };
    const head = records.length;
    if (afterSeq === null || afterSeq > head || head - afterSeq > (options.maxListed ?? 100)) return { ok: true, value: { journalId, head, runs: [], truncated: true } };
    return { ok: true, value: { journalId, head, runs: runsIn(afterSeq + 1, head), truncated: false } };
  };

  const close = openResumableEvents(
    {
      connect(handlers) {
        live = handlers;
        return { close: () => undefined };
      },
    },
    {
      onEvent: (event) => {
        if (event.name === 'journal.appended') delivered.push({ ...event.payload, runs: event.payload.runs.map((r) => r.runId) });
        else others.push(event.name);
      },
      onSync: (sync) => syncs.push(sync),
      onState: (state) => states.push(state),
    },
    { changes, setTimer: (fn) => timers.push(fn), clearTimer: () => undefined },
  );
  const flush = () => new Promise((r) => setTimeout(r, 0));
  return {
    /** Commits records of these runs; returns the notification the plane would publish. */
    commit(...runIds: string[]): Appended {
      records.push(...runIds);
      const event: Appended = { name: 'journal.appended', payload: { fromSeq: announced + 1, seq: records.length, runs: runsIn(announced + 1, records.length) } };
      announced = records.length;
      return event;
    },
    replaceJournal(id: string, runIds: string[]) {
      journalId = id;
      records = [...runIds];
      announced = records.length;
    },
    set failChanges(value: boolean) {
      failChanges = value;
    },
    get live() {
      return live!;
    },
    timers,
    delivered,
    others,
    syncs,
    states,
    asked,
    close,
    flush,
  };
}

describe('openResumableEvents', () => {
  it('first connect re-reads everything at the head, then delivers live notifications in order', async () => {
    const h = harness();
    h.commit('a', 'b');
    h.live.onOpen();
    await h.flush();
    expect(h.asked).toEqual([null]);
    expect(h.syncs).toEqual([{ head: 2, reset: true }]);
    expect(h.states).toEqual(['connecting', 'connected']);
    h.live.onMessage(h.commit('a'));
    h.live.onMessage(h.commit('c', 'c'));
    expect(h.delivered).toEqual([
      { fromSeq: 3, seq: 3, runs: ['a'] },
      { fromSeq: 4, seq: 5, runs: ['c'] },
    ]);
  });

  it('after a drop, delivers what changed meanwhile as one notification, then re-reads snapshots; duplicates are dropped', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    h.live.onMessage(h.commit('a'));
    h.live.onClose();
    expect(h.states.at(-1)).toBe('reconnecting');
    const missed = [h.commit('b'), h.commit('c', 'b')];
    h.timers.shift()!();
    h.live.onOpen();
    await h.flush();
    expect(h.asked).toEqual([null, 1]);
    expect(h.delivered).toEqual([
      { fromSeq: 1, seq: 1, runs: ['a'] },
      { fromSeq: 2, seq: 4, runs: ['b', 'c'] },
    ]);
    expect(h.syncs.at(-1)).toEqual({ head: 4, reset: false });
    for (const event of missed) h.live.onMessage(event); // arrive late: already covered
    h.live.onMessage(h.commit('d'));
    expect(h.delivered.map((d) => d.seq)).toEqual([1, 4, 5]);
    expect(h.states.at(-1)).toBe('connected');
  });

  it('holds notifications that arrive during the catch-up and applies them after it, in order', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    h.live.onClose();
    h.commit('a');
    h.timers.shift()!();
    h.live.onOpen(); // catch-up in flight: its answer covers seq 1
    const next = h.commit('b');
    h.live.onMessage(next); // arrives before the catch-up answers
    h.live.onMessage(next); // and twice
    await h.flush();
    expect(h.delivered).toEqual([
      { fromSeq: 1, seq: 1, runs: ['a'] },
      { fromSeq: 2, seq: 2, runs: ['b'] },
    ]);
    h.live.onMessage(h.commit('c'));
    expect(h.delivered.map((d) => d.seq)).toEqual([1, 2, 3]);
  });

  it('a notification that skips seqs triggers a catch-up instead of out-of-order delivery; the late one is harmless', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    const first = h.commit('a');
    const second = h.commit('b');
    h.live.onMessage(second); // overtook `first`
    await h.flush();
    expect(h.asked).toEqual([null, 0]);
    expect(h.delivered).toEqual([{ fromSeq: 1, seq: 2, runs: ['a', 'b'] }]);
    h.live.onMessage(first);
    h.live.onMessage(second);
    expect(h.delivered).toHaveLength(1);
    expect(h.syncs).toHaveLength(1); // a gap is not a reconnect: snapshots are not re-read
  });

  it('resets when the plane cannot list what changed, or follows another journal', async () => {
    const h = harness({ maxListed: 2 });
    h.live.onOpen();
    await h.flush();
    h.live.onClose();
    h.commit('a', 'b', 'c');
    h.timers.shift()!();
    h.live.onOpen();
    await h.flush();
    expect(h.syncs.at(-1)).toEqual({ head: 3, reset: true });
    h.live.onClose();
    h.replaceJournal('journal-B', ['x', 'y', 'z', 'w']);
    h.timers.shift()!();
    h.live.onOpen();
    await h.flush();
    expect(h.syncs.at(-1)).toEqual({ head: 4, reset: true });
    expect(h.delivered).toEqual([]);
  });

  it('passes snapshots through and ignores messages that are not events of the contract', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    h.live.onMessage({ name: 'peers.changed', payload: { peers: [] } });
    h.live.onMessage({ name: 'peers.changed', payload: { peers: 'none' } });
    h.live.onMessage({ name: 'runs.changed', payload: {} });
    h.live.onMessage('garbage');
    h.live.onMessage({ name: 'journal.appended', payload: { seq: 9 } });
    expect(h.others).toEqual(['peers.changed']);
    expect(h.delivered).toEqual([]);
  });

  it('a failed catch-up drops the connection and retries', async () => {
    const h = harness();
    h.failChanges = true;
    h.live.onOpen();
    await h.flush();
    expect(h.states).toEqual(['connecting', 'reconnecting']);
    h.failChanges = false;
    h.timers.shift()!();
    h.live.onOpen();
    await h.flush();
    expect(h.syncs).toEqual([{ head: 0, reset: true }]);
    expect(h.states.at(-1)).toBe('connected');
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
