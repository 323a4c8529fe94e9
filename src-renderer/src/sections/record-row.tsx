/** One journal record as a timeline row: seq, time, kind (in words) and what happened (for an effect's outcome, its step, duration and disposition first). */
import { memo, useMemo } from 'react';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { clockTime } from '../lib/display-format';
import { KIND_LABELS, kindTone, summarizeRecord } from '../lib/record-summary';

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
}

export const RecordRow = memo(function RecordRow({ id, index, setSize, start, record, selected, onSelect, timing = null }: RecordRowProps) {
  const summary = useMemo(() => (record ? summarizeRecord(record) : ''), [record]);
  return (
    <div
      id={id}
      role="option"
      aria-selected={selected}
      aria-posinset={index + 1}
      aria-setsize={setSize}
      className={`record-row${selected ? ' record-row-selected' : ''}${record ? '' : ' record-row-loading'}`}
      style={{ transform: `translateY(${start}px)` }}
      onClick={() => onSelect(index)}
    >
      {record ? (
        <>
          <span className="c-seq">{record.seq}</span>
          <span className="c-time">{clockTime(record.time)}</span>
          <span className={`c-kind tone-${kindTone(record)}`}>{KIND_LABELS[record.kind] ?? record.kind}</span>
          <span className="c-what">
            {timing ? <span className="c-timing">{timing} — </span> : null}
            {summary}
          </span>
        </>
      ) : (
        <span className="c-what">Loading record {index + 1}…</span>
      )}
    </div>
  );
});
