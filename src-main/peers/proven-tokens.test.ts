/**
 * ProvenTokens: a session's second request skips the parse and the HMAC (what the cache is
 * for), and nothing else about verification changes: revocation, the clock and the caller's IP
 * are checked on every request, forgeries never get in, a rotated secret forgets every proof,
 * and the number kept is bounded. HMACs are counted by wrapping node:crypto's createHmac, the
 * one place a signature is computed.
 */
import type * as NodeCrypto from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';

const hmacs = vi.hoisted(() => ({ count: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof NodeCrypto>();
  const createHmac: typeof crypto.createHmac = (...args: Parameters<typeof crypto.createHmac>) => {
    hmacs.count += 1;
    return crypto.createHmac(...args);
  };
  return { ...crypto, default: { ...crypto, createHmac }, createHmac };
});

const { mintSession, ProvenTokens, SessionBook, verifySession } = await import('./session-token');

const SECRET = 'mySharedSecret';
const T0 = 1_700_000_000_000;
const IP = '203.0.113.10';

function mint(ttlSeconds = 3600, secret = SECRET) {
  return mintSession({ secret, clientIp: IP, ttlSeconds, now: T0 }).sessionId;
}

describe('ProvenTokens', () => {
  let proven: InstanceType<typeof ProvenTokens>;
  beforeEach(() => {
    proven = new ProvenTokens();
  });
  const verify = (token: string, overrides: Partial<Parameters<typeof verifySession>[0]> = {}) =>
    verifySession({ secret: SECRET, token, observedIp: IP, now: T0, clockSkewSeconds: 300, proven, ...overrides });

  it("computes a token's HMAC once: later requests with it get the same verdict without one", () => {
    const token = mint();
    const before = hmacs.count;
    const first = verify(token);
    expect(hmacs.count - before).toBe(1);
    const again = verify(token, { now: T0 + 1000 });
    const third = verify(token, { now: T0 + 2000 });
    expect(hmacs.count - before).toBe(1);
    expect(first.ok).toBe(true);
    expect(again).toEqual(first);
    expect(third).toEqual(first);
    // Without the cache every request signs again.
    verifySession({ secret: SECRET, token, observedIp: IP, now: T0 });
    expect(hmacs.count - before).toBe(2);
  });

  it('still refuses a proven token revoked since, from another IP, or past its expiry (and then forgets it)', () => {
    const token = mint(60);
    const book = new SessionBook();
    expect(verify(token, { book }).ok).toBe(true);
    expect(verify(token, { observedIp: '203.0.113.11', book })).toEqual({ ok: false, reason: 'wrong-ip' });
    expect(verify(token, { now: T0 + 61_000 })).toEqual({ ok: false, reason: 'expired' });
    expect(proven.size).toBe(0);
    expect(verify(token).ok).toBe(true);
    expect(book.revoke(token, T0)).toBe(true);
    expect(verify(token, { book })).toEqual({ ok: false, reason: 'revoked' });
  });

  it('keeps no forgery and no mutation of a proven token', () => {
    const token = mint();
    expect(verify(token).ok).toBe(true);
    const [body, mac] = token.split('.') as [string, string];
    const flipped = `${body}.${mac.slice(0, -1)}${mac.endsWith('0') ? '1' : '0'}`;
    expect(verify(flipped)).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verify(mint(3600, 'another secret'))).toEqual({ ok: false, reason: 'bad-signature' });
    expect(verify('not a token')).toEqual({ ok: false, reason: 'malformed' });
    expect(proven.size).toBe(1);
  });

  it('forgets every proof when asked under another secret (a rotated one)', () => {
    const token = mint();
    expect(verify(token).ok).toBe(true);
    expect(verify(token, { secret: 'rotated secret' })).toEqual({ ok: false, reason: 'bad-signature' });
    expect(proven.size).toBe(0);
    const rotated = mint(3600, 'rotated secret');
    expect(verify(rotated, { secret: 'rotated secret' }).ok).toBe(true);
    expect(verify(token, { secret: 'rotated secret' })).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('serves no proof for a byte-array secret, which could change in place', () => {
    const bytes = new TextEncoder().encode(SECRET);
    const token = mintSession({ secret: bytes, clientIp: IP, ttlSeconds: 3600, now: T0 }).sessionId;
    expect(verify(token, { secret: bytes }).ok).toBe(true);
    expect(proven.size).toBe(0);
    bytes[0] = 0;
    expect(verify(token, { secret: bytes })).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('holds at most maxEntries proofs, dropping the oldest', () => {
    const small = new ProvenTokens(3);
    const tokens = Array.from({ length: 5 }, () => mint());
    for (const token of tokens) expect(verifySession({ secret: SECRET, token, observedIp: IP, now: T0, proven: small }).ok).toBe(true);
    expect(small.size).toBe(3);
    expect(small.get(SECRET, tokens[0]!, T0)).toBeUndefined();
    expect(small.get(SECRET, tokens[4]!, T0)).toBeDefined();
  });
});
