/**
 * RFC 8785 JSON Canonicalization Scheme (JCS): the one byte form of a journal record.
 *
 * Why canonical JSON: the journal's hash chain and its signed Merkle checkpoints are only
 * worth something if any verifier, in any language, can recompute the exact bytes we hashed
 * from the parsed record. RFC 8785 pins every choice JSON leaves open: object members sorted
 * by the UTF-16 code units of their names, no whitespace, strings escaped minimally (only `"`,
 * `\` and U+0000..U+001F, with the short forms \b \t \n \f \r and lowercase \u00xx for the
 * rest), and numbers written exactly as ECMAScript's Number::toString writes them. `1e+30`
 * versus `1e30` is the difference between a signature every conforming verifier accepts and
 * one only we do.
 *
 * What this module refuses, with a `CanonicalJsonError` naming the JSONPath-like location
 * (`$.a.b[2]`) of the offending value, because no verifier could recompute the same bytes:
 * - strings or member names holding a lone (unpaired) surrogate: they have no UTF-8 form, so
 *   the bytes we would hash are not the bytes a verifier decodes (RFC 8785 requires I-JSON);
 * - NaN, Infinity and -Infinity: JSON has no spelling for them;
 * - numbers that ECMAScript writes as a bare run of digits beyond the safe-integer range,
 *   that is |n| > 2^53 - 1 and |n| < 10^21 (integral by necessity: every double at or above
 *   2^52 is an integer). Such a number has no double of its own in the sense that matters:
 *   2^53 + 1 arrives here as 2^53, and verifiers that read integer literals as exact
 *   integers (Python's json, Go's json.Number, I-JSON-strict canonicalizers) either refuse
 *   the text or see a different number than the one we hashed. From 10^21 up ECMAScript
 *   writes an exponent (`1e+21`), which every JSON parser reads as a double and writes back
 *   identically, so those are accepted: RFC 8785's own test vector holds `1e+30`. The bound
 *   is Number.MAX_SAFE_INTEGER (I-JSON, RFC 7493 section 2.2), so 2^53 itself is refused: it
 *   is also the double that 2^53 + 1 rounds to, and we cannot tell which one was meant;
 * - `undefined` anywhere, including as an object member's value. JSON.stringify silently
 *   drops such members and turns array holes into null; a journal record that silently
 *   loses a field is worse than one that fails to write, so be explicit and omit the key;
 * - functions, symbols, bigints, own symbol-keyed members, and every object that is not a
 *   plain object (prototype Object.prototype or null) or a plain array: Date, Map, Set,
 *   RegExp, Buffer, Uint8Array, boxed primitives, class instances. Their JSON form depends
 *   on toJSON hooks or is lossy; callers convert them to plain data first (docs/STYLE.md 11);
 * - cycles, which have no finite form;
 * - nesting deeper than CANONICAL_MAX_DEPTH arrays and objects: SQLite's JSON functions (which
 *   the journal's indexes run on every body) refuse past 1,000 levels, as do common parsers in
 *   other languages a verifier may use, and each walk here recurses once a level. Refusing at a
 *   known depth turns what would be a database error or a stack overflow, and a lost batch, into
 *   a clear refusal of the one record, and keeps every stored record readable everywhere.
 *
 * src-shared is pure TypeScript (no Node built-ins), so the renderer and any browser-side
 * verifier run this same code.
 */
import { isPlainObject } from '../plain-object';

export type CanonicalJsonRefusal =
  | 'lone-surrogate'
  | 'non-finite-number'
  | 'unsafe-integer'
  | 'undefined'
  | 'unsupported-type'
  | 'not-plain-data'
  | 'cycle'
  | 'too-deep';

/** The most arrays and objects a canonical value may nest (the outermost counts as one). */
export const CANONICAL_MAX_DEPTH = 512;

/** A value that has no RFC 8785 form; `path` locates it, e.g. `$.a.b[2]`. */
export class CanonicalJsonError extends Error {
  override readonly name = 'CanonicalJsonError';
  readonly path: string;
  readonly reason: CanonicalJsonRefusal;

  constructor(reason: CanonicalJsonRefusal, path: string, detail: string) {
    super(`cannot canonicalize ${path}: ${detail}`);
    this.path = path;
    this.reason = reason;
  }
}

/**
 * How the text is built (the journal canonicalises every record body it writes, so this is on
 * the append path; bench/journal-append.bench.ts profiles it). Two walks, and almost every value
 * takes only the first:
 * - the fast walk checks and writes together, by string concatenation, and knows nothing of
 *   paths: on the first thing it cannot write it throws one shared sentinel, allocating nothing.
 *   It refuses everything the second walk refuses (its checks are the same ones), so text it
 *   returns is the text the second walk would have returned;
 * - only a value the fast walk refused is walked again, by the second walk, which builds the
 *   refusal's path on the way out (each enclosing array or object adds its own index or name as
 *   the `Refusal` passes through it) and so names the same refusal at the same path it always
 *   did. A getter on a refused value runs once per walk: record bodies are plain data, and a
 *   refusal is already the slow, rare case.
 * What the split bought, measured on the journal bench's record bodies (about 170 bytes each):
 * 1.05 µs a body down to 0.63 µs (JSON.stringify, which sorts nothing and checks nothing, 0.54).
 * The fast walk has no try/catch per member, sorts a small object's names by insertion rather
 * than Array.prototype.sort, and reuses each member name's quoted form (names repeat across
 * records; the cache is bounded). The bytes, the refusals, which refusal wins when a value holds
 * several (the first in canonical order) and its path are exactly those of the straightforward
 * implementation these replaced; canonical-json-equivalence.test.ts holds them together over
 * generated values.
 */

/** The RFC 8785 canonical text of `value`. Throws CanonicalJsonError for what it cannot represent. */
export function canonicalize(value: unknown): string {
  try {
    // A string or number (a record's envelope fields, hashed once per record) needs no stack.
    return typeof value === 'object' && value !== null ? fastValue(value, []) : fastValue(value, NO_OPEN);
  } catch (error) {
    if (error !== CANNOT) throw error;
  }
  try {
    return writeValue(value, []);
  } catch (error) {
    if (error instanceof Refusal) throw new CanonicalJsonError(error.reason, error.path(), error.detail);
    throw error;
  }
}

/** The UTF-8 bytes of canonicalize(value): what the journal hashes and signs. */
export function canonicalBytes(value: unknown): Uint8Array {
  return new TextEncoder().encode(canonicalize(value));
}

// Exponent form starts here (ECMAScript Number::toString step: 21 digits or more).
const EXPONENT_FORM_THRESHOLD = 1e21;

/** A refusal on its way out of the walk; `segments` are the indexes and names from the value outward. */
class Refusal {
  readonly segments: Array<string | number> = [];

  constructor(
    readonly reason: CanonicalJsonRefusal,
    readonly detail: string,
  ) {}

  path(): string {
    let path = '$';
    for (let i = this.segments.length - 1; i >= 0; i--) {
      const segment = this.segments[i]!;
      path = typeof segment === 'number' ? `${path}[${segment}]` : appendKey(path, segment);
    }
    return path;
  }
}

/** What the fast walk throws at anything it cannot write; canonicalize then walks again with paths. */
const CANNOT: unique symbol = Symbol('cannot canonicalize');
/** The fast walk's stack for a primitive at the top, which never pushes onto it. */
const NO_OPEN: object[] = Object.freeze([]) as unknown as object[];
// Below this many member names insertion sort beats Array.prototype.sort's set-up.
const INSERTION_SORT_MAX = 16;
// The quoted-name cache's bounds: names come from whatever a body holds (a peer's result, say),
// so it keeps at most this many, each at most this long, and never grows past them.
const QUOTED_NAMES_MAX = 4096;
const QUOTED_NAME_MAX_LENGTH = 64;
/** Member names as the fast walk writes them, quoted and with the colon: `"name":`. */
const quotedNames = new Map<string, string>();

/** The fast walk: writeValue's checks and bytes without its paths; throws CANNOT instead of a Refusal. */
function fastValue(value: unknown, open: object[]): string {
  switch (typeof value) {
    case 'string':
      return fastString(value);
    case 'number':
      if (!Number.isFinite(value)) throw CANNOT;
      if (Math.abs(value) > Number.MAX_SAFE_INTEGER && Math.abs(value) < EXPONENT_FORM_THRESHOLD) throw CANNOT;
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      break;
    default:
      throw CANNOT;
  }
  if (value === null) return 'null';
  if (open.includes(value)) throw CANNOT;
  if (open.length >= CANONICAL_MAX_DEPTH) throw CANNOT;
  open.push(value);
  const prototype: unknown = Object.getPrototypeOf(value);
  let text: string;
  if (prototype === Array.prototype && Array.isArray(value)) {
    // Joined, not concatenated: a long array (a fork's thousand reused steps) concatenated item
    // by item is a tree of cons strings that outlives young-generation collection until it is
    // hashed; joining makes one flat string (docs/PERFORMANCE.md, time travel).
    const items = new Array<string>(value.length);
    for (let index = 0; index < value.length; index++) items[index] = fastValue(value[index], open);
    text = `[${items.join(',')}]`;
  } else if (prototype === Object.prototype || prototype === null) {
    const object = value as Record<string, unknown>;
    const symbols = Object.getOwnPropertySymbols(object);
    if (symbols.length > 0 && symbols.some((symbol) => Object.prototype.propertyIsEnumerable.call(object, symbol))) throw CANNOT;
    const keys = sortNames(Object.keys(object));
    text = '{';
    for (let position = 0; position < keys.length; position++) {
      const key = keys[position]!;
      const member = quotedName(key) + fastValue(object[key], open);
      text = position > 0 ? `${text},${member}` : text + member;
    }
    text += '}';
  } else {
    throw CANNOT;
  }
  open.pop();
  return text;
}

function fastString(text: string): string {
  if (!NEEDS_CARE.test(text)) return `"${text}"`;
  if (SURROGATE.test(text) && LONE_SURROGATE.test(text)) throw CANNOT;
  return JSON.stringify(text); // see quoteString
}

function quotedName(name: string): string {
  let quoted = quotedNames.get(name);
  if (quoted === undefined) {
    quoted = `${fastString(name)}:`;
    if (quotedNames.size < QUOTED_NAMES_MAX && name.length <= QUOTED_NAME_MAX_LENGTH) quotedNames.set(name, quoted);
  }
  return quoted;
}

/**
 * `names` in UTF-16 code unit order (RFC 8785 section 3.2.3), in place. `<` on strings compares
 * code units, as Array.prototype.sort without a comparator does; both are exactly the RFC's order.
 */
function sortNames(names: string[]): string[] {
  if (names.length > INSERTION_SORT_MAX) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const name = names[i]!;
    let j = i - 1;
    while (j >= 0 && names[j]! > name) {
      names[j + 1] = names[j]!;
      j--;
    }
    names[j + 1] = name;
  }
  return names;
}

/** `open`: the arrays and objects being written, outermost first (a value among them is a cycle). */
function writeValue(value: unknown, open: object[]): string {
  switch (typeof value) {
    case 'string':
      return quoteString(value);
    case 'number':
      return formatNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      throw new Refusal('undefined', 'undefined has no JSON form; omit the member instead');
    case 'bigint':
      throw new Refusal('unsupported-type', 'a bigint has no RFC 8785 form; write it as a decimal string');
    case 'function':
    case 'symbol':
      throw new Refusal('unsupported-type', `a ${typeof value} has no JSON form`);
    case 'object':
      break;
  }
  if (value === null) return 'null';
  if (open.includes(value)) throw new Refusal('cycle', 'the value contains itself');
  if (open.length >= CANONICAL_MAX_DEPTH) throw new Refusal('too-deep', `nested deeper than ${CANONICAL_MAX_DEPTH} levels of arrays and objects`);
  let text: string;
  open.push(value);
  if (Array.isArray(value) && Object.getPrototypeOf(value) === Array.prototype) {
    text = writeArray(value, open);
  } else if (isPlainObject(value)) {
    text = writeObject(value, open);
  } else {
    throw new Refusal('not-plain-data', `${describeObject(value)} is not a plain object or array`);
  }
  open.pop();
  return text;
}

function writeArray(array: readonly unknown[], open: object[]): string {
  let text = '[';
  // An index loop, not forEach: holes must be visited (and refused as undefined).
  for (let index = 0; index < array.length; index++) {
    try {
      text += index > 0 ? `,${writeValue(array[index], open)}` : writeValue(array[index], open);
    } catch (error) {
      if (error instanceof Refusal) error.segments.push(index);
      throw error;
    }
  }
  return `${text}]`;
}

function writeObject(object: Record<string, unknown>, open: object[]): string {
  const symbols = Object.getOwnPropertySymbols(object);
  if (symbols.length > 0 && symbols.some((symbol) => Object.prototype.propertyIsEnumerable.call(object, symbol))) {
    throw new Refusal('unsupported-type', 'symbol-keyed members have no JSON form');
  }
  // Array.prototype.sort without a comparator orders strings by UTF-16 code units, which is
  // exactly RFC 8785 section 3.2.3 (not locale order, not code point order).
  const keys = Object.keys(object).sort();
  let text = '{';
  for (let position = 0; position < keys.length; position++) {
    const key = keys[position]!;
    try {
      // The name is checked before the value, as a reader meets them.
      const member = `${quoteString(key)}:${writeValue(object[key], open)}`;
      text += position > 0 ? `,${member}` : member;
    } catch (error) {
      if (error instanceof Refusal) error.segments.push(key);
      throw error;
    }
  }
  return `${text}}`;
}

function describeObject(value: object): string {
  const prototype: unknown = Object.getPrototypeOf(value);
  const constructorName =
    typeof prototype === 'object' && prototype !== null && 'constructor' in prototype && typeof prototype.constructor === 'function'
      ? prototype.constructor.name
      : '';
  return constructorName ? `a ${constructorName}` : 'an exotic object';
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) {
    throw new Refusal('non-finite-number', `${String(value)} has no JSON form`);
  }
  const magnitude = Math.abs(value);
  if (magnitude > Number.MAX_SAFE_INTEGER && magnitude < EXPONENT_FORM_THRESHOLD) {
    throw new Refusal('unsafe-integer', `${String(value)} is beyond ±(2^53 - 1); integers that large are not exact in JSON, write it as a string`);
  }
  // String(n) is ECMAScript Number::toString, the serialisation RFC 8785 section 3.2.2.3
  // adopts (shortest round-trip digits, exponent form outside [1e-7, 1e21)). String(-0) is
  // "0", as the RFC requires.
  return String(value);
}

// Anything a string may hold that is not written as it is, or that may be refused: what RFC
// 8785 section 3.2.2.2 escapes (`"`, `\`, U+0000..U+001F) and every surrogate. Most strings in
// a record hold none of these and are written between quotes with no further look.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const NEEDS_CARE = /["\\\u0000-\u001F\uD800-\uDFFF]/;
const SURROGATE = /[\uD800-\uDFFF]/;
// A high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function quoteString(text: string): string {
  if (!NEEDS_CARE.test(text)) return `"${text}"`;
  if (SURROGATE.test(text)) {
    const lone = LONE_SURROGATE.exec(text);
    if (lone) {
      const unit = lone[0].charCodeAt(0).toString(16);
      throw new Refusal('lone-surrogate', `the string holds an unpaired surrogate U+${unit.toUpperCase()} at index ${lone.index}`);
    }
  }
  // With no lone surrogate left, ECMAScript's QuoteJSONString escapes exactly what RFC 8785
  // does and spells it the same way: `\"`, `\\`, the short forms \b \t \n \f \r, and
  // lowercase \u00xx for the other control characters (the RFC adopts JSON.stringify's string
  // serialisation, section 3.2.2.2); every other code point is written as it is.
  return JSON.stringify(text);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `$.name` for identifier-like names, `$["odd name"]` otherwise, so the path is unambiguous. */
function appendKey(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}
