/**
 * Tool calling in a model step: a bounded loop in which every model turn and every tool call
 * is its own governed effect.
 *
 * - Each model turn is one `model` effect through callModel; its request carries the tools
 *   offered and the whole conversation so far (assistant turns with their tool calls and
 *   continuation, tool results), so the effect's key covers all of it: a resumed run that
 *   reaches the same turn with the same conversation gets the journaled answer back, and one
 *   that reaches it with a different conversation is divergence, not a quiet reuse.
 * - Each tool call goes through the path a step of that kind takes (callPeer, callMcpTool), or,
 *   for another agent of the plane, callAgent (agent-effect.ts: a child run in the delegation
 *   chain, its output the tool's result): the same grant (`peer:<id>` listing the skill,
 *   `mcp:<server>/<tool>`, `agent:<name>`), approvals, budget and journal record. A tool call
 *   is never performed on the model's word alone: the model
 *   picks among the tools the manifest declared, and each of those was checked against its
 *   grant at load (manifest.ts).
 * - The loop is bounded by the step's maxTurns (default 8, at most 32): a model still calling
 *   tools after that many turns fails the step, naming the bound.
 * - A call to a name nobody declared is not an effect: the model gets a `tool` result with
 *   isError saying the tool does not exist, and the loop goes on (within maxTurns).
 * - A tool that fails (an EffectFailure: refused, errored, not reachable) is reported to the
 *   model as an isError result, as the failure was journaled; suspensions (an approval), denials
 *   and cancellations are not failures and propagate, so a run waiting for a person stops
 *   mid-loop and, resumed, replays every journaled turn and call without repeating any.
 * - The assistant turn goes back verbatim, continuation included (opaque provider state, see
 *   model-provider.ts): a driver that needs it finds it where it put it.
 */
import { callModel } from './model-effect';
import type { Completion, ModelMessage, ModelProvider, ModelRequest, ToolDeclaration } from './model-provider';
import { callMcpTool, type McpToolCaller } from './mcp-effect';
import { callAgent, type AgentRunner } from './agent-effect';
import { callPeer, type PeerCaller } from './peer-effect';
import { callA2a, type A2aCaller } from './a2a-effect';
import { createHash } from 'node:crypto';
import type { RunContext } from './run-context';
import { EffectFailure } from './run-signals';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import { isRecord } from '../../src-shared/plain-object';

export const DEFAULT_MAX_TURNS = 8;
export const MAX_TURNS_LIMIT = 32;

export type ToolRef =
  | { kind: 'peer'; ref: string; peer: string; skill: string }
  | { kind: 'mcp'; ref: string; server: string; tool: string }
  | { kind: 'agent'; ref: string; name: string }
  | { kind: 'a2a'; ref: string; card: string };

/** `peer:<id>/<skill>`, `mcp:<server>/<tool>` or `agent:<name>`; anything else is a TypeError. */
export function parseToolRef(ref: string): ToolRef {
  // A remote A2A agent is named by its card's URL, which has slashes of its own.
  if (/^a2a:https?:\/\/[^\s#]+$/.test(ref)) return { kind: 'a2a', ref, card: ref.slice('a2a:'.length) };
  const match = /^(peer|mcp|agent):([^/\s]+)(?:\/([^/\s]+))?$/.exec(ref);
  if (!match) throw new TypeError(`not a tool reference: ${ref}`);
  const [, kind, first, second] = match as unknown as [string, string, string, string | undefined];
  if (kind === 'agent' && second === undefined) return { kind, ref, name: first };
  if (second === undefined) throw new TypeError(`not a tool reference: ${ref} (expected ${kind}:<a>/<b>)`);
  if (kind === 'peer') return { kind, ref, peer: first, skill: second };
  if (kind === 'mcp') return { kind, ref, server: first, tool: second };
  throw new TypeError(`not a tool reference: ${ref}`);
}

/**
 * The name the model sees: `<kind>__<a>__<b>`, every character outside [a-zA-Z0-9_-] replaced
 * by `_`, cut to 64 (what every provider accepts). Distinct references can therefore collide;
 * the manifest refuses a step whose tools do (an ambiguous name would route a call elsewhere).
 */
export function modelToolName(tool: ToolRef): string {
  // A URL cut to 64 would lose what tells two cards apart: the host and a digest of the whole URL.
  if (tool.kind === 'a2a') {
    const host = new URL(tool.card).host.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 40);
    return `a2a__${host}__${createHash('sha256').update(tool.card).digest('hex').slice(0, 12)}`;
  }
  const parts = tool.kind === 'peer' ? [tool.peer, tool.skill] : tool.kind === 'mcp' ? [tool.server, tool.tool] : [tool.name];
  return [tool.kind, ...parts].join('__').replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
}

export interface ToolLoopDeps {
  peers?: PeerCaller;
  mcp?: McpToolCaller;
  /** How `a2a:<card>` tools reach remote agents; absent: none. */
  a2a?: A2aCaller;
  /** The cards whose grant says `signed: true`: such a tool refuses an unsigned card too. */
  a2aSignedOnly?: ReadonlySet<string>;
  /** How agent tools start child runs (the runtime); absent: no agent tools (a peer's skill runs). */
  agents?: AgentRunner;
}

/** What the model is offered for one tool: name, description and input schema. */
async function declare(cx: RunContext, tool: ToolRef, deps: ToolLoopDeps): Promise<ToolDeclaration> {
  const name = modelToolName(tool);
  if (tool.kind === 'mcp') {
    // The server's own schema where it can be read; it enters the model request (the key). The
    // lookup is journaled like any effect (no grant of its own: it reads, it acts on nothing,
    // so it never asks a person), so a resumed run replays the schema the model was offered
    // rather than needing the server up, or quietly offering a changed one.
    const caller = deps.mcp;
    const listed = caller?.describeTool
      ? ((await cx.effect({
          effect: 'mcp',
          name: `schema:${tool.server}/${tool.tool}`,
          request: { server: tool.server, tool: tool.tool, describe: true },
          destination: caller.destinationOf(tool.server),
          grant: null,
          estimate: NO_SPEND,
          perform: async () => ({ result: (await caller.describeTool!(tool.server, tool.tool)) ?? null, spend: NO_SPEND, provenance: `mcp:${tool.server}` }),
        })) as { description?: string; inputSchema?: Record<string, unknown> } | null)
      : null;
    return { name, description: listed?.description ?? `MCP tool ${tool.tool} of the server ${tool.server}`, inputSchema: listed?.inputSchema ?? { type: 'object' } };
  }
  if (tool.kind === 'peer') return { name, description: `The skill ${tool.skill} of the peer ${tool.peer}`, inputSchema: { type: 'object' } };
  // The card is not read here: what a remote card says about itself would enter the model request
  // unjournaled. The model's arguments go as the message's data part, as they are.
  if (tool.kind === 'a2a') return { name, description: `The remote A2A agent whose card is ${tool.card}; the arguments are sent as its message's data`, inputSchema: { type: 'object' } };
  // The agent's own description and input schema, from its manifest on this plane: local
  // configuration, read rather than journaled, and part of the model request (the key), so an
  // edited manifest shows up on replay as divergence of the model effect, not as a quiet change.
  const described = deps.agents?.describe(tool.name);
  if (!described) throw new EffectFailure('NoSuchAgent', `tool ${tool.ref}: no agent named ${tool.name} is declared on this plane`, 'DidNotHappen');
  return { name, description: described.description, inputSchema: described.inputSchema };
}

async function perform(cx: RunContext, tool: ToolRef, args: Record<string, unknown>, deps: ToolLoopDeps): Promise<unknown> {
  if (tool.kind === 'peer') {
    if (!deps.peers) throw new EffectFailure('NoPeers', 'this plane hosts no peers', 'DidNotHappen');
    // The model chose both the call and its arguments: they carry everything the step has read.
    const chosen = { provenance: cx.stepProvenance(), via: [] };
    return callPeer(cx, deps.peers, tool.peer, tool.skill, args, { target: { value: tool.ref, ...chosen }, arguments: { value: args, ...chosen } });
  }
  if (tool.kind === 'mcp') {
    if (!deps.mcp) throw new EffectFailure('NoMcpServers', 'this plane reaches no MCP servers', 'DidNotHappen');
    // The model chose the call and every argument: each carries everything the step has read.
    const chosen = { provenance: cx.stepProvenance(), via: [] };
    return callMcpTool(cx, deps.mcp, tool.server, tool.tool, args, Object.fromEntries(Object.entries(args).map(([name, value]) => [name, { value, ...chosen }])));
  }
  if (tool.kind === 'a2a') {
    if (!deps.a2a) throw new EffectFailure('NoA2aClient', 'this plane calls no remote A2A agents', 'DidNotHappen');
    return callA2a(cx, deps.a2a, { card: tool.card, message: args, sinks: { message: { value: args, provenance: cx.stepProvenance(), via: [] } }, ...(deps.a2aSignedOnly?.has(tool.card) ? { requireSigned: true as const } : {}) });
  }
  if (!deps.agents) throw new EffectFailure('NoAgentTools', `tool ${tool.ref}: this runtime starts no child runs`, 'DidNotHappen');
  return callAgent(cx, deps.agents, tool.name, args);
}

/**
 * Runs the loop and returns the model's last completion (the one without tool calls).
 * Deterministic given the journaled answers, which is what makes replay repeat nothing.
 */
export async function runModelWithTools(
  cx: RunContext,
  provider: ModelProvider,
  request: ModelRequest,
  refs: readonly string[],
  maxTurns: number,
  deps: ToolLoopDeps,
): Promise<Completion> {
  const tools = refs.map(parseToolRef);
  const byName = new Map(tools.map((tool) => [modelToolName(tool), tool]));
  const declarations: ToolDeclaration[] = [];
  for (const tool of tools) declarations.push(await declare(cx, tool, deps));
  const messages: ModelMessage[] = [...request.messages];
  for (let turn = 1; turn <= maxTurns; turn++) {
    const completion = await callModel(cx, provider, { ...request, messages: [...messages], tools: declarations });
    const calls = completion.toolCalls ?? [];
    if (calls.length === 0) return completion;
    messages.push({ role: 'assistant', content: completion.text, toolCalls: calls, ...(completion.continuation !== undefined ? { continuation: completion.continuation } : {}) });
    for (const call of calls) {
      const tool = byName.get(call.name);
      if (!tool) {
        messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: `There is no tool named ${call.name}. The tools are: ${[...byName.keys()].join(', ')}.`, isError: true });
        continue;
      }
      const args = isRecord(call.arguments) ? call.arguments : {};
      try {
        const result = await perform(cx, tool, args, deps);
        messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: JSON.stringify(result ?? null) });
      } catch (error) {
        // Only a failed effect is the model's business; a suspension, denial or cancellation is the run's.
        if (!(error instanceof EffectFailure)) throw error;
        messages.push({ role: 'tool', toolCallId: call.id, name: call.name, content: `The tool failed (${error.code}): ${error.message}`, isError: true });
      }
    }
  }
  throw new EffectFailure('ModelMaxTurns', `the model was still calling tools after maxTurns (${maxTurns}) turns; raise maxTurns in the step (at most ${MAX_TURNS_LIMIT}) or narrow the task`, 'Landed');
}
