/**
 * Why a run waits for a person, and exactly what it asks: the wait's subject. The runtime
 * writes the subject into the Suspended record and hashes it (canonical JSON); a decision names
 * that hash, so approving means approving exactly this subject and nothing else.
 *
 * Each reason has one subject shape, discriminated by `kind` (always equal to the reason).
 * The shapes are strict: they are what the runtime writes, field for field.
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';
import { EffectKindSchema } from './effects';
import { BudgetSchema, CeilingSchema, SpendSchema } from './spend';

/**
 * `approval`: a grant marked approve (or the agent's `approveEveryEffect`) before an effect;
 * `payment`: the same for a payment effect; `oversight`: an oversight rule's review (no path
 * of the runtime suspends with it yet: approveEveryEffect asks as `approval`); `budget`: the
 * next effect would pass a ceiling; `input`: the run asks a question; `recovery`: an effect is
 * in doubt; `halt`: a halt withholds the run (lifted, not decided); `provenance`: a protected
 * field of the next effect would take a value from an origin its grant does not accept.
 */
export const WaitReasonSchema = z.enum(['approval', 'budget', 'oversight', 'input', 'payment', 'recovery', 'halt', 'permission', 'provenance']);
export type WaitReason = z.infer<typeof WaitReasonSchema>;

/**
 * Why a run of an agent may wait for a person, read from its manifest before any run: a wait
 * reason its declaration can cause (`approval`: a grant marked approve, or approveEveryEffect;
 * `payment`: a payment step; `budget`: a declared ceiling, which a run can reach; `input`: an
 * input step), or `delegation`: a grant to another agent, a peer or an A2A agent, whose own
 * runs may wait. Halts and in-doubt effects can hold any run and are the plane's, not the
 * agent's, so they are not listed. An empty list: no run of it waits by its own declaration.
 */
export const AgentWaitSchema = z.union([WaitReasonSchema.extract(['approval', 'payment', 'budget', 'input']), z.literal('delegation')]);
export type AgentWait = z.infer<typeof AgentWaitSchema>;

/** A `kind` that must be a wait reason (checked by the compiler, so a subject cannot invent one). */
export const reasonLiteral = <R extends WaitReason>(reason: R) => z.literal(reason);

/** Whose run waits: the agent, the principal it runs for, and (for effects) the chain acting. */
const Party = { agent: z.string(), owner: z.string() };

/** An effect held before it runs: what, with which arguments, where to, what it may cost, for whom. */
const EffectHeld = {
  effect: EffectKindSchema,
  name: z.string(),
  request: z.unknown(),
  destination: z.string().nullable(),
  estimate: SpendSchema,
  ...Party,
  chain: z.array(z.string()),
};

export const ApprovalSubjectSchema = deferred(() => z.strictObject({ kind: reasonLiteral('approval'), ...EffectHeld }));
export const PaymentSubjectSchema = deferred(() => z.strictObject({ kind: reasonLiteral('payment'), ...EffectHeld }));
export const OversightSubjectSchema = deferred(() => z.strictObject({ kind: reasonLiteral('oversight'), ...EffectHeld }));
export const BudgetSubjectSchema = deferred(() => z.strictObject({
  kind: reasonLiteral('budget'),
  /** The ceiling the next effect would pass. */
  ceiling: CeilingSchema,
  spent: SpendSchema,
  budget: BudgetSchema,
  next: z.strictObject({ effect: EffectKindSchema, name: z.string(), estimate: SpendSchema }),
  ...Party,
}));
export const InputSubjectSchema = deferred(() => z.strictObject({ kind: reasonLiteral('input'), prompt: z.string(), ...Party }));
/** The in-doubt effect; a person says retry, landed (with its result) or fail. */
export const RecoverySubjectSchema = deferred(() => z.strictObject({ kind: reasonLiteral('recovery'), effect: EffectKindSchema, name: z.string(), request: z.unknown(), ...Party }));
/**
 * A protected field of the next effect would take a value from an origin its grant does not
 * accept (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks"): the effect as held, its
 * grant, and each such field with its value, every provenance it was made from and the scope
 * paths it was read through (`steps.quote.amount`).
 */
export const ProvenanceSubjectSchema = deferred(() => z.strictObject({
  kind: reasonLiteral('provenance'),
  ...EffectHeld,
  grant: z.string(),
  fields: z.array(z.strictObject({ field: z.string(), value: z.unknown(), provenance: z.array(z.string()), via: z.array(z.string()) })),
}));
/** The halted scope (`subject:<principal>` or `agent:<name>`) that withholds the run. */
export const HaltSubjectSchema = deferred(() => z.strictObject({ kind: reasonLiteral('halt'), scope: z.string(), ...Party }));

/**
 * An editor session's permission request (ACP `session/request_permission`), observed through
 * `agentplane acp tap --policy inbox`: what the agent asks to do (its tool call: title, kind,
 * locations, and the diff when it proposes an edit) and the options it offers. The agent owns
 * that vocabulary, so option and tool kinds are strings as the agent wrote them. Not written to
 * the journal as a Suspended record: the session's own Observation records are the evidence,
 * and the plane derives this wait from them (plane/acp-handlers.ts).
 */
export const PermissionSubjectSchema = deferred(() => z.strictObject({
  kind: reasonLiteral('permission'),
  ...Party,
  sessionId: z.string(),
  /** `<direction>:<json-rpc id>` of the request in its session. */
  requestKey: z.string(),
  toolCall: z.strictObject({
    toolCallId: z.string(),
    title: z.string().nullable(),
    toolKind: z.string().nullable(),
    locations: z.array(z.strictObject({ path: z.string(), line: z.number().int().optional() })),
  }),
  options: z.array(z.strictObject({ optionId: z.string(), name: z.string(), kind: z.string() })),
  /** The edit proposed, when the tool call carries a diff (texts cut at a length a card can show). */
  diff: z.strictObject({ path: z.string(), oldText: z.string().nullable(), newText: z.string(), truncated: z.boolean() }).nullable(),
}));

/** What the runtime writes: one shape per wait reason. */
export const WaitSubjectSchema = deferred(() => z.discriminatedUnion('kind', [
  ApprovalSubjectSchema,
  PaymentSubjectSchema,
  OversightSubjectSchema,
  BudgetSubjectSchema,
  InputSubjectSchema,
  RecoverySubjectSchema,
  HaltSubjectSchema,
  PermissionSubjectSchema,
  ProvenanceSubjectSchema,
]));
export type WaitSubject = z.infer<typeof WaitSubjectSchema>;
export type WaitSubjectOf<R extends WaitReason> = Extract<WaitSubject, { kind: R }>;

/**
 * A subject read back that this build does not recognise, carried as written in `raw`. Records
 * already in a journal are never rewritten (they are hashed), so a subject written by another
 * version of AgentPlane, or one whose kind disagrees with its record's reason, must still be
 * listed and shown, raw, rather than fail the whole list.
 */
export const UnrecognizedSubjectSchema = deferred(() => z.strictObject({ kind: z.literal('unrecognized'), raw: z.unknown() }));

/** A subject as read from the journal: one of the shapes above, or an unrecognised one kept raw. */
export const RecordedWaitSubjectSchema = deferred(() => z.discriminatedUnion('kind', [...WaitSubjectSchema.options, UnrecognizedSubjectSchema]));
export type RecordedWaitSubject = z.infer<typeof RecordedWaitSubjectSchema>;

/** Reads a Suspended record's subject: typed when it is the shape its reason writes, else kept raw. */
export function readWaitSubject(reason: string, raw: unknown): RecordedWaitSubject {
  const parsed = WaitSubjectSchema.safeParse(raw);
  return parsed.success && parsed.data.kind === reason ? parsed.data : { kind: 'unrecognized', raw };
}
