/**
 * The approvals inbox as a projection of the runs: a run the plane suspends appears in it from
 * the journal's notification and the run's re-read; a decision goes to the plane with the wait
 * and subject hash that were shown, and the inbox empties as the run moves on. A refused
 * decision leaves the item where it was, with the plane's reason.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../src-shared/ipc/errors';
import { testPlane } from '../../../tests/support/runtime-support';
import { follow, useSyncedHarnesses, type StoreHarness } from './testing/store-harness';

// The bundled agents: write-note asks a person before it writes a file.
const harness = useSyncedHarnesses(() => testPlane());


async function waitingNote(h: StoreHarness, title: string): Promise<string> {
  const started = await h.store.getState().startRun('write-note', { title, topic: 'inbox' });
  if (!started.ok) throw new Error(started.error.message);
  const runId = started.value.runId;
  await follow(h, () => h.store.getState().waiting.some((r) => r.runId === runId), `${runId} in the inbox`);
  return runId;
}

describe('the approvals slice', () => {
  it('shows a suspended run from the journal, approves exactly what was shown, and lets it go', async () => {
    const h = await harness();
    const runId = await waitingNote(h, 'approve me');
    const item = h.store.getState().waiting.find((r) => r.runId === runId)!;
    expect(item.pending).toMatchObject({ reason: 'approval' });
    const before = h.wire.requests.length;
    expect(await h.store.getState().decide(runId, 'approve')).toBe(true);
    expect(h.wire.requests.slice(before)).toEqual(['approvals.decide']);
    await follow(h, () => h.store.getState().runs[runId]?.status === 'sealed', `${runId} to end`);
    expect(h.store.getState().runs[runId]).toMatchObject({ outcome: 'succeeded' });
    expect(h.store.getState().waiting.some((r) => r.runId === runId)).toBe(false);
  });

  it('a denied run leaves the inbox and ends denied', async () => {
    const h = await harness();
    const runId = await waitingNote(h, 'deny me');
    expect(await h.store.getState().decide(runId, 'deny', { reason: 'not today' })).toBe(true);
    await follow(h, () => h.store.getState().runs[runId]?.status === 'sealed', `${runId} to end`);
    expect(h.store.getState().runs[runId]).toMatchObject({ outcome: 'denied' });
    expect(h.store.getState().waiting).toEqual([]);
  });

  it('a refused decision keeps the item, with the reason, and the run still waits', async () => {
    const h = await harness();
    const runId = await waitingNote(h, 'refused');
    h.wire.fail('approvals.decide', { code: ErrorCode.Conflict, message: 'what was decided is not what is waiting' });
    expect(await h.store.getState().decide(runId, 'approve')).toBe(false);
    expect(h.store.getState().decisionErrors[runId]).toBe('what was decided is not what is waiting');
    expect(h.store.getState().waiting.map((r) => r.runId)).toEqual([runId]);
    h.wire.fail('approvals.decide', null);
    expect(await h.store.getState().decide(runId, 'approve')).toBe(true);
    expect(h.store.getState().decisionErrors[runId]).toBeUndefined();
  });
});
