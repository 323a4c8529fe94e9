/**
 * Rate limits and overload: a call the provider refused for its own load, before generating
 * anything, is sent again after the window the provider named, inside the one call
 * (sendWithRetry, used by createHttpDriver in wire.ts). Every other failure keeps its rung of
 * the ladder (runtime/model-provider.ts) and goes back as it is.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ModelError } from '../runtime/model-provider';

/** What a retry reads of a call's settings (wire.ts CallSettings): the provider id and the retry policy. */
export interface RetryPolicy {
  id: string;
  rateLimitRetries: number;
  maxRetryWaitMs: number;
}

/** The call's whole-request deadline as a retry uses it (wire.ts Deadline). */
export interface RetryDeadline {
  readonly signal: AbortSignal;
  remainingMs(): number;
  describe(error: unknown): string;
}

/** How a driver retries a call the provider refused for load (see sendWithRetry). */
export interface RateLimitOptions {
  /** How many times a rate-limited (429) or overloaded (529) call is sent again: default 3, 0 never, at most 10. */
  rateLimitRetries?: number;
  /** The longest one wait may be (default 60 s); a provider naming a longer window is refused at once, with the window. */
  maxRetryWaitMs?: number;
}

export const DEFAULT_RATE_LIMIT_RETRIES = 3;
export const MAX_RATE_LIMIT_RETRIES = 10;
export const DEFAULT_MAX_RETRY_WAIT_MS = 60_000;
/** Overload without a named window: the first backoff step; each retry doubles it, up to the cap below. */
export const OVERLOAD_BACKOFF_MS = 500;
export const OVERLOAD_BACKOFF_CAP_MS = 8_000;

/** Why the provider turned a call away before generating anything: its own load, not the request. */
export type BusyReason = 'rate-limited' | 'overloaded';
const busyErrors = new WeakMap<ModelError, BusyReason>();

/**
 * Marks a refusal as the provider's load (429, 529, or a wire's own overload signal before any
 * token, such as Anthropic's `overloaded_error` event right after message_start): the one
 * kind of failure sendWithRetry sends again. Only for a refusal before generation: nothing was
 * produced, so nothing was billed and a second send asks the same question once.
 */
export function providerBusy(error: ModelError, reason: BusyReason): ModelError {
  busyErrors.set(error, reason);
  return error;
}

/**
 * Sends a call again when the provider refused it for load, within the call's own budget.
 *
 * Why here, and why only this: a rate limit is the one refusal where retrying is unambiguously
 * safe and the only one where the peer says when (docs/GOVERNED-RUNTIME.md, "Model providers"). It is refused
 * before any token, so nothing was generated or billed: the retried call is still ONE effect,
 * one question asked once, and the caller sees one Completion or one error. Every other failure
 * keeps its rung of the ladder and goes back as it is: a 5xx is `unavailable` for the runtime to
 * judge, a cut stream may have been billed and is never sent twice from here.
 *
 * The rules:
 * - the provider's window (Retry-After, seconds or an HTTP-date; retry-after-ms; Gemini's
 *   RetryInfo) is waited out exactly, never guessed shorter (the answer would be another 429);
 * - 429 without a window is refused at once: the peer did not say when, and a 429 with no
 *   window is as often an exhausted quota or a billing stop (OpenAI's insufficient_quota,
 *   Gemini's daily RESOURCE_EXHAUSTED) that no retry within one call will lift; guessing
 *   would hammer a limiter and hold the run for nothing;
 * - 529 / overloaded without a window gets a short bounded backoff with jitter (0.5 s, 1 s,
 *   2 s ... capped at 8 s, each between half and all of its step): overload is the provider's
 *   transient state, not this caller's quota, and the jitter keeps many callers refused at the
 *   same moment from coming back at the same moment;
 * - at most `rateLimitRetries` retries, each wait at most `maxRetryWaitMs`, and never past the
 *   whole-request deadline: when the window ends after it (or past the cap) the call gives up
 *   at once, with retryAfterMs and a message saying when the provider said to come back, so
 *   the runtime (which owns the run's deadline and budget) can decide what a longer wait is
 *   worth; the retries never stretch the call beyond the deadline its caller gave it;
 * - the caller's cancel (and the deadline) interrupts a wait: `unavailable`, nothing generated.
 * The error that gives up keeps its kind (429 `refused`, 529 `unavailable`: both DidNotHappen,
 * free) and says how many attempts were made. Its text was already trimmed and scrubbed of the
 * key by the driver's redactor; nothing added here comes from the provider.
 */
export async function sendWithRetry<T>(settings: RetryPolicy, deadline: RetryDeadline, send: () => Promise<T>): Promise<T> {
  for (let retries = 0; ; retries++) {
    let error: ModelError;
    try {
      return await send();
    } catch (thrown) {
      if (!(thrown instanceof ModelError) || !busyErrors.has(thrown)) throw thrown;
      error = thrown;
    }
    const wait = retryWait(settings, deadline, error, busyErrors.get(error)!, retries);
    if (wait instanceof ModelError) throw wait;
    try {
      await sleep(wait, undefined, { signal: deadline.signal });
    } catch (aborted) {
      throw new ModelError('unavailable', `${settings.id}: ${deadline.describe(aborted)} while waiting ${seconds(wait)} to retry a ${busyErrors.get(error)} call; nothing was generated, safe to repeat`, null, error.retryAfterMs);
    }
  }
}

/** How long to wait before the next attempt, or the error that gives up (with why). */
function retryWait(settings: RetryPolicy, deadline: RetryDeadline, error: ModelError, reason: BusyReason, retries: number): number | ModelError {
  const window = error.retryAfterMs;
  const attempts = `${retries + 1} attempt${retries === 0 ? '' : 's'}`;
  const giveUp = (why: string) => new ModelError(error.kind, `${error.message}; ${why}`, error.usage, window);
  if (window === null && reason === 'rate-limited') return retries === 0 ? error : giveUp(`gave up after ${attempts}: the provider named no window to wait for`);
  if (retries >= settings.rateLimitRetries) return settings.rateLimitRetries === 0 ? error : giveUp(`gave up after ${attempts} (${settings.rateLimitRetries} ${settings.rateLimitRetries === 1 ? 'retry' : 'retries'}, the cap)`);
  const wait = window ?? overloadBackoff(retries);
  const comeBack = window === null ? '' : `the provider said to come back in ${seconds(window)} (at ${new Date(Date.now() + window).toISOString()})`;
  if (window !== null && window > settings.maxRetryWaitMs) return giveUp(`${comeBack}, longer than the ${seconds(settings.maxRetryWaitMs)} one wait may take; not retried (${attempts})`);
  if (wait >= deadline.remainingMs()) {
    const why = window === null ? `no time left before this call's deadline for a ${seconds(wait)} backoff` : `${comeBack}, after this call's deadline`;
    return giveUp(`${why}; not retried (${attempts})`);
  }
  return wait;
}

/** 0.5 s, 1 s, 2 s, ... capped, each drawn between half and all of its step (equal jitter). */
function overloadBackoff(retries: number): number {
  const step = Math.min(OVERLOAD_BACKOFF_CAP_MS, OVERLOAD_BACKOFF_MS * 2 ** retries);
  return Math.ceil(step / 2 + (Math.random() * step) / 2);
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s` : `${Math.ceil(ms / 1000)} s`;
}
