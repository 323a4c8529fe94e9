/** Borderline verdicts (bench/borderline.ts): which runs are run again, and which run is judged. */
import { describe, expect, it } from 'vitest';
import { borderlineRuns, isBorderline, medianRun, worstRatio } from '../bench/borderline';
import type { BenchResult } from '../bench/bench-types';

/** A run whose judged lines cost `ratios` (a lower-is-better metric: subject = ratio × baseline). */
function run(label: string, ...ratios: number[]): { label: string; result: BenchResult } {
  return {
    label,
    result: {
      subject: label,
      baseline: 'b',
      measurements: [
        ...ratios.map((r, i) => ({ metric: `m${i}`, unit: 'ms', subject: r * 100, baseline: 100, better: 'lower' as const, judged: true })),
        // Shown only: never decides, however bad.
        { metric: 'p99', unit: 'ms', subject: 900, baseline: 100, better: 'lower', judged: false },
      ],
    },
  };
}

describe('isBorderline', () => {
  it('is true within 15% of the goal either side, false further out or with nothing judged', () => {
    expect(isBorderline(1.5, 1.5)).toBe(true);
    expect(isBorderline(1.3, 1.5)).toBe(true);
    expect(isBorderline(1.72, 1.5)).toBe(true);
    expect(isBorderline(1.27, 1.5)).toBe(false);
    expect(isBorderline(1.73, 1.5)).toBe(false);
    expect(isBorderline(0.02, 0.05)).toBe(false);
    expect(isBorderline(undefined, 1.5)).toBe(false);
    expect(isBorderline(Number.NaN, 1.5)).toBe(false);
    expect(isBorderline(Infinity, 1.5)).toBe(false);
  });
});

describe('borderlineRuns', () => {
  it('defaults to 3 and takes a whole number from 1 to 15', () => {
    expect(borderlineRuns(undefined)).toBe(3);
    expect(borderlineRuns('')).toBe(3);
    expect(borderlineRuns('1')).toBe(1);
    expect(borderlineRuns('5')).toBe(5);
  });

  it('refuses anything else, naming the value', () => {
    for (const bad of ['0', '-1', '2.5', 'three', '16']) expect(() => borderlineRuns(bad)).toThrow(`got "${bad}"`);
  });
});

describe('medianRun', () => {
  it("judges the run whose worst judged ratio is the median, by each run's worst line", () => {
    const runs = [run('a', 1.2, 1.9), run('b', 1.4), run('c', 1.0, 1.6)];
    expect(runs.map((r) => worstRatio(r.result))).toEqual([1.9, 1.4, 1.6]);
    expect(medianRun(runs).label).toBe('c');
  });

  it('takes the better middle run of an even count, and sorts runs with nothing judged last', () => {
    expect(medianRun([run('a', 1.6), run('b', 1.4)]).label).toBe('b');
    expect(medianRun([run('none'), run('a', 1.6), run('b', 1.4)]).label).toBe('a');
    expect(medianRun([run('only', 2)]).label).toBe('only');
    expect(() => medianRun([])).toThrow('at least one run');
  });
});
