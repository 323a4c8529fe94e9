/**
 * A Chat Completions driver for any OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM
 * Studio, hosted gateways). The JSON is the easy part; what this module must get right is the
 * failure mapping, because it decides whether the runtime may send the request again and
 * whether the budget is telling the truth (see the ladder in model-provider.ts).
 *
 * Where each failure lands:
 *
 * - no model named, a bad maxTokens, a baseUrl that could leak a secret: refused before
 *   dispatch (nothing went on the wire).
 * - HTTP 3xx (redirects are never followed: a model endpoint that moves is misconfigured, and
 *   following it would send the prompt and the key somewhere nobody declared) and 4xx (400,
 *   401, 403, 404, 422, 429, ...): `refused`, DidNotHappen. `Retry-After` / `retry-after-ms`
 *   become retryAfterMs (rate limits are the one case where the provider names the window),
 *   and a 429 naming one is first sent again inside this one call (rate-limit.ts sendWithRetry).
 * - HTTP 5xx: `unavailable`, DidNotHappen, with the documented cost that a ceiling may
 *   under-count by at most one call.
 * - connection refused, DNS failure, reset, deadline or cancellation before any byte of the
 *   body: `unavailable`.
 * - after the body began, the stream is classified by what the wire already said, whatever
 *   cut it (socket closed, deadline, caller's abort, a mid-stream error event, malformed data,
 *   a stream that ends without `[DONE]`):
 *     usage chunk seen                 -> `interrupted`, carrying that usage (Landed);
 *     content generated, no usage yet  -> `unaccounted`, usage null (Landed, never free);
 *     nothing generated yet            -> `unavailable` (DidNotHappen).
 *   The Chat Completions wire reports usage only in its terminal chunk (with
 *   `stream_options.include_usage`), so `interrupted` is reachable only after that chunk:
 *   that is the best rung this wire allows, and the driver looks for it.
 *   Non-streaming, the answer and its usage are one JSON document: a body cut after its first
 *   byte is `unaccounted`.
 * - a body over maxResponseBytes: reading stops there, `unaccounted` (or `interrupted` when
 *   a usage chunk had already arrived). Never `unavailable`: a 2xx body that size was produced.
 * - a 2xx answer that reports no usage at all (a server that ignores `include_usage`):
 *   `unaccounted`. Completion.usage cannot say "unknown", and zero would be a lie that lets a
 *   retry loop spend against a ceiling reading nothing. Such a server works with stream: false
 *   if it reports usage there.
 *
 * Every message names the provider, what happened, the HTTP status where there is one, and
 * the provider's own error text trimmed by trimProviderError against the prompt, so a body
 * that echoes the prompt never carries it into a log. The API key lives in this closure and in
 * the Authorization header only: never in the profile, a message, or a property of the
 * provider object; a provider that echoes the key back in its error body is scrubbed too.
 *
 * Tokens: OpenAI counts reasoning tokens inside completion_tokens, and costOf bills
 * outputTokens + reasoningTokens, so outputTokens is completion_tokens minus reasoning_tokens:
 * reasoning is billed once, never twice and never zero.
 *
 * Which mode streams is the provider's configuration (its profile), not the request's:
 * streaming changes the request shape, so it is part of the effect's identity, and a
 * per-request switch would let the key record one shape while the wire carried another.
 * `ModelRequest.stream` is therefore ignored here; the Completion is whole either way.
 */
import type { Dispatcher } from 'undici';
import { type Completion, type ModelMessage, type ModelProvider, type ModelRequest, type ModelStreamObserver, type ModelUsage, type ToolCall, ModelError, notifyText } from '../runtime/model-provider';
import { isRecord } from '../../src-shared/plain-object';
import { ResponseTooLarge, readSseBatches } from '../net/sse';
import {
  type CallSettings,
  type CutCause,
  type Deadline,
  type HttpCall,
  type HttpDriverOptions,
  type Redactor,
  type WireRequest,
  bearerHeaders,
  createHttpDriver,
  isCount,
  nonEmpty,
  oversizedError,
  providerErrorText,
  readJsonDocument,
  severedError,
} from './wire';

// Kept importable from here: the wire helpers moved to wire.ts, shared by every HTTP driver.
export { DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS, retryAfterOf } from './wire';

export const OPENAI_CHAT_COMPLETIONS_DRIVER = 'openai-chat-completions/1';

export interface OpenAiCompatibleOptions extends HttpDriverOptions {
  /** The provider id, also `profile.provider` (e.g. `ollama`). */
  id: string;
  /** Up to and including the API version, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** Sent only as `Authorization: Bearer …`. Omit for servers that need none. */
  apiKey?: string;
}

export function createOpenAiCompatibleProvider(options: OpenAiCompatibleOptions): ModelProvider {
  return createHttpDriver({ who: 'openai-compatible', defaultId: options.id, driver: OPENAI_CHAT_COMPLETIONS_DRIVER, wire: 'OpenAI-compatible server', path: '/chat/completions' }, options, { build, read });
}

/** What the body said so far: the ladder reads it when the call is cut. */
interface WireState {
  status: number;
  /** Read as server-sent events (a server asked to stream may still send one document). */
  streamed: boolean;
  bytes: number;
  /** Generation provably began: content, reasoning or a tool call was emitted. */
  began: boolean;
  usage: ModelUsage | null;
  model: string | null;
  finishReason: string | null;
  text: string[];
  /**
   * Tool calls being assembled. Streaming, the wire sends each call in pieces keyed by `index`
   * (the id and name once, the arguments as string fragments), so they are gathered by index
   * and parsed only when the answer is whole: a fragment is not JSON on its own.
   */
  toolCalls: Map<number, { id: string; name: string; args: string[] }>;
  done: boolean;
  /** Shown each streamed `delta.content` (visible text only: never reasoning, never tool arguments). */
  observer?: ModelStreamObserver;
}

function build({ settings, request, model }: Pick<HttpCall, 'settings' | 'request' | 'model'>): WireRequest {
  return { headers: bearerHeaders(settings), body: JSON.stringify(wireBody(request, model, settings.streaming)) };
}

async function read(response: Dispatcher.ResponseData, { settings, redact, deadline, observer }: HttpCall, streamed: boolean): Promise<Completion> {
  const state: WireState = { status: response.statusCode, streamed: false, bytes: 0, began: false, usage: null, model: null, finishReason: null, text: [], toolCalls: new Map(), done: false };
  if (observer) state.observer = observer;
  return streamed ? readStream(settings, response.body, state, redact, deadline) : readDocument(settings, response.body, state, redact, deadline);
}

function wireBody(request: ModelRequest, model: string, streaming: boolean): Record<string, unknown> {
  const tools = request.tools ?? [];
  return {
    model,
    messages: request.messages.map(wireMessage),
    max_tokens: request.maxTokens,
    temperature: request.temperature,
    stream: streaming,
    ...(streaming ? { stream_options: { include_usage: true } } : {}),
    ...(tools.length
      ? {
          tools: tools.map((tool) => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.inputSchema } })),
          ...(request.toolChoice ? { tool_choice: wireToolChoice(request.toolChoice) } : {}),
        }
      : {}),
    // Structured output natively: `response_format: json_schema`, which OpenAI, vLLM, llama.cpp
    // and Ollama all read. Not `strict`: compatible servers differ in what strict accepts, and
    // the answer is validated locally against the exact schema anyway (structured-output.ts).
    ...(request.responseSchema ? { response_format: { type: 'json_schema', json_schema: { name: CHAT_SCHEMA_NAME, schema: request.responseSchema } } } : {}),
    ...(request.reasoningEffort ? { reasoning_effort: request.reasoningEffort } : {}),
  };
}

/** The name `response_format.json_schema` requires; the schema itself is the step's, unchanged. */
export const CHAT_SCHEMA_NAME = 'answer';

/**
 * One turn on the Chat Completions wire. This wire carries no opaque provider state (no signed
 * thinking, no encrypted reasoning), so an assistant turn's `continuation` is not needed here and
 * this driver never sets one; an assistant turn is rebuilt from its text and tool calls alone.
 * Tool call arguments go back as the JSON string the wire uses.
 */
function wireMessage(message: ModelMessage): Record<string, unknown> {
  if (message.role === 'tool') return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
  if (message.role === 'assistant' && message.toolCalls?.length) {
    return {
      role: 'assistant',
      // The wire allows null content beside tool calls; an empty answer is sent as null.
      content: message.content || null,
      tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) } })),
    };
  }
  return { role: message.role, content: message.content };
}

function wireToolChoice(choice: NonNullable<ModelRequest['toolChoice']>): unknown {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

// ---- a 2xx body ----

async function readStream(settings: CallSettings, body: Dispatcher.ResponseData['body'], state: WireState, redact: Redactor, deadline: Deadline): Promise<Completion> {
  state.streamed = true;
  const take = (data: string): CutCause | null => {
    if (data === '[DONE]') {
      state.done = true;
      return null;
    }
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return { what: 'a malformed stream chunk' };
    }
    if (!isRecord(chunk)) return { what: 'a stream chunk that is not an object' };
    if (chunk.error !== undefined && chunk.error !== null) {
      return { what: 'an error event mid-stream', providerText: providerErrorText(JSON.stringify(chunk)) };
    }
    takeChunk(state, chunk);
    return null;
  };
  try {
    // The state is the byte meter: a cut call reports how far the body got.
    // By the chunk (readSseBatches): the inner loop runs once per streamed token.
    read: for await (const batch of readSseBatches(body as AsyncIterable<Buffer>, settings.maxResponseBytes, state)) for (const { data } of batch) {
      const cause = take(data);
      if (cause) throw severedError(settings, state, cause, redact);
      if (state.done) break read;
    }
  } catch (error) {
    if (error instanceof ModelError) throw error;
    if (error instanceof ResponseTooLarge) throw oversizedError(settings, state, 'grew');
    throw severedError(settings, state, { what: deadline.describe(error) }, redact);
  } finally {
    if (!body.destroyed) body.destroy();
  }
  if (!state.done) throw severedError(settings, state, { what: 'the stream ended without [DONE]' }, redact);
  return finished(settings, state, redact);
}

function takeChunk(state: WireState, chunk: Record<string, unknown>): void {
  if (typeof chunk.model === 'string' && chunk.model) state.model = chunk.model;
  if (isRecord(chunk.usage)) {
    const usage = usageOf(chunk.usage);
    if (usage) state.usage = usage;
  }
  const choice = firstChoice(chunk.choices);
  if (!choice) return;
  const delta = isRecord(choice.delta) ? choice.delta : {};
  if (typeof delta.content === 'string') {
    state.text.push(delta.content);
    if (delta.content) state.began = true;
    notifyText(state.observer, delta.content);
  }
  // Servers that stream reasoning text (vLLM, llama.cpp, DeepSeek: `reasoning_content`;
  // Ollama, OpenRouter: `reasoning`) prove generation began even before visible content.
  if (nonEmpty(delta.reasoning_content) || nonEmpty(delta.reasoning) || (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0)) state.began = true;
  if (Array.isArray(delta.tool_calls)) {
    for (const [position, piece] of delta.tool_calls.entries()) {
      if (!isRecord(piece)) continue;
      // `index` keys the call across chunks; a server that omits it sends one call per chunk position.
      const index = isCount(piece.index) ? piece.index : position;
      const call = state.toolCalls.get(index) ?? { id: '', name: '', args: [] };
      const fn = isRecord(piece.function) ? piece.function : {};
      if (typeof piece.id === 'string' && piece.id) call.id = piece.id;
      if (typeof fn.name === 'string' && fn.name) call.name += fn.name;
      if (typeof fn.arguments === 'string') call.args.push(fn.arguments);
      state.toolCalls.set(index, call);
    }
  }
  if (typeof choice.finish_reason === 'string' && choice.finish_reason) {
    state.finishReason = choice.finish_reason;
    state.began = true;
  }
}

async function readDocument(settings: CallSettings, body: Dispatcher.ResponseData['body'], state: WireState, redact: Redactor, deadline: Deadline): Promise<Completion> {
  const document = await readJsonDocument(settings, body, state, redact, deadline, { meter: state });
  if (isRecord(document.usage)) state.usage = usageOf(document.usage);
  if (typeof document.model === 'string' && document.model) state.model = document.model;
  const choice = firstChoice(document.choices);
  const message = choice && isRecord(choice.message) ? choice.message : null;
  if (!choice || !message) {
    const providerText = document.error !== undefined ? providerErrorText(JSON.stringify(document)) : undefined;
    throw severedError(settings, state, { what: 'an answer without a choice', providerText }, redact);
  }
  if (typeof message.content === 'string') state.text.push(message.content);
  if (Array.isArray(message.tool_calls)) {
    for (const [index, piece] of message.tool_calls.entries()) {
      if (!isRecord(piece)) continue;
      const fn = isRecord(piece.function) ? piece.function : {};
      state.toolCalls.set(index, { id: typeof piece.id === 'string' ? piece.id : '', name: typeof fn.name === 'string' ? fn.name : '', args: [typeof fn.arguments === 'string' ? fn.arguments : ''] });
    }
  }
  if (typeof choice.finish_reason === 'string') state.finishReason = choice.finish_reason;
  return finished(settings, state, redact);
}

function finished(settings: CallSettings, state: WireState, redact: Redactor): Completion {
  // Tool calls are parsed first: malformed arguments are a broken answer whatever the usage
  // says, and the ladder (usage seen: interrupted, else unaccounted) names what it cost.
  const toolCalls = toolCallsOf(settings, state, redact);
  if (!state.usage) {
    throw new ModelError(
      'unaccounted',
      `${settings.id}: HTTP ${state.status} answer reported no usage (does the server honour stream_options.include_usage?); it happened, and is counted as unaccounted rather than free`,
    );
  }
  return {
    text: state.text.join(''),
    usage: state.usage,
    model: state.model,
    // `length` is the documented cut; `content_filter` also stops an answer part way through.
    truncated: state.finishReason === 'length' || state.finishReason === 'content_filter',
    toolCalls,
    stopReason: stopReasonOf(state.finishReason, toolCalls.length > 0),
    // No continuation: this wire has no opaque state to carry back (see wireMessage).
  };
}

/**
 * The assembled calls in index order, arguments parsed. Arguments that are not a JSON object
 * (a model that wrote broken JSON, a stream whose fragments do not join) are an error on the
 * ladder: generation had begun, so `interrupted` with the usage if the wire reported it, else
 * `unaccounted`; never `unavailable` (tokens were produced) and never a silently empty call.
 */
function toolCallsOf(settings: CallSettings, state: WireState, redact: Redactor): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const index of [...state.toolCalls.keys()].sort((a, b) => a - b)) {
    const call = state.toolCalls.get(index)!;
    if (!call.name) throw severedError(settings, state, { what: `tool call ${index} without a function name` }, redact);
    const raw = call.args.join('');
    let parsed: unknown;
    try {
      parsed = raw.trim() === '' ? {} : JSON.parse(raw);
    } catch {
      throw severedError(settings, state, { what: `tool call ${index} (${call.name}) with arguments that are not valid JSON` }, redact);
    }
    if (!isRecord(parsed)) throw severedError(settings, state, { what: `tool call ${index} (${call.name}) with arguments that are not a JSON object` }, redact);
    calls.push({ id: call.id || `call_${index}`, name: call.name, arguments: parsed });
  }
  return calls;
}

function stopReasonOf(finish: string | null, calledTools: boolean): Completion['stopReason'] {
  if (finish === 'tool_calls' || finish === 'function_call') return 'tool_calls';
  if (finish === 'length') return 'length';
  if (finish === 'content_filter') return 'refusal';
  // Some servers (older Ollama, llama.cpp) send tool calls with finish `stop`: the calls decide.
  if (calledTools) return 'tool_calls';
  if (finish === 'stop') return 'end';
  return 'other';
}

// ---- the ladder ----

function usageOf(usage: Record<string, unknown>): ModelUsage | null {
  const prompt = usage.prompt_tokens;
  const completion = usage.completion_tokens;
  if (!isCount(prompt) || !isCount(completion)) return null;
  const details = isRecord(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  const reasoning = isCount(details.reasoning_tokens) ? Math.min(details.reasoning_tokens, completion) : 0;
  return { inputTokens: prompt, outputTokens: completion - reasoning, reasoningTokens: reasoning };
}

// ---- small parts ----

function firstChoice(choices: unknown): Record<string, unknown> | null {
  if (!Array.isArray(choices)) return null;
  const first = choices.find((choice) => isRecord(choice) && (choice.index === undefined || choice.index === 0)) as unknown;
  return isRecord(first) ? first : null;
}
