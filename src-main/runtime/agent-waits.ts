/**
 * What a manifest says, before any run, about its runs waiting for a person and about its model
 * steps' system prompts: read by the plane's `agents.list` (plane/runtime-handlers.ts), so a
 * door that serves agents to callers who cannot hold a waiting call (an MCP host without the
 * Tasks extension) can offer only the agents that never wait by their own declaration.
 *
 * The reading is conservative: a declared budget ceiling is listed even when a run would rarely
 * reach it (a model step's token estimate grows with its input), and any delegation counts
 * because the delegate's runs may wait. The MCP door does not hide an agent for its ceiling
 * alone (protocols/mcp/plane-catalogue.ts says why), but the declaration lists it.
 */
import { DELEGATING_EFFECTS } from '../../src-shared/vocabulary/effects';
import type { AgentWait } from '../../src-shared/vocabulary/waits';
import type { Manifest } from './manifest';

/** Grant kinds whose effect is another agent's run (here, at a peer, or over A2A). */
const DELEGATING_GRANTS: ReadonlySet<string> = new Set(DELEGATING_EFFECTS);

export function mayWaitFor(manifest: Manifest): AgentWait[] {
  const waits = new Set<AgentWait>();
  if (manifest.oversight.approveEveryEffect) waits.add('approval');
  for (const grant of manifest.grants) {
    if (grant.approve) waits.add(grant.kind === 'payment' ? 'payment' : 'approval');
    if (DELEGATING_GRANTS.has(grant.kind)) waits.add('delegation');
  }
  if (Object.keys(manifest.budget).length > 0) waits.add('budget');
  for (const step of manifest.steps) {
    if ('input' in step) waits.add('input');
    if ('pay' in step) waits.add('payment');
  }
  return [...waits];
}

export function systemPromptsOf(manifest: Manifest): string[] {
  return manifest.steps.flatMap((step) => ('model' in step && step.model.system !== undefined ? [step.model.system] : []));
}
