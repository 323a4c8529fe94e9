/**
 * The stream observer of every driver, against each provider's wire-faithful fake: the visible
 * answer arrives in order while the stream runs and concatenates to the Completion's text;
 * thinking, reasoning summaries, refusals and tool-argument JSON never reach it; a buffered
 * answer emits nothing; an observer that throws changes nothing about the call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Completion, type ModelProvider, type ModelRequest, type ModelStreamObserver, ModelError } from '../runtime/model-provider';
import { FAKE_TEXT_DELTAS as ANTHROPIC_DELTAS, FAKE_THINKING_DELTAS, FAKE_TOOL_JSON_DELTAS, startFakeAnthropicServer, type FakeAnthropicServer } from '../../tests/doubles/fake-anthropic-server';
import { FAKE_ANSWER_DELTAS, startFakeChatServer, type FakeChatServer } from '../../tests/doubles/fake-chat-server';
import { FAKE_GEMINI_DELTAS, startFakeGeminiServer, type FakeGeminiServer } from '../../tests/doubles/fake-gemini-server';
import { FAKE_ARGUMENT_DELTAS, FAKE_REFUSAL, FAKE_TEXT_DELTAS as RESPONSES_DELTAS, startFakeResponsesServer, type FakeResponsesServer } from '../../tests/doubles/fake-responses-server';
import { createAnthropicProvider } from './anthropic-messages';
import { createGeminiProvider } from './gemini';
import { createLocalProvider } from './local-provider';
import { createOpenAiCompatibleProvider } from './openai-compatible';
import { createOpenAiResponsesProvider } from './openai-responses';

const KEY = 'sk-stream-observer-test-0123456789abcdef';
const TOOLS = [{ name: 'lookup', description: 'Looks something up.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }];

let anthropic: FakeAnthropicServer;
let chat: FakeChatServer;
let gemini: FakeGeminiServer;
let responses: FakeResponsesServer;

beforeAll(async () => {
  [anthropic, chat, gemini, responses] = await Promise.all([startFakeAnthropicServer(), startFakeChatServer(), startFakeGeminiServer(), startFakeResponsesServer()]);
});
afterAll(async () => {
  await Promise.all([anthropic.close(), chat.close(), gemini.close(), responses.close()]);
});

function ask(model: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model, maxTokens: 64, messages: [{ role: 'user', content: 'Check invoice HERON-204 for Pellow and Daughters.' }], ...extra };
}

/** The call, and every delta the observer saw, each stamped with whether the call had settled yet. */
async function watched(provider: ModelProvider, request: ModelRequest): Promise<{ completion: Completion; deltas: string[]; afterSettle: number }> {
  const deltas: string[] = [];
  let settled = false;
  let afterSettle = 0;
  const observer: ModelStreamObserver = {
    onText(delta) {
      deltas.push(delta);
      if (settled) afterSettle++;
    },
  };
  const completion = await provider.complete(request, undefined, observer);
  settled = true;
  return { completion, deltas, afterSettle };
}

async function failedWatch(provider: ModelProvider, request: ModelRequest): Promise<{ error: ModelError; deltas: string[] }> {
  const deltas: string[] = [];
  const error = await provider.complete(request, undefined, { onText: (d) => deltas.push(d) }).then(
    () => new Error('expected the call to fail'),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ModelError);
  return { error: error as ModelError, deltas };
}

const throwing: ModelStreamObserver = {
  onText() {
    throw new Error('a broken watcher');
  },
};

const drivers = {
  anthropic: (stream = true) => createAnthropicProvider({ baseUrl: anthropic.baseUrl, apiKey: KEY, stream }),
  chat: (stream = true) => createOpenAiCompatibleProvider({ id: 'chat', baseUrl: chat.baseUrl, apiKey: KEY, stream }),
  gemini: (stream = true) => createGeminiProvider({ baseUrl: gemini.baseUrl, apiKey: KEY, stream }),
  responses: (stream = true) => createOpenAiResponsesProvider({ id: 'openai', baseUrl: responses.baseUrl, apiKey: KEY, stream }),
};

const PLAIN: Record<keyof typeof drivers, readonly string[]> = {
  anthropic: ANTHROPIC_DELTAS,
  chat: FAKE_ANSWER_DELTAS,
  gemini: FAKE_GEMINI_DELTAS,
  responses: RESPONSES_DELTAS,
};

describe('every streaming driver shows its visible answer as it arrives', () => {
  for (const name of Object.keys(drivers) as (keyof typeof drivers)[]) {
    it(`${name}: deltas in the wire's order, concatenating to the completion's text, all before the call settles`, async () => {
      const { completion, deltas, afterSettle } = await watched(drivers[name](), ask('ok'));
      expect(deltas).toEqual(PLAIN[name]);
      expect(deltas.join('')).toBe(completion.text);
      expect(afterSettle).toBe(0);
    });

    it(`${name}: a buffered answer emits nothing (its text and its seal arrive together)`, async () => {
      const { completion, deltas } = await watched(drivers[name](false), ask('ok'));
      expect(completion.text).toBe(PLAIN[name].join(''));
      expect(deltas).toEqual([]);
    });

    it(`${name}: an observer that throws changes nothing about the call`, async () => {
      const plain = await drivers[name]().complete(ask('ok'));
      const watchedByABrokenObserver = await drivers[name]().complete(ask('ok'), undefined, throwing);
      expect(watchedByABrokenObserver).toEqual(plain);
    });
  }
});

describe('what is never shown', () => {
  it('anthropic: thinking deltas never, the text after them yes', async () => {
    const { completion, deltas } = await watched(drivers.anthropic(), ask('thinking', { reasoningEffort: 'medium', maxTokens: 2048 }));
    expect(deltas.join('')).toBe(completion.text);
    for (const thought of FAKE_THINKING_DELTAS) expect(deltas.join('|')).not.toContain(thought);
  });

  it('anthropic: the text before a tool call yes, its input_json fragments never', async () => {
    const { completion, deltas } = await watched(drivers.anthropic(), ask('tool-use', { tools: TOOLS }));
    expect(completion.toolCalls?.length).toBe(1);
    expect(deltas).toEqual(['Let me check.']);
    for (const fragment of FAKE_TOOL_JSON_DELTAS) expect(deltas).not.toContain(fragment);
  });

  it('anthropic: a structured answer carried by the forced tool streams nothing', async () => {
    const { completion, deltas } = await watched(drivers.anthropic(), ask('structured', { responseSchema: { type: 'object' } }));
    expect(completion.text).toContain('42');
    expect(deltas).toEqual([]);
  });

  it('responses: function-call argument deltas and the reasoning summary never', async () => {
    const { completion, deltas } = await watched(drivers.responses(), ask('tool-call', { tools: TOOLS }));
    expect(completion.toolCalls?.length).toBe(1);
    expect(FAKE_ARGUMENT_DELTAS.length).toBeGreaterThan(1);
    expect(deltas).toEqual([]);
  });

  it("responses: a refusal's words are not answer text", async () => {
    const { completion, deltas } = await watched(drivers.responses(), ask('refusal'));
    expect(completion.stopReason).toBe('refusal');
    expect(deltas.join('')).not.toContain(FAKE_REFUSAL);
  });

  it('gemini: a thought part never, the answer parts yes', async () => {
    const { completion, deltas } = await watched(drivers.gemini(), ask('thinking'));
    // The fake's thinking answer: a thought part, then the answer in two text parts.
    expect(deltas).toEqual([FAKE_GEMINI_DELTAS[0], FAKE_GEMINI_DELTAS.slice(1).join('')]);
    expect(deltas.join('')).toBe(completion.text);
    expect(deltas.join('')).not.toContain('Weighing the invoice');
  });

  it('gemini: function calls stream nothing', async () => {
    const { completion, deltas } = await watched(drivers.gemini(), ask('tool-call', { tools: TOOLS }));
    expect(completion.toolCalls?.length).toBeGreaterThan(0);
    expect(deltas).toEqual([]);
  });

  it('chat: tool-call argument fragments never', async () => {
    const { completion, deltas } = await watched(drivers.chat(), ask('tool-call', { tools: TOOLS }));
    expect(completion.toolCalls?.length).toBe(1);
    expect(deltas).toEqual([]);
  });

  it('local: the deterministic model answers whole, so nothing streams', async () => {
    const { completion, deltas } = await watched(createLocalProvider(), ask('local'));
    expect(completion.text).toContain('[local model]');
    expect(deltas).toEqual([]);
  });
});

describe('a cut stream', () => {
  it('chat: what arrived before the cut was shown, and the failure keeps its rung', async () => {
    const { error, deltas } = await failedWatch(drivers.chat(), ask('cut-after-content'));
    expect(error.kind).toBe('unaccounted');
    expect(deltas.length).toBeGreaterThan(0);
    expect(FAKE_ANSWER_DELTAS.join('').startsWith(deltas.join(''))).toBe(true);
  });

  it('anthropic: a stream cut mid-text is interrupted whether watched or not', async () => {
    const { error, deltas } = await failedWatch(drivers.anthropic(), ask('cut-mid-text'));
    expect(error.kind).toBe('interrupted');
    expect(deltas.length).toBeGreaterThan(0);
    const unwatched = await drivers.anthropic().complete(ask('cut-mid-text'), undefined, throwing).catch((e: unknown) => e);
    expect((unwatched as ModelError).kind).toBe('interrupted');
  });
});
