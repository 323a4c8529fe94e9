/**
 * A quick yes for a record body its zod schema would accept, compiled from that schema.
 *
 * Why: the journal checks every body it writes against its kind's schema (records.ts), and a
 * single append pays for the check cold: right after an fsync, zod's check of an EffectDone
 * body measured 14.6-20.3 µs, against 0.46 µs in a tight loop (its walk touches many small
 * functions, and the disk wait has evicted them from the caches). The whole writer's check with
 * this predicate in front (recordBodyProblem) measured 5.5-5.7 µs there. A single append is
 * about 250 µs, so that was a twentieth of it, and of every run's admission.
 *
 * What it promises, and all it promises: when it answers true, zod's safeParse of the same
 * value succeeds. It answers false for anything it is not sure of, and the caller then asks zod,
 * whose verdict and message stand. So it is stricter than zod wherever being exact would cost
 * code: an object must be plain (zod takes a Date), a field's value must be the object's own or
 * absent (zod reads inherited ones), an array must be a plain array. The schemas it compiles
 * are the ones the journal's kinds use: objects (not strict, no catch-all, no refinements),
 * strings (length bounds, a regex without the g or y flag), numbers (finite, zod's safe-integer
 * format, inclusive and exclusive bounds), booleans, null, enums, arrays (no length checks),
 * unknown, optional and nullable. Anything else (a union, a literal, a transform, a refinement,
 * a check it does not know) makes compile return null for the whole schema, and that kind is
 * always checked by zod. fast-body-check.test.ts holds it to zod over generated and mutated
 * bodies of every kind it compiles.
 */
import type { z } from 'zod';
import { isPlainObject } from '../plain-object';

export type BodyPredicate = (value: unknown) => boolean;

/** Thrown inside compile for a schema it does not handle; never leaves this module. */
const UNSUPPORTED = Symbol('unsupported');

interface Check {
  check?: string;
  format?: string;
  pattern?: RegExp;
  minimum?: number;
  maximum?: number;
  value?: number;
  inclusive?: boolean;
}

interface Def {
  type: string;
  checks?: Array<{ _zod: { def: Check } }>;
  shape?: Record<string, unknown>;
  catchall?: unknown;
  innerType?: unknown;
  element?: unknown;
  entries?: Record<string, unknown>;
}

function defOf(schema: unknown): Def {
  const def = (schema as { _zod?: { def?: Def } })._zod?.def;
  if (!def || typeof def.type !== 'string') throw UNSUPPORTED;
  return def;
}

function checksOf(def: Def): Check[] {
  return (def.checks ?? []).map((c) => c._zod.def);
}

/** All of `tests` hold (an empty list: always). */
function every(tests: BodyPredicate[]): BodyPredicate {
  if (tests.length === 0) return () => true;
  if (tests.length === 1) return tests[0]!;
  return (value) => {
    for (const test of tests) if (!test(value)) return false;
    return true;
  };
}

function compileString(def: Def): BodyPredicate {
  const tests: BodyPredicate[] = [];
  for (const check of checksOf(def)) {
    if (check.check === 'min_length' && typeof check.minimum === 'number') {
      const minimum = check.minimum;
      tests.push((v) => (v as string).length >= minimum);
    } else if (check.check === 'max_length' && typeof check.maximum === 'number') {
      const maximum = check.maximum;
      tests.push((v) => (v as string).length <= maximum);
    } else if (check.check === 'string_format' && check.format === 'regex' && check.pattern instanceof RegExp && !check.pattern.global && !check.pattern.sticky) {
      const pattern = check.pattern;
      tests.push((v) => pattern.test(v as string));
    } else {
      throw UNSUPPORTED;
    }
  }
  const all = every(tests);
  return (value) => typeof value === 'string' && all(value);
}

function compileNumber(def: Def): BodyPredicate {
  const tests: BodyPredicate[] = [];
  for (const check of checksOf(def)) {
    if (check.check === 'number_format' && check.format === 'safeint') {
      tests.push((v) => Number.isSafeInteger(v));
    } else if (check.check === 'greater_than' && typeof check.value === 'number') {
      const bound = check.value;
      tests.push(check.inclusive ? (v) => (v as number) >= bound : (v) => (v as number) > bound);
    } else if (check.check === 'less_than' && typeof check.value === 'number') {
      const bound = check.value;
      tests.push(check.inclusive ? (v) => (v as number) <= bound : (v) => (v as number) < bound);
    } else {
      throw UNSUPPORTED;
    }
  }
  const all = every(tests);
  return (value) => typeof value === 'number' && Number.isFinite(value) && all(value);
}

function compileObject(def: Def): BodyPredicate {
  // A catch-all (strictObject, looseObject) or a refinement of the whole object: zod's to judge.
  if (def.catchall !== undefined || checksOf(def).length > 0 || !def.shape) throw UNSUPPORTED;
  const fields = Object.entries(def.shape).map(([key, schema]) => {
    const fieldDef = defOf(schema);
    // zod takes an unknown field only when the key is there, even holding undefined.
    return { key, test: compileNode(schema), mustBePresent: fieldDef.type === 'unknown' };
  });
  return (value) => {
    if (!isPlainObject(value)) return false;
    for (const { key, test, mustBePresent } of fields) {
      const own = Object.hasOwn(value, key);
      // An inherited member (Object.prototype's `toString`, say) is what zod would read: not sure, so no.
      if (!own && (mustBePresent || key in value)) return false;
      if (!test(own ? value[key] : undefined)) return false;
    }
    return true;
  };
}

function compileNode(schema: unknown): BodyPredicate {
  const def = defOf(schema);
  switch (def.type) {
    case 'object':
      return compileObject(def);
    case 'string':
      return compileString(def);
    case 'number':
      return compileNumber(def);
    case 'boolean':
      if (checksOf(def).length > 0) throw UNSUPPORTED;
      return (value) => typeof value === 'boolean';
    case 'null':
      return (value) => value === null;
    case 'unknown':
      if (checksOf(def).length > 0) throw UNSUPPORTED;
      return () => true;
    case 'enum': {
      if (checksOf(def).length > 0 || !def.entries) throw UNSUPPORTED;
      const values = new Set(Object.values(def.entries).filter((v) => typeof v === 'string'));
      return (value) => typeof value === 'string' && values.has(value);
    }
    case 'optional': {
      if (checksOf(def).length > 0) throw UNSUPPORTED;
      const inner = compileNode(def.innerType);
      return (value) => value === undefined || inner(value);
    }
    case 'nullable': {
      if (checksOf(def).length > 0) throw UNSUPPORTED;
      const inner = compileNode(def.innerType);
      return (value) => value === null || inner(value);
    }
    case 'array': {
      if (checksOf(def).length > 0) throw UNSUPPORTED;
      const element = compileNode(def.element);
      return (value) => {
        if (!Array.isArray(value) || Object.getPrototypeOf(value) !== Array.prototype) return false;
        for (let i = 0; i < value.length; i++) if (!(i in value) || !element(value[i])) return false;
        return true;
      };
    }
    default:
      throw UNSUPPORTED;
  }
}

/** The quick yes for `schema`, or null when it uses anything this does not handle (zod then checks every body). */
export function compileBodyPredicate(schema: z.ZodType): BodyPredicate | null {
  try {
    return compileNode(schema);
  } catch (error) {
    if (error === UNSUPPORTED) return null;
    throw error;
  }
}
