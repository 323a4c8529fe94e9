/**
 * The plane's side of ACP observation: `acp.record` takes what `agentplane acp tap` observed
 * and appends it to the session's run in one commit, and `acp.sessions` / `acp.session` fold
 * those runs (src-shared/protocol/acp/session-fold.ts) into what the Editor sessions view shows.
 *
 * The tap is a local process holding the plane's token, not a party the plane trusts with
 * anything but its own observations: it may only write Observation records into runs it began
 * (a new run id starts with tap/started; an existing one must already be an acp session of the
 * same session id, not yet sealed), and never a `decision` (that is a person's answer at the
 * plane, written by the plane). Folds are pure functions of a run's records, and records are
 * append-only: a session's observed messages are kept with the seq they reach, only the records
 * after it are read when the run grows, and the fold is kept until the run's last seq moves.
 *
 * Under `--policy inbox` an open permission request is also an approvals-inbox item, reason
 * `permission`: the plane derives it from the session's records (there is no Suspended record:
 * the session's own messages are the evidence, and nothing here suspended anything). It is
 * shaped as every other waiting run is (a RunView with `pending`), so the inbox, the CLI's
 * `approvals` and the notifications treat it alike; deciding it is answering the request with
 * one of the agent's options (approve) or cancelling it (deny), through the same check of the
 * fold as `acp.answer`.
 *
 * A session recorded as evidence (the tap's default, src-shared/protocol/acp/evidence.ts) keeps
 * its presentation (chunks, thoughts, plans, modes) in the transcript store beside the journal,
 * not in it. The view is the fold of both, merged by wire index, so it reads as it did when
 * every message was journaled; it says which part is transcript (`transcript`: what the journal
 * left out, by wire name, how many lines the store still keeps, and its retention), and a
 * transcript erased or past its retention leaves the evidence exactly as it was.
 */
import type { JournalRecord } from '../../src-shared/journal/records';
import type { CommandsOf, RunView, Wait } from '../../src-shared/ipc/contract';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { canonicalize } from '../../src-shared/journal/canonical-json';
import type { Decision, DecisionValue, PermissionOutcome } from '../../src-shared/vocabulary/decisions';
import { waitIdOf } from '../../src-shared/vocabulary/ids';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import type { WaitSubjectOf } from '../../src-shared/vocabulary/waits';
import { createHash } from 'node:crypto';
import { foldSession, type ObservedMessage } from '../../src-shared/protocol/acp/session-fold';
import type { PermissionView, SessionSummary, SessionView } from '../../src-shared/protocol/acp/session-view';
import { PlaneError } from '../base/plane-error';
import type { Journal } from '../journal/journal';
import type { TranscriptStat, TranscriptStore } from '../journal/transcript-store';
import { RecordModeSchema, type TranscriptLine } from '../../src-shared/protocol/acp/evidence';
import { observationDrafts } from '../protocols/acp/observation-drafts';
import type { CommandHandlers } from './dispatch';

const FOLD_CACHE = 200;
/** Updates only the plane writes into an observed run. */
const PLANE_ONLY_UPDATES = new Set(['decision']);

/** A run's Observation records as the fold reads them: `{update, ...detail}`; other kinds are not the observed party's account. */
export function observedMessages(records: readonly JournalRecord[]): ObservedMessage[] {
  const out: ObservedMessage[] = [];
  for (const record of records) {
    if (record.kind !== 'Observation' || record.body.source !== 'acp') continue;
    const detail = record.body.detail;
    const fields = typeof detail === 'object' && detail !== null && !Array.isArray(detail) ? (detail as Record<string, unknown>) : {};
    out.push({ ...fields, update: record.body.update } as ObservedMessage);
  }
  return out;
}

function isAcpObservation(record: JournalRecord | undefined): record is JournalRecord {
  return record !== undefined && record.kind === 'Observation' && record.body.source === 'acp';
}

type AcpCommands = CommandsOf<'acp'>;

/** What the approvals and runs commands ask of observed sessions (plane.ts). */
export interface ObservedInbox {
  waiting(limit: number): Promise<RunView[]>;
  runView(runId: string): Promise<RunView>;
  decide(request: PermissionDecision): Promise<RunView>;
}

/** Where the transcript of evidence-recorded sessions is kept, and who hears that one grew (the plane's `acp.transcript` event). */
export interface AcpTranscripts {
  store: TranscriptStore;
  grew(runId: string, lastWire: number): void;
}

export function acpHandlers(journal: Journal, by: string, transcripts: AcpTranscripts): { inbox: ObservedInbox; handlers: Pick<CommandHandlers, AcpCommands> } {
  const folds = new Map<string, Fold>();
  // One batch at a time per run, so the check of the run and the append cannot interleave.
  const locks = new Map<string, Promise<unknown>>();

  /** The session's fold as of `lastSeq` (the run's last seq; read when not given), reading only what is new since the kept one. */
  async function fold(runId: string, lastSeq?: number): Promise<Fold> {
    const at = lastSeq ?? (await journal.runLastSeq(runId));
    if (at === null) throw new PlaneError(ErrorCode.NotFound, `no observed ACP session ${runId}`);
    const stat = transcripts.store.stat(runId);
    const kept = folds.get(runId);
    if (kept && kept.lastSeq === at && sameStat(kept.transcriptStat, stat)) return kept;
    let base: Fold;
    let fresh: JournalRecord[];
    if (kept && kept.lastSeq <= at) {
      base = kept;
      fresh = kept.lastSeq < at ? await journal.readRun(runId, kept.lastSeq + 1, Number.MAX_SAFE_INTEGER) : [];
    } else {
      const records = await journal.readRun(runId, 1, Number.MAX_SAFE_INTEGER);
      const first = records[0];
      if (!isAcpObservation(first)) throw new PlaneError(ErrorCode.NotFound, `no observed ACP session ${runId}`);
      base = { lastSeq: 0, records: 0, sessionId: String(first.body.sessionId), firstTime: first.time, observed: [], transcript: [], transcriptStat: { lines: 0, lastWire: 0 }, wireSeqs: new Map(), view: null! };
      fresh = records;
    }
    // Lines only ever join a run's transcript in wire order; fewer than were read means some went (erased, past retention).
    const grown = stat.lines >= base.transcriptStat.lines && stat.lastWire >= base.transcriptStat.lastWire;
    const transcript = grown ? base.transcript.concat(transcripts.store.lines(runId, base.transcriptStat.lastWire).map(transcriptMessage)) : transcripts.store.lines(runId).map(transcriptMessage);
    const observed = base.observed.concat(observedMessages(fresh));
    const wireSeqs = new Map(base.wireSeqs);
    for (const r of fresh) {
      const wire = (r.body as { detail?: { wire?: unknown } }).detail?.wire;
      if (r.kind === 'Observation' && typeof wire === 'number' && !wireSeqs.has(wire)) wireSeqs.set(wire, r.seq);
    }
    const last = fresh.length > 0 ? fresh[fresh.length - 1]!.seq : base.lastSeq;
    const view = foldSession(runId, base.sessionId, mergedByWire(observed, transcript));
    const leftOut = evidenceOnly(observed);
    if (leftOut) view.transcript = { leftOut, kept: stat.lines, retentionDays: transcripts.store.retentionDays() };
    const next: Fold = { ...base, lastSeq: last, records: base.records + fresh.length, observed, transcript, transcriptStat: stat, wireSeqs, view };
    folds.delete(runId);
    folds.set(runId, next);
    if (folds.size > FOLD_CACHE) folds.delete(folds.keys().next().value!);
    return next;
  }

  async function view(runId: string, lastSeq?: number): Promise<SessionView> {
    return (await fold(runId, lastSeq)).view;
  }

  async function record(request: Parameters<CommandHandlers['acp.record']>[0]): Promise<{ seq: number; records: number }> {
    const { runId, sessionId, observations, seal } = request;
    const forged = observations.find((o) => PLANE_ONLY_UPDATES.has(o.update));
    if (forged) throw new PlaneError(ErrorCode.Forbidden, `an observation "${forged.update}" is written by the plane, not sent to it`);
    const lastSeq = await journal.runLastSeq(runId);
    let before = 0;
    if (lastSeq === null) {
      if (observations[0]?.update !== 'tap/started') throw new PlaneError(ErrorCode.BadRequest, `${runId} is not a run yet: an observed run begins with tap/started`);
    } else {
      const [first] = await journal.readRun(runId, 1, 1);
      if (!isAcpObservation(first)) throw new PlaneError(ErrorCode.Forbidden, `${runId} is not an observed ACP session`);
      if (first.body.sessionId !== sessionId) throw new PlaneError(ErrorCode.Conflict, `${runId} observes session "${String(first.body.sessionId)}", not "${sessionId}"`);
      const [last] = await journal.readRange(lastSeq, lastSeq, 1);
      if (last?.kind === 'RunSealed') throw new PlaneError(ErrorCode.Conflict, `${runId} has been sealed`);
      if (seal) before = await journal.runRecordCount(runId);
    }
    // The transcript first: the records after it may name what it holds (session-runs.ts).
    if (request.transcript && request.transcript.length > 0) {
      if (transcripts.store.append(runId, sessionId, request.transcript) > 0) transcripts.grew(runId, request.transcript[request.transcript.length - 1]!.wire);
    }
    const drafts = observationDrafts({ runId, sessionId, observations, ...(seal ? { seal } : {}) }, before);
    if (drafts.length === 0) return { seq: lastSeq ?? 0, records: 0 };
    const written = await journal.appendBatch(drafts);
    return { seq: written[written.length - 1]!.seq, records: written.length };
  }

  function serialized<T>(runId: string, work: () => Promise<T>): Promise<T> {
    const previous = locks.get(runId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    locks.set(runId, next);
    return next.finally(() => {
      if (locks.get(runId) === next) locks.delete(runId);
    });
  }

  /**
   * The plane's side of "first answer wins" is the journal as it stands: the request must be
   * open in the fold, in a session tapped with the inbox policy and not ended. The editor may
   * have answered a moment ago with its answer still on the way to the journal; then the tap
   * (which sees the wire first) refuses this answer, and the editor's stays the one the agent got.
   */
  async function answer(request: Parameters<CommandHandlers['acp.answer']>[0]): Promise<{ seq: number }> {
    const { runId, requestKey, outcome, optionId } = request;
    const lastSeq = await journal.runLastSeq(runId);
    if (lastSeq === null) throw new PlaneError(ErrorCode.NotFound, `no observed ACP session ${runId}`);
    const session = await view(runId, lastSeq);
    if (session.policy !== 'inbox') throw new PlaneError(ErrorCode.Conflict, `session ${runId} is observed only (its tap runs with --policy observe): answer in the editor`);
    if (session.ended) throw new PlaneError(ErrorCode.Conflict, `session ${runId} has ended`);
    const permission = session.permissions.find((p) => p.requestKey === requestKey);
    if (!permission) throw new PlaneError(ErrorCode.NotFound, `session ${runId} has no permission request ${requestKey}`);
    if (permission.outcome) throw new PlaneError(ErrorCode.Conflict, `permission request ${requestKey} was already answered (${permission.outcome.by})`);
    if (outcome === 'selected' && !permission.options.some((o) => o.optionId === optionId)) {
      throw new PlaneError(ErrorCode.BadRequest, `choose one of the agent's options: ${permission.options.map((o) => o.optionId).join(', ')}`);
    }
    const detail = { at: new Date().toISOString(), requestKey, by, outcome, ...(outcome === 'selected' ? { optionId } : {}) };
    const [written] = await journal.appendBatch([{ runId, kind: 'Observation', body: { source: 'acp', sessionId: session.sessionId, update: 'decision', detail } }]);
    return { seq: written!.seq };
  }

  /** A permission request answered at the plane: approve with one of the agent's options, or deny (cancel it). */
  async function decidePermission(request: PermissionDecision): Promise<RunView> {
    const [runId, step] = request.waitId.split('/');
    if (runId !== request.runId || step === undefined) throw new PlaneError(ErrorCode.BadRequest, `${request.waitId} is not a wait of run ${request.runId}`);
    const current = await fold(request.runId);
    const wait = pendingOf(current);
    if (!wait || wait.waitId !== request.waitId) throw new PlaneError(ErrorCode.Conflict, `session ${request.runId} has no open permission request ${request.waitId}: it was answered, cancelled or has ended`);
    if (wait.subjectHash !== request.subjectHash) throw new PlaneError(ErrorCode.Conflict, 'the permission request changed since it was shown: read it again');
    if (request.decision === 'snooze') throw new PlaneError(ErrorCode.BadRequest, 'a permission request cannot be snoozed: the agent is waiting for it now; answer it, or deny to cancel it');
    if (request.decision === 'approve') {
      if (request.value?.kind !== 'permission') throw new PlaneError(ErrorCode.BadRequest, "answer a permission request with value {kind: 'permission', optionId} naming one of the agent's options");
      await answer({ runId: request.runId, requestKey: wait.subject.requestKey, outcome: 'selected', optionId: request.value.optionId });
    } else {
      await answer({ runId: request.runId, requestKey: wait.subject.requestKey, outcome: 'cancelled' });
    }
    return runViewOf(await fold(request.runId));
  }

  /** Sessions whose permission request waits for a person at the plane, as waiting runs. */
  async function waiting(limit: number): Promise<RunView[]> {
    const out: RunView[] = [];
    for (const row of await journal.observedRuns(limit)) {
      if (row.lastKind === 'RunSealed') continue;
      const session = await fold(row.runId, row.lastSeq);
      if (pendingOf(session)) out.push(runViewOf(session));
    }
    return out;
  }

  const runView = async (runId: string): Promise<RunView> => runViewOf(await fold(runId));

  return {
    /** For the plane's approvals and runs commands (plane.ts): observed sessions as waiting runs. */
    inbox: { waiting, runView, decide: (request: PermissionDecision) => serialized(request.runId, () => decidePermission(request)) },
    handlers: {
    'acp.record': (request) => serialized(request.runId, () => record(request)),
    'acp.answer': (request) => serialized(request.runId, () => answer(request)),
    async 'acp.decisions'({ runId, afterSeq }) {
      const records = await journal.readRun(runId, afterSeq + 1, 10_000);
      if (afterSeq === 0 && !isAcpObservation(records[0])) throw new PlaneError(ErrorCode.NotFound, `no observed ACP session ${runId}`);
      const decisions: Array<{ seq: number; requestKey: string; outcome: PermissionOutcome; optionId?: string }> = [];
      for (const r of records) {
        if (r.kind !== 'Observation' || r.body.update !== 'decision') continue;
        const d = r.body.detail as { requestKey?: unknown; outcome?: unknown; optionId?: unknown };
        const outcome = d.outcome === 'selected' || d.outcome === 'cancelled' ? d.outcome : null;
        if (typeof d.requestKey !== 'string' || outcome === null) continue;
        decisions.push({ seq: r.seq, requestKey: d.requestKey, outcome, ...(typeof d.optionId === 'string' ? { optionId: d.optionId } : {}) });
      }
      return { decisions, lastSeq: records.length > 0 ? records[records.length - 1]!.seq : afterSeq };
    },
    async 'acp.sessions'({ limit }) {
      const rows = await journal.observedRuns(limit);
      const sessions: SessionSummary[] = [];
      for (const row of rows) {
        const folded = await view(row.runId, row.lastSeq);
        sessions.push(summaryOf(folded));
      }
      return { sessions };
    },
    async 'acp.transcriptErase'({ sessionId }) {
      const runs = await journal.sessionRuns(sessionId);
      const erased = transcripts.store.eraseSession(sessionId);
      if (runs.length === 0 && erased.runIds.length === 0) throw new PlaneError(ErrorCode.NotFound, `no observed ACP session has the session id "${sessionId}" (see \`agentplane acp sessions\`)`);
      for (const runId of erased.runIds) folds.delete(runId);
      const runIds = [...new Set([...runs.map((r) => r.runId), ...erased.runIds])];
      return { sessionId, runIds, lines: erased.lines };
    },
    async 'acp.transcriptRetention'({ days }) {
      const removed = days === undefined ? 0 : transcripts.store.setRetentionDays(days);
      // Every view says the retention: none kept may show the old one.
      if (days !== undefined) folds.clear();
      return { days: transcripts.store.retentionDays(), removed };
    },
    async 'acp.session'({ runId }) {
      const lastSeq = await journal.runLastSeq(runId);
      if (lastSeq === null) throw new PlaneError(ErrorCode.NotFound, `no observed ACP session ${runId}`);
      return view(runId, lastSeq);
    },
    },
  };
}

export interface PermissionDecision {
  runId: string;
  waitId: string;
  subjectHash: string;
  decision: Decision;
  value?: DecisionValue;
}

interface Fold {
  lastSeq: number;
  records: number;
  sessionId: string;
  firstTime: string;
  observed: ObservedMessage[];
  /** The run's transcript lines read so far, as observed messages, and the store's count when read. */
  transcript: ObservedMessage[];
  transcriptStat: TranscriptStat;
  /** Wire index → the seq of the record that observed it (a wait's seq orders the inbox). */
  wireSeqs: Map<number, number>;
  view: SessionView;
}

/** Texts of a proposed edit, cut where an inbox card stops being readable. */
const DIFF_TEXT_LIMIT = 20_000;

function permissionSubject(view: SessionView, permission: PermissionView): WaitSubjectOf<'permission'> {
  const card = view.toolCalls.find((t) => t.toolCallId === permission.toolCall.toolCallId);
  const diff = card?.content.find((c) => c.type === 'diff');
  const cut = (text: string | null) => (text !== null && text.length > DIFF_TEXT_LIMIT ? text.slice(0, DIFF_TEXT_LIMIT) : text);
  return {
    kind: 'permission',
    agent: view.tapName,
    owner: `editor:${view.client.name ?? 'unknown'}`,
    sessionId: view.sessionId,
    requestKey: permission.requestKey,
    toolCall: {
      toolCallId: permission.toolCall.toolCallId,
      title: permission.toolCall.title ?? card?.title ?? null,
      toolKind: permission.toolCall.toolKind ?? card?.toolKind ?? null,
      locations: permission.toolCall.locations.map((l) => ({ path: l.path, ...(l.line !== undefined ? { line: l.line } : {}) })),
    },
    options: permission.options.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })),
    diff:
      diff && diff.type === 'diff'
        ? { path: diff.path, oldText: cut(diff.oldText), newText: cut(diff.newText)!, truncated: Boolean(diff.truncated) || (diff.oldText?.length ?? 0) > DIFF_TEXT_LIMIT || diff.newText.length > DIFF_TEXT_LIMIT }
        : null,
  };
}

/** The first permission request a person can answer at the plane: inbox policy, session not ended, request unanswered. */
function pendingOf(session: Fold): (Wait & { subject: WaitSubjectOf<'permission'> }) | null {
  const view = session.view;
  if (view.policy !== 'inbox' || view.ended) return null;
  const open = view.permissions.find((p) => p.outcome === null);
  if (!open) return null;
  const subject = permissionSubject(view, open);
  return {
    waitId: waitIdOf(view.runId, open.wire, 'permission'),
    reason: 'permission',
    step: open.wire,
    subject,
    subjectHash: createHash('sha256').update(canonicalize(subject)).digest('hex'),
    since: open.at,
    seq: session.wireSeqs.get(open.wire) ?? session.lastSeq,
  };
}

/** An observed session as the runs and approvals commands show runs: `acp:<tap name>`, acting for the editor. */
function runViewOf(session: Fold): RunView {
  const view = session.view;
  const pending = pendingOf(session);
  const owner = `editor:${view.client.name ?? 'unknown'}`;
  return {
    runId: view.runId,
    agent: `acp:${view.tapName}`,
    owner,
    chain: [owner],
    host: `acp:${view.tapName}`,
    status: view.ended ? 'sealed' : pending ? 'suspended' : 'running',
    outcome: view.ended ? 'observed' : null,
    admittedAt: session.firstTime,
    lastAt: view.lastAt,
    records: session.records,
    lastSeq: session.lastSeq,
    spend: NO_SPEND,
    budget: {},
    pending,
  };
}

/** The list row of a folded session: summarizeSession's fields, taken from the view already folded. */
function summaryOf(view: SessionView): SessionSummary {
  const { conversation: _c, plan: _p, toolCalls: _t, permissions: _q, clientEffects: _e, terminals: _x, transcript: _r, ...summary } = view;
  return summary;
}

const sameStat = (a: TranscriptStat, b: TranscriptStat) => a.lines === b.lines && a.lastWire === b.lastWire;

const transcriptMessage = (line: TranscriptLine): ObservedMessage => ({ update: 'message', dir: line.dir, wire: line.wire, at: line.at, message: line.message });

/** Where an observation stands in wire order: its own index, a gap's first, tap/ended after everything; null for those the tap did not number. */
function wireOf(o: ObservedMessage): number | null {
  if (o.update === 'tap/ended') return Number.POSITIVE_INFINITY;
  const fields = o as { wire?: unknown; fromWire?: unknown };
  return typeof fields.wire === 'number' ? fields.wire : typeof fields.fromWire === 'number' ? fields.fromWire : null;
}

/**
 * The journal's observations with the transcript's lines put back where the wire had them:
 * each line before the first observation numbered after it. Both lists are in wire order.
 */
function mergedByWire(journaled: readonly ObservedMessage[], transcript: readonly ObservedMessage[]): ObservedMessage[] {
  if (transcript.length === 0) return [...journaled];
  const out: ObservedMessage[] = [];
  let t = 0;
  for (const o of journaled) {
    const wire = wireOf(o);
    while (wire !== null && t < transcript.length && (transcript[t] as { wire: number }).wire < wire) out.push(transcript[t++]!);
    out.push(o);
  }
  while (t < transcript.length) out.push(transcript[t++]!);
  return out;
}

/** For a session the tap recorded as evidence (tap/started's `record`): what the journal left out, by wire name; null otherwise. */
function evidenceOnly(observed: readonly ObservedMessage[]): Record<string, number> | null {
  const started = observed.find((o) => o.update === 'tap/started') as { record?: unknown } | undefined;
  if (started?.record !== RecordModeSchema.enum.evidence) return null;
  const leftOut: Record<string, number> = {};
  for (const o of observed) {
    const omitted = (o as { omitted?: unknown }).omitted;
    if (typeof omitted !== 'object' || omitted === null) continue;
    for (const [kind, n] of Object.entries(omitted)) if (typeof n === 'number') leftOut[kind] = (leftOut[kind] ?? 0) + n;
  }
  return leftOut;
}
