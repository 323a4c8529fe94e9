/**
 * What every HTTP model driver needs besides its own JSON: the whole-request deadline, the
 * undici request with redirects refused, bounded reads (error bodies and one JSON document;
 * server-sent events are net/sse.ts's), the status line mapped onto the failure ladder, and
 * secrets kept out of every message. The rate-limit retries are rate-limit.ts's.
 *
 * Extracted from the Chat Completions driver (openai-compatible.ts) so that the Anthropic,
 * OpenAI Responses and Gemini drivers share one implementation of the parts that decide
 * whether a request may be sent again and whether a message may reach a log. The rules and
 * their reasons are in model-provider.ts (the ladder) and docs/GOVERNED-RUNTIME.md ("Model providers"):
 *
 * - one deadline covers connect, generation and the whole stream: a model that stalls after
 *   its first byte is as stuck as one that never answers;
 * - redirects are never followed: a model endpoint that moves is misconfigured, and following
 *   it would send the prompt and the key somewhere nobody declared;
 * - every body is read bounded: an error body only as far as it is useful (it is trimmed to
 *   200 characters anyway), a 2xx body up to the provider's maxResponseBytes;
 * - provider text is trimmed against the prompt (providers echo it) and scrubbed of the key
 *   (some echo that too, and not only as written: key-scrub.ts) before it enters a message.
 *
 * Nothing here knows a provider's answer shape; the drivers classify a cut stream themselves
 * from what their wire had said (usage seen, content generated, nothing yet).
 */
import type { Dispatcher } from 'undici';
import { isRecord } from '../../src-shared/plain-object';
import type { ByteMeter } from '../net/sse';
import { undici } from '../net/undici';
import {
  type Completion,
  type ModelProvider,
  type ModelRequest,
  type ModelStreamObserver,
  type ModelUsage,
  type Pricing,
  type ProviderProfile,
  ModelError,
  trimProviderError,
} from '../runtime/model-provider';
import { keyScrubber } from './key-scrub';
import { DEFAULT_MAX_RETRY_WAIT_MS, DEFAULT_RATE_LIMIT_RETRIES, MAX_RATE_LIMIT_RETRIES, type RateLimitOptions, providerBusy, sendWithRetry } from './rate-limit';

/** Default whole-request deadline (5 minutes): long answers stream for minutes. */
export const DEFAULT_TIMEOUT_MS = 300_000;
/** Default cap on a 2xx response body (8 MiB). */
export const DEFAULT_MAX_RESPONSE_BYTES = 8 * 1024 * 1024;
/** An error body is read only this far: it is going to be trimmed to 200 characters anyway. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

export type ResponseBody = Dispatcher.ResponseData['body'];
export type Headers = Record<string, string | string[] | undefined>;

// ---- deadline and cancellation ----

/** The whole-request deadline combined with the caller's signal; says which one fired. */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: ReturnType<typeof setTimeout>;
  private fired: 'deadline' | 'caller' | null = null;
  private readonly onCallerAbort = () => this.fire('caller');
  /** When the deadline fires (epoch ms): a rate-limit wait may not reach past it. */
  readonly endsAt: number;

  constructor(
    private readonly timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    // undici is loaded first (net/undici.ts: on the first request): loading it is the plane's
    // own cost, and must not eat into the time the far side is given.
    undici();
    this.endsAt = Date.now() + timeoutMs;
    this.timer = setTimeout(() => this.fire('deadline'), timeoutMs);
    callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  /** What is left of the whole-request deadline, in ms (0 once it has passed). */
  remainingMs(): number {
    return Math.max(0, this.endsAt - Date.now());
  }

  /** Aborts when the deadline passes or the caller cancels, whichever first. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** A transport failure in words: the deadline or the caller if either fired, else the error's code. */
  describe(error: unknown): string {
    if (this.fired === 'deadline') return `timed out after ${this.timeoutMs} ms`;
    if (this.fired === 'caller') return 'cancelled by the caller';
    return transportFailure(error);
  }

  /** Always call it (in a finally): the timer and the caller's listener must not outlive the call. */
  dispose(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private fire(why: 'deadline' | 'caller'): void {
    this.fired ??= why;
    this.controller.abort();
  }
}

/** An undici/network error in words: its code(s) (ECONNREFUSED, UND_ERR_SOCKET, ...) and message. */
export function transportFailure(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown transport error';
  const code = (error as { code?: unknown }).code;
  const cause = (error as { cause?: unknown }).cause;
  const causeCode = cause instanceof Error ? (cause as { code?: unknown }).code : undefined;
  const named = [code, causeCode].filter((part): part is string => typeof part === 'string');
  return [...new Set(named), error.message].filter(Boolean).join(' ');
}

// ---- the request ----

export interface PostOptions {
  /** The provider id, first word of every message. */
  id: string;
  url: string;
  headers: Record<string, string>;
  /** Already serialised JSON. */
  body: string;
  deadline: Deadline;
  dispatcher: Dispatcher;
  timeoutMs: number;
  redact: Redactor;
}

/**
 * POSTs through undici under the deadline. undici's `request` never follows redirects (no
 * redirect interceptor is installed), so a 3xx comes back as a status for statusError to refuse.
 * A failure before any response (refused connection, DNS, reset, deadline, caller's abort) is
 * `unavailable`: nothing the wire can show was generated, so the call is safe to repeat.
 */
export async function post(options: PostOptions): Promise<Dispatcher.ResponseData> {
  try {
    return await undici().request(options.url, {
      method: 'POST',
      headers: options.headers,
      body: options.body,
      signal: options.deadline.signal,
      dispatcher: options.dispatcher,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  } catch (error) {
    throw new ModelError('unavailable', `${options.id}: no response (${options.redact(options.deadline.describe(error))}); nothing was generated that the wire can show, safe to repeat`);
  }
}

// ---- the status line ----

/**
 * A non-2xx status mapped onto the ladder, with the provider's own error text (bounded,
 * trimmed, scrubbed):
 * - 3xx: `refused` (a redirect is not followed; nothing was sent on);
 * - 4xx: `refused`, DidNotHappen, with retryAfterMs from Retry-After / retry-after-ms (429);
 * - 5xx: `unavailable`, DidNotHappen, also with retryAfterMs; 529 is Anthropic's "overloaded"
 *   and says so;
 * - anything else (1xx, a 2xx the caller did not accept): `refused`.
 * `errorText` extracts the provider's words from the body (default: providerErrorText).
 */
export async function statusError(
  id: string,
  response: Dispatcher.ResponseData,
  redact: Redactor,
  deadline: Deadline,
  maxResponseBytes: number,
  errorText: (body: string) => string = providerErrorText,
): Promise<ModelError> {
  const status = response.statusCode;
  if (status >= 300 && status < 400) {
    await response.body.dump().catch(() => undefined);
    return new ModelError('refused', `${id}: HTTP ${status} redirect not followed (a model endpoint must be named where it is); nothing was sent on`);
  }
  const body = await readErrorBody(response.body, Math.min(MAX_ERROR_BODY_BYTES, maxResponseBytes), deadline);
  const detail = body ? `: ${redact(errorText(body))}` : '';
  const retryAfterMs = retryAfterOf(response.headers);
  if (status === 529) return new ModelError('unavailable', `${id}: HTTP 529 from the provider (overloaded)${detail}`, null, retryAfterMs);
  if (status >= 500) return new ModelError('unavailable', `${id}: HTTP ${status} from the provider${detail}`, null, retryAfterMs);
  if (status >= 400) return new ModelError('refused', `${id}: HTTP ${status}, refused before generation${detail}`, null, retryAfterMs);
  return new ModelError('refused', `${id}: HTTP ${status} is not an answer${detail}`);
}

/** Reads at most `limit` bytes of an error body (a cut one is worth what arrived), then destroys it. */
export async function readErrorBody(body: ResponseBody, limit: number, deadline: Deadline): Promise<string> {
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

/**
 * The provider's own words: `error.message` (OpenAI, Ollama, Anthropic, Gemini), `message`
 * (vLLM), `detail`, or the raw text. Untrimmed: pass it through a Redactor.
 */
export function providerErrorText(body: string): string {
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

/**
 * The provider-named retry window in ms, or null. `retry-after-ms` (OpenAI's own) wins over
 * `Retry-After` (delta-seconds or an HTTP-date; a date in the past is 0).
 */
export function retryAfterOf(headers: Headers): number | null {
  const ms = headerValue(headers['retry-after-ms']);
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headerValue(headers['retry-after'])?.trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

// ---- secrets out of messages ----

/** Makes provider (or transport) text safe for a message: trimmed, prompt echoes and the key removed. */
export type Redactor = (text: string) => string;

/**
 * Trims provider text against the prompt and scrubs the API key in every form key-scrub.ts
 * knows (as written, any 8-character run of it, spaced out, reversed, base64, base64url, hex).
 * The key's scrubber is built at the first message that needs it, once per key, not per request.
 */
export function redactorFor(request: ModelRequest, apiKey: string): Redactor {
  const prompt = request.messages.map((message) => message.content);
  return (text) => trimProviderError(scrubSecret(text, apiKey), prompt);
}

/** Replaces `secret` in every form key-scrub.ts knows with a marker naming the form (`[key]`, `[key, base64]`, ...). */
export function scrubSecret(text: string, secret: string): string {
  return keyScrubber(secret)(text);
}

// ---- configuration ----

/**
 * A base URL fit for the profile: http(s), no credentials, no query or fragment, no trailing
 * slash. The endpoint enters the profile, hence the journal: it must not be able to carry a
 * secret. `who` prefixes the TypeError (the driver's name).
 */
export function normalisedBaseUrl(raw: string, who = 'openai-compatible'): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TypeError(`${who}: baseUrl is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`${who}: baseUrl must be http or https, not ${url.protocol}`);
  if (url.username || url.password) throw new TypeError(`${who}: baseUrl must not carry credentials (use apiKey)`);
  if (url.search || url.hash) throw new TypeError(`${who}: baseUrl must not carry a query or fragment`);
  return url.href.replace(/\/+$/, '');
}

/** An optional positive option, else the fallback; anything else is a TypeError naming it. */
export function positive(value: number | undefined, fallback: number, name: string, who = 'openai-compatible'): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new TypeError(`${who}: ${name} must be a positive number`);
  return value;
}

// ---- small parts ----

/** The first value of a header undici may give as a list. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A token count as a wire reports it: a non-negative integer. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

/** A non-empty string. */
export function nonEmpty(value: unknown): boolean {
  return typeof value === 'string' && value.length > 0;
}

/** What one driver's calls need, fixed when its provider is built. The key lives here and in its header only. */
export interface CallSettings {
  id: string;
  /** The endpoint (a driver whose path depends on the model, Gemini, keeps its base URL here). */
  url: string;
  streaming: boolean;
  timeoutMs: number;
  maxResponseBytes: number;
  defaultModel: string;
  apiKey: string;
  /** How many times a rate-limited or overloaded call is sent again (see sendWithRetry). */
  rateLimitRetries: number;
  /** The longest single wait for a provider-named window. */
  maxRetryWaitMs: number;
  dispatcher: () => Dispatcher;
}

/**
 * A provider's call settings. The undici Agent is created on first use: an idle Agent holds no
 * sockets, and a configured provider nobody calls costs nothing. A given dispatcher (where the
 * outbound guard plugs in) is used as it is.
 */
export function callSettings(fields: Omit<CallSettings, 'dispatcher'>, dispatcher?: Dispatcher): CallSettings {
  let agent = dispatcher;
  return { ...fields, dispatcher: () => (agent ??= new (undici().Agent)({ headersTimeout: fields.timeoutMs, bodyTimeout: fields.timeoutMs })) };
}

/** What cut a call after its 2xx status line, in words, with the provider's own text when it gave any. */
export type CutCause = { what: string; providerText?: string };

/** What the ladder reads of a call when it is cut: how far the wire had got. */
export interface LadderState {
  status: number;
  /** Read as server-sent events rather than one document. */
  streamed: boolean;
  /** Generation provably began (content, reasoning or a tool call arrived). */
  began: boolean;
  /** The usage the wire had reported by then. */
  usage: ModelUsage | null;
}

/**
 * A call cut after the 2xx status line: the rung is what the wire had said by then (see the
 * ladder in runtime/model-provider.ts). Usage seen → `interrupted`, billed for it; generation
 * began without usage → `unaccounted`, never free; nothing generated → `unavailable`. A wire
 * that reports usage before any output (Anthropic's message_start) passes `usageNeedsOutput`:
 * there, usage alone does not mean anything was generated, and a cut before the first token is
 * still safe to repeat.
 */
export function severedError(settings: CallSettings, state: LadderState, cause: CutCause, redact: Redactor, usageNeedsOutput = false): ModelError {
  const detail = cause.providerText ? `: ${redact(cause.providerText)}` : '';
  const what = `${settings.id}: HTTP ${state.status} ${state.streamed ? 'stream' : 'response'} cut (${redact(cause.what)})`;
  if (state.usage && (state.began || !usageNeedsOutput)) return new ModelError('interrupted', `${what} after usage was reported${detail}; billed for what the wire said`, state.usage);
  if (state.began) return new ModelError('unaccounted', `${what} after generation began, before any usage${detail}; it happened, the bill is unknown`);
  return new ModelError('unavailable', `${what} before any output${detail}; safe to repeat`);
}

/** A 2xx body over the cap: it was produced, so never `unavailable`; billed if usage had arrived. */
export function oversizedError(settings: CallSettings, state: LadderState, what: string): ModelError {
  const message = `${settings.id}: HTTP ${state.status} response ${what} over the ${settings.maxResponseBytes}-byte cap; not read further`;
  if (state.usage) return new ModelError('interrupted', `${message}; billed for the usage already reported`, state.usage);
  return new ModelError('unaccounted', `${message}; it happened, the bill is unknown`);
}

/**
 * A 2xx body read as one JSON document (a call that does not stream, or a server asked to
 * stream that sent one document anyway): read whole under settings.maxResponseBytes, the body
 * destroyed, and given back only when it is a JSON object. Its first byte is the first sign the
 * server produced an answer (`state.began`). A cut or a body over the cap is classified on the
 * ladder (severedError, oversizedError; `usageNeedsOutput` as there); so are an empty body,
 * one that is not JSON, and JSON that is not an object. What the object says is the driver's.
 * `meter` counts the bytes read (a driver's state may keep them).
 */
export async function readJsonDocument(
  settings: CallSettings,
  body: ResponseBody,
  state: LadderState,
  redact: Redactor,
  deadline: Deadline,
  options: { meter?: ByteMeter; usageNeedsOutput?: boolean } = {},
): Promise<Record<string, unknown>> {
  const { meter = { bytes: 0 }, usageNeedsOutput = false } = options;
  const severed = (what: string) => severedError(settings, state, { what }, redact, usageNeedsOutput);
  const chunks: Buffer[] = [];
  try {
    for await (const piece of body as AsyncIterable<Buffer>) {
      meter.bytes += piece.length;
      state.began = true;
      if (meter.bytes > settings.maxResponseBytes) throw oversizedError(settings, state, 'grew');
      chunks.push(piece);
    }
  } catch (error) {
    if (error instanceof ModelError) throw error;
    throw severed(deadline.describe(error));
  } finally {
    if (!body.destroyed) body.destroy();
  }
  if (meter.bytes === 0) throw severed('an empty body');
  let document: unknown;
  try {
    document = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw severed('a body that is not JSON');
  }
  if (!isRecord(document)) throw severed('a JSON body that is not an object');
  return document;
}

// ---- one driver skeleton ----

/** The options every HTTP driver takes; each driver's own type documents its id, base URL and key. */
export interface HttpDriverOptions extends RateLimitOptions {
  /** The provider id, also `profile.provider`. */
  id?: string;
  baseUrl?: string;
  /** Sent only in the one header the wire names, never anywhere else. */
  apiKey?: string;
  /** Used when a request names no model (`request.model` empty). */
  model?: string;
  /** Default zero: the plane supplies prices (resources/prices.json); a driver does not guess them. */
  pricing?: Pricing;
  /** Stream the answer (default true: the stream is what lets a cut call carry its bill). The profile's choice, not a request's: it is effect identity. */
  stream?: boolean;
  /** Whole-request deadline across connect, generation, stream and rate-limit waits (default 5 minutes). */
  timeoutMs?: number;
  /** Cap on the response body (default 8 MiB). */
  maxResponseBytes?: number;
  /** Shown to people; defaults to naming the wire and its endpoint. */
  label?: string;
  /** Where the outbound guard (netguard) plugs in; default a private undici Agent. */
  dispatcher?: Dispatcher;
}

/** What fixes one driver's provider besides its options: the parts that enter the profile. */
export interface HttpDriverSpec {
  /** The driver's name in a TypeError about its options (`anthropic`, `gemini`, ...). */
  who: string;
  /** The provider id when the options name none. */
  defaultId: string;
  /** `profile.driver`, effect identity: bump it when the request shape changes. */
  driver: string;
  defaultBaseUrl?: string;
  /** The default label is `${wire} at ${baseUrl}`. */
  wire: string;
  /** Appended to the base URL; '' for a wire whose path names the model (the request sets `url`). */
  path: string;
  /** Set when the key is required: the variable the TypeError tells a person to set. */
  keyVariable?: string;
}

/** One call as the wire-specific part of a driver sees it, once the shared checks have passed. */
export interface HttpCall {
  settings: CallSettings;
  request: ModelRequest;
  /** The model asked for: the request's, else the provider's default (never empty). */
  model: string;
  redact: Redactor;
  deadline: Deadline;
  /** Shown the visible answer text as it streams (ModelStreamObserver); absent when nobody watches. */
  observer?: ModelStreamObserver;
}

/** The request a driver puts on the wire; `url` defaults to the settings' endpoint. */
export interface WireRequest {
  url?: string;
  headers: Record<string, string>;
  /** Already serialised JSON. */
  body: string;
}

/** The wire-specific part of a driver: everything else is createHttpDriver's. */
export interface WireDriver {
  /** The model name as this wire spells it (Gemini drops a `models/` prefix); default as given. */
  model?(named: string): string;
  /** The request; throws `refused` for what the wire would reject, before anything is sent. */
  build(call: Pick<HttpCall, 'settings' | 'request' | 'model'>): WireRequest;
  /** A non-2xx status as a ModelError (default: statusError reading the body with providerErrorText). */
  refusal?(response: Dispatcher.ResponseData, call: HttpCall): Promise<ModelError>;
  /**
   * A 2xx answer read whole, a cut one classified on the ladder. `streamed` when the call
   * streams and the server answered text/event-stream (a server asked to stream may still send
   * one JSON document: read what it sent). The body is the reader's to destroy.
   */
  read(response: Dispatcher.ResponseData, call: HttpCall, streamed: boolean): Promise<Completion>;
}

/** The headers of every JSON call, the key in the one header its wire names (and nowhere else). */
export function jsonHeaders(settings: Pick<CallSettings, 'streaming'>, credential: Record<string, string>): Record<string, string> {
  return { 'content-type': 'application/json', accept: settings.streaming ? 'text/event-stream, application/json' : 'application/json', ...credential };
}

/** OpenAI's and every compatible server's credential: a bearer token, or nothing for a server that needs none. */
export function bearerHeaders(settings: Pick<CallSettings, 'streaming' | 'apiKey'>): Record<string, string> {
  return jsonHeaders(settings, settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {});
}

const ZERO_PRICE: Pricing = { inputPerMTokMicros: 0, outputPerMTokMicros: 0 };

/**
 * A ModelProvider over one HTTP wire. What every driver did the same way lives here once: the
 * options checked (base URL, deadline, byte cap, retry policy, key), the profile (endpoint,
 * driver, streaming, default model: never the key, never the timeout or the retry policy,
 * which change how long a call may take, not what it asks), the call settings; and per call
 * the model and maxTokens checks, the request built (refusals before dispatch), the redactor,
 * the whole-request deadline, the POST, the status line, a body that declares itself over the
 * cap, and the rate-limit retries (sendWithRetry). The driver supplies its wire: the request,
 * its error shape, and how its answer reads.
 */
export function createHttpDriver(spec: HttpDriverSpec, options: HttpDriverOptions, wire: WireDriver): ModelProvider {
  const { who } = spec;
  const id = options.id ?? spec.defaultId;
  const baseUrl = normalisedBaseUrl(options.baseUrl ?? spec.defaultBaseUrl ?? '', who);
  const streaming = options.stream ?? true;
  const timeoutMs = positive(options.timeoutMs, DEFAULT_TIMEOUT_MS, 'timeoutMs', who);
  const maxResponseBytes = positive(options.maxResponseBytes, DEFAULT_MAX_RESPONSE_BYTES, 'maxResponseBytes', who);
  const rateLimitRetries = options.rateLimitRetries ?? DEFAULT_RATE_LIMIT_RETRIES;
  if (!Number.isInteger(rateLimitRetries) || rateLimitRetries < 0 || rateLimitRetries > MAX_RATE_LIMIT_RETRIES) {
    throw new TypeError(`${who}: rateLimitRetries must be a whole number from 0 to ${MAX_RATE_LIMIT_RETRIES}`);
  }
  const maxRetryWaitMs = positive(options.maxRetryWaitMs, DEFAULT_MAX_RETRY_WAIT_MS, 'maxRetryWaitMs', who);
  if (spec.keyVariable && (typeof options.apiKey !== 'string' || !options.apiKey)) throw new TypeError(`${who}: apiKey is required (${spec.keyVariable})`);
  const profile: ProviderProfile = {
    provider: id,
    driver: spec.driver,
    endpoint: baseUrl,
    streaming,
    label: options.label ?? `${spec.wire} at ${baseUrl}`,
    ...(options.model ? { defaultModel: options.model } : {}),
  };
  const settings = callSettings(
    { id, url: `${baseUrl}${spec.path}`, streaming, timeoutMs, maxResponseBytes, defaultModel: options.model ?? '', apiKey: options.apiKey ?? '', rateLimitRetries, maxRetryWaitMs },
    options.dispatcher,
  );
  return {
    id,
    profile,
    pricing: options.pricing ?? ZERO_PRICE,
    complete: (request, signal, observer) => completeOverHttp(settings, wire, request, signal, observer),
  };
}

async function completeOverHttp(settings: CallSettings, wire: WireDriver, request: ModelRequest, callerSignal: AbortSignal | undefined, observer: ModelStreamObserver | undefined): Promise<Completion> {
  const { id } = settings;
  const named = request.model || settings.defaultModel;
  const model = wire.model ? wire.model(named) : named;
  if (!model) throw new ModelError('refused', `${id}: the request names no model and the provider has no default`);
  if (!Number.isInteger(request.maxTokens) || request.maxTokens < 1) {
    throw new ModelError('refused', `${id}: maxTokens must be a positive integer, got ${String(request.maxTokens)}`);
  }
  const sent = wire.build({ settings, request, model });
  if (callerSignal?.aborted) throw new ModelError('unavailable', `${id}: cancelled by the caller before dispatch`);

  const redact = redactorFor(request, settings.apiKey);
  const deadline = new Deadline(settings.timeoutMs, callerSignal);
  const call: HttpCall = { settings, request, model, redact, deadline, ...(observer ? { observer } : {}) };
  try {
    return await sendWithRetry(settings, deadline, async () => {
      const response = await post({ id, url: sent.url ?? settings.url, headers: sent.headers, body: sent.body, deadline, dispatcher: settings.dispatcher(), timeoutMs: settings.timeoutMs, redact });
      const status = response.statusCode;
      if (status < 200 || status >= 300) {
        const error = wire.refusal ? await wire.refusal(response, call) : await statusError(id, response, redact, deadline, settings.maxResponseBytes);
        throw status === 429 ? providerBusy(error, 'rate-limited') : status === 529 ? providerBusy(error, 'overloaded') : error;
      }
      const declared = Number(headerValue(response.headers['content-length']) ?? NaN);
      if (Number.isFinite(declared) && declared > settings.maxResponseBytes) {
        response.body.destroy();
        throw oversizedError(settings, { status, streamed: false, began: false, usage: null }, `declares ${declared} bytes,`);
      }
      const streamed = settings.streaming && (headerValue(response.headers['content-type']) ?? '').includes('text/event-stream');
      return wire.read(response, call, streamed);
    });
  } finally {
    deadline.dispose();
  }
}
