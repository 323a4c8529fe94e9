/**
 * The Anthropic Messages driver: `POST {baseUrl}/v1/messages` with `x-api-key` and
 * `anthropic-version: 2023-06-01`, streamed as server-sent events (default) or one JSON
 * document. No SDK: undici through the shared deadline and bounded reads (wire.ts). Written
 * against Anthropic's published Messages and streaming reference (event flow message_start,
 * content_block_start/delta/stop, message_delta, message_stop, ping, error).
 *
 * Where each failure lands (the ladder of model-provider.ts; docs/GOVERNED-RUNTIME.md, "Model providers"):
 *
 * - no model, a bad maxTokens, a toolChoice naming an undeclared tool, extended thinking with a
 *   forced tool or a temperature (Anthropic rejects both combinations), a continuation that is
 *   not an Anthropic content array: `refused` before dispatch, nothing on the wire.
 * - HTTP 3xx (never followed), 400/401/403/404/413/429: `refused` (429 with retryAfterMs from
 *   Retry-After); 500 and 529 (`overloaded_error`): `unavailable`. The provider's own text is
 *   in the message, trimmed against the prompt and scrubbed of the key. A 429 with a window,
 *   a 529, and an overloaded_error event before the first token are first sent again inside
 *   this one call (rate-limit.ts sendWithRetry: the provider's window, the cap, the deadline).
 * - after the 2xx status line, a cut (socket closed, deadline, caller's abort, an `error`
 *   event such as overloaded_error, malformed data, a stream without message_stop) is
 *   classified by what the wire had already said. Anthropic reports usage AS the answer is
 *   delivered: message_start carries input_tokens (and the cache fields) before the first
 *   content block, message_delta the cumulative output_tokens. So:
 *     usage seen and content generated -> `interrupted`, carrying the usage seen so far (Landed);
 *     content generated, no usage      -> `unaccounted` (only a server that skips message_start);
 *     nothing generated yet            -> `unavailable` (DidNotHappen, safe to repeat).
 *   `interrupted` is the best rung this wire allows, and the driver reaches it: a driver that
 *   ignored message_start's usage would say `unaccounted` for the same cut, and the token
 *   ceiling would read zero during exactly the failure it exists for. The output count carried
 *   is the wire's last word (message_start's small initial output_tokens until a message_delta
 *   arrives): what the provider said, never a guess.
 *   Non-streaming, the usage sits inside the one document: a body cut after its first byte is
 *   `unaccounted`.
 * - a body over maxResponseBytes: `interrupted` with the usage seen, else `unaccounted`.
 *
 * Tokens: Anthropic's input_tokens excludes the cache (cache_read_input_tokens and
 * cache_creation_input_tokens are separate), which is ModelUsage's own convention, so they
 * map one to one. Thinking is billed inside output_tokens and the wire does not split it out,
 * so reasoningTokens stays 0 and the thinking stays in outputTokens: billed once, at the output
 * price, never zero.
 *
 * Continuation: the assistant's content array, verbatim (thinking blocks with their
 * signatures, redacted_thinking, tool_use), is Completion.continuation, tagged with the
 * driver as the shared Continuation `{wire: 'anthropic-messages/1', turn: [...]}` (docs/GOVERNED-RUNTIME.md:
 * provider-tagged opaque state; a missing or wrong-wire state fails closed, before dispatch), and an assistant message carrying
 * one is sent back as exactly that array. Anthropic verifies thinking
 * signatures on the next request; a driver that rebuilt the turn from text and tool calls
 * would drop them. Streaming, the array is reassembled from the deltas (text_delta,
 * thinking_delta, signature_delta, input_json_delta) into the shape the non-streaming
 * document carries.
 *
 * Structured output: this wire has no native JSON-schema mode, so responseSchema becomes one
 * forced tool (the forced-tool schema mode, docs/GOVERNED-RUNTIME.md) whose input_schema is the schema; its input
 * is the answer, returned as JSON text. The caller validates it locally (never trusted). A
 * model that answers without calling it is a loud metered failure, not an empty success.
 *
 * The profile (effect identity) is endpoint, driver version (which fixes anthropic-version
 * and the forced-tool schema mode), streaming mode and default model. Never the key, never
 * the timeout. The key lives in this closure and the x-api-key header only.
 */
import type { Dispatcher } from 'undici';
import {
  type Completion,
  type Continuation,
  type ModelMessage,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamObserver,
  type ModelUsage,
  type StopReason,
  type ToolCall,
  ModelError,
  continuationOrigin,
  isContinuationOf,
  notifyText,
} from '../runtime/model-provider';
import { isRecord } from '../../src-shared/plain-object';
import { ResponseTooLarge, readSseBatches } from '../net/sse';
import {
  type CallSettings,
  type CutCause,
  type HttpCall,
  type HttpDriverOptions,
  type Redactor,
  type WireRequest,
  type Deadline,
  createHttpDriver,
  isCount,
  jsonHeaders,
  oversizedError,
  providerErrorText,
  readJsonDocument,
  severedError,
  statusError,
} from './wire';
import { providerBusy } from './rate-limit';

/** Bump when the request shape changes (anthropic-version, schema mode, block mapping): it is effect identity. */
export const ANTHROPIC_MESSAGES_DRIVER = 'anthropic-messages/1';
export const ANTHROPIC_VERSION = '2023-06-01';
export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
/** The forced tool that carries a structured answer (structured output has no native mode on this wire). */
export const ANSWER_TOOL_NAME = 'structured_answer';
/** reasoningEffort -> thinking.budget_tokens (1024 is Anthropic's minimum budget). */
export const THINKING_BUDGETS = { low: 1024, medium: 4096, high: 16384 } as const;

export interface AnthropicOptions extends HttpDriverOptions {
  /** The provider id, also `profile.provider` (default `anthropic`). */
  id?: string;
  /** Without the API version path (default https://api.anthropic.com); `/v1/messages` is appended. */
  baseUrl?: string;
  /** Sent only as `x-api-key`. Required. */
  apiKey: string;
}

export function createAnthropicProvider(options: AnthropicOptions): ModelProvider {
  return createHttpDriver(
    { who: 'anthropic', defaultId: 'anthropic', driver: ANTHROPIC_MESSAGES_DRIVER, defaultBaseUrl: DEFAULT_ANTHROPIC_BASE_URL, wire: 'Anthropic Messages', path: '/v1/messages', keyVariable: 'AGENTPLANE_ANTHROPIC_API_KEY' },
    options,
    { build, refusal: (response, call) => statusError(call.settings.id, response, call.redact, call.deadline, call.settings.maxResponseBytes, anthropicErrorText), read },
  );
}

/** What the body said so far: the ladder reads it when the call is cut. */
interface WireState {
  status: number;
  streamed: boolean;
  bytes: number;
  /** Generation provably began: a content block started or a delta arrived. */
  began: boolean;
  usage: ModelUsage | null;
  model: string | null;
  stopReason: string | null;
  /** The assistant content array being assembled, by block index. */
  blocks: Record<string, unknown>[];
  /** input_json_delta fragments per tool_use block index. */
  toolJson: Map<number, string>;
  /** The first tool_use block whose assembled JSON did not parse (decided at the end: max_tokens cuts are truncation). */
  brokenTool: string | null;
  /** Indices of tool_use blocks whose JSON did not parse: never offered as calls or as the answer. */
  brokenBlocks: Set<number>;
  done: boolean;
  /** Shown each text_delta as it arrives (visible text only: never thinking, never input_json). */
  observer?: ModelStreamObserver;
}

function build({ settings, request, model }: Pick<HttpCall, 'settings' | 'request' | 'model'>): WireRequest {
  return {
    headers: jsonHeaders(settings, { 'anthropic-version': ANTHROPIC_VERSION, 'x-api-key': settings.apiKey }),
    body: JSON.stringify(wireBody(settings.id, request, model, settings.streaming)),
  };
}

async function read(response: Dispatcher.ResponseData, { settings, request, redact, deadline, observer }: HttpCall, streamed: boolean): Promise<Completion> {
  const state: WireState = { status: response.statusCode, streamed: false, bytes: 0, began: false, usage: null, model: null, stopReason: null, blocks: [], toolJson: new Map(), brokenTool: null, brokenBlocks: new Set(), done: false };
  if (observer) state.observer = observer;
  if (streamed) await readStream(settings, response.body, state, redact, deadline);
  else await readDocument(settings, response.body, state, redact, deadline);
  return finished(settings, state, request, redact);
}

// ---- the request ----

function wireBody(id: string, request: ModelRequest, model: string, streaming: boolean): Record<string, unknown> {
  const system = request.messages.filter((m) => m.role === 'system').map((m) => m.content);
  const tools: Record<string, unknown>[] = (request.tools ?? []).map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.inputSchema }));
  const declared = new Set(tools.map((tool) => tool.name as string));
  let toolChoice: Record<string, unknown> | undefined;
  if (request.responseSchema) {
    if (declared.has(ANSWER_TOOL_NAME)) throw new ModelError('refused', `${id}: a tool named ${ANSWER_TOOL_NAME} collides with the structured-output tool`);
    if (request.toolChoice && request.toolChoice !== 'auto') throw new ModelError('refused', `${id}: responseSchema forces its own tool; it cannot be combined with toolChoice ${JSON.stringify(request.toolChoice)}`);
    tools.push({ name: ANSWER_TOOL_NAME, description: 'Give the final answer as the input of this tool, matching its schema exactly.', input_schema: request.responseSchema });
    // Alone, the answer tool is forced; beside other tools the model must call one of them
    // (`any`), so it can still use the tools and must end by calling the answer tool.
    toolChoice = tools.length === 1 ? { type: 'tool', name: ANSWER_TOOL_NAME } : { type: 'any' };
  } else if (tools.length > 0) {
    const choice = request.toolChoice ?? 'auto';
    if (choice === 'auto') toolChoice = { type: 'auto' };
    else if (choice === 'required') toolChoice = { type: 'any' };
    else {
      if (!declared.has(choice.name)) throw new ModelError('refused', `${id}: toolChoice names ${JSON.stringify(choice.name)}, which is not among the tools offered`);
      toolChoice = { type: 'tool', name: choice.name };
    }
  } else if (request.toolChoice && request.toolChoice !== 'auto') {
    throw new ModelError('refused', `${id}: toolChoice ${JSON.stringify(request.toolChoice)} without any tools offered`);
  }

  let maxTokens = request.maxTokens;
  let thinking: Record<string, unknown> | undefined;
  if (request.reasoningEffort) {
    const budget = THINKING_BUDGETS[request.reasoningEffort];
    if (budget === undefined) throw new ModelError('refused', `${id}: reasoningEffort ${String(request.reasoningEffort)} is not one of low, medium, high`);
    // Anthropic refuses extended thinking with a forced tool choice (only auto/none) and with a
    // changed temperature: refused here, naming the rule, rather than as an opaque 400.
    if (toolChoice && toolChoice.type !== 'auto') throw new ModelError('refused', `${id}: extended thinking (reasoningEffort) cannot be combined with a forced tool choice or structured output on this wire`);
    if (request.temperature !== undefined && request.temperature !== 1) throw new ModelError('refused', `${id}: extended thinking (reasoningEffort) requires the default temperature, got ${request.temperature}`);
    thinking = { type: 'enabled', budget_tokens: budget };
    // max_tokens must exceed the budget; the answer keeps the maxTokens it asked for on top.
    maxTokens = request.maxTokens + budget;
  }

  return {
    model,
    max_tokens: maxTokens,
    ...(system.length ? { system: system.join('\n\n') } : {}),
    messages: wireMessages(id, request.messages),
    ...(request.temperature !== undefined && !thinking ? { temperature: request.temperature } : {}),
    ...(tools.length ? { tools } : {}),
    ...(toolChoice ? { tool_choice: toolChoice } : {}),
    ...(thinking ? { thinking } : {}),
    stream: streaming,
  };
}

interface WireTurn {
  role: 'user' | 'assistant';
  content: string | unknown[];
}

/**
 * The conversation in Anthropic's shape. Consecutive user-side turns (tool results, then
 * perhaps a user message) are merged into one user turn, tool_result blocks first: the API
 * wants every result of a parallel tool_use turn in the next user message.
 */
function wireMessages(id: string, messages: readonly ModelMessage[]): WireTurn[] {
  const turns: WireTurn[] = [];
  const pushUser = (blocks: unknown[], plain?: string) => {
    const last = turns[turns.length - 1];
    if (last && last.role === 'user') {
      const previous = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
      last.content = [...previous, ...blocks];
    } else turns.push({ role: 'user', content: plain ?? blocks });
  };
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        break;
      case 'user':
        pushUser([{ type: 'text', text: message.content }], message.content);
        break;
      case 'tool':
        pushUser([{ type: 'tool_result', tool_use_id: message.toolCallId, content: message.content, is_error: message.isError === true }]);
        break;
      case 'assistant': {
        if (message.continuation !== undefined) {
          // Verbatim and opaque: the provider's own turn goes back exactly as it came.
          turns.push({ role: 'assistant', content: continuationContent(id, message.continuation) });
          break;
        }
        const blocks: unknown[] = [];
        if (message.content) blocks.push({ type: 'text', text: message.content });
        for (const call of message.toolCalls ?? []) blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: call.arguments ?? {} });
        turns.push({ role: 'assistant', content: message.toolCalls?.length ? blocks : message.content });
        break;
      }
    }
  }
  return turns;
}

/** The tag on this driver's continuation: another wire's turn is never sent here. */
export const ANTHROPIC_CONTINUATION = ANTHROPIC_MESSAGES_DRIVER;

/** This driver's continuation: the assistant content array, verbatim, tagged with the driver (see Continuation). */
export interface AnthropicContinuation extends Continuation {
  wire: typeof ANTHROPIC_CONTINUATION;
  turn: Record<string, unknown>[];
}

/** The content of a continuation this driver produced; anything else (another wire's, a bare array) fails closed. */
function continuationContent(id: string, continuation: unknown): Record<string, unknown>[] {
  if (isContinuationOf(continuation, ANTHROPIC_CONTINUATION) && isContentArray(continuation.turn)) return continuation.turn;
  throw new ModelError('refused', `${id}: an assistant continuation that is not an Anthropic turn${continuationOrigin(continuation)} cannot be sent back; refused rather than dropped or guessed`);
}

function isContentArray(value: unknown): value is Record<string, unknown>[] {
  return Array.isArray(value) && value.every((block) => isRecord(block) && typeof block.type === 'string');
}

/** Anthropic's error shape is {type:'error', error:{type, message}}: both words, e.g. `overloaded_error: Overloaded`. */
function anthropicErrorText(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (isRecord(parsed) && isRecord(parsed.error) && typeof parsed.error.type === 'string' && typeof parsed.error.message === 'string') {
      return `${parsed.error.type}: ${parsed.error.message}`;
    }
  } catch {
    // Not JSON: the generic reading below.
  }
  return providerErrorText(body);
}

// ---- a 2xx body ----

async function readStream(settings: CallSettings, body: Dispatcher.ResponseData['body'], state: WireState, redact: Redactor, deadline: Deadline): Promise<void> {
  state.streamed = true;
  try {
    // By the chunk (readSseBatches): this loop runs once per streamed token.
    read: for await (const batch of readSseBatches(body as AsyncIterable<Buffer>, settings.maxResponseBytes, state)) {
      for (const { data } of batch) {
        takeData(settings, state, data, redact);
        if (state.done) break read;
      }
    }
  } catch (error) {
    if (error instanceof ModelError) throw error;
    if (error instanceof ResponseTooLarge) throw oversizedError(settings, state, 'grew');
    throw severedError(settings, state, { what: deadline.describe(error) }, redact, USAGE_BEFORE_OUTPUT);
  } finally {
    if (!body.destroyed) body.destroy();
  }
  if (!state.done) throw severedError(settings, state, { what: 'the stream ended without message_stop' }, redact, USAGE_BEFORE_OUTPUT);
}

/** One `data:` payload of the stream, parsed and folded into the state; a cut throws its rung. */
function takeData(settings: CallSettings, state: WireState, data: string, redact: Redactor): void {
  let event: unknown;
  try {
    event = JSON.parse(data);
  } catch {
    throw severedError(settings, state, { what: 'a malformed stream event' }, redact, USAGE_BEFORE_OUTPUT);
  }
  if (!isRecord(event)) throw severedError(settings, state, { what: 'a stream event that is not an object' }, redact, USAGE_BEFORE_OUTPUT);
  const cause = takeEvent(state, event);
  if (cause) {
    const error = severedError(settings, state, cause, redact, USAGE_BEFORE_OUTPUT);
    // Overloaded before the first token is a refusal like a 529: nothing generated, sent again after a backoff.
    throw !state.began && isOverload(event) ? providerBusy(error, 'overloaded') : error;
  }
}

/** An `error` event saying the provider is overloaded (Anthropic's overloaded_error, the SSE form of a 529). */
function isOverload(event: Record<string, unknown>): boolean {
  return event.type === 'error' && isRecord(event.error) && event.error.type === 'overloaded_error';
}

/** One event of the Messages stream; a returned cause cuts the call. Unknown events are ignored (the API may add some). */
function takeEvent(state: WireState, event: Record<string, unknown>): CutCause | null {
  switch (event.type) {
    case 'message_start': {
      const message = isRecord(event.message) ? event.message : {};
      if (typeof message.model === 'string' && message.model) state.model = message.model;
      if (isRecord(message.usage)) takeUsage(state, message.usage);
      return null;
    }
    case 'content_block_start': {
      const index = event.index;
      if (!isCount(index) || !isRecord(event.content_block)) return { what: 'a content_block_start without an index or block' };
      state.blocks[index] = { ...event.content_block };
      state.began = true;
      // A text block may open with text of its own (usually ''): it is part of the answer too.
      if (event.content_block.type === 'text') notifyText(state.observer, event.content_block.text);
      return null;
    }
    case 'content_block_delta': {
      const index = event.index;
      const block = isCount(index) ? state.blocks[index] : undefined;
      if (!block || !isRecord(event.delta)) return { what: 'a content_block_delta for a block that never started' };
      state.began = true;
      applyDelta(state, index as number, block, event.delta);
      return null;
    }
    case 'content_block_stop': {
      const index = event.index;
      const block = isCount(index) ? state.blocks[index] : undefined;
      if (!block) return { what: 'a content_block_stop for a block that never started' };
      if (block.type === 'tool_use' || block.type === 'server_tool_use') {
        const json = state.toolJson.get(index as number);
        // No input_json_delta at all: the start's `input` ({} for a tool without arguments) stands.
        if (json !== undefined && json !== '') {
          try {
            block.input = JSON.parse(json) as unknown;
          } catch {
            state.brokenTool ??= String(block.name);
            state.brokenBlocks.add(index as number);
          }
        }
        state.toolJson.delete(index as number);
      }
      return null;
    }
    case 'message_delta': {
      const delta = isRecord(event.delta) ? event.delta : {};
      if (typeof delta.stop_reason === 'string') state.stopReason = delta.stop_reason;
      if (isRecord(event.usage)) takeUsage(state, event.usage);
      return null;
    }
    case 'message_stop':
      state.done = true;
      return null;
    case 'error': {
      const error = isRecord(event.error) ? event.error : {};
      const type = typeof error.type === 'string' ? error.type : 'error';
      return { what: `an ${type} event mid-stream`, providerText: typeof error.message === 'string' ? `${type}: ${error.message}` : type };
    }
    default:
      // ping, and event types added after this driver was written.
      return null;
  }
}

/**
 * Appends a delta's text to a block's field. At module level, not a closure made per delta: this
 * runs once per streamed token, and a closure per call (wrapped again by builds that keep
 * function names) cost as much as the rest of the delta's handling (bench/providers.bench.ts).
 */
function appendTo(block: Record<string, unknown>, field: string, value: unknown): void {
  if (typeof value === 'string') block[field] = (typeof block[field] === 'string' ? block[field] : '') + value;
}

function applyDelta(state: WireState, index: number, block: Record<string, unknown>, delta: Record<string, unknown>): void {
  switch (delta.type) {
    case 'text_delta':
      appendTo(block, 'text', delta.text);
      notifyText(state.observer, delta.text);
      break;
    case 'thinking_delta':
      appendTo(block, 'thinking', delta.thinking);
      break;
    case 'signature_delta':
      appendTo(block, 'signature', delta.signature);
      break;
    case 'input_json_delta':
      if (typeof delta.partial_json === 'string') state.toolJson.set(index, (state.toolJson.get(index) ?? '') + delta.partial_json);
      break;
    case 'citations_delta':
      if (delta.citation !== undefined) block.citations = [...(Array.isArray(block.citations) ? (block.citations as unknown[]) : []), delta.citation];
      break;
    default:
      // A delta kind this driver does not know: the block keeps what it had.
      break;
  }
}

/**
 * message_start's usage, then message_delta's (cumulative: each replaces, never adds). A
 * message_delta that repeats input or cache counts updates them too.
 */
function takeUsage(state: WireState, usage: Record<string, unknown>): void {
  const previous = state.usage;
  const input = isCount(usage.input_tokens) ? usage.input_tokens : previous?.inputTokens;
  const output = isCount(usage.output_tokens) ? usage.output_tokens : previous?.outputTokens;
  if (input === undefined || output === undefined) return;
  const cacheRead = isCount(usage.cache_read_input_tokens) ? usage.cache_read_input_tokens : previous?.cacheReadTokens;
  const cacheWrite = isCount(usage.cache_creation_input_tokens) ? usage.cache_creation_input_tokens : previous?.cacheWriteTokens;
  state.usage = {
    inputTokens: input,
    // Thinking is billed inside output_tokens and not reported apart: it stays here.
    outputTokens: output,
    reasoningTokens: 0,
    ...(cacheRead !== undefined ? { cacheReadTokens: cacheRead } : {}),
    ...(cacheWrite !== undefined ? { cacheWriteTokens: cacheWrite } : {}),
  };
}

async function readDocument(settings: CallSettings, body: Dispatcher.ResponseData['body'], state: WireState, redact: Redactor, deadline: Deadline): Promise<void> {
  const document = await readJsonDocument(settings, body, state, redact, deadline, { meter: state, usageNeedsOutput: USAGE_BEFORE_OUTPUT });
  if (isRecord(document.usage)) takeUsage(state, document.usage);
  if (typeof document.model === 'string' && document.model) state.model = document.model;
  if (!isContentArray(document.content)) {
    const providerText = document.error !== undefined ? anthropicErrorText(JSON.stringify(document)) : undefined;
    throw severedError(settings, state, { what: 'an answer without a content array', providerText }, redact, USAGE_BEFORE_OUTPUT);
  }
  state.blocks = document.content.map((block) => ({ ...block }));
  if (typeof document.stop_reason === 'string') state.stopReason = document.stop_reason;
  state.done = true;
}

// ---- the answer ----

const STOP_REASONS: Record<string, StopReason> = {
  end_turn: 'end',
  stop_sequence: 'end',
  tool_use: 'tool_calls',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  refusal: 'refusal',
};

function finished(settings: CallSettings, state: WireState, request: ModelRequest, redact: Redactor): Completion {
  if (!state.usage) {
    throw new ModelError('unaccounted', `${settings.id}: HTTP ${state.status} answer reported no usage; it happened, and is counted as unaccounted rather than free`);
  }
  const stopReason = state.stopReason ? (STOP_REASONS[state.stopReason] ?? 'other') : 'other';
  const truncated = stopReason === 'length';
  // A tool's JSON cut by max_tokens is truncation (readable, not whole); anywhere else it is a broken answer.
  if (state.brokenTool !== null && !truncated) {
    throw severedError(settings, state, { what: `malformed JSON arguments for tool ${JSON.stringify(state.brokenTool)}` }, redact, USAGE_BEFORE_OUTPUT);
  }
  const blocks = state.blocks.filter((block): block is Record<string, unknown> => isRecord(block));
  const text: string[] = [];
  const toolCalls: ToolCall[] = [];
  let answer: unknown;
  let answered = false;
  for (const [index, block] of state.blocks.entries()) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') text.push(block.text);
    else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string' && !state.brokenBlocks.has(index)) {
      if (request.responseSchema && block.name === ANSWER_TOOL_NAME) {
        answer = block.input;
        answered = true;
      } else toolCalls.push({ id: block.id, name: block.name, arguments: block.input ?? {} });
    }
  }
  const completion: Completion = {
    text: text.join(''),
    usage: state.usage,
    model: state.model,
    truncated,
    toolCalls,
    stopReason,
    // The assistant turn exactly as the provider gave it (see the module comment).
    continuation: { wire: ANTHROPIC_CONTINUATION, turn: blocks } satisfies AnthropicContinuation,
  };
  if (!request.responseSchema) return completion;
  if (answered) return { ...completion, text: JSON.stringify(answer), toolCalls: [], stopReason: truncated ? 'length' : 'end' };
  // The model used another tool first (allowed beside tools): the loop goes on.
  if (toolCalls.length > 0 || truncated || stopReason === 'refusal') return completion;
  throw new ModelError('interrupted', `${settings.id}: the model answered without calling the ${ANSWER_TOOL_NAME} tool that carries the structured answer; billed, unusable`, state.usage);
}

// ---- the ladder ----

/** message_start reports usage before the first token: usage alone is not proof of generation. */
const USAGE_BEFORE_OUTPUT = true;

