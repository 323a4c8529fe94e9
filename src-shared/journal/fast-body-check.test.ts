/**
 * The quick yes (fast-body-check.ts) against zod, for every record kind and version it compiles:
 * it may say no where zod says yes (zod then decides), never yes where zod says no. Bodies are
 * generated from each schema's own definition, valid ones (which the quick yes must accept, or
 * the journal would pay zod for nothing) and the same bodies broken: a field replaced by any
 * value, a field removed, the body swapped for something else entirely.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileBodyPredicate } from './fast-body-check';
import { recordBodies, recordBodyProblem } from './records';

interface Def {
  type: string;
  checks?: Array<{ _zod: { def: { check?: string; format?: string; pattern?: RegExp; minimum?: number; value?: number; inclusive?: boolean } } }>;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  entries?: Record<string, string>;
}
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Values the schema accepts, built from its definition (the node types the quick yes compiles). */
function valid(schema: z.ZodType): fc.Arbitrary<unknown> {
  const def = defOf(schema);
  const checks = (def.checks ?? []).map((c) => c._zod.def);
  switch (def.type) {
    case 'object': {
      const shape = def.shape!;
      const required = Object.keys(shape).filter((key) => defOf(shape[key]!).type !== 'optional');
      const model = Object.fromEntries(Object.entries(shape).map(([key, field]) => [key, valid(field)]));
      return fc.record(model, { requiredKeys: required });
    }
    case 'string': {
      const pattern = checks.find((c) => c.format === 'regex')?.pattern;
      if (pattern) return fc.stringMatching(pattern);
      return fc.string({ minLength: checks.find((c) => c.check === 'min_length')?.minimum ?? 0 });
    }
    case 'number':
      if (checks.some((c) => c.format === 'safeint')) {
        const min = checks.find((c) => c.check === 'greater_than');
        return fc.integer({ min: min ? min.value! + (min.inclusive ? 0 : 1) : Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER });
      }
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: checks.some((c) => c.check === 'greater_than') ? 0 : -1e300 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'enum':
      return fc.constantFrom(...Object.values(def.entries!));
    case 'unknown':
      return fc.jsonValue();
    case 'optional':
      return fc.option(valid(def.innerType!), { nil: undefined });
    case 'nullable':
      return fc.option(valid(def.innerType!), { nil: null });
    case 'array':
      return fc.array(valid(def.element!), { maxLength: 3 });
    default:
      throw new Error(`the generator has no case for ${def.type}`);
  }
}

const kinds = Object.entries(recordBodies).flatMap(([kind, versions]) =>
  Object.keys(versions).map((v) => ({ kind, v: Number(v), schema: (versions as Record<string, z.ZodType>)[v]! })),
);
const compiled = kinds.flatMap((k) => {
  const quick = compileBodyPredicate(k.schema);
  return quick ? [{ ...k, quick }] : [];
});

describe('the quick yes for record bodies', () => {
  it('compiles for the kinds every run writes', () => {
    const names = compiled.map((k) => `${k.kind}@${k.v}`);
    for (const hot of ['RunAdmitted@1', 'EffectStarted@1', 'EffectDone@1', 'EffectFailed@1', 'RunSealed@1', 'Observation@1']) expect(names).toContain(hot);
  });

  for (const { kind, v, schema, quick } of compiled) {
    it(`${kind} v${v}: accepts what zod accepts, and never accepts what zod refuses`, () => {
      const body = valid(schema);
      const fields = Object.keys(defOf(schema).shape!);
      fc.assert(
        fc.property(body, (value) => {
          expect(schema.safeParse(value).success).toBe(true);
          expect(quick(value)).toBe(true);
        }),
        { numRuns: 200 },
      );
      // One field replaced by anything at all, or removed; or no body of this kind at all.
      const broken = fc.oneof(
        fc.tuple(body, fc.constantFrom(...fields), fc.anything({ withNullPrototype: true, withObjectString: true })).map(([value, field, other]) => ({ ...(value as object), [field]: other })),
        fc.tuple(body, fc.constantFrom(...fields)).map(([value, field]) => {
          const copy = { ...(value as Record<string, unknown>) };
          delete copy[field];
          return copy;
        }),
        fc.anything(),
      );
      fc.assert(
        fc.property(broken, (value) => {
          if (quick(value)) expect(schema.safeParse(value).success).toBe(true);
        }),
        { numRuns: 500 },
      );
    });
  }

  it('says no, and leaves it to zod, where zod reads what the quick yes does not', () => {
    const done = compiled.find((k) => k.kind === 'EffectDone')!;
    const body = { step: 1, key: 'a'.repeat(64), result: null, spend: { effects: 1, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 }, provenance: 'plane' };
    expect(done.quick(body)).toBe(true);
    // Inherited fields, a non-plain object, an unknown field missing (zod needs the key), odd numbers.
    expect(done.quick(Object.create(body))).toBe(false);
    expect(done.quick(Object.assign(new Date(0), body))).toBe(false);
    expect(done.quick({ ...body, result: undefined })).toBe(true);
    const { result: _dropped, ...withoutResult } = body;
    expect(done.quick(withoutResult)).toBe(false);
    expect(done.schema.safeParse(withoutResult).success).toBe(false);
    for (const step of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '1']) expect(done.quick({ ...body, step })).toBe(false);
    expect(done.quick({ ...body, step: -0 })).toBe(true);
    expect(done.quick({ ...body, key: 'A'.repeat(64) })).toBe(false);
    expect(done.quick({ ...body, extra: 'kept by the writer, stripped by zod' })).toBe(true);
  });

  it('compiles nothing for a schema it cannot be sure of', () => {
    expect(compileBodyPredicate(z.object({ a: z.union([z.string(), z.number()]) }))).toBeNull();
    expect(compileBodyPredicate(z.object({ a: z.string() }).refine(() => false))).toBeNull();
    expect(compileBodyPredicate(z.strictObject({ a: z.string() }))).toBeNull();
    expect(compileBodyPredicate(z.object({ a: z.string().email() }))).toBeNull();
    expect(compileBodyPredicate(z.object({ a: z.string().regex(/x/g) }))).toBeNull();
    expect(compileBodyPredicate(z.object({ a: z.array(z.string()).min(1) }))).toBeNull();
  });

  it('gives a writer the same verdict and message as checkRecordBody', () => {
    expect(recordBodyProblem('EffectDone', 1, { step: 1 })).toMatch(/^key: /);
    expect(recordBodyProblem('Nope', 1, {})).toBe('record kind Nope is newer than this AgentPlane');
    expect(recordBodyProblem('EffectDone', 99, {})).toBe('EffectDone v99 is newer than this AgentPlane');
    expect(recordBodyProblem('Cancelled', 1, { by: 'me', reason: 'x', atStep: 1 })).toBeNull();
  });
});
