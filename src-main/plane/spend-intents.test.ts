/**
 * `spend.summary` totals payment intents per currency, pending and approved, folded from the
 * journal, on their own line: never added to model or effect cost.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Plane } from './plane';
import { call, runtimeOverRuns, testPlane } from '../../tests/support/runtime-support';
import { spendSummary } from './runtime-handlers';

const planes: Plane[] = [];
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
  for (const o of open.splice(0).reverse()) await o.close();
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

describe('spend.summary over a long journal', () => {
  it('is folded from summaries: it keeps no run history and builds no steps', async () => {
    // Spend over the newest 1,000 runs of a 1M-record journal, folded from whole histories,
    // held every effect of every run at once (+600 MB RSS on opening Spend, bench/memory.bench.ts).
    const id = (n: number) => `run-${String(n).padStart(20, '0')}`;
    const runs = Array.from({ length: 6 }, (_, i): [string, number] => [id(i + 1), 20]);
    const runtime = await runtimeOverRuns(runs, 100_000, open);
    const spend = await spendSummary(runtime, 100);
    expect(spend.byRun.map((r) => r.key).sort()).toEqual(runs.map(([runId]) => runId).sort());
    expect(spend.byAgent.map((a) => [a.key, a.runs])).toEqual([['echo', 6]]);
    expect(runtime.historyCache).toEqual({ runs: 0, records: 0 });
  });
});
