/**
 * A request's field names as ProtoJSON readers take them: a field may be sent under its proto
 * name (`task_id`, `task_push_notification_config`) or its JSON name (`taskId`, …), and both
 * mean the same field (specification/a2a.proto's names; ProtoJSON's rule that a parser accepts
 * either). Every method reads its params after this one pass, so no method carries its own
 * spelling rules.
 *
 * What is not a message field keeps its keys as sent: a `google.protobuf.Struct` or `Value` (a
 * part's `data`, which is the agent's input, and every `metadata`) is the caller's own JSON, and
 * renaming a key inside it would change what the agent is given.
 *
 * One field sent under both names with different values is refused (-32602 naming the field):
 * which one was meant cannot be known, and picking either would act on a guess. The same value
 * twice is the same request, and is read once.
 */
import { A2A_ERRORS, RpcError, type Json } from './a2a-wire';

/** Fields whose value is a Struct or Value: their contents are not renamed. */
const OPAQUE_FIELDS: ReadonlySet<string> = new Set(['data', 'metadata']);

const jsonNameOf = (name: string): string => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function sameValue(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

function normalise(value: unknown, path: string): unknown {
  if (Array.isArray(value)) return value.map((item, index) => normalise(item, `${path}[${index}]`));
  if (!isObject(value)) return value;
  const out: Json = {};
  const sentAs = new Map<string, string>();
  for (const [name, field] of Object.entries(value)) {
    const json = jsonNameOf(name);
    const where = path ? `${path}.${json}` : json;
    const read = OPAQUE_FIELDS.has(json) ? field : normalise(field, where);
    const earlier = sentAs.get(json);
    if (earlier !== undefined) {
      if (!sameValue(out[json], read)) {
        throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${where} was sent as ${earlier} and as ${name} with different values; send one`, { field: where });
      }
      continue;
    }
    sentAs.set(json, name);
    // Defined, not assigned: a key `__proto__` stays a plain field.
    Object.defineProperty(out, json, { value: read, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** `params` with every message field under its JSON name (see above); throws -32602 on a clash. */
export function jsonNamesOf(params: Json): Json {
  return normalise(params, '') as Json;
}
