import { describe, expect, it } from 'vitest';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { effectTiming, timingLine } from './effect-timing';

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
    expect(timingLine(effectTiming(pages, pages[0][1]!)!)).toBe('step 0 · 12 ms · done');
    expect(timingLine(effectTiming(pages, pages[0][3]!)!)).toBe('step 1 · 1.5 s · InDoubt');
    expect(timingLine(effectTiming(pages, pages[0][4]!)!)).toBe('step 2 · done');
    expect(effectTiming(pages, pages[0][0]!)).toBeNull();
  });
});
