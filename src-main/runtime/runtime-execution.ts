/**
 * The runtime's execution: runs a run's program by replay-then-continue through a RunContext,
 * one execution of a run at a time, seals it, and starts and waits for the child runs its
 * agent tools call (agent-effect.ts).
 */
import { CURRENT_VERSION, type AnyRecordDraft, type RecordBody, type RecordDraft } from '../../src-shared/journal/records';
import { PlaneError } from '../base/plane-error';
import { errorFields } from '../base/logger';
import { brokenAgentLine } from './manifest';
import { RunContext, type ForkReuse, type RunGovernance } from './run-context';
import type { RunProgram } from './run-program';
import { readRunHistory, RunFold, type RunHistory } from './run-history';
import { DivergenceError, EffectFailure, RunCancelled, RunDenied, RunSuspended } from './run-signals';
import { billedToParent, RunParked, type AgentRunner, type ChildRunRequest, type ChildSeal } from './agent-effect';
import type { FailureInfo } from '../../src-shared/vocabulary/failures';
import type { Budget } from '../../src-shared/vocabulary/spend';
import type { HeldAdmission, StartRequest } from './runtime-admission';
import { MAX_LINKED_CALLS, type RunReads } from './runtime-reads';
import type { RuntimeState } from './runtime-state';

/** What child runs need of the other rooms: admission (runtime-admission.ts) and cancellation (runtime-decisions.ts). */
export interface ChildRunDoors {
  /** Admits a run under `runId`, its budget capped by `budgetCap` (RunAdmission.admit). */
  admit(request: StartRequest, runId: string, budgetCap: Budget | undefined): Promise<unknown>;
  /** Cancels a run (RunDecisions.cancel). */
  cancel(runId: string, by: string, reason?: string): Promise<unknown>;
  /** The program a run executes: a fork's kept manifest, else its agent's (RunForks.programOf). */
  programOf(history: RunHistory): RunProgram | undefined;
  /** What a fork takes from its parent (RunForks.reuseOf); undefined for any other run. */
  reuseOf(history: RunHistory): Promise<ForkReuse | undefined>;
}

export class RunExecution {
  constructor(
    private readonly state: RuntimeState,
    private readonly reads: RunReads,
    private readonly doors: ChildRunDoors,
  ) {}

  /** `heldAdmission`: the admission of a run from `run()`, not yet committed (execute commits it). */
  schedule(runId: string, heldAdmission?: HeldAdmission): void {
    const state = this.state;
    // Another process hosts it: that process picks the change up from the journal.
    if (state.closing || !state.ownRuns.has(runId)) return;
    const previous = state.executing.get(runId);
    const next = (previous ?? Promise.resolve())
      .then(() => this.execute(runId, heldAdmission))
      .catch((error) => state.logger.log('error', `run ${runId} execution failed`, errorFields(error)))
      .finally(() => {
        if (state.executing.get(runId) === next) state.executing.delete(runId);
        for (const resolve of state.settleWaiters.get(runId) ?? []) resolve();
        state.settleWaiters.delete(runId);
      });
    state.executing.set(runId, next);
  }

  /** Resolves when the run has sealed or is waiting (its current execution has ended). */
  async settled(runId: string): Promise<RunHistory> {
    const running = this.state.executing.get(runId);
    if (running) await running;
    return this.reads.history(runId);
  }

  private async execute(runId: string, heldAdmission?: HeldAdmission): Promise<void> {
    const state = this.state;
    if (state.brokenJournal) return;
    // A held admission is read as the run's only record would be (its seq and time are the
    // commit's, not known yet; nothing in an execution reads them for a run with no decisions).
    const history = heldAdmission
      ? readRunHistory([{ seq: 0, runId, kind: 'RunAdmitted', v: CURRENT_VERSION.RunAdmitted, time: new Date().toISOString(), prevHash: '', hash: '', body: heldAdmission.draft.body }])
      : await this.reads.history(runId);
    if (history.status === 'sealed') return;
    // Cancelled, perhaps by a plane that stopped before it reached the run's children.
    if (history.cancelled) await this.cancelChildren(runId, history.cancelled.by);
    const program = this.doors.programOf(history);
    if (!program) {
      const broken = state.brokenAgents.get(history.agent);
      await this.seal(history, null, 'failed', undefined, { code: 'AgentGone', message: broken ? `${history.agent} is broken: ${brokenAgentLine(broken)}` : `${history.agent} is no longer declared on this plane` });
      return;
    }
    const governance: RunGovernance = {
      grants: program.grants,
      approveEveryEffect: program.approveEveryEffect,
      sensitivity: state.sensitivity,
      haltedBy: (h) => state.haltedByChain(h.chain, h.agent),
      cancelRequested: (id) => state.cancelRequests.has(id),
    };
    const cx = new RunContext(history, state.journal, governance, state.options.onModelText, heldAdmission ? [heldAdmission.prepared] : [], await this.doors.reuseOf(history));
    try {
      const result = await program.run(history.input, cx);
      await this.seal(history, cx, 'succeeded', result);
    } catch (error) {
      if (error instanceof RunSuspended) return;
      if (error instanceof RunCancelled) return this.seal(history, cx, 'cancelled');
      if (error instanceof RunDenied) return this.seal(history, cx, 'denied', undefined, { code: 'Denied', message: error.message });
      if (error instanceof DivergenceError) {
        state.logger.log('error', `run ${runId}: ${error.message}`);
        return this.seal(history, cx, 'failed', undefined, { code: 'Divergence', message: error.message });
      }
      if (error instanceof EffectFailure) return this.seal(history, cx, 'failed', undefined, { code: error.code, message: error.message });
      state.logger.log('error', `run ${runId} failed inside the plane`, errorFields(error));
      return this.seal(history, cx, 'failed', undefined, { code: 'Internal', message: 'the run failed inside the plane; the plane log has the detail' });
    } finally {
      state.cancelRequests.delete(runId);
    }
  }

  /** Seals the run; through its context, so the seal commits with whatever the run still holds. */
  private async seal(history: RunHistory, cx: RunContext | null, outcome: RecordBody<'RunSealed'>['outcome'], result?: unknown, error?: FailureInfo): Promise<void> {
    const sealed: RecordDraft<'RunSealed'> = {
      runId: history.runId,
      kind: 'RunSealed',
      body: {
        outcome,
        ...(result !== undefined ? { result: result as never } : {}),
        ...(error ? { error } : {}),
        spend: cx?.spent ?? history.spend,
        records: cx?.recordCount ?? history.records,
      },
    };
    if (cx) {
      await cx.commitWith(sealed as AnyRecordDraft);
      const whole = cx.wholeRunIfOneCommit();
      if (whole) this.reads.keepHistory(readRunHistory(whole));
      else await this.keepContinued(history, cx);
    } else {
      await this.state.journal.append(sealed);
    }
  }

  /**
   * Keeps the sealed run's history folded on from the one the execution began with and the
   * records it committed, when those are every record the run has (nobody else wrote to it
   * meanwhile, which the journal's count of its records says): a long run is then not read back
   * whole just to be shown. Long by its steps as well as its records: a fork's steps taken from
   * its parent share a few large EffectReused records.
   */
  private async keepContinued(history: RunHistory, cx: RunContext): Promise<void> {
    const committed = cx.committedRecords();
    if (history.records === 0 || Math.max(committed.length, cx.stepsTaken) < 1000) return;
    if ((await this.state.journal.runRecordCount(history.runId)) !== history.records + committed.length) return;
    this.reads.keepHistory(RunFold.continuing(history, committed));
  }

  // ---- child runs (agent tools; agent-effect.ts) ----

  agentRunner(): AgentRunner {
    return {
      describe: (name) => {
        const agent = this.state.agents.get(name);
        return agent ? { description: agent.manifest.description, inputSchema: agent.manifest.input } : null;
      },
      startChild: (request) => this.startChild(request),
      sealed: (runId) => this.childSealed(runId),
    };
  }

  /**
   * Admits a child run under the id its parent derived, or finds it admitted already: the
   * parent's effect performed again (re-attached after a restart) never admits a second child.
   * One plane holds the data dir and a run's executions are serialised, so the look-up and the
   * admission cannot interleave with another admission of the same id.
   */
  private async startChild(request: ChildRunRequest): Promise<void> {
    const state = this.state;
    if (state.closing) throw new RunParked(`its child run ${request.runId}`);
    if ((await state.journal.runLastSeq(request.runId)) !== null) {
      const existing = await this.reads.history(request.runId);
      if (existing.parentRunId !== request.parentRunId || existing.agent !== request.agent) {
        throw new EffectFailure('AgentRunClash', `the run ${request.runId} exists but is not this call's child run of ${request.agent}`, 'InDoubt');
      }
      return;
    }
    const program = state.agents.has(request.agent) ? state.programs.get(request.agent) : undefined;
    if (!program) {
      const broken = state.brokenAgents.get(request.agent);
      // Said to a model, which may be a provider's: that the file is broken, not what it holds.
      if (broken) throw new EffectFailure('AgentBroken', `agent ${request.agent} cannot run: its manifest file does not load (the plane's agent list says why)`, 'DidNotHappen');
      throw new EffectFailure('NoSuchAgent', `no agent named ${request.agent} is declared on this plane`, 'DidNotHappen');
    }
    // Checked here too (admission checks it again) so the model is told exactly what was wrong.
    const errors = program.validateInput(request.input);
    if (errors.length > 0) throw new EffectFailure('AgentInputInvalid', `the input for agent ${request.agent} does not match its schema: ${errors.join('; ')}`, 'DidNotHappen');
    const delegator = request.chain.at(-1)!;
    try {
      await this.doors.admit(
        { agent: request.agent, input: request.input, chain: request.chain, via: 'plane', inputProvenance: delegator, parentRunId: request.parentRunId, parentStep: request.parentStep },
        request.runId,
        request.budgetCap,
      );
    } catch (error) {
      if (!(error instanceof PlaneError)) throw error;
      if (state.closing) throw new RunParked(`its child run ${request.runId}`);
      // A refusal by policy or a halt is journaled (AdmissionRefused) and said to the model in
      // the same fixed words a caller gets.
      throw new EffectFailure('AgentNotStarted', `agent ${request.agent} was not started: ${error.message}`, 'DidNotHappen');
    }
  }

  /** Waits for a child run to seal (woken when an execution of it ends); parked when the plane closes first. */
  private async childSealed(runId: string): Promise<ChildSeal> {
    const state = this.state;
    for (;;) {
      // Registered before the history is read, so a seal between the two cannot be missed.
      let wake = (): void => undefined;
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
        state.settleWaiters.set(runId, [...(state.settleWaiters.get(runId) ?? []), resolve]);
      });
      if (state.closing) throw new RunParked(`its child run ${runId}`);
      const history = await this.reads.history(runId);
      if (history.status === 'sealed') {
        const left = (state.settleWaiters.get(runId) ?? []).filter((resolve) => resolve !== wake);
        if (left.length > 0) state.settleWaiters.set(runId, left);
        else state.settleWaiters.delete(runId);
        return { outcome: history.outcome ?? 'failed', ...(history.result !== undefined ? { result: history.result } : {}), ...(history.error ? { error: history.error } : {}), spend: history.spend };
      }
      await woken;
    }
  }

  /**
   * A cancelled run's open child runs are cancelled too: their work was for it, and it is
   * waiting for them. (A child run's own children follow, through the same call.)
   */
  async cancelChildren(runId: string, by: string): Promise<void> {
    for (const row of await this.state.journal.childRuns(runId, MAX_LINKED_CALLS)) {
      if (row.host !== this.state.host) continue;
      const child = await this.reads.history(row.runId).catch(() => null);
      if (!child || child.status === 'sealed' || child.cancelled || !billedToParent(child)) continue;
      await this.doors.cancel(child.runId, by, `its parent run ${runId} was cancelled`).catch((error) => this.state.logger.log('warn', `run ${child.runId}: cancelling with its parent failed`, errorFields(error)));
    }
  }
}
