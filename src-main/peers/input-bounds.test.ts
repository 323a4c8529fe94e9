/**
 * The measuring behind the input caps: sizes are exactly the bytes of the value's JSON, and
 * depth is counted without recursion (so a value too deep for JSON.stringify is still measured).
 */
import { describe, expect, it } from 'vitest';
import { argumentSizeProblem, describeBytes, jsonBytes, nestsDeeperThan } from './input-bounds';

describe('jsonBytes', () => {
  it('is the UTF-8 length of JSON.stringify for every kind of JSON value', () => {
    const values: unknown[] = [
      null,
      true,
      false,
      0,
      -1.5e-7,
      12345678901234,
      '',
      'plain',
      'quote " backslash \\ newline \n tab \t nul \u0000 del \u007f',
      'ünïcödé 日本語 🎉',
      'lone \ud800 surrogate',
      [],
      {},
      [1, 'two', [3, [4]], { five: 5 }],
      { a: 1, 'key with "quotes"': [null, true], nested: { deeper: { deepest: ['x'] } } },
    ];
    for (const value of values) expect(jsonBytes(value), JSON.stringify(value)).toBe(Buffer.byteLength(JSON.stringify(value), 'utf8'));
  });
});

describe('nestsDeeperThan', () => {
  it('counts levels of arrays and objects; scalars are level 0', () => {
    expect(nestsDeeperThan('x', 0)).toBe(false);
    expect(nestsDeeperThan([], 0)).toBe(true);
    expect(nestsDeeperThan([], 1)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: 1 }] }, 2)).toBe(true);
    expect(nestsDeeperThan([1, 2, [3]], 2)).toBe(false);
  });

  it('measures a million levels without overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(nestsDeeperThan(deep, 64)).toBe(true);
    expect(nestsDeeperThan(deep, 1_000_000)).toBe(false);
  });
});

describe('argumentSizeProblem', () => {
  it('names the argument over the cap, else the arguments together, in MB', () => {
    expect(argumentSizeProblem('ask', { query: 'x'.repeat(999_000) })).toBeNull();
    expect(argumentSizeProblem('translate_history', { from: 'openai', to: 'claude', messages: ['y'.repeat(18_874_368)] })).toBe('messages is 18.9 MB; the cap is 1 MB');
    expect(argumentSizeProblem('note', { a: 'z'.repeat(600_000), b: 'z'.repeat(600_000) })).toBe('arguments is 1.2 MB; the cap is 1 MB');
    // Rounding would hide the excess: the bytes are given instead.
    expect(argumentSizeProblem('ask', { query: 'x'.repeat(1_000_000) })).toBe('query is 1000002 bytes; the cap is 1 MB');
  });

  it('leaves upload_file\'s content out (it is staged, never journaled) but not its other arguments', () => {
    expect(argumentSizeProblem('upload_file', { filename: 'a.txt', content: 'c'.repeat(3_000_000) })).toBeNull();
    expect(argumentSizeProblem('upload_file', { filename: 'a.txt', content: 'c', junk: 'j'.repeat(3_000_000) })).toBe('junk is 3.0 MB; the cap is 1 MB');
  });

  it('describes sizes in decimal megabytes, as the cap is stated', () => {
    expect(describeBytes(1_000_000)).toBe('1 MB');
    expect(describeBytes(18_874_368)).toBe('18.9 MB');
    expect(describeBytes(812)).toBe('812 bytes');
  });
});
