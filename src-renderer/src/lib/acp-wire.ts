/**
 * One journal record of an observed ACP session as a row of the raw wire: which way the message
 * went, its JSON-RPC method or id, and the message itself. The tap journals each message it
 * relays as an Observation record (source `acp`, update `message`, detail `{dir, wire, at,
 * message}`: session-fold.ts's ObservedMessage); the tap's own entries (tap/started, tap/ended,
 * gap, malformed, decision) and the run's other records (a person's decision, its seal) are
 * shown as the tap's or the plane's. The detail is read tolerantly, because it is the observed
 * party's account and a newer tap may add fields.
 */
import type { RecordView } from '../../../src-shared/ipc/contract';
import type { WireDirection } from '../../../src-shared/protocol/acp/session-view';
import { isRecord } from '../../../src-shared/plain-object';

export interface WireEntry {
  /** `toAgent`, `toEditor`, or `plane` for an entry of the tap's or a record of the plane's own. */
  direction: WireDirection | 'plane' | 'unknown';
  /** `initialize`, `session/update`, `↩ 3` (a response to id 3), or the record's kind. */
  label: string;
  /** What the row shows after the label: a session/update kind, an error, a stop reason. */
  note: string;
  /** The JSON-RPC message, or the detail (or record body) for the tap's and plane's own entries. */
  message: unknown;
  /** When the tap saw it (the detail's `at`), else when the record was written. */
  at: string;
}


function directionOf(detail: Record<string, unknown>, update: string): WireEntry['direction'] {
  const raw = detail.dir ?? detail.direction;
  if (raw === 'toAgent' || raw === 'toEditor') return raw;
  return update === 'message' ? 'unknown' : 'plane';
}

function messageOf(detail: Record<string, unknown>, update: string): unknown {
  return update === 'message' && 'message' in detail ? detail.message : detail;
}

function labelOf(message: unknown, update: string): { label: string; note: string } {
  if (!isRecord(message)) return { label: update, note: '' };
  const id = 'id' in message ? JSON.stringify(message.id) : null;
  if (typeof message.method === 'string') {
    const params = isRecord(message.params) ? message.params : {};
    const inner = isRecord(params.update) && typeof params.update.sessionUpdate === 'string' ? params.update.sessionUpdate : '';
    return { label: message.method, note: [id !== null ? `id ${id}` : '', inner].filter(Boolean).join(' · ') };
  }
  if (isRecord(message.error)) return { label: `↩ ${id ?? '?'}`, note: `error ${String(message.error.code)}: ${String(message.error.message)}` };
  if ('result' in message) {
    const result = isRecord(message.result) ? message.result : {};
    return { label: `↩ ${id ?? '?'}`, note: typeof result.stopReason === 'string' ? `stopReason ${result.stopReason}` : 'result' };
  }
  return { label: update, note: '' };
}

const entries = new WeakMap<RecordView, WireEntry>();

export function wireEntryOf(record: RecordView): WireEntry {
  const cached = entries.get(record);
  if (cached) return cached;
  let entry: WireEntry;
  const body = isRecord(record.body) ? record.body : {};
  if (record.kind === 'Observation' && isRecord(body.detail)) {
    const update = typeof body.update === 'string' ? body.update : 'observation';
    const message = messageOf(body.detail, update);
    const at = typeof body.detail.at === 'string' ? body.detail.at : record.time;
    entry = { direction: directionOf(body.detail, update), ...labelOf(update === 'message' ? message : null, update), message, at };
  } else {
    entry = { direction: 'plane', label: record.kind, note: '', message: record.body, at: record.time };
  }
  entries.set(record, entry);
  return entry;
}

export const DIRECTION_LABELS: Record<WireEntry['direction'], string> = {
  toAgent: 'editor → agent',
  toEditor: 'agent → editor',
  plane: 'tap or plane',
  unknown: 'direction not recorded',
};

const texts = new WeakMap<RecordView, string>();

/** What a wire search matches against: the direction (`toEditor` and in words), label and the whole message, lower-cased. */
export function wireSearchText(record: RecordView): string {
  let text = texts.get(record);
  if (text === undefined) {
    const entry = wireEntryOf(record);
    text = `${entry.direction} ${DIRECTION_LABELS[entry.direction]} ${entry.label} ${entry.note} ${JSON.stringify(entry.message) ?? ''}`.toLowerCase();
    texts.set(record, text);
  }
  return text;
}

/** Indexes of the records matching every word of `query` (all of them when it is blank). */
export function matchWire(records: readonly RecordView[], query: string): number[] | null {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return null;
  const out: number[] = [];
  records.forEach((record, i) => {
    const text = wireSearchText(record);
    if (words.every((w) => text.includes(w))) out.push(i);
  });
  return out;
}

/** The message as copied: pretty JSON, with direction and time as a leading comment line. */
export function wireCopyText(record: RecordView): string {
  const entry = wireEntryOf(record);
  return `// ${DIRECTION_LABELS[entry.direction]} at ${entry.at} (seq ${record.seq})\n${JSON.stringify(entry.message, null, 2) ?? 'null'}`;
}
