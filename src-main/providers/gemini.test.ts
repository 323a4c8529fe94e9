/**
 * The Gemini driver against a wire-faithful fake: what goes on the wire (the key in
 * `x-goog-api-key`, never `?key=`; contents, systemInstruction, tools, toolConfig,
 * generationConfig; continuation parts sent back verbatim; functionResponse turns), what comes
 * back (text, thoughts kept out of it, function calls, usage with cache and thoughts), and where
 * each failure lands on the ladder. Gemini reports usage on its stream chunks as the answer is
 * delivered, so a cut stream here must be `interrupted` with that usage: the rung this driver
 * claims is asserted on every severed-stream case, with the exact counts.
 *
 * Every error is checked for the prompt and the API key wherever it could be printed.
 */
import { createServer } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Completion, type ModelErrorKind, type ModelMessage, type ModelRequest, ModelError, costOf } from '../runtime/model-provider';
import { type GeminiOptions, DEFAULT_GEMINI_BASE_URL, createGeminiProvider, geminiSchema, retryInfoOf } from './gemini';
import { type FakeGeminiServer, FAKE_GEMINI_ANSWER, FAKE_GEMINI_DELTAS, FAKE_GEMINI_MODEL_VERSION, FAKE_THOUGHT_SIGNATURE, startFakeGeminiServer } from '../../tests/doubles/fake-gemini-server';

const API_KEY = 'AIzaSyFAKE-9c1e7b3a5d2f4e6a8b0c1d3e5f7a9b2c';
const SYSTEM = 'You reconcile supplier invoices for Marlowe and Tench Shipping.';
const USER = 'Check invoice OSPREY-5519 from Wexcombe Forge: 7310.20 GBP, due on the ninth of June.';
const PROMPT_MARKERS = [SYSTEM, USER, 'OSPREY-5519', 'Wexcombe Forge', 'Marlowe and Tench'];

let fake: FakeGeminiServer;
const messagesSeen: string[] = [];

beforeAll(async () => {
  fake = await startFakeGeminiServer();
});
afterAll(() => fake.close());

function provider(options: Partial<GeminiOptions> = {}) {
  return createGeminiProvider({ baseUrl: fake.baseUrl, apiKey: API_KEY, ...options });
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
    expect(shown).not.toContain(API_KEY.slice(6, 22));
    for (const marker of PROMPT_MARKERS) expect(shown).not.toContain(marker);
  }
  messagesSeen.push(error.message);
  return error;
}

function lastRequestFor(model: string) {
  const found = fake.requests.filter((request) => request.model === model);
  const last = found[found.length - 1];
  if (!last) throw new Error(`no request for ${model}`);
  return last;
}

describe('the provider and its wire', () => {
  it('publishes a profile without the key, and holds the key nowhere it could be printed', () => {
    const gemini = provider({ model: 'gemini-2.5-flash' });
    expect(gemini.id).toBe('gemini');
    expect(gemini.profile).toEqual({
      provider: 'gemini',
      driver: 'gemini-generate-content/1',
      endpoint: fake.baseUrl,
      streaming: true,
      label: `Google Gemini at ${fake.baseUrl}`,
      defaultModel: 'gemini-2.5-flash',
    });
    expect(createGeminiProvider({ apiKey: API_KEY }).profile.endpoint).toBe(DEFAULT_GEMINI_BASE_URL);
    expect(provider({ stream: false }).profile.streaming).toBe(false);
    for (const shown of [JSON.stringify(gemini), inspect(gemini, { depth: 10, showHidden: true }), JSON.stringify(gemini.profile)]) {
      expect(shown).not.toContain(API_KEY);
    }
  });

  it('refuses a configuration that could leak the key or has none', () => {
    expect(() => createGeminiProvider({ apiKey: '' })).toThrow(/apiKey is required/);
    expect(() => provider({ baseUrl: `${fake.baseUrl}?key=${API_KEY}` })).toThrow(/query or fragment/);
    expect(() => provider({ baseUrl: `http://u:${API_KEY}@127.0.0.1:1/v1beta` })).toThrow(/credentials/);
    expect(() => provider({ timeoutMs: -1 })).toThrow(/gemini: timeoutMs/);
  });

  it('streams: POST models/{model}:streamGenerateContent?alt=sse, the key only in x-goog-api-key', async () => {
    await provider().complete(ask('ok'));
    const sent = lastRequestFor('ok');
    expect(sent.method).toBe('POST');
    expect(sent.url).toBe('/v1beta/models/ok:streamGenerateContent?alt=sse');
    expect(sent.url).not.toMatch(/[?&]key=/);
    expect(sent.headers['x-goog-api-key']).toBe(API_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.body).toEqual({
      systemInstruction: { parts: [{ text: SYSTEM }] },
      contents: [{ role: 'user', parts: [{ text: USER }] }],
      generationConfig: { maxOutputTokens: 64, temperature: 0.2 },
    });
  });

  it('does not stream when configured so: POST models/{model}:generateContent, the default model when none is named', async () => {
    await provider({ stream: false, model: 'models/ok' }).complete(ask('', { temperature: undefined }));
    const sent = lastRequestFor('ok');
    expect(sent.url).toBe('/v1beta/models/ok:generateContent');
    expect(sent.body).toMatchObject({ generationConfig: { maxOutputTokens: 64 } });
    expect((sent.body as { generationConfig: object }).generationConfig).not.toHaveProperty('temperature');
  });

  it('sends tools as functionDeclarations with Gemini’s schema subset, toolChoice as functionCallingConfig', async () => {
    const inputSchema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      additionalProperties: false,
      properties: {
        number: { type: 'string', description: 'Invoice number', pattern: '^INV-' },
        strict: { type: ['boolean', 'null'] },
        lines: { type: 'array', items: { type: 'object', additionalProperties: false, properties: { amount: { type: 'number', minimum: 0 } } } },
        kind: { const: 'supplier' },
      },
      required: ['number'],
    };
    const tools = [
      { name: 'lookup_invoice', description: 'Find an invoice', inputSchema },
      { name: 'fx_rate', description: 'A rate', inputSchema: { type: 'object', properties: {} } },
    ];
    await provider().complete(ask('ok', { tools, toolChoice: { name: 'fx_rate' } }));
    const sent = lastRequestFor('ok').body as Record<string, unknown>;
    expect(sent.tools).toEqual([
      {
        functionDeclarations: [
          {
            name: 'lookup_invoice',
            description: 'Find an invoice',
            parameters: {
              type: 'object',
              properties: {
                number: { type: 'string', description: 'Invoice number', pattern: '^INV-' },
                strict: { type: 'boolean', nullable: true },
                lines: { type: 'array', items: { type: 'object', properties: { amount: { type: 'number', minimum: 0 } } } },
                kind: { type: 'string', enum: ['supplier'] },
              },
              required: ['number'],
            },
          },
          { name: 'fx_rate', description: 'A rate', parameters: { type: 'object', properties: {} } },
        ],
      },
    ]);
    expect(sent.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['fx_rate'] } });
    await provider().complete(ask('ok', { tools, toolChoice: 'required' }));
    expect((lastRequestFor('ok').body as Record<string, unknown>).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });
    await provider().complete(ask('ok', { tools, toolChoice: 'auto' }));
    expect((lastRequestFor('ok').body as Record<string, unknown>).toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    // `auto` with nothing offered is the default: no tools, no toolConfig.
    await provider().complete(ask('ok', { toolChoice: 'auto' }));
    expect(lastRequestFor('ok').body).not.toHaveProperty('toolConfig');
    expect(lastRequestFor('ok').body).not.toHaveProperty('tools');
  });

  it('sends responseSchema natively and reasoningEffort as a thinking budget with thoughts not included', async () => {
    const schema = { type: 'object', additionalProperties: false, properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    await provider().complete(ask('ok', { responseSchema: schema, reasoningEffort: 'medium', maxTokens: 2048 }));
    expect((lastRequestFor('ok').body as Record<string, unknown>).generationConfig).toEqual({
      maxOutputTokens: 2048,
      temperature: 0.2,
      responseMimeType: 'application/json',
      responseSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      thinkingConfig: { thinkingBudget: 8192, includeThoughts: false },
    });
    for (const [effort, budget] of [['low', 1024], ['high', 24576]] as const) {
      await provider().complete(ask('ok', { reasoningEffort: effort }));
      expect((lastRequestFor('ok').body as { generationConfig: Record<string, unknown> }).generationConfig.thinkingConfig).toEqual({ thinkingBudget: budget, includeThoughts: false });
    }
  });

  it('refuses before dispatch: no model, no room, a toolChoice naming no offered tool, another provider’s continuation', async () => {
    const before = fake.requests.length;
    expect((await failure(provider().complete(ask('')), 'refused')).disposition).toBe('DidNotHappen');
    await failure(provider().complete(ask('ok', { maxTokens: 0 })), 'refused');
    await failure(provider().complete(ask('ok', { toolChoice: 'required' })), 'refused');
    const tools = [{ name: 'a', description: 'a', inputSchema: { type: 'object' } }];
    expect((await failure(provider().complete(ask('ok', { tools, toolChoice: { name: 'b' } })), 'refused')).message).toContain('not among the tools offered');
    const foreign: ModelMessage = { role: 'assistant', content: 'x', continuation: { wire: 'anthropic-messages/1', turn: [{ type: 'thinking', signature: 's' }] } };
    const error = await failure(provider().complete(ask('ok', { messages: [{ role: 'user', content: USER }, foreign, { role: 'user', content: 'go on' }] })), 'refused');
    expect(error.message).toContain('not Gemini');
    expect(error.message).toContain('(from anthropic-messages/1)');
    const old: ModelMessage = { role: 'assistant', content: 'x', continuation: { provider: 'gemini', content: { role: 'model', parts: [] } } };
    await failure(provider().complete(ask('ok', { messages: [{ role: 'user', content: USER }, old, { role: 'user', content: 'go on' }] })), 'refused');
    expect(fake.requests.length).toBe(before);
  });
});

describe('answers', () => {
  const whole: Completion = {
    text: FAKE_GEMINI_ANSWER,
    usage: { inputTokens: 31, outputTokens: 9, reasoningTokens: 0 },
    model: FAKE_GEMINI_MODEL_VERSION,
    truncated: false,
    stopReason: 'end',
    continuation: { wire: 'gemini-generate-content/1', turn: { role: 'model', parts: FAKE_GEMINI_DELTAS.map((text) => ({ text })) } },
  };

  it('streaming: joins the chunks’ text, takes the last running usage and modelVersion, keeps the parts as they came', async () => {
    expect(await provider().complete(ask('ok'))).toEqual(whole);
  });

  it('non-streaming: the same answer from one document', async () => {
    expect(await provider({ stream: false }).complete(ask('ok'))).toEqual(whole);
  });

  it('a thinking model: thought parts stay out of the text, thoughts are billed as reasoning, the signature is kept', async () => {
    const pricing = { inputPerMTokMicros: 300_000, outputPerMTokMicros: 2_500_000 };
    for (const stream of [true, false]) {
      const completion = await provider({ stream, pricing }).complete(ask('thinking'));
      expect(completion.text).toBe(FAKE_GEMINI_ANSWER);
      expect(completion.usage).toEqual({ inputTokens: 31, outputTokens: 9, reasoningTokens: 120 });
      // 31 x 0.3 + (9 + 120) x 2.5 = 331.8 -> 332 micro-units: thoughts billed once.
      expect(costOf(completion.usage, pricing)).toBe(332);
      const parts = (completion.continuation?.turn as { parts: Record<string, unknown>[] }).parts;
      expect(parts[0]).toEqual({ text: 'Weighing the invoice first.', thought: true });
      expect(parts[1]).toEqual({ text: 'Hello', thoughtSignature: FAKE_THOUGHT_SIGNATURE });
    }
  });

  it('a prompt-cache hit: cached tokens leave inputTokens for cacheReadTokens (billed once)', async () => {
    expect((await provider().complete(ask('cached'))).usage).toEqual({ inputTokens: 7, outputTokens: 9, reasoningTokens: 0, cacheReadTokens: 24 });
  });

  it('MAX_TOKENS: length, truncated', async () => {
    for (const stream of [true, false]) {
      expect(await provider({ stream }).complete(ask('length'))).toMatchObject({ text: 'Hello from the', truncated: true, stopReason: 'length', usage: { outputTokens: 4 } });
    }
  });

  it('SAFETY after some text: a refusal, and the partial text says it is truncated', async () => {
    expect(await provider().complete(ask('safety'))).toMatchObject({ text: 'Hello', truncated: true, stopReason: 'refusal', usage: { inputTokens: 31, outputTokens: 2 } });
  });

  it('promptFeedback.blockReason: a refusal before generation, no text, no output tokens', async () => {
    for (const stream of [true, false]) {
      expect(await provider({ stream }).complete(ask('blocked'))).toEqual({
        text: '',
        usage: { inputTokens: 31, outputTokens: 0, reasoningTokens: 0 },
        model: FAKE_GEMINI_MODEL_VERSION,
        truncated: false,
        stopReason: 'refusal',
      });
    }
  });

  it('MALFORMED_FUNCTION_CALL: a loud metered failure (interrupted, billed), not an empty success', async () => {
    for (const stream of [true, false]) {
      const error = await failure(provider({ stream }).complete(ask('malformed-call')), 'interrupted');
      expect(error.disposition).toBe('Landed');
      expect(error.usage).toEqual({ inputTokens: 31, outputTokens: 14, reasoningTokens: 0 });
      expect(error.message).toContain('MALFORMED_FUNCTION_CALL');
    }
  });
});

describe('function calling and continuation', () => {
  const tools = [
    { name: 'lookup_invoice', description: 'Find an invoice', inputSchema: { type: 'object', properties: { number: { type: 'string' } } } },
    { name: 'fx_rate', description: 'A rate', inputSchema: { type: 'object', properties: {} } },
  ];

  it('calls without ids get stable synthetic ids; the continuation goes back verbatim with the results in one user turn', async () => {
    const first = await provider().complete(ask('tool-call', { tools }));
    expect(first.stopReason).toBe('tool_calls');
    expect(first.text).toBe('');
    expect(first.toolCalls).toEqual([
      { id: 'call_0_0', name: 'lookup_invoice', arguments: { number: 'INV-1', strict: true } },
      { id: 'call_0_1', name: 'fx_rate', arguments: { from: 'EUR', to: 'USD' } },
    ]);
    // Same request, same answer, same ids: replay sees what the first run saw.
    expect((await provider({ stream: false }).complete(ask('tool-call', { tools }))).toolCalls).toEqual(first.toolCalls);

    const firstParts = (first.continuation?.turn as { parts: unknown[] }).parts;
    const messages: ModelMessage[] = [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
      { role: 'assistant', content: first.text, toolCalls: first.toolCalls, continuation: first.continuation },
      { role: 'tool', toolCallId: 'call_0_0', name: 'lookup_invoice', content: '{"total":7310.2}' },
      { role: 'tool', toolCallId: 'call_0_1', name: 'fx_rate', content: 'rate service down', isError: true },
    ];
    const second = await provider().complete(ask('tool-call', { tools, messages }));
    // A second assistant turn: its synthetic ids do not collide with the first turn's.
    expect(second.toolCalls?.map((call) => call.id)).toEqual(['call_1_0', 'call_1_1']);
    const sent = lastRequestFor('tool-call').body as { contents: unknown[] };
    expect(sent.contents).toEqual([
      { role: 'user', parts: [{ text: USER }] },
      { role: 'model', parts: firstParts },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'lookup_invoice', response: { content: '{"total":7310.2}' } } },
          { functionResponse: { name: 'fx_rate', response: { error: 'rate service down' } } },
        ],
      },
    ]);
    // The thought signature rode back exactly as it came.
    expect(JSON.stringify(sent.contents[1])).toContain(FAKE_THOUGHT_SIGNATURE);
  });

  it('an id Gemini gave is kept and echoed on its functionResponse', async () => {
    const first = await provider().complete(ask('tool-call-ids', { tools }));
    expect(first.toolCalls).toEqual([{ id: 'gfc-abc123', name: 'lookup_invoice', arguments: { number: 'INV-2' } }]);
    await provider().complete(
      ask('tool-call-ids', {
        tools,
        messages: [
          { role: 'user', content: USER },
          { role: 'assistant', content: '', toolCalls: first.toolCalls, continuation: first.continuation },
          { role: 'tool', toolCallId: 'gfc-abc123', name: 'lookup_invoice', content: 'found' },
        ],
      }),
    );
    const sent = lastRequestFor('tool-call-ids').body as { contents: unknown[] };
    expect(sent.contents[2]).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'lookup_invoice', response: { content: 'found' }, id: 'gfc-abc123' } }] });
  });

  it('an assistant turn with no continuation (history that did not come from Gemini) is rebuilt from its text and calls', async () => {
    await provider().complete(
      ask('ok', {
        messages: [
          { role: 'user', content: USER },
          { role: 'assistant', content: 'Looking.', toolCalls: [{ id: 'toolu_1', name: 'fx_rate', arguments: { from: 'GBP' } }] },
          { role: 'tool', toolCallId: 'toolu_1', name: 'fx_rate', content: '1.27' },
        ],
      }),
    );
    expect((lastRequestFor('ok').body as { contents: unknown[] }).contents.slice(1)).toEqual([
      { role: 'model', parts: [{ text: 'Looking.' }, { functionCall: { name: 'fx_rate', args: { from: 'GBP' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'fx_rate', response: { content: '1.27' } } }] },
    ]);
  });

  it('geminiSchema drops what the subset refuses and keeps what it documents', () => {
    expect(geminiSchema({ $schema: 'x', $defs: {}, oneOf: [], type: 'string', format: 'date-time', enum: ['a'] })).toEqual({ type: 'string', format: 'date-time', enum: ['a'] });
    expect(geminiSchema({ type: ['string', 'integer'] })).toEqual({ anyOf: [{ type: 'string' }, { type: 'integer' }] });
    expect(geminiSchema('not a schema')).toEqual({});
  });
});

describe('refused before generation (DidNotHappen, costs nothing)', () => {
  it('400 INVALID_ARGUMENT: refused, with Google’s status and words', async () => {
    const error = await failure(provider().complete(ask('bad-request')), 'refused');
    expect(error).toMatchObject({ disposition: 'DidNotHappen', usage: null, retryAfterMs: null });
    expect(error.message).toContain('HTTP 400');
    expect(error.message).toContain('INVALID_ARGUMENT: Invalid JSON payload');
  });

  it('400 API key not valid (Google’s answer to a bad key): refused', async () => {
    expect((await failure(provider({ stream: false }).complete(ask('bad-key')), 'refused')).message).toContain('API key not valid');
  });

  it('401 echoing the key: refused, the key scrubbed', async () => {
    const error = await failure(provider().complete(ask('unauthorized')), 'refused');
    expect(error.message).toContain('HTTP 401');
    expect(error.message).toContain('[key]');
  });

  it('403 and 404: refused', async () => {
    expect((await failure(provider().complete(ask('forbidden')), 'refused')).message).toContain('PERMISSION_DENIED');
    expect((await failure(provider().complete(ask('not-found')), 'refused')).message).toContain('HTTP 404');
  });

  it('429 RESOURCE_EXHAUSTED: refused, the window from RetryInfo, or from Retry-After when sent', async () => {
    const info = await failure(provider({ rateLimitRetries: 0 }).complete(ask('rate-limited')), 'refused');
    expect(info).toMatchObject({ disposition: 'DidNotHappen', usage: null, retryAfterMs: 7000 });
    expect(info.message).toContain('RESOURCE_EXHAUSTED');
    expect((await failure(provider({ rateLimitRetries: 0 }).complete(ask('rate-limited-header')), 'refused')).retryAfterMs).toBe(2000);
  });

  it('reads RetryInfo delays in seconds, fractions and the proto form', () => {
    const body = (retryDelay: unknown) => JSON.stringify({ error: { code: 429, details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }] } });
    expect(retryInfoOf(body('7s'))).toBe(7000);
    expect(retryInfoOf(body('0.25s'))).toBe(250);
    expect(retryInfoOf(body({ seconds: 3, nanos: 500_000_000 }))).toBe(3500);
    expect(retryInfoOf(body('soon'))).toBeNull();
    expect(retryInfoOf('not json')).toBeNull();
  });

  it('a redirect is refused, not followed', async () => {
    const before = fake.requests.length;
    expect((await failure(provider().complete(ask('redirect')), 'refused')).message).toContain('HTTP 307');
    expect(fake.requests.length).toBe(before + 1);
  });

  it('an error body echoing the prompt is trimmed: the prompt never reaches the message', async () => {
    const error = await failure(provider().complete(ask('echo-prompt')), 'refused');
    expect(error.message).toContain('[prompt]');
    expect(error.message.length).toBeLessThan(400);
  });
});

describe('unavailable (DidNotHappen: safe to repeat)', () => {
  it('500 INTERNAL and 503 UNAVAILABLE (with Retry-After): unavailable', async () => {
    const internal = await failure(provider().complete(ask('server-error')), 'unavailable');
    expect(internal).toMatchObject({ disposition: 'DidNotHappen', usage: null });
    expect(internal.message).toContain('HTTP 500');
    const overloaded = await failure(provider({ stream: false }).complete(ask('overloaded')), 'unavailable');
    expect(overloaded.retryAfterMs).toBe(1000);
    expect(overloaded.message).toContain('UNAVAILABLE');
  });

  it('connection refused: unavailable', async () => {
    const port = await closedPort();
    expect((await failure(provider({ baseUrl: `http://127.0.0.1:${port}/v1beta` }).complete(ask('ok')), 'unavailable')).message).toContain('ECONNREFUSED');
  });

  it('a server that never answers: the deadline makes it unavailable', async () => {
    expect((await failure(provider({ timeoutMs: 300 }).complete(ask('hang')), 'unavailable')).message).toContain('timed out after 300 ms');
  });

  it('a caller that already cancelled: unavailable, nothing sent', async () => {
    const before = fake.requests.length;
    const controller = new AbortController();
    controller.abort();
    await failure(provider().complete(ask('ok'), controller.signal), 'unavailable');
    expect(fake.requests.length).toBe(before);
  });
});

describe('a severed stream, rung by rung (Gemini reports usage on every chunk: interrupted is the rung to reach)', () => {
  it('cut after chunks that carried usage: interrupted, billed for the running usage', async () => {
    const error = await failure(provider().complete(ask('cut-after-usage')), 'interrupted');
    expect(error.disposition).toBe('Landed');
    expect(error.usage).toEqual({ inputTokens: 31, outputTokens: 5, reasoningTokens: 0 });
  });

  it('cut mid-way through a functionCall chunk: interrupted with the usage of the chunk before', async () => {
    const error = await failure(provider().complete(ask('cut-mid-function-call')), 'interrupted');
    expect(error.usage).toEqual({ inputTokens: 31, outputTokens: 4, reasoningTokens: 0 });
  });

  it('cut after text but before any usage: unaccounted (Landed, never free)', async () => {
    expect(await failure(provider().complete(ask('cut-no-usage')), 'unaccounted')).toMatchObject({ disposition: 'Landed', usage: null });
  });

  it('cut before anything: unavailable', async () => {
    expect(await failure(provider().complete(ask('cut-before-content')), 'unavailable')).toMatchObject({ disposition: 'DidNotHappen', usage: null });
  });

  it('an error object mid-stream: interrupted, with Google’s words', async () => {
    const error = await failure(provider().complete(ask('error-mid-stream')), 'interrupted');
    expect(error.usage).toEqual({ inputTokens: 31, outputTokens: 2, reasoningTokens: 0 });
    expect(error.message).toContain('generation stopped');
  });

  it('a clean end with no finishReason: interrupted (the answer is not whole)', async () => {
    const error = await failure(provider().complete(ask('end-without-finish')), 'interrupted');
    expect(error.message).toContain('without a finishReason');
    expect(error.usage?.outputTokens).toBe(4);
  });

  it('the deadline after output: interrupted, like any cut at that point', async () => {
    const error = await failure(provider({ timeoutMs: 400 }).complete(ask('stall-after-content')), 'interrupted');
    expect(error.message).toContain('timed out after 400 ms');
    expect(error.usage?.outputTokens).toBe(2);
  });

  it('the caller cancelling after output: interrupted', async () => {
    const controller = new AbortController();
    const call = provider().complete(ask('stall-after-content'), controller.signal);
    setTimeout(() => controller.abort(), 250);
    expect((await failure(call, 'interrupted')).message).toContain('cancelled by the caller');
  });

  it('a stream over maxResponseBytes: not read further, interrupted with the usage seen', async () => {
    const error = await failure(provider({ maxResponseBytes: 16 * 1024 }).complete(ask('oversized')), 'interrupted');
    expect(error.message).toContain('16384-byte cap');
    expect(error.usage?.inputTokens).toBe(31);
  });
});

describe('a non-streaming body, cut or too large', () => {
  it('cut one byte short, usage and all: unaccounted (the document never parsed)', async () => {
    await failure(provider({ stream: false }).complete(ask('cut-after-usage')), 'unaccounted');
  });

  it('cut half way: unaccounted', async () => {
    await failure(provider({ stream: false }).complete(ask('cut-no-usage')), 'unaccounted');
  });

  it('cut before any byte of the body: unavailable', async () => {
    await failure(provider({ stream: false }).complete(ask('cut-before-content')), 'unavailable');
  });

  it('over maxResponseBytes: unaccounted', async () => {
    await failure(provider({ stream: false, maxResponseBytes: 16 * 1024 }).complete(ask('oversized')), 'unaccounted');
  });
});

describe('the key and the prompt', () => {
  it('never travelled in a URL', () => {
    expect(fake.requests.length).toBeGreaterThan(30);
    for (const request of fake.requests) {
      expect(request.url).not.toContain(API_KEY);
      expect(request.url).not.toMatch(/[?&]key=/);
    }
  });

  it('never reached a message', () => {
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
