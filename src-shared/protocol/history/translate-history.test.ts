/**
 * translate_history over a rich conversation written by hand in each of the four formats,
 * as a client of that API writes it: system prompt, a user turn of text + base64 image + URL
 * image, an assistant turn of reasoning (where the format has it) + text + two parallel
 * tool calls, the two results (one an error), and a final answer.
 *
 * For all 12 ordered pairs (A, B): A -> B -> A gives A back exactly, and B(A) says the same
 * thing as A at the IR level (IR(B(A)) deep-equals IR(A)), also after a trip through JSON
 * text. Then golden translations showing the natural mapping, the envelope, and the error
 * codes. Pure: no Node built-ins.
 */
import { describe, expect, it } from 'vitest';
import { PROVIDERS, type Provider } from './adapter';
import type { ClaudeHistory } from './claude';
import { HistoryErrorCode, HistoryTranslationError } from './errors';
import type { GeminiHistory } from './gemini';
import { ConversationSchema } from './ir';
import type { OpenAiHistory } from './openai-family';
import { answerTranslateHistory, HISTORY_ADAPTERS, historyToIR, translateHistory } from './translate-history';

const SYSTEM = 'You are a weather assistant. Answer briefly.';
const ASK = 'Weather in Paris and Oslo? Here is my window, and the Oslo webcam:';
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const WEBCAM = 'https://example.com/oslo.jpg';
const THINKING = 'Two cities, so two get_weather calls in parallel.';
const SIGNATURE = 'RXVxb0NrZ0lBUkFCR0FJcUNI';
const CHECKING = 'Let me check both cities.';
const PARIS_ARGS = { city: 'Paris', units: 'metric' };
const OSLO_ARGS = { city: 'Oslo', units: 'metric', fields: ['wind', 'uv'] };
const PARIS_RESULT = '{"temp_c":18,"sky":"cloudy"}';
const OSLO_ERROR = 'upstream timeout after 10s';
const ANSWER = 'Paris: 18 °C and cloudy. The Oslo lookup failed; try again shortly.';

const claudeFixture: ClaudeHistory = {
  system: SYSTEM,
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: ASK },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
        { type: 'image', source: { type: 'url', url: WEBCAM } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: THINKING, signature: SIGNATURE },
        { type: 'text', text: CHECKING },
        { type: 'tool_use', id: 'toolu_paris', name: 'get_weather', input: PARIS_ARGS },
        { type: 'tool_use', id: 'toolu_oslo', name: 'get_weather', input: OSLO_ARGS },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_paris', content: PARIS_RESULT },
        { type: 'tool_result', tool_use_id: 'toolu_oslo', content: OSLO_ERROR, is_error: true },
      ],
    },
    { role: 'assistant', content: ANSWER },
  ],
};

/** OpenAI has no reasoning; its only extension here is the error flag it has no field for. */
const openAiFixture: OpenAiHistory = [
  { role: 'system', content: SYSTEM },
  {
    role: 'user',
    content: [
      { type: 'text', text: ASK },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
      { type: 'image_url', image_url: { url: WEBCAM } },
    ],
  },
  {
    role: 'assistant',
    content: CHECKING,
    tool_calls: [
      { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(PARIS_ARGS) } },
      { id: 'call_oslo', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(OSLO_ARGS) } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_paris', content: PARIS_RESULT },
  { role: 'tool', tool_call_id: 'call_oslo', content: OSLO_ERROR, 'x-agentplane': { isError: true } },
  { role: 'assistant', content: ANSWER },
];

/** DeepSeek: reasoning_content on the wire; images as placeholder parts with the extension. */
const deepSeekFixture: OpenAiHistory = [
  { role: 'system', content: SYSTEM },
  {
    role: 'user',
    content: [
      { type: 'text', text: ASK },
      { type: 'text', text: '[image: image/png]', 'x-agentplane': { image: { type: 'base64', mediaType: 'image/png', data: PNG } } },
      { type: 'text', text: `[image: ${WEBCAM}]`, 'x-agentplane': { image: { type: 'url', url: WEBCAM } } },
    ],
  },
  {
    role: 'assistant',
    content: CHECKING,
    reasoning_content: THINKING,
    tool_calls: [
      { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(PARIS_ARGS) } },
      { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(OSLO_ARGS) } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_0', content: PARIS_RESULT },
  { role: 'tool', tool_call_id: 'call_1', content: OSLO_ERROR, 'x-agentplane': { isError: true } },
  { role: 'assistant', content: ANSWER },
];

/** Gemini as its SDKs write it: no call ids, responses as objects, the URL image as fileData. */
const geminiFixture: GeminiHistory = {
  systemInstruction: { parts: [{ text: SYSTEM }] },
  contents: [
    {
      role: 'user',
      parts: [{ text: ASK }, { inlineData: { mimeType: 'image/png', data: PNG } }, { fileData: { mimeType: 'image/jpeg', fileUri: WEBCAM } }],
    },
    {
      role: 'model',
      parts: [
        { text: THINKING, thought: true, thoughtSignature: SIGNATURE },
        { text: CHECKING },
        { functionCall: { name: 'get_weather', args: PARIS_ARGS } },
        { functionCall: { name: 'get_weather', args: OSLO_ARGS } },
      ],
    },
    {
      role: 'user',
      parts: [
        { functionResponse: { name: 'get_weather', response: { temp_c: 18, sky: 'cloudy' } } },
        { functionResponse: { name: 'get_weather', response: { error: OSLO_ERROR } } },
      ],
    },
    { role: 'model', parts: [{ text: ANSWER }] },
  ],
};

const FIXTURES: Record<Provider, unknown> = {
  claude: claudeFixture,
  openai: openAiFixture,
  gemini: geminiFixture,
  deepseek: deepSeekFixture,
};

const PAIRS = PROVIDERS.flatMap((from) => PROVIDERS.filter((to) => to !== from).map((to) => [from, to] as const));

const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('the fixtures', () => {
  it.each(PROVIDERS)('%s fixture is valid, canonical, and reads to a valid IR', (provider) => {
    const ir = historyToIR(provider, FIXTURES[provider]);
    expect(ConversationSchema.safeParse(ir).success).toBe(true);
    expect(HISTORY_ADAPTERS[provider].fromIR(ir)).toEqual(FIXTURES[provider]);
  });

  it('say the same conversation, up to ids and what a format cannot say natively', () => {
    const claude = historyToIR('claude', claudeFixture);
    const gemini = historyToIR('gemini', geminiFixture);
    // Gemini gave the webcam a media type, and its calls positional ids; otherwise identical.
    expect(gemini.messages[0]?.blocks[2]).toEqual({ type: 'image', source: { type: 'url', url: WEBCAM, mediaType: 'image/jpeg' } });
    expect(gemini.messages[1]?.blocks.map((block) => (block.type === 'toolCall' ? block.id : block.type))).toEqual([
      'reasoning',
      'text',
      'gemini-call-1-2',
      'gemini-call-1-3',
    ]);
    expect(gemini.messages[2]?.blocks).toEqual([
      { type: 'toolResult', callId: 'gemini-call-1-2', content: [{ type: 'text', text: PARIS_RESULT }], isError: false },
      { type: 'toolResult', callId: 'gemini-call-1-3', content: [{ type: 'text', text: OSLO_ERROR }], isError: true },
    ]);
    expect(gemini.messages[3]).toEqual(claude.messages[3]);
    expect(gemini.system).toBe(claude.system);
  });
});

describe('all 12 ordered provider pairs', () => {
  it.each(PAIRS)('%s -> %s -> back gives the original exactly', (from, to) => {
    const there = translateHistory({ from, to, messages: FIXTURES[from] });
    const back = translateHistory({ from: to, to: from, messages: there });
    expect(back).toEqual(FIXTURES[from]);
  });

  it.each(PAIRS)('%s -> %s loses nothing at the IR level (also through JSON text)', (from, to) => {
    const source = historyToIR(from, FIXTURES[from]);
    const there = translateHistory({ from, to, messages: FIXTURES[from] });
    expect(historyToIR(to, there)).toEqual(source);
    expect(historyToIR(to, viaJson(there))).toEqual(source);
  });
});

describe('golden translations', () => {
  it('claude -> openai: data URL, tool_calls with JSON-string arguments, tool messages; reasoning and the error flag under the extension', () => {
    expect(translateHistory({ from: 'claude', to: 'openai', messages: claudeFixture })).toEqual([
      { role: 'system', content: SYSTEM },
      {
        role: 'user',
        content: [
          { type: 'text', text: ASK },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
          { type: 'image_url', image_url: { url: WEBCAM } },
        ],
      },
      {
        role: 'assistant',
        content: CHECKING,
        tool_calls: [
          { id: 'toolu_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris","units":"metric"}' } },
          { id: 'toolu_oslo', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo","units":"metric","fields":["wind","uv"]}' } },
        ],
        'x-agentplane': { reasoning: { text: THINKING, signature: SIGNATURE } },
      },
      { role: 'tool', tool_call_id: 'toolu_paris', content: PARIS_RESULT },
      { role: 'tool', tool_call_id: 'toolu_oslo', content: OSLO_ERROR, 'x-agentplane': { isError: true } },
      { role: 'assistant', content: ANSWER },
    ]);
  });

  it('claude -> gemini: ids kept, response names taken from the calls, JSON text shown as an object, the error as {error}', () => {
    expect(translateHistory({ from: 'claude', to: 'gemini', messages: claudeFixture })).toEqual({
      systemInstruction: { parts: [{ text: SYSTEM }] },
      contents: [
        { role: 'user', parts: [{ text: ASK }, { inlineData: { mimeType: 'image/png', data: PNG } }, { fileData: { fileUri: WEBCAM } }] },
        {
          role: 'model',
          parts: [
            { text: THINKING, thought: true, thoughtSignature: SIGNATURE },
            { text: CHECKING },
            { functionCall: { id: 'toolu_paris', name: 'get_weather', args: PARIS_ARGS } },
            { functionCall: { id: 'toolu_oslo', name: 'get_weather', args: OSLO_ARGS } },
          ],
        },
        {
          role: 'user',
          parts: [
            // A response echoes its call's id, as Gemini clients do.
            { functionResponse: { id: 'toolu_paris', name: 'get_weather', response: { temp_c: 18, sky: 'cloudy' } } },
            { functionResponse: { id: 'toolu_oslo', name: 'get_weather', response: { error: OSLO_ERROR } } },
          ],
        },
        { role: 'model', parts: [{ text: ANSWER }] },
      ],
    });
  });

  it('gemini -> claude: positional ids for id-less calls, results paired by name in order, the URL media type kept', () => {
    expect(translateHistory({ from: 'gemini', to: 'claude', messages: geminiFixture })).toEqual({
      system: SYSTEM,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: ASK },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } },
            { type: 'image', source: { type: 'url', url: WEBCAM }, 'x-agentplane': { mediaType: 'image/jpeg' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: THINKING, signature: SIGNATURE },
            { type: 'text', text: CHECKING },
            { type: 'tool_use', id: 'gemini-call-1-2', name: 'get_weather', input: PARIS_ARGS },
            { type: 'tool_use', id: 'gemini-call-1-3', name: 'get_weather', input: OSLO_ARGS },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'gemini-call-1-2', content: PARIS_RESULT },
            { type: 'tool_result', tool_use_id: 'gemini-call-1-3', content: OSLO_ERROR, is_error: true },
          ],
        },
        { role: 'assistant', content: ANSWER },
      ],
    });
  });

  it('deepseek -> openai: images become real image_url parts again, reasoning moves to the extension', () => {
    const openai = translateHistory({ from: 'deepseek', to: 'openai', messages: deepSeekFixture });
    expect(openai[1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: ASK },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
        { type: 'image_url', image_url: { url: WEBCAM } },
      ],
    });
    expect(openai[2]).toMatchObject({ role: 'assistant', content: CHECKING, 'x-agentplane': { reasoning: { text: THINKING } } });
  });
});

describe('the envelope and its errors', () => {
  it('answers {from, to, messages}, and the answer is itself a valid request', () => {
    const answer = answerTranslateHistory({ from: 'openai', to: 'claude', messages: openAiFixture });
    expect(answer.from).toBe('openai');
    expect(answer.to).toBe('claude');
    expect(answerTranslateHistory({ from: answer.to, to: answer.from, messages: answer.messages }).messages).toEqual(openAiFixture);
  });

  it('accepts a bare array for claude and gemini, and always writes the object form', () => {
    expect(translateHistory({ from: 'claude', to: 'claude', messages: [{ role: 'user', content: 'hi' }] })).toEqual({
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(translateHistory({ from: 'gemini', to: 'gemini', messages: [{ role: 'user', parts: [{ text: 'hi' }] }] })).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
    });
  });

  it.each([
    ['from', { from: 'mistral', to: 'claude', messages: [] }],
    ['to', { from: 'claude', to: 'llama', messages: [] }],
    ['from', { from: 'Claude', to: 'openai', messages: [] }],
    ['to', { from: 'openai', to: 5, messages: [] }],
    ['from', { to: 'openai', messages: [] }],
  ])('an unknown %s is UNSUPPORTED_PROVIDER, listing the four names', (field, request) => {
    const error = refusalOf(() => answerTranslateHistory(request));
    expect(error.code).toBe(HistoryErrorCode.UnsupportedProvider);
    expect(error.message).toContain(`${field}: unsupported provider`);
    expect(error.message).toContain('claude, openai, gemini, deepseek');
    expect(error.toJSON()).toEqual({ code: 'UNSUPPORTED_PROVIDER', message: error.message });
  });

  it('an unknown provider wins over a malformed history, so the peer answers -32010', () => {
    const error = refusalOf(() => translateHistory({ from: 'claude', to: 'palm', messages: 'not a history' }));
    expect(error.code).toBe(HistoryErrorCode.UnsupportedProvider);
  });

  it('a malformed envelope or history is INVALID_HISTORY naming the path', () => {
    const extra = refusalOf(() => answerTranslateHistory({ from: 'claude', to: 'openai', messages: [], model: 'x' }));
    expect(extra.code).toBe(HistoryErrorCode.InvalidHistory);
    expect(extra.message).toContain('Unrecognized key: "model"');
    const missing = refusalOf(() => answerTranslateHistory({ from: 'claude', to: 'openai' }));
    expect(missing.message).toContain('messages: expected the native history of `from`');
  });
});

function refusalOf(run: () => unknown): HistoryTranslationError {
  try {
    run();
  } catch (error) {
    if (error instanceof HistoryTranslationError) return error;
    throw error;
  }
  throw new Error('expected a HistoryTranslationError, but the call succeeded');
}
