import { describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../src-shared/journal/records';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import { decisionOn, readRunHistory } from './run-history';

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
