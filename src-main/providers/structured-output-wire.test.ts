/**
 * What a step's schema and reasoning effort become on each provider's wire, against the
 * wire-faithful fakes: native where the provider has a schema mode (OpenAI Responses
 * `text.format`, Gemini `responseMimeType` + `responseSchema`, chat-completions
 * `response_format`), one forced tool where it has not (Anthropic). The schema is sent as the
 * step wrote it (Gemini's cut to the subset its wire accepts); whichever way it went, the answer
 * is validated locally afterwards (runtime/structured-output.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelRequest } from '../runtime/model-provider';
import { ANSWER_TOOL_NAME, createAnthropicProvider } from './anthropic-messages';
import { createGeminiProvider } from './gemini';
import { CHAT_SCHEMA_NAME, createOpenAiCompatibleProvider } from './openai-compatible';
import { createOpenAiResponsesProvider } from './openai-responses';
import { type FakeAnthropicServer, FAKE_STRUCTURED, startFakeAnthropicServer } from '../../tests/doubles/fake-anthropic-server';
import { type FakeChatServer, startFakeChatServer } from '../../tests/doubles/fake-chat-server';
import { type FakeGeminiServer, startFakeGeminiServer } from '../../tests/doubles/fake-gemini-server';
import { type FakeResponsesServer, startFakeResponsesServer } from '../../tests/doubles/fake-responses-server';

const KEY = 'sk-wire-structured-0123456789abcdef';
/** Within OpenAI's strict subset (every property required, no extras), so every wire takes it. */
const SCHEMA = { type: 'object', properties: { answer: { type: 'number' }, reason: { type: 'string' } }, required: ['answer', 'reason'], additionalProperties: false };

function ask(model: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model, maxTokens: 2048, messages: [{ role: 'user', content: 'How many invoices are overdue?' }], responseSchema: SCHEMA, ...extra };
}

let chat: FakeChatServer;
let responses: FakeResponsesServer;
let gemini: FakeGeminiServer;
let anthropic: FakeAnthropicServer;
beforeAll(async () => {
  [chat, responses, gemini, anthropic] = await Promise.all([startFakeChatServer(), startFakeResponsesServer(), startFakeGeminiServer(), startFakeAnthropicServer()]);
});
afterAll(() => Promise.all([chat.close(), responses.close(), gemini.close(), anthropic.close()]));

const lastBody = (requests: readonly { body: unknown }[]) => requests.at(-1)?.body as Record<string, unknown>;

describe('a schema on each wire', () => {
  it('chat completions: native response_format json_schema, and reasoning_effort', async () => {
    await createOpenAiCompatibleProvider({ id: 'chat', baseUrl: chat.baseUrl, apiKey: KEY }).complete(ask('ok', { reasoningEffort: 'low' }));
    const body = lastBody(chat.requests);
    expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: CHAT_SCHEMA_NAME, schema: SCHEMA } });
    expect(body.reasoning_effort).toBe('low');
    await createOpenAiCompatibleProvider({ id: 'chat', baseUrl: chat.baseUrl, apiKey: KEY }).complete(ask('ok', { responseSchema: undefined }));
    expect(lastBody(chat.requests)).not.toHaveProperty('response_format');
    expect(lastBody(chat.requests)).not.toHaveProperty('reasoning_effort');
  });

  it('OpenAI Responses: native text.format json_schema (strict), and reasoning.effort', async () => {
    await createOpenAiResponsesProvider({ id: 'openai', baseUrl: responses.baseUrl, apiKey: KEY }).complete(ask('ok', { reasoningEffort: 'medium' }));
    const body = lastBody(responses.requests);
    expect(body.text).toEqual({ format: { type: 'json_schema', name: expect.any(String) as unknown, schema: SCHEMA, strict: true } });
    expect(body.reasoning).toMatchObject({ effort: 'medium' });
  });

  it('Gemini: native responseMimeType application/json with the schema', async () => {
    await createGeminiProvider({ baseUrl: gemini.baseUrl, apiKey: KEY }).complete(ask('ok'));
    const config = lastBody(gemini.requests).generationConfig as Record<string, unknown>;
    expect(config.responseMimeType).toBe('application/json');
    expect(config.responseSchema).toMatchObject({ type: 'object', properties: SCHEMA.properties, required: SCHEMA.required });
  });

  it('Anthropic: one forced tool whose input schema is the schema; its input is the answer text', async () => {
    const completion = await createAnthropicProvider({ baseUrl: anthropic.baseUrl, apiKey: KEY }).complete(ask('structured'));
    const body = lastBody(anthropic.requests);
    expect(body.tools).toEqual([{ name: ANSWER_TOOL_NAME, description: expect.any(String) as unknown, input_schema: SCHEMA }]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: ANSWER_TOOL_NAME });
    expect(JSON.parse(completion.text)).toEqual(FAKE_STRUCTURED);
  });
});
