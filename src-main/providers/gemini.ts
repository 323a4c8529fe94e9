/**
 * A Google Gemini driver against the Generative Language API's own wire (no SDK):
 * `POST {baseUrl}/models/{model}:generateContent`, or `:streamGenerateContent?alt=sse` when the
 * profile streams, the key in the `x-goog-api-key` header only. Google also accepts `?key=` in
 * the URL; this driver never uses it, because URLs end up in logs, proxies and error messages.
 *
 * As with every driver (see the ladder in model-provider.ts and docs/GOVERNED-RUNTIME.md, "Model providers"),
 * the JSON is the easy part and the failure mapping is what matters:
 *
 * - no model, a bad maxTokens, a continuation from another provider, a toolChoice naming a tool
 *   that is not offered: `refused` before dispatch (nothing went on the wire).
 * - 3xx (never followed), 400 INVALID_ARGUMENT (Google also answers a bad key with 400), 401,
 *   403 PERMISSION_DENIED, 404 NOT_FOUND, 429 RESOURCE_EXHAUSTED: `refused`, DidNotHappen. The
 *   retry window is `Retry-After` when sent, else the google.rpc.RetryInfo `retryDelay` in the
 *   error's details (Google's usual way of naming it); a 429 naming one is first sent again
 *   inside this one call (rate-limit.ts sendWithRetry).
 * - 500 INTERNAL, 503 UNAVAILABLE: `unavailable`, DidNotHappen (a ceiling may under-count by at
 *   most one call: the documented cost).
 * - transport failure, deadline or the caller's abort before any response: `unavailable`.
 * - after the 2xx status line, classified by what the wire had already said:
 *     usageMetadata seen               -> `interrupted`, carrying it (Landed, billed);
 *     parts generated, no usage yet    -> `unaccounted` (Landed, never free);
 *     nothing yet                      -> `unavailable` (DidNotHappen).
 *   Gemini's stream carries usageMetadata on its chunks as the answer is delivered (running
 *   totals), so unlike the Chat Completions and Responses wires a cut stream here normally
 *   carries a bill: `interrupted` is the rung this driver must reach, and it looks for it on
 *   every chunk (the latest usage wins). A stream has no terminal sentinel: it is whole when a
 *   chunk carried finishReason (or promptFeedback.blockReason) and the body then ended cleanly.
 *   Non-streaming, the answer and its usage are one JSON document: cut, it is `unaccounted`.
 * - a body over maxResponseBytes: not read further, `interrupted` with the usage seen, else
 *   `unaccounted` (a 2xx body that size was produced).
 * - finishReason MALFORMED_FUNCTION_CALL: the model spent tokens writing a call that did not
 *   parse. Returned as a Completion it would be an empty success (no text, no calls), exactly
 *   the silent failure docs/GOVERNED-RUNTIME.md refuses; so it is a `interrupted` ModelError carrying the usage
 *   (Landed, billed), and the message names the finish reason.
 *
 * Mapping (request):
 * - system messages -> `systemInstruction: {parts: [{text}]}` (joined in order);
 * - user -> `{role: 'user', parts: [{text}]}`;
 * - assistant -> `{role: 'model', parts}`: with a Gemini `continuation`, its parts verbatim
 *   (thought signatures included: Gemini 3 refuses a function-calling history without them, and
 *   what a driver does not understand is exactly what it must return); without one, a text part
 *   and functionCall parts rebuilt from toolCalls (history that did not come from Gemini);
 * - tool results -> one `{role: 'user', parts: [{functionResponse: {name, response, id?}}]}` turn
 *   per run of consecutive results (Gemini pairs a turn's N parallel calls with N responses in one
 *   turn). The current API takes function responses in a `user` turn (the older `function` role
 *   is what the v1beta docs used to show). `response` is `{content}`, or `{error}` when the tool
 *   failed (the key Gemini's docs name for a failed call). `id` is sent only when Gemini gave the
 *   call an id itself (found in a continuation), never a synthetic one;
 * - tools -> `[{functionDeclarations: [{name, description, parameters}]}]`. Gemini's `parameters`
 *   is an OpenAPI 3.0 subset and refuses unknown fields with a 400 (`$schema`,
 *   `additionalProperties`, `$ref`, `const`, `oneOf`, ...). The driver keeps only the fields that
 *   subset documents (geminiSchema below) and turns `type: [T, 'null']` into `nullable: true`.
 *   This is a deterministic function of the request, so the effect key (the request) still fixes
 *   what the wire carried; and the answer is validated locally against the exact schema anyway.
 *   (`parametersJsonSchema` / `responseJsonSchema` take full JSON Schema on newer models; using
 *   them would be a profile option, not done here.)
 * - toolChoice -> `toolConfig.functionCallingConfig`: auto -> AUTO, required -> ANY, {name} ->
 *   ANY with allowedFunctionNames [name];
 * - responseSchema -> `generationConfig.responseMimeType: 'application/json'` + `responseSchema`
 *   (native constrained decoding, same subset);
 * - reasoningEffort -> `generationConfig.thinkingConfig {thinkingBudget: 1024 | 8192 | 24576,
 *   includeThoughts: false}` (thought text is never asked for: reasoning is billed and invisible;
 *   Gemini 3 prefers thinkingLevel and still accepts a budget);
 * - maxTokens -> `maxOutputTokens`, temperature -> `temperature`.
 *
 * Mapping (answer): candidates[0].content.parts, kept verbatim (and in arrival order when
 * streamed) as the shared continuation `{wire: 'gemini-generate-content/1', turn: {role: 'model', parts}}`; text is
 * the non-thought text parts joined; functionCall parts become toolCalls. Gemini often gives a
 * call no id: the driver names it `call_<turn>_<index>` (turn = assistant turns already in the
 * request, index = the call's position in this answer), which is stable on replay because it is
 * a function of the request and the answer, and distinct across turns of one conversation.
 * finishReason STOP -> end (tool_calls when calls were made), MAX_TOKENS -> length (truncated),
 * SAFETY / RECITATION / BLOCKLIST / PROHIBITED_CONTENT / SPII / IMAGE_SAFETY -> refusal (truncated
 * when part of an answer had arrived), anything else -> other. promptFeedback.blockReason (the
 * prompt was refused before generation) -> a `refusal` Completion with no text and no output
 * tokens, billed for whatever input the wire reported.
 *
 * Usage: inputTokens = promptTokenCount − cachedContentTokenCount (+ toolUsePromptTokenCount),
 * cacheReadTokens = cachedContentTokenCount, outputTokens = candidatesTokenCount, reasoningTokens
 * = thoughtsTokenCount (Gemini counts thoughts apart from candidates: each token billed once).
 * A whole answer with no usageMetadata at all is `unaccounted`, never zero.
 *
 * The key lives in this closure and the request header only: never in the URL, the profile, a
 * message or a property of the provider; an error body that echoes it is scrubbed.
 */
import type { Dispatcher } from 'undici';
import { type Completion, type Continuation, type ModelMessage, type ModelProvider, type ModelRequest, type ModelStreamObserver, type ModelUsage, type StopReason, type ToolCall, type ToolDeclaration, ModelError, continuationOrigin, isContinuationOf, notifyText } from '../runtime/model-provider';
import { isRecord } from '../../src-shared/plain-object';
import { ResponseTooLarge, readSseBatches } from '../net/sse';
import {
  type CallSettings,
  type Deadline,
  type HttpCall,
  type HttpDriverOptions,
  type Redactor,
  type ResponseBody,
  type WireRequest,
  createHttpDriver,
  isCount,
  jsonHeaders,
  oversizedError,
  providerErrorText,
  readJsonDocument,
  severedError,
  statusError,
} from './wire';

export const GEMINI_DRIVER = 'gemini-generate-content/1';
export const DEFAULT_GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';
/** thinkingBudget per effort (tokens). */
export const GEMINI_THINKING_BUDGET = { low: 1024, medium: 8192, high: 24576 } as const;

const WHO = 'gemini';

export interface GeminiOptions extends HttpDriverOptions {
  /** The provider id, also `profile.provider` (default `gemini`). */
  id?: string;
  /** Up to and including the API version (default DEFAULT_GEMINI_BASE_URL). */
  baseUrl?: string;
  /** Sent only as the `x-goog-api-key` header. Required. */
  apiKey: string;
}

/** The continuation this driver produces and accepts: Gemini's own model turn, verbatim. */
export interface GeminiContinuation extends Continuation {
  wire: typeof GEMINI_CONTINUATION;
  turn: { role: 'model'; parts: unknown[] };
}

/** The tag on this driver's continuation (the driver id, see Continuation): another wire's turn is never sent here. */
export const GEMINI_CONTINUATION = GEMINI_DRIVER;

export function createGeminiProvider(options: GeminiOptions): ModelProvider {
  return createHttpDriver(
    { who: WHO, defaultId: 'gemini', driver: GEMINI_DRIVER, defaultBaseUrl: DEFAULT_GEMINI_BASE_URL, wire: 'Google Gemini', path: '', keyVariable: 'AGENTPLANE_GEMINI_API_KEY' },
    options,
    { model: (named) => named.replace(/^models\//, ''), build, refusal, read },
  );
}

/** What the body said so far: the ladder reads it when the call is cut. */
interface WireState {
  status: number;
  streamed: boolean;
  bytes: number;
  /** Generation provably began: a part or a finish reason arrived. */
  began: boolean;
  usage: ModelUsage | null;
  model: string | null;
  finishReason: string | null;
  finishMessage: string | null;
  blockReason: string | null;
  /** The model turn's parts, verbatim, in arrival order. */
  parts: Record<string, unknown>[];
  /** Shown each streamed non-thought text part (visible text only: never thoughts, never functionCall args). */
  observer?: ModelStreamObserver;
}

/** The path names the model and the mode: `models/{model}:streamGenerateContent?alt=sse` or `:generateContent`. */
function build({ settings, request, model }: Pick<HttpCall, 'settings' | 'request' | 'model'>): WireRequest {
  const action = settings.streaming ? 'streamGenerateContent?alt=sse' : 'generateContent';
  return {
    url: `${settings.url}/models/${encodeURIComponent(model)}:${action}`,
    headers: jsonHeaders(settings, { 'x-goog-api-key': settings.apiKey }),
    body: JSON.stringify(wireBody(settings.id, request)),
  };
}

async function refusal(response: Dispatcher.ResponseData, { settings, redact, deadline }: HttpCall): Promise<ModelError> {
  let retryDelayMs: number | null = null;
  const error = await statusError(settings.id, response, redact, deadline, settings.maxResponseBytes, (text) => {
    retryDelayMs = retryInfoOf(text);
    return googleErrorText(text);
  });
  // Retry-After (the header) wins; Google usually names the window only in RetryInfo.
  return error.retryAfterMs === null && retryDelayMs !== null ? new ModelError(error.kind, error.message, error.usage, retryDelayMs) : error;
}

async function read(response: Dispatcher.ResponseData, { settings, request, redact, deadline, observer }: HttpCall, streamed: boolean): Promise<Completion> {
  const state: WireState = { status: response.statusCode, streamed: false, bytes: 0, began: false, usage: null, model: null, finishReason: null, finishMessage: null, blockReason: null, parts: [] };
  if (observer) state.observer = observer;
  if (streamed) await readStream(settings, response.body, state, redact, deadline);
  else await readDocument(settings, response.body, state, redact, deadline);
  return finished(settings, state, request, redact);
}

// ---- the request ----

function wireBody(id: string, request: ModelRequest): Record<string, unknown> {
  const system = request.messages.filter((message) => message.role === 'system').map((message) => message.content);
  const body: Record<string, unknown> = { contents: contentsOf(id, request.messages) };
  if (system.length) body.systemInstruction = { parts: system.map((text) => ({ text })) };
  if (request.tools?.length) {
    body.tools = [{ functionDeclarations: request.tools.map(declarationOf) }];
  }
  // `auto` with no tools is the default and says nothing; any other choice needs a tool to choose.
  if (request.toolChoice !== undefined && !(request.toolChoice === 'auto' && !request.tools?.length)) {
    const offered = new Set((request.tools ?? []).map((tool) => tool.name));
    if (offered.size === 0) throw new ModelError('refused', `${id}: toolChoice was given but no tools are offered`);
    const choice = request.toolChoice;
    if (typeof choice === 'object' && !offered.has(choice.name)) throw new ModelError('refused', `${id}: toolChoice names ${JSON.stringify(choice.name)}, which is not among the tools offered`);
    body.toolConfig = {
      functionCallingConfig: choice === 'auto' ? { mode: 'AUTO' } : choice === 'required' ? { mode: 'ANY' } : { mode: 'ANY', allowedFunctionNames: [choice.name] },
    };
  }
  const generation: Record<string, unknown> = { maxOutputTokens: request.maxTokens };
  if (request.temperature !== undefined) generation.temperature = request.temperature;
  if (request.responseSchema) {
    generation.responseMimeType = 'application/json';
    generation.responseSchema = geminiSchema(request.responseSchema);
  }
  if (request.reasoningEffort) {
    const budget = GEMINI_THINKING_BUDGET[request.reasoningEffort] as number | undefined;
    if (budget === undefined) throw new ModelError('refused', `${id}: reasoningEffort ${JSON.stringify(request.reasoningEffort)} has no Gemini thinking budget`);
    generation.thinkingConfig = { thinkingBudget: budget, includeThoughts: false };
  }
  body.generationConfig = generation;
  return body;
}

function declarationOf(tool: ToolDeclaration): Record<string, unknown> {
  return { name: tool.name, description: tool.description, parameters: geminiSchema(tool.inputSchema) };
}

function contentsOf(id: string, messages: readonly ModelMessage[]): Record<string, unknown>[] {
  // Ids Gemini gave its calls itself: only those are echoed on the function responses.
  const realIds = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || message.continuation === undefined) continue;
    for (const part of continuationOf(id, message.continuation).turn.parts) {
      const call = isRecord(part) && isRecord(part.functionCall) ? part.functionCall : null;
      if (call && typeof call.id === 'string' && call.id) realIds.add(call.id);
    }
  }
  const contents: Record<string, unknown>[] = [];
  let responses: Record<string, unknown>[] | null = null;
  for (const message of messages) {
    if (message.role === 'tool') {
      const functionResponse: Record<string, unknown> = {
        name: message.name,
        response: message.isError ? { error: message.content } : { content: message.content },
        ...(realIds.has(message.toolCallId) ? { id: message.toolCallId } : {}),
      };
      if (!responses) {
        responses = [];
        contents.push({ role: 'user', parts: responses });
      }
      responses.push({ functionResponse });
      continue;
    }
    responses = null;
    if (message.role !== 'assistant') {
      // System messages went to systemInstruction.
      if (message.role === 'user') contents.push({ role: 'user', parts: [{ text: message.content }] });
      continue;
    }
    if (message.continuation !== undefined) {
      // Verbatim: the model's own turn, thought signatures and all, exactly as it came.
      contents.push({ role: 'model', parts: continuationOf(id, message.continuation).turn.parts });
      continue;
    }
    const parts: Record<string, unknown>[] = [];
    if (message.content) parts.push({ text: message.content });
    for (const call of message.toolCalls ?? []) parts.push({ functionCall: { name: call.name, args: isRecord(call.arguments) ? call.arguments : {} } });
    contents.push({ role: 'model', parts: parts.length ? parts : [{ text: '' }] });
  }
  return contents;
}

/** A continuation this driver produced, or a refusal: another provider's state fails closed. */
function continuationOf(id: string, continuation: unknown): GeminiContinuation {
  if (isContinuationOf(continuation, GEMINI_CONTINUATION) && isRecord(continuation.turn) && Array.isArray(continuation.turn.parts)) {
    return continuation as GeminiContinuation;
  }
  const from = continuationOrigin(continuation);
  throw new ModelError('refused', `${id}: an assistant turn carries a continuation that is not Gemini's${from}; it cannot be sent back to Gemini, nothing was sent`);
}

/** The fields of Gemini's Schema (an OpenAPI 3.0 subset); anything else is refused by the API with a 400. */
const SCHEMA_FIELDS = new Set([
  'type',
  'format',
  'title',
  'description',
  'nullable',
  'enum',
  'maxItems',
  'minItems',
  'properties',
  'required',
  'minProperties',
  'maxProperties',
  'minLength',
  'maxLength',
  'pattern',
  'example',
  'anyOf',
  'propertyOrdering',
  'default',
  'items',
  'minimum',
  'maximum',
]);

/**
 * A JSON Schema cut down to what Gemini's `parameters` / `responseSchema` accept: unknown fields
 * dropped (`$schema`, `additionalProperties`, `$ref`, `$defs`, `const`, `oneOf`, `allOf`, `not`,
 * ...), `type: [T, 'null']` as `type: T, nullable: true`, a string `const` as a one-value enum.
 * Deterministic, so the request still fixes the wire shape; what it loosens is caught by the
 * local validation every structured answer and tool call goes through.
 */
export function geminiSchema(schema: unknown): Record<string, unknown> {
  if (!isRecord(schema)) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_FIELDS.has(key)) continue;
    if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((type) => type !== 'null');
      if (types.length !== value.length) out.nullable = true;
      if (types.length === 1) out.type = types[0];
      else if (types.length > 1) out.anyOf = types.map((type) => ({ type }));
    } else if (key === 'properties' && isRecord(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, geminiSchema(sub)]));
    } else if (key === 'items') {
      out.items = geminiSchema(value);
    } else if (key === 'anyOf' && Array.isArray(value)) {
      out.anyOf = value.map(geminiSchema);
    } else {
      out[key] = value;
    }
  }
  if (typeof schema.const === 'string' && out.enum === undefined) {
    out.enum = [schema.const];
    out.type ??= 'string';
  }
  return out;
}

// ---- errors on the status line ----

/** Google's `{error: {code, message, status}}` as `STATUS: message`; other bodies as providerErrorText reads them. */
function googleErrorText(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    const error = isRecord(parsed) ? parsed.error : Array.isArray(parsed) && isRecord(parsed[0]) ? parsed[0].error : undefined;
    if (isRecord(error) && typeof error.message === 'string') return typeof error.status === 'string' ? `${error.status}: ${error.message}` : error.message;
  } catch {
    // Not JSON.
  }
  return providerErrorText(body);
}

/** The retry window of a google.rpc.RetryInfo detail (`retryDelay: "7s"` or `"0.5s"`), in ms. */
export function retryInfoOf(body: string): number | null {
  try {
    const parsed = JSON.parse(body) as unknown;
    const error = isRecord(parsed) ? parsed.error : undefined;
    const details = isRecord(error) && Array.isArray(error.details) ? error.details : [];
    for (const detail of details) {
      if (!isRecord(detail) || detail['@type'] !== 'type.googleapis.com/google.rpc.RetryInfo') continue;
      const delay = detail.retryDelay;
      if (typeof delay === 'string' && /^\d+(\.\d+)?s$/.test(delay)) return Math.ceil(Number(delay.slice(0, -1)) * 1000);
      if (isRecord(delay) && (isCount(delay.seconds) || typeof delay.seconds === 'string')) {
        return Math.ceil(Number(delay.seconds) * 1000 + (isCount(delay.nanos) ? delay.nanos / 1e6 : 0));
      }
    }
  } catch {
    // Not JSON: no window.
  }
  return null;
}

// ---- a 2xx body ----

async function readStream(settings: CallSettings, body: ResponseBody, state: WireState, redact: Redactor, deadline: Deadline): Promise<void> {
  state.streamed = true;
  const meter = { bytes: 0 };
  try {
    // By the chunk (readSseBatches): the inner loop runs once per streamed token.
    for await (const batch of readSseBatches(body as AsyncIterable<Buffer>, settings.maxResponseBytes, meter)) for (const event of batch) {
      state.bytes = meter.bytes;
      let chunk: unknown;
      try {
        chunk = JSON.parse(event.data);
      } catch {
        throw severedError(settings, state, { what: 'a malformed stream chunk' }, redact);
      }
      if (!isRecord(chunk)) throw severedError(settings, state, { what: 'a stream chunk that is not an object' }, redact);
      if (chunk.error !== undefined && chunk.error !== null) {
        throw severedError(settings, state, { what: 'an error event mid-stream', providerText: googleErrorText(event.data) }, redact);
      }
      takeResponse(state, chunk);
    }
  } catch (error) {
    state.bytes = meter.bytes;
    if (error instanceof ModelError) throw error;
    if (error instanceof ResponseTooLarge) throw oversizedError(settings, state, 'grew');
    throw severedError(settings, state, { what: deadline.describe(error) }, redact);
  } finally {
    if (!body.destroyed) body.destroy();
  }
  if (!state.finishReason && !state.blockReason) throw severedError(settings, state, { what: 'the stream ended without a finishReason' }, redact);
}

async function readDocument(settings: CallSettings, body: ResponseBody, state: WireState, redact: Redactor, deadline: Deadline): Promise<void> {
  const document = await readJsonDocument(settings, body, state, redact, deadline, { meter: state });
  takeResponse(state, document);
  if (!state.finishReason && !state.blockReason) {
    const providerText = document.error !== undefined ? googleErrorText(JSON.stringify(document)) : undefined;
    throw severedError(settings, state, { what: 'an answer without a finished candidate', providerText }, redact);
  }
}

/** One GenerateContentResponse (a whole document, or one partial chunk of a stream). */
function takeResponse(state: WireState, response: Record<string, unknown>): void {
  if (typeof response.modelVersion === 'string' && response.modelVersion) state.model = response.modelVersion;
  if (isRecord(response.usageMetadata)) {
    // Running totals on every chunk: the latest is the bill so far.
    const usage = usageOf(response.usageMetadata);
    if (usage) state.usage = usage;
  }
  const feedback = isRecord(response.promptFeedback) ? response.promptFeedback : null;
  if (feedback && typeof feedback.blockReason === 'string' && feedback.blockReason) state.blockReason = feedback.blockReason;
  const candidate = Array.isArray(response.candidates) ? (response.candidates.find((c) => isRecord(c) && (c.index === undefined || c.index === 0)) as unknown) : undefined;
  if (!isRecord(candidate)) return;
  const content = isRecord(candidate.content) ? candidate.content : null;
  if (content && Array.isArray(content.parts)) {
    for (const part of content.parts) {
      if (!isRecord(part)) continue;
      state.parts.push(part);
      state.began = true;
      // Streamed chunks only (a whole document is its own seal); the same parts `finished` joins.
      if (state.streamed && part.thought !== true) notifyText(state.observer, part.text);
    }
  }
  if (typeof candidate.finishReason === 'string' && candidate.finishReason) {
    state.finishReason = candidate.finishReason;
    state.began = true;
  }
  if (typeof candidate.finishMessage === 'string') state.finishMessage = candidate.finishMessage;
}

const REFUSALS = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY']);

function finished(settings: CallSettings, state: WireState, request: ModelRequest, redact: Redactor): Completion {
  const { id } = settings;
  if (state.blockReason && state.parts.length === 0) {
    // Refused before generation: nothing generated; input billed only as far as the wire said.
    const usage = state.usage ? { ...state.usage, outputTokens: 0, reasoningTokens: 0 } : { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };
    return { text: '', usage, model: state.model, truncated: false, stopReason: 'refusal' };
  }
  if (!state.usage) {
    throw new ModelError('unaccounted', `${id}: HTTP ${state.status} answer reported no usageMetadata; it happened, and is counted as unaccounted rather than free`);
  }
  if (state.finishReason === 'MALFORMED_FUNCTION_CALL') {
    const said = state.finishMessage ? ` (${redact(state.finishMessage)})` : '';
    throw new ModelError('interrupted', `${id}: finishReason MALFORMED_FUNCTION_CALL: the model wrote a function call that did not parse${said}; billed for what the wire said, no usable answer`, state.usage);
  }
  const turn = request.messages.filter((message) => message.role === 'assistant').length;
  const text: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const part of state.parts) {
    if (typeof part.text === 'string' && part.thought !== true) text.push(part.text);
    if (isRecord(part.functionCall) && typeof part.functionCall.name === 'string') {
      const call = part.functionCall;
      const given = typeof call.id === 'string' && call.id ? call.id : null;
      // Gemini often names no id: a synthetic one, stable on replay and distinct across turns.
      toolCalls.push({ id: given ?? `call_${turn}_${toolCalls.length}`, name: call.name as string, arguments: call.args ?? {} });
    }
  }
  const reason = state.finishReason ?? '';
  const stopReason: StopReason = reason === 'STOP' ? (toolCalls.length ? 'tool_calls' : 'end') : reason === 'MAX_TOKENS' ? 'length' : REFUSALS.has(reason) ? 'refusal' : 'other';
  const joined = text.join('');
  const completion: Completion = {
    text: joined,
    usage: state.usage,
    model: state.model,
    truncated: stopReason === 'length' || (stopReason === 'refusal' && joined.length > 0),
    stopReason,
  };
  if (toolCalls.length) completion.toolCalls = toolCalls;
  if (state.parts.length) completion.continuation = { wire: GEMINI_CONTINUATION, turn: { role: 'model', parts: state.parts } } satisfies GeminiContinuation;
  return completion;
}

// ---- the ladder ----

function usageOf(meta: Record<string, unknown>): ModelUsage | null {
  if (!isCount(meta.promptTokenCount)) return null;
  const count = (value: unknown) => (isCount(value) ? value : 0);
  const cached = Math.min(count(meta.cachedContentTokenCount), meta.promptTokenCount);
  const usage: ModelUsage = {
    inputTokens: meta.promptTokenCount - cached + count(meta.toolUsePromptTokenCount),
    outputTokens: count(meta.candidatesTokenCount),
    reasoningTokens: count(meta.thoughtsTokenCount),
  };
  if (cached > 0) usage.cacheReadTokens = cached;
  return usage;
}
