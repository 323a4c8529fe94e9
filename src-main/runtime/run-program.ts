/**
 * What a run executes: a program. An agent manifest compiles to one (its steps, run by the
 * step runner); a peer's skill is one too (its code). The runtime treats them alike: admission
 * asks policy the program's own action on its own resource, the grants and budget govern its
 * effects, and its `run` goes through the same RunContext, so skills are journaled, metered and
 * replayed exactly as agents are.
 */
import type { LoadedAgent } from './manifest';
import type { RunContext } from './run-context';
import type { Budget } from '../../src-shared/vocabulary/spend';
import { DEFAULT_PAYMENT_PROTECT, type ProtectRule } from '../../src-shared/vocabulary/provenance';
import type { Grant } from './grants';
import { runAgentSteps, type StepDeps } from './step-runner';

export interface RunProgram {
  /** The name runs record (RunAdmitted.agent): an agent's name, or `skill:<name>`. */
  id: string;
  description: string;
  /** What policy is asked before a run is admitted. */
  admission: { action: string; resource: string };
  grants: ReadonlyMap<string, { approve: boolean; protect?: Readonly<Record<string, ProtectRule>> }>;
  approveEveryEffect: boolean;
  budget: Budget;
  inputSchema: Record<string, unknown>;
  /** Errors naming the path; empty when the input is acceptable. */
  validateInput(input: unknown): string[];
  run(input: unknown, cx: RunContext): Promise<unknown>;
}

export function agentProgram(agent: LoadedAgent, deps: StepDeps): RunProgram {
  const { manifest } = agent;
  return {
    id: manifest.name,
    description: manifest.description,
    admission: { action: 'runtime:run.start', resource: `agent:${manifest.name}` },
    grants: new Map(manifest.grants.map((g) => [`${g.kind}:${g.name}`, { approve: g.approve, ...protectOf(g) }])),
    approveEveryEffect: manifest.oversight.approveEveryEffect,
    budget: manifest.budget,
    inputSchema: manifest.input,
    validateInput: (input) => agent.validateInput(input),
    run: (input, cx) => runAgentSteps(agent, input, cx, deps),
  };
}

/**
 * A grant's protected fields as the run context checks them: what it declares, over the defaults
 * for its kind (a payment's amount and payee take only trusted values; vocabulary/provenance.ts).
 */
function protectOf(grant: Grant): { protect?: Readonly<Record<string, ProtectRule>> } {
  if (grant.kind === 'payment') return { protect: { ...DEFAULT_PAYMENT_PROTECT, ...grant.protect } };
  if ((grant.kind === 'tool' || grant.kind === 'peer' || grant.kind === 'mcp' || grant.kind === 'a2a') && grant.protect) return { protect: grant.protect };
  return {};
}
