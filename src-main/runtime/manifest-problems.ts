/**
 * What is wrong with an agent manifest, in the words of the person fixing it: the field (a
 * dotted path, `steps.0.model.prompt`) and what to do about it. zod's own messages describe
 * the schema ("Invalid input: expected record, received undefined"); these describe the file:
 * a required field left out ("the manifest has no input schema: add `input:` …"), a value of
 * the wrong type ("must be a list …, not a mapping"), an unknown key (with the key it was
 * probably meant to be), a step or grant of no known kind (with the kinds there are), and a
 * file that does not parse (with its line and column).
 *
 * The schema is walked through zod's definitions (`_zod.def`) to find the keys an object
 * allows and which form of a union a value was meant as; what it cannot tell is said plainly.
 */
import type { z } from 'zod';

export interface ManifestProblem {
  /** The field at fault, dotted; null for the file as a whole. */
  field: string | null;
  /** What is wrong and how to fix it. */
  problem: string;
  /** The line at fault (1-based), for a file that does not parse. */
  line?: number;
}

type Segment = PropertyKey;

/** The fields every manifest needs, and what to write when one is missing. */
const MISSING_AT_ROOT: Record<string, string> = {
  name: 'the manifest has no name: add `name:` with a lowercase name (letters, digits and dashes, starting with a letter), e.g. `name: my-agent`',
  description: 'the manifest has no description: add `description:` with one line on what the agent does',
  input:
    "the manifest has no input schema: add `input:` with the JSON Schema of the run's input, e.g. `input: {type: object, properties: {text: {type: string}}}` (`input: {type: object}` for an agent that takes none)",
  steps: 'the manifest has no steps: add `steps:` with at least one step, e.g. `- model: {provider: local, prompt: "…"}`',
};

/** zod's names of types, as a person writing YAML or JSON reads them. */
function expectedWords(expected: string, path: readonly Segment[]): string {
  if (expected === 'record' || expected === 'object') {
    return path.length === 1 && path[0] === 'input' ? 'a mapping (a JSON Schema, e.g. `{type: object}`)' : 'a mapping (`key: value` lines, or `{…}`)';
  }
  if (expected === 'array') return 'a list (`- item` lines, or `[…]`)';
  if (expected === 'string') return 'text';
  if (expected === 'number' || expected === 'int') return 'a number';
  if (expected === 'boolean') return 'true or false';
  return expected;
}

/** A value as the person wrote it: what kind it is, and a short look at it. */
/** A bound's message the schema wrote itself, or null for zod's own ("Too small: …", "Too big: …"). */
function ownWords(issue: { message: string }): string | null {
  return /^Too (small|big)\b/.test(issue.message) ? null : issue.message;
}

export function describeValue(value: unknown): string {
  if (value === null) return 'empty (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
  if (typeof value === 'number') return `a number (${value})`;
  if (typeof value === 'boolean') return `\`${value}\``;
  return typeof value;
}

function valueAt(raw: unknown, path: readonly Segment[]): unknown {
  let at = raw;
  for (const segment of path) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<PropertyKey, unknown>)[segment];
  }
  return at;
}

// ---- the schema, walked ----

interface Def {
  type: string;
  innerType?: Schema;
  in?: Schema;
  shape?: Record<string, Schema>;
  element?: Schema;
  valueType?: Schema;
  options?: Schema[];
  discriminator?: string;
  values?: unknown[];
}
interface Schema {
  _zod: { def: Def };
}

const defOf = (schema: unknown): Def | undefined => (schema as Partial<Schema> | undefined)?._zod?.def;

/** Past the wrappers that do not change what a value looks like: optional, default, a transform's input. */
function unwrap(schema: Schema | undefined): Schema | undefined {
  let at = schema;
  for (let depth = 0; depth < 20 && at; depth++) {
    const def = defOf(at);
    if (!def) return undefined;
    if (['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch', 'nonoptional'].includes(def.type)) at = def.innerType;
    else if (def.type === 'pipe') at = def.in;
    else return at;
  }
  return at;
}

/** The keys each object form of a union allows. */
function optionKeys(union: Schema): Array<{ option: Schema; keys: string[] }> {
  return (defOf(union)?.options ?? []).flatMap((option) => {
    const shape = defOf(unwrap(option))?.shape;
    return shape ? [{ option, keys: Object.keys(shape) }] : [];
  });
}

/** Keys that name one form of a union (`model`, `tool`, …), not ones several share (`as`). */
function distinguishingKeys(union: Schema): string[] {
  const all = optionKeys(union);
  const counts = new Map<string, number>();
  for (const { keys } of all) for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return all.flatMap(({ keys }) => keys.filter((key) => counts.get(key) === 1));
}

/** The form of a union a value was meant as: by its discriminator, else by a key only that form has. */
function optionFor(union: Schema, value: unknown): Schema | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const record = value as Record<string, unknown>;
  const def = defOf(union)!;
  const options = optionKeys(union);
  if (def.discriminator) {
    const wanted = record[def.discriminator];
    return options.find(({ option }) => defOf(unwrap(defOf(unwrap(option))!.shape![def.discriminator!]))?.values?.includes(wanted))?.option;
  }
  const named = new Set(distinguishingKeys(union));
  const matching = options.filter(({ keys }) => keys.some((key) => named.has(key) && key in record));
  return matching.length === 1 ? matching[0]!.option : undefined;
}

/** The schema at `path` (unwrapped), following the value where a union must choose; undefined where it cannot be told. */
function schemaAt(root: Schema, raw: unknown, path: readonly Segment[]): Schema | undefined {
  let schema = unwrap(root);
  for (let i = 0; i <= path.length && schema; i++) {
    let def = defOf(schema)!;
    if (def.type === 'union') {
      schema = unwrap(optionFor(schema, valueAt(raw, path.slice(0, i))));
      if (!schema) return undefined;
      def = defOf(schema)!;
    }
    if (i === path.length) return schema;
    const segment = path[i]!;
    if (def.type === 'object') schema = unwrap(def.shape?.[String(segment)]);
    else if (def.type === 'array') schema = unwrap(def.element);
    else if (def.type === 'record') schema = unwrap(def.valueType);
    else return undefined;
  }
  return schema;
}

// ---- suggestions ----

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/** The known key a misspelt one was probably meant to be: a letter or two off, or a plural's singular. */
function closest(key: string, known: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  const lower = key.toLowerCase();
  for (const candidate of known) {
    const distance = candidate.toLowerCase() === lower ? 0 : editDistance(lower, candidate.toLowerCase());
    const limit = candidate.length <= 4 ? 1 : 2;
    if (distance <= limit && distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** `steps` → `step`, `grants` → `grant`: what one entry of a list is called. */
function entryWord(path: readonly Segment[]): string {
  const list = [...path].reverse().find((segment) => typeof segment === 'string');
  return typeof list === 'string' && list.endsWith('s') ? list.slice(0, -1) : 'entry';
}

// ---- issues ----

type Issue = z.core.$ZodIssue;

const dotted = (path: readonly Segment[]): string | null => (path.length > 0 ? path.map(String).join('.') : null);

/**
 * Every problem a failed parse of `raw` against `schema` found, each with its field and its
 * fix. Problems in one form of a union are reported for the form the value was meant as.
 */
export function manifestProblems(schema: z.ZodType, raw: unknown, error: z.ZodError): ManifestProblem[] {
  const root = schema as unknown as Schema;
  const seen = new Set<string>();
  const out: ManifestProblem[] = [];
  for (const issue of error.issues) {
    for (const found of problemsOf(root, raw, issue, [])) {
      const key = `${found.field ?? ''}\u0000${found.problem}`;
      if (!seen.has(key)) out.push(found);
      seen.add(key);
    }
  }
  return out;
}

function problemsOf(root: Schema, raw: unknown, issue: Issue, prefix: readonly Segment[]): ManifestProblem[] {
  const path = [...prefix, ...issue.path];
  const field = dotted(path);
  const value = valueAt(raw, path);
  switch (issue.code) {
    case 'invalid_type': {
      if (value === undefined) {
        const key = path.at(-1);
        if (path.length === 1 && typeof key === 'string' && MISSING_AT_ROOT[key]) return [{ field, problem: MISSING_AT_ROOT[key] }];
        if (key === undefined) return [{ field, problem: `must be ${expectedWords(issue.expected, path)}` }];
        const parent = path.at(-2);
        const where = typeof parent === 'string' ? ` under \`${parent}:\`` : typeof parent === 'number' ? ` to this ${entryWord(path.slice(0, -1))}` : '';
        return [{ field, problem: `\`${String(key)}\` is missing: add \`${String(key)}:\`${where}` }];
      }
      return [{ field, problem: `must be ${expectedWords(issue.expected, path)}, not ${describeValue(value)}` }];
    }
    case 'unrecognized_keys': {
      const here = schemaAt(root, raw, path);
      const known = here && defOf(here)?.type === 'object' ? Object.keys(defOf(here)!.shape ?? {}) : null;
      return issue.keys.map((key) => {
        const guess = known ? closest(key, known) : null;
        const hint = guess ? ` or rename it (did you mean \`${guess}\`?)` : known ? ` (the keys allowed here: ${known.join(', ')})` : ', or check its spelling';
        return { field: dotted([...path, key]), problem: `unknown key \`${key}\`: remove it${hint}` };
      });
    }
    case 'invalid_union': {
      const loose = issue as Issue & { discriminator?: string; options?: unknown[]; errors: Issue[][] };
      if (loose.discriminator !== undefined) {
        // A discriminated union (grants by `kind`): the issue's path ends at the discriminator.
        const kinds = (loose.options ?? []).map(String).join(', ');
        if (value === undefined) return [{ field, problem: `the ${entryWord(path.slice(0, -1))} has no ${loose.discriminator}: add \`${loose.discriminator}:\` (one of ${kinds})` }];
        return [{ field, problem: `must be one of ${kinds}, not \`${String(value)}\`` }];
      }
      // The form the value was meant as: one whose problems are not "this is another form".
      const fitting = loose.errors.filter((issues) => !issues.some((i) => i.code === 'unrecognized_keys' && i.path.length === 0));
      const chosen = fitting.length > 0 ? fitting.reduce((a, b) => (b.length < a.length ? b : a)) : null;
      if (chosen && chosen.length > 0) return chosen.flatMap((inner) => problemsOf(root, raw, inner, path));
      const union = schemaAt(root, raw, path.slice(0, -1));
      const element = union ? defOf(union) : undefined;
      const forms = element?.type === 'array' ? unwrap(element.element) : undefined;
      const keys = forms && defOf(forms)?.type === 'union' ? distinguishingKeys(forms) : [];
      if (keys.length > 0 && value !== null && typeof value === 'object' && !Array.isArray(value)) {
        const has = Object.keys(value).map((k) => `\`${k}:\``);
        return [{ field, problem: `a ${entryWord(path)} is one of ${keys.map((k) => `\`${k}:\``).join(', ')}; this one has ${has.length > 0 ? has.join(', ') : 'nothing'}` }];
      }
      return [{ field, problem: value !== undefined && (value === null || typeof value !== 'object') ? `must be a mapping, not ${describeValue(value)}` : 'matches none of the forms allowed here' }];
    }
    case 'too_small': {
      const minimum = Number(issue.minimum);
      if (issue.origin === 'array') {
        if (path.length === 1 && path[0] === 'steps') return [{ field, problem: MISSING_AT_ROOT.steps! }];
        return [{ field, problem: `must have at least ${minimum} ${minimum === 1 ? 'item' : 'items'}` }];
      }
      if (issue.origin === 'string') return [{ field, problem: minimum <= 1 ? 'must not be empty' : `must be at least ${minimum} characters` }];
      // A bound with words of its own in the schema (`maxTurns must be between 1 and 32`) says it best.
      if (issue.origin === 'number' || issue.origin === 'int') return [{ field, problem: `${ownWords(issue) ?? `must be at least ${issue.inclusive === false ? `more than ${minimum}` : minimum}`} (found ${String(value)})` }];
      return [{ field, problem: issue.message }];
    }
    case 'too_big': {
      const maximum = Number(issue.maximum);
      if (issue.origin === 'number' || issue.origin === 'int') return [{ field, problem: `${ownWords(issue) ?? `must be at most ${maximum}`} (found ${String(value)})` }];
      if (issue.origin === 'string') return [{ field, problem: `must be at most ${maximum} characters` }];
      return [{ field, problem: issue.message }];
    }
    case 'invalid_format':
      // A pattern with its own words (`a lowercase name: …`): those, and what was written.
      return [{ field, problem: `${issue.message}${typeof value === 'string' ? ` (found ${JSON.stringify(value)})` : ''}` }];
    case 'invalid_value':
      if (issue.message.startsWith('Invalid')) return [{ field, problem: `must be ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}, not ${describeValue(value)}` }];
      return [{ field, problem: issue.message }];
    default:
      return [{ field, problem: issue.message }];
  }
}

// ---- files that do not parse ----

/** yaml's YAMLParseError (its code and position), as far as it is read here. */
interface YamlParseError {
  code?: string;
  linePos?: Array<{ line: number; col: number }>;
  message: string;
}

const YAML_FIXES: Record<string, string> = {
  BAD_INDENT: 'check the indentation there, and that every `[`, `{` and quote opened is closed',
  DUPLICATE_KEY: 'a key is written twice: keep one',
  TAB_AS_INDENT: 'indent with spaces, not tabs',
  MISSING_CHAR: 'a `:`, bracket or quote is missing there',
  BLOCK_AS_IMPLICIT_KEY: 'a key and its value must be on one line (`key: value`), or the value indented below it',
  MULTILINE_IMPLICIT_KEY: 'a key and its value must be on one line (`key: value`), or the value indented below it',
};

export function yamlProblem(error: unknown): ManifestProblem {
  const parsed = error as YamlParseError;
  const reason = (parsed.message ?? String(error)).split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  const at = parsed.linePos?.[0];
  const fix = YAML_FIXES[parsed.code ?? ''] ?? 'fix the syntax there';
  if (!at) return { field: null, problem: `not valid YAML: ${reason}: ${fix}` };
  return { field: null, line: at.line, problem: `not valid YAML at line ${at.line}, column ${at.col}: ${reason}: ${fix}` };
}

export function jsonProblem(error: unknown, text: string): ManifestProblem {
  const message = error instanceof Error ? error.message : String(error);
  const position = /at position (\d+)/.exec(message);
  const offset = position ? Number(position[1]) : text.length;
  const before = text.slice(0, offset).split('\n');
  const line = before.length;
  const column = before.at(-1)!.length + 1;
  const reason = message.replace(/ in JSON at position \d+.*$/, '').replace(/ \(line \d+ column \d+\)$/, '');
  return { field: null, line, problem: `not valid JSON at line ${line}, column ${column}: ${reason}: fix the syntax there (a missing comma, quote or bracket)` };
}
