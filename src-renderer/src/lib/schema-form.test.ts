import { describe, expect, it } from 'vitest';
import { formSupported, initialValue, validate, type JsonSchema } from './schema-form';

const schema: JsonSchema = {
  type: 'object',
  required: ['title', 'count', 'tags', 'mode'],
  properties: {
    title: { type: 'string', minLength: 3 },
    count: { type: 'integer', minimum: 1, maximum: 5 },
    mode: { type: 'string', enum: ['fast', 'careful'] },
    draft: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
    author: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
  },
};

describe('a run input form from the agent schema', () => {
  it('supports strings, numbers, enums, booleans, arrays of strings and nested objects; not other arrays', () => {
    expect(formSupported(schema)).toBe(true);
    expect(formSupported({ type: 'object', properties: { xs: { type: 'array', items: { type: 'number' } } } })).toBe(false);
  });

  it('starts from defaults and empty required fields', () => {
    expect(initialValue(schema)).toEqual({ tags: [], mode: 'fast', author: {} });
  });

  it('gives the schema\'s messages by field path', () => {
    expect(validate(schema, initialValue(schema))).toEqual({
      title: 'title is required.',
      count: 'count is required.',
      tags: 'tags is required.',
      'author.name': 'name is required.',
    });
    expect(validate(schema, { title: 'ab', count: 9, mode: 'fast', tags: ['x'], author: { name: 'A' } })).toEqual({ title: 'At least 3 characters.', count: 'At most 5.' });
    expect(validate(schema, { title: 'abc', count: 2, mode: 'fast', tags: ['x'], author: { name: 'A' } })).toEqual({});
  });
});
