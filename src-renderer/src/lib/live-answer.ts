/**
 * A model's answer while it streams, kept beside the open run's timeline (the `runs.streaming`
 * event). It is a labelled projection, never a record: the journal's EffectDone or EffectFailed
 * for the step is the truth, so the live text is dropped as soon as that record is in the
 * timeline, and an update for a step the loaded records already show ended is ignored (a late
 * or held-back event must not bring back text the sealed effect replaced).
 *
 * Each update carries the whole answer so far (its tail), so the latest one replaces what was
 * kept: nothing is appended here, and a lost update loses nothing.
 */
import type { EventPayload, RecordView } from '../../../src-shared/ipc/contract';
import { modelRef } from '../../../src-shared/vocabulary/model-refs';

export type ModelTextUpdate = EventPayload<'runs.streaming'>;

export interface LiveAnswer {
  step: number;
  text: string;
  /** Characters of the answer before `text` (the plane sends only the tail of a long answer). */
  omittedChars: number;
  /** The provider has finished; the sealed effect is about to arrive. */
  done: boolean;
}

/** step → its live answer, for the open run only. */
export type LiveAnswers = Readonly<Record<number, LiveAnswer>>;

export const NO_LIVE_ANSWERS: LiveAnswers = {};

interface StepSeqs {
  /** The seq of the latest EffectStarted of the step among the loaded records. */
  started: number;
  /** The seq of the latest EffectDone or EffectFailed of the step among the loaded records. */
  ended: number;
}

interface LoadedSteps {
  steps: Map<number, StepSeqs>;
  sealed: boolean;
}

const cache = new WeakMap<object, LoadedSteps>();

/** What the loaded pages say of each step's effect, indexed once per pages object (a new page is a new object). */
function stepsOf(pages: Record<number, RecordView[]>): LoadedSteps {
  let loaded = cache.get(pages);
  if (!loaded) {
    loaded = { steps: new Map(), sealed: false };
    for (const page of Object.values(pages)) {
      for (const r of page) {
        if (r.kind === 'RunSealed') loaded.sealed = true;
        if (r.kind !== 'EffectStarted' && r.kind !== 'EffectDone' && r.kind !== 'EffectFailed') continue;
        const step = Number(r.body.step);
        const seqs = loaded.steps.get(step) ?? { started: 0, ended: 0 };
        if (r.kind === 'EffectStarted') seqs.started = Math.max(seqs.started, r.seq);
        else seqs.ended = Math.max(seqs.ended, r.seq);
        loaded.steps.set(step, seqs);
      }
    }
    cache.set(pages, loaded);
  }
  return loaded;
}

/**
 * Whether the loaded records show the step's effect ended: the run sealed, or an outcome after
 * the step's latest start (a retried effect starts again after its failed attempt, and streams
 * anew).
 */
export function stepEnded(pages: Record<number, RecordView[]>, step: number): boolean {
  const loaded = stepsOf(pages);
  if (loaded.sealed) return true;
  const seqs = loaded.steps.get(step);
  return seqs !== undefined && seqs.ended > seqs.started;
}

/** The live answers with `update` applied, unless the loaded records show its step already ended. */
export function applyModelText(live: LiveAnswers, update: ModelTextUpdate, pages: Record<number, RecordView[]>): LiveAnswers {
  if (stepEnded(pages, update.step)) return dropSteps(live, [update.step]);
  return { ...live, [update.step]: { step: update.step, text: update.text, omittedChars: update.omittedChars, done: update.done } };
}

/** The live answers minus those that newly arrived records end (an outcome of the step, or the run sealed). */
export function pruneByRecords(live: LiveAnswers, records: readonly RecordView[]): LiveAnswers {
  if (Object.keys(live).length === 0) return live;
  if (records.some((r) => r.kind === 'RunSealed')) return NO_LIVE_ANSWERS;
  const ended = records.filter((r) => r.kind === 'EffectDone' || r.kind === 'EffectFailed').map((r) => Number(r.body.step));
  return dropSteps(live, ended);
}

function dropSteps(live: LiveAnswers, steps: readonly number[]): LiveAnswers {
  if (!steps.some((step) => live[step] !== undefined)) return live;
  const next = { ...live };
  for (const step of steps) delete next[step];
  return next;
}

/** The live answers in step order, for display. */
export function liveAnswersInOrder(live: LiveAnswers): LiveAnswer[] {
  return Object.values(live).sort((a, b) => a.step - b.step);
}

/** The effect a step's EffectStarted names, for the caption (`model anthropic:claude-sonnet-4-5`), or null when not loaded. */
export function liveEffectName(pages: Record<number, RecordView[]>, step: number): string | null {
  const started = stepsOf(pages).steps.get(step)?.started;
  if (!started) return null;
  for (const page of Object.values(pages)) {
    const record = page.find((r) => r.seq === started);
    if (record) {
      const request = record.body.request as { model?: unknown } | undefined;
      const model = typeof request?.model === 'string' ? request.model : null;
      return `${String(record.body.effect)} ${modelRef(String(record.body.name), model)}`;
    }
  }
  return null;
}
