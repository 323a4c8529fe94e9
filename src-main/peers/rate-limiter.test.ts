/**
 * The token bucket under an injected clock: a burst passes then stops with a usable
 * retryAfterMs, time refills it, keys do not share buckets, and memory stays bounded however
 * many keys callers invent.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SESSION_CREATION_RATE,
  DEFAULT_SESSION_REQUEST_RATE,
  RateLimiter,
  sessionCreationLimiter,
  sessionRequestLimiter,
} from './rate-limiter';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms), set: (ms: number) => void (t = ms) };
}

function takeMany(limiter: RateLimiter, key: string, n: number) {
  let allowed = 0;
  for (let i = 0; i < n; i++) if (limiter.take(key).ok) allowed++;
  return allowed;
}

describe('RateLimiter', () => {
  it('allows a burst, then refuses with the time until one token is back', () => {
    const c = clock();
    const limiter = new RateLimiter({ ratePerSecond: 20, burst: 20, now: c.now });
    expect(takeMany(limiter, '10.0.0.1', 20)).toBe(20);
    expect(limiter.take('10.0.0.1')).toEqual({ ok: false, retryAfterMs: 50 });
    c.advance(49);
    const early = limiter.take('10.0.0.1');
    expect(early.ok).toBe(false);
    if (!early.ok) expect(early.retryAfterMs).toBe(1);
    c.advance(1);
    expect(limiter.take('10.0.0.1')).toEqual({ ok: true });
    expect(limiter.take('10.0.0.1').ok).toBe(false);
  });

  it('refills at the rate over injected time, never above the burst', () => {
    const c = clock();
    const limiter = new RateLimiter({ ratePerSecond: 200, burst: 200, now: c.now });
    expect(takeMany(limiter, 's', 500)).toBe(200);
    c.advance(100); // 20 tokens
    expect(takeMany(limiter, 's', 100)).toBe(20);
    c.advance(60_000); // capped at 200
    expect(takeMany(limiter, 's', 1000)).toBe(200);
  });

  it('waiting exactly retryAfterMs always succeeds (property, awkward rates included)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 5000, noNaN: true }),
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.integer({ min: 0, max: 2000 }), { maxLength: 20 }),
        (rate, burst, gaps) => {
          const c = clock();
          const limiter = new RateLimiter({ ratePerSecond: rate, burst, now: c.now });
          for (const gap of gaps) {
            c.advance(gap);
            limiter.take('k');
          }
          takeMany(limiter, 'k', burst + 1);
          const refused = limiter.take('k');
          expect(refused.ok).toBe(false);
          if (refused.ok) return;
          expect(refused.retryAfterMs).toBeGreaterThanOrEqual(1);
          expect(refused.retryAfterMs).toBeLessThanOrEqual(Math.ceil(1000 / rate) + 1);
          c.advance(refused.retryAfterMs);
          expect(limiter.take('k').ok).toBe(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps keys independent', () => {
    const c = clock();
    const limiter = new RateLimiter({ ratePerSecond: 5, now: c.now });
    expect(takeMany(limiter, 'a', 10)).toBe(5);
    expect(takeMany(limiter, 'b', 10)).toBe(5);
    expect(limiter.take('a').ok).toBe(false);
    limiter.forget('a');
    expect(limiter.take('a').ok).toBe(true);
  });

  it('grants nothing when the clock steps backwards', () => {
    const c = clock(10_000);
    const limiter = new RateLimiter({ ratePerSecond: 1, now: c.now });
    expect(limiter.take('k').ok).toBe(true);
    c.set(0);
    expect(limiter.take('k').ok).toBe(false);
    c.set(10_999);
    expect(limiter.take('k').ok).toBe(false);
    c.set(11_000);
    expect(limiter.take('k').ok).toBe(true);
  });

  it('stays within maxKeys with 100k distinct keys, evicting the least recently used', () => {
    const c = clock();
    const limiter = new RateLimiter({ ratePerSecond: 1, burst: 1, now: c.now, maxKeys: 1000 });
    expect(limiter.take('hot').ok).toBe(true);
    for (let i = 0; i < 100_000; i++) {
      limiter.take(`key-${i}`);
      if (i % 500 === 0) limiter.take('hot'); // recently used: survives the churn
      expect(limiter.size).toBeLessThanOrEqual(1000);
    }
    expect(limiter.size).toBe(1000);
    expect(limiter.take('hot').ok).toBe(false); // still remembered, still empty
    expect(limiter.take('key-99999').ok).toBe(false);
    expect(limiter.take('key-0').ok).toBe(true); // evicted long ago: a fresh bucket
  });

  it('defaults the burst to one second of rate and refuses nonsense options', () => {
    const c = clock();
    expect(takeMany(new RateLimiter({ ratePerSecond: 7, now: c.now }), 'k', 100)).toBe(7);
    expect(takeMany(new RateLimiter({ ratePerSecond: 0.5, now: c.now }), 'k', 100)).toBe(1);
    expect(() => new RateLimiter({ ratePerSecond: 0 })).toThrow(RangeError);
    expect(() => new RateLimiter({ ratePerSecond: Number.NaN })).toThrow(RangeError);
    expect(() => new RateLimiter({ ratePerSecond: 1, burst: 0.5 })).toThrow(RangeError);
    expect(() => new RateLimiter({ ratePerSecond: 1, maxKeys: 0 })).toThrow(RangeError);
  });

  it('ships the protocol defaults: 200/s per session, 20/s session creations per IP', () => {
    const c = clock();
    expect(DEFAULT_SESSION_REQUEST_RATE).toBe(200);
    expect(DEFAULT_SESSION_CREATION_RATE).toBe(20);
    expect(takeMany(sessionRequestLimiter({ now: c.now }), 'sess_1', 1000)).toBe(200);
    const creation = sessionCreationLimiter({ now: c.now });
    expect(takeMany(creation, '203.0.113.10', 100)).toBe(20);
    expect(takeMany(creation, '203.0.113.11', 100)).toBe(20);
  });
});
