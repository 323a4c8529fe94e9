/**
 * Each effect's step, duration and disposition, for the timeline: an EffectDone or EffectFailed
 * record is paired with the EffectStarted of the same step and key among the loaded pages, and
 * the time between them is the effect's duration. An effect whose start is not loaded (a page
 * dropped or not yet read) shows its step and disposition without a duration.
 *
 * And which step each record belongs to, so the timeline groups a step's records (its budget
 * verdict, the wait and the person's decision, the start, the outcome) under the first of them,
 * which heads the group with the step's effect, how long it took and how it ended.
 */
import type { RecordView } from '../../../src-shared/ipc/contract';
import { answeredModelOf, modelCallWords, readModelRequest } from '../../../src-shared/vocabulary/model-refs';
import { reusedFrom, reusedSteps } from './record-summary';

export interface EffectTiming {
  step: number;
  /** Milliseconds from EffectStarted to this record; null when the start is not loaded. */
  ms: number | null;
  /** `done`, or the failure's disposition (DidNotHappen, Landed, InDoubt). */
  disposition: string;
}

interface LoadedEffects {
  /** `step/key` → the EffectStarted's time. */
  startTimes: Map<string, number>;
  /** step → its (latest) EffectStarted. */
  started: Map<number, RecordView>;
  /** step → its latest EffectDone or EffectFailed. */
  outcomes: Map<number, RecordView>;
  /** step → its (latest) Suspended: the wait for a person before the effect. */
  waits: Map<number, RecordView>;
}

const cache = new WeakMap<object, LoadedEffects>();

/** What the loaded pages say about effects, indexed once per pages object (a new page is a new object). */
function effectsOf(pages: Record<number, RecordView[]>): LoadedEffects {
  let effects = cache.get(pages);
  if (!effects) {
    effects = { startTimes: new Map(), started: new Map(), outcomes: new Map(), waits: new Map() };
    for (const page of Object.values(pages)) {
      for (const r of page) {
        if (r.kind === 'EffectStarted') {
          effects.startTimes.set(`${String(r.body.step)}/${String(r.body.key)}`, Date.parse(r.time));
          effects.started.set(Number(r.body.step), r);
        } else if (r.kind === 'EffectDone' || r.kind === 'EffectFailed') effects.outcomes.set(Number(r.body.step), r);
        else if (r.kind === 'Suspended') effects.waits.set(Number(r.body.step), r);
      }
    }
    cache.set(pages, effects);
  }
  return effects;
}

export function effectTiming(pages: Record<number, RecordView[]>, record: RecordView): EffectTiming | null {
  if (record.kind !== 'EffectDone' && record.kind !== 'EffectFailed') return null;
  const step = Number(record.body.step);
  const started = effectsOf(pages).startTimes.get(`${String(record.body.step)}/${String(record.body.key)}`);
  const ms = started === undefined ? null : Math.max(0, Date.parse(record.time) - started);
  const disposition = record.kind === 'EffectDone' ? 'done' : String(record.body.disposition);
  return { step, ms, disposition };
}

/** `12 ms · done`, `1.2 s · InDoubt` (the step is the timeline's step column). */
export function timingLine(timing: EffectTiming): string {
  return outcomeWords(timing).join(' · ');
}

function outcomeWords(timing: EffectTiming): string[] {
  const took = timing.ms === null ? null : timing.ms < 1000 ? `${timing.ms} ms` : `${(timing.ms / 1000).toFixed(1)} s`;
  return [took, timing.disposition].filter((w): w is string => w !== null);
}

/** The step a record belongs to: its body's `step`, or a decision's (from its wait id `<run>/<step>/<reason>`); null for run-level records. */
export function stepOf(record: RecordView): number | null {
  // A fork's RunForked names the step it was forked at, but belongs to the run, not to that step.
  if (record.kind === 'RunForked') return null;
  // Reused steps share a record: one step's heads that step; several belong to the run.
  if (record.kind === 'EffectReused') {
    const steps = reusedSteps(record.body);
    return steps.length === 1 && typeof steps[0]!.step === 'number' ? steps[0]!.step : null;
  }
  const step = record.body.step;
  if (typeof step === 'number' && Number.isInteger(step)) return step;
  if (record.kind === 'Decision' && typeof record.body.waitId === 'string') {
    const parts = record.body.waitId.split('/');
    const n = parts.length === 3 ? Number(parts[1]) : NaN;
    return Number.isInteger(n) ? n : null;
  }
  return null;
}

/** Whether a record heads its step's group: it has a step and the record before it (when loaded) is not of that step. */
export function headsStep(previous: RecordView | undefined, record: RecordView): boolean {
  const step = stepOf(record);
  return step !== null && (previous === undefined || stepOf(previous) !== step);
}

/**
 * The head of a step's group, in words: `peer beta/ask · 1.2 s · done`, or `… · not ended`
 * while its outcome is not written (or not loaded); the effect is left out when the head is the
 * EffectStarted itself, whose own summary names it. A step that waited for a person heads with
 * the wait, which is never done: `payment request` only. Null for a record with no step.
 */
/**
 * `peer beta/ask`; a model call as `model anthropic:claude-sonnet-4-5`, with the model that
 * answered when it was another (`… → claude-sonnet-4-5-20250929`, src-shared model-refs.ts).
 */
function effectWords(started: RecordView, outcome: RecordView | undefined): string {
  return effectNamed(started.body, outcome?.kind === 'EffectDone' ? answeredModelOf(outcome.body.result) : null);
}

function effectNamed(effect: Record<string, unknown>, answered: string | null): string {
  const asked = readModelRequest(effect.effect, effect.request);
  if (asked) return `model ${modelCallWords(asked.provider, asked.model, answered)}`;
  return `${String(effect.effect)} ${String(effect.name)}`;
}

/** What a step that waits for a person would do, from its wait's subject (`payment request`); else the wait's reason (`input`). */
function waitWords(wait: RecordView | undefined): string {
  const subject = wait?.body.subject as Record<string, unknown> | undefined;
  const effect = (subject?.effect !== undefined ? subject : subject?.next) as Record<string, unknown> | undefined;
  return effect?.effect !== undefined ? effectNamed(effect, null) : String(wait?.body.reason ?? 'waiting for a person');
}

export function stepHeading(pages: Record<number, RecordView[]>, record: RecordView): string | null {
  const step = stepOf(record);
  if (step === null) return null;
  // A fork's step before its fork point was answered from the parent's record: nothing ran.
  if (record.kind === 'EffectReused') {
    const only = reusedSteps(record.body)[0]!;
    return `${effectNamed(only, answeredModelOf(only.result))} · ${reusedFrom(only)}`;
  }
  const effects = effectsOf(pages);
  const started = effects.started.get(step);
  const outcome = effects.outcomes.get(step);
  // A step heads with its wait for a person (or the ceiling that made it wait): that row reads as
  // the wait, what the step would do and nothing of how it ended, which its outcome's row says.
  if (record.kind === 'Suspended' || (record.kind === 'BudgetVerdict' && record.body.verdict === 'ceilingReached')) {
    return started ? effectWords(started, undefined) : waitWords(effects.waits.get(step));
  }
  const timing = outcome ? effectTiming(pages, outcome) : null;
  const what = started && started !== record ? effectWords(started, outcome) : null;
  return [what, ...(timing ? outcomeWords(timing) : ['not ended'])]
    .filter((w): w is string => w !== null)
    .join(' · ');
}
