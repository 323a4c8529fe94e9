/**
 * One record, exactly: its canonical JSON (RFC 8785, the bytes its hash covers), its hash and
 * the previous record's hash, and the hash recomputed here in the window with WebCrypto, so the
 * person can see the link hold for the record in front of them.
 */
import { useEffect, useMemo, useState } from 'react';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { CopyButton } from '../components/copy-button';
import { JsonBlock } from '../components/json-block';
import { StatusPill } from '../components/status-pill';
import { dateTime } from '../lib/display-format';
import { KIND_LABELS } from '../lib/record-summary';
import { preimageOf, sha256Hex } from '../lib/record-hash-check';
import { recordAt } from '../store/timeline-slice';
import { useApp } from '../store/store-context';
import { McpRecordDetails } from './mcp-record-details';
import { describeErasure, erasureOfBody } from '../../../src-shared/journal/erased-payload';

function HashCheck({ preimage, hash }: { preimage: string | null; hash: string }) {
  const [computed, setComputed] = useState<{ for: string; hex: string | null } | null>(null);
  useEffect(() => {
    if (preimage === null) return;
    let live = true;
    void sha256Hex(preimage).then((hex) => {
      if (live) setComputed({ for: preimage, hex });
    });
    return () => {
      live = false;
    };
  }, [preimage]);
  if (preimage === null) return <StatusPill tone="warn">Cannot recompute: the body has no canonical form</StatusPill>;
  if (!computed || computed.for !== preimage) return <StatusPill tone="busy">Recomputing…</StatusPill>;
  if (computed.hex === null) return <StatusPill tone="plain">Not recomputed (WebCrypto is unavailable here)</StatusPill>;
  return computed.hex === hash ? (
    <StatusPill tone="ok">Recomputed here: matches</StatusPill>
  ) : (
    <StatusPill tone="bad" title={computed.hex}>
      Recomputed here: does not match
    </StatusPill>
  );
}

function HashLine({ label, value }: { label: string; value: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd className="hash-line">
        <code className="hash">{value}</code>
        <CopyButton value={value} label={`Copy ${label.toLowerCase()}`} />
      </dd>
    </>
  );
}

export function RecordInspector() {
  const record = useApp((s): RecordView | null => {
    const t = s.timeline;
    if (t.selectedIndex !== null) {
      const found = recordAt(t, t.selectedIndex);
      if (found) return found;
    }
    if (t.selectedSeq !== null) return s.search.matches.find((r) => r.seq === t.selectedSeq) ?? null;
    return null;
  });
  const preimage = useMemo(() => {
    if (!record) return null;
    try {
      return preimageOf(record);
    } catch {
      return null;
    }
  }, [record]);

  const erased = record ? erasureOfBody(record.body) : null;
  if (!record) {
    return (
      <aside className="inspector" aria-label="Record inspector">
        <h3>Record inspector</h3>
        <p className="muted">Choose a record (click it, or use the arrow keys in the list) to see its canonical JSON, its hash and the hash it links to.</p>
      </aside>
    );
  }
  return (
    <aside className="inspector" aria-label="Record inspector">
      <h3>
        Record {record.seq} · {KIND_LABELS[record.kind] ?? record.kind}
      </h3>
      <dl className="facts">
        <dt>Kind</dt>
        <dd>
          <code>{record.kind}</code> v{record.v}
          {record.known ? '' : ` — ${record.note ?? 'unknown to this build'}`}
        </dd>
        <dt>Time</dt>
        <dd>{dateTime(record.time)}</dd>
        <HashLine label="Hash" value={record.hash} />
        <HashLine label="Previous hash" value={record.prevHash} />
        <dt>Check</dt>
        <dd>
          <HashCheck preimage={preimage} hash={record.hash} />
        </dd>
        {erased ? (
          <>
            <dt>Payload</dt>
            <dd>
              <StatusPill tone="warn">Payload {describeErasure(erased)}</StatusPill>
            </dd>
          </>
        ) : null}
      </dl>
      <McpRecordDetails record={record} />
      {preimage !== null ? <JsonBlock label="Canonical JSON (RFC 8785), the bytes the hash covers" text={preimage} /> : null}
      <details>
        <summary>Body, indented</summary>
        <JsonBlock label="Body" value={record.body} />
      </details>
    </aside>
  );
}
