/**
 * The Anthropic Messages driver against a wire-faithful fake: the request shape (system,
 * tools, tool_choice, tool_result turns, continuation verbatim, thinking), the answer
 * (text, tool calls, thinking continuation, cache usage, stop reasons, structured output
 * through the forced tool), and every rung of the ladder. This wire reports usage as the
 * answer is delivered (message_start), so a stream cut after content is `interrupted`
 * carrying that usage: the test asserts the rung and the counts, not merely "it failed".
 *
 * Every error is checked for the prompt and the API key: neither may reach a message.
 */
import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelErrorKind, type ModelMessage, type ModelRequest, ModelError } from '../runtime/model-provider';
import { type AnthropicOptions, ANSWER_TOOL_NAME, createAnthropicProvider } from './anthropic-messages';
import {
  type FakeAnthropicServer,
  FAKE_ANTHROPIC_MODEL,
  FAKE_OUTPUT_TOKENS,
  FAKE_SIGNATURE,
  FAKE_START_USAGE,
  FAKE_STRUCTURED,
  FAKE_TEXT,
  FAKE_THINKING_DELTAS,
  FAKE_TOOL_ID,
  FAKE_TOOL_INPUT,
  startFakeAnthropicServer,
} from '../../tests/doubles/fake-anthropic-server';

const API_KEY = 'sk-ant-api03-7Qx2Lk9Vb4Nw8Rt1Yz6Hd3Fg5Jm0Pc-AAAA';
const SYSTEM = 'You review supplier invoices for Harrow and Finch Holdings.';
const USER = 'Flag invoice NIGHTJAR-7731 from Kestrel Foundry: total 48210.55 EUR, due on the fourteenth of March.';
const PROMPT_MARKERS = [SYSTEM, USER, 'NIGHTJAR-7731', 'Kestrel Foundry', 'Harrow and Finch'];

/** Usage as the driver must report it from FAKE_START_USAGE and the final output count. */
const FULL_USAGE = { inputTokens: 25, outputTokens: FAKE_OUTPUT_TOKENS, reasoningTokens: 0, cacheReadTokens: 400, cacheWriteTokens: 100 };
/** What message_start alone said: a stream cut before message_delta carries this. */
const START_USAGE = { ...FULL_USAGE, outputTokens: FAKE_START_USAGE.output_tokens };

let fake: FakeAnthropicServer;
const messagesSeen: string[] = [];

beforeAll(async () => {
  fake = await startFakeAnthropicServer();
});
afterAll(() => fake.close());

function provider(options: Partial<AnthropicOptions> = {}) {
  return createAnthropicProvider({ baseUrl: fake.baseUrl, apiKey: API_KEY, ...options });
}

function ask(model: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model,
    maxTokens: 64,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
    ],
    ...extra,
  };
}

async function failure(call: Promise<unknown>, kind: ModelErrorKind): Promise<ModelError> {
  const caught = await call.then(
    () => new Error('expected the call to fail'),
    (error: unknown) => error,
  );
  expect(caught).toBeInstanceOf(ModelError);
  const error = caught as ModelError;
  expect({ kind: error.kind, message: error.message }).toMatchObject({ kind });
  for (const shown of [error.message, String(error), inspect(error), JSON.stringify({ ...error, message: error.message })]) {
    expect(shown).not.toContain(API_KEY);
    expect(shown).not.toContain(API_KEY.slice(8, 24));
    for (const marker of PROMPT_MARKERS) expect(shown).not.toContain(marker);
  }
  messagesSeen.push(error.message);
  return error;
}

/** The body of the last request the fake got for this behaviour. */
function lastBody(model: string): Record<string, unknown> {
  const found = fake.requests.filter((request) => request.body.model === model);
  expect(found.length).toBeGreaterThan(0);
  return found[found.length - 1]!.body;
}

describe('the provider and its request', () => {
  it('publishes a profile without the key, and holds the key nowhere it could be printed', () => {
    const p = provider({ model: 'claude-sonnet-4-5' });
    expect(p.id).toBe('anthropic');
    expect(p.profile).toEqual({
      provider: 'anthropic',
      driver: 'anthropic-messages/1',
      endpoint: fake.baseUrl,
      streaming: true,
      label: `Anthropic Messages at ${fake.baseUrl}`,
      defaultModel: 'claude-sonnet-4-5',
    });
    expect(JSON.stringify(p)).not.toContain(API_KEY);
    expect(inspect(p, { depth: 10, showHidden: true })).not.toContain(API_KEY);
    expect(createAnthropicProvider({ apiKey: API_KEY }).profile.endpoint).toBe('https://api.anthropic.com');
  });

  it('refuses construction without a key, and a baseUrl that could carry a secret', () => {
    expect(() => createAnthropicProvider({ apiKey: '' })).toThrow(/AGENTPLANE_ANTHROPIC_API_KEY/);
    expect(() => provider({ baseUrl: 'https://user:pw@api.anthropic.com' })).toThrow(/^anthropic: baseUrl must not carry credentials/);
    expect(() => provider({ baseUrl: 'https://api.anthropic.com/?key=x' })).toThrow(/query or fragment/);
    expect(() => provider({ timeoutMs: -1 })).toThrow(/timeoutMs/);
  });

  it('streams: POST /v1/messages with x-api-key, anthropic-version, system at top level', async () => {
    await provider().complete(ask('ok', { temperature: 0.2 }));
    const recorded = fake.requests.filter((r) => r.body.model === 'ok').pop()!;
    expect(recorded.method).toBe('POST');
    expect(recorded.path).toBe('/v1/messages');
    expect(recorded.headers['x-api-key']).toBe(API_KEY);
    expect(recorded.headers['anthropic-version']).toBe('2023-06-01');
    expect(recorded.headers['content-type']).toContain('application/json');
    expect(recorded.headers.authorization).toBeUndefined();
    expect(recorded.body).toEqual({ model: 'ok', max_tokens: 64, system: SYSTEM, messages: [{ role: 'user', content: USER }], temperature: 0.2, stream: true });
  });

  it('sends tools, tool_choice, tool_result turns (merged), and an assistant turn built from text and tool_use', async () => {
    const messages: ModelMessage[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
      { role: 'assistant', content: 'Checking two things.', toolCalls: [{ id: 'toolu_1', name: 'lookup', arguments: { q: 'a' } }, { id: 'toolu_2', name: 'lookup', arguments: { q: 'b' } }] },
      { role: 'tool', toolCallId: 'toolu_1', name: 'lookup', content: 'found a' },
      { role: 'tool', toolCallId: 'toolu_2', name: 'lookup', content: 'no such b', isError: true },
      { role: 'user', content: 'And now?' },
    ];
    const tools = [{ name: 'lookup', description: 'Look a thing up.', inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] } }];
    const p = provider();
    await p.complete(ask('ok', { messages, tools }));
    let body = lastBody('ok');
    expect(body.tools).toEqual([{ name: 'lookup', description: 'Look a thing up.', input_schema: tools[0]!.inputSchema }]);
    expect(body.tool_choice).toEqual({ type: 'auto' });
    expect(body.messages).toEqual([
      { role: 'user', content: USER },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking two things.' },
          { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'a' } },
          { type: 'tool_use', id: 'toolu_2', name: 'lookup', input: { q: 'b' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'found a', is_error: false },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'no such b', is_error: true },
          { type: 'text', text: 'And now?' },
        ],
      },
    ]);
    await p.complete(ask('ok', { tools, toolChoice: 'required' }));
    expect(lastBody('ok').tool_choice).toEqual({ type: 'any' });
    await p.complete(ask('ok', { tools, toolChoice: { name: 'lookup' } }));
    body = lastBody('ok');
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'lookup' });
  });

  it('sends an assistant continuation back verbatim, thinking signature and all', async () => {
    const continuation = [
      { type: 'thinking', thinking: 'private chain', signature: 'sig-opaque-123' },
      { type: 'redacted_thinking', data: 'ENCRYPTED' },
      { type: 'tool_use', id: 'toolu_9', name: 'lookup', input: { q: 'z' }, some_future_field: [1, 2] },
    ];
    await provider().complete(
      ask('ok', {
        messages: [
          { role: 'user', content: USER },
          { role: 'assistant', content: 'ignored when a continuation is present', toolCalls: [{ id: 'x', name: 'y', arguments: {} }], continuation: { wire: 'anthropic-messages/1', turn: continuation } },
          { role: 'tool', toolCallId: 'toolu_9', name: 'lookup', content: 'z found' },
        ],
        tools: [{ name: 'lookup', description: 'd', inputSchema: { type: 'object' } }],
        reasoningEffort: 'low',
      }),
    );
    const body = lastBody('ok');
    expect((body.messages as unknown[])[1]).toEqual({ role: 'assistant', content: continuation });
  });

  it('round-trips: a completion’s continuation, sent back, is the same content the wire gave', async () => {
    const p = provider();
    const first = await p.complete(ask('thinking', { reasoningEffort: 'low' }));
    await p.complete(ask('ok', { reasoningEffort: 'low', messages: [{ role: 'user', content: USER }, { role: 'assistant', content: first.text, continuation: first.continuation }, { role: 'user', content: 'More.' }] }));
    const sent = (lastBody('ok').messages as { content: unknown }[])[1]!.content;
    expect(sent).toEqual(first.continuation?.turn);
    expect(JSON.stringify(sent)).toContain(FAKE_SIGNATURE);
  });

  it('maps reasoningEffort onto a thinking budget, raising max_tokens above it', async () => {
    const p = provider();
    for (const [effort, budget] of [['low', 1024], ['medium', 4096], ['high', 16384]] as const) {
      await p.complete(ask('ok', { reasoningEffort: effort }));
      const body = lastBody('ok');
      expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: budget });
      expect(body.max_tokens).toBe(64 + budget);
      expect(body.temperature).toBeUndefined();
    }
  });

  it('refuses before dispatch what the wire would reject (nothing is sent)', async () => {
    const before = fake.requests.length;
    const p = provider();
    const tools = [{ name: 'lookup', description: 'd', inputSchema: { type: 'object' } }];
    await failure(p.complete(ask('')), 'refused');
    await failure(p.complete(ask('ok', { maxTokens: 0 })), 'refused');
    expect((await failure(p.complete(ask('ok', { tools, toolChoice: { name: 'nope' } })), 'refused')).message).toContain('not among the tools');
    expect((await failure(p.complete(ask('ok', { tools, toolChoice: 'required', reasoningEffort: 'high' })), 'refused')).message).toContain('forced tool');
    await failure(p.complete(ask('ok', { responseSchema: { type: 'object' }, reasoningEffort: 'low' })), 'refused');
    expect((await failure(p.complete(ask('ok', { temperature: 0.2, reasoningEffort: 'low' })), 'refused')).message).toContain('temperature');
    for (const continuation of [{ wire: 'openai-responses/1', turn: [{ type: 'reasoning', id: 'rs_1' }] }, { wire: 'gemini-generate-content/1', turn: { role: 'model', parts: [] } }, [{ type: 'text', text: 'untagged' }], { wire: 'anthropic-messages/1', turn: [{ text: 'no type' }] }, { provider: 'anthropic', content: [{ type: 'text', text: 'the old, pre-convention tag' }] }, { wire: 'anthropic-messages/0', turn: [{ type: 'text', text: 'another driver version' }] }]) {
      const foreign = { role: 'assistant' as const, content: '', continuation };
      expect((await failure(p.complete(ask('ok', { messages: [{ role: 'user', content: USER }, foreign] })), 'refused')).message).toContain('not an Anthropic turn');
    }
    const controller = new AbortController();
    controller.abort();
    await failure(p.complete(ask('ok'), controller.signal), 'unavailable');
    expect(fake.requests.length).toBe(before);
  });
});

describe('the answer', () => {
  for (const stream of [true, false]) {
    const mode = stream ? 'streaming' : 'non-streaming';

    it(`${mode}: text, the model that answered, usage with the cache fields, and the turn verbatim`, async () => {
      const completion = await provider({ stream }).complete(ask('ok'));
      expect(completion).toEqual({
        text: FAKE_TEXT,
        usage: FULL_USAGE,
        model: FAKE_ANTHROPIC_MODEL,
        truncated: false,
        toolCalls: [],
        stopReason: 'end',
        continuation: { wire: 'anthropic-messages/1', turn: [{ type: 'text', text: FAKE_TEXT }] },
      });
      expect(lastBody('ok').stream).toBe(stream);
    });

    it(`${mode}: thinking stays out of the text, its signature in the continuation, its tokens in output`, async () => {
      const completion = await provider({ stream }).complete(ask('thinking', { reasoningEffort: 'medium' }));
      expect(completion.text).toBe(FAKE_TEXT);
      expect(completion.continuation).toEqual({
        wire: 'anthropic-messages/1',
        turn: [
          { type: 'thinking', thinking: FAKE_THINKING_DELTAS.join(''), signature: FAKE_SIGNATURE },
          { type: 'text', text: FAKE_TEXT },
        ],
      });
      expect(completion.usage.reasoningTokens).toBe(0);
      expect(completion.usage.outputTokens).toBe(FAKE_OUTPUT_TOKENS);
    });

    it(`${mode}: tool_use becomes a tool call with parsed arguments, stop tool_calls`, async () => {
      const completion = await provider({ stream }).complete(ask('tool-use', { tools: [{ name: 'get_weather', description: 'w', inputSchema: { type: 'object' } }] }));
      expect(completion.toolCalls).toEqual([{ id: FAKE_TOOL_ID, name: 'get_weather', arguments: FAKE_TOOL_INPUT }]);
      expect(completion.stopReason).toBe('tool_calls');
      expect(completion.text).toBe('Let me check.');
      expect(completion.continuation).toEqual({
        wire: 'anthropic-messages/1',
        turn: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: FAKE_TOOL_ID, name: 'get_weather', input: FAKE_TOOL_INPUT },
        ],
      });
    });

    it(`${mode}: structured output through the forced tool, answered as JSON text`, async () => {
      const schema = { type: 'object', properties: { answer: { type: 'number' }, reason: { type: 'string' } }, required: ['answer'] };
      const completion = await provider({ stream }).complete(ask('structured', { responseSchema: schema }));
      const body = lastBody('structured');
      expect(body.tools).toEqual([{ name: ANSWER_TOOL_NAME, description: expect.any(String) as unknown, input_schema: schema }]);
      expect(body.tool_choice).toEqual({ type: 'tool', name: ANSWER_TOOL_NAME });
      expect(JSON.parse(completion.text)).toEqual(FAKE_STRUCTURED);
      expect(completion.toolCalls).toEqual([]);
      expect(completion.stopReason).toBe('end');
    });

    it(`${mode}: max_tokens is truncated (length); refusal is refusal`, async () => {
      const cut = await provider({ stream }).complete(ask('max-tokens'));
      expect(cut).toMatchObject({ truncated: true, stopReason: 'length', text: 'Hello from' });
      const refused = await provider({ stream }).complete(ask('refusal'));
      expect(refused).toMatchObject({ truncated: false, stopReason: 'refusal' });
    });

    it(`${mode}: a model that ignores the forced structured-output tool is a loud, billed failure`, async () => {
      const error = await failure(provider({ stream }).complete(ask('ignores-forced-tool', { responseSchema: { type: 'object' } })), 'interrupted');
      expect(error.usage).toEqual(FULL_USAGE);
      expect(error.message).toContain(ANSWER_TOOL_NAME);
    });
  }

  it('a tool JSON cut by max_tokens is truncation, not a malformed answer: no call, no answer, truncated', async () => {
    const tools = [{ name: 'get_weather', description: 'w', inputSchema: { type: 'object' } }];
    const asTool = await provider().complete(ask('max-tokens-in-tool', { tools }));
    expect(asTool).toMatchObject({ truncated: true, stopReason: 'length', toolCalls: [] });
    const asAnswer = await provider().complete(ask('max-tokens-in-tool', { responseSchema: { type: 'object' } }));
    expect(asAnswer).toMatchObject({ truncated: true, stopReason: 'length', text: '', toolCalls: [] });
  });

  it('offers the answer tool beside other tools with tool_choice any', async () => {
    await provider().complete(ask('structured', { responseSchema: { type: 'object' }, tools: [{ name: 'lookup', description: 'd', inputSchema: { type: 'object' } }] }));
    const body = lastBody('structured');
    expect((body.tools as { name: string }[]).map((t) => t.name)).toEqual(['lookup', ANSWER_TOOL_NAME]);
    expect(body.tool_choice).toEqual({ type: 'any' });
  });
});

describe('the status line', () => {
  const cases: [string, number, ModelErrorKind, string][] = [
    ['bad-request', 400, 'refused', 'invalid_request_error'],
    ['unauthorized', 401, 'refused', 'authentication_error'],
    ['forbidden', 403, 'refused', 'permission_error'],
    ['not-found', 404, 'refused', 'not_found_error'],
    ['too-large', 413, 'refused', 'request_too_large'],
    ['rate-limited', 429, 'refused', 'rate_limit_error'],
    ['server-error', 500, 'unavailable', 'api_error'],
    ['overloaded', 529, 'unavailable', 'overloaded_error'],
  ];
  for (const [behaviour, status, kind, type] of cases) {
    it(`${status}: ${kind}, with the provider's error type and words`, async () => {
      // One answer's mapping: 429/529 are otherwise sent again (rate-limit.test.ts covers that).
      const error = await failure(provider({ rateLimitRetries: 0 }).complete(ask(behaviour)), kind);
      expect(error.message).toContain(`HTTP ${status}`);
      expect(error.message).toContain(type);
      expect(error.disposition).toBe('DidNotHappen');
      expect(error.usage).toBeNull();
      expect(error.retryAfterMs).toBe(status === 429 ? 2000 : null);
    });
  }

  it('401 echoing the key: the key is scrubbed from the provider’s words', async () => {
    const error = await failure(provider().complete(ask('unauthorized')), 'refused');
    expect(error.message).toContain('invalid x-api-key');
    expect(error.message).toContain('[key]');
  });

  it('an error body that echoes the prompt is trimmed: the prompt never reaches the message', async () => {
    const error = await failure(provider().complete(ask('echo-prompt')), 'refused');
    expect(error.message).toContain('prompt is too long');
  });

  it('a redirect is refused, not followed', async () => {
    const before = fake.requests.length;
    const error = await failure(provider().complete(ask('redirect')), 'refused');
    expect(error.message).toContain('HTTP 307');
    expect(fake.requests.length).toBe(before + 1);
  });

  it('connection refused: unavailable', async () => {
    const port = await closedPort();
    const error = await failure(provider({ baseUrl: `http://127.0.0.1:${port}` }).complete(ask('ok')), 'unavailable');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('a server that never answers: the deadline makes it unavailable', async () => {
    const error = await failure(provider({ timeoutMs: 300 }).complete(ask('hang')), 'unavailable');
    expect(error.message).toContain('timed out after 300 ms');
  });
});

describe('a severed stream, rung by rung (this wire reaches interrupted: usage arrives with message_start)', () => {
  it('cut mid-text: interrupted, carrying the usage message_start reported', async () => {
    const error = await failure(provider().complete(ask('cut-mid-text')), 'interrupted');
    expect(error.usage).toEqual(START_USAGE);
    expect(error.disposition).toBe('Landed');
  });

  it('cut mid-tool-arguments: interrupted, with that usage', async () => {
    const error = await failure(provider().complete(ask('cut-mid-tool')), 'interrupted');
    expect(error.usage).toEqual(START_USAGE);
  });

  it('an error event after content (overloaded_error): interrupted, with the provider’s words', async () => {
    const error = await failure(provider().complete(ask('error-mid-stream')), 'interrupted');
    expect(error.message).toContain('overloaded_error');
    expect(error.usage).toEqual(START_USAGE);
  });

  it('an error event before any content: unavailable, safe to repeat', async () => {
    const error = await failure(provider({ rateLimitRetries: 0 }).complete(ask('error-before-content')), 'unavailable');
    expect(error.message).toContain('overloaded_error');
    expect(error.usage).toBeNull();
  });

  it('an error event echoing the key and the prompt: both scrubbed from the message', async () => {
    const error = await failure(provider().complete(ask('error-echo-mid-stream')), 'interrupted');
    expect(error.message).toContain('api_error');
    expect(error.message).toContain('[key]');
  });

  it('content from a server that never sent message_start, then cut: unaccounted (Landed, never free)', async () => {
    const error = await failure(provider().complete(ask('cut-without-start')), 'unaccounted');
    expect(error.usage).toBeNull();
    expect(error.disposition).toBe('Landed');
  });

  it('a malformed event before any content: unavailable, naming it', async () => {
    const error = await failure(provider().complete(ask('malformed-event')), 'unavailable');
    expect(error.message).toContain('malformed stream event');
  });

  it('cut after message_start and a ping, before any content block: unavailable', async () => {
    await failure(provider().complete(ask('cut-after-start')), 'unavailable');
  });

  it('cut after the status line, before any event: unavailable', async () => {
    await failure(provider().complete(ask('cut-before-content')), 'unavailable');
    await failure(provider({ stream: false }).complete(ask('cut-before-content')), 'unavailable');
  });

  it('a clean end without message_stop: interrupted with the final usage', async () => {
    const error = await failure(provider().complete(ask('no-message-stop')), 'interrupted');
    expect(error.usage).toEqual(FULL_USAGE);
    expect(error.message).toContain('without message_stop');
  });

  it('a malformed tool JSON: a clear, billed error naming the tool', async () => {
    const error = await failure(provider().complete(ask('malformed-tool-json')), 'interrupted');
    expect(error.message).toContain('malformed JSON arguments for tool "get_weather"');
    expect(error.usage).toEqual(FULL_USAGE);
  });

  it('the deadline after content began: interrupted, with the usage seen', async () => {
    const error = await failure(provider({ timeoutMs: 400 }).complete(ask('stall-after-content')), 'interrupted');
    expect(error.message).toContain('timed out after 400 ms');
    expect(error.usage).toEqual(START_USAGE);
  });

  it('the caller cancelling after content began: interrupted', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const error = await failure(provider().complete(ask('stall-after-content'), controller.signal), 'interrupted');
    expect(error.message).toContain('cancelled by the caller');
  });

  it('a stream over maxResponseBytes: not read further, interrupted with the usage seen', async () => {
    const error = await failure(provider({ maxResponseBytes: 16 * 1024 }).complete(ask('oversized')), 'interrupted');
    expect(error.message).toContain('16384-byte cap');
    expect(error.usage).toEqual(START_USAGE);
  });

  it('non-streaming, cut half way through the JSON: unaccounted (the usage was inside it)', async () => {
    const error = await failure(provider({ stream: false }).complete(ask('cut-mid-text')), 'unaccounted');
    expect(error.usage).toBeNull();
    expect(error.disposition).toBe('Landed');
  });
});

describe('every message', () => {
  it('carried neither the prompt nor the key', () => {
    expect(messagesSeen.length).toBeGreaterThan(25);
    const all = messagesSeen.join('\n');
    expect(all).not.toContain(API_KEY);
    for (const marker of PROMPT_MARKERS) expect(all).not.toContain(marker);
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}
