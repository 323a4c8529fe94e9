/**
 * For the agent-tool tests (src-main/runtime/agent-tools.test.ts and the child process of
 * tests/helpers/agent-tools-child.ts): a scripted model provider that calls a tool when its
 * prompt says so, and the agents those tests delegate between.
 *
 * The scripted model: offered tools and with no tool result in the conversation yet, a prompt
 * containing `call <tool> <json>` makes it ask for that one call; otherwise it answers
 * `answer: <the last tool result, else the last user message>`. Usage is one token per word
 * and it is priced at 1 USD per million tokens each way, so spend in money is exercised too.
 * Every call appends one line to the counter file (when given): calls are countable across
 * processes.
 */
import { appendFileSync } from 'node:fs';
import type { Completion, ModelProvider, ModelRequest } from '../../src-main/runtime/model-provider';
import { createLocalProvider } from '../../src-main/providers/local-provider';
import { agent } from './runtime-support';
import type { LoadedAgent } from '../../src-main/runtime/manifest';

const words = (text: string) => text.split(/\s+/).filter(Boolean).length;

export function scriptedProvider(counterFile?: string): ModelProvider {
  return {
    id: 'scripted',
    profile: { provider: 'scripted', driver: 'scripted/1', endpoint: 'in-process', streaming: false, label: 'Scripted test model' },
    pricing: { inputPerMTokMicros: 1_000_000, outputPerMTokMicros: 1_000_000 },
    async complete(request: ModelRequest): Promise<Completion> {
      const first = request.messages.find((m) => m.role === 'user')?.content ?? '';
      if (counterFile) appendFileSync(counterFile, `${first.slice(0, 60)} | turn ${request.messages.filter((m) => m.role === 'assistant').length + 1}\n`);
      const inputTokens = request.messages.reduce((n, m) => n + words(m.content), 0);
      const asked = /call (\S+) (\{.*\})/.exec(first);
      const toolResult = request.messages.findLast((m) => m.role === 'tool');
      if (request.tools?.length && asked && !toolResult) {
        return { text: '', usage: { inputTokens, outputTokens: 3, reasoningTokens: 0 }, model: 'scripted-1', truncated: false, toolCalls: [{ id: 'call-1', name: asked[1]!, arguments: JSON.parse(asked[2]!) as unknown }], stopReason: 'tool_calls' };
      }
      const text = `answer: ${toolResult?.content ?? request.messages.findLast((m) => m.role === 'user')?.content ?? ''}`;
      return { text, usage: { inputTokens, outputTokens: words(text), reasoningTokens: 0 }, model: 'scripted-1', truncated: false, stopReason: 'end' };
    },
  };
}

export function agentToolProviders(counterFile?: string): Map<string, ModelProvider> {
  return new Map([
    ['scripted', scriptedProvider(counterFile)],
    ['local', createLocalProvider()],
  ]);
}

/** An agent whose one model step offers `tools` and whose prompt asks for `call`. */
export function delegator(name: string, call: string, tools: string[], extra: { grants?: unknown[]; budget?: Record<string, unknown> } = {}): LoadedAgent {
  return agent({
    name,
    description: `${name} delegates`,
    steps: [{ as: 'answer', model: { provider: 'scripted', prompt: `Work. ${call}`, tools } }, { output: '{{steps.answer.text}}' }],
    grants: [{ kind: 'model', name: 'scripted' }, ...tools.map((t) => ({ kind: 'agent', name: t.slice('agent:'.length) })), ...(extra.grants ?? [])],
    ...(extra.budget ? { budget: extra.budget } : {}),
  });
}

/** The agent called as a tool: takes {text}, asks the model (approval first when `approve`), returns its answer. */
export function helper(name = 'helper', opts: { approve?: boolean; budget?: Record<string, unknown>; provider?: string; prompt?: string; maxTokens?: number } = {}): LoadedAgent {
  const provider = opts.provider ?? 'scripted';
  return agent({
    name,
    description: `Says something about a text (${name})`,
    input: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
    steps: [{ as: 'said', model: { provider, prompt: opts.prompt ?? 'helper says {{input.text}}', ...(opts.maxTokens ? { maxTokens: opts.maxTokens } : {}) } }, { output: '{{steps.said.text}}' }],
    grants: [{ kind: 'model', name: provider, approve: opts.approve ?? false }],
    ...(opts.budget ? { budget: opts.budget } : {}),
  });
}
