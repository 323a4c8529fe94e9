/**
 * Token-bucket rate limits for the MCPv2 peer server, keyed by any string: the session id for
 * requests (`MCPV2_RATE_LIMIT`, 200/s per session), the client IP for requests of all its
 * sessions together (`MCPV2_IP_RATE_LIMIT`, twice the per-session rate unless set), and the
 * client IP for session creation (`MCPV2_SESSION_RATE_LIMIT`, 20/s per IP).
 *
 * What is true, and why:
 *
 * - All three exist because any one alone is bypassed. The protocol found session creation
 *   unthrottled: a client dodged the per-session limit by minting a fresh session for every
 *   request. Limiting creation per IP is not enough either: twenty sessions, created within
 *   the creation limit, sent 4,000 calls in 0.39 s, each session within its own 200/s. So
 *   every request also spends from its client IP's budget, and the total from one address is
 *   bounded whatever number of sessions (or peer credentials) it holds.
 * - Each key holds at most `burst` tokens and earns `ratePerSecond` a second; a request takes
 *   one. A refusal says how long until one token is back (`retryAfterMs`, rounded up, so
 *   waiting exactly that long succeeds), which the server returns as `Retry-After` with 429 /
 *   -32005.
 * - Memory is bounded by `maxKeys`, whatever the callers send: keys are kept in
 *   least-recently-used order and the oldest are evicted beyond the bound. Evicting a key whose
 *   bucket has refilled loses nothing (a new bucket starts full, exactly what it would hold);
 *   evicting one that is still draining forgives its debt, which needs `maxKeys` distinct keys
 *   active within one refill window, and minting that many keys is what the per-IP creation
 *   limit makes expensive.
 * - Deterministic: time comes from the injected clock (ms), never from a timer. A clock that
 *   steps backwards refills nothing; it never grants tokens.
 */

/** `MCPV2_RATE_LIMIT` default: requests per second per session. */
export const DEFAULT_SESSION_REQUEST_RATE = 200;
/** `MCPV2_SESSION_RATE_LIMIT` default: session creations per second per client IP. */
export const DEFAULT_SESSION_CREATION_RATE = 20;
export const DEFAULT_MAX_KEYS = 10_000;

export interface RateLimiterOptions {
  ratePerSecond: number;
  /** Largest burst a quiet key may spend at once; default one second's worth (at least 1). */
  burst?: number;
  /** Milliseconds; default `Date.now`. */
  now?: () => number;
  /** Keys remembered at most; the least recently used are evicted beyond it. */
  maxKeys?: number;
}

export type RateDecision = { ok: true } | { ok: false; retryAfterMs: number };

interface Bucket {
  tokens: number;
  at: number;
}

/** Float slack so that waiting exactly `retryAfterMs` is never refused by a rounding error. */
const EPSILON = 1e-9;

export class RateLimiter {
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly maxKeys: number;
  readonly #now: () => number;
  /** Insertion order is recency order: a key is deleted and re-set on every take. */
  readonly #buckets = new Map<string, Bucket>();

  constructor(options: RateLimiterOptions) {
    const { ratePerSecond, burst = Math.max(1, ratePerSecond), now = Date.now, maxKeys = DEFAULT_MAX_KEYS } = options;
    if (!Number.isFinite(ratePerSecond) || ratePerSecond <= 0) throw new RangeError(`ratePerSecond must be a positive number, got ${ratePerSecond}`);
    if (!Number.isFinite(burst) || burst < 1) throw new RangeError(`burst must be at least 1, got ${burst}`);
    if (!Number.isSafeInteger(maxKeys) || maxKeys < 1) throw new RangeError(`maxKeys must be a positive integer, got ${maxKeys}`);
    this.ratePerSecond = ratePerSecond;
    this.burst = burst;
    this.maxKeys = maxKeys;
    this.#now = now;
  }

  /** Spend one token for `key`, or say how long until one is available. */
  take(key: string): RateDecision {
    const now = this.#now();
    const bucket = this.#refilled(key, now);
    this.#buckets.delete(key);
    this.#buckets.set(key, bucket);
    this.#evictBeyondBound();
    const deficit = 1 - bucket.tokens;
    if (deficit <= 2 * EPSILON) {
      bucket.tokens = Math.max(0, bucket.tokens - 1);
      return { ok: true };
    }
    // The wait covers the deficit less one EPSILON, and the check above forgives two: so
    // 0.98 tokens at 20/s says 1 ms (not the 2 that (0.02 * 1000) / 20 = 1.0000000000000009
    // would round up to), and taking after exactly that wait succeeds.
    return { ok: false, retryAfterMs: Math.max(1, Math.ceil(((deficit - EPSILON) * 1000) / this.ratePerSecond)) };
  }

  /** Forget a key (its session was revoked or closed). */
  forget(key: string): void {
    this.#buckets.delete(key);
  }

  /** Keys currently remembered; never more than `maxKeys`. */
  get size(): number {
    return this.#buckets.size;
  }

  #refilled(key: string, now: number): Bucket {
    const bucket = this.#buckets.get(key);
    if (!bucket) return { tokens: this.burst, at: now };
    const elapsed = now - bucket.at;
    if (elapsed > 0) {
      bucket.tokens = Math.min(this.burst, bucket.tokens + (elapsed * this.ratePerSecond) / 1000);
      bucket.at = now;
    }
    return bucket;
  }

  #evictBeyondBound(): void {
    for (const key of this.#buckets.keys()) {
      if (this.#buckets.size <= this.maxKeys) return;
      this.#buckets.delete(key);
    }
  }
}

/** The per-session request limiter with the protocol's default (200/s, docs/PEER-PROTOCOL.md). */
export function sessionRequestLimiter(options: Partial<RateLimiterOptions> = {}): RateLimiter {
  return new RateLimiter({ ratePerSecond: DEFAULT_SESSION_REQUEST_RATE, ...options });
}

/** The per-client-IP session-creation limiter with the protocol's default (20/s, docs/PEER-PROTOCOL.md). */
export function sessionCreationLimiter(options: Partial<RateLimiterOptions> = {}): RateLimiter {
  return new RateLimiter({ ratePerSecond: DEFAULT_SESSION_CREATION_RATE, ...options });
}
