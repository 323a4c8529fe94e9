/**
 * The runtime's decisions: a person's decision on a waiting run, a protocol caller's answer to
 * the question its own run asks, cancellation, and halts and their lifts. Each is journaled,
 * then the run it touches is scheduled again (runtime-execution.ts) and replays to it.
 */
import { ErrorCode } from '../../src-shared/ipc/errors';
import { CanonicalJsonError, canonicalize } from '../../src-shared/journal/canonical-json';
import { approvalNeedsValue, type Decision, type DecisionValue } from '../../src-shared/vocabulary/decisions';
import type { WaitReason } from '../../src-shared/vocabulary/waits';
import { PlaneError } from '../base/plane-error';
import type { RunHistory } from './run-history';
import type { RunExecution } from './runtime-execution';
import type { RunReads } from './runtime-reads';
import type { RuntimeState } from './runtime-state';

export interface DecideRequest {
  runId: string;
  waitId: string;
  decision: Decision;
  /** The hash of exactly what the person was shown. */
  subjectHash: string;
  by: string;
  reason?: string;
  until?: string;
  /** With an approval of a budget, input or recovery wait only: what the person supplies. */
  value?: DecisionValue;
}

/**
 * A protocol caller's answer to the question its own run asks (an A2A message naming its task):
 * Runtime.answerInput. `by` is the caller as its door authenticated it, never a person.
 */
export interface AnswerRequest {
  runId: string;
  by: string;
  /** The caller's stable id for the message carrying the answer: with `by`, the answer's identity. */
  messageId: string;
  input: unknown;
  /** The wait answered; absent: the one the run stands on when the answer is taken. */
  waitId?: string;
  /**
   * What the caller's door asks policy, in its own words (A2A: `a2a:task.continue` on
   * `agent:<agent>`, `a2a:event.deliver` on `wait:<reason>`), so a rule narrowing which waits a
   * caller may answer reads the same on every door.
   */
  actions: { continue: string; deliver: string };
}

/** Why approving a wait of this reason needs a value, and which. */
const VALUE_NEEDED: { readonly [R in DecisionValue['kind']]: string } = {
  budget: "approving a budget ceiling means raising it: give value {kind: 'budget', budget}",
  input: "answering an input request needs value {kind: 'input', input}",
  recovery: "resolve an in-doubt effect with value {kind: 'recovery', resolution: 'retry' or 'landed'} (deny fails the run)",
  permission: "answer an editor's permission request with value {kind: 'permission', optionId} naming one of the agent's options (deny cancels the request)",
};

/** The value, if any, that may go with `decision` on a wait of `reason`; a refusal says why not. */
function checkDecisionValue(decision: Decision, reason: WaitReason, value: DecisionValue | undefined): void {
  if (value !== undefined && decision !== 'approve') throw new PlaneError(ErrorCode.BadRequest, `a ${decision} carries no value`);
  if (value !== undefined && value.kind !== reason) throw new PlaneError(ErrorCode.BadRequest, `a ${value.kind} value does not answer this ${reason} wait`);
  if (decision === 'approve' && value === undefined && approvalNeedsValue(reason)) throw new PlaneError(ErrorCode.BadRequest, VALUE_NEEDED[reason]);
}

/** Whether two JSON values are the same value (their canonical forms agree); a value canonical JSON refuses is the same as nothing. */
function sameJson(a: unknown, b: unknown): boolean {
  try {
    return canonicalize(a) === canonicalize(b);
  } catch {
    return false;
  }
}

const HALT_SCOPE = /^(subject|agent):.+$/;

export class RunDecisions {
  private readonly decideLocks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly state: RuntimeState,
    private readonly reads: RunReads,
    private readonly execution: RunExecution,
  ) {}

  async decide(request: DecideRequest): Promise<RunHistory> {
    await this.state.usable();
    // One decision at a time per run: a double click must not approve twice.
    return this.oneDecisionAtATime(request.runId, () => this.decideNow(request));
  }

  /** Runs `act` after every decision (or answer) already asked on this run has been taken. */
  private async oneDecisionAtATime<T>(runId: string, act: () => Promise<T>): Promise<T> {
    const previous = this.decideLocks.get(runId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(act);
    this.decideLocks.set(runId, next);
    try {
      return await next;
    } finally {
      if (this.decideLocks.get(runId) === next) this.decideLocks.delete(runId);
    }
  }

  private async decideNow(request: DecideRequest): Promise<RunHistory> {
    const journal = this.state.journal;
    if (this.state.executing.has(request.runId)) await this.state.executing.get(request.runId);
    const history = await this.reads.history(request.runId);
    if (history.status === 'sealed') throw new PlaneError(ErrorCode.Conflict, `run ${request.runId} has ended (${history.outcome}); there is nothing to decide`);
    const pending = history.pending;
    if (!pending) throw new PlaneError(ErrorCode.Conflict, `run ${request.runId} is not waiting for a decision`);
    if (pending.waitId !== request.waitId) throw new PlaneError(ErrorCode.Conflict, `run ${request.runId} is waiting on ${pending.waitId}, not ${request.waitId}`);
    if (pending.reason === 'halt') throw new PlaneError(ErrorCode.Conflict, `run ${request.runId} is withheld by a halt; lift the halt to release it`);
    if (request.subjectHash !== pending.subjectHash) {
      throw new PlaneError(ErrorCode.Conflict, 'what was decided is not what is waiting (its hash differs): refresh and decide again');
    }
    const value = request.value;
    if (request.decision === 'snooze' && (!request.until || Number.isNaN(Date.parse(request.until)))) {
      throw new PlaneError(ErrorCode.BadRequest, 'a snooze needs `until`, an ISO-8601 time');
    }
    checkDecisionValue(request.decision, pending.reason, value);
    await journal.append({
      runId: request.runId,
      kind: 'Decision',
      body: {
        waitId: request.waitId,
        decision: request.decision,
        by: request.by,
        subjectHash: request.subjectHash,
        ...(request.reason ? { reason: request.reason } : {}),
        ...(request.until ? { until: request.until } : {}),
        ...(value !== undefined ? { value } : {}),
      },
    });
    if (value?.kind === 'budget') {
      await journal.append({ runId: request.runId, kind: 'BudgetVerdict', body: { step: pending.step, verdict: 'raised', spent: history.spend, budget: value.budget } });
    }
    if (request.decision === 'snooze') return this.reads.history(request.runId);
    this.execution.schedule(request.runId);
    // A deny ends the run (its replay up to the wait performs nothing): answered once it has, so
    // the person is shown the run as their decision left it (denied), as cancel() answers, and
    // not `running` for the moment before its seal. An approval goes on for as long as the run's
    // work takes, so it is answered at once.
    return request.decision === 'deny' ? this.execution.settled(request.runId) : this.reads.history(request.runId);
  }

  /**
   * A protocol caller answers the question its own run asks (docs/GOVERNED-RUNTIME.md: "task
   * input continues the same run"). Narrower than decide() on purpose: only an `input` wait,
   * only the caller's own run, only an approval carrying the answer. Approval, payment, budget,
   * oversight, recovery, halt and permission waits are a person's decision at this plane
   * whatever policy says: letting the run's own caller decide them would let it approve its own
   * run's risky effect. Serialised with decide() under the same per-run lock, so an answer and a
   * person's decision (or the same answer sent twice at once) cannot both land on one wait.
   */
  async answerInput(request: AnswerRequest): Promise<{ history: RunHistory; repeated: boolean }> {
    await this.state.usable();
    return this.oneDecisionAtATime(request.runId, () => this.answerNow(request));
  }

  private async answerNow(request: AnswerRequest): Promise<{ history: RunHistory; repeated: boolean }> {
    const journal = this.state.journal;
    // Unlike decide(), not waiting for an execution in flight to reach its wait: an answer is to
    // the question the caller was shown, so a run still working refuses it (the journal says
    // which). A run that has just suspended answers as waiting; schedule() queues its resumption
    // behind the execution that is ending.
    const history = await this.reads.history(request.runId);
    // Another caller's run reads exactly as an unknown one: an id tells nobody else it exists.
    if (history.owner !== request.by) throw new PlaneError(ErrorCode.NotFound, `no run ${request.runId}`);
    // The same message again (a retry after a lost answer) finds its decision and changes
    // nothing, whatever the run has done since: checked before the run's state, so a retry
    // after the run ended still answers the run as it stands.
    const taken = [...history.decisions.values()].flat().find((d) => d.by === request.by && d.messageId === request.messageId);
    if (taken) {
      // The id names one message: the same id with another answer is a caller's mistake, said
      // rather than answered as a repeat (which would drop the new answer silently).
      if (!sameJson(taken.value?.kind === 'input' ? taken.value.input : undefined, request.input)) {
        throw new PlaneError(ErrorCode.BadRequest, `messageId ${request.messageId} already answered this run with another value; a new answer needs a new messageId`);
      }
      return { history, repeated: true };
    }
    if (history.status === 'sealed') throw new PlaneError(ErrorCode.Conflict, `run ${request.runId} has ended (${history.outcome}); there is no question to answer`);
    const pending = history.pending;
    if (!pending) throw new PlaneError(ErrorCode.Conflict, `run ${request.runId} is running, not waiting for input`);
    if (request.waitId !== undefined && pending.waitId !== request.waitId) throw new PlaneError(ErrorCode.Conflict, `run ${request.runId} is waiting on ${pending.waitId}, not ${request.waitId}`);
    if (pending.reason !== 'input') throw new PlaneError(ErrorCode.Conflict, `run ${request.runId} waits for ${pending.reason}, which only a person at this plane decides`);
    if (request.input === undefined) throw new PlaneError(ErrorCode.BadRequest, 'an answer needs input: the value the run asked for');
    // Refused here, before anything is journaled, with the path of the value canonical JSON
    // cannot write (a lone surrogate, an integer beyond 2^53): the run keeps waiting.
    try {
      canonicalize(request.input);
    } catch (error) {
      if (error instanceof CanonicalJsonError) throw new PlaneError(ErrorCode.BadRequest, `the answer cannot be journaled: ${error.message.replace('$', 'input')}; the run still waits for its answer`);
      throw error;
    }
    // Policy is asked twice (docs/GOVERNED-RUNTIME.md): may this caller continue this task at
    // all, and may it supply this kind of event. A refusal is journaled for the operator, as an
    // admission's is.
    for (const [action, resource] of [
      [request.actions.continue, `agent:${history.agent}`],
      [request.actions.deliver, `wait:${pending.reason}`],
    ] as const) {
      const decision = this.state.options.policy.decide(request.by, action, resource);
      if (decision.allowed) continue;
      const why = decision.rule === null ? 'no rule allows it' : `denied by rule ${decision.rule}`;
      await journal.append({ runId: null, kind: 'AdmissionRefused', body: { agent: history.agent, principal: request.by, action, resource, reason: `answering run ${request.runId}: ${why}` } });
      throw new PlaneError(ErrorCode.Forbidden, 'the plane refused this answer');
    }
    await journal.append({
      runId: request.runId,
      kind: 'Decision',
      body: { waitId: pending.waitId, decision: 'approve', by: request.by, subjectHash: pending.subjectHash, value: { kind: 'input', input: request.input }, messageId: request.messageId },
    });
    this.execution.schedule(request.runId);
    return { history: await this.reads.history(request.runId), repeated: false };
  }

  // ---- cancellation and halts ----

  async cancel(runId: string, by: string, reason?: string): Promise<RunHistory> {
    const state = this.state;
    await state.usable();
    const history = await this.reads.history(runId);
    if (history.status === 'sealed') throw new PlaneError(ErrorCode.Conflict, `run ${runId} has already ended (${history.outcome})`);
    if (history.cancelled) throw new PlaneError(ErrorCode.Conflict, `run ${runId} is already being cancelled`);
    await state.journal.append({ runId, kind: 'Cancelled', body: { by, ...(reason ? { reason } : {}) } });
    state.cancelRequests.add(runId);
    await this.execution.cancelChildren(runId, by);
    // A running run honours it at its next step boundary; a waiting one is sealed by the replay now.
    if (!state.executing.has(runId)) this.execution.schedule(runId);
    return this.execution.settled(runId);
  }

  async halt(scope: string, by: string, reason?: string): Promise<string[]> {
    const state = this.state;
    await state.usable();
    if (!HALT_SCOPE.test(scope)) throw new PlaneError(ErrorCode.BadRequest, `a halt scope is subject:<principal> or agent:<name>, not "${scope}"`);
    if (state.halts.has(scope)) throw new PlaneError(ErrorCode.Conflict, `${scope} is already halted`);
    await state.journal.append({ runId: null, kind: 'HaltApplied', body: { scope, lifted: false, by, ...(reason ? { reason } : {}) } });
    state.halts.add(scope);
    return state.haltScopes();
  }

  async liftHalt(scope: string, by: string): Promise<string[]> {
    const state = this.state;
    await state.usable();
    if (!state.halts.has(scope)) throw new PlaneError(ErrorCode.Conflict, `${scope} is not halted`);
    await state.journal.append({ runId: null, kind: 'HaltApplied', body: { scope, lifted: true, by } });
    state.halts.delete(scope);
    for (const { history, wait } of await this.reads.waiting()) {
      if (wait.reason === 'halt' && !state.haltedByChain(history.chain, history.agent)) this.execution.schedule(history.runId);
    }
    return state.haltScopes();
  }
}
