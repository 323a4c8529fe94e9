/**
 * Which run each observed message belongs to. One ACP connection may carry several sessions;
 * each becomes a run of its own (no admission: an observation is the observed party's account,
 * never something this plane authorized), so each run must stand alone: it starts with
 * tap/started and a copy of the connection's initialize/authenticate exchange.
 *
 * A message names its session by `params.sessionId`; a response has none, so it is matched to
 * the request it answers. Both sides number their own requests, so pending requests are kept
 * per direction: a response travelling toEditor answers a request that travelled toAgent.
 * session/new's session id first appears in its response, so messages that cannot yet be
 * placed (the session/new request itself) wait in a bounded buffer and open the next session's
 * run; a connection that ends without any session still gets one run (sessionId '') so
 * nothing observed is lost. Every bound here drops the oldest and says how many as a gap.
 *
 * The observed party never chooses what the record keeps. A line is journaled as a message only
 * if every later step can hold it: valid UTF-8, JSON, an object or array, nested at most
 * OBSERVED_MAX_DEPTH levels (measured on the bytes, without recursion, before anything parses
 * it), no string or member name holding a lone surrogate (JSON's `\ud800` escape parses to text
 * with no UTF-8 form, which canonical JSON, and so the journal, refuses), and at most
 * JOURNALED_MESSAGE_CAP once redacted and capped. Anything else is a `malformed` observation of
 * its own: its size, the sha256 of its bytes, a preview and `why`. So one hostile line can
 * neither fail the commit that carries its neighbours (a refused record fails its whole batch)
 * nor overflow a stack on the way (SQLite's JSON functions refuse nesting past 1,000 levels, and
 * every recursive walk has some limit): it is one record, and the session around it is whole.
 * A failure of this module's own on some line is caught and recorded the same way.
 *
 * What is journaled is evidence (src-shared/protocol/acp/evidence.ts): under the `evidence`
 * record mode a presentation update (a message or thought chunk, a plan, a mode change, a
 * command list) becomes a transcript line of its run, written beside the journal, and the run
 * counts it by its wire name; the run's next observation carries those counts as `omitted`, and
 * tap/ended carries what is left. So the journal says what it leaves out, in the wire's own
 * words, and the presentation never costs a record. Under `full` every message is journaled.
 */
import { createHash } from 'node:crypto';
import type { TapEndReason, WireDirection } from '../../../src-shared/protocol/acp/session-view';
import { newRunId } from '../../base/random-ids';
import { journaledMessage, type MessageRole } from './message-caps';
import { presentationKindOf, type OmittedCounts, type RecordMode, type TranscriptLine } from '../../../src-shared/protocol/acp/evidence';

export interface ObservationDraft {
  update: string;
  detail: unknown;
}

export interface TapEnd {
  at: string;
  reason: TapEndReason;
  exitCode: number | null;
  signal: string | null;
  stderrTail: string;
}

/** Observations for one run, in wire order; `seal` closes the run after them. */
export interface RunWrite {
  runId: string;
  sessionId: string;
  observations: ObservationDraft[];
  /** Presentation lines left out of the journal: written to the transcript store, before the observations. */
  transcript?: TranscriptLine[];
  seal?: { result: TapEnd };
}

/** Adds a placed write to a batch: consecutive writes of one run (neither sealing) become one. */
export function addPlaced(writes: RunWrite[], placed: RunWrite): void {
  const last = writes[writes.length - 1];
  if (last && last.runId === placed.runId && !last.seal && !placed.seal) {
    last.observations.push(...placed.observations);
    if (placed.transcript) (last.transcript ??= []).push(...placed.transcript);
  } else writes.push({ ...placed, observations: [...placed.observations], ...(placed.transcript ? { transcript: [...placed.transcript] } : {}) });
}

export type WireEvent =
  /** `inserted`: a line the tap itself wrote (under --policy inbox), not one either party sent. */
  | { kind: 'line'; dir: WireDirection; wire: number; at: string; bytes: Buffer; inserted?: boolean }
  | { kind: 'overlong'; dir: WireDirection; wire: number; at: string; size: number; digest: string; head: Buffer }
  | { kind: 'gap'; dropped: number; fromWire: number; toWire: number; at: string };

const PRELUDE_METHODS = new Set(['initialize', 'authenticate']);
const PRELUDE_LIMIT = 32;
const UNPLACED_LIMIT = 1000;
const PENDING_LIMIT = 10_000;
/** A journaled message bigger than this is recorded as over cap (the plane's API takes 1 MB a request). */
export const JOURNALED_MESSAGE_CAP = 512 * 1024;
const PREVIEW_CHARS = 120;
/**
 * How deeply an observed message may nest and still be journaled as a message. ACP's own shapes
 * nest less than ten levels; a tool call's raw input is arbitrary JSON, and 64 leaves it room.
 */
export const OBSERVED_MAX_DEPTH = 64;

interface Entry {
  wire: number;
  observation: ObservationDraft;
}

interface Pending {
  method: string;
  sessionId: string | null;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function opposite(dir: WireDirection): WireDirection {
  return dir === 'toAgent' ? 'toEditor' : 'toAgent';
}

function sha256Hex(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function previewOf(bytes: Buffer): string {
  try {
    return utf8.decode(bytes).slice(0, PREVIEW_CHARS);
  } catch {
    return '';
  }
}

export class SessionRuns {
  private readonly runs = new Map<string, { runId: string; omitted: OmittedCounts | null }>();
  private latest: string | null = null;
  private prelude: Entry[] = [];
  private unplaced: Entry[] = [];
  private unplacedDropped: { dropped: number; fromWire: number; toWire: number } | null = null;
  private readonly pending = new Map<string, Pending>();
  /** When the connection's first message was seen: the start of a run opened only at the end. */
  private firstAt: string | null = null;

  constructor(
    private readonly started: (at: string) => ObservationDraft,
    private readonly mintRunId: () => string = newRunId,
    private readonly record: RecordMode = 'evidence',
  ) {}

  /** Every run opened so far, sessionId → runId. */
  openRuns(): Array<{ sessionId: string; runId: string }> {
    return [...this.runs].map(([sessionId, r]) => ({ sessionId, runId: r.runId }));
  }

  /** Places one wire event; returns what to write now (possibly nothing, while it waits for a session). */
  place(event: WireEvent): RunWrite[] {
    this.firstAt ??= event.at;
    if (event.kind === 'gap') {
      const detail = { dropped: event.dropped, fromWire: event.fromWire, toWire: event.toWire, at: event.at };
      return this.toLatestOrWait({ wire: event.fromWire, observation: { update: 'gap', detail } });
    }
    if (event.kind === 'overlong') {
      return this.toLatestOrWait(this.malformed(event.dir, event.wire, event.at, event.size, event.digest, previewOf(event.head), "longer than the tap's line cap"));
    }
    const unreadable = (why: string) =>
      this.toLatestOrWait(this.malformed(event.dir, event.wire, event.at, event.bytes.length, sha256Hex(event.bytes), previewOf(event.bytes), why));
    let placed: { entry: Entry; role: MessageRole; sessionId: string | null; opensSession: string | null; prelude: boolean; presentation: TranscriptLine | null };
    try {
      const parsed = parse(event.bytes);
      if (typeof parsed === 'string') return unreadable(parsed);
      const { role, sessionId, opensSession, prelude } = this.classify(event.dir, parsed);
      const message = journaledMessage(parsed, role);
      if (JSON.stringify(message).length > JOURNALED_MESSAGE_CAP) return unreadable(`over ${JOURNALED_MESSAGE_CAP} bytes once redacted and capped`);
      const entry: Entry = { wire: event.wire, observation: { update: 'message', detail: { dir: event.dir, wire: event.wire, at: event.at, message, ...(event.inserted ? { origin: 'tap' } : {}) } } };
      const kind = this.record === 'evidence' && !event.inserted ? presentationKindOf(parsed) : null;
      const presentation = kind !== null ? { wire: event.wire, dir: event.dir, at: event.at, kind, message } : null;
      placed = { entry, role, sessionId, opensSession, prelude, presentation };
    } catch (error) {
      // Whatever this line did to the walks above, it is still a line the wire carried.
      return unreadable(`could not be read: ${(error as Error).message}`.slice(0, 200));
    }
    const { entry, role, sessionId, opensSession, prelude, presentation } = placed;
    // A presentation update names its session (session/update always does): it is a line of that
    // session's transcript, counted in its run, and never a record.
    if (presentation !== null && sessionId !== null) {
      const opened = this.runs.has(sessionId) ? null : this.open(sessionId, event.at, null);
      const run = this.runs.get(sessionId)!;
      run.omitted ??= {};
      run.omitted[presentation.kind] = (run.omitted[presentation.kind] ?? 0) + 1;
      return [{ ...(opened ?? { runId: run.runId, sessionId, observations: [] }), transcript: [presentation] }];
    }
    if (prelude) {
      this.prelude.push(entry);
      if (this.prelude.length > PRELUDE_LIMIT) this.prelude.shift();
      return this.latest === null ? [] : [this.write(this.latest, [entry.observation])];
    }
    if (opensSession !== null && !this.runs.has(opensSession)) return [this.open(opensSession, event.at, entry)];
    if (sessionId !== null && this.runs.has(sessionId)) return [this.write(sessionId, [entry.observation])];
    if (sessionId !== null) return [this.open(sessionId, event.at, entry)];
    if (role.kind === 'request' && role.method === 'session/new') return this.wait(entry);
    return this.toLatestOrWait(entry);
  }

  /** The connection ended: what waits goes to the newest run (or to a run of its own), then every run is ended and sealed. */
  end(end: TapEnd): RunWrite[] {
    const writes: RunWrite[] = [];
    if (this.runs.size === 0) writes.push(this.open('', this.firstAt ?? end.at, null));
    else if (this.unplaced.length > 0 || this.unplacedDropped !== null) writes.push(this.write(this.latest!, this.takeUnplaced()));
    for (const [sessionId, run] of this.runs) {
      const detail = run.omitted ? { ...end, omitted: run.omitted } : end;
      writes.push({ runId: run.runId, sessionId, observations: [{ update: 'tap/ended', detail }], seal: { result: end } });
    }
    this.runs.clear();
    this.latest = null;
    return writes;
  }

  private classify(dir: WireDirection, message: unknown): { role: MessageRole; sessionId: string | null; opensSession: string | null; prelude: boolean } {
    const none = { role: { kind: 'other' as const, method: null }, sessionId: null, opensSession: null, prelude: false };
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return none;
    const m = message as Record<string, unknown>;
    const params = typeof m.params === 'object' && m.params !== null ? (m.params as Record<string, unknown>) : null;
    const named = typeof params?.sessionId === 'string' ? params.sessionId : null;
    const hasId = typeof m.id === 'string' || typeof m.id === 'number';
    if (typeof m.method === 'string') {
      if (hasId) {
        this.pending.set(`${dir}:${JSON.stringify(m.id)}`, { method: m.method, sessionId: named });
        if (this.pending.size > PENDING_LIMIT) this.pending.delete(this.pending.keys().next().value!);
      }
      const role: MessageRole = { kind: hasId ? 'request' : 'notification', method: m.method };
      return { role, sessionId: named, opensSession: null, prelude: PRELUDE_METHODS.has(m.method) };
    }
    if (hasId && ('result' in m || 'error' in m)) {
      const key = `${opposite(dir)}:${JSON.stringify(m.id)}`;
      const request = this.pending.get(key);
      this.pending.delete(key);
      const role: MessageRole = { kind: 'response', method: request?.method ?? null };
      const result = typeof m.result === 'object' && m.result !== null ? (m.result as Record<string, unknown>) : null;
      const opened = request?.method === 'session/new' && typeof result?.sessionId === 'string' ? result.sessionId : null;
      return { role, sessionId: request?.sessionId ?? null, opensSession: opened, prelude: request !== undefined && PRELUDE_METHODS.has(request.method) };
    }
    return none;
  }

  /** A line recorded as what it is: its size, the sha256 of its bytes, a preview, and why it is not a message. */
  private malformed(dir: WireDirection, wire: number, at: string, size: number, digest: string, preview: string, why: string): Entry {
    return { wire, observation: { update: 'malformed', detail: { dir, wire, at, size, digest, preview: wellFormed(preview), why } } };
  }

  /** Observations of an open run; the first carries what the run left out since its last record. */
  private write(sessionId: string, observations: ObservationDraft[]): RunWrite {
    const run = this.runs.get(sessionId)!;
    const first = observations[0];
    if (run.omitted && first && typeof first.detail === 'object' && first.detail !== null) {
      observations = [{ update: first.update, detail: { ...first.detail, omitted: run.omitted } }, ...observations.slice(1)];
      run.omitted = null;
    }
    return { runId: run.runId, sessionId, observations };
  }

  /** A new run: tap/started, the prelude and whatever waited for a session, in wire order, then `entry`. */
  private open(sessionId: string, at: string, entry: Entry | null): RunWrite {
    const runId = this.mintRunId();
    this.runs.set(sessionId, { runId, omitted: null });
    this.latest = sessionId;
    const waiting = [...this.prelude, ...this.unplaced].sort((a, b) => a.wire - b.wire).map((e) => e.observation);
    const dropped = this.takeUnplacedGap();
    this.unplaced = [];
    return { runId, sessionId, observations: [this.started(at), ...dropped, ...waiting, ...(entry ? [entry.observation] : [])] };
  }

  private toLatestOrWait(entry: Entry): RunWrite[] {
    if (this.latest !== null) return [this.write(this.latest, [entry.observation])];
    return this.wait(entry);
  }

  private wait(entry: Entry): RunWrite[] {
    this.unplaced.push(entry);
    if (this.unplaced.length > UNPLACED_LIMIT) {
      const lost = this.unplaced.shift()!;
      const d = this.unplacedDropped;
      this.unplacedDropped = d ? { dropped: d.dropped + 1, fromWire: Math.min(d.fromWire, lost.wire), toWire: Math.max(d.toWire, lost.wire) } : { dropped: 1, fromWire: lost.wire, toWire: lost.wire };
    }
    return [];
  }

  private takeUnplaced(): ObservationDraft[] {
    const out = [...this.takeUnplacedGap(), ...this.unplaced.map((e) => e.observation)];
    this.unplaced = [];
    return out;
  }

  private takeUnplacedGap(): ObservationDraft[] {
    if (this.unplacedDropped === null) return [];
    // Messages that waited too long for a session to place them in (a connection that never
    // opens one, flooding): named as a gap like a queue overflow.
    const gap = { update: 'gap', detail: { ...this.unplacedDropped, at: new Date().toISOString() } };
    this.unplacedDropped = null;
    return [gap];
  }
}

/**
 * The parsed line, or why it cannot be journaled as a message: not UTF-8, not JSON, not an
 * object or array, nested past OBSERVED_MAX_DEPTH, or holding text with no UTF-8 form.
 */
function parse(bytes: Buffer): object | string {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return 'not valid UTF-8';
  }
  // Before JSON.parse: the nesting is read off the bytes and the scan stops at the first level
  // too many, so a 16 MB line of `[` costs 65 bytes of work, not a parse.
  if (nestsDeeperThan(bytes, OBSERVED_MAX_DEPTH)) return `nested deeper than ${OBSERVED_MAX_DEPTH} levels`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (typeof value !== 'object' || value === null) return 'JSON, but not an object or array';
  if (holdsLoneSurrogate(value)) return 'a string or member name holds a lone surrogate (no UTF-8 form)';
  return value;
}

/**
 * Whether JSON text nests arrays and objects more than `max` deep, read from its bytes: brackets
 * inside strings do not count (a string ends at a `"` no backslash escapes). Iterative, and it
 * stops at the first level past `max`. Unbalanced text is JSON.parse's to refuse.
 */
export function nestsDeeperThan(bytes: Uint8Array, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (byte === 0x5c) i++;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > max) return true;
    } else if (byte === 0x5d || byte === 0x7d) depth--;
  }
  return false;
}

/** In a `u` regex a surrogate pair reads as one code point, so this matches only an unpaired half. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Whether any string or member name in a parsed value holds an unpaired surrogate; iterative. */
function holdsLoneSurrogate(root: object): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) return true;
    } else if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) {
        if (LONE_SURROGATE.test(key)) return true;
        stack.push(item);
      }
    }
  }
  return false;
}

/** A preview is cut at a character count, which can split a surrogate pair: the half left is replaced. */
function wellFormed(text: string): string {
  return text.replace(/[\uD800-\uDFFF]/gu, '\uFFFD');
}
