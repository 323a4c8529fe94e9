/**
 * JSON values as tool-call arguments and function responses carry them.
 *
 * Arguments cross formats in two spellings: a JSON *string* in the OpenAI family and a JSON
 * *object* in Claude and Gemini. The IR keeps the object. A value is accepted only if it is
 * plain data that survives `JSON.parse(JSON.stringify(v))` unchanged in meaning, because that
 * is exactly what the OpenAI writer does to it:
 * - strings, booleans, null, finite numbers, plain arrays, plain objects (prototype
 *   Object.prototype or null); no undefined, functions, Dates, Maps, class instances;
 * - no integer beyond 2^53 - 1 written as digits (|n| < 10^21): `12345678901234567890` in an
 *   OpenAI arguments string has already been rounded by the time we see it, and writing the
 *   rounded number on would be a silent change of the call. Refused, as the journal's
 *   canonical JSON refuses it;
 * - nesting at most MAX_DEPTH deep (a cycle in a programmatic value shows up here too).
 *
 * `-0` is accepted on input and written as `0` (JSON has one zero); `canonicalCopy` is the
 * one place that normalises it, so the IR never holds `-0`.
 *
 * The schema is a predicate (`z.custom`), not a recursive zod record: a record would copy
 * every object through property assignment, which turns an own `"__proto__"` member (legal
 * JSON, and what JSON.parse produces) into a prototype change, losing it silently.
 */
import { z } from 'zod';

/** Written by hand because the schema below is a predicate, not a structural zod schema. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

const MAX_DEPTH = 512;

/** Why `value` is not acceptable JSON (naming where inside it), or undefined if it is. */
export function jsonFault(value: unknown, depth = 0): string | undefined {
  if (depth > MAX_DEPTH) return `nested more than ${MAX_DEPTH} levels deep (or cyclic)`;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined;
    case 'number':
      if (!Number.isFinite(value)) return `${String(value)} has no JSON form`;
      if (Number.isInteger(value) && Math.abs(value) > Number.MAX_SAFE_INTEGER && Math.abs(value) < 1e21) {
        return `the integer ${String(value)} is beyond 2^53 - 1 and cannot be carried exactly`;
      }
      return undefined;
    case 'object': {
      if (value === null) return undefined;
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index += 1) {
          if (!(index in value)) return `array hole at [${index}]`;
          const fault = jsonFault(value[index], depth + 1);
          if (fault !== undefined) return `[${index}]: ${fault}`;
        }
        return undefined;
      }
      const prototype: unknown = Object.getPrototypeOf(value);
      if (prototype !== Object.prototype && prototype !== null) return 'not a plain object';
      if (Object.getOwnPropertySymbols(value).length > 0) return 'symbol-keyed member';
      for (const [key, member] of Object.entries(value)) {
        const fault = jsonFault(member, depth + 1);
        if (fault !== undefined) return `${JSON.stringify(key)}: ${fault}`;
      }
      return undefined;
    }
    default:
      return `a ${typeof value} has no JSON form`;
  }
}

export function isPlainJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A JSON object as any format may hand it to us. Refusals name what is wrong inside it.
 */
export const JsonObjectInputSchema = z.custom<JsonObject>().superRefine((value, ctx) => {
  if (!isPlainJsonObject(value)) {
    ctx.addIssue({ code: 'custom', message: 'expected a JSON object' });
    return;
  }
  const fault = jsonFault(value);
  if (fault !== undefined) ctx.addIssue({ code: 'custom', message: `not plain JSON: ${fault}` });
});

/** A deep copy through JSON: the form the IR holds (no -0, own members only). */
export function canonicalCopy<T extends JsonValue>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function hasNegativeZero(value: JsonValue): boolean {
  if (typeof value === 'number') return Object.is(value, -0);
  if (Array.isArray(value)) return value.some(hasNegativeZero);
  if (value !== null && typeof value === 'object') return Object.values(value).some(hasNegativeZero);
  return false;
}

/** A JSON object in the IR's canonical form (as `canonicalCopy` leaves it). */
export const JsonObjectSchema = JsonObjectInputSchema.refine((value) => !hasNegativeZero(value), {
  message: 'the IR holds no -0 (JSON has one zero)',
});

/**
 * The object a text is the exact JSON spelling of, or undefined: `'{"a":1}'` yes,
 * `'{ "a": 1 }'` no (writing the object back would not give the same text), `'[1]'` no.
 */
export function objectSpelledExactlyBy(text: string): JsonObject | undefined {
  if (!text.startsWith('{')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainJsonObject(parsed) || jsonFault(parsed) !== undefined) return undefined;
  return JSON.stringify(parsed) === text ? parsed : undefined;
}
