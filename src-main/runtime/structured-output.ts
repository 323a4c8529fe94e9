/**
 * Structured output, checked here whatever the provider promised (docs/GOVERNED-RUNTIME.md:
 * "provider enforcement is not blindly trusted"). A model step with a `schema` sends it to the provider —
 * natively where the wire has a JSON-schema mode (OpenAI Responses `text.format`, Gemini
 * `responseSchema`, chat-completions `response_format`), as one forced tool whose input is the
 * answer where it has not (Anthropic) — and the answer that comes back is parsed and validated
 * locally against the exact schema the step declared:
 *
 * - Native decoding makes a non-conforming answer unproducible only where the provider really
 *   constrains it; a forced tool is weaker in one stated way (a model may ignore it). Either way
 *   the plane does not take the provider's word: a parse failure or a violation fails the step.
 * - A refusal names the rule that failed (`/answer must be number (type)`), never a bare
 *   "invalid": the person fixing the prompt or the schema needs to know which constraint broke.
 * - Parseable but non-conforming output is a metered unusable result: the call happened and is
 *   billed (the model effect fails Landed with the completion's spend), never a free retry.
 * - External schema reference resolution is disabled: a `$ref` that is not local (`#…`) is
 *   refused when the schema is compiled (at manifest load), so validation can never become
 *   hidden network or file I/O. ajv is given no loader either, so nothing could fetch one.
 * - The root must be an object schema: Anthropic's forced tool takes an object as its input and
 *   OpenAI's strict mode an object as its root, so anything else could not be sent everywhere.
 * - `format` is not checked locally (no format vocabulary is bundled): a format is an annotation
 *   here, and the strict keyword check still refuses a misspelt keyword at load.
 */
import { newAjv2020 } from '../base/json-schema-validator';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { Completion } from './model-provider';
import { EffectFailure } from './run-signals';

export class AnswerSchemaError extends Error {
  override readonly name = 'AnswerSchemaError';
}

/** Every `$ref`-like keyword whose value is not a local pointer (`#…`), by where it is. */
function externalRefs(node: unknown, at: string, found: string[]): string[] {
  if (Array.isArray(node)) node.forEach((item, i) => externalRefs(item, `${at}/${i}`, found));
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if ((key === '$ref' || key === '$dynamicRef') && typeof value === 'string' && !value.startsWith('#')) found.push(`${at || '/'}: ${key} ${JSON.stringify(value.slice(0, 120))}`);
      else externalRefs(value, `${at}/${key}`, found);
    }
  }
  return found;
}

const MAX_CACHED = 256;
/** Compiled validators by the schema's JSON: a step's schema is compiled once, not per call. */
const compiled = new Map<string, ValidateFunction>();

/**
 * The schema compiled for validation; an AnswerSchemaError names what is wrong with it (a
 * non-local `$ref`, a root that is not an object schema, an unknown keyword, a schema the
 * 2020-12 meta-schema refuses). One ajv per schema, so two steps' `$id`s cannot collide.
 */
export function compileAnswerSchema(schema: Record<string, unknown>): ValidateFunction {
  const cacheKey = JSON.stringify(schema);
  const cached = compiled.get(cacheKey);
  if (cached) return cached;
  const refs = externalRefs(schema, '', []);
  if (refs.length > 0) throw new AnswerSchemaError(`only local references (#…) are allowed, so validation cannot fetch anything: ${refs.join('; ')}`);
  if (schema.type !== 'object') throw new AnswerSchemaError('the root must be an object schema (type: object): the forced tool and strict modes take an object');
  let validate: ValidateFunction;
  try {
    const ajv = newAjv2020({ allErrors: false, strict: true, strictTypes: false, strictTuples: false, validateFormats: false });
    validate = ajv.compile(schema);
  } catch (error) {
    throw new AnswerSchemaError((error as Error).message.slice(0, 300));
  }
  if (compiled.size >= MAX_CACHED) compiled.delete(compiled.keys().next().value!);
  compiled.set(cacheKey, validate);
  return validate;
}

/** One failed rule in words: where (a JSON pointer, `/` for the root), what, and the keyword. */
function ruleOf(error: ErrorObject): string {
  const where = error.instancePath || '/';
  const extra = error.keyword === 'additionalProperties' ? `: ${JSON.stringify(String((error.params as { additionalProperty?: unknown }).additionalProperty).slice(0, 40))}` : '';
  return `${where} ${error.message ?? 'is invalid'} (${error.keyword}${extra})`;
}

export type StructuredAnswer = { ok: true; value: unknown } | { ok: false; problem: string };

/**
 * The answer of a completion checked against the step's schema: its parsed value, or the
 * problem in words. The text of the answer never enters the problem (it is the model's output,
 * of any length); only the rule, the position of a syntax error and, for an extra property,
 * its clipped name do.
 */
export function checkStructuredAnswer(completion: Pick<Completion, 'text' | 'truncated'>, schema: Record<string, unknown>): StructuredAnswer {
  let value: unknown;
  try {
    value = JSON.parse(completion.text);
  } catch (error) {
    if (completion.truncated) return { ok: false, problem: 'the answer was cut off at maxTokens before it was whole JSON: raise the step\'s maxTokens' };
    // Node's message quotes the text it failed on; keep only where it failed.
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message)?.[1];
    const where =
      completion.text.trim() === '' ? 'it is empty' : /Unexpected end/.test(message) ? 'it ends before the JSON is complete' : position !== undefined ? `a syntax error at position ${position}` : 'a syntax error';
    return { ok: false, problem: `the answer is not JSON (${where}), but the step's schema asks for a JSON object` };
  }
  const validate = compileAnswerSchema(schema);
  if (validate(value)) return { ok: true, value };
  const first = validate.errors?.[0];
  return { ok: false, problem: `the answer does not match the step's schema: ${first ? ruleOf(first) : 'it is invalid'}` };
}

/**
 * A model step's result under a schema: the parsed answer. The completion reaching here was
 * validated inside its effect (callModel), so on a first run and on replay alike this parses;
 * an answer a person recorded by hand for an in-doubt call (recovery, `landed`) is not
 * guaranteed to be a completion at all, so anything else fails the step, naming why.
 */
export function structuredValue(completion: Completion): unknown {
  const text = (completion as Partial<Completion> | null)?.text;
  if (typeof text === 'string') {
    try {
      return JSON.parse(text);
    } catch {
      // Falls through to the refusal below.
    }
  }
  throw new EffectFailure('StructuredOutputInvalid', "the recorded answer is not a JSON completion, but the step's schema asks for one", 'Landed');
}
