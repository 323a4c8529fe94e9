/**
 * The canonicaliser is on the journal's append path and was rewritten for speed (one walk that
 * checks and writes by concatenation, refusal paths built only on the way out). This holds it to
 * the straightforward implementation it replaced, kept here as the reference: the same bytes for
 * every value that has a canonical form, and the same refusal (reason and path) for every value
 * that has not, including which refusal wins when a value holds several.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CANONICAL_MAX_DEPTH, CanonicalJsonError, canonicalize } from './canonical-json';

// ---- the reference: the previous implementation, walking with a path string and a Set ----
const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const ESCAPE = /["\\\u0000-\u001F]/g;
const SHORT: Readonly<Record<string, string>> = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' };
const refKey = (path: string, key: string): string => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`);

function refQuote(text: string, path: string): string {
  if (LONE.test(text)) throw new CanonicalJsonError('lone-surrogate', path, 'lone');
  return `"${text.replace(ESCAPE, (c) => SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

function reference(value: unknown, path = '$', ancestors = new Set<object>()): string {
  switch (typeof value) {
    case 'string':
      return refQuote(value, path);
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalJsonError('non-finite-number', path, 'nf');
      if (Math.abs(value) > Number.MAX_SAFE_INTEGER && Math.abs(value) < 1e21) throw new CanonicalJsonError('unsafe-integer', path, 'big');
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      throw new CanonicalJsonError('undefined', path, 'u');
    case 'bigint':
    case 'function':
    case 'symbol':
      throw new CanonicalJsonError('unsupported-type', path, 't');
    default:
      break;
  }
  if (value === null) return 'null';
  const object = value as object;
  if (ancestors.has(object)) throw new CanonicalJsonError('cycle', path, 'c');
  if (ancestors.size >= CANONICAL_MAX_DEPTH) throw new CanonicalJsonError('too-deep', path, 'd');
  ancestors.add(object);
  let text: string;
  if (Array.isArray(object) && Object.getPrototypeOf(object) === Array.prototype) {
    const parts: string[] = [];
    for (let i = 0; i < object.length; i++) parts.push(reference((object as unknown[])[i], `${path}[${i}]`, ancestors));
    text = `[${parts.join(',')}]`;
  } else {
    const prototype: unknown = Object.getPrototypeOf(object);
    if (prototype !== Object.prototype && prototype !== null) throw new CanonicalJsonError('not-plain-data', path, 'p');
    if (Object.getOwnPropertySymbols(object).some((s) => Object.prototype.propertyIsEnumerable.call(object, s))) {
      throw new CanonicalJsonError('unsupported-type', path, 's');
    }
    const record = object as Record<string, unknown>;
    const parts = Object.keys(record)
      .sort()
      .map((key) => {
        const memberPath = refKey(path, key);
        return `${refQuote(key, memberPath)}:${reference(record[key], memberPath, ancestors)}`;
      });
    text = `{${parts.join(',')}}`;
  }
  ancestors.delete(object);
  return text;
}

type Outcome = { text: string } | { reason: string; path: string };
function outcome(run: () => string): Outcome {
  try {
    return { text: run() };
  } catch (error) {
    if (!(error instanceof CanonicalJsonError)) throw error;
    return { reason: error.reason, path: error.path };
  }
}

// Strings that reach every branch: plain text, escapes, control characters, paired and lone surrogates.
const awkwardString = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\uD83D', '\uDE00', 'é') }),
);
// Values that cannot be canonicalised, placed anywhere in a tree.
const poison = fc.constantFrom<unknown>(undefined, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 10n, () => 1, Symbol('s'), new Date(0), new Map(), Object.create(Array.prototype) as unknown);
const leaf = fc.oneof({ weight: 6, arbitrary: fc.oneof(awkwardString, fc.double(), fc.integer(), fc.boolean(), fc.constant(null)) }, { weight: 1, arbitrary: poison });
const tree = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(awkwardString, tie('value'), { maxKeys: 5 }),
  ),
})).value;

describe('canonicalize matches the reference implementation', () => {
  it('gives the same bytes, or the same refusal at the same path, for generated values', () => {
    fc.assert(
      fc.property(tree, (value) => {
        expect(outcome(() => canonicalize(value))).toEqual(outcome(() => reference(value)));
      }),
      { numRuns: 3000 },
    );
  });

  it('orders wide objects as the reference does, on both sides of the insertion-sort bound', () => {
    // The fast walk sorts up to 16 member names by insertion and more with Array.prototype.sort;
    // the generated trees above hold at most 5, so this covers the rest. Names repeat across
    // values (the quoted-name cache), escaped ones included. Values that always have a form, so
    // nearly every case is written (a refused one would be ordered by the second walk).
    const names = fc.oneof(fc.string(), fc.constantFrom('a', 'b', 'B', '_', 'é', 'a"b', '\n', '\uD83D\uDE00', '', '10', '9'));
    const plain = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
    let written = 0;
    fc.assert(
      fc.property(fc.dictionary(names, plain, { minKeys: 10, maxKeys: 40 }), (value) => {
        const result = outcome(() => canonicalize(value));
        expect(result).toEqual(outcome(() => reference(value)));
        if ('text' in result && Object.keys(value).length > 16) written += 1;
      }),
      { numRuns: 500 },
    );
    expect(written).toBeGreaterThan(100);
  });

  it('refuses a cycle at the same path, and a symbol-keyed member, as the reference does', () => {
    const cyclic: Record<string, unknown> = { a: [1, { b: null }] };
    ((cyclic.a as unknown[])[1] as Record<string, unknown>).b = cyclic;
    expect(outcome(() => canonicalize(cyclic))).toEqual({ reason: 'cycle', path: '$.a[1].b' });
    expect(outcome(() => reference(cyclic))).toEqual({ reason: 'cycle', path: '$.a[1].b' });
    const shared = { x: 1 };
    expect(canonicalize({ p: shared, q: [shared] })).toBe(reference({ p: shared, q: [shared] }));
    const symbolic = { ['odd key']: { [Symbol('k')]: 1 } };
    expect(outcome(() => canonicalize(symbolic))).toEqual(outcome(() => reference(symbolic)));
    expect(outcome(() => canonicalize(symbolic))).toEqual({ reason: 'unsupported-type', path: '$["odd key"]' });
  });
});
