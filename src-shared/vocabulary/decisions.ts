/**
 * What a person answers a waiting run: a decision (approve, deny, snooze) and, where the wait
 * needs one, the value supplied with it. Decisions are journaled with who, when and the hash of
 * the subject decided on.
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';
import { BudgetSchema } from './spend';
import { reasonLiteral, type WaitReason } from './waits';

/** `snooze` is "not now": the run keeps waiting until `until`, then asks again. It never denies. */
export const DecisionSchema = z.enum(['approve', 'deny', 'snooze']);
export type Decision = z.infer<typeof DecisionSchema>;

/**
 * How an editor session's permission request (ACP `session/request_permission`) was answered:
 * with one of the agent's options (`selected`), or withdrawn (`cancelled`), as ACP spells it.
 */
export const PermissionOutcomeSchema = z.enum(['selected', 'cancelled']);
export type PermissionOutcome = z.infer<typeof PermissionOutcomeSchema>;

/**
 * How a person resolves an in-doubt effect: `retry` (it did not happen), `landed` (it happened,
 * with the result they give), `fail` (end the run). Retry and landed are approvals carrying a
 * recovery value; fail is a denial.
 */
export const RecoveryResolutionSchema = z.enum(['retry', 'landed', 'fail']);
export type RecoveryResolution = z.infer<typeof RecoveryResolutionSchema>;

/**
 * The value an approval carries, keyed by the reason of the wait it answers. Approval, payment
 * and oversight waits take none; a halt is lifted, never decided.
 */
export const DecisionValueSchema = deferred(() => z.discriminatedUnion('kind', [
  /** The raised ceilings: the whole budget from now on. */
  z.strictObject({ kind: reasonLiteral('budget'), budget: BudgetSchema }),
  /** The answer to the run's question, any JSON. */
  z.strictObject({ kind: reasonLiteral('input'), input: z.unknown() }),
  /** An in-doubt effect resolved as not happened (run it again) or as landed, with what it returned. */
  z.strictObject({ kind: reasonLiteral('recovery'), resolution: RecoveryResolutionSchema.exclude(['fail']), result: z.unknown().optional() }),
  /** Which of the agent's options an editor session's permission request is answered with (a denial cancels it instead). */
  z.strictObject({ kind: reasonLiteral('permission'), optionId: z.string().min(1) }),
]));
export type DecisionValue = z.infer<typeof DecisionValueSchema>;
export type DecisionValueOf<R extends DecisionValue['kind']> = Extract<DecisionValue, { kind: R }>;

/** The reasons whose approval needs a value; the others are approved as they stand. */
export function approvalNeedsValue(reason: WaitReason): reason is DecisionValue['kind'] {
  return DecisionValueSchema.options.some((option) => option.shape.kind.value === reason);
}

/**
 * Reads the value of a Decision written before values were tagged (Decision v1): `{budget}` for
 * a budget wait, the bare input for an input wait, `{resolution, result}` for a recovery. Those
 * records stay in users' journals as written (they are hashed), so their value is read by the
 * reason of the wait it answered; a value that fits no shape is read as none, which leaves a
 * budget unraised and an input empty, and (as the v1 runtime did) retries a recovery.
 */
export function decisionValueFromV1(reason: WaitReason, decision: Decision, value: unknown): DecisionValue | undefined {
  if (decision !== 'approve' || value === undefined) return undefined;
  const object = typeof value === 'object' && value !== null ? value : {};
  const candidate = reason === 'input' ? { kind: reason, input: value } : reason === 'budget' || reason === 'recovery' ? { kind: reason, ...object } : undefined;
  const parsed = DecisionValueSchema.safeParse(candidate);
  return parsed.success ? parsed.data : undefined;
}
