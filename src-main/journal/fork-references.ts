/**
 * A fork's reused steps checked against its parent (docs/GOVERNED-RUNTIME.md, "Fork, replay,
 * diff"): each EffectReused names the parent's record that held the answer it took (run, seq,
 * hash), and offline verify holds it to that: the record must be in the journal with exactly
 * that hash (so the chain and the signed roots vouch for it), be an answer (EffectDone, or a
 * grandparent's EffectReused) of that run, at the same step and key, with the same result.
 * A fork whose reused answer was edited, or that names a record the parent never wrote, fails.
 *
 * Run the check after the records verified: it trusts every record's hash, which the verifier
 * has just checked. A run or range bundle may not hold the parent's records: references it
 * cannot resolve are not checked there (export the full journal to check them).
 */
import { canonicalize } from '../../src-shared/journal/canonical-json';

export const EFFECT_REUSED = 'EffectReused';
const ANSWERS: ReadonlySet<string> = new Set(['EffectDone', EFFECT_REUSED]);

/** A record as the check reads it: its envelope and body. */
export interface ForkCheckRecord {
  seq: number;
  hash: string;
  kind: string;
  runId: string | null;
  body: unknown;
}

interface ReusedStep {
  step?: unknown;
  key?: unknown;
  result?: unknown;
  from?: { runId?: unknown; seq?: unknown; hash?: unknown };
}

/** The steps an EffectReused record holds (its body's `steps`), or none when it holds none. */
function stepsOf(body: unknown): ReusedStep[] {
  const steps = (body as { steps?: unknown } | null)?.steps;
  return Array.isArray(steps) ? (steps as ReusedStep[]) : [];
}

/** The answer the target record holds for `step`: an EffectDone's, or one of an EffectReused's steps. */
function answerIn(target: ForkCheckRecord, step: unknown): ReusedStep | null {
  if (target.kind === EFFECT_REUSED) return stepsOf(target.body).find((s) => s.step === step) ?? null;
  return target.body as ReusedStep;
}

/**
 * The first reference that does not hold, as `{seq, reason}` naming the EffectReused record, or
 * null. `lookup` answers the records at the given seqs that the source holds; `mustResolve`:
 * whether a seq it does not hold is a failure (a full journal) or is left unchecked.
 */
export async function forkReferenceProblem(
  reused: readonly ForkCheckRecord[],
  lookup: (seqs: readonly number[]) => Promise<ReadonlyMap<number, ForkCheckRecord>>,
  mustResolve: boolean,
): Promise<{ seq: number; reason: string } | null> {
  if (reused.length === 0) return null;
  const seqs = [...new Set(reused.flatMap((r) => stepsOf(r.body).map((s) => Number(s.from?.seq))).filter((s) => Number.isSafeInteger(s)))];
  const found = await lookup(seqs);
  for (const record of reused) {
    if (stepsOf(record.body).length === 0) return { seq: record.seq, reason: `${EFFECT_REUSED} at seq ${record.seq} names no step` };
    for (const body of stepsOf(record.body)) {
      const from = body.from ?? {};
      const what = `${EFFECT_REUSED} at seq ${record.seq} takes step ${String(body.step)} from run ${String(from.runId)}'s record at seq ${String(from.seq)}`;
      const target = typeof from.seq === 'number' ? found.get(from.seq) : undefined;
      if (!target) {
        if (mustResolve) return { seq: record.seq, reason: `${what}, which the journal does not hold` };
        continue;
      }
      if (typeof from.seq === 'number' && from.seq >= record.seq) return { seq: record.seq, reason: `${what}, which does not come before it` };
      if (target.hash !== from.hash) return { seq: record.seq, reason: `${what} with hash ${String(from.hash).slice(0, 16)}…, but that record's hash is ${target.hash.slice(0, 16)}…` };
      if (target.runId !== from.runId || !ANSWERS.has(target.kind)) return { seq: record.seq, reason: `${what}, but that record is a ${target.kind} of ${target.runId ?? 'no run'}, not an answer of that run` };
      const parent = answerIn(target, body.step);
      if (!parent || parent.step !== body.step || parent.key !== body.key) return { seq: record.seq, reason: `${what}, but that record answers no such step with that key` };
      // A sealed answer (docs/ERASURE.md) holds its result as ciphertext only, which no offline
      // check can compare: the reference is held by the hash of the record it names, checked above.
      const sealed = 'sealed' in (target.body as object) || 'sealed' in (record.body as object);
      if (!sealed && canonicalize(parent.result ?? null) !== canonicalize(body.result ?? null)) return { seq: record.seq, reason: `${what}, but its result is not that record's` };
    }
  }
  return null;
}
