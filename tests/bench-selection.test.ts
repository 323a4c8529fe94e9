/** Which benchmarks a bench run takes (bench/bench-selection.ts): scale probes only with --scale, and only they then. */
import { describe, expect, it } from 'vitest';
import { parseBenchArgs, selectBenchmarks } from '../bench/bench-selection';
import type { Benchmark } from '../bench/bench-types';
import { scaleRecords } from '../bench/scale-support';

const bench = (name: string, scale?: boolean): Benchmark => ({
  name,
  goal: { maxRatio: 1, text: 'goal' },
  ...(scale === undefined ? {} : { scale }),
  run: () => Promise.reject(new Error('not run here')),
});

const ALL = [bench('journal-append'), bench('journal-verify', false), bench('scale-append', true), bench('scale-verify', true), bench('peer-ping')];
const names = (list: Benchmark[]) => list.map((b) => b.name);

describe('parseBenchArgs', () => {
  it('takes --scale anywhere among the names, and names alone as filters', () => {
    expect(parseBenchArgs([])).toEqual({ scale: false, filters: [] });
    expect(parseBenchArgs(['journal', 'peer'])).toEqual({ scale: false, filters: ['journal', 'peer'] });
    expect(parseBenchArgs(['verify', '--scale'])).toEqual({ scale: true, filters: ['verify'] });
  });

  it('refuses an option it does not know, naming it', () => {
    expect(() => parseBenchArgs(['--scal'])).toThrow(/unknown option --scal: the runner takes --scale/);
    expect(() => parseBenchArgs(['journal', '-s'])).toThrow(/unknown option -s/);
  });
});

describe('selectBenchmarks', () => {
  it('skips the scale probes without --scale, filters or not', () => {
    expect(names(selectBenchmarks(ALL, false, []))).toEqual(['journal-append', 'journal-verify', 'peer-ping']);
    expect(names(selectBenchmarks(ALL, false, ['append']))).toEqual(['journal-append']);
    expect(names(selectBenchmarks(ALL, false, ['scale']))).toEqual([]);
  });

  it('runs only the scale probes with --scale, and the name filters still apply among them', () => {
    expect(names(selectBenchmarks(ALL, true, []))).toEqual(['scale-append', 'scale-verify']);
    expect(names(selectBenchmarks(ALL, true, ['verify']))).toEqual(['scale-verify']);
    expect(names(selectBenchmarks(ALL, true, ['peer']))).toEqual([]);
  });
});

describe('scaleRecords', () => {
  it('is 10,000,000 unless BENCH_SCALE_RECORDS says otherwise', () => {
    expect(scaleRecords(undefined)).toBe(10_000_000);
    expect(scaleRecords('')).toBe(10_000_000);
    expect(scaleRecords('1_000_000')).toBe(1_000_000);
    expect(scaleRecords('2000000')).toBe(2_000_000);
  });

  it('refuses what is not a whole number above the 100,000 it is compared with', () => {
    expect(() => scaleRecords('many')).toThrow(/BENCH_SCALE_RECORDS must be a whole number of records above 100,000, not "many"/);
    expect(() => scaleRecords('100000')).toThrow(/above 100,000/);
    expect(() => scaleRecords('1.5e6')).not.toThrow();
    expect(() => scaleRecords('1500000.5')).toThrow(/whole number/);
  });
});
