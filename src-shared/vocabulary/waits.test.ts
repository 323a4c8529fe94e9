import { describe, expect, it } from 'vitest';
import { WaitSchema } from '../ipc/contract';
import { checkRecordBody } from '../journal/records';
import { NO_SPEND } from './spend';
import { readWaitSubject, WaitSubjectSchema, type WaitSubject } from './waits';

const RUN = 'run-0123456789abcdef0123';
const party = { agent: 'pay-once', owner: 'user:local' };
const payment: WaitSubject = {
  kind: 'payment',
  effect: 'payment',
  name: 'request',
  request: { amount: 12.5, currency: 'USD', payee: 'ACME' },
  destination: null,
  estimate: { ...NO_SPEND, effects: 1 },
  ...party,
  chain: ['user:local'],
};
const budget: WaitSubject = {
  kind: 'budget',
  ceiling: 'tokens',
  spent: { ...NO_SPEND, inputTokens: 90 },
  budget: { maxTokens: 100 },
  next: { effect: 'model', name: 'local', estimate: { ...NO_SPEND, inputTokens: 20 } },
  ...party,
};
const suspended = (subject: unknown, reason = 'payment') => ({ step: 3, reason, waitId: `${RUN}/3/${reason}`, subject, subjectHash: 'b'.repeat(64) });

describe('wait subjects', () => {
  it('reads each shape the runtime writes as its typed member', () => {
    for (const subject of [payment, budget, { kind: 'input', prompt: 'Which colour?', ...party }, { kind: 'halt', scope: 'agent:pay-once', ...party }]) {
      expect(readWaitSubject(subject.kind, subject)).toEqual(subject);
    }
  });

  it('keeps a subject it does not recognise raw: another shape, an extra field, or a kind that is not its reason', () => {
    const odd = [{ kind: 'payment', amount: 3 }, { ...payment, tip: 1 }, 'just text', null];
    for (const raw of odd) expect(readWaitSubject('payment', raw)).toEqual({ kind: 'unrecognized', raw });
    expect(readWaitSubject('approval', payment)).toEqual({ kind: 'unrecognized', raw: payment });
    // ...and the contract carries it, so one odd record does not fail a whole runs list.
    const wait = { waitId: `${RUN}/3/payment`, reason: 'payment', step: 3, subjectHash: 'b'.repeat(64), since: 'now', seq: 9 };
    expect(WaitSchema.safeParse({ ...wait, subject: readWaitSubject('payment', odd[0]) }).success).toBe(true);
    expect(WaitSchema.safeParse({ ...wait, subject: odd[0] }).success).toBe(false);
  });

  it('a Suspended record is written only with a known subject whose kind is its reason; old odd ones still read', () => {
    expect(checkRecordBody('Suspended', 1, suspended(payment))).toMatchObject({ known: true, body: expect.anything() });
    expect(checkRecordBody('Suspended', 1, suspended(payment, 'approval'))).toMatchObject({ invalid: expect.stringContaining('subject.kind') });
    expect(checkRecordBody('Suspended', 1, suspended({ kind: 'payment', amount: 3 }))).toMatchObject({ known: true, invalid: expect.any(String) });
    expect(WaitSubjectSchema.safeParse({ ...budget, ceiling: 'patience' }).success).toBe(false);
  });
});
