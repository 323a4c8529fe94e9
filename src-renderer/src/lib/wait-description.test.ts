/**
 * Every wait leads with its human question in one line: a payment names amount, currency and
 * payee; a budget wait explains its number; the toast and notification line adds for whom and
 * which run.
 */
import { describe, expect, it } from 'vitest';
import type { Wait } from '../../../src-shared/ipc/contract';
import type { WaitSubject } from '../../../src-shared/vocabulary/waits';
import { describeWait, waitHeadline } from './wait-description';

const NO = { effects: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 };
const wait = (subject: WaitSubject | { kind: 'unrecognized'; raw: unknown }): Wait => ({
  waitId: 'w1',
  reason: subject.kind === 'unrecognized' ? 'approval' : subject.kind,
  step: 0,
  subject,
  subjectHash: 'ab'.repeat(32),
  since: '2026-01-01T00:00:00.000Z',
  seq: 3,
}) as Wait;
const party = { agent: 'pay-vendor', owner: 'user:local' };
const held = { name: 'request', destination: 'payee:ACME Corp', estimate: { ...NO, effects: 1 }, chain: ['user:local'], ...party };

describe('describeWait summary', () => {
  it('reads a payment as "Pay 12.50 USD to ACME Corp", with whom and which run in the headline', () => {
    const d = describeWait(wait({ kind: 'payment', effect: 'payment', request: { amount: 12.5, currency: 'USD', payee: 'ACME Corp' }, ...held }));
    expect(d.summary).toBe('Pay 12.50 USD to ACME Corp');
    expect(waitHeadline({ runId: 'run-1', owner: 'user:local', chain: ['user:local'], agent: 'pay-vendor' }, d)).toBe('Pay 12.50 USD to ACME Corp — for user:local, run run-1 (pay-vendor)');
  });

  it('reads a provenance wait as where each protected value came from, naming the untrusted origin and the path it was read through', () => {
    const fields = [
      { field: 'amount', value: 42, provenance: ['operator', 'peer:beta'], via: ['steps.quote.amount'] },
      { field: 'payee', value: 'Mallory', provenance: ['peer:beta'], via: ['steps.quote.payee'] },
    ];
    const d = describeWait(wait({ kind: 'provenance', effect: 'payment', request: { amount: 42, currency: 'USD', payee: 'Mallory' }, ...held, grant: 'payment:request', fields }));
    expect(d.title).toBe('Value from outside');
    expect(d.summary).toBe('The amount and payee of payment request came from peer:beta: let them through?');
    expect(d.origins).toEqual([
      { field: 'amount', value: 42, from: ['peer:beta'], via: ['steps.quote.amount'] },
      { field: 'payee', value: 'Mallory', from: ['peer:beta'], via: ['steps.quote.payee'] },
    ]);
  });

  it('explains a budget wait: the next estimate and how much of the ceiling is used', () => {
    const d = describeWait(
      wait({
        kind: 'budget',
        ceiling: 'tokens',
        spent: { ...NO, effects: 1, inputTokens: 20, outputTokens: 15 },
        budget: { maxTokens: 100 },
        next: { effect: 'model', name: 'local', estimate: { ...NO, effects: 1, inputTokens: 60, outputTokens: 13 } },
        ...party,
      }),
    );
    expect(d.summary).toBe('next call estimated at 73 tokens; 35 of 100 used');
  });

  it('gives every kind of wait a one-line summary', () => {
    expect(describeWait(wait({ kind: 'input', prompt: 'Which colour?', ...party })).summary).toBe('Answer: Which colour?');
    expect(describeWait(wait({ kind: 'approval', effect: 'tool', request: {}, ...held, name: 'write' })).summary).toBe('Allow tool write → payee:ACME Corp?');
    const delegation = describeWait(wait({ kind: 'approval', effect: 'agent', ...held, name: 'helper', destination: 'agent:helper', request: { agent: 'helper', input: { text: 'hi' } } }));
    expect(delegation).toMatchObject({ summary: 'Start a run of agent helper?', effect: 'agent helper → agent:helper', args: { text: 'hi' } });
    expect(describeWait(wait({ kind: 'halt', scope: 'agent:x', ...party })).summary).toContain('halt on agent:x');
    expect(describeWait(wait({ kind: 'recovery', effect: 'peer', name: 'beta/echo', request: {}, ...party })).summary).toContain('Did peer beta/echo happen?');
    expect(describeWait(wait({ kind: 'unrecognized', raw: { x: 1 } })).summary).toContain('another version');
  });
});
