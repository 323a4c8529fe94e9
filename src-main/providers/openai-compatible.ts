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
 *   become retryAfterMs (rate limits are the one case where the provider names the window).
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
import { type Dispatcher, Agent, request as httpRequest } from 'undici';
import { type Completion, type ModelProvider, type ModelRequest, type ModelUsage, type Pricing, type ProviderProfile, ModelError, trimProviderError } from '../runtime/model-provider';

export const OPENAI_CHAT_COMPLETIONS_DRIVER = 'openai-chat-completions/1';
export const DEFAULT_TIMEOUT_MS = 300_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** An error body is read only this far: it is going to be trimmed to 200 characters anyway. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export interface OpenAiCompatibleOptions {
  /** The provider id, also `profile.provider` (e.g. `ollama`). */
  id: string;
  /** Up to and including the API version, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl: string;
  /** Sent only as `Authorization: Bearer …`. Omit for servers that need none. */
  apiKey?: string;
  /** Used when a request names no model (`request.model` empty). */
  model?: string;
  /** Default zero: a local server costs nothing per token. */
  pricing?: Pricing;
  /** Stream the answer (default true: the stream is what lets a cut call carry its bill). */
  stream?: boolean;
  /** Whole-request deadline across connect, generation and stream (default 5 minutes). */
  timeoutMs?: number;
  /** Cap on the response body (default 8 MiB). */
  maxResponseBytes?: number;
  /** Shown to people; defaults to naming the server. */
  label?: string;
  /** Where the outbound guard (netguard) plugs in; default a private undici Agent. */
  dispatcher?: Dispatcher;
}

export function createOpenAiCompatibleProvider(options: OpenAiCompatibleOptions): ModelProvider {
  const id = options.id;
  const baseUrl = normalisedBaseUrl(options.baseUrl);
  const streaming = options.stream ?? true;
  const timeoutMs = positive(options.timeoutMs, DEFAULT_TIMEOUT_MS, 'timeoutMs');
  const maxResponseBytes = positive(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes');
  const apiKey = options.apiKey ?? '';
  const profile: ProviderProfile = {
    provider: id,
    driver: OPENAI_CHAT_COMPLETIONS_DRIVER,
    endpoint: baseUrl,
    streaming,
    label: options.label ?? `OpenAI-compatible server at ${baseUrl}`,
    ...(options.model ? { defaultModel: options.model } : {}),
  };
  let dispatcher = options.dispatcher;
  const settings: CallSettings = {
    id,
    url: `${baseUrl}/chat/completions`,
    streaming,
    timeoutMs,
    maxResponseBytes,
    defaultModel: options.model ?? '',
    apiKey,
    // Created on first use: an idle Agent holds no sockets, and an unused provider costs nothing.
    dispatcher: () => (dispatcher ??= new Agent({ headersTimeout: timeoutMs, bodyTimeout: timeoutMs })),
  };
  return {
    id,
    profile,
    pricing: options.pricing ?? { inputPerMTokMicros: 0, outputPerMTokMicros: 0 },
    complete: (request, signal) => complete(settings, request, signal),
  };
}

interface CallSettings {
  id: string;
  url: string;
  streaming: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
  defaultModel: string;
  apiKey: string;
  dispatcher: () => Dispatcher;
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
  done: boolean;
}

/** Why a call stopped early, for the message; the rung comes from the WireState. */
type CutCause = { what: string; providerText?: string };

async function complete(settings: CallSettings, request: ModelRequest, callerSignal: AbortSignal | undefined): Promise<Completion> {
  const { id } = settings;
  const model = request.model || settings.defaultModel;
  if (!model) throw new ModelError('refused', `${id}: the request names no model and the provider has no default`);
  if (!Number.isInteger(request.maxTokens) || request.maxTokens < 1) {
    throw new ModelError('refused', `${id}: maxTokens must be a positive integer, got ${String(request.maxTokens)}`);
  }
  if (callerSignal?.aborted) throw new ModelError('unavailable', `${id}: cancelled by the caller before dispatch`);

  const redact = redactorFor(request, settings.apiKey);
  const deadline = new Deadline(settings.timeoutMs, callerSignal);
  try {
    let response: Dispatcher.ResponseData;
    try {
      response = await httpRequest(settings.url, {
        method: 'POST',
        headers: requestHeaders(settings),
        body: JSON.stringify(wireBody(request, model, settings.streaming)),
        signal: deadline.signal,
        dispatcher: settings.dispatcher(),
        headersTimeout: settings.timeoutMs,
        bodyTimeout: settings.timeoutMs,
      });
    } catch (error) {
      throw new ModelError('unavailable', `${id}: no response (${redact(deadline.describe(error))}); nothing was generated that the wire can show, safe to repeat`);
    }

    const status = response.statusCode;
    if (status < 200 || status >= 300) throw await statusError(settings, response, redact, deadline);

    const state: WireState = { status, streamed: false, bytes: 0, began: false, usage: null, model: null, finishReason: null, text: [], done: false };
    const contentType = headerValue(response.headers['content-type']) ?? '';
    const declared = Number(headerValue(response.headers['content-length']) ?? NaN);
    if (Number.isFinite(declared) && declared > settings.maxResponseBytes) {
      response.body.destroy();
      throw oversized(settings, state, `declares ${declared} bytes,`);
    }
    // A server asked to stream may answer with one JSON document; read what it sent.
    const completion = settings.streaming && contentType.includes('text/event-stream')
      ? await readStream(settings, response.body, state, redact, deadline)
      : await readDocument(settings, response.body, state, redact, deadline);
    return completion;
  } finally {
    deadline.dispose();
  }
}

function wireBody(request: ModelRequest, model: string, streaming: boolean): Record<string, unknown> {
  return {
    model,
    messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
    max_tokens: request.maxTokens,
    temperature: request.temperature,
    stream: streaming,
    ...(streaming ? { stream_options: { include_usage: true } } : {}),
  };
}

function requestHeaders(settings: CallSettings): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: settings.streaming ? 'text/event-stream, application/json' : 'application/json',
    ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}),
  };
}

// ---- the status line ----

async function statusError(settings: CallSettings, response: Dispatcher.ResponseData, redact: Redactor, deadline: Deadline): Promise<ModelError> {
  const status = response.statusCode;
  const { id } = settings;
  if (status >= 300 && status < 400) {
    await response.body.dump().catch(() => undefined);
    return new ModelError('refused', `${id}: HTTP ${status} redirect not followed (a model endpoint must be named where it is); nothing was sent on`);
  }
  const body = await readErrorBody(response.body, Math.min(MAX_ERROR_BODY_BYTES, settings.maxResponseBytes), deadline);
  const detail = body ? `: ${redact(providerErrorText(body))}` : '';
  const retryAfterMs = retryAfterOf(response.headers);
  if (status >= 500) return new ModelError('unavailable', `${id}: HTTP ${status} from the provider${detail}`, null, retryAfterMs);
  if (status >= 400) return new ModelError('refused', `${id}: HTTP ${status}, refused before generation${detail}`, null, retryAfterMs);
  return new ModelError('refused', `${id}: HTTP ${status} is not an answer${detail}`);
}

async function readErrorBody(body: Dispatcher.ResponseData['body'], limit: number, deadline: Deadline): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      bytes += chunk.length;
      if (bytes >= limit || deadline.signal.aborted) break;
    }
  } catch {
    // An error body cut short is still worth what arrived: the status already decided the kind.
  }
  if (!body.destroyed) body.destroy();
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/** The provider's own words: `error.message` (OpenAI, Ollama), `message` (vLLM), `detail`, or the raw text. */
function providerErrorText(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (isRecord(parsed)) {
      const error = parsed.error;
      if (isRecord(error) && typeof error.message === 'string') return error.message;
      if (typeof error === 'string') return error;
      if (typeof parsed.message === 'string') return parsed.message;
      if (typeof parsed.detail === 'string') return parsed.detail;
    }
  } catch {
    // Not JSON: the text itself, trimmed by the caller.
  }
  return body;
}

/** `retry-after-ms` (OpenAI's own) wins over `Retry-After` (delta-seconds or an HTTP-date). */
export function retryAfterOf(headers: Record<string, string | string[] | undefined>): number | null {
  const ms = headerValue(headers['retry-after-ms']);
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headerValue(headers['retry-after'])?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

// ---- a 2xx body ----

async function readStream(settings: CallSettings, body: Dispatcher.ResponseData['body'], state: WireState, redact: Redactor, deadline: Deadline): Promise<Completion> {
  state.streamed = true;
  const decoder = new TextDecoder('utf-8');
  const events = new SseEvents();
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
    for await (const piece of body as AsyncIterable<Buffer>) {
      state.bytes += piece.length;
      if (state.bytes > settings.maxResponseBytes) throw oversized(settings, state, 'grew');
      for (const data of events.push(decoder.decode(piece, { stream: true }))) {
        const cause = take(data);
        if (cause) throw severed(settings, state, cause, redact);
        if (state.done) break;
      }
      if (state.done) break;
    }
    if (!state.done) {
      for (const data of events.end(decoder.decode())) {
        const cause = take(data);
        if (cause) throw severed(settings, state, cause, redact);
        if (state.done) break;
      }
    }
  } catch (error) {
    if (error instanceof ModelError) throw error;
    throw severed(settings, state, { what: deadline.describe(error) }, redact);
  } finally {
    if (!body.destroyed) body.destroy();
  }
  if (!state.done) throw severed(settings, state, { what: 'the stream ended without [DONE]' }, redact);
  return finished(settings, state);
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
  }
  // Servers that stream reasoning text (vLLM, llama.cpp, DeepSeek: `reasoning_content`;
  // Ollama, OpenRouter: `reasoning`) prove generation began even before visible content.
  if (nonEmpty(delta.reasoning_content) || nonEmpty(delta.reasoning) || (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0)) state.began = true;
  if (typeof choice.finish_reason === 'string' && choice.finish_reason) {
    state.finishReason = choice.finish_reason;
    state.began = true;
  }
}

async function readDocument(settings: CallSettings, body: Dispatcher.ResponseData['body'], state: WireState, redact: Redactor, deadline: Deadline): Promise<Completion> {
  const chunks: Buffer[] = [];
  try {
    for await (const piece of body as AsyncIterable<Buffer>) {
      state.bytes += piece.length;
      // One JSON document: its first byte is the first sign the server produced an answer.
      state.began = true;
      if (state.bytes > settings.maxResponseBytes) throw oversized(settings, state, 'grew');
      chunks.push(piece);
    }
  } catch (error) {
    if (error instanceof ModelError) throw error;
    throw severed(settings, state, { what: deadline.describe(error) }, redact);
  } finally {
    if (!body.destroyed) body.destroy();
  }
  if (state.bytes === 0) throw severed(settings, state, { what: 'an empty body' }, redact);
  let document: unknown;
  try {
    document = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw severed(settings, state, { what: 'a body that is not JSON' }, redact);
  }
  if (!isRecord(document)) throw severed(settings, state, { what: 'a JSON body that is not an object' }, redact);
  if (isRecord(document.usage)) state.usage = usageOf(document.usage);
  if (typeof document.model === 'string' && document.model) state.model = document.model;
  const choice = firstChoice(document.choices);
  const message = choice && isRecord(choice.message) ? choice.message : null;
  if (!choice || !message) {
    const providerText = document.error !== undefined ? providerErrorText(JSON.stringify(document)) : undefined;
    throw severed(settings, state, { what: 'an answer without a choice', providerText }, redact);
  }
  if (typeof message.content === 'string') state.text.push(message.content);
  if (typeof choice.finish_reason === 'string') state.finishReason = choice.finish_reason;
  return finished(settings, state);
}

function finished(settings: CallSettings, state: WireState): Completion {
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
  };
}

// ---- the ladder ----

/** A call cut after the 2xx status line: the rung is what the wire had said by then. */
function severed(settings: CallSettings, state: WireState, cause: CutCause, redact: Redactor): ModelError {
  const detail = cause.providerText ? `: ${redact(cause.providerText)}` : '';
  const what = `${settings.id}: HTTP ${state.status} ${state.streamed ? 'stream' : 'response'} cut (${redact(cause.what)})`;
  if (state.usage) return new ModelError('interrupted', `${what} after usage was reported${detail}; billed for what the wire said`, state.usage);
  if (state.began) return new ModelError('unaccounted', `${what} after generation began, before any usage${detail}; it happened, the bill is unknown`);
  return new ModelError('unavailable', `${what} before any output${detail}; safe to repeat`);
}

function oversized(settings: CallSettings, state: WireState, what: string): ModelError {
  const message = `${settings.id}: HTTP ${state.status} response ${what} over the ${settings.maxResponseBytes}-byte cap; not read further`;
  if (state.usage) return new ModelError('interrupted', `${message}; billed for the usage already reported`, state.usage);
  return new ModelError('unaccounted', `${message}; it happened, the bill is unknown`);
}

function usageOf(usage: Record<string, unknown>): ModelUsage | null {
  const prompt = usage.prompt_tokens;
  const completion = usage.completion_tokens;
  if (!isCount(prompt) || !isCount(completion)) return null;
  const details = isRecord(usage.completion_tokens_details) ? usage.completion_tokens_details : {};
  const reasoning = isCount(details.reasoning_tokens) ? Math.min(details.reasoning_tokens, completion) : 0;
  return { inputTokens: prompt, outputTokens: completion - reasoning, reasoningTokens: reasoning };
}

// ---- deadline and cancellation ----

/** The whole-request deadline combined with the caller's signal; says which one fired. */
class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  private fired: 'deadline' | 'caller' | null = null;
  private readonly onCallerAbort = () => this.fire('caller');

  constructor(
    private readonly timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => this.fire('deadline'), timeoutMs);
    callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** A transport failure in words: the deadline or the caller if either fired, else the error's code. */
  describe(error: unknown): string {
    if (this.fired === 'deadline') return `timed out after ${this.timeoutMs} ms`;
    if (this.fired === 'caller') return 'cancelled by the caller';
    return transportFailure(error);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private fire(why: 'deadline' | 'caller'): void {
    this.fired ??= why;
    this.controller.abort();
  }
}

function transportFailure(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown transport error';
  const code = (error as { code?: unknown }).code;
  const cause = (error as { cause?: unknown }).cause;
  const causeCode = cause instanceof Error ? (cause as { code?: unknown }).code : undefined;
  const named = [code, causeCode].filter((part): part is string => typeof part === 'string');
  return [...new Set(named), error.message].filter(Boolean).join(' ');
}

// ---- secrets out of messages ----

type Redactor = (text: string) => string;

/** Trims provider text against the prompt and scrubs the API key, whole or any 8-character slice of it. */
function redactorFor(request: ModelRequest, apiKey: string): Redactor {
  const prompt = request.messages.map((message) => message.content);
  return (text) => trimProviderError(scrubSecret(text, apiKey), prompt);
}

function scrubSecret(text: string, secret: string): string {
  if (!secret) return text;
  let out = text.split(secret).join('[key]');
  const window = Math.min(8, secret.length);
  for (let i = 0; i + window <= secret.length; i++) out = out.split(secret.slice(i, i + window)).join('[key]');
  return out;
}

// ---- small parts ----

/** Server-sent events: `data:` lines gathered until a blank line; comments and other fields ignored. */
class SseEvents {
  private buffer = '';
  private data: string[] = [];

  push(text: string): string[] {
    this.buffer += text;
    const out: string[] = [];
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, '');
      this.buffer = this.buffer.slice(newline + 1);
      this.line(line, out);
    }
    return out;
  }

  /** At a clean end of stream: a last event that lacked its blank line still counts. */
  end(text: string): string[] {
    const out = this.push(text);
    if (this.buffer) this.line(this.buffer.replace(/\r$/, ''), out);
    this.buffer = '';
    if (this.data.length) out.push(this.data.join('\n'));
    this.data = [];
    return out;
  }

  private line(line: string, out: string[]): void {
    if (line === '') {
      if (this.data.length) out.push(this.data.join('\n'));
      this.data = [];
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data') return;
    const value = colon < 0 ? '' : line.slice(colon + 1);
    this.data.push(value.startsWith(' ') ? value.slice(1) : value);
  }
}

function normalisedBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError('openai-compatible: baseUrl is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`openai-compatible: baseUrl must be http or https, not ${url.protocol}`);
  // The endpoint enters the profile, hence the journal: it must not be able to carry a secret.
  if (url.username || url.password) throw new TypeError('openai-compatible: baseUrl must not carry credentials (use apiKey)');
  if (url.search || url.hash) throw new TypeError('openai-compatible: baseUrl must not carry a query or fragment');
  return url.href.replace(/\/+$/, '');
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`openai-compatible: ${name} must be a positive number`);
  return value;
}

function firstChoice(choices: unknown): Record<string, unknown> | null {
  if (!Array.isArray(choices)) return null;
  const first = choices.find((choice) => isRecord(choice) && (choice.index === undefined || choice.index === 0)) as unknown;
  return isRecord(first) ? first : null;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function nonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}
