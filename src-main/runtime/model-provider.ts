/**
 * The model provider seam. A completion is an effect like any other (journaled once, replayed
 * from the record, untrusted on the way back); what a driver must get right is not the JSON but
 * the failure mapping, because it decides whether a request may be sent again and whether the
 * budget is telling the truth.
 *
 * A failed call is not a free call. A model call has a third state besides "happened" and "did
 * not": it ran, generated four hundred tokens, and the stream died. The provider bills those
 * tokens; the answer is unusable. So a `ModelError` carries what was consumed, and its kind
 * says which rung of the severed-stream ladder the wire reached:
 *
 * - `refused`     before generation (bad request, unknown model, rate limit, auth): nothing
 *                 happened, costs nothing, safe to retry (DidNotHappen).
 * - `unavailable` a 5xx, or a timeout before any output: treated as safe to repeat (a
 *                 completion does not change the world), with the documented cost that a
 *                 ceiling may under-count by at most one call (DidNotHappen).
 * - `interrupted` cut after usage was reported: it happened and is billed for what the wire
 *                 said (Landed).
 * - `unaccounted` cut after generation began but before any usage: it happened, the bill is
 *                 unknown, and it is counted as unaccounted, never as free (Landed).
 *
 * A caller's cancellation maps onto the same ladder: `unavailable` before any output,
 * `interrupted` or `unaccounted` after. Streaming is a property of the provider's profile, not
 * of a request, so the key always records the shape the wire carried.
 *
 * Every driver must reach the best rung its wire allows: the Chat Completions wire reports usage
 * only in a terminal chunk (with stream_options.include_usage), so a cut stream there can be
 * `interrupted` only once that chunk arrived.
 *
 * A provider's error body is trimmed before it becomes a message: providers echo the prompt in
 * error payloads, and an unbounded message turns a failure into an exfiltration channel into
 * every log it reaches.
 */
import type { Disposition } from '../../src-shared/vocabulary/effects';

/**
 * Tokens a call consumed. `outputTokens` excludes reasoning: a driver whose wire counts
 * reasoning inside its completion tokens subtracts it, so that nothing is billed twice.
 */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  reasoningTokens: number;
  /**
   * Input tokens read from the provider's prompt cache, NOT included in `inputTokens` (they are
   * priced differently). A wire that counts them inside its input total (OpenAI's
   * `cached_tokens`, Gemini's `cachedContentTokenCount`) is subtracted by its driver, as
   * reasoning is from output: every token billed once.
   */
  cacheReadTokens?: number;
  /** Input tokens written to the provider's prompt cache (Anthropic), likewise not in `inputTokens`. */
  cacheWriteTokens?: number;
}

/** A tool a model may call: the run decides what it is (a peer's skill, an MCP tool, an agent). */
export interface ToolDeclaration {
  /** As the model sees it: letters, digits, `_` and `-`, at most 64 (every provider accepts that). */
  name: string;
  description: string;
  /** JSON Schema of the arguments (an object schema). */
  inputSchema: Record<string, unknown>;
}

/** A call the model asked for. `arguments` is the parsed JSON the model wrote. */
export interface ToolCall {
  /** The provider's id for the call, echoed back with its result (`toolu_…`, `call_…`). */
  id: string;
  name: string;
  arguments: unknown;
}

/**
 * One turn of a conversation. An assistant turn that came from a provider carries its
 * `continuation`: the provider's own turn, verbatim and opaque (Anthropic's signed thinking
 * blocks, OpenAI's encrypted reasoning items, Gemini's thought signatures), which the next
 * request to the same provider must send back as it was. A driver that normalised the turn
 * would have nowhere to keep what it does not understand, and that is exactly what the next
 * request has to return.
 */
export type ModelMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[]; continuation?: unknown }
  | { role: 'tool'; toolCallId: string; name: string; content: string; isError?: boolean };

export interface ModelRequest {
  model: string;
  messages: ModelMessage[];
  /** Cap on generated tokens; also what a budget check estimates against. */
  maxTokens: number;
  temperature?: number;
  /** Tools offered for this turn; none: a plain completion. */
  tools?: ToolDeclaration[];
  /** `auto` (default), `required` (some tool), or one tool by name (forced; structured output's fallback). */
  toolChoice?: 'auto' | 'required' | { name: string };
  /** Structured output: the answer must be JSON matching this schema (native where the provider has it). */
  responseSchema?: Record<string, unknown>;
  /** Reasoning effort where the model supports it (OpenAI reasoning.effort, Gemini thinkingConfig, Anthropic thinking budget). */
  reasoningEffort?: 'low' | 'medium' | 'high';
}

/** Why generation stopped, in one vocabulary for every wire. */
export type StopReason = 'end' | 'tool_calls' | 'length' | 'refusal' | 'other';

export interface Completion {
  text: string;
  usage: ModelUsage;
  /** The provider's own word on which model answered; null where the wire names none. */
  model: string | null;
  /** The answer was cut off (length limit): readable, but not whole. */
  truncated: boolean;
  /** Calls the model asked for (empty when it answered in text). */
  toolCalls?: ToolCall[];
  stopReason?: StopReason;
  /** The provider's own assistant turn, verbatim, for the next request (see ModelMessage and Continuation). */
  continuation?: Continuation;
}

/**
 * What changes the wire is part of the effect's identity: endpoint, driver version, streaming
 * mode. Replaying a run against a differently configured provider is divergence, not a quiet
 * reuse of an answer produced under another request shape. Never a key, never a timeout.
 */
export interface ProviderProfile {
  provider: string;
  driver: string;
  endpoint: string;
  streaming: boolean;
  /** Shown to people: the local provider says it is local and deterministic. */
  label: string;
  /** The model sent when a request names none; in the profile, so in the effect's key. */
  defaultModel?: string;
}

/**
 * Price per million tokens, in micro-units of currency (so 1 USD per Mtok = 1,000,000).
 * Cache rates, when absent, fall back to the input rate: over-billing a cached token is the
 * safe error, pricing it as free is not (see costOf).
 */
export interface Pricing {
  inputPerMTokMicros: number;
  outputPerMTokMicros: number;
  cacheReadPerMTokMicros?: number;
  cacheWritePerMTokMicros?: number;
}

/**
 * The one continuation convention every driver uses. `wire` is the id of the driver that produced
 * it (its profile's `driver`, e.g. `anthropic-messages/1`); `turn` is the provider's own assistant
 * turn, verbatim and opaque (Anthropic's content array with signed thinking blocks, OpenAI's
 * Responses output items with encrypted reasoning, Gemini's model Content with thought signatures).
 * One shape rather than three accommodations (docs/GOVERNED-RUNTIME.md): a driver that normalised
 * the turn would have nowhere to keep what it does not understand, and that is exactly what the
 * next request must return. A driver receiving another wire's continuation refuses before dispatch
 * (fails closed): sending it would be a guess, dropping it would silently lose state. The wire
 * includes the driver version, so a driver whose turn shape changes bumps its version and old
 * continuations are refused rather than misread.
 */
export interface Continuation {
  wire: string;
  turn: unknown;
}

/** Whether `value` is a Continuation at all (any wire). */
export function isContinuation(value: unknown): value is Continuation {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { wire?: unknown }).wire === 'string' && 'turn' in value;
}

/** Whether `value` is a Continuation produced by the driver `wire`. */
export function isContinuationOf(value: unknown, wire: string): value is Continuation {
  return isContinuation(value) && value.wire === wire;
}

/** For an error message: which wire a foreign continuation came from, bounded; '' when untagged. */
export function continuationOrigin(value: unknown): string {
  return isContinuation(value) ? ` (from ${value.wire.slice(0, 40)})` : '';
}

export type ModelErrorKind = 'refused' | 'unavailable' | 'interrupted' | 'unaccounted';

export class ModelError extends Error {
  override readonly name = 'ModelError';
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    /** What the failure consumed, where the wire said. */
    readonly usage: ModelUsage | null = null,
    /** A provider-named retry window (rate limits), in ms. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }

  get disposition(): Disposition {
    return this.kind === 'refused' || this.kind === 'unavailable' ? 'DidNotHappen' : 'Landed';
  }
}

export interface ModelProvider {
  readonly id: string;
  readonly profile: ProviderProfile;
  /** The provider-wide price: the fallback when no per-model price is known (see pricingFor). */
  readonly pricing: Pricing;
  /**
   * The price of one model (from resources/prices.json and the user's override), or null when
   * the model has no price: then a call's spend is marked unaccounted, never counted as free.
   * Absent: every model is priced at `pricing`.
   */
  pricingFor?(model: string): Pricing | null;
  /**
   * One call, one canonical Completion. `observer`, when given, is shown the visible answer as
   * the wire delivers it (see ModelStreamObserver); it never changes what is returned.
   */
  complete(request: ModelRequest, signal?: AbortSignal, observer?: ModelStreamObserver): Promise<Completion>;
}

/**
 * Live deltas are labelled projections, not replay truth (docs/GOVERNED-RUNTIME.md). A driver calls
 * `onText` with each piece of the visible answer text as its stream delivers it, in order, while it
 * still assembles the one Completion that is returned and journaled: for a plain answer the pieces
 * concatenate to `Completion.text` (a structured answer carried by a forced tool is tool input, so
 * it streams nothing). Never reasoning or thinking (opaque, billed, not shown), never tool-call
 * argument JSON, never a refusal's words. A buffered answer (a non-streaming profile, a server
 * answering one JSON document, the local model) emits nothing: its text and its seal arrive
 * together, so a live view of it would add nothing.
 *
 * Delivery is advisory: the pieces are untrusted model output (like the Completion itself) and
 * whoever watches them sees them only while the effect is open. An observer that throws is
 * ignored (notifyText), so a broken watcher can never change the call's outcome or its place
 * on the failure ladder.
 */
export interface ModelStreamObserver {
  onText(delta: string): void;
}

/** Hands `delta` to the observer, if any; an observer's failure is swallowed (delivery is advisory). */
export function notifyText(observer: ModelStreamObserver | undefined, delta: unknown): void {
  if (!observer || typeof delta !== 'string' || delta === '') return;
  try {
    observer.onText(delta);
  } catch {
    // Advisory: a watcher that fails loses its view, never the call.
  }
}

/**
 * How each provider is configured: the variables that turn it on (the first is what an error
 * tells a person to set). Keys are transport credentials: they go to the driver, which puts them
 * in one header and nowhere else (never the profile, the journal, a message or a log).
 */
export const PROVIDER_SETUP: Readonly<Record<string, { variable: string; what: string }>> = {
  anthropic: { variable: 'AGENTPLANE_ANTHROPIC_API_KEY', what: 'Anthropic Messages' },
  openai: { variable: 'AGENTPLANE_OPENAI_API_KEY', what: 'OpenAI Responses' },
  chat: { variable: 'AGENTPLANE_OPENAI_BASE_URL', what: 'an OpenAI-compatible chat-completions server (Ollama, llama.cpp, vLLM)' },
  'openai-compatible': { variable: 'AGENTPLANE_OPENAI_BASE_URL', what: 'an OpenAI-compatible chat-completions server (alias of chat)' },
  gemini: { variable: 'AGENTPLANE_GEMINI_API_KEY', what: 'Google Gemini' },
};

/** A clear refusal for a provider a manifest names but the plane has not configured. */
export function unconfiguredProviderMessage(agent: string, provider: string): string {
  const setup = PROVIDER_SETUP[provider];
  if (!setup) return `agent ${agent} uses provider ${provider}, which is not a known provider (known: local, ${Object.keys(PROVIDER_SETUP).join(', ')})`;
  // Both ways in: the variable (headless, scripts) or the saved settings (Settings view, CLI).
  const settings = provider === 'chat' || provider === 'openai-compatible' ? 'chat --base-url URL' : `${provider} --key-stdin`;
  return `agent ${agent} uses provider ${provider}, which is not configured: set ${setup.variable}, or save it in Settings (agentplane providers set ${settings})`;
}

export const ZERO_USAGE: ModelUsage = { inputTokens: 0, outputTokens: 0, reasoningTokens: 0 };

/**
 * Cost in micro-units for a usage under a pricing, rounded up once over the sum: never bill
 * less than consumed. Reasoning is billed as output (it is, by every provider); cache reads
 * and writes at their own rates, falling back to the input rate when the pricing has none.
 */
export function costOf(usage: ModelUsage, pricing: Pricing): number {
  const input = usage.inputTokens * pricing.inputPerMTokMicros;
  const output = (usage.outputTokens + usage.reasoningTokens) * pricing.outputPerMTokMicros;
  const cacheRead = (usage.cacheReadTokens ?? 0) * (pricing.cacheReadPerMTokMicros ?? pricing.inputPerMTokMicros);
  const cacheWrite = (usage.cacheWriteTokens ?? 0) * (pricing.cacheWritePerMTokMicros ?? pricing.inputPerMTokMicros);
  return Math.ceil((input + output + cacheRead + cacheWrite) / 1_000_000);
}

/** The price for `model` on `provider`: per model where the provider has a price book, else provider-wide; null: unpriced. */
export function pricingOf(provider: Pick<ModelProvider, 'pricing' | 'pricingFor'>, model: string): Pricing | null {
  return provider.pricingFor ? provider.pricingFor(model) : provider.pricing;
}

const MAX_ERROR_TEXT = 200;
/** An echo of this many characters of the prompt (or a secret) is cut from error text. */
const ECHO_WINDOW = 12;

/**
 * Removes every stretch of `text` that also occurs in one of `needles` and is at least
 * ECHO_WINDOW characters long, whatever offset it starts at (a sliding window), replacing each
 * stretch with `mask`. Used for echoed prompts and for secrets a careless server reflects.
 */
export function scrubEchoes(text: string, needles: readonly string[], mask: string): string {
  const hay = needles.filter((n) => n.length >= ECHO_WINDOW);
  if (hay.length === 0 || text.length < ECHO_WINDOW) return text;
  const marked = new Uint8Array(text.length);
  for (let i = 0; i + ECHO_WINDOW <= text.length; i++) {
    const gram = text.slice(i, i + ECHO_WINDOW);
    if (hay.some((n) => n.includes(gram))) marked.fill(1, i, i + ECHO_WINDOW);
  }
  let out = '';
  for (let i = 0; i < text.length; i++) {
    if (!marked[i]) out += text[i];
    else if (i === 0 || !marked[i - 1]) out += mask;
  }
  return out;
}

/**
 * A provider's error text made safe for messages and logs: one line, at most 200 characters,
 * and with every echoed stretch of the prompt removed. The text is cut to a bounded length
 * before scanning, so a huge error body costs a bounded amount of work.
 */
export function trimProviderError(text: string, prompt: readonly string[] = []): string {
  const flat = text.replace(/\s+/g, ' ').trim().slice(0, 4000);
  const needles = prompt.map((p) => p.replace(/\s+/g, ' ').trim());
  const out = scrubEchoes(flat, needles, '[prompt]');
  return out.length > MAX_ERROR_TEXT ? `${out.slice(0, MAX_ERROR_TEXT)}…` : out;
}
