/**
 * Each effect's step, duration and disposition, for the timeline: an EffectDone or EffectFailed
 * record is paired with the EffectStarted of the same step and key among the loaded pages, and
 * the time between them is the effect's duration. An effect whose start is not loaded (a page
 * dropped or not yet read) shows its step and disposition without a duration.
 */
import type { RecordView } from '../../../src-shared/ipc/contract';

export interface EffectTiming {
  step: number;
  /** Milliseconds from EffectStarted to this record; null when the start is not loaded. */
  ms: number | null;
  /** `done`, or the failure's disposition (DidNotHappen, Landed, InDoubt). */
  disposition: string;
}

const startsCache = new WeakMap<object, Map<string, number>>();

/** `step/key` → the EffectStarted's time, for the loaded pages (cached per pages object). */
function startsOf(pages: Record<number, RecordView[]>): Map<string, number> {
  let starts = startsCache.get(pages);
  if (!starts) {
    starts = new Map();
    for (const page of Object.values(pages)) {
      for (const r of page) if (r.kind === 'EffectStarted') starts.set(`${String(r.body.step)}/${String(r.body.key)}`, Date.parse(r.time));
    }
    startsCache.set(pages, starts);
  }
  return starts;
}

export function effectTiming(pages: Record<number, RecordView[]>, record: RecordView): EffectTiming | null {
  if (record.kind !== 'EffectDone' && record.kind !== 'EffectFailed') return null;
  const step = Number(record.body.step);
  const started = startsOf(pages).get(`${String(record.body.step)}/${String(record.body.key)}`);
  const ms = started === undefined ? null : Math.max(0, Date.parse(record.time) - started);
  const disposition = record.kind === 'EffectDone' ? 'done' : String(record.body.disposition);
  return { step, ms, disposition };
}

/** `step 3 · 12 ms · done`, `step 4 · 1.2 s · InDoubt`. */
export function timingLine(timing: EffectTiming): string {
  const took = timing.ms === null ? null : timing.ms < 1000 ? `${timing.ms} ms` : `${(timing.ms / 1000).toFixed(1)} s`;
  return [`step ${timing.step}`, took, timing.disposition].filter(Boolean).join(' · ');
}
