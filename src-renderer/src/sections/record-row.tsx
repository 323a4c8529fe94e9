/**
 * One journal record as a timeline row: seq, time, kind (in words), its step and what happened.
 * Records of one step form a group: the first heads it with the step's effect, duration and
 * how it ended; the rest are marked as inside it (a rule in the step column, and the step in
 * their accessible text too, so the grouping is not carried by the line alone).
 */
import { memo, useMemo } from 'react';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { clockTime } from '../lib/display-format';
import { KIND_LABELS, kindTone, summarizeRecord } from '../lib/record-summary';
import { provenanceHint } from '../lib/provenance-hint';

export const ROW_HEIGHT = 30;

export interface RecordRowProps {
  id: string;
  index: number;
  setSize: number;
  start: number;
  record: RecordView | undefined;
  selected: boolean;
  onSelect(index: number): void;
  /** An effect's outcome row: its step, duration and disposition (lib/effect-timing.ts). */
  timing?: string | null;
  /** The record's step (null: a run-level record). */
  step?: number | null;
  /** Set on the record that heads its step's group: the step in words (lib/effect-timing.ts stepHeading). */
  heading?: string | null;
}

export const RecordRow = memo(function RecordRow({ id, index, setSize, start, record, selected, onSelect, timing = null, step = null, heading = null }: RecordRowProps) {
  const summary = useMemo(() => (record ? summarizeRecord(record) : ''), [record]);
  // Where the record's value came from, on hover (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks").
  const origin = useMemo(() => (record ? provenanceHint(record) : null), [record]);
  return (
    <div
      id={id}
      role="option"
      aria-selected={selected}
      aria-posinset={index + 1}
      aria-setsize={setSize}
      className={`record-row${selected ? ' record-row-selected' : ''}${record ? '' : ' record-row-loading'}${heading ? ' record-row-step-head' : ''}`}
      style={{ transform: `translateY(${start}px)` }}
      onClick={() => onSelect(index)}
    >
      {record ? (
        <>
          <span className="c-seq">{record.seq}</span>
          <span className="c-time">{clockTime(record.time)}</span>
          <span className={`c-kind tone-${kindTone(record)}`}>{KIND_LABELS[record.kind] ?? record.kind}</span>
          <span className={`c-step${step === null ? '' : heading ? ' c-step-head' : ' c-step-in'}`}>
            {step === null ? null : heading ? (
              <>
                <span className="visually-hidden">step </span>
                {step}
              </>
            ) : (
              <span className="visually-hidden">step {step}</span>
            )}
          </span>
          <span className="c-what" title={origin ?? undefined}>
            {heading ? <span className="c-heading">{heading} — </span> : timing ? <span className="c-timing">{timing} — </span> : null}
            {summary}
          </span>
        </>
      ) : (
        <span className="c-what">Loading record {index + 1}…</span>
      )}
    </div>
  );
});
