/**
 * A model effect reads as `provider:model` wherever the UI describes it: the timeline's started
 * and done rows and a step's heading (with the model that answered, when another), an approval
 * or recovery question, and a budget wait stopped because the spend is unaccounted under a
 * money ceiling.
 */
import { describe, expect, it } from 'vitest';
import type { RecordView, Wait } from '../../../src-shared/ipc/contract';
import type { WaitSubject } from '../../../src-shared/vocabulary/waits';
import { summarizeRecord } from './record-summary';
import { stepHeading } from './effect-timing';
import { describeWait } from './wait-description';

const NO = { effects: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 };
const REQUEST = { provider: { id: 'anthropic', label: 'Anthropic Messages' }, model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Summarise the overdue invoices.' }], maxTokens: 256 };
const record = (seq: number, kind: string, body: Record<string, unknown>): RecordView =>
  ({ seq, kind, v: 1, runId: 'run-1', time: `2026-01-01T00:00:0${seq}.000Z`, body, prevHash: '', hash: '', known: true }) as unknown as RecordView;
const startedRecord = record(1, 'EffectStarted', { step: 0, effect: 'model', name: 'anthropic', key: 'k', request: REQUEST, destination: 'https://api.anthropic.com' });
const doneRecord = record(2, 'EffectDone', { step: 0, key: 'k', result: { text: 'Three are overdue.', model: 'claude-sonnet-4-5-20250929', usage: {}, truncated: false }, spend: { ...NO, effects: 1 }, provenance: 'model:anthropic' });
const wait = (subject: WaitSubject): Wait => ({ waitId: 'w1', reason: subject.kind, step: 0, subject, subjectHash: 'ab'.repeat(32), since: '2026-01-01T00:00:00.000Z', seq: 3 }) as Wait;
const party = { agent: 'summariser', owner: 'user:local' };

describe('model effects in words', () => {
  it('the timeline: asked as provider:model with the prompt, answered by the model the provider named', () => {
    expect(summarizeRecord(startedRecord)).toBe('model anthropic:claude-sonnet-4-5 → https://api.anthropic.com · Summarise the overdue invoices.');
    expect(summarizeRecord(doneRecord)).toContain('answered by anthropic:claude-sonnet-4-5-20250929 · Three are overdue.');
  });

  it('a step heading shows the model asked and the one that answered', () => {
    const verdict = record(0, 'BudgetVerdict', { step: 0, verdict: 'within', spent: NO, budget: {} });
    const pages = { 0: [verdict, startedRecord, doneRecord] };
    expect(stepHeading(pages, verdict)).toMatch(/^model anthropic:claude-sonnet-4-5 → claude-sonnet-4-5-20250929 · 1.0 s · done$/);
  });

  it('an approval and a recovery name provider:model', () => {
    const held = { effect: 'model' as const, name: 'anthropic', request: REQUEST, destination: 'https://api.anthropic.com', estimate: { ...NO, effects: 1 }, chain: ['user:local'], ...party };
    expect(describeWait(wait({ kind: 'approval', ...held })).summary).toBe('Allow model anthropic:claude-sonnet-4-5 → https://api.anthropic.com?');
    expect(describeWait(wait({ kind: 'recovery', effect: 'model', name: 'anthropic', request: REQUEST, ...party })).summary).toBe('Did model anthropic:claude-sonnet-4-5 happen? Retry it, mark it landed, or fail the run');
  });

  it('a budget wait under a money ceiling with unaccounted spend says so rather than showing a number that reads under', () => {
    const budget = (unaccounted: boolean) =>
      describeWait(wait({ kind: 'budget', ceiling: 'cost', spent: { ...NO, effects: 1, costMicros: 40, ...(unaccounted ? { unaccounted } : {}) }, budget: { maxCostMicros: 1_000_000 }, next: { effect: 'model', name: 'anthropic', estimate: { ...NO, effects: 1 } }, ...party })).summary;
    expect(budget(true)).toBe('the spend so far is unaccounted (a model with no price answered, or a call was cut before its bill), so the money ceiling cannot be held; 40 of 1000000 micro-units counted');
    expect(budget(false)).toBe('next call estimated at 0 micro-units; 40 of 1000000 used');
  });
});
