/**
 * The governed runtime: admission, execution by replay, decisions, cancellation and halts.
 *
 * Execution is always replay-then-continue. To run (or resume) a run, its records are read
 * and its agent's code is run from the start through a RunContext that answers every recorded
 * step from the journal and performs only what is new. So a run resumed after a restart, after
 * an approval or after a lifted halt goes down exactly one code path, and nothing it already
 * did is done twice.
 *
 * Before any replay the journal must verify (chain, hashes, signed checkpoints): a run is not
 * resumed from a history that may have been edited. A plane whose journal does not verify
 * refuses to start, resume or decide runs, and says where the journal broke.
 *
 * Runtime is the public face; the work is done in rooms of one job each, which share one
 * RuntimeState (runtime-state.ts): admission (runtime-admission.ts), execution and child runs
 * (runtime-execution.ts), reads, caches and the follower (runtime-reads.ts), and decisions,
 * answers, cancels and halts (runtime-decisions.ts). What stays here is building them, the
 * start-up check of the journal, the agents' set and closing.
 */
import type { Sensitivity } from '../../src-shared/vocabulary/sensitivity';
import type { EffectKind } from '../../src-shared/vocabulary/effects';
import { scanWholeJournal } from '../journal/journal-workers';
import { runsHeldBy } from '../journal/journal-scan';
import { errorFields } from '../base/logger';
import { startupMark } from '../base/startup-trace';
import type { BrokenAgent, LoadedAgent } from './manifest';
import type { RunLinks } from './run-links';
import type { PendingWait, RunHistory, RunSummary } from './run-history';
import { agentProgram, type RunProgram } from './run-program';
import type { StepDeps } from './step-runner';
import { assertAgentSet, PlaneBuildError, RunAdmission, type StartRequest } from './runtime-admission';
import { RunDecisions, type AnswerRequest, type DecideRequest } from './runtime-decisions';
import { RunExecution } from './runtime-execution';
import { RunForks } from './runtime-forks';
import { diffRuns } from './run-diff';
import type { ForkRequest, ReplayReport, ReplayRequest, RunDiff } from '../../src-shared/protocol/time-travel';
import { RunFollower, RunReads, type OwnedRunsFilter } from './runtime-reads';
import { brokenByName, RuntimeState, type RuntimeOptions } from './runtime-state';

export { agentSetProblems, PlaneBuildError, type AgentSetProblem, type StartRequest } from './runtime-admission';
export type { AnswerRequest, DecideRequest } from './runtime-decisions';
export type { OwnedRunsFilter } from './runtime-reads';
export type { RuntimeOptions } from './runtime-state';

/**
 * The start-up trace's mark (base/startup-trace.ts) for a start-up check run in the background
 * ending: from then on runs may start. The benches time it beside the URL line.
 */
export const JOURNAL_CHECKED_MARK = 'runtime.journal-checked';
/** The start-up trace's mark once the newest runs' summaries are folded (RuntimeOptions.warmRunSummaries). */
export const RUNS_WARMED_MARK = 'runtime.runs-warmed';

export class Runtime {
  private readonly state: RuntimeState;
  private readonly reads: RunReads;
  private readonly execution: RunExecution;
  private readonly admission: RunAdmission;
  private readonly decisions: RunDecisions;
  private readonly follower: RunFollower;
  private readonly forks: RunForks;
  private readonly stepDeps: StepDeps;

  private constructor(private readonly options: RuntimeOptions) {
    const state = new RuntimeState(options);
    this.state = state;
    this.reads = new RunReads(state);
    // A child run is admitted and cancelled as any run is, by the rooms built after this one.
    this.execution = new RunExecution(state, this.reads, {
      admit: (request, runId, budgetCap) => this.admission.admit(request, runId, budgetCap),
      cancel: (runId, by, reason) => this.decisions.cancel(runId, by, reason),
      programOf: (history) => this.forks.programOf(history),
      reuseOf: (history) => this.forks.reuseOf(history),
    });
    this.admission = new RunAdmission(state, this.reads, (runId, held) => this.execution.schedule(runId, held));
    this.forks = new RunForks(state, this.reads, this.admission, () => this.stepDeps);
    this.decisions = new RunDecisions(state, this.reads, this.execution);
    this.follower = new RunFollower(state, this.reads, {
      schedule: (runId) => this.execution.schedule(runId),
      cancelChildren: (runId, by) => this.execution.cancelChildren(runId, by),
    });
    this.stepDeps = {
      providers: options.providers,
      tools: options.tools,
      toolContext: options.toolContext,
      ...(options.peers ? { peers: options.peers } : {}),
      ...(options.mcp ? { mcp: options.mcp } : {}),
      ...(options.a2a ? { a2a: options.a2a } : {}),
      agents: this.execution.agentRunner(),
    };
    for (const agent of options.agents) state.programs.set(agent.manifest.name, agentProgram(agent, this.stepDeps));
    for (const program of options.programs ?? []) {
      if (state.programs.has(program.id)) throw new PlaneBuildError(`two programs are named ${program.id}`);
      state.programs.set(program.id, program);
    }
  }

  /**
   * Builds the runtime: refuses a configuration that widens authority, verifies the journal,
   * restores halts, and resumes runs that were running when the last process stopped.
   */
  static async create(options: RuntimeOptions): Promise<Runtime> {
    const runtime = new Runtime(options);
    const state = runtime.state;
    // A rule letting a principal start an agent whose grants exceed that principal's declared authority is refused, not clipped.
    assertAgentSet([...state.agents.values()], options.policy, options.tools);
    if (!options.checkJournalInBackground) {
      await runtime.startUp();
      return runtime;
    }
    state.startedUp = runtime.startUp().then(
      () => {
        startupMark(JOURNAL_CHECKED_MARK);
        options.logger.log('info', 'the journal verified at start-up; runs may start');
        if (options.warmRunSummaries !== undefined && !state.brokenJournal) {
          // A failure here is a list not warmed: the list's own call folds and reports as always.
          runtime.listRunSummaries(options.warmRunSummaries).then(() => startupMark(RUNS_WARMED_MARK), () => undefined);
        }
      },
      (error: unknown) => {
        // Not verified is not usable: as a journal that fails the check, every write is refused.
        state.brokenJournal ??= `the journal could not be checked at start-up (${error instanceof Error ? error.message : String(error)})`;
        if (!state.closing) options.logger.log('error', 'runtime refuses to replay: the start-up check of the journal failed', errorFields(error));
      },
    );
    return runtime;
  }

  /** Verifies the journal, restores halts, resumes what was running, then follows other writers. */
  private async startUp(): Promise<void> {
    const state = this.state;
    const unsealed = await this.scanJournal();
    if (state.closing) return;
    if (!state.brokenJournal) for (const runId of unsealed) await this.resume(runId);
    await this.follower.start(this.options.followMs ?? 250);
  }

  /**
   * Continues a run this runtime now holds, as after a restart: one that was running continues;
   * one waiting for a person stays waiting (it is replayed when decided), unless what withheld
   * it, a halt, has been lifted since.
   */
  private async resume(runId: string): Promise<void> {
    const state = this.state;
    const history = await this.reads.history(runId);
    const haltLifted = history.pending?.reason === 'halt' && !state.haltedByChain(history.chain, history.agent);
    if (!history.pending || haltLifted) this.execution.schedule(runId);
  }

  /**
   * Takes over the open runs of another runtime host whose lease ended (a dead instance of a
   * team plane, docs/TEAM-PLANE.md): a RunAdopted on each, in one commit, then each resumed
   * from the journal as after a restart, so an effect it began and never recorded an outcome
   * for is settled by the disposition rules (docs/GOVERNED-RUNTIME.md) and none is performed
   * twice. A run of an agent this runtime does not declare is left where it is (`left`), for
   * an instance that does, or for its own when it returns: taken here it could only fail. The
   * caller holds `from`'s lease while this runs.
   */
  async adopt(from: string, reason: string): Promise<{ adopted: string[]; left: Array<{ runId: string; agent: string }> }> {
    const state = this.state;
    await state.usable();
    if (from === state.host) return { adopted: [], left: [] };
    const adopted: string[] = [];
    const left: Array<{ runId: string; agent: string }> = [];
    for (const runId of await runsHeldBy(this.options.journal, from)) {
      const { agent } = await this.reads.summary(runId);
      if (state.programs.has(agent)) adopted.push(runId);
      else left.push({ runId, agent });
    }
    if (adopted.length > 0) {
      await this.options.journal.appendBatch(adopted.map((runId) => ({ runId, kind: 'RunAdopted' as const, body: { from, to: state.host, reason } })));
      for (const runId of adopted) state.ownRuns.add(runId);
      for (const runId of adopted) await this.resume(runId);
    }
    return { adopted, left };
  }

  /** The operator's sensitivity labels and egress ceilings (docs/GOVERNED-RUNTIME.md, "Sensitivity"). */
  get sensitivity(): Sensitivity {
    return this.state.sensitivity;
  }

  /** The runtime host this runtime holds runs as (`plane`, `plane@<instance>`, `peer:<id>`). */
  get host(): string {
    return this.state.host;
  }

  /** Resolves once the start-up check of the journal has ended (at once unless it runs in the background). */
  ready(): Promise<void> {
    return this.state.startedUp;
  }

  /**
   * One pass over the journal: verify it, restore halts, find unsealed runs. On a large journal
   * the pass runs in a journal worker (scanWholeJournal, journal-workers.ts), off the event loop.
   */
  private async scanJournal(): Promise<string[]> {
    const state = this.state;
    const journal = this.options.journal;
    const { report, index } = await scanWholeJournal(journal, {
      checkpoints: journal.checkpoints.readAll(),
      publicKey: journal.key.publicJwk as Record<string, unknown>,
      journalId: journal.journalId,
    });
    // What the pass read before any failure counts, as it did when this fold ran in-thread.
    for (const halt of index.halts) {
      if (halt.lifted) state.halts.delete(halt.scope);
      else state.halts.add(halt.scope);
    }
    const open = index.unsealed.filter((run) => (run.host ?? 'plane') === state.host).map((run) => run.runId);
    for (const runId of open) state.ownRuns.add(runId);
    if (!report.ok) {
      state.brokenJournal = `the journal does not verify (seq ${report.seq ?? '?'}: ${report.reason})`;
      this.options.logger.log('error', 'runtime refuses to replay: journal does not verify', { seq: report.seq, reason: report.reason });
      return [];
    }
    return open;
  }

  listAgents(): LoadedAgent[] {
    return [...this.state.agents.values()];
  }

  /** Agent files that did not load, each with its file, field and problem. */
  listBrokenAgents(): BrokenAgent[] {
    return [...this.state.brokenAgents.values()];
  }

  /**
   * Replaces the agents (the person's files read again while the plane runs). A run already
   * executing keeps the program it started with; anything scheduled from now on (a new run, a
   * run resumed after a decision) runs the agent as it is now, so an edited step shows up on
   * replay as divergence, exactly as after a restart. Throws PlaneBuildError, changing nothing,
   * for a set agentSetProblems refuses: the caller leaves such agents out as broken first.
   */
  replaceAgents(agents: readonly LoadedAgent[], broken: readonly BrokenAgent[]): void {
    const state = this.state;
    assertAgentSet(agents, this.options.policy, this.options.tools);
    for (const name of state.agents.keys()) state.programs.delete(name);
    state.agents = new Map(agents.map((a) => [a.manifest.name, a]));
    for (const agent of agents) state.programs.set(agent.manifest.name, agentProgram(agent, this.stepDeps));
    state.brokenAgents = brokenByName(broken);
  }

  listPrograms(): RunProgram[] {
    return [...this.state.programs.values()];
  }

  /** The halts in force; complete once the start-up check has ended (ready()). */
  haltScopes(): string[] {
    return this.state.haltScopes();
  }

  // ---- admission (runtime-admission.ts) ----

  start(request: StartRequest): Promise<{ runId: string }> {
    return this.admission.start(request);
  }

  /** Admits, runs and resolves with the run's history once it has sealed or waits for a person (RunAdmission.run). */
  /** Forks a run from one of its steps (runtime-forks.ts). */
  fork(request: ForkRequest, chain: string[], via: StartRequest['via']): Promise<{ runId: string }> {
    return this.forks.fork(request, chain, via);
  }

  /** Replays a recorded run under a change, performing nothing (runtime-forks.ts). */
  replay(request: ReplayRequest): Promise<ReplayReport> {
    return this.forks.replay(request);
  }

  /** Two runs step by step (run-diff.ts). */
  async diff(a: string, b: string): Promise<RunDiff> {
    return diffRuns(await this.reads.history(a), await this.reads.history(b));
  }

  run(request: StartRequest): Promise<RunHistory> {
    return this.admission.run(request);
  }

  // ---- execution (runtime-execution.ts) ----

  /** Resolves when the run has sealed or is waiting (its current execution has ended). */
  settled(runId: string): Promise<RunHistory> {
    return this.execution.settled(runId);
  }

  // ---- reading (runtime-reads.ts) ----

  /** One run's history, kept while the run's last seq is its own (RunReads.history). */
  history(runId: string, knownLastSeq?: number): Promise<RunHistory> {
    return this.reads.history(runId, knownLastSeq);
  }

  /** One run's summary: its history less the per-step detail (RunReads.summary). */
  summary(runId: string, knownLastSeq?: number): Promise<RunSummary> {
    return this.reads.summary(runId, knownLastSeq);
  }

  /** Forgets every folded run view: after an erasure, views are folded again from what the records open to now (docs/ERASURE.md). */
  forgetFoldedRuns(): void {
    this.reads.forgetAll();
  }

  /** How many runs and records the folded-history cache holds now (for tests and diagnostics). */
  get historyCache(): { runs: number; records: number } {
    return this.reads.historyCache;
  }

  /** The run that called this one and the runs it called (run-links.ts). */
  links(runId: string): Promise<RunLinks> {
    return this.reads.links(runId);
  }

  /** The newest `limit` runs, each folded in full (steps and decisions too). */
  listRuns(limit: number): Promise<RunHistory[]> {
    return this.reads.listRuns(limit);
  }

  /** The newest `limit` runs, each with the attempts of one effect only in its steps (RunReads.listRunsWithEffect). */
  listRunsWithEffect(limit: number, effect: EffectKind): Promise<RunHistory[]> {
    return this.reads.listRunsWithEffect(limit, effect);
  }

  /** The newest `limit` runs as summaries (RunReads.listRunSummaries). */
  listRunSummaries(limit: number): Promise<RunSummary[]> {
    return this.reads.listRunSummaries(limit);
  }

  /** How many run summaries are kept for listing (for tests and diagnostics). */
  get summaryCache(): number {
    return this.reads.summaryCache;
  }

  /** One owner's runs, newest admission first, a page at a time (RunReads.listOwnedRuns). */
  listOwnedRuns(filter: OwnedRunsFilter, limit: number): Promise<{ runs: RunSummary[]; total: number; nextBeforeSeq: number | null }> {
    return this.reads.listOwnedRuns(filter, limit);
  }

  /** Every run waiting for a person, oldest wait first. */
  waiting(limit = 1000): Promise<Array<{ history: RunSummary; wait: PendingWait }>> {
    return this.reads.waiting(limit);
  }

  // ---- decisions, cancellation and halts (runtime-decisions.ts) ----

  decide(request: DecideRequest): Promise<RunHistory> {
    return this.decisions.decide(request);
  }

  /** A protocol caller answers the question its own run asks (RunDecisions.answerInput). */
  answerInput(request: AnswerRequest): Promise<{ history: RunHistory; repeated: boolean }> {
    return this.decisions.answerInput(request);
  }

  cancel(runId: string, by: string, reason?: string): Promise<RunHistory> {
    return this.decisions.cancel(runId, by, reason);
  }

  halt(scope: string, by: string, reason?: string): Promise<string[]> {
    return this.decisions.halt(scope, by, reason);
  }

  liftHalt(scope: string, by: string): Promise<string[]> {
    return this.decisions.liftHalt(scope, by);
  }

  /** Stops scheduling and waits for executions in flight to reach their next record. */
  async close(): Promise<void> {
    const state = this.state;
    // A start-up check still running is not waited for (on a long journal it takes seconds, and a
    // stop must not): it ends when the journal closes, and seeing `closing` it neither resumes a
    // run nor starts the follower afterwards.
    state.closing = true;
    this.follower.stop();
    // Parents waiting for a child run are parked (agent-effect.ts RunParked), not waited for.
    for (const waiters of state.settleWaiters.values()) for (const resolve of waiters) resolve();
    await Promise.allSettled([...state.executing.values()]);
  }
}
