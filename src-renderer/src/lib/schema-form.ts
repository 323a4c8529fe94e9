/**
 * A run's input as a form, from the agent's input JSON Schema: the subset forms can show
 * (strings, numbers and integers, enums, booleans, arrays of strings, nested objects). A schema
 * outside it is edited as raw JSON only. Validation messages come from the schema's own
 * constraints; the plane validates again on start, and its answer is shown too.
 */
export interface JsonSchema {
  type?: string;
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  items?: JsonSchema;
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
}

export type FieldKind = 'string' | 'number' | 'integer' | 'boolean' | 'enum' | 'strings' | 'object';

export function fieldKind(schema: JsonSchema): FieldKind | null {
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every((v) => typeof v === 'string')) return 'enum';
  switch (schema.type) {
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
      return schema.type;
    case 'array':
      return schema.items?.type === 'string' && !schema.items.enum ? 'strings' : null;
    case 'object':
      return 'object';
    default:
      return null;
  }
}

/** Whether every field of this object schema (nested ones too) has a form control. */
export function formSupported(schema: JsonSchema): boolean {
  if (schema.type !== 'object' && schema.properties === undefined) return false;
  return Object.values(schema.properties ?? {}).every((p) => {
    const kind = fieldKind(p);
    return kind !== null && (kind !== 'object' || formSupported(p));
  });
}

/** The value a new form starts from: defaults, and an empty value for each required field. */
export function initialValue(schema: JsonSchema): Record<string, unknown> {
  const value: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    if (p.default !== undefined) value[name] = p.default;
    else if (fieldKind(p) === 'object') value[name] = initialValue(p);
    else if (!required.has(name)) continue;
    else if (fieldKind(p) === 'boolean') value[name] = false;
    else if (fieldKind(p) === 'strings') value[name] = [];
    else if (fieldKind(p) === 'enum') value[name] = p.enum![0];
  }
  return value;
}

const label = (name: string, p: JsonSchema) => p.title ?? name;

/** Messages by field path ("a.b"), in the schema's order; empty when the value is valid. */
export function validate(schema: JsonSchema, value: Record<string, unknown>, prefix = ''): Record<string, string> {
  const errors: Record<string, string> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    const v = value[name];
    const kind = fieldKind(p);
    const empty = v === undefined || v === '' || (Array.isArray(v) && v.length === 0 && required.has(name) && (p.minItems ?? 1) > 0);
    if (empty) {
      if (required.has(name) && kind !== 'boolean' && kind !== 'object') errors[path] = `${label(name, p)} is required.`;
      continue;
    }
    if (kind === 'object') Object.assign(errors, validate(p, (v ?? {}) as Record<string, unknown>, path));
    else if (kind === 'string' && typeof v === 'string') {
      if (p.minLength !== undefined && v.length < p.minLength) errors[path] = `At least ${p.minLength} characters.`;
      else if (p.maxLength !== undefined && v.length > p.maxLength) errors[path] = `At most ${p.maxLength} characters.`;
      else if (p.pattern !== undefined && !new RegExp(p.pattern, 'u').test(v)) errors[path] = `Must match ${p.pattern}.`;
    } else if (kind === 'number' || kind === 'integer') {
      if (typeof v !== 'number' || !Number.isFinite(v)) errors[path] = 'A number.';
      else if (kind === 'integer' && !Number.isInteger(v)) errors[path] = 'A whole number.';
      else if (p.minimum !== undefined && v < p.minimum) errors[path] = `At least ${p.minimum}.`;
      else if (p.exclusiveMinimum !== undefined && v <= p.exclusiveMinimum) errors[path] = `More than ${p.exclusiveMinimum}.`;
      else if (p.exclusiveMaximum !== undefined && v >= p.exclusiveMaximum) errors[path] = `Less than ${p.exclusiveMaximum}.`;
      else if (p.maximum !== undefined && v > p.maximum) errors[path] = `At most ${p.maximum}.`;
    } else if (kind === 'enum' && !p.enum!.includes(v)) errors[path] = `One of ${p.enum!.join(', ')}.`;
    else if (kind === 'strings' && Array.isArray(v)) {
      if (p.minItems !== undefined && v.length < p.minItems) errors[path] = `At least ${p.minItems} ${p.minItems === 1 ? 'item' : 'items'}.`;
      else if (p.maxItems !== undefined && v.length > p.maxItems) errors[path] = `At most ${p.maxItems} items.`;
    }
  }
  return errors;
}

/** The value as sent: blank lines dropped from lists of strings, nested objects likewise. */
export function cleanValue(schema: JsonSchema, value: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...value };
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    const v = out[name];
    if (fieldKind(p) === 'strings' && Array.isArray(v)) out[name] = v.filter((s) => typeof s === 'string' && s.trim() !== '');
    else if (fieldKind(p) === 'object' && v && typeof v === 'object') out[name] = cleanValue(p, v as Record<string, unknown>);
  }
  return out;
}
