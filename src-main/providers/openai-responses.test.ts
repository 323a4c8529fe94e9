/**
 * The OpenAI Responses driver against a wire-faithful fake: what goes on the wire (store:
 * false, include, tools, continuation items sent back verbatim, function_call_output), what
 * comes back (text, tool calls, usage counted once, the continuation), and where each failure
 * lands on the ladder. This wire reports usage only in its terminal event, so a cut stream is
 * `unaccounted` once generation began and `unavailable` before it: each rung is asserted, since
 * a driver that did not look would pass any test that checked only "it failed".
 *
 * Every error is also checked for the prompt and the API key: neither may reach a message.
 */
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Completion, type ModelErrorKind, type ModelRequest, ModelError, costOf } from '../runtime/model-provider';
import { type OpenAiResponsesOptions, OPENAI_RESPONSES_CONTINUATION, createOpenAiResponsesProvider, strictSchemaProblem } from './openai-responses';
import {
  type FakeResponsesServer,
  FAKE_ARGUMENTS,
  FAKE_CALL_ID,
  FAKE_ENCRYPTED,
  FAKE_LENGTH_TEXT,
  FAKE_REFUSAL,
  FAKE_RESPONSES_MODEL,
  FAKE_TEXT,
  FAKE_TOOL_NAME,
  startFakeResponsesServer,
} from '../../tests/doubles/fake-responses-server';

const API_KEY = 'sk-proj-7d3a91c0e4b2f65a8c1d9e0f2b4a6c8d';
const SYSTEM = 'You review supplier invoices for Harrow and Finch Holdings.';
const USER = 'Flag invoice NIGHTJAR-7731 from Kestrel Foundry: total 48210.55 EUR, due on the fourteenth of March.';
/** Distinctive stretches of the prompt that must never surface in a message. */
const PROMPT_MARKERS = [SYSTEM, USER, 'NIGHTJAR-7731', 'Harrow and Finch'];
const TOOL = { name: FAKE_TOOL_NAME, description: 'Looks a supplier up in the ledger.', inputSchema: { type: 'object', properties: { supplier: { type: 'string' } } } };

let fake: FakeResponsesServer;
const messagesSeen: string[] = [];

beforeAll(async () => {
  fake = await startFakeResponsesServer();
});
afterAll(() => fake.close());

function provider(options: Partial<OpenAiResponsesOptions> = {}) {
  return createOpenAiResponsesProvider({ id: 'openai', baseUrl: fake.baseUrl, apiKey: API_KEY, ...options });
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
    expect(shown).not.toContain(API_KEY.slice(8, 24));
    for (const marker of PROMPT_MARKERS) expect(shown).not.toContain(marker);
  }
  messagesSeen.push(error.message);
  return error;
}

function lastBody(): Record<string, unknown> {
  const sent = fake.requests.at(-1);
  expect(sent).toBeDefined();
  return sent?.body as Record<string, unknown>;
}

describe('the provider and its wire', () => {
  it('publishes a profile without the key, defaults to OpenAI, and holds the key nowhere it could be printed', () => {
    const streaming = provider();
    expect(streaming.profile).toEqual({ provider: 'openai', driver: 'openai-responses/1', endpoint: fake.baseUrl, streaming: true, label: `OpenAI Responses at ${fake.baseUrl}` });
    const defaults = createOpenAiResponsesProvider({ apiKey: API_KEY, model: 'gpt-5', stream: false });
    expect(defaults.id).toBe('openai');
    expect(defaults.profile).toMatchObject({ endpoint: 'https://api.openai.com/v1', streaming: false, defaultModel: 'gpt-5' });
    for (const shown of [JSON.stringify(streaming), inspect(streaming, { depth: 10, showHidden: true }), JSON.stringify(defaults.profile)]) {
      expect(shown).not.toContain(API_KEY);
    }
  });

  it('streams: POST /responses, Bearer key, store:false, encrypted reasoning included, instructions from the system message', async () => {
    await provider().complete(ask('ok', { temperature: 0.2 }));
    const sent = fake.requests.at(-1);
    expect(sent?.method).toBe('POST');
    expect(sent?.path).toBe('/v1/responses');
    expect(sent?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(sent?.body).toEqual({
      model: 'ok',
      instructions: SYSTEM,
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: USER }] }],
      max_output_tokens: 64,
      temperature: 0.2,
      store: false,
      include: ['reasoning.encrypted_content'],
      stream: true,
    });
  });

  it('maps tools, toolChoice, responseSchema and reasoningEffort onto the Responses shapes', async () => {
    const schema = { type: 'object', properties: { flagged: { type: 'boolean' } }, required: ['flagged'], additionalProperties: false };
    await provider().complete(ask('ok', { tools: [TOOL], toolChoice: { name: FAKE_TOOL_NAME }, responseSchema: schema, reasoningEffort: 'high' }));
    expect(lastBody()).toMatchObject({
      tools: [{ type: 'function', name: FAKE_TOOL_NAME, description: TOOL.description, parameters: TOOL.inputSchema, strict: false }],
      tool_choice: { type: 'function', name: FAKE_TOOL_NAME },
      text: { format: { type: 'json_schema', name: 'answer', schema, strict: true } },
      reasoning: { effort: 'high' },
      store: false,
    });
    await provider().complete(ask('ok', { tools: [TOOL], toolChoice: 'required' }));
    expect(lastBody().tool_choice).toBe('required');
    await provider().complete(ask('ok', { tools: [TOOL] }));
    expect(lastBody().tool_choice).toBe('auto');
  });

  it('refuses before dispatch: no model, no room, a toolChoice without its tool, a schema outside strict mode, a foreign continuation', async () => {
    const before = fake.requests.length;
    await failure(provider().complete(ask('')), 'refused');
    await failure(provider().complete(ask('ok', { maxTokens: 0 })), 'refused');
    await failure(provider().complete(ask('ok', { toolChoice: 'required' })), 'refused');
    await failure(provider().complete(ask('ok', { tools: [TOOL], toolChoice: { name: 'other_tool' } })), 'refused');
    const loose = await failure(provider().complete(ask('ok', { responseSchema: { type: 'object', properties: { a: { type: 'string' } } } })), 'refused');
    expect(loose.message).toContain('additionalProperties: false');
    const foreign = ask('ok', { messages: [{ role: 'user', content: USER }, { role: 'assistant', content: '', continuation: [{ type: 'thinking', signature: 'x' }] }] });
    const error = await failure(provider().complete(foreign), 'refused');
    expect(error.message).toContain('continuation this wire did not produce');
    expect(error.disposition).toBe('DidNotHappen');
    const tagged = ask('ok', { messages: [{ role: 'user', content: USER }, { role: 'assistant', content: '', continuation: { wire: 'anthropic-messages/1', turn: [{ type: 'text', text: 'x' }] } }] });
    expect((await failure(provider().complete(tagged), 'refused')).message).toContain('(from anthropic-messages/1)');
    const old = ask('ok', { messages: [{ role: 'user', content: USER }, { role: 'assistant', content: '', continuation: { wire: 'openai-responses', output: [{ type: 'message' }] } }] });
    await failure(provider().complete(old), 'refused');
    expect(fake.requests.length).toBe(before);
  });

  it('names the strict-mode rule a schema breaks', () => {
    const closed = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    expect(strictSchemaProblem(closed, '$')).toBeNull();
    expect(strictSchemaProblem({ ...closed, required: [] }, '$')).toMatch(/\$\.a must be listed in required/);
    expect(strictSchemaProblem({ ...closed, properties: { a: { type: 'string', default: 'x' } } }, '$')).toMatch(/\$\.a has a default/);
    expect(strictSchemaProblem({ type: 'array', items: { type: 'object', properties: {} } }, '$')).toMatch(/\$\[\] must set additionalProperties/);
  });

  it('sends no Authorization header without a key, and a non-streaming request says stream: false', async () => {
    await provider({ apiKey: undefined, stream: false, model: 'ok' }).complete(ask(''));
    const sent = fake.requests.at(-1);
    expect(sent?.headers.authorization).toBeUndefined();
    expect(sent?.body).toMatchObject({ model: 'ok', stream: false, store: false });
  });

  it('takes a baseUrl that cannot smuggle a secret into the profile', () => {
    expect(() => createOpenAiResponsesProvider({ baseUrl: `http://user:${API_KEY}@127.0.0.1:1/v1` })).toThrow(/must not carry credentials/);
    expect(() => createOpenAiResponsesProvider({ baseUrl: `http://127.0.0.1:1/v1?key=${API_KEY}` })).toThrow(/query or fragment/);
    expect(() => createOpenAiResponsesProvider({ baseUrl: fake.baseUrl, timeoutMs: -1 })).toThrow(/timeoutMs/);
  });
});

describe('answers', () => {
  it('text, streaming or not: the answer, the model, usage counted once (cached out of input) and the continuation', async () => {
    for (const stream of [true, false]) {
      const completion = await provider({ stream }).complete(ask('ok'));
      expect(completion).toMatchObject({
        text: FAKE_TEXT,
        usage: { inputTokens: 24, outputTokens: 5, reasoningTokens: 0, cacheReadTokens: 16 },
        model: FAKE_RESPONSES_MODEL,
        truncated: false,
        toolCalls: [],
        stopReason: 'end',
      });
      expect(completion.continuation).toMatchObject({ wire: OPENAI_RESPONSES_CONTINUATION, turn: [{ type: 'message', id: 'msg_fake_1' }] });
    }
  });

  it('a function call after encrypted reasoning: the call parsed, reasoning billed once, the output items kept verbatim', async () => {
    const pricing = { inputPerMTokMicros: 1_250_000, outputPerMTokMicros: 10_000_000 };
    for (const stream of [true, false]) {
      const completion = await provider({ stream, pricing }).complete(ask('tool-call', { tools: [TOOL] }));
      expect(completion.toolCalls).toEqual([{ id: FAKE_CALL_ID, name: FAKE_TOOL_NAME, arguments: JSON.parse(FAKE_ARGUMENTS) }]);
      expect(completion.stopReason).toBe('tool_calls');
      expect(completion.text).toBe('');
      expect(completion.usage).toEqual({ inputTokens: 60, outputTokens: 15, reasoningTokens: 30 });
      // 60 x 1.25 + (15 + 30) x 10 = 525 micro-units: the 45 output tokens, each billed once.
      expect(costOf(completion.usage, pricing)).toBe(525);
      expect(completion.continuation).toEqual({
        wire: OPENAI_RESPONSES_CONTINUATION,
        turn: [
          { id: 'rs_fake_1', type: 'reasoning', summary: [{ type: 'summary_text', text: '**Looking up the supplier**' }], encrypted_content: FAKE_ENCRYPTED },
          { id: 'fc_fake_1', type: 'function_call', status: 'completed', arguments: FAKE_ARGUMENTS, call_id: FAKE_CALL_ID, name: FAKE_TOOL_NAME },
        ],
      });
    }
  });

  it('sends the continuation back verbatim, then the tool result as function_call_output', async () => {
    const first = await provider().complete(ask('tool-call', { tools: [TOOL] }));
    const turn: Completion = first;
    await provider().complete(
      ask('ok', {
        tools: [TOOL],
        messages: [
          { role: 'system', content: SYSTEM },
          { role: 'user', content: USER },
          { role: 'assistant', content: turn.text, toolCalls: turn.toolCalls ?? [], continuation: turn.continuation },
          { role: 'tool', toolCallId: FAKE_CALL_ID, name: FAKE_TOOL_NAME, content: '{"rating":"A"}' },
          { role: 'tool', toolCallId: 'call_other', name: FAKE_TOOL_NAME, content: 'ledger offline', isError: true },
          { role: 'system', content: 'Answer in one line.' },
        ],
      }),
    );
    const input = lastBody().input as unknown[];
    expect(input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: USER }] },
      ...(turn.continuation?.turn as unknown[]),
      { type: 'function_call_output', call_id: FAKE_CALL_ID, output: '{"rating":"A"}' },
      { type: 'function_call_output', call_id: 'call_other', output: 'Error: ledger offline' },
      { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Answer in one line.' }] },
    ]);
    expect(input[1]).toMatchObject({ type: 'reasoning', encrypted_content: FAKE_ENCRYPTED });
    expect(lastBody().store).toBe(false);
  });

  it('an assistant turn without a continuation is rebuilt as a message and function_call items', async () => {
    await provider().complete(
      ask('ok', {
        messages: [
          { role: 'user', content: USER },
          { role: 'assistant', content: 'Checking.', toolCalls: [{ id: 'call_1', name: FAKE_TOOL_NAME, arguments: { supplier: 'x' } }] },
          { role: 'tool', toolCallId: 'call_1', name: FAKE_TOOL_NAME, content: 'ok' },
        ],
      }),
    );
    expect((lastBody().input as unknown[]).slice(1)).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.' }] },
      { type: 'function_call', call_id: 'call_1', name: FAKE_TOOL_NAME, arguments: '{"supplier":"x"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
    ]);
    expect(lastBody().instructions).toBeUndefined();
  });

  it('response.incomplete (max_output_tokens): truncated, stopReason length, billed', async () => {
    for (const stream of [true, false]) {
      expect(await provider({ stream }).complete(ask('length'))).toMatchObject({
        text: FAKE_LENGTH_TEXT,
        truncated: true,
        stopReason: 'length',
        usage: { inputTokens: 40, outputTokens: 2, reasoningTokens: 0 },
      });
    }
  });

  it('a refusal: the words, stopReason refusal', async () => {
    for (const stream of [true, false]) {
      expect(await provider({ stream }).complete(ask('refusal'))).toMatchObject({ text: FAKE_REFUSAL, stopReason: 'refusal', truncated: false });
    }
  });

  it('reads a JSON document from a server that ignores stream: true', async () => {
    expect(await provider().complete(ask('ignores-stream'))).toMatchObject({ text: FAKE_TEXT, stopReason: 'end' });
  });
});

describe('refused before generation (DidNotHappen, costs nothing)', () => {
  it('400: refused, with the status and OpenAI’s words', async () => {
    const error = await failure(provider().complete(ask('bad-request')), 'refused');
    expect(error).toMatchObject({ disposition: 'DidNotHappen', usage: null, retryAfterMs: null });
    expect(error.message).toContain('HTTP 400');
    expect(error.message).toContain("Invalid value for 'max_output_tokens'");
  });

  it('401 echoing the key: refused, the key scrubbed', async () => {
    const error = await failure(provider().complete(ask('unauthorized')), 'refused');
    expect(error.message).toContain('HTTP 401');
    expect(error.message).toContain('Incorrect API key provided: [key]');
  });

  it('429 with Retry-After: refused, carrying retryAfterMs', async () => {
    const error = await failure(provider({ stream: false, rateLimitRetries: 0 }).complete(ask('rate-limited')), 'refused');
    expect(error).toMatchObject({ disposition: 'DidNotHappen', usage: null, retryAfterMs: 2000 });
  });

  it('an error body echoing the prompt is trimmed', async () => {
    const error = await failure(provider().complete(ask('echo-prompt')), 'refused');
    expect(error.message).toContain('context window');
  });

  it('a redirect is refused, not followed', async () => {
    const before = fake.requests.length;
    const error = await failure(provider().complete(ask('redirect')), 'refused');
    expect(error.message).toContain('HTTP 307');
    expect(fake.requests.slice(before).map((request) => request.path)).toEqual(['/v1/responses']);
  });
});

describe('unavailable (DidNotHappen: safe to repeat)', () => {
  it('500: unavailable', async () => {
    const error = await failure(provider().complete(ask('server-error')), 'unavailable');
    expect(error.message).toContain('HTTP 500');
    expect(error.usage).toBeNull();
  });

  it('cut after response.created, before any output: unavailable, streaming or not', async () => {
    for (const stream of [true, false]) {
      const error = await failure(provider({ stream }).complete(ask('cut-before-output')), 'unavailable');
      expect(error.disposition).toBe('DidNotHappen');
    }
  });

  it('response.failed before any output: unavailable, with OpenAI’s words', async () => {
    const error = await failure(provider().complete(ask('failed-before-output')), 'unavailable');
    expect(error.message).toContain('The model failed to generate a response');
  });

  it('a server that never answers: the deadline makes it unavailable', async () => {
    const error = await failure(provider({ timeoutMs: 300 }).complete(ask('hang')), 'unavailable');
    expect(error.message).toContain('timed out after 300 ms');
  });

  it('a caller that already cancelled: unavailable, nothing sent', async () => {
    const before = fake.requests.length;
    const controller = new AbortController();
    controller.abort();
    await failure(provider().complete(ask('ok'), controller.signal), 'unavailable');
    expect(fake.requests.length).toBe(before);
  });
});

describe('a severed stream after generation began: unaccounted (usage comes only in the terminal event)', () => {
  it('cut mid-text', async () => {
    const error = await failure(provider().complete(ask('cut-mid-text')), 'unaccounted');
    expect(error).toMatchObject({ disposition: 'Landed', usage: null });
    expect(error.message).toContain('HTTP 200');
  });

  it('cut mid-function-arguments', async () => {
    const error = await failure(provider().complete(ask('cut-mid-arguments', { tools: [TOOL] })), 'unaccounted');
    expect(error.usage).toBeNull();
  });

  it('response.failed after output: unaccounted, with OpenAI’s words', async () => {
    const error = await failure(provider().complete(ask('failed-after-output')), 'unaccounted');
    expect(error.message).toContain('The model failed to generate a response');
  });

  it('a stream that ends cleanly without a terminal event: unaccounted', async () => {
    const error = await failure(provider().complete(ask('ends-early')), 'unaccounted');
    expect(error.message).toContain('without response.completed');
  });

  it('an error event after output: unaccounted', async () => {
    const error = await failure(provider().complete(ask('error-after-output')), 'unaccounted');
    expect(error.message).toContain('The server had an error while streaming');
  });

  it('the deadline after output began: unaccounted', async () => {
    const error = await failure(provider({ timeoutMs: 500 }).complete(ask('stall-after-output')), 'unaccounted');
    expect(error.message).toContain('timed out after 500 ms');
  });

  it('the caller cancelling after output began: unaccounted', async () => {
    const controller = new AbortController();
    const call = provider().complete(ask('stall-after-output'), controller.signal);
    setTimeout(() => controller.abort(), 300);
    const error = await failure(call, 'unaccounted');
    expect(error.message).toContain('cancelled by the caller');
  });

  it('a stream over maxResponseBytes: not read further, unaccounted', async () => {
    const error = await failure(provider({ maxResponseBytes: 2048 }).complete(ask('tool-call')), 'unaccounted');
    expect(error.message).toContain('2048-byte cap');
  });

  it('a completed answer without usage: unaccounted, never free', async () => {
    for (const stream of [true, false]) await failure(provider({ stream }).complete(ask('no-usage')), 'unaccounted');
  });

  it('non-streaming: a JSON body cut half way, or a 200 document with status failed: unaccounted', async () => {
    await failure(provider({ stream: false }).complete(ask('cut-mid-text')), 'unaccounted');
    const error = await failure(provider({ stream: false }).complete(ask('failed-after-output')), 'unaccounted');
    expect(error.message).toContain('status failed');
  });
});

describe('interrupted: the wire reported usage, the answer is unusable', () => {
  it('function-call arguments that are not JSON: a clear error, billed for the usage', async () => {
    for (const stream of [true, false]) {
      const error = await failure(provider({ stream }).complete(ask('bad-arguments', { tools: [TOOL] })), 'interrupted');
      expect(error.disposition).toBe('Landed');
      expect(error.usage).toEqual({ inputTokens: 60, outputTokens: 15, reasoningTokens: 30 });
      expect(error.message).toContain('arguments that are not JSON');
      expect(error.message).toContain(FAKE_TOOL_NAME);
    }
  });
});

describe('interrupted: a failure whose response reported usage', () => {
  it('response.failed carrying usage: interrupted, billed for what the wire said (the best rung this wire allows)', async () => {
    const error = await failure(provider().complete(ask('failed-with-usage')), 'interrupted');
    expect(error).toMatchObject({ disposition: 'Landed', usage: { inputTokens: 40, outputTokens: 2, reasoningTokens: 0 } });
    expect(error.message).toContain('Generation stopped after a server fault');
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
