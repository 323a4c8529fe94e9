/**
 * "Is this value an object with named members?", asked in two strengths, each written once.
 *
 * - `isRecord`: not null, of type object, not an array. The question for a value that came out
 *   of JSON.parse, a wire message or a journal record: there every object is a plain one, and
 *   what matters is that its members can be read by name.
 * - `isPlainObject`: an object whose prototype is Object.prototype or null. The question for a
 *   value of unknown origin that is about to be written as JSON (canonical-json.ts, RFC 8785):
 *   a Map, a Date or a class instance is an object too, and would not survive as itself.
 */

/** Not null, of type object, not an array: a JSON object as JSON.parse gives it. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An object whose prototype is Object.prototype or null: what RFC 8785 writes as an object (and fast-body-check.ts trusts). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
