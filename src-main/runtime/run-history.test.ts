import { describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../src-shared/journal/records';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import { decisionOn, readRunHistory, RunFold, summaryOf } from './run-history';

const RUN = 'run-00000000000000000abc';
const party = { agent: 'thrifty', owner: 'user:local' };
const budgetSubject = {
  kind: 'budget',
  ceiling: 'tokens',
  spent: { ...NO_SPEND, inputTokens: 90 },
  budget: { maxTokens: 100 },
  next: { effect: 'model', name: 'local', estimate: { ...NO_SPEND, inputTokens: 20 } },
  ...party,
};

/** Records as a journal returns them; the fold reads bodies and versions, never hashes. */
function records(...drafts: Array<{ kind: string; v?: number; body: Record<string, unknown> }>): JournalRecord[] {
  return drafts.map((d, i) => ({ seq: i + 1, runId: RUN, kind: d.kind, v: d.v ?? 1, time: `2026-01-01T00:00:0${i}Z`, body: d.body, prevHash: '0'.repeat(64), hash: '1'.repeat(64) }));
}
const admitted = { kind: 'RunAdmitted', body: { ...party, chain: ['user:local'], input: {}, inputProvenance: 'user:local', budget: { maxTokens: 100 }, trigger: { via: 'cli', by: 'user:local' } } };
const suspended = (step: number, reason: string, subject: unknown) => ({ kind: 'Suspended', body: { step, reason, waitId: `${RUN}/${step}/${reason}`, subject, subjectHash: 'a'.repeat(64) } });
const decided = (v: number, step: number, reason: string, value: unknown) => ({ kind: 'Decision', v, body: { waitId: `${RUN}/${step}/${reason}`, decision: 'approve', by: 'user:local', subjectHash: 'a'.repeat(64), value } });

describe('a run history read from records already in journals', () => {
  it('reads a v1 decision value (untagged) as the tagged value of the wait it answered', () => {
    const history = readRunHistory(records(admitted, suspended(1, 'budget', budgetSubject), decided(1, 1, 'budget', { budget: { maxTokens: 1000 } }), suspended(2, 'input', { kind: 'input', prompt: 'Which colour?', ...party }), decided(1, 2, 'input', 'blue')));
    expect(decisionOn(history, `${RUN}/1/budget`)?.value).toEqual({ kind: 'budget', budget: { maxTokens: 1000 } });
    expect(decisionOn(history, `${RUN}/2/input`)?.value).toEqual({ kind: 'input', input: 'blue' });
  });

  it('reads a v2 decision value as written', () => {
    const history = readRunHistory(records(admitted, suspended(1, 'budget', budgetSubject), decided(2, 1, 'budget', { kind: 'budget', budget: { maxTokens: 500 } })));
    expect(decisionOn(history, `${RUN}/1/budget`)?.value).toEqual({ kind: 'budget', budget: { maxTokens: 500 } });
  });

  it('types a pending subject it recognises and keeps one it does not raw', () => {
    expect(readRunHistory(records(admitted, suspended(1, 'budget', budgetSubject))).pending?.subject).toEqual(budgetSubject);
    const odd = { kind: 'budget', ceiling: 'tokens', note: 'written by another version' };
    expect(readRunHistory(records(admitted, suspended(1, 'budget', odd))).pending).toMatchObject({ reason: 'budget', subject: { kind: 'unrecognized', raw: odd } });
  });
});

describe('a summary fold', () => {
  const effect = (step: number) => [
    { kind: 'EffectStarted', body: { step, effect: 'tool', name: 'echo', request: { n: step }, idempotencyKey: `k${step}` } },
    { kind: 'EffectDone', body: { step, result: { echoed: step }, spend: { ...NO_SPEND, toolCalls: 1 } } },
  ];
  const runs: Record<string, JournalRecord[]> = {
    'sealed after effects': records(admitted, ...effect(1), ...effect(2), { kind: 'RunSealed', body: { outcome: 'succeeded', result: 'ok', spend: NO_SPEND, records: 6 } }),
    'waiting on an input after a v1 decision': records(admitted, suspended(1, 'budget', budgetSubject), decided(1, 1, 'budget', { budget: { maxTokens: 1000 } }), ...effect(1), suspended(2, 'input', { kind: 'input', prompt: 'Which colour?', ...party })),
    'answered and running': records(admitted, suspended(1, 'input', { kind: 'input', prompt: 'Which colour?', ...party }), decided(2, 1, 'input', { kind: 'input', input: 'blue' }), ...effect(1)),
  };

  for (const [name, recs] of Object.entries(runs)) {
    it(`reads the same summary as the whole history, keeping no steps or decisions: ${name}`, () => {
      const fold = new RunFold(recs[0]!, false);
      for (const record of recs) fold.add(record);
      const summary = fold.finish();
      expect(summaryOf(summary)).toEqual(summaryOf(readRunHistory(recs)));
      expect(summary.steps.size).toBe(0);
      expect(summary.decisions.size).toBe(0);
    });
  }

  it('names the peers the run called, each once, and the payments that completed, in both folds', () => {
    const started = (step: number, effect: string, name: string, request: unknown) => ({ kind: 'EffectStarted', body: { step, effect, name, request, idempotencyKey: `k${step}` } });
    const done = (step: number, result: unknown) => ({ kind: 'EffectDone', body: { step, result, spend: NO_SPEND } });
    const failed = (step: number) => ({ kind: 'EffectFailed', body: { step, error: { code: 'Timeout', message: 'no answer' }, disposition: 'InDoubt', spend: NO_SPEND } });
    const pay = { amount: 5, currency: 'EUR', payee: 'shop' };
    const recs = records(
      admitted,
      started(1, 'peer', 'files/list_files', {}),
      done(1, []),
      started(2, 'peer', 'files/get_skill', {}),
      done(2, {}),
      started(3, 'payment', 'pay', pay),
      failed(3),
      // Retried after the in-doubt attempt: one payment done, counted once.
      started(3, 'payment', 'pay', pay),
      done(3, { moved: true }),
      started(4, 'peer', 'mail/send', {}),
      started(5, 'payment', 'pay', { ...pay, amount: 7 }),
      failed(5),
    );
    for (const detail of [true, false]) {
      const fold = new RunFold(recs[0]!, detail);
      for (const record of recs) fold.add(record);
      const history = fold.finish();
      expect(history.peersCalled).toEqual(['peer:files', 'peer:mail']);
      expect(history.paymentsDone).toEqual([{ request: pay, result: { moved: true } }]);
    }
  });

  it('refuses a run that does not begin with its admission', () => {
    expect(() => new RunFold(records(...effect(1))[0]!, false)).toThrow(/does not start with RunAdmitted/);
    expect(() => readRunHistory([])).toThrow(/does not start with RunAdmitted/);
  });
});
