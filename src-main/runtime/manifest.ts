/**
 * Agent manifests: agents declared as files (JSON or YAML), reviewed like code. A manifest says
 * what an agent is for, the shape of its input (JSON Schema, compiled with ajv so a bad schema
 * is refused at load, not at first use), the steps it runs, what it is granted, what it may
 * spend, and what a person must see first.
 *
 * Grants are the agent's whole authority: an effect whose grant is absent is refused at the
 * step ("what is not granted is denied"), and a grant marked `approve` suspends the run before
 * the effect until a person allows exactly it. The grant list comes from the operator's file,
 * never from anything the agent or a peer says about itself.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, extname, join } from 'node:path';
import { lazyAjv2020 } from '../base/json-schema-validator';
import type { parse as ParseYaml } from 'yaml';
import { z } from 'zod';
import { A2A_CARD_URL, GrantSchema, ManifestName } from './grants';
import { jsonProblem, manifestProblems, yamlProblem } from './manifest-problems';
import { modelToolName, parseToolRef } from './model-tools';
import { compileAnswerSchema } from './structured-output';
import { builtinTools } from './tools';
import type { ModelRequest } from './model-provider';

export { GrantSchema, type Grant } from './grants';

const Template = z.string();

const StepBase = { as: ManifestName.optional() };

type ReasoningEffort = NonNullable<ModelRequest['reasoningEffort']>;
/** The reasoning efforts a manifest may name; `satisfies` keeps them within the seam's type. */
const REASONING_EFFORTS = ['low', 'medium', 'high'] as const satisfies readonly ReasoningEffort[];

export const StepSchema = z.union([
  z
    .object({
      ...StepBase,
      model: z
        .object({
          provider: z.string().min(1).default('local'),
          model: z.string().optional(),
          prompt: Template,
          system: Template.optional(),
          maxTokens: z.number().int().min(1).max(32_000).default(256),
          /**
           * Tools the model may call, each its own governed effect under its own grant:
           * `peer:<id>/<skill>`, `mcp:<server>/<tool>`, `agent:<name>`, `a2a:<card URL>` (see model-tools.ts).
           */
          tools: z.array(z.string().regex(/^(peer|mcp|agent):[^/\s]+\/[^/\s]+$|^agent:[^/\s]+$|^a2a:https?:\/\/[^\s#]+$/, 'a tool as peer:<id>/<skill>, mcp:<server>/<tool>, agent:<name> or a2a:<card URL>')).optional(),
          /** The bound on the tool loop: model turns, default 8 (DEFAULT_MAX_TURNS), at most 32. */
          maxTurns: z.number().int().min(1, 'maxTurns must be between 1 and 32').max(32, 'maxTurns must be between 1 and 32').optional(),
          /**
           * Structured output: a JSON Schema (an object at the root, local `$ref`s only) the answer
           * must match. Sent natively where the provider has a schema mode, as a forced tool where
           * not, and always validated locally; the step's result is then the parsed object
           * (structured-output.ts). Compiled at load, so a bad schema is refused before any run.
           */
          schema: z.record(z.string(), z.unknown()).optional(),
          /**
           * How hard a reasoning model thinks: OpenAI reasoning.effort, Anthropic and Gemini thinking
           * budgets. A refine rather than an enum, so the union of step forms reports this message
           * instead of its bare "Invalid input".
           */
          reasoningEffort: z
            .string()
            .refine((v) => (REASONING_EFFORTS as readonly string[]).includes(v), 'reasoningEffort must be low, medium or high')
            .transform((v) => v as ReasoningEffort)
            .optional(),
        })
        .strict(),
    })
    .strict(),
  z.object({ ...StepBase, tool: z.object({ name: z.string().min(1), args: z.record(z.string(), z.unknown()).default({}) }).strict() }).strict(),
  z.object({ ...StepBase, pay: z.object({ amount: z.union([z.number().positive(), Template]), currency: z.string().min(3).max(8), payee: Template }).strict() }).strict(),
  z.object({ ...StepBase, input: z.object({ prompt: Template }).strict() }).strict(),
  z.object({ ...StepBase, peer: z.object({ name: z.string().min(1), skill: z.string().min(1), args: z.record(z.string(), z.unknown()).default({}) }).strict() }).strict(),
  z.object({ ...StepBase, mcp: z.object({ server: ManifestName, tool: z.string().regex(/^[^/\s]+$/, 'a tool name (no slash, no space)'), args: z.record(z.string(), z.unknown()).default({}) }).strict() }).strict(),
  // A remote A2A agent (runtime/a2a-effect.ts): a string message (a template) is a text part, an
  // object (rendered field by field) a data part.
  z.object({ ...StepBase, a2a: z.object({ card: z.string().regex(A2A_CARD_URL, 'an A2A card as its http(s) URL'), skill: z.string().min(1).optional(), message: z.union([Template, z.record(z.string(), z.unknown())]) }).strict() }).strict(),
  z.object({ output: z.unknown() }).strict(),
]);
export type Step = z.infer<typeof StepSchema>;

/**
 * A run's ceilings. Money may be given as `maxCostUsd` (dollars, as people write them) or as
 * `maxCostMicros` (the integer micro-units every record holds); the dollars are converted, rounded
 * down so the ceiling never allows more than was written. Both at once is refused: two numbers
 * for one ceiling would have to disagree to be worth writing.
 */
export const BudgetSchema = z
  .object({
    maxEffects: z.number().int().min(1).optional(),
    maxTokens: z.number().int().min(1).optional(),
    maxCostMicros: z.number().int().min(0).optional(),
    maxCostUsd: z.number().finite().min(0).max(1_000_000_000).optional(),
  })
  .strict()
  .refine((b) => b.maxCostUsd === undefined || b.maxCostMicros === undefined, { message: 'give maxCostUsd or maxCostMicros, not both', path: ['maxCostUsd'] })
  .transform(({ maxCostUsd, ...rest }) => (maxCostUsd === undefined ? rest : { ...rest, maxCostMicros: Math.floor(Math.round(maxCostUsd * 1e9) / 1e3) }));

export const ManifestSchema = z
  .object({
    name: ManifestName,
    description: z.string().min(1),
    /** JSON Schema (draft 2020-12) of the run's input. */
    input: z.record(z.string(), z.unknown()),
    steps: z.array(StepSchema).min(1),
    grants: z.array(GrantSchema).default([]),
    budget: BudgetSchema.default({}),
    oversight: z
      .object({
        /** Every effect of this agent needs a person's approval, whatever its grant says. */
        approveEveryEffect: z.boolean().default(false),
      })
      .strict()
      .default({ approveEveryEffect: false }),
    /**
     * The sensitivity label of the agent's input when its starter gives none (docs/GOVERNED-RUNTIME.md,
     * "Sensitivity"); checked against the plane's labels when a run is admitted.
     */
    sensitivity: z.object({ input: z.string().regex(/^[a-z][a-z0-9-]*$/, 'a label (lowercase letters, digits and dashes)') }).strict().optional(),
  })
  .strict();
export type Manifest = z.infer<typeof ManifestSchema>;

/**
 * A manifest that does not load. The message is `<file>: <field>: <what is wrong and the fix>`;
 * the parts are kept apart too, for the lists that show a broken agent (`agents list`, the UI).
 */
export class ManifestError extends Error {
  override readonly name = 'ManifestError';
  /** The file (or label) the manifest came from; null when the message was given whole. */
  readonly source: string | null;
  /** The field at fault, dotted (`input`, `steps.0.model.prompt`); null for the file as a whole. */
  readonly field: string | null;
  /** The line at fault (1-based), for a file that does not parse. */
  readonly line: number | null;
  /** What is wrong and how to fix it, without the file and the field. */
  readonly problem: string;

  constructor(message: string, detail?: { source: string; field: string | null; problem: string; line?: number | null }) {
    super(message);
    this.source = detail?.source ?? null;
    this.field = detail?.field ?? null;
    this.line = detail?.line ?? null;
    this.problem = detail?.problem ?? message;
  }
}

/** The ManifestError for `problem` at `field` of `source`. */
export function manifestError(source: string, field: string | null, problem: string, line?: number | null): ManifestError {
  return new ManifestError(`${source}: ${field !== null ? `${field}: ` : ''}${problem}`, { source, field, problem, line: line ?? null });
}

export interface LoadedAgent {
  manifest: Manifest;
  source: string;
  /** Validates a run's input against the manifest's schema; returns the errors, naming paths. */
  validateInput(input: unknown): string[];
}

const ajv = lazyAjv2020({ allErrors: true, strict: true, validateSchema: true, loadSchema: undefined });
/**
 * The same, without checking each schema against the 2020-12 meta-schema first: for the agents
 * bundled with AgentPlane only (resources/agents), whose schemas are part of the build and are
 * checked against the meta-schema by manifest.test.ts. That check's first use compiles the
 * meta-schema, about 70 ms, a sixth of `serve`'s whole start on a fresh data dir (bench
 * serve-startup); the person's own agents still pay it, because theirs are not checked anywhere
 * else. A bundled schema ajv cannot compile still fails at load, in strict mode, as before.
 */
const ajvForBundled = lazyAjv2020({ allErrors: true, strict: true, validateSchema: false, loadSchema: undefined });

export interface CompileOptions {
  /** An agent bundled with AgentPlane (resources/agents): its input schema is not re-checked against the meta-schema. */
  bundled?: boolean;
}

export function compileAgent(raw: unknown, source: string, options: CompileOptions = {}): LoadedAgent {
  if (raw === null || raw === undefined) {
    throw manifestError(source, null, 'the file is empty: an agent manifest is a mapping with `name:`, `description:`, `input:`, `steps:` and `grants:`');
  }
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw manifestError(source, null, `the file holds ${Array.isArray(raw) ? 'a list' : 'a single value'}, not a manifest: an agent manifest is a mapping with \`name:\`, \`description:\`, \`input:\`, \`steps:\` and \`grants:\``);
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = manifestProblems(ManifestSchema, raw, parsed.error);
    const first = problems[0] ?? { field: null, problem: 'does not match the manifest schema' };
    const message = problems.map((p) => `${p.field !== null ? `${p.field}: ` : ''}${p.problem}`).join('; ');
    throw new ManifestError(`${source}: ${message}`, { source, field: first.field, problem: problems.length === 1 ? first.problem : message.slice(first.field !== null ? first.field.length + 2 : 0) });
  }
  const manifest = parsed.data;
  let validate;
  try {
    // $ref to anything but this schema is refused: validation must not become hidden network
    // or file I/O.
    if (JSON.stringify(manifest.input).match(/"\$ref"\s*:\s*"(?!#)/)) throw new Error('external $ref is not allowed');
    validate = (options.bundled ? ajvForBundled : ajv)().compile(manifest.input);
  } catch (error) {
    throw manifestError(source, 'input', `not a valid JSON Schema (${(error as Error).message})`);
  }
  const granted = new Set(manifest.grants.map((g) => `${g.kind}:${g.name}`));
  // A built-in tool's protected fields must be arguments it reads: a misspelt one would protect nothing.
  manifest.grants.forEach((grant, index) => {
    const known = grant.kind === 'tool' ? builtinTools.get(grant.name)?.args : undefined;
    const stray = known && grant.kind === 'tool' ? Object.keys(grant.protect ?? {}).find((field) => !known.includes(field)) : undefined;
    if (stray !== undefined) throw manifestError(source, `grants.${index}.protect.${stray}`, `${stray} is not an argument of the tool ${grant.name} (it takes ${known!.join(', ')})`);
  });
  manifest.steps.forEach((step, index) => {
    const need = grantNeeded(step);
    if (need && !granted.has(need)) {
      const [kind, ...name] = need.split(':');
      throw manifestError(source, `steps.${index}`, `needs the grant ${need}, which the manifest does not give: add \`- {kind: ${kind}, name: ${name.join(':')}}\` under \`grants:\``);
    }
    if ('model' in step) checkModelTools(manifest, step.model.tools ?? [], source, `steps.${index}`);
    if ('model' in step && step.model.schema) {
      try {
        compileAnswerSchema(step.model.schema);
      } catch (error) {
        throw manifestError(source, `steps.${index}.model.schema`, (error as Error).message);
      }
    }
    if ('peer' in step) {
      const grant = manifest.grants.find((g) => g.kind === 'peer' && g.name === step.peer.name) as { skills: string[] } | undefined;
      if (grant && !grant.skills.includes(step.peer.skill)) {
        throw manifestError(source, `steps.${index}`, `calls ${step.peer.name}/${step.peer.skill}, but the peer grant allows only ${grant.skills.join(', ')}`);
      }
    }
  });
  return {
    manifest,
    source,
    validateInput(input) {
      if (validate(input)) return [];
      return (validate.errors ?? []).map((e) => `input${e.instancePath.replace(/\//g, '.')}: ${e.message ?? 'is invalid'}`);
    },
  };
}

/**
 * A model step's tools, checked at load: each needs its grant exactly as the step form would
 * (`peer:<id>` listing the skill; `mcp:<server>/<tool>`; `agent:<name>`, never the agent itself;
 * whether that agent exists is checked when the plane is built), and no two may reach the model under
 * one name (names are sanitised to [a-zA-Z0-9_-]{1,64}, so distinct references can collide; a
 * collision would let the model's call land on a tool other than the one it chose).
 */
function checkModelTools(manifest: Manifest, tools: readonly string[], source: string, field: string): void {
  const refuse = (problem: string) => manifestError(source, field, problem);
  const byName = new Map<string, string>();
  for (const ref of tools) {
    const tool = parseToolRef(ref);
    if (tool.kind === 'agent') {
      // Direct recursion is refused here, where it is certain; a longer cycle (a → b → a) is
      // bounded at run time by the delegation depth cap (policy.ts MAX_CHAIN_DEPTH), which fails
      // the call that would go one link too deep as a tool error the model sees.
      if (tool.name === manifest.name) throw refuse(`tool ${ref}: an agent cannot offer itself as a tool (direct recursion)`);
      if (!manifest.grants.some((g) => g.kind === 'agent' && g.name === tool.name)) {
        throw refuse(`tool ${ref} needs the grant agent:${tool.name}, which the manifest does not give`);
      }
    } else if (tool.kind === 'peer') {
      const grant = manifest.grants.find((g) => g.kind === 'peer' && g.name === tool.peer) as { skills: string[] } | undefined;
      if (!grant) throw refuse(`tool ${ref} needs the grant peer:${tool.peer}, which the manifest does not give`);
      if (!grant.skills.includes(tool.skill)) throw refuse(`tool ${ref}: the peer grant allows only ${grant.skills.join(', ')}`);
    } else if (tool.kind === 'a2a') {
      if (!manifest.grants.some((g) => g.kind === 'a2a' && g.name === tool.card)) throw refuse(`tool ${ref} needs the grant a2a:${tool.card}, which the manifest does not give`);
    } else if (!manifest.grants.some((g) => g.kind === 'mcp' && g.name === `${tool.server}/${tool.tool}`)) {
      throw refuse(`tool ${ref} needs the grant mcp:${tool.server}/${tool.tool}, which the manifest does not give`);
    }
    const name = modelToolName(tool);
    const previous = byName.get(name);
    if (previous !== undefined) {
      throw refuse(`tools ${previous} and ${ref} are ambiguous: both reach the model as ${name}`);
    }
    byName.set(name, ref);
  }
}

/** The grant a step's effect needs, as `kind:name`; null for steps that are not effects. */
export function grantNeeded(step: Step): string | null {
  if ('model' in step) return `model:${step.model.provider}`;
  if ('tool' in step) return `tool:${step.tool.name}`;
  if ('pay' in step) return 'payment:request';
  if ('peer' in step) return `peer:${step.peer.name}`;
  if ('mcp' in step) return `mcp:${step.mcp.server}/${step.mcp.tool}`;
  if ('a2a' in step) return `a2a:${step.a2a.card}`;
  return null;
}

let yamlParse: typeof ParseYaml | null = null;

/**
 * YAML's parser, loaded the first time a YAML manifest is parsed rather than with this module:
 * loading and first running the yaml package was about 47 ms of a fresh `serve`'s start (bench
 * serve-startup's profile), and a plane whose only YAML manifests are the bundled ones, parsed
 * when AgentPlane was built (PreParsedManifests), never needs it.
 */
function parseYaml(text: string): unknown {
  yamlParse ??= (createRequire(import.meta.url)('yaml') as { parse: typeof ParseYaml }).parse;
  return yamlParse(text);
}

/**
 * Manifests parsed when AgentPlane was built (electron.vite.config.ts writes the bundled agents'
 * as out/main/bundled-agents.json): by file name, the SHA-256 of the text that was parsed and
 * what it parsed to. A file whose text no longer hashes to that (edited after the build) is
 * parsed again, so an entry stands only for the exact text it came from.
 */
export type PreParsedManifests = Record<string, { sha256: string; value: unknown }>;

export function parseManifestText(text: string, source: string): unknown {
  const json = extname(source) === '.json';
  try {
    return json ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    const found = json ? jsonProblem(error, text) : yamlProblem(error);
    throw manifestError(source, null, found.problem, found.line ?? null);
  }
}

/** The file names a folder of manifests holds: .json, .yaml and .yml. */
export const MANIFEST_EXTENSIONS: readonly string[] = ['.json', '.yaml', '.yml'];

/** An agent file that does not load, as the lists show it: the agent's name, the file, the field and the fix. */
export interface BrokenAgent {
  /** The name the file declares when it can be read, else the file's name without its extension. */
  name: string;
  /** The file. */
  source: string;
  /** The field at fault, dotted; null for the file as a whole. */
  field: string | null;
  /** The line at fault, for a file that does not parse. */
  line: number | null;
  /** What is wrong and how to fix it. */
  problem: string;
}

/** `<file>: <field>: <problem>`, one line: how a broken agent is named in a refusal or a log. */
export function brokenAgentLine(broken: BrokenAgent): string {
  return `${broken.source}: ${broken.field !== null ? `${broken.field}: ` : ''}${broken.problem}`;
}

export interface AgentFolder {
  agents: LoadedAgent[];
  broken: BrokenAgent[];
  /** Each manifest file read, by path: the SHA-256 of its text (what a reload compares). */
  digests: Map<string, string>;
}

export interface ReadFolderOptions extends CompileOptions {
  preParsed?: PreParsedManifests;
  /**
   * Of two files declaring one name, the one to keep, by name: the file that held it before (a
   * reload does not hand a running agent's name to a file that appeared beside it). Otherwise
   * the first file in name order keeps it.
   */
  prefer?: ReadonlyMap<string, string>;
  /** Refuses a file the plane must not trust (throws; its message says why and the fix). */
  trust?: (path: string) => void;
}

/** The name a broken file is listed under: the one it declares, when that can be read. */
function declaredName(raw: unknown, source: string): string {
  const name = raw !== null && typeof raw === 'object' ? (raw as { name?: unknown }).name : undefined;
  return typeof name === 'string' && name.length > 0 && name.length <= 200 ? name : basename(source, extname(source));
}

/**
 * Every manifest in a folder (.json, .yaml, .yml): those that load, and those that do not, each
 * with its file, field and fix; of two files declaring one name the second is the broken one.
 * One bad file never hides the others. A folder that is not there holds nothing.
 */
export function readAgentFolder(dir: string, options: ReadFolderOptions = {}): AgentFolder {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { agents: [], broken: [], digests: new Map() };
    throw error;
  }
  const files = names.filter((f) => MANIFEST_EXTENSIONS.includes(extname(f))).sort();
  const loaded: LoadedAgent[] = [];
  const broken: BrokenAgent[] = [];
  const digests = new Map<string, string>();
  for (const file of files) {
    const source = join(dir, file);
    let raw: unknown;
    try {
      options.trust?.(source);
      let text: string;
      try {
        text = readFileSync(source, 'utf8');
      } catch (error) {
        // Gone since the folder was read (an editor's temporary): nothing to load.
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      const digest = createHash('sha256').update(text).digest('hex');
      digests.set(source, digest);
      const known = options.preParsed !== undefined && Object.hasOwn(options.preParsed, file) ? options.preParsed[file] : undefined;
      raw = known && known.sha256 === digest ? known.value : parseManifestText(text, source);
      loaded.push(compileAgent(raw, source, { ...(options.bundled !== undefined ? { bundled: options.bundled } : {}) }));
    } catch (error) {
      if (error instanceof ManifestError) {
        broken.push({ name: declaredName(raw, source), source, field: error.field, line: error.line, problem: error.problem });
      } else {
        broken.push({ name: declaredName(raw, source), source, field: null, line: null, problem: error instanceof Error ? error.message : String(error) });
      }
    }
  }
  // One file per name: the preferred one, else the first in name order.
  const holder = new Map<string, string>();
  for (const agent of loaded) {
    const name = agent.manifest.name;
    const preferred = options.prefer?.get(name);
    if (!holder.has(name) || (preferred === agent.source && holder.get(name) !== preferred)) holder.set(name, agent.source);
  }
  const agents: LoadedAgent[] = [];
  for (const agent of loaded) {
    const kept = holder.get(agent.manifest.name)!;
    if (kept === agent.source) agents.push(agent);
    else broken.push({ name: agent.manifest.name, source: agent.source, field: 'name', line: null, problem: `an agent named ${agent.manifest.name} is already declared in ${kept}: rename one of them (\`name:\`)` });
  }
  broken.sort((a, b) => a.source.localeCompare(b.source));
  return { agents, broken, digests };
}

/**
 * Every manifest in a folder, refusing the folder when any one does not load (the bundled
 * agents, which are part of the build, and tests); `preParsed` answers for files whose text it
 * holds (PreParsedManifests).
 */
export function loadAgentsFrom(dir: string, options: CompileOptions & { preParsed?: PreParsedManifests } = {}): LoadedAgent[] {
  const folder = readAgentFolder(dir, options);
  const first = folder.broken[0];
  if (first) throw new ManifestError(brokenAgentLine(first), { source: first.source, field: first.field, problem: first.problem, line: first.line });
  return folder.agents;
}
