/**
 * Two runs step by step (`runs.diff`; docs/GOVERNED-RUNTIME.md, "Fork, replay, diff"): for each
 * step from 0, what each run did there (effect, arguments, answer or failure, spend, whether it
 * was taken from a parent), whether the two are the same, and the first step where they part.
 * Values are compared by the digest of their canonical JSON, and carried whole only when small:
 * a large one is opened on demand from its record (its seq).
 *
 * Steps are numbered as the timeline numbers them: every effect's step, and the steps where a
 * run asked a question (an input wait), which take a step of their own.
 */
import { canonicalize } from '../../src-shared/journal/canonical-json';
import type { DiffStep, Divergence, RunDiff, SpendDifference, StepSide, ValueRef } from '../../src-shared/protocol/time-travel';
import { waitIdParts } from '../../src-shared/vocabulary/ids';
import { addSpend, NO_SPEND, type Spend } from '../../src-shared/vocabulary/spend';
import { sha256Hex } from '../journal/sqlite-store';
import type { RunHistory } from './run-history';

/** A value is carried whole in a ValueRef up to this many bytes of canonical JSON. */
export const INLINE_VALUE_BYTES = 2048;

export function valueRef(value: unknown): ValueRef {
  const text = canonicalize(value ?? null);
  const size = Buffer.byteLength(text);
  return { digest: sha256Hex(text), size, ...(size <= INLINE_VALUE_BYTES ? { value: value ?? null } : {}) };
}

/** The steps a run has taken: one past the highest step any of its effects, waits or answers names. */
export function stepsOf(history: RunHistory): number {
  let last = -1;
  for (const step of history.steps.keys()) last = Math.max(last, step);
  for (const wait of history.waits.values()) last = Math.max(last, wait.step);
  for (const waitId of history.decisions.keys()) last = Math.max(last, waitIdParts(waitId)?.step ?? -1);
  return last + 1;
}

/** What the run did at `step`, as its records hold it; null when it took no such step. */
export function stepSideOf(history: RunHistory, step: number): StepSide | null {
  const attempts = history.steps.get(step);
  const last = attempts?.at(-1);
  if (attempts && last) {
    let spend: Spend = NO_SPEND;
    for (const attempt of attempts) spend = addSpend(spend, attempt.done?.spend ?? attempt.failed?.spend ?? NO_SPEND);
    return {
      effect: last.started.effect,
      name: last.started.name,
      key: last.started.key,
      request: valueRef(last.started.request),
      result: last.done ? valueRef(last.done.result) : null,
      failed: last.failed ? { code: last.failed.error.code, disposition: last.failed.disposition, message: last.failed.error.message } : null,
      spend,
      fromParent: last.reused !== undefined,
      seq: last.done?.seq ?? last.failed?.seq ?? last.started.seq,
    };
  }
  // A question the run asked (an input wait) and its answer, if one was given.
  const asked = [...history.waits.values()].find((w) => w.step === step && w.reason === 'input');
  const answered = [...history.decisions.entries()].find(([waitId]) => waitIdParts(waitId)?.step === step && waitIdParts(waitId)?.reason === 'input')?.[1].at(-1);
  if (!asked && !answered) return null;
  const prompt = asked && asked.subject.kind === 'input' ? asked.subject.prompt : null;
  const answer = answered?.decision === 'approve' && answered.value?.kind === 'input' ? answered.value.input : undefined;
  return {
    effect: 'input',
    name: 'question',
    key: answered?.subjectHash ?? asked?.subjectHash ?? '',
    request: valueRef(prompt),
    result: answer !== undefined ? valueRef(answer) : null,
    failed: answered?.decision === 'deny' ? { code: 'Denied', disposition: 'Landed', message: answered.reason ?? 'input refused' } : null,
    spend: NO_SPEND,
    fromParent: answered?.reason?.startsWith('taken from run ') ?? false,
    seq: answered?.seq ?? asked?.seq ?? 0,
  };
}

const sameValue = (a: ValueRef | null, b: ValueRef | null) => (a === null ? b === null : b !== null && a.digest === b.digest);

/** Why two sides of a step part, or null when they are the same. */
function parting(step: number, a: StepSide | null, b: StepSide | null): Divergence | null {
  if (!a || !b) {
    if (!a && !b) return null;
    const only = (a ?? b)!;
    return { step, reason: 'missing', message: `only ${a ? 'a' : 'b'} took step ${step} (${only.effect} ${only.name})` };
  }
  if (a.effect !== b.effect || a.name !== b.name) return { step, reason: 'effect', message: `step ${step}: a did ${a.effect} ${a.name}, b did ${b.effect} ${b.name}` };
  if (!sameValue(a.request, b.request)) return { step, reason: 'arguments', message: `step ${step} (${a.effect} ${a.name}) was asked with different arguments` };
  // The same request with a different key: its destination (a peer's address) or identity differs.
  if (a.key !== b.key) return { step, reason: 'arguments', message: `step ${step} (${a.effect} ${a.name}) was asked the same of a different destination` };
  if (!sameValue(a.result, b.result) || (a.failed?.code ?? null) !== (b.failed?.code ?? null)) {
    return { step, reason: 'outcome', message: `step ${step} (${a.effect} ${a.name}) was asked the same and ended differently` };
  }
  return null;
}

function side(history: RunHistory): RunDiff['a'] {
  return {
    runId: history.runId,
    agent: history.agent,
    status: history.status,
    outcome: history.outcome ?? null,
    input: valueRef(history.input),
    result: history.result !== undefined ? valueRef(history.result) : null,
    error: history.error ?? null,
    spend: history.spend,
    steps: stepsOf(history),
    forkOf: history.fork ? { runId: history.fork.parent, step: history.fork.step } : null,
  };
}

function difference(a: Spend, b: Spend): SpendDifference {
  return {
    effects: b.effects - a.effects,
    inputTokens: b.inputTokens - a.inputTokens,
    outputTokens: b.outputTokens - a.outputTokens,
    reasoningTokens: b.reasoningTokens - a.reasoningTokens,
    costMicros: b.costMicros - a.costMicros,
  };
}

export function diffRuns(a: RunHistory, b: RunHistory): RunDiff {
  const count = Math.max(stepsOf(a), stepsOf(b));
  const steps: DiffStep[] = [];
  let divergesAt: Divergence | null = null;
  for (let step = 0; step < count; step++) {
    const left = stepSideOf(a, step);
    const right = stepSideOf(b, step);
    const parted = parting(step, left, right);
    divergesAt ??= parted;
    steps.push({ step, a: left, b: right, same: parted === null, fromParent: Boolean(left?.fromParent || right?.fromParent) });
  }
  return { a: side(a), b: side(b), divergesAt, steps, spendDifference: difference(a.spend, b.spend), sameInput: valueRef(a.input).digest === valueRef(b.input).digest };
}
