/**
 * The runtime's admission: every check a run passes before it exists (its agent, its model
 * providers and their prices, its input, its context, its delegation chain, halts and policy),
 * the AdmissionRefused record of a refusal, and the RunAdmitted record that admits it. Also
 * what a set of agents may not hold at all (agentSetProblems), checked when the plane is built
 * and whenever the agents are replaced.
 */
import { ErrorCode, ErrorReason } from '../../src-shared/ipc/errors';
import type { RecordBody, RecordDraft } from '../../src-shared/journal/records';
import { isRunId } from '../../src-shared/vocabulary/ids';
import type { Budget } from '../../src-shared/vocabulary/spend';
import { prepare } from '../journal/journal';
import type { PreparedDraft } from '../journal/journal-store';
import { PlaneError } from '../base/plane-error';
import { newRunId } from '../base/random-ids';
import { pricingOf, unconfiguredProviderMessage } from './model-provider';
import { UNPRICED_REMEDY, unpricedModelWords } from './model-effect';
import type { LoadedAgent } from './manifest';
import type { RunProgram } from './run-program';
import { brokenAgentLine, grantNeeded } from './manifest';
import { grantsBeyond, MAX_CHAIN_DEPTH, type PolicyEngine } from './policy';
import type { RunHistory } from './run-history';
import type { Tool } from './tools';
import { tighterBudget } from './agent-effect';
import type { RunReads } from './runtime-reads';
import type { RuntimeState } from './runtime-state';

export interface StartRequest {
  agent: string;
  input: unknown;
  /** Who acts for whom, root first; the last link is the caller policy is asked about. */
  chain: string[];
  via: RecordBody<'RunAdmitted'>['trigger']['via'];
  inputProvenance?: string;
  /** The input's sensitivity label as the starter gave it; absent: the agent's declared one, else the lowest. */
  inputSensitivity?: string;
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
export interface HeldAdmission {
  draft: RecordDraft<'RunAdmitted'>;
  prepared: PreparedDraft;
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
 * A rule letting a principal start an agent whose grants exceed that principal's declared
 * authority is refused, not clipped: so is any set agentSetProblems finds a problem in.
 */
export function assertAgentSet(agents: readonly LoadedAgent[], policy: PolicyEngine, tools: ReadonlyMap<string, Tool>): void {
  const problems = agentSetProblems(agents, policy, tools);
  if (problems.length > 0) throw new PlaneBuildError(`the plane's configuration is refused: ${problems.map((p) => p.message).join('; ')}`);
}

/** Whether a request came through a door a person at this plane uses (the window, the browser, the CLI). */
function fromAPerson(via: StartRequest['via']): boolean {
  return via === 'ipc' || via === 'web' || via === 'cli';
}

export class RunAdmission {
  constructor(
    private readonly state: RuntimeState,
    private readonly reads: RunReads,
    /** Runs (or resumes) a run this runtime hosts (RunExecution.schedule). */
    private readonly schedule: (runId: string, heldAdmission?: HeldAdmission) => void,
  ) {}

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
    const state = this.state;
    const runId = newRunId();
    const admission = await this.admission(request, runId, undefined);
    // Refused here, with the words an append would use, rather than at the run's first commit,
    // which then writes it as prepared here.
    const prepared = prepare(admission);
    state.ownRuns.add(runId);
    this.schedule(runId, { draft: admission, prepared });
    const running = state.executing.get(runId);
    if (running) await running;
    // Sealed in the one commit that admitted it: its history was folded from that commit's
    // records at the seal (RunExecution's seal), with nothing to read back.
    const sealed = this.reads.kept(runId);
    if (sealed?.status === 'sealed') return sealed;
    if ((await state.journal.runLastSeq(runId)) === null) {
      throw new PlaneError(ErrorCode.Internal, 'the run could not be written to the journal, so it did not happen (the plane log has the detail)');
    }
    return this.reads.history(runId);
  }

  /** Admission under `runId` (random for a new run; derived for a child run), its budget capped by `budgetCap`. */
  async admit(request: StartRequest, runId: string, budgetCap: Budget | undefined): Promise<{ runId: string }> {
    await this.state.journal.append(await this.admission(request, runId, budgetCap));
    this.state.ownRuns.add(runId);
    this.schedule(runId);
    return { runId };
  }

  /**
   * Admits a fork (runtime-forks.ts): every check a run passes, against `override` when the fork
   * changes the agent's manifest, then its RunAdmitted and RunForked in one commit.
   */
  async admitFork(request: StartRequest, forked: RecordBody<'RunForked'>, override: { agent: LoadedAgent; program: RunProgram } | undefined): Promise<{ runId: string }> {
    const runId = newRunId();
    const admitted = await this.admission(request, runId, undefined, override);
    await this.state.journal.appendBatch([admitted, { runId, kind: 'RunForked', body: forked }]);
    this.state.ownRuns.add(runId);
    this.schedule(runId);
    return { runId };
  }

  /**
   * Every check admission makes, then the RunAdmitted record that admits the run (not yet
   * written). A refusal by policy, a halt or the chain's depth is journaled here and thrown.
   * `override`: a fork's changed manifest, checked in place of the declared one.
   */
  private async admission(request: StartRequest, runId: string, budgetCap: Budget | undefined, override?: { agent: LoadedAgent; program: RunProgram }): Promise<RecordDraft<'RunAdmitted'>> {
    const state = this.state;
    await state.usable();
    const program = override?.program ?? state.programs.get(request.agent);
    if (!program) {
      // The person at this plane learns what is wrong with the file; a protocol caller (MCP, A2A,
      // a peer) learns no more than that there is no such agent, as for any it cannot run.
      const broken = fromAPerson(request.via) ? state.brokenAgents.get(request.agent) : undefined;
      if (broken) throw new PlaneError(ErrorCode.Conflict, `agent ${request.agent} is broken: ${brokenAgentLine(broken)}`);
      throw new PlaneError(ErrorCode.NotFound, request.agent.startsWith('skill:') ? `no skill named ${request.agent.slice(6)}` : `no agent named ${request.agent} (see \`agentplane agents list\`)`);
    }
    // Every model provider the agent's steps name must be configured, checked before anything
    // is journaled: the person learns which variable to set now, not when the step is reached
    // halfway through a run that has already spent.
    const agent = override?.agent ?? state.agents.get(request.agent);
    for (const step of agent?.manifest.steps ?? []) {
      if ('model' in step && !state.options.providers.has(step.model.provider)) {
        throw new PlaneError(ErrorCode.BadRequest, unconfiguredProviderMessage(request.agent, step.model.provider));
      }
      // A money ceiling cannot hold a model with no price (its spend is unaccounted, costing 0 in
      // the meter), so such a run is refused now rather than stopped at its first model call. The
      // ceiling is the one the run will hold: its own, or a parent's cap for a child run.
      const moneyCeiling = (budgetCap ? tighterBudget(program.budget, budgetCap) : program.budget).maxCostMicros !== undefined;
      const provider = 'model' in step && moneyCeiling ? state.options.providers.get(step.model.provider) : undefined;
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
    const inputSensitivity = this.inputLabel(request, agent);
    const caller = request.chain.at(-1);
    if (!caller) throw new PlaneError(ErrorCode.BadRequest, 'a run must act for someone');
    if (request.chain.length > MAX_CHAIN_DEPTH) {
      await this.refuse(request, caller, program.admission.action, program.admission.resource, `the delegation chain is deeper than ${MAX_CHAIN_DEPTH}`);
    }
    const halted = state.haltedByChain(request.chain, request.agent);
    if (halted) await this.refuse(request, caller, program.admission.action, program.admission.resource, `withheld by halt ${halted}`, ErrorReason.Halted);
    const decision = state.options.policy.decide(caller, program.admission.action, program.admission.resource);
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
        // Above the lowest only: a run under no labels writes what it wrote before they existed.
        ...(state.sensitivity.rank(inputSensitivity) > 0 ? { inputSensitivity } : {}),
        budget: budgetCap ? tighterBudget(program.budget, budgetCap) : program.budget,
        trigger: { via: request.via, by: caller },
        host: state.host,
        ...(request.parentRunId ? { parentRunId: request.parentRunId } : {}),
        ...(request.parentRunId && request.parentStep !== undefined ? { parentStep: request.parentStep } : {}),
        ...(request.context !== undefined ? { context: request.context } : {}),
      },
    };
  }

  /**
   * The input's sensitivity label (docs/GOVERNED-RUNTIME.md, "Sensitivity"): the starter's, else
   * the agent's declared `sensitivity.input`, else the lowest. One the plane's labels do not hold
   * is refused, naming them: a label nobody ordered cannot be compared with a ceiling.
   */
  private inputLabel(request: StartRequest, agent: LoadedAgent | undefined): string {
    const labels = this.state.sensitivity;
    const given = request.inputSensitivity ?? agent?.manifest.sensitivity?.input ?? labels.lowest;
    if (!labels.isLabel(given)) {
      const whose = request.inputSensitivity !== undefined ? 'sensitivity' : `agent ${request.agent}'s sensitivity.input`;
      throw new PlaneError(ErrorCode.BadRequest, `${whose}: ${given} is not one of this plane's labels (${labels.labels.join(' < ')})`);
    }
    return given;
  }

  /**
   * A context is joined only by the owner that opened it, on the host that holds it, and only by
   * its opening run's id (a run that continues a context is not one itself). An unknown id and
   * another owner's answer alike: the refusal tells nobody else the context exists.
   */
  private async assertContextOf(owner: string | undefined, context: string): Promise<void> {
    const opener = isRunId(context) ? await this.reads.history(context).catch(() => null) : null;
    if (!opener || opener.owner !== owner || (opener.host ?? 'plane') !== this.state.host || opener.context !== undefined) {
      throw new PlaneError(ErrorCode.BadRequest, `context: ${context.slice(0, 40)} is not a context ${owner ?? 'this caller'} opened`);
    }
  }

  /**
   * Journals the refusal (action and resource, for the operator) and answers the caller with
   * nothing more, but for a halt's `reason`: a halt says stop and a policy denial says no, and a
   * protocol door answers them differently (docs/GOVERNED-RUNTIME.md, "A2A, being called").
   */
  private async refuse(request: StartRequest, principal: string, action: string, resource: string, reason: string, answer?: ErrorReason): Promise<never> {
    await this.state.journal.append({ runId: null, kind: 'AdmissionRefused', body: { agent: request.agent, principal, action, resource, reason } });
    throw new PlaneError(ErrorCode.Forbidden, 'the plane refused to start this run', answer);
  }
}
