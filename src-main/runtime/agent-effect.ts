/**
 * Another agent of the plane called as a model's tool (`agent:<name>`): a child run in the
 * delegation chain, performed as one governed effect of the parent (`effect: 'agent'`).
 *
 * - Authority: the parent's manifest grants `agent:<name>` (refused at load otherwise, and an
 *   agent offering itself is refused there too). The child is admitted through the same door as
 *   any run (input schema, halts, policy), acting for the parent's chain plus one link naming the
 *   parent agent (`agent:<parent>`), so policy sees who delegates and the depth cap
 *   (policy.ts extendChain) bounds every cycle: the call that would go one link too deep fails
 *   as DelegationRefused, which the model sees as a tool error. The child's own grants are its
 *   own manifest's: the `agent:<name>` grant is the operator's word that this agent may start
 *   that one. A delegation does not widen its root: a principal's declared `authority` in the
 *   policy must cover the grants of every agent reachable through such grants, or the plane
 *   refuses to build (runtime.ts reachableGrants); and a policy rule can deny a delegation
 *   (principal `agent:<parent>`, resource `agent:<name>`). The bundled policy allows agents to
 *   start agents, because the grant in the reviewed manifest already is that decision.
 * - Result: the child's output when it succeeded. A child that failed, was denied or cancelled
 *   is an EffectFailure (Landed: it ran, and is billed for what it spent), and an argument the
 *   child's input schema refuses is an EffectFailure that DidNotHappen (nothing was admitted);
 *   either way the model gets an isError result, never a crashed parent.
 * - Exactly once: the child's run id is derived from the parent's run id, step and effect key
 *   (childRunId), so performing the effect again finds the child already admitted instead of
 *   admitting a second one. That makes the effect safe to re-perform, and it is marked
 *   `resumable`: an attempt found open after the plane stopped (the parent was waiting for the
 *   child, which may itself be waiting for a person) is re-attached to the same child rather
 *   than put to a person as in doubt (run-context.ts). Nothing is repeated by re-attaching: the
 *   child is a run of its own, replayed from its own journal (a child stopped mid-effect has
 *   its own in-doubt effect for a person to resolve, and its parent waits for that too).
 * - Waiting: the parent waits for the child to seal. A plane that closes meanwhile parks the
 *   parent (RunParked: nothing is written, the effect stays open) and the next plane re-attaches,
 *   so a child waiting days for an approval never pins an execution across restarts.
 * - Budget (one rule): the parent's ceilings hold across the delegation. The child is admitted
 *   with a budget no larger than what the parent has left on each ceiling it has (budgetLeft),
 *   and the parent's agent effect is billed the child's sealed spend, so the parent's own meter
 *   and its next ceiling checks include what it delegated. A child's spend is therefore counted
 *   in its parent as well as in its own run; the plane-wide totals (spend.summary) add a run
 *   billed to its parent (billedToParent) only through that parent, so every token is counted
 *   once. A person who raises a waiting child's budget lets it spend past the parent's
 *   remainder; the parent then meets its own ceiling at its next effect, as it should.
 */
import { canonicalize } from '../../src-shared/journal/canonical-json';
import type { FailureCode } from '../../src-shared/vocabulary/failures';
import type { RunOutcome } from '../../src-shared/vocabulary/runs';
import { BUDGET_FIELD, CeilingSchema, NO_SPEND, usedAgainst, type Budget, type Spend } from '../../src-shared/vocabulary/spend';
import { sha256Hex } from '../journal/sqlite-store';
import { DelegationError, extendChain } from './policy';
import { effectKey, type EffectSpec, type RunContext } from './run-context';
import type { RunHistory } from './run-history';
import { EffectFailure, RunSuspended } from './run-signals';

/** What the parent asks the runtime for: one child run, under an id it derived. */
export interface ChildRunRequest {
  runId: string;
  agent: string;
  input: Record<string, unknown>;
  /** The parent's chain plus `agent:<parent>`. */
  chain: string[];
  parentRunId: string;
  parentStep: number;
  /** The most the child may spend: the parent's remainder on each ceiling it has. */
  budgetCap: Budget;
}

/** How a child run ended, as the parent's effect reads it. */
export interface ChildSeal {
  outcome: RunOutcome;
  result?: unknown;
  /** As the child's RunSealed holds it (read, so its code is any string: records.ts, ErrorInfo). */
  error?: { code: string; message: string };
  spend: Spend;
}

/**
 * How the runtime starts and waits for child runs: owned here, implemented by runtime.ts (which
 * admits runs), passed to the tool loop beside PeerCaller and McpToolCaller.
 */
export interface AgentRunner {
  /** What the model is offered for the agent: its manifest's description and input schema; null when no such agent. */
  describe(agent: string): { description: string; inputSchema: Record<string, unknown> } | null;
  /**
   * Admits the child under `request.runId`, or finds it already admitted (then does nothing).
   * A refusal is an EffectFailure that DidNotHappen (the input schema, policy, a halt); a plane
   * closing throws RunParked.
   */
  startChild(request: ChildRunRequest): Promise<void>;
  /** Resolves once the run has sealed; a plane closing first throws RunParked. */
  sealed(runId: string): Promise<ChildSeal>;
}

/**
 * The run stopped waiting because the plane is closing, not because anything happened: the open
 * effect is left as it is (no EffectFailed) and re-attached by the next plane. A kind of
 * suspension, so the executor leaves the run unsealed.
 */
export class RunParked extends RunSuspended {}

/**
 * The child's run id: a function of the parent's run, step and effect key (same call, same
 * child). Derived rather than random, yet no easier to guess than the parent's own id, which it
 * hashes; and in the run id format (`run-` and 20 hex digits) every door checks.
 */
export function childRunId(parentRunId: string, step: number, key: string): string {
  return `run-${sha256Hex(canonicalize({ parentRunId, step, key })).slice(0, 20)}`;
}

/** On each ceiling `budget` has, what `spent` leaves of it (never below zero); no ceiling, no cap. */
export function budgetLeft(budget: Budget, spent: Spend): Budget {
  const left: Budget = {};
  for (const ceiling of CeilingSchema.options) {
    const field = BUDGET_FIELD[ceiling];
    const limit = budget[field];
    if (limit !== undefined) left[field] = Math.max(0, limit - usedAgainst(spent, ceiling));
  }
  return left;
}

/** The smaller of two budgets on every ceiling either has. */
export function tighterBudget(a: Budget, b: Budget): Budget {
  const out: Budget = {};
  for (const ceiling of CeilingSchema.options) {
    const field = BUDGET_FIELD[ceiling];
    const values = [a[field], b[field]].filter((v): v is number => v !== undefined);
    if (values.length > 0) out[field] = Math.min(...values);
  }
  return out;
}

/** The last link of a child's chain: the agent that delegated to it. */
export function delegatorLink(parentAgent: string): string {
  return `agent:${parentAgent}`;
}

/**
 * Whether a run's spend is billed to its parent's agent effect (it was admitted by one), so the
 * plane's totals count it through that parent only. Only the agent runner writes a chain whose
 * last link is `agent:` together with a parent run (peers, MCP and people are `peer:`, `mcp:`,
 * `user:` principals).
 */
export function billedToParent(history: Pick<RunHistory, 'parentRunId' | 'chain'>): boolean {
  return history.parentRunId !== undefined && (history.chain.at(-1)?.startsWith('agent:') ?? false);
}

/** The failure code the model reads for each way a child can end other than succeeding. */
const OUTCOME_CODE: { readonly [O in Exclude<RunOutcome, 'succeeded'>]: FailureCode } = {
  failed: 'AgentFailed',
  cancelled: 'AgentCancelled',
  denied: 'AgentDenied',
  halted: 'AgentHalted',
  observed: 'AgentObserved',
};

/** Calls `agent` with `args` as a child run and returns its output (see the module comment). */
export async function callAgent(cx: RunContext, runner: AgentRunner, agent: string, args: Record<string, unknown>): Promise<unknown> {
  const spec: EffectSpec = {
    effect: 'agent',
    name: agent,
    request: { agent, input: args },
    destination: `agent:${agent}`,
    grant: `agent:${agent}`,
    // The least a child can do is one effect: a parent at its effect ceiling stops here for a
    // person rather than admitting a child with nothing to spend.
    estimate: { ...NO_SPEND, effects: 1 },
    resumable: true,
    async perform(at) {
      let chain: string[];
      try {
        chain = extendChain(cx.actingAs(), delegatorLink(cx.agent));
      } catch (error) {
        if (error instanceof DelegationError) throw new EffectFailure('DelegationRefused', error.message, 'DidNotHappen');
        throw error;
      }
      const runId = childRunId(at.runId, at.step, effectKey(spec));
      // Computed when performed, at the run's frontier, so `spent` is what the parent has spent
      // so far; not in the request (the key), which replay must reproduce from any point.
      await runner.startChild({ runId, agent, input: args, chain, parentRunId: at.runId, parentStep: at.step, budgetCap: budgetLeft(cx.ceilings, cx.spent) });
      const seal = await runner.sealed(runId);
      if (seal.outcome === 'succeeded') return { result: seal.result ?? null, spend: seal.spend, provenance: `agent:${agent}` };
      const why = seal.error ? `: ${seal.error.code}: ${seal.error.message}` : '';
      throw Object.assign(new EffectFailure(OUTCOME_CODE[seal.outcome], `the run ${runId} of agent ${agent} ended ${seal.outcome}${why}`.slice(0, 500), 'Landed'), { spend: seal.spend });
    },
  };
  return cx.effect(spec);
}
