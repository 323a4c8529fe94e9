/**
 * What the plane surface (plane-surface.ts) offers one MCP caller, read from the plane's
 * `agents.list` through its door: the tools, the prompts, and the declaration resource.
 *
 * - An agent is offered only when it declares an object input schema (the only honest argument
 *   shape to hand a model is one somebody reviewed).
 * - A caller that cannot hold a task (a 2025-11-25 session, or a 2026-07-28 request that does
 *   not declare the `io.modelcontextprotocol/tasks` extension) is offered only agents whose runs
 *   never wait for a person by their own declaration (runtime/agent-waits.ts): no approve grant
 *   or oversight, no payment, no input step, no delegation. A governed suspension has no
 *   expression on MCP without Tasks. A budget ceiling does not count: it is reached by spend, not
 *   declared as a question, like a halt or an effect in doubt, and a run that waits at one anyway
 *   is answered as an error naming the run and saying it waits on this plane (tool-result.ts;
 *   docs/GOVERNED-RUNTIME.md). A door that does not say (`mayWaitFor` absent: a peer's coded
 *   skills) is taken at its word.
 * - A prompt is an agent's system prompt(s), verbatim, taking no arguments: one per offered
 *   agent that has any.
 * - The declaration (`agentplane://declaration`) is what a host needs to decide whether to call:
 *   every agent served, its input schema, grants and budget, why its runs may wait, and whether
 *   this caller is offered it.
 */
import { ProtocolError, ProtocolErrorCode, type GetPromptResult, type Prompt, type ReadResourceResult, type Resource, type Tool } from '@modelcontextprotocol/server';
import type { AgentSummary } from '../../../src-shared/ipc/contract';
import { missingTasksExtension, TASKS_EXTENSION } from './tasks';

export const DECLARATION_URI = 'agentplane://declaration';
const JSON_MIME = 'application/json';

export const declarationResource: Resource = {
  uri: DECLARATION_URI,
  name: 'declaration',
  title: 'What this plane serves',
  description: "The agents this plane serves: each one's input schema, grants, budget, why its runs may wait for a person, and whether you are offered it without the Tasks extension.",
  mimeType: JSON_MIME,
};

/** Whether the agent can be served at all: it declares an object input schema. */
export function servable(agent: AgentSummary): boolean {
  const schema = agent.inputSchema as { type?: unknown };
  return typeof schema === 'object' && schema !== null && schema.type === 'object';
}

/** Waits a caller without Tasks is not offered: all but a ceiling's (see above). */
function declaredWaits(agent: AgentSummary): string[] {
  return (agent.mayWaitFor ?? []).filter((wait) => wait !== 'budget');
}

/** Whether a caller without Tasks may be offered it: its runs never wait by its own declaration. */
export function neverWaits(agent: AgentSummary): boolean {
  return declaredWaits(agent).length === 0;
}

/** The agents this caller is offered, as tools and prompts. */
export function offeredAgents(agents: readonly AgentSummary[], holdsTasks: boolean): AgentSummary[] {
  return agents.filter((a) => servable(a) && (holdsTasks || neverWaits(a)));
}

export function toolOf(agent: AgentSummary): Tool {
  return { name: agent.name, description: agent.description, inputSchema: agent.inputSchema as Tool['inputSchema'] };
}

export function promptOf(agent: AgentSummary): Prompt | null {
  if (!agent.systemPrompts?.length) return null;
  return { name: agent.name, title: `${agent.name}'s system prompt`, description: `The system prompt of the agent ${agent.name} (${agent.description}), verbatim; it takes no arguments.` };
}

export function promptResult(agents: readonly AgentSummary[], name: string): GetPromptResult {
  const agent = agents.find((a) => a.name === name);
  const prompt = agent ? promptOf(agent) : null;
  if (!agent || !prompt) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: no prompt named ${JSON.stringify(name.slice(0, 200))}`, { prompt: name.slice(0, 200) });
  return {
    description: prompt.description,
    messages: (agent.systemPrompts ?? []).map((text) => ({ role: 'user' as const, content: { type: 'text' as const, text } })),
  };
}

/**
 * The refusal of a call to an agent this caller is not offered because its runs may wait: before
 * anything is admitted. 2026-07-28 has the error for it (a missing client capability, naming the
 * extension); 2025-11-25 does not, so there it is invalid params saying the same.
 */
export function needsTasks(agent: AgentSummary, era: 'modern' | 'legacy'): Error {
  const what = `the tool ${agent.name} (its runs may wait for a person: ${declaredWaits(agent).join(', ')}; no run was started)`;
  if (era === 'modern') return missingTasksExtension(what);
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: ${what} needs the ${TASKS_EXTENSION} extension, which a 2025-11-25 session cannot hold; call it over MCP 2026-07-28 declaring the extension`, {
    tool: agent.name,
    requiredExtension: TASKS_EXTENSION,
  });
}

export function declarationOf(agents: readonly AgentSummary[], holdsTasks: boolean, version: string): ReadResourceResult {
  const served = agents.filter(servable).map((a) => ({
    name: a.name,
    description: a.description,
    inputSchema: a.inputSchema,
    grants: a.grants,
    budget: a.budget,
    mayWaitFor: a.mayWaitFor ?? null,
    needsTasks: !neverWaits(a),
    offeredToYou: holdsTasks || neverWaits(a),
    prompt: promptOf(a) !== null,
  }));
  const text = JSON.stringify({ plane: 'agentplane', version, tasksExtension: TASKS_EXTENSION, agents: served });
  return { contents: [{ uri: DECLARATION_URI, mimeType: JSON_MIME, text }] };
}
