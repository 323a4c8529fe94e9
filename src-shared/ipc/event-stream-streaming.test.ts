/**
 * `runs.streaming` through the resumable event stream: live text is not the journal, so it
 * moves no seq, never triggers a catch-up or a reset, is held back (like any live event) while
 * a catch-up is in flight, and a malformed one (text past the cap, no run id) is dropped.
 */
import { describe, expect, it } from 'vitest';
import { LIVE_TEXT_MAX_CHARS, type JournalChanges, type PlaneEvent } from './contract';
import { openResumableEvents, type RawChannelHandlers, type SyncInfo } from './event-stream';
import type { Result } from './result';

const RUN = 'run-0000000000000000000a';

function harness() {
  let head = 0;
  let live: RawChannelHandlers | null = null;
  const asked: Array<number | null> = [];
  const events: PlaneEvent[] = [];
  const syncs: SyncInfo[] = [];
  let answer: (() => void) | null = null;
  let holdChanges = false;
  const timers: Array<() => void> = [];
  const changes = (afterSeq: number | null): Promise<Result<JournalChanges>> => {
    asked.push(afterSeq);
    const value: JournalChanges = { journalId: 'j', head, runs: afterSeq === null || head === afterSeq ? [] : [{ runId: RUN, kind: 'EffectStarted', status: 'running', outcome: null }], truncated: afterSeq === null };
    if (!holdChanges) return Promise.resolve({ ok: true, value });
    return new Promise((resolve) => (answer = () => resolve({ ok: true, value })));
  };
  openResumableEvents(
    { connect: (handlers) => ((live = handlers), { close: () => undefined }) },
    { onEvent: (e) => events.push(e), onSync: (s) => syncs.push(s), onState: () => undefined },
    { changes, setTimer: (fn) => timers.push(fn), clearTimer: () => undefined },
  );
  return {
    get live() {
      return live!;
    },
    set head(value: number) {
      head = value;
    },
    set holdChanges(value: boolean) {
      holdChanges = value;
    },
    release: () => answer?.(),
    /** Runs the reconnect the stream scheduled after a drop. */
    reconnect: () => timers.shift()!(),
    asked,
    events,
    syncs,
    flush: () => new Promise((r) => setTimeout(r, 0)),
  };
}

const streaming = (text: string, extra: Record<string, unknown> = {}) => ({ name: 'runs.streaming', payload: { runId: RUN, step: 2, text, omittedChars: 0, done: false, ...extra } });

describe('runs.streaming in the event stream', () => {
  it('is delivered as it comes, with no catch-up and no reset, whatever the journal seq', async () => {
    const h = harness();
    h.head = 4;
    h.live.onOpen();
    await h.flush();
    expect(h.asked).toEqual([null]);
    h.live.onMessage(streaming('Hel'));
    h.live.onMessage(streaming('Hello'));
    h.live.onMessage({ name: 'journal.appended', payload: { fromSeq: 5, seq: 5, runs: [{ runId: RUN, kind: 'EffectDone', status: 'running', outcome: null }] } });
    await h.flush();
    expect(h.events.map((e) => (e.name === 'runs.streaming' ? e.payload.text : e.name))).toEqual(['Hel', 'Hello', 'journal.appended']);
    expect(h.asked).toEqual([null]);
    expect(h.syncs).toEqual([{ head: 4, reset: true }]);
  });

  it('waits behind a catch-up in flight, then follows what the catch-up delivered', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    h.live.onClose();
    h.head = 2;
    h.holdChanges = true;
    h.reconnect();
    h.live.onOpen();
    h.live.onMessage(streaming('partial'));
    await h.flush();
    expect(h.events).toEqual([]);
    h.release();
    await h.flush();
    expect(h.events.map((e) => e.name)).toEqual(['journal.appended', 'runs.streaming']);
  });

  it('drops an event that is not of the contract: text past the cap, a bad run id, a negative step', async () => {
    const h = harness();
    h.live.onOpen();
    await h.flush();
    h.live.onMessage(streaming('x'.repeat(LIVE_TEXT_MAX_CHARS + 1)));
    h.live.onMessage(streaming('ok', { runId: 'not-a-run' }));
    h.live.onMessage(streaming('ok', { step: -1 }));
    h.live.onMessage(streaming('fine'));
    await h.flush();
    expect(h.events.map((e) => (e.name === 'runs.streaming' ? e.payload.text : e.name))).toEqual(['fine']);
  });
});
