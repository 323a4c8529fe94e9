/**
 * The virtualized record list. Only the rows on screen (plus a few either side) exist in the
 * DOM, whatever the run's size; each row subscribes to its own record, so a page arriving
 * re-renders the rows it fills and nothing else. The visible range is reported to the store,
 * which reads the pages it covers (timeline-slice.ts).
 *
 * It is one listbox: Tab reaches it once; arrows, Page Up/Down, Home and End move the selected
 * record (shown in the inspector), and aria-activedescendant tells assistive technology which.
 *
 * Beside it, each step's head row on screen has a "Fork from step N" button (runs.fork). The
 * buttons live in a gutter outside the listbox, kept level with their rows as it scrolls: an
 * option may hold no control of its own (its children are presentational), so a button inside
 * a row would be unreachable to assistive technology.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useRef, type KeyboardEvent } from 'react';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { recordAt } from '../store/timeline-slice';
import { effectTiming, headsStep, stepHeading, stepOf, timingLine } from '../lib/effect-timing';
import { useApp } from '../store/store-context';
import { RecordRow, ROW_HEIGHT } from './record-row';

function TimelineRow({ index, start, setSize, onSelect }: { index: number; start: number; setSize: number; onSelect(i: number): void }) {
  const record = useApp((s) => recordAt(s.timeline, index));
  const selected = useApp((s) => s.timeline.selectedIndex === index);
  const timing = useApp((s) => {
    const t = record ? effectTiming(s.timeline.pages, record) : null;
    return t ? timingLine(t) : null;
  });
  // The group's head line changes as the step's outcome arrives, so it is read from the pages.
  const heading = useApp((s) => (record && headsStep(index > 0 ? recordAt(s.timeline, index - 1) : undefined, record) ? stepHeading(s.timeline.pages, record) : null));
  return (
    <RecordRow
      id={`record-row-${index}`}
      index={index}
      setSize={setSize}
      start={start}
      record={record}
      selected={selected}
      onSelect={onSelect}
      timing={timing}
      step={record ? stepOf(record) : null}
      heading={heading}
    />
  );
}

/** A step's fork button, for the row at `index` when it heads a step (else nothing). */
function ForkButton({ index, top, onFork }: { index: number; top: number; onFork(step: number): void }) {
  const step = useApp((s) => {
    const record = recordAt(s.timeline, index);
    return record && headsStep(index > 0 ? recordAt(s.timeline, index - 1) : undefined, record) ? stepOf(record) : null;
  });
  if (step === null) return null;
  return (
    <button type="button" className="button small ghost fork-button" style={{ transform: `translateY(${top}px)` }} onClick={() => onFork(step)}>
      Fork<span className="visually-hidden"> from step {step}</span>
    </button>
  );
}

function useListKeys(count: number, selected: number | null, select: (i: number) => void, pageRows: number) {
  return (event: KeyboardEvent<HTMLDivElement>) => {
    const current = selected ?? -1;
    const moves: Record<string, number> = {
      ArrowDown: current + 1,
      ArrowUp: current - 1,
      PageDown: current + pageRows,
      PageUp: current - pageRows,
      Home: 0,
      End: count - 1,
    };
    const next = moves[event.key];
    if (next === undefined || count === 0) return;
    event.preventDefault();
    select(Math.max(0, Math.min(count - 1, next)));
  };
}

export function TimelineList({ label, onFork }: { label: string; onFork?: (step: number) => void }) {
  const count = useApp((s) => s.timeline.count);
  const selectedIndex = useApp((s) => s.timeline.selectedIndex);
  const scrollTo = useApp((s) => s.timeline.scrollTo);
  const error = useApp((s) => s.timeline.error);
  const wantRange = useApp((s) => s.wantRange);
  const selectRecordAt = useApp((s) => s.selectRecordAt);
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count, getScrollElement: () => scrollRef.current, estimateSize: () => ROW_HEIGHT, overscan: 12 });
  const items = virtualizer.getVirtualItems();
  const first = items[0]?.index ?? 0;
  const last = items[items.length - 1]?.index ?? 0;

  useEffect(() => wantRange(first, last), [first, last, count, wantRange]);
  useEffect(() => {
    if (scrollTo) virtualizer.scrollToIndex(scrollTo.index, { align: 'center' });
  }, [scrollTo]);

  const select = useCallback(
    (index: number) => {
      selectRecordAt(index);
      virtualizer.scrollToIndex(index, { align: 'auto' });
    },
    [selectRecordAt, virtualizer],
  );
  const onKeyDown = useListKeys(count, selectedIndex, select, Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 300) / ROW_HEIGHT) - 1));
  const activeVisible = selectedIndex !== null && selectedIndex >= first && selectedIndex <= last;

  return (
    <div className="timeline-list">
      <div className="timeline-columns" aria-hidden="true">
        <span className="c-seq">Seq</span>
        <span className="c-time">Time (UTC)</span>
        <span className="c-kind">Kind</span>
        <span className="c-step">Step</span>
        <span className="c-what">What happened</span>
      </div>
      {error ? (
        <p className="inline-error" role="alert">
          Could not read records: {error}
        </p>
      ) : null}
      <div className="timeline-body">
        <div
          ref={scrollRef}
          className="timeline-scroll"
          role="listbox"
          tabIndex={0}
          aria-label={label}
          aria-activedescendant={activeVisible ? `record-row-${selectedIndex}` : undefined}
          onKeyDown={onKeyDown}
        >
          <div role="presentation" className="timeline-sizer" style={{ height: virtualizer.getTotalSize() }}>
            {items.map((item) => (
              <TimelineRow key={item.key} index={item.index} start={item.start} setSize={count} onSelect={select} />
            ))}
          </div>
        </div>
        {onFork ? (
          <div className="fork-gutter" role="group" aria-label="Fork points">
            {/* Only the rows wholly on screen: a button scrolled out of sight must not take the focus. */}
            {items
              .filter((item) => item.start >= (virtualizer.scrollOffset ?? 0) && item.end <= (virtualizer.scrollOffset ?? 0) + (virtualizer.scrollRect?.height ?? Infinity))
              .map((item) => (
                <ForkButton key={item.key} index={item.index} top={item.start - (virtualizer.scrollOffset ?? 0)} onFork={onFork} />
              ))}
          </div>
        ) : null}
      </div>
    </div>
  );
}

/** Search matches, virtualized the same way; choosing one selects it in the timeline. */
export function MatchesList({ matches, label }: { matches: RecordView[]; label: string }) {
  const selectedSeq = useApp((s) => s.timeline.selectedSeq);
  const selectSeq = useApp((s) => s.selectSeq);
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: matches.length, getScrollElement: () => scrollRef.current, estimateSize: () => ROW_HEIGHT, overscan: 12 });
  const items = virtualizer.getVirtualItems();
  const selectedIndex = matches.findIndex((m) => m.seq === selectedSeq);
  const select = useCallback(
    (index: number) => {
      const record = matches[index];
      if (!record) return;
      selectSeq(record.seq);
      virtualizer.scrollToIndex(index, { align: 'auto' });
    },
    [matches, selectSeq, virtualizer],
  );
  const onKeyDown = useListKeys(matches.length, selectedIndex >= 0 ? selectedIndex : null, select, 10);
  const first = items[0]?.index ?? 0;
  const last = items[items.length - 1]?.index ?? 0;
  return (
    <div className="timeline-list">
      <div className="timeline-columns" aria-hidden="true">
        <span className="c-seq">Seq</span>
        <span className="c-time">Time (UTC)</span>
        <span className="c-kind">Kind</span>
        <span className="c-step">Step</span>
        <span className="c-what">What happened</span>
      </div>
      <div
        ref={scrollRef}
        className="timeline-scroll"
        role="listbox"
        tabIndex={0}
        aria-label={label}
        aria-activedescendant={selectedIndex >= first && selectedIndex <= last && selectedIndex >= 0 ? `match-row-${selectedIndex}` : undefined}
        onKeyDown={onKeyDown}
      >
        <div role="presentation" className="timeline-sizer" style={{ height: virtualizer.getTotalSize() }}>
          {items.map((item) => (
            <RecordRow
              key={item.key}
              id={`match-row-${item.index}`}
              index={item.index}
              setSize={matches.length}
              start={item.start}
              record={matches[item.index]}
              selected={item.index === selectedIndex}
              onSelect={select}
              step={matches[item.index] ? stepOf(matches[item.index]!) : null}
            />
          ))}
        </div>
      </div>
    </div>
  );
}
