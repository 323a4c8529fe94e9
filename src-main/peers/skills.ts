/**
 * The MCPv2 skills, as runtime programs. Every inbound `tools/call` is admitted as a run of one
 * of these (`skill:<name>`), so a skill's effects (a model call, a file write, a payment
 * intent) are journaled once, metered, replayed from the record and governed like any agent's.
 *
 * A skill fails with an MCPv2 error code by throwing `skillError(code, message)` (skill-error.ts):
 * the run seals failed with the code `mcpv2:<code>`, and the peer answers the slot with that code.
 * The message is written for the caller and carries nothing of the plane's internals.
 */
import { z } from 'zod';
import { HistoryErrorCode, HistoryTranslationError, translateHistory } from '../../src-shared/protocol/history';
import { Mcpv2Error, MAX_SKILL_ARGUMENT_BYTES, MCPV2_SUPPORTED_VERSIONS, skillArguments, type BuiltinSkill, type SkillDescriptor } from '../../src-shared/protocol/mcpv2';
import { describeZodError } from '../../src-shared/ipc/errors';
import type { Journal } from '../journal/journal';
import type { ModelProvider } from '../runtime/model-provider';
import { LARGE_VALUE_BYTES } from '../runtime/large-values';
import { callModel } from '../runtime/model-effect';
import type { RunContext } from '../runtime/run-context';
import type { RunProgram } from '../runtime/run-program';
import { EffectFailure, RunCancelled } from '../runtime/run-signals';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import { PAYMENT_NOTE } from '../runtime/step-runner';
import type { CustomSkill, CustomSkillRunner } from './custom-skills';
import { FileStoreError, type FileStore } from './file-store';
import { DigestRefSchema, restoreArguments, type InputBlobs } from './input-blobs';
import { jsonBytes } from './input-bounds';
import { skillError } from './skill-error';
import type { UploadStaging } from './upload-staging';

export interface SkillDeps {
  peerId: string;
  peerName: string;
  files: FileStore;
  model: ModelProvider;
  llmMode: boolean;
  journal: Journal;
  custom: readonly CustomSkill[];
  customRunner: CustomSkillRunner;
  staging: UploadStaging;
  /** Large arguments (and translate_history's large answers), named in the journal by digest. */
  blobs: InputBlobs;
}

/** What upload_file's run receives: the caller's arguments with the content staged. */
const StagedUploadSchema = z
  .object({
    filename: z.string().min(1).max(255),
    encoding: z.enum(['utf8', 'base64']).default('utf8'),
    staged: z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), bytes: z.number().int().nonnegative() }),
  })
  .strict();

const SKILL_BUDGET = { maxEffects: 20 };

function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

function parseArgs<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const parsed = schema.safeParse(input);
  if (!parsed.success) throw skillError(Mcpv2Error.InvalidParams, `invalid arguments: ${describeZodError(parsed.error)}`);
  return parsed.data;
}

/** The file-store effects that only read. */
const READS = new Set(['files.list', 'files.read']);

/** A file-store effect; store failures become the protocol's codes (docs/PEER-PROTOCOL.md, "Error codes"). */
async function fileEffect(cx: RunContext, deps: SkillDeps, name: string, request: Record<string, unknown>, act: () => Promise<unknown>): Promise<unknown> {
  return cx.effect({
    effect: 'file',
    name,
    // A listing or a read changes nothing, so it needs no durable start (EffectSpec.local).
    ...(READS.has(name) ? { local: true as const } : {}),
    request,
    destination: `peer:${deps.peerId}/files`,
    grant: `tool:${name}`,
    estimate: { ...NO_SPEND, effects: 1 },
    async perform() {
      try {
        return { result: await act(), spend: { ...NO_SPEND, effects: 1 }, provenance: `peer:${deps.peerId}` };
      } catch (error) {
        if (error instanceof FileStoreError) {
          const code = error.code === 'not-found' ? Mcpv2Error.FileNotFound : Mcpv2Error.InvalidParams;
          throw skillError(code, error.message);
        }
        throw error;
      }
    },
  });
}

interface SkillDefinition<S extends BuiltinSkill> {
  name: S;
  description: string;
  grants: Array<[string, boolean]>;
  run(args: z.output<(typeof skillArguments)[S]>, cx: RunContext, deps: SkillDeps, context: SkillCallContext): Promise<unknown>;
}

/** What the peer adds to a skill run's input beside the caller's arguments. */
export interface SkillCallContext {
  /** LLM mode: which conversation an ask continues (the caller's, or its session's). */
  conversation?: string;
  provider?: string;
}

export const SkillInputSchema = z.object({
  arguments: z.unknown(),
  /** Arguments kept out of the journal (see input-blobs.ts): name -> digest and size of their JSON. */
  external: z.record(z.string(), DigestRefSchema).optional(),
  context: z.object({ conversation: z.string().optional(), provider: z.string().optional() }).default({}),
});

/**
 * The caller's arguments, whole: the inline ones with the externalized ones read back. Not an
 * effect: a blob is content-addressed, so reading it again on replay gives the same bytes or
 * none, and none is a clear failure rather than a different run.
 */
async function argumentsOf(input: z.output<typeof SkillInputSchema>, deps: SkillDeps): Promise<unknown> {
  if (!input.external) return input.arguments;
  const restored = await restoreArguments((input.arguments ?? {}) as Record<string, unknown>, input.external, deps.blobs);
  if (!restored.ok) throw skillError(Mcpv2Error.SkillExecutionError, `the bytes of argument ${restored.missing} are no longer on this peer; send the call again`);
  return restored.arguments;
}

/** An earlier ask turn's query, read back from the blobs when it was too large to journal. */
async function earlierQuery(input: { arguments?: { query?: unknown }; external?: Record<string, unknown> }, deps: SkillDeps): Promise<string> {
  if (typeof input.arguments?.query === 'string') return input.arguments.query;
  const ref = DigestRefSchema.safeParse(input.external?.query);
  if (!ref.success) return '';
  const text = await deps.blobs.get(ref.data);
  return text === null ? `[an earlier message of ${ref.data.bytes} bytes is no longer on this peer]` : String(JSON.parse(text));
}

const definitions: { [S in BuiltinSkill]: SkillDefinition<S> } = {
  ping: {
    name: 'ping',
    description: 'Liveness through the whole stack: answers pong with the peer and the time.',
    grants: [],
    run: async (_args, cx, deps) => ({ pong: true, peer: deps.peerName, time: await cx.now() }),
  },
  ask: {
    name: 'ask',
    description: 'Ask the peer a question. With LLM mode on, a conversation carries context turn over turn (kept in the journal, so it survives a restart).',
    grants: [['model:*', false]],
    async run(args, cx, deps, context) {
      const conversation = deps.llmMode ? context.conversation : undefined;
      const earlier = conversation
        ? ((await cx.effect({
            effect: 'tool',
            name: 'conversation.read',
            request: { conversation },
            // A read of the journal: it changes nothing (EffectSpec.local).
            local: true,
            grant: null,
            estimate: NO_SPEND,
            perform: async () => ({ result: await deps.journal.sealedRunResults('skill:ask', '$.context.conversation', conversation, 50, `peer:${deps.peerId}`), spend: NO_SPEND, provenance: 'plane' }),
          })) as Array<{ input: { arguments?: { query?: string }; external?: Record<string, unknown> }; result: { response?: string } }>)
        : [];
      // The journaled turns name a large query by digest (so this read stays small too); the
      // text comes back from the blobs, outside the effect. Only the most recent turns that fit
      // in one argument's cap are carried: fifty 1 MB turns must not make every later ask read
      // and send 50 MB. (Decided from the journaled turns alone, so a replay decides the same.)
      let carried = 0;
      let from = earlier.length;
      while (from > 0) {
        const turn = earlier[from - 1]!;
        const ref = DigestRefSchema.safeParse(turn.input.external?.query);
        const size = (ref.success ? ref.data.bytes : Buffer.byteLength(String(turn.input.arguments?.query ?? ''))) + Buffer.byteLength(String(turn.result.response ?? ''));
        if (carried + size > MAX_SKILL_ARGUMENT_BYTES) break;
        carried += size;
        from--;
      }
      const messages = [
        ...(
          await Promise.all(
            earlier.slice(from).map(async (turn) => [
              { role: 'user' as const, content: await earlierQuery(turn.input, deps) },
              { role: 'assistant' as const, content: String(turn.result.response ?? '') },
            ]),
          )
        ).flat(),
        { role: 'user' as const, content: args.query },
      ];
      const completion = await callModel(cx, deps.model, { model: '', messages, maxTokens: 256 });
      return {
        response: completion.text,
        model: completion.model,
        usage: completion.usage,
        // The caller sees the name it gave; the key it is kept under is scoped to the caller.
        ...(conversation ? { conversation: conversation.includes('/') ? conversation.slice(conversation.indexOf('/') + 1) : conversation, turn: earlier.length + 1 } : {}),
      };
    },
  },
  upload_file: {
    name: 'upload_file',
    description: 'Store a file in the peer\'s file store (utf8 text or base64 bytes).',
    grants: [['tool:files.upload', false]],
    async run(args, cx, deps) {
      // The peer staged the bytes (they never enter the journal); the run names their digest.
      const staged = (args as unknown as { staged: { sha256: string; bytes: number } }).staged;
      return fileEffect(cx, deps, 'files.upload', { filename: args.filename, bytes: staged.bytes, sha256: staged.sha256, encoding: args.encoding }, async () => {
        const content = await deps.staging.take(staged);
        if (!content) throw skillError(Mcpv2Error.SkillExecutionError, 'the upload\'s staged bytes are gone; send it again');
        const stored = await deps.files.save(args.filename, content);
        await deps.staging.remove(staged);
        return { filename: stored.filename, bytes: stored.bytes, sha256: staged.sha256 };
      });
    },
  },
  list_files: {
    name: 'list_files',
    description: 'List the files in the peer\'s file store.',
    grants: [['tool:files.list', false]],
    run: (_args, cx, deps) => fileEffect(cx, deps, 'files.list', {}, async () => ({ files: await deps.files.list() })),
  },
  process_instructions: {
    name: 'process_instructions',
    description: 'Apply instructions to a stored file with the peer\'s model.',
    grants: [['tool:files.read', false], ['model:*', false]],
    async run(args, cx, deps) {
      const file = (await fileEffect(cx, deps, 'files.read', { filename: args.filename }, async () => {
        const bytes = await deps.files.read(args.filename);
        return { filename: args.filename, bytes: bytes.length, text: bytes.toString('utf8').slice(0, 20_000) };
      })) as { filename: string; bytes: number; text: string };
      const completion = await callModel(cx, deps.model, {
        model: '',
        messages: [{ role: 'user', content: `${args.instructions}\n\n${file.text}` }],
        maxTokens: 256,
      });
      return { filename: file.filename, bytes: file.bytes, instructions: args.instructions, result: completion.text };
    },
  },
  delete_file: {
    name: 'delete_file',
    description: 'Delete a file from the peer\'s file store.',
    grants: [['tool:files.delete', false]],
    run: (args, cx, deps) =>
      fileEffect(cx, deps, 'files.delete', { filename: args.filename }, async () => {
        await deps.files.delete(args.filename);
        return { deleted: args.filename };
      }),
  },
  get_skill: {
    name: 'get_skill',
    description: 'Metadata of one skill (it is never executed).',
    grants: [],
    async run(args, _cx, deps) {
      const found = describeSkills(deps).find((s) => s.name === args.name);
      if (!found) throw skillError(Mcpv2Error.SkillNotFound, `no skill named ${args.name}`);
      return found;
    },
  },
  negotiate: {
    name: 'negotiate',
    description: 'Agree on a protocol version and the capabilities both sides have.',
    grants: [],
    async run(args, _cx, deps) {
      const version = args.versions.find((v) => (MCPV2_SUPPORTED_VERSIONS as readonly string[]).includes(v));
      if (!version) throw skillError(Mcpv2Error.ProtocolVersionMismatch, `no common protocol version: this peer speaks ${MCPV2_SUPPORTED_VERSIONS.join(', ')}`);
      const mine = peerCapabilityNames(deps);
      return { version, capabilities: args.capabilities.filter((c) => mine.includes(c)), supported: mine };
    },
  },
  pay: {
    name: 'pay',
    description: 'Request a payment. A person must approve it in the approvals inbox; no money moves, and the result says so.',
    grants: [['payment:request', true]],
    async run(args, cx, deps) {
      return cx.effect({
        effect: 'payment',
        name: 'request',
        request: { amount: args.amount, currency: args.currency, payee: args.payee },
        destination: `payee:${args.payee}`,
        grant: 'payment:request',
        estimate: { ...NO_SPEND, effects: 1 },
        perform: async () => ({
          result: { status: 'approved-intent', moved: false, amount: args.amount, currency: args.currency, payee: args.payee, note: PAYMENT_NOTE },
          spend: { ...NO_SPEND, effects: 1 },
          provenance: `peer:${deps.peerId}`,
        }),
      });
    },
  },
  translate_history: {
    name: 'translate_history',
    description: 'Translate a conversation history between claude, openai, gemini and deepseek formats, losslessly.',
    grants: [],
    async run(args, _cx, deps) {
      try {
        const messages = translateHistory({ from: args.from, to: args.to, messages: args.messages });
        // A large translation is sealed as its digest, like the large history it came from:
        // the peer reads it back to answer (see peer-server.ts, runSkill).
        if (jsonBytes(messages) > LARGE_VALUE_BYTES) return { from: args.from, to: args.to, external: { messages: await deps.blobs.put(JSON.stringify(messages)) } };
        return { from: args.from, to: args.to, messages };
      } catch (error) {
        if (error instanceof HistoryTranslationError) {
          throw skillError(error.code === HistoryErrorCode.UnsupportedProvider ? Mcpv2Error.UnsupportedProvider : Mcpv2Error.InvalidParams, error.message);
        }
        throw error;
      }
    },
  },
};

export const BUILTIN_SKILLS = Object.keys(definitions) as BuiltinSkill[];

export function peerCapabilityNames(deps: Pick<SkillDeps, 'llmMode'>): string[] {
  return ['batch', 'files', 'translate_history', 'sessions', 'peer-credentials', ...(deps.llmMode ? ['llm-mode'] : [])];
}

export function describeSkills(deps: Pick<SkillDeps, 'custom'>): SkillDescriptor[] {
  return [
    ...BUILTIN_SKILLS.map((name) => ({
      name,
      description: definitions[name].description,
      inputSchema: jsonSchemaOf(skillArguments[name]),
      requiresApproval: definitions[name].grants.some(([, approve]) => approve),
      custom: false,
    })),
    ...deps.custom.map((skill) => ({ name: skill.name, description: skill.description, inputSchema: skill.inputSchema, requiresApproval: false, custom: true })),
  ];
}

/** Every skill of this peer as a runtime program, `skill:<name>`. */
export function skillPrograms(deps: SkillDeps): RunProgram[] {
  const builtins = BUILTIN_SKILLS.map((name): RunProgram => {
    const definition = definitions[name] as SkillDefinition<BuiltinSkill>;
    const grants = new Map(definition.grants.map(([grant, approve]) => [grant === 'model:*' ? `model:${deps.model.id}` : grant, { approve }]));
    return {
      id: `skill:${name}`,
      description: definition.description,
      admission: { action: 'mcpv2:skill.call', resource: `skill:${name}` },
      grants,
      approveEveryEffect: false,
      budget: SKILL_BUDGET,
      inputSchema: jsonSchemaOf(skillArguments[name]),
      validateInput: (input) => {
        const parsed = SkillInputSchema.safeParse(input);
        return parsed.success ? [] : [describeZodError(parsed.error)];
      },
      run: async (input, cx) => {
        const parsed = SkillInputSchema.parse(input);
        const { context } = parsed;
        const raw = await argumentsOf(parsed, deps);
        const args = parseArgs(name === 'upload_file' ? StagedUploadSchema : skillArguments[name], raw ?? {});
        return definition.run(args as never, cx, deps, context);
      },
    };
  });
  const custom = deps.custom.map((skill): RunProgram => ({
    id: `skill:${skill.name}`,
    description: skill.description,
    admission: { action: 'mcpv2:skill.call', resource: `skill:${skill.name}` },
    grants: new Map([[`tool:custom.${skill.name}`, { approve: false }]]),
    approveEveryEffect: false,
    budget: SKILL_BUDGET,
    inputSchema: skill.inputSchema,
    validateInput: (input) => {
      const parsed = SkillInputSchema.safeParse(input);
      return parsed.success ? [] : [describeZodError(parsed.error)];
    },
    run: async (input, cx) => {
      const parsed = SkillInputSchema.parse(input);
      const args = ((await argumentsOf(parsed, deps)) ?? {}) as Record<string, unknown>;
      const problems = skill.validateArguments(args);
      if (problems.length > 0) throw skillError(Mcpv2Error.InvalidParams, `invalid arguments: ${problems.join('; ')}`);
      try {
        return await customEffect(skill, args, parsed, cx, deps);
      } catch (error) {
        // Cancelled while its script waited for a place or ran: the effect recorded that it did
        // not happen; the run itself ends cancelled, not failed.
        if (error instanceof EffectFailure && skill.kind === 'script' && cx.cancelRequested()) throw new RunCancelled('cancelled');
        throw error;
      }
    },
  }));
  return [...builtins, ...custom];
}

/** How often a running script's run is checked for a cancel (as a2a-effect.ts does for a follow). */
const CANCEL_POLL_MS = 100;

/** A custom skill's one effect: the template rendered, or the script run in its sandbox. */
function customEffect(skill: CustomSkill, args: Record<string, unknown>, parsed: z.output<typeof SkillInputSchema>, cx: RunContext, deps: SkillDeps): Promise<unknown> {
  return cx.effect({
    effect: 'tool',
    name: `custom.${skill.name}`,
    // Journaled as admitted: large arguments by digest (the key covers them through it).
    request: parsed.external ? { arguments: parsed.arguments ?? {}, external: parsed.external } : args,
    destination: `peer:${deps.peerId}/custom/${skill.name}`,
    // A template is rendered in place from the arguments: no code runs and nothing outside is
    // touched, so it needs no durable start (EffectSpec.local). A script is a process: it does.
    ...(skill.kind === 'template' ? { local: true as const } : {}),
    grant: `tool:custom.${skill.name}`,
    estimate: { ...NO_SPEND, effects: 1 },
    async perform() {
      if (skill.kind === 'template') return { result: await deps.customRunner.run(skill, args), spend: { ...NO_SPEND, effects: 1 }, provenance: `peer:${deps.peerId}/custom` };
      // A script may wait for a place (custom-skills.ts bounds how many run at once) and
      // then run: the run's cancel is noticed meanwhile and passed on, so a cancelled call
      // leaves the queue, or its script is killed.
      const abort = new AbortController();
      const watch = setInterval(() => {
        if (cx.cancelRequested()) abort.abort();
      }, CANCEL_POLL_MS);
      try {
        return { result: await deps.customRunner.run(skill, args, { signal: abort.signal }), spend: { ...NO_SPEND, effects: 1 }, provenance: `peer:${deps.peerId}/custom` };
      } finally {
        clearInterval(watch);
      }
    },
  });
}
