/**
 * The Chat Completions driver against a wire-faithful fake: what goes on the wire, what comes
 * back, and above all where each failure lands on the ladder (kind, disposition, the usage it
 * carries). The streaming rungs are asserted one by one: this wire reports usage only in its
 * terminal chunk, so `interrupted` is reachable exactly when that chunk arrived, and a driver
 * that did not look would pass any test that checked only "it failed".
 *
 * Every error is also checked for the prompt and the API key: neither may reach a message.
 */
import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ModelErrorKind, type ModelRequest, ModelError, costOf } from '../runtime/model-provider';
import { type OpenAiCompatibleOptions, createOpenAiCompatibleProvider, retryAfterOf } from './openai-compatible';
import { type FakeChatServer, FAKE_ANSWER, FAKE_LENGTH_ANSWER, FAKE_MODEL, FAKE_TOOL_ARGS, FAKE_TOOL_ANSWER_PREFIX, FAKE_TOOL_USAGE, startFakeChatServer } from '../../tests/doubles/fake-chat-server';

const API_KEY = 'sk-test-4f1c9a7e2b6d8053c1e9f7a2b4d6c8e0';
const SYSTEM = 'You review supplier invoices for Harrow and Finch Holdings.';
const USER = 'Flag invoice NIGHTJAR-7731 from Kestrel Foundry: total 48210.55 EUR, due on the fourteenth of March.';
/** Distinctive stretches of the prompt that must never surface in a message. */
const PROMPT_MARKERS = [SYSTEM, USER, 'NIGHTJAR-7731', 'Kestrel Foundry', 'Harrow and Finch'];

let fake: FakeChatServer;
const messagesSeen: string[] = [];

beforeAll(async () => {
  fake = await startFakeChatServer();
});
afterAll(() => fake.close());

function provider(options: Partial<OpenAiCompatibleOptions> = {}) {
  return createOpenAiCompatibleProvider({ id: 'fake', baseUrl: fake.baseUrl, apiKey: API_KEY, ...options });
}

function ask(model: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model,
    maxTokens: 64,
    temperature: 0.2,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
    ],
    ...extra,
  };
}

/** The call's ModelError, checked for the prompt and the key wherever it could be printed. */
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
    expect(shown).not.toContain(API_KEY.slice(3, 19));
    for (const marker of PROMPT_MARKERS) expect(shown).not.toContain(marker);
  }
  messagesSeen.push(error.message);
  return error;
}

function requestsFor(model: string) {
  return fake.requests.filter((request) => (request.body as { model?: string } | undefined)?.model === model);
}

describe('the provider and its wire', () => {
  it('publishes a profile without the key, and holds the key nowhere it could be printed', () => {
    const streaming = provider();
    expect(streaming.id).toBe('fake');
    expect(streaming.profile).toEqual({
      provider: 'fake',
      driver: 'openai-chat-completions/1',
      endpoint: fake.baseUrl,
      streaming: true,
      label: `OpenAI-compatible server at ${fake.baseUrl}`,
    });
    expect(provider({ stream: false, label: 'Ollama on this machine' }).profile).toMatchObject({ streaming: false, label: 'Ollama on this machine' });
    expect(streaming.pricing).toEqual({ inputPerMTokMicros: 0, outputPerMTokMicros: 0 });
    for (const shown of [JSON.stringify(streaming), inspect(streaming, { depth: 10, showHidden: true }), JSON.stringify(streaming.profile)]) {
      expect(shown).not.toContain(API_KEY);
    }
  });

  it('streams: POST /chat/completions with include_usage, the key only in the Authorization header', async () => {
    await provider().complete(ask('ok'));
    const [sent] = requestsFor('ok').slice(-1);
    expect(sent?.method).toBe('POST');
    expect(sent?.path).toBe('/v1/chat/completions');
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent?.headers['content-type']).toBe('application/json');
    expect(sent?.body).toEqual({
      model: 'ok',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: USER },
      ],
      max_tokens: 64,
      temperature: 0.2,
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('does not stream when configured so (the profile decides), and sends no Authorization without a key', async () => {
    const plain = provider({ stream: false, apiKey: undefined, model: 'ok' });
    const before = fake.requests.length;
    await plain.complete(ask('', { temperature: undefined }));
    const sent = fake.requests[before];
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.body).toEqual({
      model: 'ok',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: USER },
      ],
      max_tokens: 64,
      stream: false,
    });
  });

  it('refuses before dispatch a request naming no model, or with no room to answer', async () => {
    const before = fake.requests.length;
    const noModel = await failure(provider().complete(ask('')), 'refused');
    expect(noModel.disposition).toBe('DidNotHappen');
    await failure(provider().complete(ask('ok', { maxTokens: 0 })), 'refused');
    expect(fake.requests.length).toBe(before);
  });

  it('takes a baseUrl that cannot smuggle a secret into the profile', () => {
    expect(createOpenAiCompatibleProvider({ id: 'x', baseUrl: `${fake.baseUrl}/` }).profile.endpoint).toBe(fake.baseUrl);
    expect(() => createOpenAiCompatibleProvider({ id: 'x', baseUrl: `http://user:${API_KEY}@127.0.0.1:1/v1` })).toThrow(/must not carry credentials/);
    expect(() => createOpenAiCompatibleProvider({ id: 'x', baseUrl: `http://127.0.0.1:1/v1?key=${API_KEY}` })).toThrow(/query or fragment/);
    expect(() => createOpenAiCompatibleProvider({ id: 'x', baseUrl: 'file:///etc/passwd' })).toThrow(/http or https/);
    expect(() => createOpenAiCompatibleProvider({ id: 'x', baseUrl: fake.baseUrl, timeoutMs: 0 })).toThrow(/timeoutMs/);
  });
});

describe('answers', () => {
  it('streaming: accumulates the deltas, takes usage from the terminal chunk and the model from the wire', async () => {
    expect(await provider().complete(ask('ok'))).toEqual({
      text: FAKE_ANSWER,
      usage: { inputTokens: 21, outputTokens: 7, reasoningTokens: 0 },
      model: FAKE_MODEL,
      truncated: false,
      toolCalls: [],
      stopReason: 'end',
    });
  });

  it('non-streaming: reads message.content, usage and the model', async () => {
    expect(await provider({ stream: false }).complete(ask('ok'))).toEqual({
      text: FAKE_ANSWER,
      usage: { inputTokens: 21, outputTokens: 7, reasoningTokens: 0 },
      model: FAKE_MODEL,
      truncated: false,
      toolCalls: [],
      stopReason: 'end',
    });
  });

  it('says an answer cut by the length limit is truncated, streaming or not', async () => {
    for (const stream of [true, false]) {
      expect(await provider({ stream }).complete(ask('length'))).toEqual({
        text: FAKE_LENGTH_ANSWER,
        usage: { inputTokens: 21, outputTokens: 3, reasoningTokens: 0 },
        model: FAKE_MODEL,
        truncated: true,
        toolCalls: [],
        stopReason: 'length',
      });
    }
  });

  it('bills reasoning tokens once: completion_tokens includes them, so output is the rest', async () => {
    const pricing = { inputPerMTokMicros: 2_000_000, outputPerMTokMicros: 8_000_000 };
    for (const stream of [true, false]) {
      const completion = await provider({ stream, pricing }).complete(ask('reasoning'));
      expect(completion.usage).toEqual({ inputTokens: 21, outputTokens: 7, reasoningTokens: 23 });
      // 21 x 2 + (7 + 23) x 8 = 282 micro-units: the 30 completion tokens, each billed once.
      expect(costOf(completion.usage, pricing)).toBe(282);
    }
  });

  it('reads a JSON document from a server that ignores stream: true', async () => {
    expect(await provider().complete(ask('ignores-stream'))).toMatchObject({ text: FAKE_ANSWER, usage: { inputTokens: 21, outputTokens: 7, reasoningTokens: 0 } });
  });
});

describe('refused before generation (DidNotHappen, costs nothing)', () => {
  it('400: refused, with the status and the provider’s words', async () => {
    const error = await failure(provider().complete(ask('bad-request')), 'refused');
    expect(error).toMatchObject({ disposition: 'DidNotHappen', usage: null, retryAfterMs: null });
    expect(error.message).toContain('HTTP 400');
    expect(error.message).toContain("Invalid value for 'temperature'");
  });

  it('401 echoing the key: refused, and the key is scrubbed from the provider’s words', async () => {
    const error = await failure(provider().complete(ask('unauthorized')), 'refused');
    expect(error.message).toContain('HTTP 401');
    expect(error.message).toContain('Incorrect API key provided: [key]');
  });

  it('404 unknown model: refused', async () => {
    const error = await failure(provider({ stream: false }).complete(ask('not-found')), 'refused');
    expect(error.message).toContain('HTTP 404');
    expect(error.usage).toBeNull();
  });

  it('429: refused, with the provider’s Retry-After as retryAfterMs', async () => {
    const error = await failure(provider({ rateLimitRetries: 0 }).complete(ask('rate-limited')), 'refused');
    expect(error).toMatchObject({ disposition: 'DidNotHappen', usage: null, retryAfterMs: 2000 });
    expect(error.message).toContain('HTTP 429');
  });

  it('a redirect is refused, not followed', async () => {
    const before = fake.requests.length;
    const error = await failure(provider().complete(ask('redirect')), 'refused');
    expect(error.message).toContain('HTTP 307');
    expect(fake.requests.slice(before).map((request) => request.path)).toEqual(['/v1/chat/completions']);
  });

  it('an error body that echoes the prompt is trimmed: the prompt never reaches the message', async () => {
    const error = await failure(provider().complete(ask('echo-prompt')), 'refused');
    expect(error.message).toContain('HTTP 400');
    expect(error.message).toContain("This model's maximum context length");
    expect(error.message).toContain('[prompt]');
    expect(error.message.length).toBeLessThan(400);
  });
});

describe('unavailable (DidNotHappen: safe to repeat)', () => {
  it('500: unavailable', async () => {
    const error = await failure(provider().complete(ask('server-error')), 'unavailable');
    expect(error).toMatchObject({ disposition: 'DidNotHappen', usage: null, retryAfterMs: null });
    expect(error.message).toContain('HTTP 500');
    expect(error.message).toContain('The server had an error');
  });

  it('503 with Retry-After: unavailable, carrying the window', async () => {
    const error = await failure(provider({ stream: false }).complete(ask('overloaded')), 'unavailable');
    expect(error.retryAfterMs).toBe(1000);
    expect(error.message).toContain('HTTP 503');
  });

  it('connection refused: unavailable', async () => {
    const port = await closedPort();
    const error = await failure(provider({ baseUrl: `http://127.0.0.1:${port}/v1` }).complete(ask('ok')), 'unavailable');
    expect(error.disposition).toBe('DidNotHappen');
    expect(error.message).toContain('ECONNREFUSED');
  });

  it('a name that does not resolve: unavailable', async () => {
    const error = await failure(provider({ baseUrl: 'http://no-such-host.invalid/v1', timeoutMs: 5_000 }).complete(ask('ok')), 'unavailable');
    expect(error.usage).toBeNull();
  });

  it('a server that never answers: the deadline makes it unavailable', async () => {
    const error = await failure(provider({ timeoutMs: 300 }).complete(ask('hang')), 'unavailable');
    expect(error.message).toContain('timed out after 300 ms');
  });

  it('a caller that has already cancelled: unavailable, and nothing is sent', async () => {
    const before = fake.requests.length;
    const controller = new AbortController();
    controller.abort();
    await failure(provider().complete(ask('ok'), controller.signal), 'unavailable');
    expect(fake.requests.length).toBe(before);
  });
});

describe('a severed stream, rung by rung (the rungs this streaming driver claims)', () => {
  it('cut after the usage chunk, before [DONE]: interrupted, billed for the usage the wire reported', async () => {
    const error = await failure(provider().complete(ask('cut-after-usage')), 'interrupted');
    expect(error.disposition).toBe('Landed');
    expect(error.usage).toEqual({ inputTokens: 21, outputTokens: 7, reasoningTokens: 0 });
    expect(error.message).toContain('HTTP 200');
  });

  it('cut after content began, before any usage: unaccounted (Landed, never free)', async () => {
    const error = await failure(provider().complete(ask('cut-after-content')), 'unaccounted');
    expect(error).toMatchObject({ disposition: 'Landed', usage: null });
  });

  it('cut before any content (only the empty role chunk arrived): unavailable', async () => {
    const error = await failure(provider().complete(ask('cut-before-content')), 'unavailable');
    expect(error).toMatchObject({ disposition: 'DidNotHappen', usage: null });
  });

  it('an error event after content: unaccounted, with the provider’s words', async () => {
    const error = await failure(provider().complete(ask('error-mid-stream')), 'unaccounted');
    expect(error.message).toContain('The model is overloaded');
  });

  it('the deadline after content began: unaccounted, like any cut at that point', async () => {
    const error = await failure(provider({ timeoutMs: 500 }).complete(ask('stall-after-content')), 'unaccounted');
    expect(error.message).toContain('timed out after 500 ms');
  });

  it('the caller cancelling after content began: unaccounted', async () => {
    const controller = new AbortController();
    const call = provider().complete(ask('stall-after-content'), controller.signal);
    setTimeout(() => controller.abort(), 300);
    const error = await failure(call, 'unaccounted');
    expect(error.message).toContain('cancelled by the caller');
  });

  it('a whole answer with no usage chunk (include_usage ignored): unaccounted, not free', async () => {
    const error = await failure(provider().complete(ask('no-usage')), 'unaccounted');
    expect(error.usage).toBeNull();
    expect(error.message).toContain('no usage');
  });

  it('a stream over maxResponseBytes: not read further, unaccounted', async () => {
    const error = await failure(provider({ maxResponseBytes: 16 * 1024 }).complete(ask('oversized')), 'unaccounted');
    expect(error.message).toContain('16384-byte cap');
  });
});

describe('a non-streaming body, cut or too large', () => {
  it('cut half way through the JSON: unaccounted', async () => {
    const error = await failure(provider({ stream: false }).complete(ask('cut-after-content')), 'unaccounted');
    expect(error).toMatchObject({ disposition: 'Landed', usage: null });
  });

  it('cut one byte short, usage and all: still unaccounted (the document never parsed)', async () => {
    await failure(provider({ stream: false }).complete(ask('cut-after-usage')), 'unaccounted');
  });

  it('cut after the status line, before any byte of the body: unavailable', async () => {
    const error = await failure(provider({ stream: false }).complete(ask('cut-before-content')), 'unavailable');
    expect(error.message).toContain('HTTP 200');
  });

  it('a chunked body over maxResponseBytes: not read further, unaccounted', async () => {
    await failure(provider({ stream: false, maxResponseBytes: 16 * 1024 }).complete(ask('oversized')), 'unaccounted');
  });

  it('a declared Content-Length over maxResponseBytes: not read at all, unaccounted', async () => {
    const error = await failure(provider({ stream: false, maxResponseBytes: 16 * 1024 }).complete(ask('oversized-declared')), 'unaccounted');
    expect(error.message).toMatch(/declares \d+ bytes, over the 16384-byte cap/);
  });

  it('a whole answer without usage: unaccounted', async () => {
    await failure(provider({ stream: false }).complete(ask('no-usage')), 'unaccounted');
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds, an HTTP-date, and OpenAI’s retry-after-ms first', () => {
    expect(retryAfterOf({ 'retry-after': '3' })).toBe(3000);
    expect(retryAfterOf({ 'retry-after': '0.5' })).toBe(500);
    expect(retryAfterOf({ 'retry-after': '3', 'retry-after-ms': '1250' })).toBe(1250);
    const inAMinute = retryAfterOf({ 'retry-after': new Date(Date.now() + 60_000).toUTCString() });
    expect(inAMinute).toBeGreaterThan(0);
    expect(inAMinute).toBeLessThanOrEqual(60_000);
    expect(retryAfterOf({ 'retry-after': 'soon' })).toBeNull();
    expect(retryAfterOf({})).toBeNull();
  });
});

const ECHO_TOOL = { name: 'peer__alpha__echo', description: 'Echoes text back.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } };

describe('tools on the Chat Completions wire', () => {
  it('sends tools, tool_choice, assistant tool_calls and tool results in the wire shapes', async () => {
    const before = fake.requests.length;
    await provider().complete(
      ask('ok', {
        tools: [ECHO_TOOL],
        toolChoice: { name: 'peer__alpha__echo' },
        messages: [
          { role: 'user', content: USER },
          { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'peer__alpha__echo', arguments: { text: 'hi' } }] },
          { role: 'tool', toolCallId: 'call_1', name: 'peer__alpha__echo', content: '{"text":"hi"}' },
        ],
      }),
    );
    const body = fake.requests[before]!.body as Record<string, unknown>;
    expect(body.tools).toEqual([{ type: 'function', function: { name: ECHO_TOOL.name, description: ECHO_TOOL.description, parameters: ECHO_TOOL.inputSchema } }]);
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'peer__alpha__echo' } });
    expect(body.messages).toEqual([
      { role: 'user', content: USER },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'peer__alpha__echo', arguments: '{"text":"hi"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '{"text":"hi"}' },
    ]);
    await provider().complete(ask('ok', { tools: [ECHO_TOOL], toolChoice: 'required' }));
    expect((fake.requests.at(-1)!.body as Record<string, unknown>).tool_choice).toBe('required');
    await provider().complete(ask('ok'));
    expect(fake.requests.at(-1)!.body).not.toHaveProperty('tools');
  });

  for (const stream of [true, false]) {
    it(`${stream ? 'streaming: assembles tool call deltas by index' : 'non-streaming: reads message.tool_calls'}; finish tool_calls is stopReason tool_calls, no continuation`, async () => {
      const completion = await provider({ stream }).complete(ask('two-tool-calls', { tools: [ECHO_TOOL] }));
      expect(completion.stopReason).toBe('tool_calls');
      expect(completion.toolCalls).toHaveLength(2);
      expect(completion.toolCalls![0]).toMatchObject({ name: ECHO_TOOL.name, arguments: FAKE_TOOL_ARGS });
      expect(completion.toolCalls![1]).toMatchObject({ name: ECHO_TOOL.name, arguments: { text: 'second' } });
      expect(completion.toolCalls![0]!.id).toMatch(/^call_fake_/);
      expect(completion.toolCalls![0]!.id).not.toBe(completion.toolCalls![1]!.id);
      expect(completion.usage).toEqual({ inputTokens: FAKE_TOOL_USAGE.prompt_tokens, outputTokens: FAKE_TOOL_USAGE.completion_tokens, reasoningTokens: 0 });
      expect(completion.continuation).toBeUndefined();
    });
  }

  it('a plain answer has no tool calls and stopReason end', async () => {
    const completion = await provider().complete(ask('ok'));
    expect(completion.toolCalls).toEqual([]);
    expect(completion.stopReason).toBe('end');
    const answered = await provider().complete(ask('tool-then-answer', { tools: [ECHO_TOOL], messages: [{ role: 'user', content: USER }, { role: 'tool', toolCallId: 'c', name: 'x', content: 'pong' }] }));
    expect(answered.text).toBe(`${FAKE_TOOL_ANSWER_PREFIX}pong`);
  });

  for (const stream of [true, false]) {
    it(`${stream ? 'streaming' : 'non-streaming'}: malformed tool arguments after usage: interrupted, billed, with a clear message`, async () => {
      const error = await failure(provider({ stream }).complete(ask('bad-tool-args', { tools: [ECHO_TOOL] })), 'interrupted');
      expect(error.message).toMatch(/arguments that are not valid JSON/);
      expect(error.usage).toEqual({ inputTokens: FAKE_TOOL_USAGE.prompt_tokens, outputTokens: FAKE_TOOL_USAGE.completion_tokens, reasoningTokens: 0 });
      expect(error.disposition).toBe('Landed');
    });
  }

  it('a stream cut mid tool arguments, before usage: unaccounted (generation began)', async () => {
    const error = await failure(provider().complete(ask('cut-mid-tool-args', { tools: [ECHO_TOOL] })), 'unaccounted');
    expect(error.usage).toBeNull();
    expect(error.disposition).toBe('Landed');
  });

  it('non-streaming, cut mid document that carries tool calls: unaccounted', async () => {
    await failure(provider({ stream: false }).complete(ask('cut-mid-tool-args', { tools: [ECHO_TOOL] })), 'unaccounted');
  });
});

describe('every message', () => {
  it('carried neither the prompt nor the key', () => {
    expect(messagesSeen.length).toBeGreaterThan(20);
    const all = messagesSeen.join('\n');
    expect(all).not.toContain(API_KEY);
    for (const marker of PROMPT_MARKERS) expect(all).not.toContain(marker);
  });
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}
