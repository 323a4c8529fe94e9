import { describe, expect, it } from 'vitest';
import { checkRecordBody, CURRENT_VERSION } from '../journal/records';
import { approvalNeedsValue, decisionValueFromV1, DecisionValueSchema } from './decisions';
import { WaitReasonSchema } from './waits';

const RUN = 'run-0123456789abcdef0123';
const decision = (v: Record<string, unknown>) => ({ waitId: `${RUN}/4/budget`, decision: 'approve', by: 'user:local', subjectHash: 'c'.repeat(64), ...v });

describe('decision values', () => {
  it('is keyed by the reason of the wait it answers, and only budget, input, recovery and permission take one', () => {
    expect(WaitReasonSchema.options.filter(approvalNeedsValue)).toEqual(['budget', 'input', 'recovery', 'permission']);
    expect(DecisionValueSchema.safeParse({ kind: 'budget', budget: { maxTokens: 10 } }).success).toBe(true);
    expect(DecisionValueSchema.safeParse({ kind: 'budget', budget: { maxTokens: -1 } }).success).toBe(false);
    expect(DecisionValueSchema.safeParse({ kind: 'recovery', resolution: 'fail' }).success).toBe(false);
    expect(DecisionValueSchema.safeParse({ kind: 'approval' }).success).toBe(false);
  });

  it('writes tagged values (Decision v2) and still reads untagged v1 records as they were', () => {
    expect(CURRENT_VERSION.Decision).toBe(2);
    expect(checkRecordBody('Decision', 2, decision({ value: { kind: 'budget', budget: { maxTokens: 10 } } }))).toMatchObject({ known: true, body: expect.anything() });
    expect(checkRecordBody('Decision', 2, decision({ value: { budget: { maxTokens: 10 } } }))).toMatchObject({ invalid: expect.stringContaining('value') });
    expect(checkRecordBody('Decision', 1, decision({ value: { budget: { maxTokens: 10 } } }))).toMatchObject({ known: true, body: expect.anything() });
    expect(checkRecordBody('Decision', 1, decision({ waitId: 'anything', value: 'blue' }))).toMatchObject({ known: true, body: expect.anything() });
  });

  it('reads a v1 value by the reason of its wait', () => {
    expect(decisionValueFromV1('budget', 'approve', { budget: { maxTokens: 10 } })).toEqual({ kind: 'budget', budget: { maxTokens: 10 } });
    expect(decisionValueFromV1('input', 'approve', 'blue')).toEqual({ kind: 'input', input: 'blue' });
    expect(decisionValueFromV1('input', 'approve', { colour: 'blue' })).toEqual({ kind: 'input', input: { colour: 'blue' } });
    expect(decisionValueFromV1('recovery', 'approve', { resolution: 'landed', result: 7 })).toEqual({ kind: 'recovery', resolution: 'landed', result: 7 });
    // What no v1 runtime acted on reads as no value.
    expect(decisionValueFromV1('approval', 'approve', { anything: 1 })).toBeUndefined();
    expect(decisionValueFromV1('budget', 'deny', { budget: { maxTokens: 10 } })).toBeUndefined();
    expect(decisionValueFromV1('budget', 'approve', { budget: 'lots' })).toBeUndefined();
  });
});
