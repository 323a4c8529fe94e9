/**
 * Runs a manifest's steps through the run context. Deterministic given the answers of its
 * effects, which is what makes replay possible: the same records lead the same code down the
 * same path. Each step's result is bound under `steps.<as>` for later templates.
 */
import type { LoadedAgent, Step } from './manifest';
import type { ModelProvider } from './model-provider';
import { callModel } from './model-effect';
import type { RunContext } from './run-context';
import { EffectFailure } from './run-signals';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import { render, TemplateError } from './template';
import type { Tool, ToolContext } from './tools';
import { callPeer, type PeerCaller } from './peer-effect';
import { callMcpTool, type McpToolCaller } from './mcp-effect';
import { callA2a, signedOnlyCards, type A2aCaller } from './a2a-effect';
import type { AgentRunner } from './agent-effect';
import { DEFAULT_MAX_TURNS, runModelWithTools } from './model-tools';
import { structuredValue } from './structured-output';
import { OPERATOR, type Traced } from '../../src-shared/vocabulary/provenance';
import type { Labelled, Sensitivity } from '../../src-shared/vocabulary/sensitivity';

/**
 * Where each value of a run's scope came from (docs/GOVERNED-RUNTIME.md, "Provenance at protected
 * sinks"): `input` its RunAdmitted.inputProvenance, `steps.<as>` every provenance its step read
 * or was answered with. A rendered value carries the provenances of every scope path it read,
 * and one that read none is the manifest's literal: the operator's.
 */
type Origins = Map<string, readonly string[]>;
/**
 * The sensitivity label of each scope binding (docs/GOVERNED-RUNTIME.md, "Sensitivity"): `input`
 * the run's input label, `steps.<as>` the highest label its step read or was answered with.
 */
type Labels = Map<string, string>;

function bindingsOf<T>(path: string, map: ReadonlyMap<string, T>): T[] {
  const [top, name] = path.split('.');
  if (top === 'steps' && name === undefined) return [...map.entries()].filter(([k]) => k.startsWith('steps.')).map(([, v]) => v);
  const one = map.get(top === 'steps' ? `steps.${name}` : top!);
  return one === undefined ? [] : [one];
}

/** A rendered value: what it is, where it came from, and its sensitivity label (the join of every path it read; a literal's is the lowest). */
type Rendered = Traced & { label: Labelled };

/** Renders a template and says what it was made from. */
function trace(template: unknown, scope: Record<string, unknown>, origins: Origins, labels: Labels, sensitivity: Sensitivity): Rendered {
  const via: string[] = [];
  const value = render(template, scope, via);
  const read = [...new Set(via)];
  const provenance = [...new Set(read.flatMap((path) => bindingsOf(path, origins).flat()))].sort();
  const label = read.reduce((joined, path) => bindingsOf(path, labels).reduce((j, l) => sensitivity.join(j, { label: l, from: [path] }), joined), sensitivity.bottom());
  return { value, provenance: via.length === 0 ? [OPERATOR] : provenance, via: read, label };
}

export interface StepDeps {
  providers: ReadonlyMap<string, ModelProvider>;
  tools: ReadonlyMap<string, Tool>;
  toolContext: ToolContext;
  /** How runs reach local peers; absent where no peers are hosted. */
  peers?: PeerCaller;
  /** How runs reach the MCP servers the user declared; absent where none are wired. */
  mcp?: McpToolCaller;
  /** How runs reach remote A2A agents; absent where none is wired. */
  a2a?: A2aCaller;
  /** The cards this agent's grants require signed (`signed: true`); set per agent by runAgentSteps. */
  a2aSignedOnly?: ReadonlySet<string>;
  /** How a model step's `agent:<name>` tools start child runs (the runtime; agent-effect.ts). */
  agents?: AgentRunner;
}

/** What a `pay` step's approved effect returns: an intent, recorded; no money moves. */
export const PAYMENT_NOTE = 'AgentPlane moves no money: this records a payment intent a person approved; settle it yourself.';

async function runStep(step: Step, scope: Record<string, unknown>, origins: Origins, labels: Labels, cx: RunContext, deps: StepDeps): Promise<unknown> {
  // Every argument rendered is part of what the step's result is made from (cx.stepProvenance,
  // cx.stepSensitivity), and of what any request the step sends carries.
  const t = (value: unknown): Traced => {
    const { label, ...traced } = trace(value, scope, origins, labels, cx.sensitivity);
    cx.addOrigin(traced.provenance, label);
    return traced;
  };
  const r = <T>(value: unknown) => t(value).value as T;
  if ('model' in step) {
    const provider = deps.providers.get(step.model.provider);
    if (!provider) throw new EffectFailure('NoSuchProvider', `no model provider named ${step.model.provider} is configured`, 'DidNotHappen');
    const messages = [
      ...(step.model.system ? [{ role: 'system' as const, content: r<string>(step.model.system) }] : []),
      { role: 'user' as const, content: String(r(step.model.prompt)) },
    ];
    // No model named: the provider's default, which its profile (and so the effect key) records.
    const request = {
      model: step.model.model ?? '',
      messages,
      maxTokens: step.model.maxTokens,
      ...(step.model.schema ? { responseSchema: step.model.schema } : {}),
      ...(step.model.reasoningEffort ? { reasoningEffort: step.model.reasoningEffort } : {}),
    };
    // With tools: the bounded loop, every turn and every call its own effect (model-tools.ts).
    const completion = step.model.tools?.length
      ? await runModelWithTools(cx, provider, request, step.model.tools, step.model.maxTurns ?? DEFAULT_MAX_TURNS, deps)
      : await callModel(cx, provider, request);
    // With a schema, the result is the answer itself (validated inside the effect, so a journaled
    // completion here is one that matched), and later templates read its fields.
    return step.model.schema ? structuredValue(completion) : completion;
  }
  if ('tool' in step) {
    const tool = deps.tools.get(step.tool.name);
    if (!tool) throw new EffectFailure('NoSuchTool', `no tool named ${step.tool.name}`, 'DidNotHappen');
    const sinks = Object.fromEntries(Object.entries(step.tool.args).map(([name, value]) => [name, t(value)]));
    const args = Object.fromEntries(Object.entries(sinks).map(([name, traced]) => [name, traced.value]));
    return cx.effect({
      sinks,
      effect: 'tool',
      name: tool.name,
      request: args,
      destination: tool.destination(args, deps.toolContext),
      grant: `tool:${tool.name}`,
      estimate: { ...NO_SPEND, effects: 1 },
      // The label the request carries goes with it: a file written keeps it (file-labels.ts).
      perform: (at) => tool.run(args, at.carried !== undefined ? { ...deps.toolContext, carried: at.carried } : deps.toolContext),
    });
  }
  if ('pay' in step) {
    const traced = { amount: t(step.pay.amount), payee: t(step.pay.payee), currency: { value: step.pay.currency, provenance: [OPERATOR], via: [] } };
    const request = { amount: traced.amount.value as number | string, currency: step.pay.currency, payee: String(traced.payee.value) };
    const amount = Number(request.amount);
    if (!Number.isFinite(amount) || amount <= 0) throw new EffectFailure('BadArguments', 'pay.amount: a positive number is required', 'DidNotHappen');
    return cx.effect({
      sinks: { amount: { ...traced.amount, value: amount }, payee: { ...traced.payee, value: request.payee }, currency: traced.currency },
      effect: 'payment',
      name: 'request',
      request: { ...request, amount },
      destination: `payee:${request.payee}`,
      grant: 'payment:request',
      estimate: { ...NO_SPEND, effects: 1 },
      perform: async () => ({ result: { status: 'approved-intent', moved: false, amount, currency: request.currency, payee: request.payee, note: PAYMENT_NOTE }, spend: { ...NO_SPEND, effects: 1 }, provenance: 'plane' }),
    });
  }
  if ('input' in step) {
    return cx.waitFor(String(r(step.input.prompt)));
  }
  if ('peer' in step) {
    if (!deps.peers) throw new EffectFailure('NoPeers', 'this plane hosts no peers', 'DidNotHappen');
    // The target is the manifest's own (a step names its peer and skill); the arguments are what they were rendered from.
    const args = t(step.peer.args);
    const target = { value: `peer:${step.peer.name}/${step.peer.skill}`, provenance: [OPERATOR], via: [] };
    return callPeer(cx, deps.peers, step.peer.name, step.peer.skill, args.value as Record<string, unknown>, { target, arguments: args });
  }
  if ('mcp' in step) {
    if (!deps.mcp) throw new EffectFailure('NoMcpServers', 'this plane reaches no MCP servers', 'DidNotHappen');
    // Each argument traced on its own where the manifest spells them out (what a grant's `protect:` names); a whole-object template is one value.
    const spelled = typeof step.mcp.args === 'object' && step.mcp.args !== null && !Array.isArray(step.mcp.args);
    const sinks = spelled ? Object.fromEntries(Object.entries(step.mcp.args as Record<string, unknown>).map(([name, value]) => [name, t(value)])) : undefined;
    const args = sinks ? Object.fromEntries(Object.entries(sinks).map(([name, traced]) => [name, traced.value])) : r<Record<string, unknown>>(step.mcp.args);
    return callMcpTool(cx, deps.mcp, step.mcp.server, step.mcp.tool, args, sinks);
  }
  if ('a2a' in step) {
    if (!deps.a2a) throw new EffectFailure('NoA2aClient', 'this plane calls no remote A2A agents', 'DidNotHappen');
    const traced = t(step.a2a.message);
    const message = traced.value;
    return callA2a(cx, deps.a2a, {
      sinks: { message: traced },
      card: step.a2a.card,
      ...(step.a2a.skill !== undefined ? { skill: step.a2a.skill } : {}),
      ...(deps.a2aSignedOnly?.has(step.a2a.card) ? { requireSigned: true as const } : {}),
      message: typeof message === 'string' ? message : typeof message === 'object' && message !== null && !Array.isArray(message) ? (message as Record<string, unknown>) : String(message),
    });
  }
  return r(step.output);
}

export async function runAgentSteps(agent: LoadedAgent, input: unknown, cx: RunContext, shared: StepDeps): Promise<unknown> {
  // A grant's options are this agent's, not the plane's: the a2a grants saying `signed: true`.
  const deps: StepDeps = { ...shared, a2aSignedOnly: signedOnlyCards(agent.manifest.grants) };
  const scope: Record<string, unknown> = { input, steps: {} };
  const origins: Origins = new Map([['input', [cx.inputProvenance]]]);
  const labels: Labels = new Map([['input', cx.inputSensitivity]]);
  let last: unknown = null;
  for (const [index, step] of agent.manifest.steps.entries()) {
    try {
      cx.beginStep();
      last = await runStep(step, scope, origins, labels, cx, deps);
    } catch (error) {
      if (error instanceof TemplateError) throw new EffectFailure('TemplateError', `steps.${index}: ${error.message}`, 'DidNotHappen');
      throw error;
    }
    if ('output' in step) return last;
    if ('as' in step && step.as) {
      (scope.steps as Record<string, unknown>)[step.as] = last;
      const made = cx.stepProvenance();
      origins.set(`steps.${step.as}`, made.length > 0 ? made : [OPERATOR]);
      labels.set(`steps.${step.as}`, cx.stepSensitivity().label);
    }
  }
  return last;
}
