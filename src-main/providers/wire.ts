/**
 * What every HTTP model driver needs besides its own JSON: the whole-request deadline, the
 * undici request with redirects refused, bounded reads (error bodies and server-sent events),
 * the status line mapped onto the failure ladder, and secrets kept out of every message.
 *
 * Extracted from the Chat Completions driver (openai-compatible.ts) so that the Anthropic,
 * OpenAI Responses and Gemini drivers share one implementation of the parts that decide
 * whether a request may be sent again and whether a message may reach a log. The rules and
 * their reasons are in model-provider.ts (the ladder) and seed 002 ("Model providers"):
 *
 * - one deadline covers connect, generation and the whole stream: a model that stalls after
 *   its first byte is as stuck as one that never answers;
 * - redirects are never followed: a model endpoint that moves is misconfigured, and following
 *   it would send the prompt and the key somewhere nobody declared;
 * - every body is read bounded: an error body only as far as it is useful (it is trimmed to
 *   200 characters anyway), a 2xx body up to the provider's maxResponseBytes;
 * - provider text is trimmed against the prompt (providers echo it) and scrubbed of the key
 *   (some echo that too) before it enters a message.
 *
 * Nothing here knows a provider's answer shape; the drivers classify a cut stream themselves
 * from what their wire had said (usage seen, content generated, nothing yet).
 */
import { type Dispatcher, Agent, request as httpRequest } from 'undici';
import { type ModelRequest, type ModelUsage, ModelError, trimProviderError } from '../runtime/model-provider';

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

  constructor(
    private readonly timeoutMs: number,
    private readonly callerSignal: AbortSignal | undefined,
  ) {
    this.timer = setTimeout(() => this.fire('deadline'), timeoutMs);
    callerSignal?.addEventListener('abort', this.onCallerAbort, { once: true });
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
    return await httpRequest(options.url, {
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

/** Trims provider text against the prompt and scrubs the API key, whole or any 8-character slice of it. */
export function redactorFor(request: ModelRequest, apiKey: string): Redactor {
  const prompt = request.messages.map((message) => message.content);
  return (text) => trimProviderError(scrubSecret(text, apiKey), prompt);
}

/** Replaces `secret`, and every 8-character slice of it, with `[key]`. */
export function scrubSecret(text: string, secret: string): string {
  if (!secret) return text;
  let out = text.split(secret).join('[key]');
  const window = Math.min(8, secret.length);
  for (let i = 0; i + window <= secret.length; i++) out = out.split(secret.slice(i, i + window)).join('[key]');
  return out;
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

// ---- server-sent events ----

/** One server-sent event: its `event:` name ('message' when none was given) and its joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/**
 * Server-sent events parsed incrementally: `data:` lines gathered until a blank line, `event:`
 * names the event, comments (`:`) and other fields (`id:`, `retry:`) ignored, LF or CRLF.
 * An event with no data line is not dispatched (as the SSE spec says).
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';

  push(text: string): SseEvent[] {
    const buffer = this.buffer + text;
    const out: SseEvent[] = [];
    // Scanned by index and cut once at the end: re-slicing the rest of the buffer for every line
    // made a chunk of n lines cost O(n²), and this runs for every streamed token.
    let start = 0;
    let newline: number;
    while ((newline = buffer.indexOf('\n', start)) >= 0) {
      const end = newline > start && buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      this.line(buffer.slice(start, end), out);
      start = newline + 1;
    }
    this.buffer = start === 0 ? buffer : buffer.slice(start);
    return out;
  }

  /** At a clean end of stream: a last event that lacked its blank line still counts. */
  end(text: string): SseEvent[] {
    const out = this.push(text);
    if (this.buffer) this.line(this.buffer.replace(/\r$/, ''), out);
    this.buffer = '';
    this.dispatch(out);
    return out;
  }

  private dispatch(out: SseEvent[]): void {
    if (this.data.length) out.push({ event: this.event || 'message', data: this.data.join('\n') });
    this.data = [];
    this.event = '';
  }

  private line(line: string, out: SseEvent[]): void {
    if (line === '') {
      this.dispatch(out);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const raw = colon < 0 ? '' : line.slice(colon + 1);
    const value = raw.startsWith(' ') ? raw.slice(1) : raw;
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}

/** Thrown by readSse when the body grows past its cap; `bytes` is what had been read. */
export class ResponseTooLarge extends Error {
  override readonly name = 'ResponseTooLarge';
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super(`response grew over the ${limit}-byte cap`);
  }
}

/** Counts the bytes readSse has taken from the body (the caller may read it when the call is cut). */
export interface ByteMeter {
  bytes: number;
}

/**
 * Reads a body as server-sent events, yielding each as soon as its blank line arrives. The
 * byte cap is checked on every chunk: of the chunk that crosses `maxBytes` only the bytes
 * inside the cap are parsed (events they complete are yielded), then it throws
 * ResponseTooLarge (the caller decides the rung: a 2xx body that size was produced, so never
 * `unavailable`). Transport errors (socket closed, deadline) propagate as they are. At a clean
 * end a last event without its blank line is still yielded. The caller owns the body: break
 * out of the loop and destroy it (the generator does not, so a caller can stop at `[DONE]`).
 */
export async function* readSse(body: AsyncIterable<Buffer | Uint8Array>, maxBytes: number, meter: ByteMeter = { bytes: 0 }): AsyncGenerator<SseEvent, void, undefined> {
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  for await (const piece of body) {
    const before = meter.bytes;
    meter.bytes += piece.length;
    if (meter.bytes > maxBytes) {
      // The bytes inside the cap were read legitimately: events they complete still count
      // (one may carry the usage that decides the rung), then reading stops.
      yield* parser.push(decoder.decode(piece.subarray(0, maxBytes - before), { stream: true }));
      throw new ResponseTooLarge(meter.bytes, maxBytes);
    }
    yield* parser.push(decoder.decode(piece, { stream: true }));
  }
  yield* parser.end(decoder.decode());
}

// ---- small parts ----

/** The first value of a header undici may give as a list. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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
  dispatcher: () => Dispatcher;
}

/**
 * A provider's call settings. The undici Agent is created on first use: an idle Agent holds no
 * sockets, and a configured provider nobody calls costs nothing. A given dispatcher (where the
 * outbound guard plugs in) is used as it is.
 */
export function callSettings(fields: Omit<CallSettings, 'dispatcher'>, dispatcher?: Dispatcher): CallSettings {
  let agent = dispatcher;
  return { ...fields, dispatcher: () => (agent ??= new Agent({ headersTimeout: fields.timeoutMs, bodyTimeout: fields.timeoutMs })) };
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
