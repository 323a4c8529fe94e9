/**
 * An OpenAI Responses driver (`POST {baseUrl}/responses`), written against OpenAI's own wire with
 * undici (no SDK). Responses rather than Chat Completions because it is OpenAI's current
 * primitive and reports usage (reasoning included) and completeness directly; the
 * OpenAI-compatible chat-completions driver stays for self-hosted servers.
 *
 * What this module must get right is not the JSON but two things the seam depends on:
 *
 * 1. Continuation, verbatim and opaque. `store: false` always: nothing is kept server-side, no
 *    `previous_response_id`, so a run's conversation travels with the run (journaled, replayable)
 *    and is never a provider-held state that replay would have to trust. For reasoning models to
 *    keep their chain of thought across tool calls statelessly, every request asks for
 *    `include: ['reasoning.encrypted_content']`, and the response's output items (reasoning
 *    items with their encrypted_content, function_call items, messages) are returned as the
 *    Completion's `continuation`, exactly as they came, inside the shared Continuation envelope naming this
 *    driver (`{wire: 'openai-responses/1', turn: [...items]}`). The next request sends those items back as they
 *    were: a driver that rebuilt them would have nowhere to keep what it does not understand,
 *    and that is exactly what OpenAI needs returned. A continuation from another wire (or none
 *    of the expected shape) fails closed: refused before dispatch, never guessed at.
 *
 * 2. The failure ladder (model-provider.ts). The Responses stream reports usage only in its
 *    terminal event (`response.completed` / `response.incomplete`, whose `response` carries
 *    `usage`), so the rungs this wire reaches are:
 *      a cut (socket closed, deadline, caller's abort, byte cap, malformed event, a stream that
 *      ends without a terminal event) after generation began  -> `unaccounted` (Landed, never
 *      free); before it -> `unavailable` (DidNotHappen, safe to repeat).
 *    `interrupted` is reachable only where the wire said usage before failing: a
 *    `response.failed` whose response carries usage (OpenAI usually sends null there), or a
 *    terminal answer this driver cannot use (a function call whose arguments are not JSON).
 *    `response.failed` or an `error` event after output -> `unaccounted`; before any output ->
 *    `unavailable`. "Generation began" means an output item was added or any delta arrived
 *    (text, refusal, function-call arguments, reasoning summary): reasoning tokens are billed
 *    even though their text is never shown, so a reasoning summary delta counts.
 *    HTTP: 3xx refused (never followed), 4xx refused (429 with retryAfterMs), 5xx unavailable;
 *    all through wire.ts, shared with the other drivers (a 429 naming its window is first sent
 *    again inside this one call: sendWithRetry).
 *    Non-streaming, the answer is one JSON document (the response object): a body cut after its
 *    first byte is `unaccounted`, before it `unavailable`.
 *
 * Tokens: OpenAI counts cached tokens inside `input_tokens` and reasoning tokens inside
 * `output_tokens`; the seam wants every token billed once, so inputTokens = input_tokens −
 * cached_tokens (cacheReadTokens = cached_tokens) and outputTokens = output_tokens −
 * reasoning_tokens (reasoningTokens = reasoning_tokens).
 *
 * Structured output is native here (`text.format` json_schema, strict): OpenAI's strict mode
 * accepts a subset of JSON Schema and rejects the rest with a 400 that does not say which rule
 * broke, so a schema outside it is refused before dispatch naming the rule; it is not rewritten
 * (the effect key would record one shape while the wire carried another). The answer is still
 * validated locally by the runtime; the provider's enforcement is not trusted blindly.
 *
 * The API key lives in this closure and the Authorization header only: never in the profile, a
 * message or a property of the provider object; text a server echoes back is scrubbed of it.
 * The profile (endpoint, driver version, streaming) is effect identity; the timeout is not.
 *
 * Written from OpenAI's Responses API reference and streaming-event list as known to the
 * author (the reference pages were not reachable from here; third-party typings of the same
 * events were): event names and the response object follow it; unknown events are ignored.
 */
import type { Dispatcher } from 'undici';
import { type Completion, type Continuation, type ModelMessage, type ModelProvider, type ModelRequest, type ModelStreamObserver, type ModelUsage, type StopReason, type ToolCall, ModelError, continuationOrigin, isContinuationOf, notifyText } from '../runtime/model-provider';
import { isRecord } from '../../src-shared/plain-object';
import { ResponseTooLarge, readSseBatches } from '../net/sse';
import {
  type CallSettings,
  type CutCause,
  type Deadline,
  type HttpCall,
  type HttpDriverOptions,
  type Redactor,
  type ResponseBody,
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

export const OPENAI_RESPONSES_DRIVER = 'openai-responses/1';
export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
/** The tag on this driver's continuation: another wire's turn is never sent here. */
export const OPENAI_RESPONSES_CONTINUATION = OPENAI_RESPONSES_DRIVER;
/** The name given to the native structured-output format (OpenAI requires one). */
const SCHEMA_NAME = 'answer';
const WHO = 'openai-responses';

export interface OpenAiResponsesOptions extends HttpDriverOptions {
  /** The provider id, also `profile.provider` (default `openai`). */
  id?: string;
  /** Up to and including the API version (default https://api.openai.com/v1). */
  baseUrl?: string;
  /** Sent only as `Authorization: Bearer …`. */
  apiKey?: string;
}

/** This driver's continuation: the response's output items, verbatim, tagged with the wire. */
export interface OpenAiResponsesContinuation extends Continuation {
  wire: typeof OPENAI_RESPONSES_CONTINUATION;
  turn: Record<string, unknown>[];
}

export function createOpenAiResponsesProvider(options: OpenAiResponsesOptions = {}): ModelProvider {
  return createHttpDriver({ who: WHO, defaultId: 'openai', driver: OPENAI_RESPONSES_DRIVER, defaultBaseUrl: OPENAI_DEFAULT_BASE_URL, wire: 'OpenAI Responses', path: '/responses' }, options, { build, read });
}

/** What the body said so far: the ladder reads it when the call is cut. */
interface WireState {
  status: number;
  streamed: boolean;
  /** Generation provably began: an output item was added or some delta arrived. */
  began: boolean;
  /** Usage the wire reported before a failure (response.failed may carry it). */
  usage: ModelUsage | null;
  /** Output items as each `response.output_item.done` delivered them, by output_index. */
  items: Record<string, unknown>[];
  /** The terminal response object (completed or incomplete). */
  terminal: Record<string, unknown> | null;
  /** Shown each response.output_text.delta (visible text only: never reasoning, arguments or refusals). */
  observer?: ModelStreamObserver;
}

function build({ settings, request, model }: Pick<HttpCall, 'settings' | 'request' | 'model'>): WireRequest {
  return { headers: bearerHeaders(settings), body: JSON.stringify(wireBody(settings.id, request, model, settings.streaming)) };
}

async function read(response: Dispatcher.ResponseData, { settings, redact, deadline, observer }: HttpCall, streamed: boolean): Promise<Completion> {
  const state: WireState = { status: response.statusCode, streamed: false, began: false, usage: null, items: [], terminal: null };
  if (observer) state.observer = observer;
  return streamed ? readStream(settings, response.body, state, redact, deadline) : readDocument(settings, response.body, state, redact, deadline);
}

// ---- the request ----

/** The request body; refuses (before dispatch) what the wire would reject or misread. */
export function wireBody(id: string, request: ModelRequest, model: string, streaming: boolean): Record<string, unknown> {
  const { instructions, input } = inputOf(id, request.messages);
  const tools = request.tools ?? [];
  const choice = request.toolChoice;
  if (choice !== undefined && tools.length === 0) throw new ModelError('refused', `${id}: toolChoice is set but the request offers no tools`);
  if (isRecord(choice) && !tools.some((tool) => tool.name === choice.name)) {
    throw new ModelError('refused', `${id}: toolChoice names ${JSON.stringify(choice.name)}, which is not among the tools offered`);
  }
  if (request.responseSchema) {
    const problem = strictSchemaProblem(request.responseSchema, '$');
    if (problem) throw new ModelError('refused', `${id}: responseSchema is outside OpenAI's strict subset: ${problem}`);
  }
  return {
    model,
    ...(instructions ? { instructions } : {}),
    input,
    max_output_tokens: request.maxTokens,
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(tools.length
      ? {
          // strict: false — a tool's schema is the peer's or MCP server's, not written to
          // OpenAI's strict subset; the runtime validates arguments itself.
          tools: tools.map((tool) => ({ type: 'function', name: tool.name, description: tool.description, parameters: tool.inputSchema, strict: false })),
          tool_choice: choice === undefined ? 'auto' : typeof choice === 'string' ? choice : { type: 'function', name: choice.name },
        }
      : {}),
    ...(request.responseSchema ? { text: { format: { type: 'json_schema', name: SCHEMA_NAME, schema: request.responseSchema, strict: true } } } : {}),
    ...(request.reasoningEffort ? { reasoning: { effort: request.reasoningEffort } } : {}),
    // Nothing kept server-side: the continuation travels with the run (see the header).
    store: false,
    include: ['reasoning.encrypted_content'],
    stream: streaming,
  };
}

/**
 * Messages as Responses input items. Leading system messages become `instructions`; a system
 * message later in the conversation becomes a developer message in place (its position is
 * part of what it says).
 */
function inputOf(id: string, messages: readonly ModelMessage[]): { instructions: string; input: unknown[] } {
  const leading: string[] = [];
  const input: unknown[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        if (input.length === 0) leading.push(message.content);
        else input.push({ type: 'message', role: 'developer', content: [{ type: 'input_text', text: message.content }] });
        break;
      case 'user':
        input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: message.content }] });
        break;
      case 'assistant':
        if (message.continuation !== undefined) {
          input.push(...continuationItems(id, message.continuation));
          break;
        }
        // A turn that did not come from this wire (or from a provider at all): rebuilt from
        // what the seam carries; there is nothing opaque to keep.
        if (message.content) input.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: message.content }] });
        for (const call of message.toolCalls ?? []) {
          input.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: JSON.stringify(call.arguments ?? {}) });
        }
        break;
      case 'tool':
        // The wire has no error flag on a function_call_output: the model is told in words.
        input.push({ type: 'function_call_output', call_id: message.toolCallId, output: message.isError ? `Error: ${message.content}` : message.content });
        break;
    }
  }
  return { instructions: leading.join('\n\n'), input };
}

/** The items of a continuation this wire produced, as they were; anything else fails closed. */
function continuationItems(id: string, continuation: unknown): Record<string, unknown>[] {
  if (isContinuationOf(continuation, OPENAI_RESPONSES_CONTINUATION) && Array.isArray(continuation.turn) && continuation.turn.every(isRecord)) {
    return continuation.turn as Record<string, unknown>[];
  }
  throw new ModelError('refused', `${id}: an assistant turn carries a continuation this wire did not produce${continuationOrigin(continuation)} (another provider's, or damaged); refusing rather than guessing at it`);
}

/**
 * The first rule of OpenAI's strict structured-output subset that `schema` breaks, or null:
 * every object closes with `additionalProperties: false` and lists every property in
 * `required`, and no `default` appears anywhere. Checked through properties, items, anyOf and
 * $defs/definitions.
 */
export function strictSchemaProblem(schema: unknown, path: string): string | null {
  if (!isRecord(schema)) return null;
  if ('default' in schema) return `${path} has a default (strict mode allows none)`;
  const properties = isRecord(schema.properties) ? schema.properties : null;
  if (schema.type === 'object' || properties) {
    if (schema.additionalProperties !== false) return `${path} must set additionalProperties: false`;
    const required = Array.isArray(schema.required) ? schema.required : [];
    for (const key of Object.keys(properties ?? {})) {
      if (!required.includes(key)) return `${path}.${key} must be listed in required (strict mode has no optional properties; use a null union)`;
    }
  }
  const children: [string, unknown][] = [
    ...Object.entries(properties ?? {}).map(([key, value]): [string, unknown] => [`${path}.${key}`, value]),
    ...(schema.items !== undefined ? [[`${path}[]`, schema.items] as [string, unknown]] : []),
    ...(Array.isArray(schema.anyOf) ? schema.anyOf.map((value, i): [string, unknown] => [`${path}.anyOf[${i}]`, value]) : []),
    ...(['$defs', 'definitions'] as const).flatMap((key) => (isRecord(schema[key]) ? Object.entries(schema[key]).map(([name, value]): [string, unknown] => [`${path}.${key}.${name}`, value]) : [])),
  ];
  for (const [where, child] of children) {
    const problem = strictSchemaProblem(child, where);
    if (problem) return problem;
  }
  return null;
}

// ---- a 2xx body ----

async function readStream(settings: CallSettings, body: ResponseBody, state: WireState, redact: Redactor, deadline: Deadline): Promise<Completion> {
  state.streamed = true;
  try {
    // By the chunk (readSseBatches): the inner loop runs once per streamed token.
    read: for await (const batch of readSseBatches(body as AsyncIterable<Buffer>, settings.maxResponseBytes)) for (const event of batch) {
      let data: unknown;
      try {
        data = JSON.parse(event.data);
      } catch {
        throw severedError(settings, state, { what: 'a malformed stream event' }, redact);
      }
      if (!isRecord(data)) throw severedError(settings, state, { what: 'a stream event that is not an object' }, redact);
      const cause = takeEvent(state, typeof data.type === 'string' ? data.type : event.event, data);
      if (cause) throw severedError(settings, state, cause, redact);
      if (state.terminal) break read;
    }
  } catch (error) {
    if (error instanceof ModelError) throw error;
    if (error instanceof ResponseTooLarge) throw oversizedError(settings, state, 'grew');
    throw severedError(settings, state, { what: deadline.describe(error) }, redact);
  } finally {
    if (!body.destroyed) body.destroy();
  }
  if (!state.terminal) throw severedError(settings, state, { what: 'the stream ended without response.completed' }, redact);
  return finished(settings, state, state.terminal, redact);
}

/** Folds one stream event into the state; a failure event comes back as the cause of a cut. */
function takeEvent(state: WireState, type: string, data: Record<string, unknown>): CutCause | null {
  switch (type) {
    case 'response.output_item.added':
      state.began = true;
      return null;
    case 'response.output_item.done':
      state.began = true;
      if (isRecord(data.item)) {
        const index = isCount(data.output_index) ? data.output_index : state.items.length;
        state.items[index] = data.item;
      }
      return null;
    case 'response.output_text.delta':
      // The visible answer, shown live (the terminal response still carries the whole of it).
      notifyText(state.observer, data.delta);
      if (nonEmpty(data.delta)) state.began = true;
      return null;
    case 'response.refusal.delta':
    case 'response.function_call_arguments.delta':
    case 'response.reasoning_summary_text.delta':
    case 'response.reasoning_text.delta':
      // The text is not kept: the terminal response carries the whole output. A delta proves
      // generation began (reasoning too: billed though never shown).
      if (nonEmpty(data.delta)) state.began = true;
      return null;
    case 'response.completed':
    case 'response.incomplete':
      if (!isRecord(data.response)) return { what: `a ${type} event without its response` };
      state.terminal = data.response;
      return null;
    case 'response.failed': {
      const response = isRecord(data.response) ? data.response : {};
      const usage = isRecord(response.usage) ? usageOf(response.usage) : null;
      if (usage) state.usage = usage;
      return { what: 'response.failed', providerText: failureText(response) };
    }
    case 'error':
      return { what: 'an error event', providerText: typeof data.message === 'string' ? data.message : providerErrorText(JSON.stringify(data)) };
    default:
      // response.created / in_progress / queued, content_part.*, *.done, and events this
      // driver does not know: nothing the ladder needs.
      return null;
  }
}

async function readDocument(settings: CallSettings, body: ResponseBody, state: WireState, redact: Redactor, deadline: Deadline): Promise<Completion> {
  const document = await readJsonDocument(settings, body, state, redact, deadline);
  if (document.status === 'completed' || document.status === 'incomplete') return finished(settings, state, document, redact);
  if (isRecord(document.usage)) state.usage = usageOf(document.usage);
  const status = typeof document.status === 'string' ? document.status : 'none';
  throw severedError(settings, state, { what: `a response with status ${status}`, providerText: failureText(document) }, redact);
}

/** A terminal response (completed or incomplete) made a Completion. */
function finished(settings: CallSettings, state: WireState, response: Record<string, unknown>, redact: Redactor): Completion {
  const { id } = settings;
  const usage = isRecord(response.usage) ? usageOf(response.usage) : null;
  if (!usage) {
    throw new ModelError('unaccounted', `${id}: HTTP ${state.status} answer reported no usage; it happened, and is counted as unaccounted rather than free`);
  }
  // The terminal response carries the whole output; a server that left it empty there still
  // delivered each item in its output_item.done event.
  const listed = Array.isArray(response.output) ? response.output.filter(isRecord) : [];
  const output = listed.length > 0 ? listed : state.items.filter(isRecord);

  const text: string[] = [];
  const refusals: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const item of output) {
    if (item.type === 'message' && Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isRecord(part)) continue;
        if (part.type === 'output_text' && typeof part.text === 'string') text.push(part.text);
        if (part.type === 'refusal' && typeof part.refusal === 'string') refusals.push(part.refusal);
      }
    } else if (item.type === 'function_call') {
      const name = typeof item.name === 'string' ? item.name : '';
      const callId = typeof item.call_id === 'string' ? item.call_id : '';
      let args: unknown;
      try {
        args = JSON.parse(typeof item.arguments === 'string' && item.arguments.trim() ? item.arguments : '{}');
      } catch {
        // The model wrote it and was billed for it; the arguments themselves may carry prompt
        // text, so they are not quoted.
        throw new ModelError('interrupted', `${id}: HTTP ${state.status} the model called ${redact(JSON.stringify(name))} (${redact(callId)}) with arguments that are not JSON; billed for the usage the wire reported`, usage);
      }
      if (!name || !callId) throw new ModelError('interrupted', `${id}: HTTP ${state.status} a function call without a name or call_id; billed for the usage the wire reported`, usage);
      toolCalls.push({ id: callId, name, arguments: args });
    }
  }

  const incomplete = response.status === 'incomplete';
  const reason = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined;
  let stopReason: StopReason;
  if (incomplete) stopReason = reason === 'max_output_tokens' ? 'length' : reason === 'content_filter' ? 'refusal' : 'other';
  else if (toolCalls.length > 0) stopReason = 'tool_calls';
  else if (refusals.length > 0 && text.length === 0) stopReason = 'refusal';
  else stopReason = 'end';

  const continuation: OpenAiResponsesContinuation = { wire: OPENAI_RESPONSES_CONTINUATION, turn: output };
  return {
    // A refusal is the model's answer in words; stopReason says it is one.
    text: text.length > 0 ? text.join('') : refusals.join(''),
    usage,
    model: typeof response.model === 'string' && response.model ? response.model : null,
    truncated: incomplete,
    toolCalls,
    stopReason,
    continuation,
  };
}

/** The provider's words for a failed response: `error.message`, else the incomplete reason. */
function failureText(response: Record<string, unknown>): string | undefined {
  if (isRecord(response.error) && typeof response.error.message === 'string') return response.error.message;
  if (isRecord(response.incomplete_details) && typeof response.incomplete_details.reason === 'string') return response.incomplete_details.reason;
  return undefined;
}

// ---- the ladder ----

/** OpenAI's usage, every token counted once (see the header). */
export function usageOf(usage: Record<string, unknown>): ModelUsage | null {
  const input = usage.input_tokens;
  const output = usage.output_tokens;
  if (!isCount(input) || !isCount(output)) return null;
  const inputDetails = isRecord(usage.input_tokens_details) ? usage.input_tokens_details : {};
  const outputDetails = isRecord(usage.output_tokens_details) ? usage.output_tokens_details : {};
  const cached = isCount(inputDetails.cached_tokens) ? Math.min(inputDetails.cached_tokens, input) : 0;
  const reasoning = isCount(outputDetails.reasoning_tokens) ? Math.min(outputDetails.reasoning_tokens, output) : 0;
  return {
    inputTokens: input - cached,
    outputTokens: output - reasoning,
    reasoningTokens: reasoning,
    ...(cached > 0 ? { cacheReadTokens: cached } : {}),
  };
}
