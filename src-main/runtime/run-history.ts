/**
 * One run's state, read from its records. Every view of a run (the runs list, the approvals
 * inbox, the recovery list, the executor resuming it after a restart) answers from this one
 * function, so they cannot disagree: three readings of one history would agree until a record
 * kind was added, and then quietly stop.
 *
 * A run waits (`pending`) exactly when its last record is Suspended, or a Suspended followed
 * only by snoozes: anything the run did afterwards (an effect, a seal) means the wait was
 * answered.
 */
import { erasureOfBody } from '../../src-shared/journal/erased-payload';
import type { DecisionV1Body, JournalRecord, RecordBody } from '../../src-shared/journal/records';
import { decisionValueFromV1 } from '../../src-shared/vocabulary/decisions';
import { waitIdParts } from '../../src-shared/vocabulary/ids';
import type { EffectKind } from '../../src-shared/vocabulary/effects';
import type { RunStatus } from '../../src-shared/vocabulary/runs';
import { addSpend, NO_SPEND, type Budget, type Spend } from '../../src-shared/vocabulary/spend';
import { readWaitSubject, type RecordedWaitSubject, type WaitReason } from '../../src-shared/vocabulary/waits';

export interface EffectAttempt {
  started: RecordBody<'EffectStarted'> & { seq: number };
  /** `hash`: the record's, which a fork's EffectReused names (runtime-forks.ts). */
  done?: RecordBody<'EffectDone'> & { seq: number; hash?: string };
  failed?: RecordBody<'EffectFailed'> & { seq: number };
  /** Taken from a fork's parent (EffectReused): the parent's record that held the answer. */
  reused?: RecordBody<'EffectReused'>['steps'][number]['from'];
}

export interface PendingWait {
  waitId: string;
  reason: WaitReason;
  step: number;
  /** As written, typed; one this build does not recognise is kept raw (see readWaitSubject). */
  subject: RecordedWaitSubject;
  subjectHash: string;
  since: string;
  seq: number;
  snoozedUntil?: string;
}

export interface RunHistory {
  runId: string;
  agent: string;
  owner: string;
  chain: string[];
  input: unknown;
  inputProvenance: string;
  /** The input's sensitivity label (RunAdmitted.inputSensitivity); absent, the lowest. */
  inputSensitivity?: string;
  parentRunId?: string;
  parentStep?: number;
  /** A fork (RunForked): its parent, the first step it performs live, what it changed. */
  fork?: RecordBody<'RunForked'>;
  /** Which process executes it: `plane` or `peer:<id>` (on a team plane `plane@<instance>`, `peer:<id>@<instance>`); the last RunAdopted's `to`. */
  host?: string;
  /** Who held it from which seq: the admission's host, then each RunAdopted's `to` (docs/TEAM-PLANE.md). */
  heldBy?: Array<{ seq: number; host: string }>;
  /** The context it continues (the id of the run that opened it); absent, the run is its own context. */
  context?: string;
  /** Its owner's payloads erased (docs/ERASURE.md): when, by whom, why; its input and results read as gone. */
  erased?: { at: string; by: string; reason: string };
  admittedAt: string;
  /** The RunAdmitted's seq. */
  admittedSeq: number;
  /** The manifest's budget, as raised by decisions since. */
  budget: Budget;
  spend: Spend;
  status: RunStatus;
  outcome?: RecordBody<'RunSealed'>['outcome'];
  result?: unknown;
  /** As the RunSealed holds it: its code any string, since an older build may have written it (records.ts, ErrorInfo). */
  error?: { code: string; message: string };
  steps: Map<number, EffectAttempt[]>;
  decisions: Map<string, Array<RecordBody<'Decision'> & { seq: number; time: string }>>;
  /** Every wait the run entered, by waitId (answered or not). */
  waits: Map<string, PendingWait>;
  pending: PendingWait | null;
  cancelled: { by: string; reason?: string } | null;
  records: number;
  lastSeq: number;
  lastTime: string;
  /**
   * The peers the run's effects called (`peer:<id>`), each once, in the order first called; and
   * every payment effect that completed, its request and result as written. Spend reads these
   * (by peer, payment intents) from summaries, so it never folds a run's every effect to find
   * its few peer calls and payments.
   */
  peersCalled: string[];
  paymentsDone: Array<{ request: unknown; result: unknown }>;
  /** Steps whose effect a protected field refused (ProvenanceVerdict `refused`): replay refuses them again without a second record. */
  sinkRefused?: number[];
}

/**
 * A run's history without its per-step detail (effects, decisions, waits): what a list shows.
 * A list of a thousand runs of a thousand records each holds a thousand of these, where full
 * histories would hold every record folded (measured: serve's heap passed 512 MB listing 901
 * such runs, and the Runs list never appeared under that limit).
 */
export type RunSummary = Omit<RunHistory, 'steps' | 'decisions' | 'waits'>;

/** An admission whose payload was erased gives its history `erased`. */
function erasedOf(body: Record<string, unknown>): { erased?: RunHistory['erased'] } {
  const erased = erasureOfBody(body);
  return erased ? { erased } : {};
}

export function summaryOf(history: RunHistory): RunSummary {
  const { steps: _steps, decisions: _decisions, waits: _waits, ...summary } = history;
  return summary;
}

export class HistoryError extends Error {
  override readonly name = 'HistoryError';
}

export function readRunHistory(records: readonly JournalRecord[]): RunHistory {
  const first = records[0];
  if (!first) throw new HistoryError('run ? does not start with RunAdmitted');
  const fold = new RunFold(first);
  for (const record of records) fold.add(record);
  return fold.finish();
}

/**
 * readRunHistory one record at a time, so a long run is folded page by page as it is read:
 * reading a run of 100,000 records whole held every record parsed at once (about 170 MB on
 * `runs.get`, bench/memory.bench.ts), where a page at a time holds one page and the history.
 *
 * `detail: false` folds a summary: the effects' attempts and the decisions are not kept (a
 * summary never shows them, and in a long run they are nearly all the history holds). An
 * effect name (`'a2a'`) keeps that effect's attempts only, and no decisions: what a view of one
 * kind of effect across many runs reads. Waits are kept either way: a Decision v1 is read by
 * the reason of the wait it answered.
 */
export class RunFold {
  private readonly history: RunHistory;
  /** The request of each step whose latest attempt is a payment not yet done (paymentsDone). */
  private readonly openPayments = new Map<number, unknown>();

  /**
   * A fold that goes on from a history folded with detail: `records`, the run's records after
   * its last, are added to a copy (the history itself, which a cache may hold, is not changed).
   */
  static continuing(history: RunHistory, records: readonly JournalRecord[]): RunHistory {
    const fold = Object.create(RunFold.prototype) as RunFold;
    const steps = new Map([...history.steps].map(([step, attempts]) => [step, attempts.map((a) => ({ ...a }))]));
    const decisions = new Map([...history.decisions].map(([waitId, list]) => [waitId, [...list]]));
    const open = new Map<number, unknown>();
    for (const [step, attempts] of steps) {
      const last = attempts.at(-1);
      if (last?.started.effect === 'payment' && !last.done && !last.failed) open.set(step, last.started.request);
    }
    Object.assign(fold, {
      detail: true,
      openPayments: open,
      history: { ...history, steps, decisions, waits: new Map(history.waits), heldBy: [...(history.heldBy ?? [])], peersCalled: [...history.peersCalled], paymentsDone: [...history.paymentsDone] },
    });
    for (const record of records) fold.add(record);
    return fold.finish();
  }

  constructor(
    first: JournalRecord,
    private readonly detail: boolean | EffectKind = true,
  ) {
    if (first.kind !== 'RunAdmitted') throw new HistoryError(`run ${first.runId ?? '?'} does not start with RunAdmitted`);
    const admitted = first.body as RecordBody<'RunAdmitted'>;
    this.history = {
      runId: first.runId!,
      agent: admitted.agent,
      owner: admitted.owner,
      chain: admitted.chain,
      input: admitted.input,
      inputProvenance: admitted.inputProvenance,
      ...(admitted.inputSensitivity !== undefined ? { inputSensitivity: admitted.inputSensitivity } : {}),
      parentRunId: admitted.parentRunId,
      parentStep: admitted.parentStep,
      host: admitted.host ?? 'plane',
      heldBy: [{ seq: first.seq, host: admitted.host ?? 'plane' }],
      ...(admitted.context !== undefined ? { context: admitted.context } : {}),
      ...erasedOf(first.body),
      admittedAt: first.time,
      admittedSeq: first.seq,
      budget: { ...admitted.budget },
      spend: NO_SPEND,
      status: 'running',
      steps: new Map(),
      decisions: new Map(),
      waits: new Map(),
      pending: null,
      cancelled: null,
      records: 0,
      lastSeq: first.seq,
      lastTime: first.time,
      peersCalled: [],
      paymentsDone: [],
    };
  }

  /** The next record of the run, in seq order (the first is the RunAdmitted the fold began with). */
  add(record: JournalRecord): void {
    const history = this.history;
    history.records += 1;
    history.lastSeq = record.seq;
    history.lastTime = record.time;
    const body = record.body as Record<string, unknown>;
    switch (record.kind) {
      case 'EffectStarted': {
        const { effect, name, step, request } = body as RecordBody<'EffectStarted'>;
        if (effect === 'peer') {
          const peer = `peer:${name.split('/')[0]}`;
          if (!history.peersCalled.includes(peer)) history.peersCalled.push(peer);
        }
        if (effect === 'payment') this.openPayments.set(step, request);
        else this.openPayments.delete(step);
        if (this.detail === true || this.detail === effect) {
          const started = { ...(body as RecordBody<'EffectStarted'>), seq: record.seq };
          const attempts = history.steps.get(started.step) ?? [];
          attempts.push({ started });
          history.steps.set(started.step, attempts);
        }
        history.pending = null;
        break;
      }
      case 'EffectDone':
      case 'EffectFailed': {
        const outcome = body as RecordBody<'EffectDone'> | RecordBody<'EffectFailed'>;
        if (record.kind === 'EffectDone' && this.openPayments.has(outcome.step)) {
          history.paymentsDone.push({ request: this.openPayments.get(outcome.step), result: (outcome as RecordBody<'EffectDone'>).result });
          this.openPayments.delete(outcome.step);
        }
        // Only a kept attempt is in steps: a step's attempts are all of one effect.
        const attempt = history.steps.get(outcome.step)?.at(-1);
        if (attempt) {
          if (record.kind === 'EffectDone') attempt.done = { ...(outcome as RecordBody<'EffectDone'>), seq: record.seq, hash: record.hash };
          else attempt.failed = { ...(outcome as RecordBody<'EffectFailed'>), seq: record.seq };
        }
        history.spend = addSpend(history.spend, outcome.spend);
        if (record.kind === 'EffectDone' || (outcome as RecordBody<'EffectFailed'>).disposition !== 'InDoubt') history.pending = null;
        break;
      }
      case 'Suspended': {
        const s = body as RecordBody<'Suspended'>;
        const wait: PendingWait = { waitId: s.waitId, reason: s.reason, step: s.step, subject: readWaitSubject(s.reason, s.subject), subjectHash: s.subjectHash, since: record.time, seq: record.seq };
        history.waits.set(s.waitId, wait);
        history.pending = wait;
        break;
      }
      case 'Decision': {
        const d = record.v === 1 ? decisionFromV1(body as DecisionV1Body, history) : (body as RecordBody<'Decision'>);
        if (this.detail === true) {
          const list = history.decisions.get(d.waitId) ?? [];
          list.push({ ...d, seq: record.seq, time: record.time });
          history.decisions.set(d.waitId, list);
        }
        if (d.decision === 'snooze' && history.pending?.waitId === d.waitId) {
          history.pending = { ...history.pending, snoozedUntil: d.until };
        } else if (history.pending?.waitId === d.waitId) {
          history.pending = null;
        }
        break;
      }
      case 'BudgetVerdict': {
        const v = body as RecordBody<'BudgetVerdict'>;
        if (v.verdict === 'raised') history.budget = { ...v.budget };
        break;
      }
      case 'ProvenanceVerdict': {
        const v = body as RecordBody<'ProvenanceVerdict'>;
        if (v.verdict === 'refused') history.sinkRefused = [...(history.sinkRefused ?? []), v.step];
        break;
      }
      case 'Cancelled': {
        const c = body as RecordBody<'Cancelled'>;
        history.cancelled = { by: c.by, reason: c.reason };
        break;
      }
      case 'RunForked':
        history.fork = body as RecordBody<'RunForked'>;
        break;
      case 'EffectReused': {
        // Steps answered from the parent's records: each an attempt begun and done at once, spending nothing.
        for (const reused of (body as RecordBody<'EffectReused'>).steps) {
          if (this.detail !== true && this.detail !== reused.effect) continue;
          const started = { step: reused.step, effect: reused.effect, name: reused.name, key: reused.key, request: reused.request, seq: record.seq };
          const done = { step: reused.step, key: reused.key, result: reused.result, spend: NO_SPEND, provenance: reused.provenance, ...(reused.sensitivity !== undefined ? { sensitivity: reused.sensitivity } : {}), seq: record.seq, hash: record.hash };
          history.steps.set(reused.step, [...(history.steps.get(reused.step) ?? []), { started, done, reused: reused.from }]);
        }
        history.pending = null;
        break;
      }
      case 'RunAdopted':
        // Taken over by another instance of a team plane: it holds the run from here on.
        history.host = (body as RecordBody<'RunAdopted'>).to;
        history.heldBy = [...(history.heldBy ?? []), { seq: record.seq, host: history.host }];
        break;
      case 'RunSealed': {
        const s = body as RecordBody<'RunSealed'>;
        history.status = 'sealed';
        history.outcome = s.outcome;
        history.result = s.result;
        history.error = s.error;
        history.pending = null;
        break;
      }
      default:
        break;
    }
  }

  /** The history of every record added; a summary fold's has empty steps and decisions. */
  finish(): RunHistory {
    if (this.history.status !== 'sealed') this.history.status = this.history.pending ? 'suspended' : 'running';
    return this.history;
  }

  /** The seq of the last record added. */
  get lastSeq(): number {
    return this.history.lastSeq;
  }

  /**
   * The history as it stands, apart from this fold, which goes on taking records (a kept summary
   * fold, RunReads): every collection the fold adds to is copied, so what was handed out before
   * stays what it was. (Only a summary fold is kept, whose steps and decisions stay empty.)
   */
  snapshot(): RunHistory {
    const h = this.history;
    return {
      ...h,
      status: h.status === 'sealed' ? 'sealed' : h.pending ? 'suspended' : 'running',
      steps: new Map(h.steps),
      decisions: new Map(h.decisions),
      waits: new Map(h.waits),
      heldBy: [...(h.heldBy ?? [])],
      peersCalled: [...h.peersCalled],
      paymentsDone: [...h.paymentsDone],
    };
  }
}

/**
 * A Decision v1 read as the current version: its untagged value is read by the reason of the
 * wait it answered (the wait recorded before it, else the reason its waitId names).
 */
function decisionFromV1(body: DecisionV1Body, history: RunHistory): RecordBody<'Decision'> {
  const { value, ...rest } = body;
  const reason = history.waits.get(body.waitId)?.reason ?? waitIdParts(body.waitId)?.reason;
  const read = reason === undefined ? undefined : decisionValueFromV1(reason, body.decision, value);
  return { ...rest, ...(read !== undefined ? { value: read } : {}) };
}

/** The deciding (non-snooze) decision on a wait, if any: the latest one. */
export function decisionOn(history: RunHistory, waitId: string): (RecordBody<'Decision'> & { seq: number }) | null {
  const list = history.decisions.get(waitId) ?? [];
  for (let i = list.length - 1; i >= 0; i--) if (list[i]!.decision !== 'snooze') return list[i]!;
  return null;
}
