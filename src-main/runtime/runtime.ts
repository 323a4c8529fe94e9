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
 */
import { ErrorCode } from '../../src-shared/ipc/errors';
import { CURRENT_VERSION, type AnyRecordDraft, type RecordBody, type RecordDraft, type RecordKind } from '../../src-shared/journal/records';
import { CanonicalJsonError, canonicalize } from '../../src-shared/journal/canonical-json';
import { approvalNeedsValue, type Decision, type DecisionValue } from '../../src-shared/vocabulary/decisions';
import { isRunId } from '../../src-shared/vocabulary/ids';
import type { EffectKind } from '../../src-shared/vocabulary/effects';
import type { WaitReason } from '../../src-shared/vocabulary/waits';
import { prepare, type Journal } from '../journal/journal';
import { confirmsCall, linkOf, type RunLink, type RunLinks } from './run-links';
import { scanWholeJournal } from '../journal/journal-workers';
import type { PreparedDraft, StoredRecord } from '../journal/journal-store';
import { PlaneError } from '../base/plane-error';
import { newRunId } from '../base/random-ids';
import type { Logger } from '../base/logger';
import { errorFields } from '../base/logger';
import { startupMark } from '../base/startup-trace';
import { type ModelProvider, pricingOf, unconfiguredProviderMessage } from './model-provider';
import { UNPRICED_REMEDY, unpricedModelWords } from './model-effect';
import type { BrokenAgent, LoadedAgent } from './manifest';
import { brokenAgentLine, grantNeeded } from './manifest';
import { grantsBeyond, MAX_CHAIN_DEPTH, type PolicyEngine } from './policy';
import { RunContext, type RunGovernance } from './run-context';
import { readRunHistory, RunFold, summaryOf, type PendingWait, type RunHistory, type RunSummary } from './run-history';
import { DivergenceError, EffectFailure, RunCancelled, RunDenied, RunSuspended } from './run-signals';
import { agentProgram, type RunProgram } from './run-program';
import type { StepDeps } from './step-runner';
import type { PeerCaller } from './peer-effect';
import type { McpToolCaller } from './mcp-effect';
import type { A2aCaller } from './a2a-effect';
import type { Tool, ToolContext } from './tools';
import { billedToParent, RunParked, tighterBudget, type AgentRunner, type ChildRunRequest, type ChildSeal } from './agent-effect';
import type { Budget } from '../../src-shared/vocabulary/spend';
import type { ModelTextSink } from './model-stream';

export interface RuntimeOptions {
  journal: Journal;
  agents: readonly LoadedAgent[];
  /**
   * Agent files that did not load (the person's own, <data dir>/agents): not runnable, listed
   * with their problem, and a run of one is refused with it rather than as "no agent named".
   */
  brokenAgents?: readonly BrokenAgent[];
  policy: PolicyEngine;
  providers: ReadonlyMap<string, ModelProvider>;
  tools: ReadonlyMap<string, Tool>;
  toolContext: ToolContext;
  logger: Logger;
  /** How agent runs reach local peers (the plane's supervisor and registry). */
  peers?: PeerCaller;
  /** How agent runs reach the MCP servers the user declared (the plane's client pool). */
  mcp?: McpToolCaller;
  /** How agent runs reach remote A2A agents (the plane's A2A client, through netguard). */
  a2a?: A2aCaller;
  /** Programs beyond the agents (a peer's skills). */
  programs?: readonly RunProgram[];
  /**
   * Which process executes the runs this runtime admits: `plane`, or `peer:<id>` for a peer
   * process sharing the data dir. A runtime resumes only its own runs; others it can list and
   * decide, and their host picks the decision up from the journal.
   */
  host?: string;
  /** How often to read records other processes appended (decisions, cancels, halts), ms. */
  followMs?: number;
  /** The most records the folded-history cache holds in all (default HISTORY_CACHE_RECORDS). */
  historyCacheRecords?: number;
  /**
   * Resolve `create` before the start-up check of the journal ends (the long-running plane:
   * `serve`, the desktop app). The check still gates everything it gated: each start,
   * decision, answer, cancel and halt waits for it, and a journal that does not verify is
   * refused as before; reads of the journal answer meanwhile. On a journal of 1M records the
   * check takes seconds (all of it verified, in workers), which otherwise all came before
   * the plane's first answer.
   */
  checkJournalInBackground?: boolean;
  /**
   * Live, coalesced views of performed model calls' answers while they stream (the plane
   * publishes them as `runs.streaming`). Advisory and never journaled: the sealed effect is
   * the record (model-stream.ts).
   */
  onModelText?: ModelTextSink;
}

export interface StartRequest {
  agent: string;
  input: unknown;
  /** Who acts for whom, root first; the last link is the caller policy is asked about. */
  chain: string[];
  via: RecordBody<'RunAdmitted'>['trigger']['via'];
  inputProvenance?: string;
  /** The run (and its step) whose effect made this call, as the caller stated them. */
  parentRunId?: string;
  parentStep?: number;
  /**
   * The context this run continues: the id of a run that opened one (a run with no context of
   * its own), admitted for the same owner on this host. Anything else is refused before the gate.
   */
  context?: string;
}

/** A run's admission from `run()`, held to be committed with its first durable record: the draft, and as prepare() made it. */
interface HeldAdmission {
  draft: RecordDraft<'RunAdmitted'>;
  prepared: PreparedDraft;
}

/** Which of one owner's runs `listOwnedRuns` reads (generic filters; the journal's OwnedRunsQuery with a time for activity). */
export interface OwnedRunsFilter {
  owner: string;
  agent?: string;
  host?: string;
  context?: string;
  /** Only runs with a record at or after this ISO time (whenever they were admitted). */
  activeSince?: string;
  /** Only runs admitted before this journal seq: the previous page's `nextBeforeSeq`. */
  beforeSeq?: number;
}

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

export class PlaneBuildError extends Error {
  override readonly name = 'PlaneBuildError';
}

/** What makes one agent of a set unrunnable beside the others: the field, the words a refusal of the plane uses, and the fix. */
export interface AgentSetProblem {
  agent: string;
  field: string | null;
  message: string;
  fix: string;
}

/**
 * An agent's grants and, through each `agent:<name>` grant, the grants of the agents it may
 * call as tools (each once): starting it lends all of them, so a principal's declared
 * authority must cover all of them. A delegation does not widen what its root may do.
 */
function reachableGrants(agents: ReadonlyMap<string, LoadedAgent>, name: string, seen = new Set<string>()): string[] {
  const agent = agents.get(name);
  if (!agent || seen.has(name)) return [];
  seen.add(name);
  const own = agent.manifest.grants.map((g) => `${g.kind}:${g.name}`);
  const called = agent.manifest.grants.filter((g) => g.kind === 'agent').flatMap((g) => reachableGrants(agents, g.name, seen));
  return [...new Set([...own, ...called])];
}

/**
 * What a set of agents may not hold, agent by agent (manifests load one by one; these need the
 * set, the policy and the tools): a principal allowed to start an agent whose reachable grants
 * exceed that principal's declared authority (refused, not clipped), a tool that does not
 * exist, an agent tool naming an agent the set does not have.
 */
export function agentSetProblems(agents: readonly LoadedAgent[], policy: PolicyEngine, tools: ReadonlyMap<string, Tool>): AgentSetProblem[] {
  const byName = new Map(agents.map((a) => [a.manifest.name, a]));
  const problems: AgentSetProblem[] = [];
  for (const agent of byName.values()) {
    const name = agent.manifest.name;
    const grants = reachableGrants(byName, name);
    for (const principal of policy.principalsAllowedToStart(name)) {
      const beyond = grantsBeyond(policy.policy.authority[principal] ?? [], grants);
      if (beyond.length > 0) {
        problems.push({
          agent: name,
          field: 'grants',
          message: `${principal} may start agent ${name}, whose grants ${beyond.join(', ')} exceed ${principal}'s authority`,
          fix: `remove those grants, or add them to ${principal}'s authority in policy.json`,
        });
      }
    }
    agent.manifest.steps.forEach((step, index) => {
      const need = grantNeeded(step);
      // A model provider that is not configured is refused at run admission (start), not here:
      // a plane without an Anthropic key still runs every agent that does not need one.
      if (need?.startsWith('tool:') && !tools.has(need.slice('tool:'.length))) {
        problems.push({ agent: name, field: `steps.${index}.tool.name`, message: `agent ${name} uses tool ${need.slice(5)}, which does not exist`, fix: `use one of the tools there are: ${[...tools.keys()].join(', ')}` });
      }
      for (const ref of 'model' in step ? (step.model.tools ?? []) : []) {
        if (ref.startsWith('agent:') && !byName.has(ref.slice('agent:'.length))) {
          problems.push({
            agent: name,
            field: `steps.${index}.model.tools`,
            message: `agent ${name} offers the tool ${ref}, but no agent named ${ref.slice('agent:'.length)} is declared`,
            fix: `declare that agent, or remove the tool (and its grant)`,
          });
        }
      }
    });
  }
  return problems;
}

/**
 * The start-up trace's mark (base/startup-trace.ts) for a start-up check run in the background
 * ending: from then on runs may start. The benches time it beside the URL line.
 */
export const JOURNAL_CHECKED_MARK = 'runtime.journal-checked';

const HISTORY_CACHE = 2000;
/**
 * The most records the folded-history cache holds in all, besides its count of runs: a history
 * holds its effects' requests and results, so 2,000 runs of 1,000 records each held ~600 MB
 * after one look at a 1M-record journal (bench/memory.bench.ts). A run longer than this is
 * folded when asked for and not kept.
 */
const HISTORY_CACHE_RECORDS = 100_000;
/** Records read and folded at a time (foldRun): about 1 MB of parsed records per page. */
const FOLD_PAGE = 2000;
/**
 * Run summaries kept for listing (see listRunSummaries): a summary is a few hundred bytes
 * whatever its run's length, so this many cost a few MB, and a journal of this many runs is
 * listed again without folding any run that has not grown.
 */
const SUMMARY_CACHE = 20_000;
/** Calls listed on one run's page: a run that made more shows the first this many. */
const MAX_LINKED_CALLS = 500;
const HALT_SCOPE = /^(subject|agent):.+$/;
/** Whether a request came through a door a person at this plane uses (the window, the browser, the CLI). */
function fromAPerson(via: StartRequest['via']): boolean {
  return via === 'ipc' || via === 'web' || via === 'cli';
}

/** The kinds the follower acts on (Runtime.follow): halts and their lifts, decisions, cancels. */
const FOLLOWED_KINDS: readonly RecordKind[] = ['HaltApplied', 'Decision', 'Cancelled'];
/** Records of those kinds the follower reads at a time. */
const FOLLOW_PAGE = 1000;

export class Runtime {
  private agents: ReadonlyMap<string, LoadedAgent>;
  /** Agent files that did not load, by the name each is listed under (the first of a name). */
  private brokenAgents = new Map<string, BrokenAgent>();
  private readonly programs = new Map<string, RunProgram>();
  private readonly stepDeps: StepDeps;
  private readonly host: string;
  /** Runs this runtime hosts (admitted here, or by an earlier process of the same host). */
  private readonly ownRuns = new Set<string>();
  private followedSeq = 0;
  private follower: ReturnType<typeof setInterval> | null = null;
  private readonly executing = new Map<string, Promise<void>>();
  private readonly cancelRequests = new Set<string>();
  private readonly halts = new Set<string>();
  private readonly settleWaiters = new Map<string, Array<() => void>>();
  private readonly decideLocks = new Map<string, Promise<unknown>>();
  private brokenJournal: string | null = null;
  /** The start-up check of the journal (see checkJournalInBackground); never rejects. */
  private startedUp: Promise<void> = Promise.resolve();
  /** Folded histories by run, most recently used last (see history()). */
  private readonly histories = new Map<string, RunHistory>();
  /** The records the cached histories hold, in all (bounded by HISTORY_CACHE_RECORDS). */
  private historyRecords = 0;
  /** Run summaries by run, most recently used last, each true while its run's lastSeq is its own. */
  private readonly summaries = new Map<string, RunSummary>();
  private closing = false;

  private constructor(private readonly options: RuntimeOptions) {
    this.agents = new Map(options.agents.map((a) => [a.manifest.name, a]));
    this.brokenAgents = brokenByName(options.brokenAgents ?? []);
    this.host = options.host ?? 'plane';
    this.stepDeps = {
      providers: options.providers,
      tools: options.tools,
      toolContext: options.toolContext,
      ...(options.peers ? { peers: options.peers } : {}),
      ...(options.mcp ? { mcp: options.mcp } : {}),
      ...(options.a2a ? { a2a: options.a2a } : {}),
      agents: this.agentRunner(),
    };
    for (const agent of options.agents) this.programs.set(agent.manifest.name, agentProgram(agent, this.stepDeps));
    for (const program of options.programs ?? []) {
      if (this.programs.has(program.id)) throw new PlaneBuildError(`two programs are named ${program.id}`);
      this.programs.set(program.id, program);
    }
  }

  /**
   * Builds the runtime: refuses a configuration that widens authority, verifies the journal,
   * restores halts, and resumes runs that were running when the last process stopped.
   */
  static async create(options: RuntimeOptions): Promise<Runtime> {
    const runtime = new Runtime(options);
    runtime.checkAuthority();
    if (!options.checkJournalInBackground) {
      await runtime.startUp();
      return runtime;
    }
    runtime.startedUp = runtime.startUp().then(
      () => {
        startupMark(JOURNAL_CHECKED_MARK);
        options.logger.log('info', 'the journal verified at start-up; runs may start');
      },
      (error: unknown) => {
        // Not verified is not usable: as a journal that fails the check, every write is refused.
        runtime.brokenJournal ??= `the journal could not be checked at start-up (${error instanceof Error ? error.message : String(error)})`;
        if (!runtime.closing) options.logger.log('error', 'runtime refuses to replay: the start-up check of the journal failed', errorFields(error));
      },
    );
    return runtime;
  }

  /** Verifies the journal, restores halts, resumes what was running, then follows other writers. */
  private async startUp(): Promise<void> {
    const unsealed = await this.scanJournal();
    if (this.closing) return;
    if (!this.brokenJournal) {
      // Runs that were running when the last process stopped continue now; runs waiting for a
      // person stay waiting (they are replayed when decided), unless what withheld them, a
      // halt, has been lifted since.
      for (const runId of unsealed) {
        const history = await this.history(runId);
        const haltLifted = history.pending?.reason === 'halt' && !this.haltedByChain(history.chain, history.agent);
        if (!history.pending || haltLifted) this.schedule(runId);
      }
    }
    this.followedSeq = (await this.options.journal.head()).seq;
    if (this.closing) return;
    this.follower = setInterval(() => void this.follow().catch(() => undefined), this.options.followMs ?? 250);
    this.follower.unref();
  }

  /** Resolves once the start-up check of the journal has ended (at once unless it runs in the background). */
  ready(): Promise<void> {
    return this.startedUp;
  }

  /** Waits for the start-up check, then refuses if the journal is broken or the runtime closing. */
  private async usable(): Promise<void> {
    await this.startedUp;
    this.assertUsable();
  }

  /** A rule letting a principal start an agent whose grants exceed that principal's declared authority is refused, not clipped. */
  private checkAuthority(): void {
    const problems = agentSetProblems([...this.agents.values()], this.options.policy, this.options.tools);
    if (problems.length > 0) throw new PlaneBuildError(`the plane's configuration is refused: ${problems.map((p) => p.message).join('; ')}`);
  }

  /**
   * One pass over the journal: verify it, restore halts, find unsealed runs. On a large journal
   * the pass runs in a journal worker (scanWholeJournal, journal-workers.ts), off the event loop.
   */
  private async scanJournal(): Promise<string[]> {
    const journal = this.options.journal;
    const { report, index } = await scanWholeJournal(journal, {
      checkpoints: journal.checkpoints.readAll(),
      publicKey: journal.key.publicJwk as Record<string, unknown>,
      journalId: journal.journalId,
    });
    // What the pass read before any failure counts, as it did when this fold ran in-thread.
    for (const halt of index.halts) {
      if (halt.lifted) this.halts.delete(halt.scope);
      else this.halts.add(halt.scope);
    }
    const open = index.unsealed.filter((run) => (run.host ?? 'plane') === this.host).map((run) => run.runId);
    for (const runId of open) this.ownRuns.add(runId);
    if (!report.ok) {
      this.brokenJournal = `the journal does not verify (seq ${report.seq ?? '?'}: ${report.reason})`;
      this.options.logger.log('error', 'runtime refuses to replay: journal does not verify', { seq: report.seq, reason: report.reason });
      return [];
    }
    return open;
  }

  private assertUsable(): void {
    if (this.brokenJournal) throw new PlaneError(ErrorCode.Unavailable, `refused: ${this.brokenJournal}; no run is started, resumed or decided until it does`);
    if (this.closing) throw new PlaneError(ErrorCode.Unavailable, 'the plane is shutting down');
  }

  listAgents(): LoadedAgent[] {
    return [...this.agents.values()];
  }

  /** Agent files that did not load, each with its file, field and problem. */
  listBrokenAgents(): BrokenAgent[] {
    return [...this.brokenAgents.values()];
  }

  /**
   * Replaces the agents (the person's files read again while the plane runs). A run already
   * executing keeps the program it started with; anything scheduled from now on (a new run, a
   * run resumed after a decision) runs the agent as it is now, so an edited step shows up on
   * replay as divergence, exactly as after a restart. Throws PlaneBuildError, changing nothing,
   * for a set agentSetProblems refuses: the caller leaves such agents out as broken first.
   */
  replaceAgents(agents: readonly LoadedAgent[], broken: readonly BrokenAgent[]): void {
    const problems = agentSetProblems(agents, this.options.policy, this.options.tools);
    if (problems.length > 0) throw new PlaneBuildError(`the plane's configuration is refused: ${problems.map((p) => p.message).join('; ')}`);
    for (const name of this.agents.keys()) this.programs.delete(name);
    this.agents = new Map(agents.map((a) => [a.manifest.name, a]));
    for (const agent of agents) this.programs.set(agent.manifest.name, agentProgram(agent, this.stepDeps));
    this.brokenAgents = brokenByName(broken);
  }

  listPrograms(): RunProgram[] {
    return [...this.programs.values()];
  }

  /** The halts in force; complete once the start-up check has ended (ready()). */
  haltScopes(): string[] {
    return [...this.halts].sort();
  }

  // ---- admission ----

  async start(request: StartRequest): Promise<{ runId: string }> {
    return this.admit(request, newRunId(), undefined);
  }

  /**
   * Admits a run for a caller who waits for its end (a peer's skill call, `runs.start` with
   * wait), runs it, and resolves with its history once it has sealed or is waiting for a person.
   * The admission is not committed on its own: it is held with the run's local records (see
   * RunContext's `held`) and committed with the run's first durable record. A run of local
   * effects alone (ping, a file listing, a template skill) is then one commit from admission to
   * seal, made before its caller is answered, and concurrent calls share commits (the journal's
   * group commit). Nobody learns the run's id before that commit, so nothing can ask for a run
   * the journal does not hold yet. Refusals are journaled at once, as with `start`.
   */
  async run(request: StartRequest): Promise<RunHistory> {
    const runId = newRunId();
    const admission = await this.admission(request, runId, undefined);
    // Refused here, with the words an append would use, rather than at the run's first commit,
    // which then writes it as prepared here.
    const prepared = prepare(admission);
    this.ownRuns.add(runId);
    this.schedule(runId, { draft: admission, prepared });
    const running = this.executing.get(runId);
    if (running) await running;
    // Sealed in the one commit that admitted it: its history was folded from that commit's
    // records at the seal (see seal), with nothing to read back.
    const sealed = this.histories.get(runId);
    if (sealed?.status === 'sealed') return sealed;
    if ((await this.options.journal.store.runLastSeq(runId)) === null) {
      throw new PlaneError(ErrorCode.Internal, 'the run could not be written to the journal, so it did not happen (the plane log has the detail)');
    }
    return this.history(runId);
  }

  /** Admission under `runId` (random for a new run; derived for a child run), its budget capped by `budgetCap`. */
  private async admit(request: StartRequest, runId: string, budgetCap: Budget | undefined): Promise<{ runId: string }> {
    await this.options.journal.append(await this.admission(request, runId, budgetCap));
    this.ownRuns.add(runId);
    this.schedule(runId);
    return { runId };
  }

  /**
   * Every check admission makes, then the RunAdmitted record that admits the run (not yet
   * written). A refusal by policy, a halt or the chain's depth is journaled here and thrown.
   */
  private async admission(request: StartRequest, runId: string, budgetCap: Budget | undefined): Promise<RecordDraft<'RunAdmitted'>> {
    await this.usable();
    const program = this.programs.get(request.agent);
    if (!program) {
      // The person at this plane learns what is wrong with the file; a protocol caller (MCP, A2A,
      // a peer) learns no more than that there is no such agent, as for any it cannot run.
      const broken = fromAPerson(request.via) ? this.brokenAgents.get(request.agent) : undefined;
      if (broken) throw new PlaneError(ErrorCode.Conflict, `agent ${request.agent} is broken: ${brokenAgentLine(broken)}`);
      throw new PlaneError(ErrorCode.NotFound, request.agent.startsWith('skill:') ? `no skill named ${request.agent.slice(6)}` : `no agent named ${request.agent} (see \`agentplane agents list\`)`);
    }
    // Every model provider the agent's steps name must be configured, checked before anything
    // is journaled: the person learns which variable to set now, not when the step is reached
    // halfway through a run that has already spent.
    const agent = this.agents.get(request.agent);
    for (const step of agent?.manifest.steps ?? []) {
      if ('model' in step && !this.options.providers.has(step.model.provider)) {
        throw new PlaneError(ErrorCode.BadRequest, unconfiguredProviderMessage(request.agent, step.model.provider));
      }
      // A money ceiling cannot hold a model with no price (its spend is unaccounted, costing 0 in
      // the meter), so such a run is refused now rather than stopped at its first model call. The
      // ceiling is the one the run will hold: its own, or a parent's cap for a child run.
      const moneyCeiling = (budgetCap ? tighterBudget(program.budget, budgetCap) : program.budget).maxCostMicros !== undefined;
      const provider = 'model' in step && moneyCeiling ? this.options.providers.get(step.model.provider) : undefined;
      if (provider && 'model' in step) {
        const model = step.model.model ?? provider.profile.defaultModel ?? '';
        if (pricingOf(provider, model) === null) {
          throw new PlaneError(ErrorCode.BadRequest, `agent ${request.agent} has a money ceiling, but ${unpricedModelWords(provider.id, model)}, so its spend could not be held under it: ${UNPRICED_REMEDY}`);
        }
      }
    }
    const errors = program.validateInput(request.input);
    if (errors.length > 0) throw new PlaneError(ErrorCode.BadRequest, `input for ${request.agent} does not match its schema: ${errors.join('; ')}`);
    if (request.context !== undefined) await this.assertContextOf(request.chain[0], request.context);
    const caller = request.chain.at(-1);
    if (!caller) throw new PlaneError(ErrorCode.BadRequest, 'a run must act for someone');
    if (request.chain.length > MAX_CHAIN_DEPTH) {
      await this.refuse(request, caller, program.admission.action, program.admission.resource, `the delegation chain is deeper than ${MAX_CHAIN_DEPTH}`);
    }
    const halted = this.haltedByChain(request.chain, request.agent);
    if (halted) await this.refuse(request, caller, program.admission.action, program.admission.resource, `withheld by halt ${halted}`);
    const decision = this.options.policy.decide(caller, program.admission.action, program.admission.resource);
    if (!decision.allowed) await this.refuse(request, caller, decision.action, decision.resource, decision.rule === null ? 'no rule allows it' : `denied by rule ${decision.rule}`);

    return {
      runId,
      kind: 'RunAdmitted',
      body: {
        agent: program.id,
        owner: request.chain[0]!,
        chain: request.chain,
        input: request.input,
        inputProvenance: request.inputProvenance ?? caller,
        budget: budgetCap ? tighterBudget(program.budget, budgetCap) : program.budget,
        trigger: { via: request.via, by: caller },
        host: this.host,
        ...(request.parentRunId ? { parentRunId: request.parentRunId } : {}),
        ...(request.parentRunId && request.parentStep !== undefined ? { parentStep: request.parentStep } : {}),
        ...(request.context !== undefined ? { context: request.context } : {}),
      },
    };
  }

  /**
   * A context is joined only by the owner that opened it, on the host that holds it, and only by
   * its opening run's id (a run that continues a context is not one itself). An unknown id and
   * another owner's answer alike: the refusal tells nobody else the context exists.
   */
  private async assertContextOf(owner: string | undefined, context: string): Promise<void> {
    const opener = isRunId(context) ? await this.history(context).catch(() => null) : null;
    if (!opener || opener.owner !== owner || (opener.host ?? 'plane') !== this.host || opener.context !== undefined) {
      throw new PlaneError(ErrorCode.BadRequest, `context: ${context.slice(0, 40)} is not a context ${owner ?? 'this caller'} opened`);
    }
  }

  // ---- child runs (agent tools; agent-effect.ts) ----

  private agentRunner(): AgentRunner {
    return {
      describe: (name) => {
        const agent = this.agents.get(name);
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
    if (this.closing) throw new RunParked(`its child run ${request.runId}`);
    if ((await this.options.journal.store.runLastSeq(request.runId)) !== null) {
      const existing = await this.history(request.runId);
      if (existing.parentRunId !== request.parentRunId || existing.agent !== request.agent) {
        throw new EffectFailure('AgentRunClash', `the run ${request.runId} exists but is not this call's child run of ${request.agent}`, 'InDoubt');
      }
      return;
    }
    const program = this.agents.has(request.agent) ? this.programs.get(request.agent) : undefined;
    if (!program) {
      const broken = this.brokenAgents.get(request.agent);
      // Said to a model, which may be a provider's: that the file is broken, not what it holds.
      if (broken) throw new EffectFailure('AgentBroken', `agent ${request.agent} cannot run: its manifest file does not load (the plane's agent list says why)`, 'DidNotHappen');
      throw new EffectFailure('NoSuchAgent', `no agent named ${request.agent} is declared on this plane`, 'DidNotHappen');
    }
    // Checked here too (admission checks it again) so the model is told exactly what was wrong.
    const errors = program.validateInput(request.input);
    if (errors.length > 0) throw new EffectFailure('AgentInputInvalid', `the input for agent ${request.agent} does not match its schema: ${errors.join('; ')}`, 'DidNotHappen');
    const delegator = request.chain.at(-1)!;
    try {
      await this.admit(
        { agent: request.agent, input: request.input, chain: request.chain, via: 'plane', inputProvenance: delegator, parentRunId: request.parentRunId, parentStep: request.parentStep },
        request.runId,
        request.budgetCap,
      );
    } catch (error) {
      if (!(error instanceof PlaneError)) throw error;
      if (this.closing) throw new RunParked(`its child run ${request.runId}`);
      // A refusal by policy or a halt is journaled (AdmissionRefused) and said to the model in
      // the same fixed words a caller gets.
      throw new EffectFailure('AgentNotStarted', `agent ${request.agent} was not started: ${error.message}`, 'DidNotHappen');
    }
  }

  /** Waits for a child run to seal (woken when an execution of it ends); parked when the plane closes first. */
  private async childSealed(runId: string): Promise<ChildSeal> {
    for (;;) {
      // Registered before the history is read, so a seal between the two cannot be missed.
      let wake = (): void => undefined;
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
        this.settleWaiters.set(runId, [...(this.settleWaiters.get(runId) ?? []), resolve]);
      });
      if (this.closing) throw new RunParked(`its child run ${runId}`);
      const history = await this.history(runId);
      if (history.status === 'sealed') {
        const left = (this.settleWaiters.get(runId) ?? []).filter((resolve) => resolve !== wake);
        if (left.length > 0) this.settleWaiters.set(runId, left);
        else this.settleWaiters.delete(runId);
        return { outcome: history.outcome ?? 'failed', ...(history.result !== undefined ? { result: history.result } : {}), ...(history.error ? { error: history.error } : {}), spend: history.spend };
      }
      await woken;
    }
  }

  /**
   * A cancelled run's open child runs are cancelled too: their work was for it, and it is
   * waiting for them. (A child run's own children follow, through the same call.)
   */
  private async cancelChildren(runId: string, by: string): Promise<void> {
    for (const row of await this.options.journal.store.childRuns(runId, MAX_LINKED_CALLS)) {
      if (row.host !== this.host) continue;
      const child = await this.history(row.runId).catch(() => null);
      if (!child || child.status === 'sealed' || child.cancelled || !billedToParent(child)) continue;
      await this.cancel(child.runId, by, `its parent run ${runId} was cancelled`).catch((error) => this.options.logger.log('warn', `run ${child.runId}: cancelling with its parent failed`, errorFields(error)));
    }
  }

  /** Journals the refusal (action and resource, for the operator) and answers the caller with nothing more. */
  private async refuse(request: StartRequest, principal: string, action: string, resource: string, reason: string): Promise<never> {
    await this.options.journal.append({ runId: null, kind: 'AdmissionRefused', body: { agent: request.agent, principal, action, resource, reason } });
    throw new PlaneError(ErrorCode.Forbidden, 'the plane refused to start this run');
  }

  // ---- execution ----

  /** `heldAdmission`: the admission of a run from `run()`, not yet committed (execute commits it). */
  private schedule(runId: string, heldAdmission?: HeldAdmission): void {
    // Another process hosts it: that process picks the change up from the journal.
    if (this.closing || !this.ownRuns.has(runId)) return;
    const previous = this.executing.get(runId);
    const next = (previous ?? Promise.resolve())
      .then(() => this.execute(runId, heldAdmission))
      .catch((error) => this.options.logger.log('error', `run ${runId} execution failed`, errorFields(error)))
      .finally(() => {
        if (this.executing.get(runId) === next) this.executing.delete(runId);
        for (const resolve of this.settleWaiters.get(runId) ?? []) resolve();
        this.settleWaiters.delete(runId);
      });
    this.executing.set(runId, next);
  }

  /** Resolves when the run has sealed or is waiting (its current execution has ended). */
  async settled(runId: string): Promise<RunHistory> {
    const running = this.executing.get(runId);
    if (running) await running;
    return this.history(runId);
  }

  private async execute(runId: string, heldAdmission?: HeldAdmission): Promise<void> {
    if (this.brokenJournal) return;
    // A held admission is read as the run's only record would be (its seq and time are the
    // commit's, not known yet; nothing in an execution reads them for a run with no decisions).
    const history = heldAdmission
      ? readRunHistory([{ seq: 0, runId, kind: 'RunAdmitted', v: CURRENT_VERSION.RunAdmitted, time: new Date().toISOString(), prevHash: '', hash: '', body: heldAdmission.draft.body }])
      : await this.history(runId);
    if (history.status === 'sealed') return;
    // Cancelled, perhaps by a plane that stopped before it reached the run's children.
    if (history.cancelled) await this.cancelChildren(runId, history.cancelled.by);
    const program = this.programs.get(history.agent);
    if (!program) {
      const broken = this.brokenAgents.get(history.agent);
      await this.seal(history, null, 'failed', undefined, { code: 'AgentGone', message: broken ? `${history.agent} is broken: ${brokenAgentLine(broken)}` : `${history.agent} is no longer declared on this plane` });
      return;
    }
    const governance: RunGovernance = {
      grants: program.grants,
      approveEveryEffect: program.approveEveryEffect,
      haltedBy: (h) => this.haltedByChain(h.chain, h.agent),
      cancelRequested: (id) => this.cancelRequests.has(id),
    };
    const cx = new RunContext(history, this.options.journal, governance, this.options.onModelText, heldAdmission ? [heldAdmission.prepared] : []);
    try {
      const result = await program.run(history.input, cx);
      await this.seal(history, cx, 'succeeded', result);
    } catch (error) {
      if (error instanceof RunSuspended) return;
      if (error instanceof RunCancelled) return this.seal(history, cx, 'cancelled');
      if (error instanceof RunDenied) return this.seal(history, cx, 'denied', undefined, { code: 'Denied', message: error.message });
      if (error instanceof DivergenceError) {
        this.options.logger.log('error', `run ${runId}: ${error.message}`);
        return this.seal(history, cx, 'failed', undefined, { code: 'Divergence', message: error.message });
      }
      if (error instanceof EffectFailure) return this.seal(history, cx, 'failed', undefined, { code: error.code, message: error.message });
      this.options.logger.log('error', `run ${runId} failed inside the plane`, errorFields(error));
      return this.seal(history, cx, 'failed', undefined, { code: 'Internal', message: 'the run failed inside the plane; the plane log has the detail' });
    } finally {
      this.cancelRequests.delete(runId);
    }
  }

  /** Seals the run; through its context, so the seal commits with whatever the run still holds. */
  private async seal(history: RunHistory, cx: RunContext | null, outcome: RecordBody<'RunSealed'>['outcome'], result?: unknown, error?: { code: string; message: string }): Promise<void> {
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
      if (whole) this.keepHistory(readRunHistory(whole));
    } else {
      await this.options.journal.append(sealed);
    }
  }

  // ---- reading ----

  /**
   * One run's history. A history is a pure function of the run's records, and records are
   * append-only, so a folded history stays true until the run's last seq moves: it is kept,
   * keyed by that seq, and re-folded only when the run has grown. (Listing runs of 100,000
   * records each otherwise re-reads every one of them on every list.)
   */
  async history(runId: string, knownLastSeq?: number): Promise<RunHistory> {
    const lastSeq = await this.lastSeqOf(runId, knownLastSeq);
    const cached = this.histories.get(runId);
    if (cached && cached.lastSeq === lastSeq) return cached;
    const history = await this.foldRun(runId, true);
    this.keepHistory(history);
    return history;
  }

  /**
   * One run's summary (its history less the per-step detail): what `runs.get`, the Runs list,
   * the inboxes and spend show. Kept like a history, keyed by the run's last seq, and folded
   * without the effects' attempts, so a look at a run of 100,000 records neither keeps nor
   * builds 50,000 of them.
   */
  async summary(runId: string, knownLastSeq?: number): Promise<RunSummary> {
    const lastSeq = await this.lastSeqOf(runId, knownLastSeq);
    const kept = this.summaries.get(runId);
    if (kept && kept.lastSeq === lastSeq) {
      this.summaries.delete(runId);
      this.summaries.set(runId, kept);
      return kept;
    }
    const cached = this.histories.get(runId);
    if (cached && cached.lastSeq === lastSeq) return this.keepSummary(summaryOf(cached));
    return this.keepSummary(summaryOf(await this.foldRun(runId, false)));
  }

  /** The run's last seq (what its kept history and summary are keyed by); refuses a bad or unknown id. */
  private async lastSeqOf(runId: string, knownLastSeq?: number): Promise<number> {
    if (!isRunId(runId)) throw new PlaneError(ErrorCode.BadRequest, `"${runId.slice(0, 40)}" is not a run id`);
    const lastSeq = knownLastSeq ?? (await this.options.journal.store.runLastSeq(runId));
    if (lastSeq === null) throw new PlaneError(ErrorCode.NotFound, `no run ${runId}`);
    return lastSeq;
  }

  /**
   * Folds a run from its records, FOLD_PAGE at a time: each page is parsed, folded and let go,
   * so what a fold holds at once is one page and the history (RunFold). Records are append-only,
   * so pages read across appends still fold to the history of a prefix of the run, named by its
   * lastSeq like any other.
   */
  private async foldRun(runId: string, detail: boolean | EffectKind): Promise<RunHistory> {
    let fold: RunFold | null = null;
    for (let from = 1; ; ) {
      const page = await this.options.journal.readRun(runId, from, FOLD_PAGE);
      if (!fold) {
        if (page.length === 0) throw new PlaneError(ErrorCode.NotFound, `no run ${runId}`);
        // A session observed by `acp tap` is a run of the journal but not one this runtime admitted
        // (no RunAdmitted: nothing here authorized it); it is read as a session (acp.session), not a run.
        if (page[0]!.kind === 'Observation') throw new PlaneError(ErrorCode.NotFound, `${runId} is an observed ACP session, not a run the plane admitted (see acp.session)`);
        fold = new RunFold(page[0]!, detail);
      }
      for (const record of page) fold.add(record);
      if (page.length < FOLD_PAGE) return fold.finish();
      from = page[page.length - 1]!.seq + 1;
    }
  }

  /** Keeps a folded history in the cache (in place of any older one), within the cache's bounds. */
  private keepHistory(history: RunHistory): void {
    this.forgetHistory(history.runId);
    const bound = this.options.historyCacheRecords ?? HISTORY_CACHE_RECORDS;
    if (history.records <= bound) {
      this.histories.set(history.runId, history);
      this.historyRecords += history.records;
    }
    while (this.histories.size > HISTORY_CACHE || this.historyRecords > bound) this.forgetHistory(this.histories.keys().next().value!);
  }

  private forgetHistory(runId: string): void {
    const held = this.histories.get(runId);
    if (!held) return;
    this.histories.delete(runId);
    this.historyRecords -= held.records;
  }

  /** How many runs and records the folded-history cache holds now (for tests and diagnostics). */
  get historyCache(): { runs: number; records: number } {
    return { runs: this.histories.size, records: this.historyRecords };
  }

  /** The run that called this one and the runs it called (run-links.ts). */
  async links(runId: string): Promise<RunLinks> {
    // Most runs were called by no run and called none: the admission (its first record) and the
    // journal's index of called runs say so without folding the run. The page asks for a run's
    // links each time it is opened, and folding a 100,000-record run for that read every record
    // and held them all at once (runs.get, which folds the same way, takes 1.4 s on one).
    if (isRunId(runId)) {
      const [first] = await this.options.journal.readRun(runId, 1, 1);
      if (first?.kind === 'RunAdmitted' && !(first.body as RecordBody<'RunAdmitted'>).parentRunId) {
        if ((await this.options.journal.store.childRuns(runId, 1)).length === 0) return { calledBy: null, calls: [] };
      }
    }
    const history = await this.history(runId);
    let calledBy: RunLink | null = null;
    if (history.parentRunId) {
      const step = history.parentStep ?? null;
      const parent = await this.history(history.parentRunId).catch(() => null);
      calledBy = parent
        ? linkOf(parent, step, confirmsCall(parent, step, { agent: history.agent, host: history.host ?? 'plane' }, history.admittedSeq))
        : // Named, but not a run this journal holds: shown as stated, and unconfirmed.
          { runId: history.parentRunId, agent: '', host: '', step, confirmed: false, status: 'sealed', outcome: null };
    }
    const calls: RunLink[] = [];
    for (const row of await this.options.journal.store.childRuns(runId, MAX_LINKED_CALLS)) {
      const child = await this.history(row.runId, undefined).catch(() => null);
      if (child) calls.push(linkOf(child, row.parentStep, confirmsCall(history, row.parentStep, row, row.seq)));
    }
    return { calledBy, calls };
  }

  /** The newest `limit` runs, each folded in full (steps and decisions too). */
  listRuns(limit: number): Promise<RunHistory[]> {
    return this.listFolded(limit, (runId, lastSeq) => this.history(runId, lastSeq));
  }

  /**
   * The newest `limit` runs, each with the attempts of one effect only (`'a2a'`) in its steps and
   * no decisions: what a view of that effect across runs reads (a2a.remotes). Not kept; a run's
   * history already kept at the same last seq answers as it is. Folding every run whole for it
   * held every effect of the newest 1,000 runs at once (as spend.summary did: +600 MB).
   */
  listRunsWithEffect(limit: number, effect: EffectKind): Promise<RunHistory[]> {
    return this.listFolded(limit, async (runId, lastSeq) => {
      const cached = this.histories.get(runId);
      return cached && cached.lastSeq === lastSeq ? cached : this.foldRun(runId, effect);
    });
  }

  /**
   * The newest `limit` runs as summaries (summary()): each folded without its steps, or answered
   * from what is kept, so a list never holds or builds any run's whole history. What the Runs
   * list, the inboxes and spend read.
   */
  listRunSummaries(limit: number): Promise<RunSummary[]> {
    // A summary, like a history, is a function of the run's records: true while lastSeq is.
    return this.listFolded(limit, (runId, lastSeq) => this.summary(runId, lastSeq));
  }

  private keepSummary(summary: RunSummary): RunSummary {
    this.summaries.delete(summary.runId);
    this.summaries.set(summary.runId, summary);
    while (this.summaries.size > SUMMARY_CACHE) this.summaries.delete(this.summaries.keys().next().value!);
    return summary;
  }

  /** How many run summaries are kept for listing (for tests and diagnostics). */
  get summaryCache(): number {
    return this.summaries.size;
  }

  private async listFolded<T>(limit: number, read: (runId: string, lastSeq: number) => Promise<T>): Promise<T[]> {
    const rows = await this.options.journal.runs(limit);
    const out: T[] = [];
    for (const row of rows) {
      // Observed ACP sessions have no admission, budget or spend of their own: not runs here.
      if (row.firstKind === 'Observation') continue;
      try {
        out.push(await read(row.runId, row.lastSeq));
      } catch {
        // A run id the journal holds but cannot fold (written by a newer plane) is skipped here.
      }
    }
    return out;
  }

  /**
   * One owner's runs, newest admission first, at most `limit`, read through the journal's index
   * of each owner's admissions (migration 004): another owner's runs are never read, and only
   * the page is folded. `total` is the exact count of every match, counted from the index with
   * nothing folded; `nextBeforeSeq` continues after this page (null: this page is the last).
   * `activeSince` narrows from the index too: records are appended in time order, so "a record
   * at or after T" is "a record at seq >= the first seq at or after T", which a run admitted
   * before T but active since meets as well.
   */
  async listOwnedRuns(filter: OwnedRunsFilter, limit: number): Promise<{ runs: RunSummary[]; total: number; nextBeforeSeq: number | null }> {
    const store = this.options.journal.store;
    const { activeSince, beforeSeq, ...rest } = filter;
    // The total is the count before paging: every filter but the cursor.
    const matching = { ...rest, ...(activeSince !== undefined ? { activeFromSeq: await store.firstSeqAtOrAfter(activeSince) } : {}) };
    const [rows, total] = await Promise.all([store.ownedRuns({ ...matching, ...(beforeSeq !== undefined ? { beforeSeq } : {}) }, limit + 1), store.countOwnedRuns(matching)]);
    const page = rows.slice(0, limit);
    const runs: RunSummary[] = [];
    for (const row of page) {
      try {
        runs.push(await this.summary(row.runId, row.lastSeq));
      } catch {
        // A run the journal holds but cannot fold (written by a newer plane) is skipped, as listRuns does.
      }
    }
    return { runs, total, nextBeforeSeq: rows.length > limit ? page[page.length - 1]!.seq : null };
  }

  /** Every run waiting for a person, oldest wait first. */
  async waiting(limit = 1000): Promise<Array<{ history: RunSummary; wait: PendingWait }>> {
    const runs = await this.listRunSummaries(limit);
    return runs
      .filter((h) => h.pending !== null)
      .map((history) => ({ history, wait: history.pending! }))
      .sort((a, b) => a.wait.seq - b.wait.seq);
  }

  // ---- decisions ----

  async decide(request: DecideRequest): Promise<RunHistory> {
    await this.usable();
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
    if (this.executing.has(request.runId)) await this.executing.get(request.runId);
    const history = await this.history(request.runId);
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
    await this.options.journal.append({
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
      await this.options.journal.append({ runId: request.runId, kind: 'BudgetVerdict', body: { step: pending.step, verdict: 'raised', spent: history.spend, budget: value.budget } });
    }
    if (request.decision === 'snooze') return this.history(request.runId);
    this.schedule(request.runId);
    // A deny ends the run (its replay up to the wait performs nothing): answered once it has, so
    // the person is shown the run as their decision left it (denied), as cancel() answers, and
    // not `running` for the moment before its seal. An approval goes on for as long as the run's
    // work takes, so it is answered at once.
    return request.decision === 'deny' ? this.settled(request.runId) : this.history(request.runId);
  }

  /**
   * A protocol caller answers the question its own run asks (seed 002: "task input continues
   * the same run"). Narrower than decide() on purpose: only an `input` wait, only the caller's
   * own run, only an approval carrying the answer. Approval, payment, budget, oversight,
   * recovery, halt and permission waits are a person's decision at this plane whatever policy
   * says: letting the run's own caller decide them would let it approve its own run's risky
   * effect. Serialised with decide() under the same per-run lock, so an answer and a person's
   * decision (or the same answer sent twice at once) cannot both land on one wait.
   */
  async answerInput(request: AnswerRequest): Promise<{ history: RunHistory; repeated: boolean }> {
    await this.usable();
    return this.oneDecisionAtATime(request.runId, () => this.answerNow(request));
  }

  private async answerNow(request: AnswerRequest): Promise<{ history: RunHistory; repeated: boolean }> {
    // Unlike decide(), not waiting for an execution in flight to reach its wait: an answer is to
    // the question the caller was shown, so a run still working refuses it (the journal says
    // which). A run that has just suspended answers as waiting; schedule() queues its resumption
    // behind the execution that is ending.
    const history = await this.history(request.runId);
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
    // Policy is asked twice (seed 002): may this caller continue this task at all, and may it
    // supply this kind of event. A refusal is journaled for the operator, as an admission's is.
    for (const [action, resource] of [
      [request.actions.continue, `agent:${history.agent}`],
      [request.actions.deliver, `wait:${pending.reason}`],
    ] as const) {
      const decision = this.options.policy.decide(request.by, action, resource);
      if (decision.allowed) continue;
      const why = decision.rule === null ? 'no rule allows it' : `denied by rule ${decision.rule}`;
      await this.options.journal.append({ runId: null, kind: 'AdmissionRefused', body: { agent: history.agent, principal: request.by, action, resource, reason: `answering run ${request.runId}: ${why}` } });
      throw new PlaneError(ErrorCode.Forbidden, 'the plane refused this answer');
    }
    await this.options.journal.append({
      runId: request.runId,
      kind: 'Decision',
      body: { waitId: pending.waitId, decision: 'approve', by: request.by, subjectHash: pending.subjectHash, value: { kind: 'input', input: request.input }, messageId: request.messageId },
    });
    this.schedule(request.runId);
    return { history: await this.history(request.runId), repeated: false };
  }

  // ---- cancellation and halts ----

  async cancel(runId: string, by: string, reason?: string): Promise<RunHistory> {
    await this.usable();
    const history = await this.history(runId);
    if (history.status === 'sealed') throw new PlaneError(ErrorCode.Conflict, `run ${runId} has already ended (${history.outcome})`);
    if (history.cancelled) throw new PlaneError(ErrorCode.Conflict, `run ${runId} is already being cancelled`);
    await this.options.journal.append({ runId, kind: 'Cancelled', body: { by, ...(reason ? { reason } : {}) } });
    this.cancelRequests.add(runId);
    await this.cancelChildren(runId, by);
    // A running run honours it at its next step boundary; a waiting one is sealed by the replay now.
    if (!this.executing.has(runId)) this.schedule(runId);
    return this.settled(runId);
  }

  async halt(scope: string, by: string, reason?: string): Promise<string[]> {
    await this.usable();
    if (!HALT_SCOPE.test(scope)) throw new PlaneError(ErrorCode.BadRequest, `a halt scope is subject:<principal> or agent:<name>, not "${scope}"`);
    if (this.halts.has(scope)) throw new PlaneError(ErrorCode.Conflict, `${scope} is already halted`);
    await this.options.journal.append({ runId: null, kind: 'HaltApplied', body: { scope, lifted: false, by, ...(reason ? { reason } : {}) } });
    this.halts.add(scope);
    return this.haltScopes();
  }

  async liftHalt(scope: string, by: string): Promise<string[]> {
    await this.usable();
    if (!this.halts.has(scope)) throw new PlaneError(ErrorCode.Conflict, `${scope} is not halted`);
    await this.options.journal.append({ runId: null, kind: 'HaltApplied', body: { scope, lifted: true, by } });
    this.halts.delete(scope);
    for (const { history, wait } of await this.waiting()) {
      if (wait.reason === 'halt' && !this.haltedByChain(history.chain, history.agent)) this.schedule(history.runId);
    }
    return this.haltScopes();
  }

  private haltedByChain(chain: readonly string[], agent: string): string | null {
    for (const scope of this.halts) {
      if (scope === `agent:${agent}`) return scope;
      if (scope.startsWith('subject:') && chain.includes(scope.slice('subject:'.length))) return scope;
    }
    return null;
  }

  /**
   * Reads what other processes appended since last time: a decision or cancel on a run this
   * runtime hosts resumes it here; a halt or its lift applies here too. The stream of changes
   * is the journal itself (no second channel between processes that could disagree with it).
   */
  private async follow(): Promise<void> {
    const head = (await this.options.journal.head()).seq;
    while (this.followedSeq < head) {
      // Only the kinds acted on below are read: the records this runtime wrote itself lie in the
      // same range, and parsing every one of them back was a thirtieth of a busy peer's time.
      const records = await this.options.journal.readKinds(this.followedSeq + 1, head, FOLLOWED_KINDS, FOLLOW_PAGE);
      for (const record of records) {
        this.followedSeq = record.seq;
        await this.followed(record);
      }
      // A short page read the whole range: none of those kinds lies between its last record and the head.
      if (records.length < FOLLOW_PAGE) this.followedSeq = Math.max(this.followedSeq, head);
    }
  }

  /** What one record of a followed kind means here (see follow). */
  private async followed(record: StoredRecord): Promise<void> {
    if (record.kind === 'HaltApplied') {
      const body = record.body as RecordBody<'HaltApplied'>;
      if (body.lifted && this.halts.delete(body.scope)) {
        for (const { history, wait } of await this.waiting()) {
          if (wait.reason === 'halt' && !this.haltedByChain(history.chain, history.agent)) this.schedule(history.runId);
        }
      } else if (!body.lifted) this.halts.add(body.scope);
    } else if (record.runId && this.ownRuns.has(record.runId) && !this.executing.has(record.runId)) {
      if (record.kind === 'Decision' && (record.body as RecordBody<'Decision'>).decision !== 'snooze') this.schedule(record.runId);
      if (record.kind === 'Cancelled') {
        this.cancelRequests.add(record.runId);
        this.schedule(record.runId);
      }
    } else if (record.runId && record.kind === 'Cancelled' && this.executing.has(record.runId)) {
      this.cancelRequests.add(record.runId);
      // It may be waiting for a child run (an agent tool), which must end for it to.
      void this.cancelChildren(record.runId, (record.body as RecordBody<'Cancelled'>).by).catch((error) => this.options.logger.log('warn', `run ${record.runId}: cancelling its child runs failed`, errorFields(error)));
    }
  }

  /** Stops scheduling and waits for executions in flight to reach their next record. */
  async close(): Promise<void> {
    // A start-up check still running is not waited for (on a long journal it takes seconds, and a
    // stop must not): it ends when the journal closes, and seeing `closing` it neither resumes a
    // run nor starts the follower afterwards.
    this.closing = true;
    if (this.follower) clearInterval(this.follower);
    // Parents waiting for a child run are parked (agent-effect.ts RunParked), not waited for.
    for (const waiters of this.settleWaiters.values()) for (const resolve of waiters) resolve();
    await Promise.allSettled([...this.executing.values()]);
  }
}


/** Broken agent files by the name each is listed under; of two under one name, the first. */
function brokenByName(broken: readonly BrokenAgent[]): Map<string, BrokenAgent> {
  const byName = new Map<string, BrokenAgent>();
  for (const entry of broken) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  return byName;
}
