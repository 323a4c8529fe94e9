/**
 * The raw wire of a session: every JSON-RPC message the tap relayed, in order, with its
 * direction and time, read from the run's journal records (acp-slice.ts) and virtualized like
 * the Runs timeline, so only the rows on screen exist and 10,000 messages scroll smoothly. One
 * listbox (arrows, Page Up/Down, Home, End); the selected message shows whole beside it, to
 * copy. Search filters the loaded messages by every word typed (direction, method, content).
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useCallback, useDeferredValue, useEffect, useId, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { CopyButton } from '../components/copy-button';
import { JsonBlock } from '../components/json-block';
import { clockTime, count, dateTime, plural } from '../lib/display-format';
import { DIRECTION_LABELS, matchWire, wireCopyText, wireEntryOf } from '../lib/acp-wire';
import { MAX_WIRE_RECORDS } from '../store/acp-slice';
import { useApp } from '../store/store-context';

const ROW = 30;

const WireRow = memo(function WireRow(props: { index: number; position: number; setSize: number; start: number; record: RecordView; selected: boolean; onSelect(i: number): void }) {
  const { index, position, setSize, start, record, selected, onSelect } = props;
  const entry = wireEntryOf(record);
  return (
    <div
      id={`wire-row-${index}`}
      role="option"
      aria-selected={selected}
      aria-posinset={position + 1}
      aria-setsize={setSize}
      className={`record-row wire-row${selected ? ' record-row-selected' : ''}`}
      style={{ transform: `translateY(${start}px)` }}
      onClick={() => onSelect(position)}
    >
      <span className="c-seq">{record.seq}</span>
      <span className="c-time">{clockTime(entry.at)}</span>
      <span className={`c-dir dir-${entry.direction}`}>{DIRECTION_LABELS[entry.direction]}</span>
      <span className="c-what">
        <strong>{entry.label}</strong>
        {entry.note ? <span className="muted"> {entry.note}</span> : null}
      </span>
    </div>
  );
});

function WireInspector({ record }: { record: RecordView | null }) {
  if (!record) return <section className="inspector" aria-label="Selected message"><p className="muted">Select a message to read it whole.</p></section>;
  const entry = wireEntryOf(record);
  return (
    <section className="inspector" aria-label="Selected message">
      <h3>
        {entry.label} <span className="sub">{DIRECTION_LABELS[entry.direction]}</span>
      </h3>
      <p className="muted inspector-line">
        {dateTime(entry.at)} · seq {record.seq}
        <CopyButton value={wireCopyText(record)} label="Copy this message with its direction and time" />
      </p>
      <JsonBlock value={entry.message} label="Message" />
    </section>
  );
}

export function AcpWire({ runId }: { runId: string }) {
  const id = useId();
  const wire = useApp((s) => s.acpWire);
  const query = useApp((s) => s.acpWireQuery);
  const setQuery = useApp((s) => s.setAcpWireQuery);
  const loadAcpWire = useApp((s) => s.loadAcpWire);
  useEffect(() => void loadAcpWire(), [loadAcpWire, runId]);
  const records = wire.runId === runId ? wire.records : [];
  // Typing stays responsive on a long wire: the filter runs on the deferred query.
  const deferred = useDeferredValue(query);
  const matches = useMemo(() => matchWire(records, deferred), [records, deferred]);
  const shown = matches ?? null;
  const size = shown ? shown.length : records.length;
  const indexAt = useCallback((position: number) => (shown ? shown[position]! : position), [shown]);
  const [selected, setSelected] = useState<number | null>(null);

  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({ count: size, getScrollElement: () => scrollRef.current, estimateSize: () => ROW, overscan: 12 });
  const items = virtualizer.getVirtualItems();
  const select = useCallback(
    (position: number) => {
      if (position < 0 || position >= size) return;
      setSelected(indexAt(position));
      virtualizer.scrollToIndex(position, { align: 'auto' });
    },
    [indexAt, size, virtualizer],
  );
  const selectedPosition = selected === null ? -1 : shown ? shown.indexOf(selected) : selected;
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    const page = Math.max(1, Math.floor((scrollRef.current?.clientHeight ?? 300) / ROW) - 1);
    const at = selectedPosition;
    const to = { ArrowDown: at + 1, ArrowUp: at - 1, PageDown: at + page, PageUp: at - page, Home: 0, End: size - 1 }[event.key];
    if (to === undefined || size === 0) return;
    event.preventDefault();
    select(Math.max(0, Math.min(size - 1, to)));
  };
  const first = items[0]?.index ?? 0;
  const last = items[items.length - 1]?.index ?? 0;
  const activeVisible = selectedPosition >= first && selectedPosition <= last && selectedPosition >= 0;
  const status = !wire.complete
    ? `Reading the wire… ${count(records.length)} messages so far.`
    : shown
      ? `${plural(shown.length, 'match', 'matches')} among ${count(records.length)} messages.`
      : `${count(records.length)} messages.`;
  const selectedRecord = selected !== null ? (records[selected] ?? null) : null;

  return (
    <div className="acp-wire">
      <div className="timeline-search" role="search" aria-label="Search this session's wire">
        <div className="field field-grow">
          <label htmlFor={`${id}-q`}>Search messages</label>
          <input id={`${id}-q`} type="search" value={query} placeholder="method, toAgent or toEditor, or any text in the message" onChange={(e) => setQuery(e.target.value)} />
        </div>
        <p className="search-status" role="status">
          {status}
        </p>
        {query ? (
          <button type="button" className="button small ghost" onClick={() => setQuery('')}>
            Clear search
          </button>
        ) : null}
      </div>
      {wire.truncated ? <p className="field-hint">Showing the first {count(MAX_WIRE_RECORDS)} messages; export the bundle for every one.</p> : null}
      {wire.error ? (
        <p className="inline-error" role="alert">
          Could not read the wire: {wire.error}
        </p>
      ) : null}
      <div className="timeline-split">
        <div className="timeline-list">
          <div className="timeline-columns wire-columns" aria-hidden="true">
            <span className="c-seq">Seq</span>
            <span className="c-time">Time (UTC)</span>
            <span className="c-dir">Direction</span>
            <span className="c-what">Message</span>
          </div>
          <div
            ref={scrollRef}
            className="timeline-scroll"
            role="listbox"
            tabIndex={0}
            aria-label={shown ? `Wire records matching the search: ${count(size)}` : `Wire records (messages and the tap's own): ${count(size)}`}
            aria-activedescendant={activeVisible ? `wire-row-${indexAt(selectedPosition)}` : undefined}
            onKeyDown={onKeyDown}
          >
            <div role="presentation" className="timeline-sizer" style={{ height: virtualizer.getTotalSize() }}>
              {items.map((item) => {
                const index = indexAt(item.index);
                const record = records[index];
                return record ? (
                  <WireRow key={item.key} index={index} position={item.index} setSize={size} start={item.start} record={record} selected={index === selected} onSelect={select} />
                ) : null;
              })}
            </div>
          </div>
        </div>
        <WireInspector record={selectedRecord} />
      </div>
    </div>
  );
}
