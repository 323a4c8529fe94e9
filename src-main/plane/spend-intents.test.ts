/**
 * `spend.summary` totals payment intents per currency, pending and approved, folded from the
 * journal, on their own line: never added to model or effect cost.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Plane } from './plane';
import { call, testPlane } from '../../tests/support/runtime-support';

const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

describe('spend.summary payment intents', () => {
  it('counts a waiting payment as pending and an approved one as approved, with nothing moved', async () => {
    const p = await testPlane();
    planes.push(p);
    const run = await call(p, 'runs.start', { agent: 'pay-vendor', input: { amount: 12.5, payee: 'ACME Corp' }, wait: true });
    expect(run.pending?.reason).toBe('payment');

    const before = await call(p, 'spend.summary', { limit: 100 });
    expect(before.paymentIntents).toEqual([{ currency: 'USD', pending: 12.5, pendingCount: 1, approved: 0, approvedCount: 0, moved: 0 }]);
    expect(before.total.costMicros).toBe(0);

    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    await p.runtime.settled(run.runId);
    const after = await call(p, 'spend.summary', { limit: 100 });
    expect(after.paymentIntents).toEqual([{ currency: 'USD', pending: 0, pendingCount: 0, approved: 12.5, approvedCount: 1, moved: 0 }]);
    // The intent's amount is not a cost: model and effect spend stay apart from it.
    expect(after.total.costMicros).toBe(0);
  });

  it('is empty when no run asked for a payment', async () => {
    const p = await testPlane();
    planes.push(p);
    expect((await call(p, 'spend.summary', { limit: 100 })).paymentIntents).toEqual([]);
  });
});
