import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { deferred } from './deferred-schema';

describe('deferred', () => {
  it('builds nothing until the schema is first used, then builds it once', () => {
    let builds = 0;
    const Schema = deferred(() => {
      builds += 1;
      return z.object({ id: z.string().min(1), n: z.number().int() });
    });
    expect(builds).toBe(0);
    expect(Schema.parse({ id: 'a', n: 1 })).toEqual({ id: 'a', n: 1 });
    expect(Schema.safeParse({ id: '', n: 1.5 }).success).toBe(false);
    expect(Object.keys(Schema.shape)).toEqual(['id', 'n']);
    expect(builds).toBe(1);
  });

  it('is the built schema to zod: a field, a union option, extend, optional, instanceof', () => {
    const Inner = deferred(() => z.object({ kind: z.literal('a'), text: z.string() }));
    const Other = deferred(() => z.object({ kind: z.literal('b'), size: z.number() }));
    const Union = deferred(() => z.discriminatedUnion('kind', [Inner, Other]));
    const Outer = z.object({ item: Union, maybe: Inner.optional(), list: z.array(Inner) });
    const parsed = Outer.parse({ item: { kind: 'b', size: 3 }, list: [{ kind: 'a', text: 'x' }] });
    expect(parsed).toEqual({ item: { kind: 'b', size: 3 }, list: [{ kind: 'a', text: 'x' }] });
    const failed = Outer.safeParse({ item: { kind: 'c' }, list: [] });
    expect(failed.success).toBe(false);
    expect(failed.error?.issues[0]?.path).toEqual(['item', 'kind']);
    expect(Inner).toBeInstanceOf(z.ZodObject);
    expect(Union).toBeInstanceOf(z.ZodDiscriminatedUnion);
    const Extended = Inner.extend({ more: z.boolean() });
    expect(Extended.parse({ kind: 'a', text: 't', more: true })).toEqual({ kind: 'a', text: 't', more: true });
    expect(Extended.safeParse({ kind: 'a', text: 't' }).success).toBe(false);
  });

  it('keeps its type: a wrong value does not compile, and parse answers the inferred type', () => {
    const Schema = deferred(() => z.object({ at: z.string() }).strict());
    type At = z.infer<typeof Schema>;
    const value: At = Schema.parse({ at: 'now' });
    // @ts-expect-error a number is not a string
    const wrong: At = { at: 1 };
    expect(value.at).toBe('now');
    expect(wrong.at).toBe(1);
    expect(Schema.safeParse({ at: 'now', extra: 1 }).success).toBe(false);
  });

  it('fails where the build fails, and again on the next use rather than answering half-built', () => {
    let builds = 0;
    const Broken = deferred((): z.ZodString => {
      builds += 1;
      throw new Error('no schema today');
    });
    expect(() => Broken.parse('x')).toThrow('no schema today');
    expect(() => Broken.parse('x')).toThrow('no schema today');
    expect(builds).toBe(2);
  });
});
