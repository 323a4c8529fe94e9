import { describe, expect, it } from 'vitest';
import { isRunId } from '../../src-shared/vocabulary/ids';
import { newRunId, randomHex, randomUnit } from './random-ids';

describe('random ids from a pool of the CSPRNG', () => {
  it('makes run ids the contract accepts, each one new, across many refills of the pool', () => {
    // 6 random bytes an id: 5,000 ids take about seven 4 KB pools, so refills happen mid-stream.
    const ids = Array.from({ length: 5_000 }, newRunId);
    for (const id of ids) expect(isRunId(id), id).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('makes run ids that rise with the clock, so the journal\'s run index grows at its right edge', () => {
    // Admitted a millisecond apart, ids sort in admission order (records_by_run is keyed by them).
    const ids = Array.from({ length: 200 }, (_, i) => newRunId(1_764_000_000_000 + i));
    expect([...ids].sort()).toEqual(ids);
    // The clock's part is the milliseconds modulo 2^32, in 8 hex digits; the rest is random.
    expect(newRunId(0x1_2345_6789)).toMatch(/^run-23456789[0-9a-f]{12}$/);
    expect(newRunId(5)).toMatch(/^run-00000005[0-9a-f]{12}$/);
  });

  it('never issues one run id twice, even thousands in one millisecond', () => {
    const ids = Array.from({ length: 5_000 }, () => newRunId(1_764_000_000_000));
    for (const id of ids) expect(isRunId(id), id).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // The random part really varies: 5,000 draws of 48 bits share no prefix of 6 hex digits often.
    expect(new Set(ids.map((id) => id.slice(12, 18))).size).toBeGreaterThan(4_900);
  });

  it('never hands out the same bytes twice: consecutive draws do not overlap', () => {
    // Were a draw to start inside the previous one, 32-byte draws would repeat their halves.
    const halves = new Set<string>();
    for (let i = 0; i < 2_000; i++) {
      const hex = randomHex(32);
      expect(hex).toMatch(/^[0-9a-f]{64}$/);
      for (const half of [hex.slice(0, 32), hex.slice(32)]) {
        expect(halves.has(half)).toBe(false);
        halves.add(half);
      }
    }
  });

  it('spreads its bytes: every hex digit about as often as every other', () => {
    const counts = new Map<string, number>();
    const text = Array.from({ length: 4_000 }, () => randomHex(8)).join('');
    for (const digit of text) counts.set(digit, (counts.get(digit) ?? 0) + 1);
    expect(counts.size).toBe(16);
    const expected = text.length / 16;
    for (const count of counts.values()) expect(Math.abs(count - expected) / expected).toBeLessThan(0.1);
  });

  it('draws uniform numbers in [0, 1)', () => {
    const values = Array.from({ length: 10_000 }, randomUnit);
    for (const value of values) expect(value >= 0 && value < 1).toBe(true);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.02);
    expect(new Set(values).size).toBe(values.length);
  });

  it('refuses a draw it cannot make rather than reusing bytes', () => {
    expect(() => randomHex(0)).toThrow(RangeError);
    expect(() => randomHex(4097)).toThrow(/4097 bytes is not between 1 and 4096/);
    expect(() => randomHex(1.5)).toThrow(RangeError);
    expect(randomHex(4096)).toMatch(/^[0-9a-f]{8192}$/);
  });
});
