/**
 * RFC 8785 conformance, proved against data we did not write: the reference implementation's
 * test vectors (tests/fixtures/jcs/input|output, see tests/fixtures/jcs/sources.md) compared
 * byte for byte, and RFC 8785 Appendix B's number table (tests/fixtures/jcs/numbers.json),
 * decoded from IEEE-754 bit patterns so no JavaScript number literal stands between the RFC
 * and the test. Then every refusal with its path, and properties over generated values.
 *
 * Reading the fixture bytes needs Node; the module under test does not. Test files are exempt
 * from src-shared's no-Node lint rule and are type-checked with the node side.
 */
import { Buffer } from 'node:buffer';
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CANONICAL_MAX_DEPTH, CanonicalJsonError, canonicalBytes, canonicalize, type CanonicalJsonRefusal } from './canonical-json';

const FIXTURES = new URL('../../tests/fixtures/jcs/', import.meta.url);
const readText = (path: URL): string => new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(path));

interface NumberCase {
  hex: string;
  expected: string;
  origin: string;
}
interface NonFiniteCase {
  hex: string;
  name: string;
}
const numbers = JSON.parse(readText(new URL('numbers.json', FIXTURES))) as {
  cases: NumberCase[];
  nonFinite: NonFiniteCase[];
};

function doubleFromHex(hex: string): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

function refusal(value: unknown): CanonicalJsonError {
  try {
    canonicalize(value);
  } catch (error) {
    if (error instanceof CanonicalJsonError) return error;
    throw error;
  }
  throw new Error('canonicalize accepted a value it must refuse');
}

describe('RFC 8785 reference vectors (cyberphone/json-canonicalization testdata)', () => {
  const names = readdirSync(new URL('input/', FIXTURES)).filter((name) => name.endsWith('.json'));

  it('has every vector the reference implementation ships', () => {
    for (const name of ['arrays', 'french', 'structures', 'unicode', 'values', 'weird']) {
      expect(names).toContain(`${name}.json`);
    }
  });

  it.each(names)('%s canonicalizes to the expected bytes exactly', (name) => {
    const input: unknown = JSON.parse(readText(new URL(`input/${name}`, FIXTURES)));
    const expected = new Uint8Array(readFileSync(new URL(`output/${name}`, FIXTURES)));
    expect(canonicalBytes(input)).toEqual(expected);
  });
});

describe('number serialization (RFC 8785 Appendix B)', () => {
  // The numbers canonicalize refuses as unsafe integers (|n| in (2^53 - 1, 1e21)). Their
  // ECMAScript text is still checked, so the table is covered in full: refusing them is
  // policy, not a formatting gap.
  const unsafe = numbers.cases.filter(({ hex }) => {
    const magnitude = Math.abs(doubleFromHex(hex));
    return magnitude > Number.MAX_SAFE_INTEGER && magnitude < 1e21;
  });

  it('refuses exactly the five digit-form integers beyond 2^53 - 1 in the table', () => {
    expect(unsafe.map(({ expected }) => expected)).toEqual([
      '9007199254740992',
      '-9007199254740992',
      '295147905179352830000',
      '999999999999999700000',
      '999999999999999900000',
    ]);
  });

  it.each(numbers.cases.filter((entry) => !unsafe.includes(entry)))('$hex is written $expected', ({ hex, expected }) => {
    expect(canonicalize(doubleFromHex(hex))).toBe(expected);
    expect(canonicalize({ n: [doubleFromHex(hex)] })).toBe(`{"n":[${expected}]}`);
  });

  it.each(unsafe)('$hex ($expected) is refused as an unsafe integer', ({ hex, expected }) => {
    const value = doubleFromHex(hex);
    expect(String(value)).toBe(expected);
    const error = refusal({ a: { b: [0, 1, value] } });
    expect(error.reason).toBe('unsafe-integer');
    expect(error.path).toBe('$.a.b[2]');
    expect(error.message).toContain('$.a.b[2]');
  });

  it.each(numbers.nonFinite)('$name ($hex) is refused', ({ hex }) => {
    const error = refusal({ a: { b: [0, 1, doubleFromHex(hex)] } });
    expect(error.reason).toBe('non-finite-number');
    expect(error.message).toContain('$.a.b[2]');
  });

  it('writes the cases the journal relies on', () => {
    expect(canonicalize(1e30)).toBe('1e+30');
    expect(canonicalize(-0)).toBe('0');
    expect(canonicalize(9.999999999999997e-7)).toBe('9.999999999999997e-7');
    expect(canonicalize(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    expect(canonicalize(-Number.MAX_SAFE_INTEGER)).toBe('-9007199254740991');
    expect(canonicalize(1e21)).toBe('1e+21');
    expect(canonicalize(-1e21)).toBe('-1e+21');
    expect(refusal(Number.MAX_SAFE_INTEGER + 1).path).toBe('$');
    expect(refusal(-(Number.MAX_SAFE_INTEGER + 1)).reason).toBe('unsafe-integer');
  });
});

describe('strings and member names', () => {
  it('escapes only what RFC 8785 section 3.2.2.2 escapes', () => {
    const controls = Array.from({ length: 0x20 }, (_, code) => String.fromCharCode(code)).join('');
    expect(canonicalize(controls)).toBe(
      '"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f' +
        '\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f"',
    );
    expect(canonicalize('"\\/')).toBe('"\\"\\\\/"');
    expect(canonicalize('\u007f\u0080\u2028\u2029\ufeff😂')).toBe('"\u007f\u0080\u2028\u2029\ufeff😂"');
  });

  it('sorts member names by UTF-16 code units (RFC 8785 section 3.2.3)', () => {
    // U+1F600 is the surrogate pair D83D DE00, so it sorts before U+FFFD although its code
    // point and its UTF-8 bytes sort after.
    expect(canonicalize({ '\ufffd': 1, '😀': 2, b: 3, B: 4, '10': 5, '1': 6, '': 7 })).toBe(
      '{"":7,"1":6,"10":5,"B":4,"b":3,"😀":2,"\ufffd":1}',
    );
  });

  it.each([
    ['a lone high surrogate', { a: { b: ['x', 'y', 'ok\ud800'] } }, '$.a.b[2]'],
    ['a lone low surrogate', { a: { b: ['x', 'y', '\udc00ok'] } }, '$.a.b[2]'],
    ['surrogates in the wrong order', { a: { b: ['x', 'y', '\ude00\ud83d'] } }, '$.a.b[2]'],
    ['a lone surrogate in a member name', { a: { 'bad\ud83d': 1 } }, '$.a["bad\\ud83d"]'],
  ])('refuses %s', (_label, value, path) => {
    const error = refusal(value);
    expect(error.reason).toBe('lone-surrogate');
    expect(error.path).toBe(path);
    expect(error.message).toContain(path);
  });

  it('accepts a surrogate pair split across nothing', () => {
    expect(canonicalize('\ud83d\ude00')).toBe('"😀"');
  });
});

describe('refusals name the path', () => {
  class Point {
    x = 1;
  }
  const cases: Array<[string, unknown, CanonicalJsonRefusal]> = [
    ['undefined', undefined, 'undefined'],
    ['a function', () => 1, 'unsupported-type'],
    ['a symbol', Symbol('s'), 'unsupported-type'],
    ['a bigint', 10n, 'unsupported-type'],
    ['a Date', new Date(0), 'not-plain-data'],
    ['a Map', new Map([['a', 1]]), 'not-plain-data'],
    ['a Set', new Set([1]), 'not-plain-data'],
    ['a Buffer', Buffer.from('ab'), 'not-plain-data'],
    ['a Uint8Array', new Uint8Array([1, 2]), 'not-plain-data'],
    ['a RegExp', /x/, 'not-plain-data'],
    ['a boxed string', Object('s'), 'not-plain-data'],
    ['a class instance', new Point(), 'not-plain-data'],
    ['NaN', Number.NaN, 'non-finite-number'],
  ];

  it.each(cases)('refuses %s inside an array', (_label, value, reason) => {
    const error = refusal({ a: { b: [null, true, value] } });
    expect(error).toBeInstanceOf(CanonicalJsonError);
    expect(error.reason).toBe(reason);
    expect(error.path).toBe('$.a.b[2]');
    expect(error.message).toContain('$.a.b[2]');
  });

  it.each(cases)('refuses %s as an object member', (_label, value, reason) => {
    const error = refusal({ a: { 'not an identifier': value } });
    expect(error.reason).toBe(reason);
    expect(error.path).toBe('$.a["not an identifier"]');
  });

  it.each(cases)('refuses %s at the top level', (_label, value, reason) => {
    const error = refusal(value);
    expect(error.reason).toBe(reason);
    expect(error.path).toBe('$');
  });

  it('refuses an array hole rather than writing null', () => {
    const holey: unknown[] = [1];
    holey[2] = 3;
    expect(refusal({ list: holey }).path).toBe('$.list[1]');
  });

  it('refuses a member whose value is undefined rather than dropping it', () => {
    const error = refusal({ kept: 1, dropped: undefined });
    expect(error.reason).toBe('undefined');
    expect(error.path).toBe('$.dropped');
  });

  it('refuses symbol-keyed members', () => {
    expect(refusal({ a: { [Symbol('s')]: 1 } }).path).toBe('$.a');
  });

  it('refuses cycles but accepts shared subtrees', () => {
    const shared = { x: 1 };
    expect(canonicalize({ a: shared, b: [shared] })).toBe('{"a":{"x":1},"b":[{"x":1}]}');
    const cyclic: Record<string, unknown> = { a: [] };
    (cyclic.a as unknown[]).push(cyclic);
    const error = refusal(cyclic);
    expect(error.reason).toBe('cycle');
    expect(error.path).toBe('$.a[0]');
  });

  it('refuses nesting past CANONICAL_MAX_DEPTH with a refusal, not a stack overflow or a database error', () => {
    const nest = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));
    expect(canonicalize(nest(CANONICAL_MAX_DEPTH))).toBe('['.repeat(CANONICAL_MAX_DEPTH) + ']'.repeat(CANONICAL_MAX_DEPTH));
    const error = refusal({ deep: nest(CANONICAL_MAX_DEPTH) });
    expect(error.reason).toBe('too-deep');
    expect(error.path).toBe(`$.deep${'[0]'.repeat(CANONICAL_MAX_DEPTH - 1)}`);
    expect(error.message).toMatch(/nested deeper than 512 levels/);
    // Far past any stack: still the same refusal.
    expect(refusal(nest(100_000)).reason).toBe('too-deep');
  });

  it('accepts objects without a prototype', () => {
    const bare = Object.create(null) as Record<string, unknown>;
    bare.b = 1;
    bare.a = [true, false, null];
    expect(canonicalize(bare)).toBe('{"a":[true,false,null],"b":1}');
  });

  it('ignores toJSON hooks instead of calling them', () => {
    expect(refusal({ when: { toJSON: () => 'x' } }).path).toBe('$.when.toJSON');
  });
});

describe('properties', () => {
  const canonicalNumber = fc
    .double({ noNaN: true, noDefaultInfinity: true })
    .filter((n) => !(Math.abs(n) > Number.MAX_SAFE_INTEGER && Math.abs(n) < 1e21));
  const text = fc.string({ unit: 'binary' });
  const { json } = fc.letrec((tie) => ({
    json: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant(null),
      fc.boolean(),
      canonicalNumber,
      fc.maxSafeInteger(),
      text,
      fc.array(tie('json'), { maxLength: 5 }),
      fc.dictionary(text, tie('json'), { maxKeys: 5 }),
    ),
  }));

  /** The same value with every object's members inserted in another order. */
  function reorder(value: unknown, seed: number): unknown {
    if (Array.isArray(value)) return value.map((item, index) => reorder(item, seed + index + 1));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value);
    const shuffled = entries
      .map((entry, index) => ({ entry, rank: Math.imul(index + 1, 0x9e3779b1) ^ seed }))
      .sort((a, b) => a.rank - b.rank)
      .map(({ entry: [key, item] }, index) => [key, reorder(item, seed + index + 7)] as const);
    // fromEntries defines own members, so a generated "__proto__" key stays a member.
    return Object.fromEntries(shuffled.reverse());
  }

  /** An independent oracle: JSON.stringify of the value with keys sorted by code units. */
  function sortedStringify(value: unknown): string {
    return JSON.stringify(value, (_key, item: unknown) =>
      item !== null && typeof item === 'object' && !Array.isArray(item)
        ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : item,
    );
  }

  it('is a fixed point: canonicalize(JSON.parse(canonicalize(x))) === canonicalize(x)', () => {
    fc.assert(
      fc.property(json, (value) => {
        const once = canonicalize(value);
        expect(canonicalize(JSON.parse(once))).toBe(once);
      }),
    );
  });

  it('does not depend on the insertion order of members', () => {
    fc.assert(
      fc.property(json, fc.integer(), (value, seed) => {
        expect(canonicalize(reorder(value, seed))).toBe(canonicalize(value));
      }),
    );
  });

  it('agrees with JSON.stringify of the key-sorted value, and with its UTF-8 bytes', () => {
    fc.assert(
      fc.property(json, (value) => {
        const canonical = canonicalize(value);
        expect(canonical).toBe(sortedStringify(value));
        expect(canonicalBytes(value)).toEqual(new TextEncoder().encode(canonical));
      }),
    );
  });
});
