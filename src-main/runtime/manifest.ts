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
import { extname, join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import type { parse as ParseYaml } from 'yaml';
import { z } from 'zod';
import { describeZodError } from '../../src-shared/ipc/errors';
import { modelToolName, parseToolRef } from './model-tools';
import { compileAnswerSchema } from './structured-output';
import type { ModelRequest } from './model-provider';

const Name = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'a lowercase name: letters, digits and dashes, starting with a letter');
const Template = z.string();
/** An A2A agent card's URL: http(s), no whitespace, no fragment (it is a grant's exact name). */
const A2A_CARD_URL = /^https?:\/\/[^\s#]+$/;

export const GrantSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('model'), name: z.string().min(1), approve: z.boolean().default(false) }).strict(),
  z.object({ kind: z.literal('tool'), name: z.string().min(1), approve: z.boolean().default(false) }).strict(),
  z.object({ kind: z.literal('peer'), name: z.string().min(1), skills: z.array(z.string().min(1)).min(1), approve: z.boolean().default(false) }).strict(),
  // `<server>/<tool>`: one tool of one declared MCP server, exactly (a server cannot widen it).
  z.object({ kind: z.literal('mcp'), name: z.string().regex(/^[a-z][a-z0-9-]{0,62}\/[^/\s]+$/, 'an MCP tool as <server>/<tool>'), approve: z.boolean().default(false) }).strict(),
  z.object({ kind: z.literal('payment'), name: z.literal('request'), approve: z.literal(true, { message: 'a payment grant always needs a person: approve must be true' }) }).strict(),
  // Another agent of the plane, offered to a model step as the tool `agent:<name>`: each call a
  // child run in the delegation chain (agent-effect.ts). The named agent's own grants were
  // reviewed in its own manifest; this grant is the operator's word that this agent may delegate to it.
  z.object({ kind: z.literal('agent'), name: Name, approve: z.boolean().default(false) }).strict(),
  // A remote A2A agent by its card's URL, exactly (runtime/a2a-effect.ts): the card describes the
  // agent, this grant is the authority; a card can never widen it. `signed: true` makes
  // verification mandatory: an unsigned card is refused before anything is sent. Without it a
  // card is verified where it is signed (most cards in the wild are not, and a client refusing
  // them all would not be used); with it, nobody can downgrade the call by stripping the signature.
  z.object({ kind: z.literal('a2a'), name: z.string().regex(A2A_CARD_URL, 'an A2A card as its http(s) URL'), approve: z.boolean().default(false), signed: z.boolean().default(false) }).strict(),
]);
export type Grant = z.infer<typeof GrantSchema>;

const StepBase = { as: Name.optional() };

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
  z.object({ ...StepBase, mcp: z.object({ server: Name, tool: z.string().regex(/^[^/\s]+$/, 'a tool name (no slash, no space)'), args: z.record(z.string(), z.unknown()).default({}) }).strict() }).strict(),
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
    name: Name,
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
  })
  .strict();
export type Manifest = z.infer<typeof ManifestSchema>;

export class ManifestError extends Error {
  override readonly name = 'ManifestError';
}

export interface LoadedAgent {
  manifest: Manifest;
  source: string;
  /** Validates a run's input against the manifest's schema; returns the errors, naming paths. */
  validateInput(input: unknown): string[];
}

const ajv = new Ajv2020({ allErrors: true, strict: true, validateSchema: true, loadSchema: undefined });
/**
 * The same, without checking each schema against the 2020-12 meta-schema first: for the agents
 * bundled with AgentPlane only (resources/agents), whose schemas are part of the build and are
 * checked against the meta-schema by manifest.test.ts. That check's first use compiles the
 * meta-schema, about 70 ms, a sixth of `serve`'s whole start on a fresh data dir (bench
 * serve-startup); the person's own agents still pay it, because theirs are not checked anywhere
 * else. A bundled schema ajv cannot compile still fails at load, in strict mode, as before.
 */
const ajvForBundled = new Ajv2020({ allErrors: true, strict: true, validateSchema: false, loadSchema: undefined });

export interface CompileOptions {
  /** An agent bundled with AgentPlane (resources/agents): its input schema is not re-checked against the meta-schema. */
  bundled?: boolean;
}

export function compileAgent(raw: unknown, source: string, options: CompileOptions = {}): LoadedAgent {
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) throw new ManifestError(`${source}: ${describeZodError(parsed.error)}`);
  const manifest = parsed.data;
  let validate;
  try {
    // $ref to anything but this schema is refused: validation must not become hidden network
    // or file I/O.
    if (JSON.stringify(manifest.input).match(/"\$ref"\s*:\s*"(?!#)/)) throw new Error('external $ref is not allowed');
    validate = (options.bundled ? ajvForBundled : ajv).compile(manifest.input);
  } catch (error) {
    throw new ManifestError(`${source}: input: not a valid JSON Schema (${(error as Error).message})`);
  }
  const granted = new Set(manifest.grants.map((g) => `${g.kind}:${g.name}`));
  manifest.steps.forEach((step, index) => {
    const need = grantNeeded(step);
    if (need && !granted.has(need)) throw new ManifestError(`${source}: steps.${index}: needs the grant ${need}, which the manifest does not give`);
    if ('model' in step) checkModelTools(manifest, step.model.tools ?? [], `${source}: steps.${index}`);
    if ('model' in step && step.model.schema) {
      try {
        compileAnswerSchema(step.model.schema);
      } catch (error) {
        throw new ManifestError(`${source}: steps.${index}.model.schema: ${(error as Error).message}`);
      }
    }
    if ('peer' in step) {
      const grant = manifest.grants.find((g) => g.kind === 'peer' && g.name === step.peer.name) as { skills: string[] } | undefined;
      if (grant && !grant.skills.includes(step.peer.skill)) {
        throw new ManifestError(`${source}: steps.${index}: calls ${step.peer.name}/${step.peer.skill}, but the peer grant allows only ${grant.skills.join(', ')}`);
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
function checkModelTools(manifest: Manifest, tools: readonly string[], where: string): void {
  const byName = new Map<string, string>();
  for (const ref of tools) {
    const tool = parseToolRef(ref);
    if (tool.kind === 'agent') {
      // Direct recursion is refused here, where it is certain; a longer cycle (a → b → a) is
      // bounded at run time by the delegation depth cap (policy.ts MAX_CHAIN_DEPTH), which fails
      // the call that would go one link too deep as a tool error the model sees.
      if (tool.name === manifest.name) throw new ManifestError(`${where}: tool ${ref}: an agent cannot offer itself as a tool (direct recursion)`);
      if (!manifest.grants.some((g) => g.kind === 'agent' && g.name === tool.name)) {
        throw new ManifestError(`${where}: tool ${ref} needs the grant agent:${tool.name}, which the manifest does not give`);
      }
    } else if (tool.kind === 'peer') {
      const grant = manifest.grants.find((g) => g.kind === 'peer' && g.name === tool.peer) as { skills: string[] } | undefined;
      if (!grant) throw new ManifestError(`${where}: tool ${ref} needs the grant peer:${tool.peer}, which the manifest does not give`);
      if (!grant.skills.includes(tool.skill)) throw new ManifestError(`${where}: tool ${ref}: the peer grant allows only ${grant.skills.join(', ')}`);
    } else if (tool.kind === 'a2a') {
      if (!manifest.grants.some((g) => g.kind === 'a2a' && g.name === tool.card)) throw new ManifestError(`${where}: tool ${ref} needs the grant a2a:${tool.card}, which the manifest does not give`);
    } else if (!manifest.grants.some((g) => g.kind === 'mcp' && g.name === `${tool.server}/${tool.tool}`)) {
      throw new ManifestError(`${where}: tool ${ref} needs the grant mcp:${tool.server}/${tool.tool}, which the manifest does not give`);
    }
    const name = modelToolName(tool);
    const previous = byName.get(name);
    if (previous !== undefined) {
      throw new ManifestError(`${where}: tools ${previous} and ${ref} are ambiguous: both reach the model as ${name}`);
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
  try {
    return extname(source) === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ManifestError(`${source}: not valid ${extname(source) === '.json' ? 'JSON' : 'YAML'} (${(error as Error).message.split('\n')[0]})`);
  }
}

/**
 * Every manifest in a folder (.json, .yaml, .yml), refusing duplicates by name; `preParsed`
 * answers for files whose text it holds (PreParsedManifests).
 */
export function loadAgentsFrom(dir: string, options: CompileOptions & { preParsed?: PreParsedManifests } = {}): LoadedAgent[] {
  const files = readdirSync(dir)
    .filter((f) => ['.json', '.yaml', '.yml'].includes(extname(f)))
    .sort();
  const agents: LoadedAgent[] = [];
  const seen = new Map<string, string>();
  for (const file of files) {
    const source = join(dir, file);
    const text = readFileSync(source, 'utf8');
    const known = options.preParsed !== undefined && Object.hasOwn(options.preParsed, file) ? options.preParsed[file] : undefined;
    const raw = known && known.sha256 === createHash('sha256').update(text).digest('hex') ? known.value : parseManifestText(text, source);
    const agent = compileAgent(raw, source, { ...(options.bundled !== undefined ? { bundled: options.bundled } : {}) });
    const previous = seen.get(agent.manifest.name);
    if (previous) throw new ManifestError(`${source}: an agent named ${agent.manifest.name} is already declared in ${previous}`);
    seen.set(agent.manifest.name, source);
    agents.push(agent);
  }
  return agents;
}
