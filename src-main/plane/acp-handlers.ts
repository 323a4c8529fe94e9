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
 * append-only, so a fold is kept until the run's last seq moves.
 */
import type { JournalRecord } from '../../src-shared/journal/records';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { foldSession, type ObservedMessage } from '../../src-shared/protocol/acp/session-fold';
import type { SessionSummary, SessionView } from '../../src-shared/protocol/acp/session-view';
import { PlaneError } from '../base/plane-error';
import type { Journal } from '../journal/journal';
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

export function acpHandlers(journal: Journal, by: string): Pick<CommandHandlers, 'acp.record' | 'acp.sessions' | 'acp.session' | 'acp.answer' | 'acp.decisions'> {
  const folds = new Map<string, { lastSeq: number; view: SessionView }>();
  // One batch at a time per run, so the check of the run and the append cannot interleave.
  const locks = new Map<string, Promise<unknown>>();

  async function readSession(runId: string): Promise<{ records: JournalRecord[]; sessionId: string }> {
    const records = await journal.readRun(runId, 1, Number.MAX_SAFE_INTEGER);
    const first = records[0];
    if (!isAcpObservation(first)) throw new PlaneError(ErrorCode.NotFound, `no observed ACP session ${runId}`);
    return { records, sessionId: String(first.body.sessionId) };
  }

  async function view(runId: string, lastSeq?: number): Promise<SessionView> {
    const cached = folds.get(runId);
    if (cached && lastSeq !== undefined && cached.lastSeq === lastSeq) return cached.view;
    const { records, sessionId } = await readSession(runId);
    const folded = foldSession(runId, sessionId, observedMessages(records));
    folds.delete(runId);
    folds.set(runId, { lastSeq: records[records.length - 1]!.seq, view: folded });
    if (folds.size > FOLD_CACHE) folds.delete(folds.keys().next().value!);
    return folded;
  }

  async function record(request: Parameters<CommandHandlers['acp.record']>[0]): Promise<{ seq: number; records: number }> {
    const { runId, sessionId, observations, seal } = request;
    const forged = observations.find((o) => PLANE_ONLY_UPDATES.has(o.update));
    if (forged) throw new PlaneError(ErrorCode.Forbidden, `an observation "${forged.update}" is written by the plane, not sent to it`);
    const lastSeq = await journal.store.runLastSeq(runId);
    let before = 0;
    if (lastSeq === null) {
      if (observations[0]?.update !== 'tap/started') throw new PlaneError(ErrorCode.BadRequest, `${runId} is not a run yet: an observed run begins with tap/started`);
    } else {
      const [first] = await journal.readRun(runId, 1, 1);
      if (!isAcpObservation(first)) throw new PlaneError(ErrorCode.Forbidden, `${runId} is not an observed ACP session`);
      if (first.body.sessionId !== sessionId) throw new PlaneError(ErrorCode.Conflict, `${runId} observes session "${String(first.body.sessionId)}", not "${sessionId}"`);
      const [last] = await journal.readRange(lastSeq, lastSeq, 1);
      if (last?.kind === 'RunSealed') throw new PlaneError(ErrorCode.Conflict, `${runId} has been sealed`);
      if (seal) before = (await journal.store.runSeqs(runId)).length;
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
    const lastSeq = await journal.store.runLastSeq(runId);
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

  return {
    'acp.record': (request) => serialized(request.runId, () => record(request)),
    'acp.answer': (request) => serialized(request.runId, () => answer(request)),
    async 'acp.decisions'({ runId, afterSeq }) {
      const records = await journal.readRun(runId, afterSeq + 1, 10_000);
      if (afterSeq === 0 && !isAcpObservation(records[0])) throw new PlaneError(ErrorCode.NotFound, `no observed ACP session ${runId}`);
      const decisions: Array<{ seq: number; requestKey: string; outcome: 'selected' | 'cancelled'; optionId?: string }> = [];
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
      const rows = await journal.store.observedRuns(limit);
      const sessions: SessionSummary[] = [];
      for (const row of rows) {
        const folded = await view(row.runId, row.lastSeq);
        sessions.push(summaryOf(folded));
      }
      return { sessions };
    },
    async 'acp.session'({ runId }) {
      const lastSeq = await journal.store.runLastSeq(runId);
      if (lastSeq === null) throw new PlaneError(ErrorCode.NotFound, `no observed ACP session ${runId}`);
      return view(runId, lastSeq);
    },
  };
}

/** The list row of a folded session: summarizeSession's fields, taken from the view already folded. */
function summaryOf(view: SessionView): SessionSummary {
  const { conversation: _c, plan: _p, toolCalls: _t, permissions: _q, clientEffects: _e, terminals: _x, ...summary } = view;
  return summary;
}
