import { describe, expect, it } from 'vitest';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { effectTiming, headsStep, stepHeading, stepOf, timingLine } from './effect-timing';

const rec = (seq: number, kind: string, time: string, body: Record<string, unknown>) => ({ seq, kind, time, runId: 'r', body }) as unknown as RecordView;

describe('an effect outcome shows its step, duration and disposition', () => {
  it('pairs EffectDone and EffectFailed with their EffectStarted by step and key', () => {
    const pages = {
      0: [
        rec(1, 'EffectStarted', '2026-01-01T00:00:00.000Z', { step: 0, key: 'a' }),
        rec(2, 'EffectDone', '2026-01-01T00:00:00.012Z', { step: 0, key: 'a' }),
        rec(3, 'EffectStarted', '2026-01-01T00:00:01.000Z', { step: 1, key: 'b' }),
        rec(4, 'EffectFailed', '2026-01-01T00:00:02.500Z', { step: 1, key: 'b', disposition: 'InDoubt' }),
        rec(5, 'EffectDone', '2026-01-01T00:00:03.000Z', { step: 2, key: 'c' }),
      ],
    };
    expect(timingLine(effectTiming(pages, pages[0][1]!)!)).toBe('12 ms · done');
    expect(timingLine(effectTiming(pages, pages[0][3]!)!)).toBe('1.5 s · InDoubt');
    expect(timingLine(effectTiming(pages, pages[0][4]!)!)).toBe('done');
    expect(effectTiming(pages, pages[0][0]!)).toBeNull();
  });
});

describe('records are grouped by step', () => {
  const pages = {
    0: [
      rec(1, 'RunAdmitted', '2026-01-01T00:00:00.000Z', {}),
      rec(2, 'BudgetVerdict', '2026-01-01T00:00:00.001Z', { step: 0, verdict: 'within' }),
      rec(3, 'Suspended', '2026-01-01T00:00:00.002Z', { step: 0, waitId: 'run-x/0/approval' }),
      rec(4, 'Decision', '2026-01-01T00:00:05.000Z', { waitId: 'run-x/0/approval', decision: 'approve' }),
      rec(5, 'EffectStarted', '2026-01-01T00:00:05.100Z', { step: 0, key: 'a', effect: 'peer', name: 'beta/ask' }),
      rec(6, 'EffectDone', '2026-01-01T00:00:06.300Z', { step: 0, key: 'a' }),
      rec(7, 'EffectStarted', '2026-01-01T00:00:07.000Z', { step: 1, key: 'b', effect: 'model', name: 'echo' }),
      rec(8, 'RunSealed', '2026-01-01T00:00:08.000Z', { outcome: 'failed' }),
    ],
  };
  const r = (i: number) => pages[0][i]!;

  it('finds each record’s step, a decision’s from its wait id, and none for run-level records', () => {
    expect(pages[0].map(stepOf)).toEqual([null, 0, 0, 0, 0, 0, 1, null]);
    expect(stepOf(rec(9, 'Decision', 't', { waitId: 'not-a-wait-id' }))).toBeNull();
  });

  it('heads a group with the first record of each step only', () => {
    expect(pages[0].map((record, i) => headsStep(pages[0][i - 1], record))).toEqual([false, true, false, false, false, false, true, false]);
    // The first loaded record of a page whose predecessor is not loaded heads its group.
    expect(headsStep(undefined, r(3))).toBe(true);
  });

  it('heads a group with the step’s effect, duration and how it ended, or that it has not', () => {
    expect(stepHeading(pages, r(1))).toBe('peer beta/ask · 1.2 s · done');
    // The EffectStarted heading its own group names the effect in its summary already.
    expect(stepHeading(pages, r(6))).toBe('not ended');
    expect(stepHeading(pages, r(4))).toBe('1.2 s · done');
    expect(stepHeading(pages, r(0))).toBeNull();
  });
});
