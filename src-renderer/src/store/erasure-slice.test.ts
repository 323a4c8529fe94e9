/**
 * The erasure part of the Settings view's store against a real plane (docs/ERASURE.md): sealing
 * turned on from the store, a run sealed under its owner, a legal hold placed, the held subject's
 * erasure refused in the plane's words (naming the hold), the hold lifted, the subject erased:
 * its run's input then reads as erased.
 */
import { describe, expect, it } from 'vitest';
import { agent, call, testPlane } from '../../../tests/support/runtime-support';
import { useSyncedHarnesses } from './testing/store-harness';
import { erasureStoreFor } from './erasure-slice';

const ECHO = {
  name: 'echo-once',
  input: { type: 'object' },
  steps: [{ as: 'said', tool: { name: 'echo', args: { line: '{{input.line}}' } } }, { output: '{{steps.said}}' }],
  grants: [{ kind: 'tool', name: 'echo' }],
};
const harness = useSyncedHarnesses(() => testPlane({ agents: [agent(ECHO)] }));

describe('the erasure store', () => {
  it('turns sealing on, holds a subject (its erasure refused naming the hold), lifts the hold and erases it', async () => {
    const h = await harness();
    const erasure = erasureStoreFor(h.store);
    const state = () => erasure.getState();
    await state().refreshErasure();
    expect(state().erasureSettings).toEqual({ sealPayloads: false, retentionDays: null });
    expect(state().holds).toEqual([]);

    expect(await state().setSealing(true)).toBe(true);
    expect(state().erasureSettings?.sealPayloads).toBe(true);
    const run = await call(h.plane, 'runs.start', { agent: 'echo-once', input: { line: 'a private line' }, wait: true });
    expect(run.outcome).toBe('succeeded');
    const owner = (await call(h.plane, 'journal.records', { runId: run.runId })).records[0]!.body as { owner?: string };
    const subject = owner.owner ?? 'user:local';

    expect(await state().addHold({ subject }, 'litigation')).toBe(true);
    expect(state().holds?.map((hold) => [hold.target, hold.reason])).toEqual([[{ kind: 'subject', id: subject }, 'litigation']]);
    expect(await state().eraseSubject(subject, 'asked to be forgotten')).toBe(false);
    expect(state().erasureActionError).toMatch(/hold/);
    expect(state().erasureActionError).toContain('litigation');

    expect(await state().removeHold({ subject })).toBe(true);
    expect(state().holds).toEqual([]);
    expect(await state().eraseSubject(subject, 'asked to be forgotten')).toBe(true);
    expect(state().erasureActionError).toBeNull();
    expect(state().lastErasure).toMatchObject({ subject, reason: 'asked to be forgotten' });
    expect(state().lastErasure!.keys.length).toBeGreaterThan(0);
    const erased = await call(h.plane, 'runs.get', { runId: run.runId });
    expect(JSON.stringify(erased)).not.toContain('a private line');

    // Bad input comes back in the plane's words.
    expect(await state().setRetention(0)).toBe(false);
    expect(state().erasureActionError).toMatch(/at least 1 day/);
    expect(await state().setRetention(30)).toBe(true);
    expect(state().erasureSettings?.retentionDays).toBe(30);
  });
});
