/**
 * A model answer while it streams, in the store beside a real plane: `runs.streaming` events
 * published by the plane's hub reach the open timeline's `live` state; the sealed effect, once
 * the timeline has its record, ends the live text, and a late event for an ended step cannot
 * bring it back. Other runs' live text is not kept. And the pure rules themselves.
 */
import { describe, expect, it } from 'vitest';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { ZERO_SPEND } from '../../../tests/support/journal-support';
import { applyModelText, NO_LIVE_ANSWERS, pruneByRecords, stepEnded } from '../lib/live-answer';
import { useSyncedHarnesses, type StoreHarness } from './testing/store-harness';

const harness = useSyncedHarnesses();

const RUN = 'run-00000000000000000b01';
const OTHER = 'run-00000000000000000b02';
const KEY = 'a'.repeat(64);

const admitted = (runId: string) => ({
  runId,
  kind: 'RunAdmitted' as const,
  body: { agent: 'talker', owner: 'user:local', chain: ['user:local'], input: {}, inputProvenance: 'user:local', budget: {}, trigger: { via: 'cli' as const, by: 'user:local' } },
});
const started = (runId: string, step: number) => ({ runId, kind: 'EffectStarted' as const, body: { step, effect: 'model' as const, name: 'chat', key: KEY, request: { model: 'fake-model' } } });
const done = (runId: string, step: number) => ({ runId, kind: 'EffectDone' as const, body: { step, key: KEY, result: { text: 'Hello there.' }, spend: { ...ZERO_SPEND, effects: 1 }, provenance: 'model:chat' } });
const failed = (runId: string, step: number) => ({
  runId,
  kind: 'EffectFailed' as const,
  body: { step, key: KEY, disposition: 'DidNotHappen' as const, error: { code: 'ModelUnavailable' as const, message: 'try again' }, spend: ZERO_SPEND },
});

function stream(h: StoreHarness, runId: string, step: number, text: string, isDone = false) {
  h.plane.events.publish('runs.streaming', { runId, step, text, omittedChars: 0, done: isDone });
}

/** Appends, lets the notification arrive and the open timeline read its new records. */
async function commit(h: StoreHarness, drafts: Parameters<StoreHarness['plane']['journal']['appendBatch']>[0]) {
  await h.plane.journal.appendBatch(drafts);
  const head = (await h.plane.journal.head()).seq;
  await h.until(() => h.store.getState().journalHead === head, `journal head ${head}`);
  h.env.clock.advance(100);
  await h.settle();
}

async function openRun(h: StoreHarness, runId: string, expected: number) {
  h.store.getState().openTimeline(runId);
  await h.settle();
  h.env.clock.advance(100);
  await h.settle();
  await h.until(() => h.store.getState().timeline.count === expected && Object.keys(h.store.getState().timeline.pages).length > 0, 'the timeline');
}

const live = (h: StoreHarness) => h.store.getState().timeline.live;

describe('the timeline keeps a streaming answer until its sealed effect arrives', () => {
  it('shows the latest text of the open run only, and drops it once the EffectDone is in the timeline', async () => {
    const h = await harness();
    await commit(h, [admitted(RUN), started(RUN, 0), admitted(OTHER), started(OTHER, 0)]);
    await openRun(h, RUN, 2);

    stream(h, RUN, 0, 'Hel');
    stream(h, OTHER, 0, 'not looked at');
    await h.settle();
    expect(live(h)).toEqual({ 0: { step: 0, text: 'Hel', omittedChars: 0, done: false } });
    stream(h, RUN, 0, 'Hello there.', true);
    await h.settle();
    expect(live(h)[0]).toMatchObject({ text: 'Hello there.', done: true });
    // The event moved no journal seq and asked for nothing.
    const head = (await h.plane.journal.head()).seq;
    expect(h.store.getState().journalHead).toBe(head);

    await commit(h, [done(RUN, 0)]);
    expect(h.store.getState().timeline.count).toBe(3);
    expect(live(h)).toEqual({});
    // A late or held-back update for the sealed step does not bring the text back.
    stream(h, RUN, 0, 'Hello there.', true);
    await h.settle();
    expect(live(h)).toEqual({});
  });

  it('a retried step streams anew after its failed attempt; the run sealed ends every live text; another timeline starts empty', async () => {
    const h = await harness();
    await commit(h, [admitted(RUN), started(RUN, 0), failed(RUN, 0), started(RUN, 0)]);
    await openRun(h, RUN, 4);
    stream(h, RUN, 0, 'second try');
    await h.settle();
    expect(live(h)[0]?.text).toBe('second try');

    await commit(h, [admitted(OTHER)]);
    stream(h, RUN, 1, 'another step');
    await h.settle();
    expect(Object.keys(live(h))).toEqual(['0', '1']);
    h.store.getState().openTimeline(OTHER);
    expect(live(h)).toEqual({});
    h.store.getState().openTimeline(RUN);
    await h.settle();
    stream(h, RUN, 0, 'second try, longer');
    await h.settle();
    expect(live(h)[0]?.text).toBe('second try, longer');

    await commit(h, [done(RUN, 0), { runId: RUN, kind: 'RunSealed', body: { outcome: 'failed', spend: ZERO_SPEND, records: 6, error: { code: 'Internal', message: 'stopped' } } }]);
    expect(live(h)).toEqual({});
    stream(h, RUN, 1, 'too late');
    await h.settle();
    expect(live(h)).toEqual({});
  });
});

describe('the live-answer rules', () => {
  const view = (seq: number, draft: { runId: string; kind: string; body: Record<string, unknown> }): RecordView =>
    ({ seq, time: '2026-01-01T00:00:00.000Z', runId: draft.runId, kind: draft.kind, body: draft.body, hash: 'h', prevHash: 'p' }) as unknown as RecordView;
  const update = (step: number, text: string) => ({ runId: RUN, step, text, omittedChars: 0, done: false });

  it('a step is ended by an outcome after its latest start, or by the run sealed', () => {
    const pages = { 0: [view(1, admitted(RUN)), view(2, started(RUN, 0)), view(3, failed(RUN, 0))] };
    expect(stepEnded(pages, 0)).toBe(true);
    expect(stepEnded(pages, 1)).toBe(false);
    const retried = { 0: [...pages[0], view(4, started(RUN, 0))] };
    expect(stepEnded(retried, 0)).toBe(false);
    const sealed = { 0: [view(1, admitted(RUN)), view(2, { runId: RUN, kind: 'RunSealed', body: {} })] };
    expect(stepEnded(sealed, 7)).toBe(true);
  });

  it('an update replaces the step\'s text unless the loaded records show it ended; new records prune what they end', () => {
    const open = { 0: [view(1, admitted(RUN)), view(2, started(RUN, 0))] };
    const one = applyModelText(NO_LIVE_ANSWERS, update(0, 'a'), open);
    const two = applyModelText(one, update(0, 'ab'), open);
    expect(two[0]?.text).toBe('ab');
    const ended = { 0: [...open[0], view(3, done(RUN, 0))] };
    expect(applyModelText(two, update(0, 'abc'), ended)).toEqual({});
    const both = applyModelText(two, update(2, 'other step'), open);
    expect(Object.keys(pruneByRecords(both, [view(5, done(RUN, 0))]))).toEqual(['2']);
    expect(pruneByRecords(both, [view(5, { runId: RUN, kind: 'Decision', body: {} })])).toBe(both);
    expect(pruneByRecords(both, [view(6, { runId: RUN, kind: 'RunSealed', body: {} })])).toEqual({});
  });
});
