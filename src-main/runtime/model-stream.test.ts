/**
 * A model call's answer while it streams: coalesced updates of the accumulated text (a fake
 * clock drives the coalescing), published by a real plane as `runs.streaming` while the effect
 * is performed against the wire-faithful chat fake, never on replay, never journaled.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PlaneEvent } from '../../src-shared/ipc/contract';
import { createOpenAiCompatibleProvider } from '../providers/openai-compatible';
import type { Plane } from '../plane/plane';
import { FAKE_ANSWER, FAKE_LONG_DELTAS, startFakeChatServer, type FakeChatServer } from '../../tests/doubles/fake-chat-server';
import { agent, call, testPlane } from '../../tests/support/runtime-support';
import { liveModelText, LIVE_TEXT_INTERVAL_MS, type LiveTextClock, type ModelTextUpdate } from './model-stream';

/** A clock the test moves by hand; timers fire when it passes them. */
function manualClock(): LiveTextClock & { advance(ms: number): void; pending(): number } {
  let now = 0;
  let timers: { at: number; fn: () => void; id: number }[] = [];
  let ids = 0;
  return {
    now: () => now,
    setTimer(fn, ms) {
      const id = ++ids;
      timers.push({ at: now + ms, fn, id });
      return id;
    },
    clearTimer(handle) {
      timers = timers.filter((t) => t.id !== handle);
    },
    advance(ms) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fn();
    },
    pending: () => timers.length,
  };
}

const AT = { runId: 'run-00000000000000000001', step: 3 };
const API_KEY = 'sk-live-text-test-6b1d0c9e8f7a';

describe('liveModelText', () => {
  it('sends the first delta at once, then at most one update per interval, each with all the text so far', () => {
    const clock = manualClock();
    const seen: ModelTextUpdate[] = [];
    const live = liveModelText((u) => seen.push(u), AT, { clock });
    live.observer.onText('Hello');
    expect(seen).toEqual([{ runId: AT.runId, step: 3, text: 'Hello', omittedChars: 0, done: false }]);
    for (const piece of [' from', ' the', ' fake']) {
      clock.advance(5);
      live.observer.onText(piece);
    }
    // Coalesced: nothing more until the interval has passed since the last update.
    expect(seen).toHaveLength(1);
    expect(clock.pending()).toBe(1);
    clock.advance(LIVE_TEXT_INTERVAL_MS);
    expect(seen.at(-1)).toMatchObject({ text: 'Hello from the fake', done: false });
    expect(seen).toHaveLength(2);
    // A quiet interval sends nothing; the next delta after it goes out at once.
    clock.advance(LIVE_TEXT_INTERVAL_MS * 3);
    expect(seen).toHaveLength(2);
    live.observer.onText('.');
    expect(seen.at(-1)).toMatchObject({ text: 'Hello from the fake.', done: false });
    live.finish();
    expect(seen.at(-1)).toEqual({ runId: AT.runId, step: 3, text: 'Hello from the fake.', omittedChars: 0, done: true });
    expect(clock.pending()).toBe(0);
  });

  it('holds the rate over a burst: 1,000 deltas a millisecond apart make about one update per interval', () => {
    const clock = manualClock();
    const seen: ModelTextUpdate[] = [];
    const live = liveModelText((u) => seen.push(u), AT, { clock });
    for (let i = 0; i < 1000; i++) {
      live.observer.onText(`${i} `);
      clock.advance(1);
    }
    live.finish();
    expect(seen.length).toBeLessThanOrEqual(1000 / LIVE_TEXT_INTERVAL_MS + 2);
    expect(seen.length).toBeGreaterThanOrEqual(1000 / LIVE_TEXT_INTERVAL_MS - 1);
    // Every update is a prefix of the next: a dropped one loses nothing.
    for (let i = 1; i < seen.length; i++) expect(seen[i]!.text.startsWith(seen[i - 1]!.text)).toBe(true);
    expect(seen.at(-1)!.text).toBe(Array.from({ length: 1000 }, (_, i) => `${i} `).join(''));
  });

  it('carries only the tail of a long answer, saying how much came before it', () => {
    const clock = manualClock();
    const seen: ModelTextUpdate[] = [];
    const live = liveModelText((u) => seen.push(u), AT, { clock, maxChars: 10 });
    live.observer.onText('abcdefghij');
    live.observer.onText('KLMNOPQRSTUVWXYZ');
    live.finish();
    expect(seen.at(-1)).toMatchObject({ text: 'QRSTUVWXYZ', omittedChars: 16, done: true });
    // Never a lone half of a surrogate pair at the cut.
    const emoji = liveModelText((u) => seen.push(u), AT, { clock, maxChars: 3 });
    emoji.observer.onText('ab😀cd');
    emoji.finish();
    expect(seen.at(-1)).toMatchObject({ text: 'cd', omittedChars: 4 });
  });

  it('sends nothing for a call that streamed nothing, and nothing after finish', () => {
    const clock = manualClock();
    const seen: ModelTextUpdate[] = [];
    const quiet = liveModelText((u) => seen.push(u), AT, { clock });
    quiet.finish();
    expect(seen).toEqual([]);
    const late = liveModelText((u) => seen.push(u), AT, { clock });
    late.observer.onText('a');
    late.observer.onText('b');
    late.finish();
    late.observer.onText('c');
    clock.advance(LIVE_TEXT_INTERVAL_MS * 2);
    expect(seen.map((u) => [u.text, u.done])).toEqual([
      ['a', false],
      ['ab', true],
    ]);
  });

  it('a sink that throws is ignored: the watcher goes on', () => {
    const clock = manualClock();
    let calls = 0;
    const live = liveModelText(
      () => {
        calls++;
        throw new Error('a closed socket');
      },
      AT,
      { clock },
    );
    expect(() => live.observer.onText('x')).not.toThrow();
    clock.advance(LIVE_TEXT_INTERVAL_MS);
    live.observer.onText('y');
    expect(() => live.finish()).not.toThrow();
    expect(calls).toBe(3);
  });
});

describe('runs.streaming on a plane', () => {
  let fake: FakeChatServer;
  const planes: Plane[] = [];
  beforeAll(async () => {
    fake = await startFakeChatServer();
  });
  afterAll(() => fake.close());
  afterEach(async () => {
    for (const p of planes.splice(0)) await p.close().catch(() => undefined);
  });

  async function streamingPlane(model: string, steps: Record<string, unknown>[]): Promise<{ p: Plane; events: PlaneEvent[] }> {
    const providers = new Map([['chat', createOpenAiCompatibleProvider({ id: 'chat', baseUrl: fake.baseUrl, apiKey: API_KEY, model })]]);
    const agents = [agent({ name: 'streamer', steps, grants: [{ kind: 'model', name: 'chat' }] })];
    const p = await testPlane({ agents, providers });
    planes.push(p);
    const events: PlaneEvent[] = [];
    p.events.subscribe((event) => events.push(event));
    return { p, events };
  }

  const streamingOf = (events: PlaneEvent[]) => events.flatMap((e) => (e.name === 'runs.streaming' ? [e.payload] : []));

  it('publishes the growing answer of a performed call, done before the sealed effect is announced, and journals none of it', async () => {
    const { p, events } = await streamingPlane('long-stream', [{ as: 'answer', model: { provider: 'chat', prompt: 'Talk at length.', maxTokens: 4000 } }, { output: '{{steps.answer.text}}' }]);
    const run = await call(p, 'runs.start', { agent: 'streamer', input: {}, wait: true });
    expect(run.outcome).toBe('succeeded');
    const answer = FAKE_LONG_DELTAS.join('');
    const updates = streamingOf(events);
    expect(updates.length).toBeGreaterThan(0);
    // Far fewer updates than the 2,000 deltas: coalesced.
    expect(updates.length).toBeLessThan(FAKE_LONG_DELTAS.length / 10);
    for (const u of updates) expect(u).toMatchObject({ runId: run.runId, step: 0, omittedChars: 0 });
    for (let i = 1; i < updates.length; i++) expect(updates[i]!.text.startsWith(updates[i - 1]!.text)).toBe(true);
    expect(updates.at(-1)).toMatchObject({ text: answer, done: true });
    expect(updates.slice(0, -1).every((u) => !u.done)).toBe(true);
    // The last live update precedes the notification of the effect's sealed record.
    const lastLive = events.findLastIndex((e) => e.name === 'runs.streaming');
    const sealedAt = events.findIndex((e) => e.name === 'journal.appended' && e.payload.runs.some((r) => r.runId === run.runId && (r.kind === 'EffectDone' || r.kind === 'RunSealed')));
    expect(sealedAt).toBeGreaterThan(lastLive);
    // Only the sealed effect is durable: the journal holds the answer once, in EffectDone.
    const records = await p.journal.readRun(run.runId, 1, 100);
    expect(records.map((r) => r.kind)).toEqual(['RunAdmitted', 'EffectStarted', 'EffectDone', 'RunSealed']);
    // The provider's key went in one header, never into what clients are shown.
    expect(fake.requests.at(-1)?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(JSON.stringify(events)).not.toContain(API_KEY);
  });

  it('a replayed model step emits nothing live: only the call really performed did', async () => {
    const { p, events } = await streamingPlane('ok', [
      { as: 'answer', model: { provider: 'chat', prompt: 'Say hello.' } },
      { as: 'check', input: { prompt: 'Is this right?' } },
      { output: { answer: '{{steps.answer.text}}', check: '{{steps.check}}' } },
    ]);
    const run = await call(p, 'runs.start', { agent: 'streamer', input: {}, wait: true });
    expect(run.pending?.reason).toBe('input');
    const performed = streamingOf(events);
    expect(performed.at(-1)).toMatchObject({ runId: run.runId, text: FAKE_ANSWER, done: true });
    const requests = fake.requests.length;
    events.length = 0;
    // Resuming re-executes the run from the start: the model step is answered from its record.
    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash, value: { kind: 'input', input: 'yes' } });
    await p.runtime.settled(run.runId);
    expect((await call(p, 'runs.get', { runId: run.runId })).result).toEqual({ answer: FAKE_ANSWER, check: 'yes' });
    expect(fake.requests.length).toBe(requests);
    expect(streamingOf(events)).toEqual([]);
    expect(events.some((e) => e.name === 'journal.appended')).toBe(true);
  });

  it('a buffered provider (the local model) publishes nothing live', async () => {
    const p = await testPlane({ agents: [agent({ name: 'quiet', steps: [{ as: 'a', model: { provider: 'local', prompt: 'Hello there.' } }, { output: '{{steps.a.text}}' }], grants: [{ kind: 'model', name: 'local' }] })] });
    planes.push(p);
    const events: PlaneEvent[] = [];
    p.events.subscribe((event) => events.push(event));
    const run = await call(p, 'runs.start', { agent: 'quiet', input: {}, wait: true });
    expect(run.outcome).toBe('succeeded');
    expect(streamingOf(events)).toEqual([]);
  });
});
