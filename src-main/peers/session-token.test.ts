/**
 * Session tokens: the protocol's one rule (docs/PEER-PROTOCOL.md, "Session token": HMAC, clock
 * skew, `now <= issued_at + ttl`, the caller's IP) checked one way whoever minted the token,
 * hostile input refused without throwing, and any mutation of a valid token refused (a fast-check
 * property, since "we tried a few bit flips" is the weak form of that claim).
 */
import { createHmac } from 'node:crypto';
import { inspect } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalIp,
  labelOf,
  MAX_SESSION_TTL_SECONDS,
  mintSession,
  redactSession,
  sameIp,
  SessionBook,
  verifySession,
} from './session-token';

const SECRET = 'mySharedSecret';
const T0 = 1_700_000_000_000; // ms; a whole second
const IP = '203.0.113.10';

function mint(overrides: Partial<Parameters<typeof mintSession>[0]> = {}) {
  return mintSession({ secret: SECRET, clientIp: IP, ttlSeconds: 3600, now: T0, ...overrides });
}

function verify(token: string, overrides: Partial<Parameters<typeof verifySession>[0]> = {}) {
  return verifySession({ secret: SECRET, token, observedIp: IP, now: T0, clockSkewSeconds: 300, ...overrides });
}

/** The same token with its base64url body padded to a multiple of four, as some encoders write it. */
function padded(token: string): string {
  const [body = '', mac = ''] = token.split('.');
  return `${body}${'='.repeat((4 - (body.length % 4)) % 4)}.${mac}`;
}

/** A token over any payload text, signed as a peer (or a client holding the secret) would. */
function sign(payload: string, secret = SECRET): string {
  const bytes = Buffer.from(payload, 'latin1');
  return `${bytes.toString('base64url')}.${createHmac('sha256', secret).update(bytes).digest('hex')}`;
}

describe('mintSession / verifySession', () => {
  it('round-trips, in the protocol format', () => {
    const minted = mint({ nonce: 'a1b2c3d4e5f60718' });
    const [payload, mac] = minted.sessionId.split('.');
    expect(Buffer.from(payload ?? '', 'base64url').toString()).toBe(`${IP}:a1b2c3d4e5f60718:1700000000:3600`);
    expect(mac).toBe(createHmac('sha256', SECRET).update(Buffer.from(payload ?? '', 'base64url')).digest('hex'));
    expect(minted.sessionId).not.toContain('=');
    expect(minted).toMatchObject({ clientIp: IP, issuedAt: T0, expiresAt: T0 + 3600_000, ttl: 3600 });
    expect(verify(minted.sessionId)).toEqual({
      ok: true,
      clientIp: IP,
      issuedAt: T0,
      ttl: 3600,
      expiresAt: T0 + 3600_000,
      nonce: 'a1b2c3d4e5f60718',
      digest: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
  });

  it('draws a fresh random nonce per session', () => {
    expect(mint().sessionId).not.toBe(mint().sessionId);
  });

  it('accepts a secret given as bytes, and refuses a token signed with another secret', () => {
    const key = Buffer.from('00112233445566778899aabbccddeeff', 'hex');
    const minted = mint({ secret: key });
    expect(verify(minted.sessionId, { secret: key }).ok).toBe(true);
    expect(verify(minted.sessionId)).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('is valid up to and including issued_at + ttl, and expired one millisecond later', () => {
    const { sessionId } = mint({ ttlSeconds: 60 });
    expect(verify(sessionId, { now: T0 + 60_000 }).ok).toBe(true);
    expect(verify(sessionId, { now: T0 + 60_001 })).toEqual({ ok: false, reason: 'expired' });
  });

  it('binds a client-minted token by its own TTL too (the split-brain bug)', () => {
    // A peer in client mode mints for itself with the shared secret; the server never saw it.
    const clientMinted = sign(`${IP}:deadbeef:${T0 / 1000}:7200`);
    expect(verify(clientMinted, { now: T0 + 7_000_000 }).ok).toBe(true);
    expect(verify(clientMinted, { now: T0 + 7_200_001 })).toEqual({ ok: false, reason: 'expired' });
    // And the book, which never saw it, changes nothing.
    expect(verify(clientMinted, { now: T0 + 7_200_001, book: new SessionBook() })).toEqual({ ok: false, reason: 'expired' });
  });

  it('accepts issued_at up to the clock skew in the future and refuses beyond it', () => {
    const { sessionId } = mint({ now: T0 + 300_000 });
    expect(verify(sessionId, { now: T0 }).ok).toBe(true);
    const beyond = mint({ now: T0 + 301_000 });
    expect(verify(beyond.sessionId, { now: T0 })).toEqual({ ok: false, reason: 'future' });
    expect(verify(beyond.sessionId, { now: T0, clockSkewSeconds: 0 })).toEqual({ ok: false, reason: 'future' });
    expect(verify(beyond.sessionId, { now: T0, clockSkewSeconds: 301 }).ok).toBe(true);
  });

  it('refuses a forged future-dated token even when it is validly signed', () => {
    const forged = sign(`${IP}:00:${T0 / 1000 + 10 * 365 * 86400}:3600`);
    expect(verify(forged)).toEqual({ ok: false, reason: 'future' });
  });

  it('refuses a caller whose IP is not the token IP', () => {
    const { sessionId } = mint();
    expect(verify(sessionId, { observedIp: '203.0.113.11' })).toEqual({ ok: false, reason: 'wrong-ip' });
    expect(verify(sessionId, { observedIp: '::ffff:203.0.113.11' })).toEqual({ ok: false, reason: 'wrong-ip' });
    expect(verify(sessionId, { observedIp: 'not-an-ip' })).toEqual({ ok: false, reason: 'wrong-ip' });
    expect(verify(sessionId, { observedIp: '' })).toEqual({ ok: false, reason: 'wrong-ip' });
  });

  it('treats an IPv4-mapped IPv6 caller as its IPv4 address, both ways round', () => {
    expect(verify(mint().sessionId, { observedIp: `::ffff:${IP}` }).ok).toBe(true);
    expect(verify(mint().sessionId, { observedIp: '::FFFF:cb00:710a' }).ok).toBe(true);
    const mintedMapped = mint({ clientIp: `::ffff:${IP}` });
    expect(mintedMapped.clientIp).toBe(IP);
    expect(verify(mintedMapped.sessionId).ok).toBe(true);
    // A client that wrote the mapped form into its own token is bound the same way.
    const clientMinted = sign(`0:0:0:0:0:ffff:${IP}:ab:${T0 / 1000}:60`);
    expect(verify(clientMinted)).toMatchObject({ ok: true, clientIp: IP });
  });

  it('compares IPv6 addresses in canonical form, parsing the payload from the right', () => {
    const loop = mint({ clientIp: '0:0::1' });
    expect(Buffer.from(loop.sessionId.split('.')[0] ?? '', 'base64url').toString()).toMatch(/^::1:[0-9a-f]+:\d+:3600$/);
    expect(verify(loop.sessionId, { observedIp: '::1' }).ok).toBe(true);
    expect(verify(loop.sessionId, { observedIp: '0000:0000:0000:0000:0000:0000:0000:0001' }).ok).toBe(true);
    expect(verify(loop.sessionId, { observedIp: '127.0.0.1' })).toEqual({ ok: false, reason: 'wrong-ip' });
    const v6 = mint({ clientIp: '2001:DB8:0:0:1:0:0:1' });
    expect(v6.clientIp).toBe('2001:db8::1:0:0:1');
    expect(verify(v6.sessionId, { observedIp: '2001:db8:0000::1:0:0:1' }).ok).toBe(true);
    expect(verify(v6.sessionId, { observedIp: '2001:db8::1:0:0:2' })).toEqual({ ok: false, reason: 'wrong-ip' });
  });

  it('accepts base64url with padding on input (one or two "="), and only correct padding', () => {
    // 31 bytes -> 42 chars (two "="); 32 bytes -> 43 chars (one "=").
    for (const [nonce, pad] of [['ab', '=='], ['abc', '=']] as const) {
      const token = sign(`${IP}:${nonce}:${T0 / 1000}:3600`);
      const [body, mac] = token.split('.');
      expect(padded(token)).toBe(`${body}${pad}.${mac}`);
      expect(verify(padded(token)).ok).toBe(true);
      expect(verify(token).ok).toBe(true);
      for (const wrong of ['=', '==', '===', '====', '=A'].filter((p) => p !== pad)) {
        expect(verify(`${body}${wrong}.${mac}`), wrong).toEqual({ ok: false, reason: 'malformed' });
      }
    }
    const whole = sign(`${IP}:abcd:${T0 / 1000}:3600`); // 33 bytes: no padding at all
    expect(padded(whole)).toBe(whole);
    const [body, mac] = whole.split('.');
    expect(verify(`${body}====.${mac}`)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuses a token minted for one peer IP when replayed from the other (two peers, one secret)', () => {
    const forA = mint({ clientIp: '127.0.0.1' });
    expect(verify(forA.sessionId, { observedIp: '127.0.0.2' })).toEqual({ ok: false, reason: 'wrong-ip' });
  });

  it('refuses bad mint arguments loudly (they come from our code)', () => {
    expect(() => mint({ secret: '' })).toThrow(TypeError);
    expect(() => mint({ clientIp: 'example.com' })).toThrow(/not an IP/);
    expect(() => mint({ ttlSeconds: 0 })).toThrow(RangeError);
    expect(() => mint({ ttlSeconds: 1.5 })).toThrow(RangeError);
    expect(() => mint({ ttlSeconds: MAX_SESSION_TTL_SECONDS + 1 })).toThrow(RangeError);
    expect(() => mint({ nonce: 'xyz' })).toThrow(/hex/);
  });
});

describe('tampering and malformed input', () => {
  it('refuses a token with any single bit flipped in the payload or the HMAC', () => {
    const { sessionId } = mint({ nonce: '0123456789abcdef' });
    const [body = '', mac = ''] = sessionId.split('.');
    const payload = Buffer.from(body, 'base64url');
    for (let i = 0; i < payload.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const flipped = Buffer.from(payload);
        flipped[i] = (flipped[i] ?? 0) ^ (1 << bit);
        const verdict = verify(`${flipped.toString('base64url')}.${mac}`);
        expect(verdict.ok).toBe(false);
      }
    }
    const macBytes = Buffer.from(mac, 'hex');
    for (let i = 0; i < macBytes.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const flipped = Buffer.from(macBytes);
        flipped[i] = (flipped[i] ?? 0) ^ (1 << bit);
        expect(verify(`${body}.${flipped.toString('hex')}`)).toEqual({ ok: false, reason: 'bad-signature' });
      }
    }
  });

  it('refuses a payload edited to stretch its own TTL', () => {
    const { sessionId } = mint({ ttlSeconds: 60, nonce: 'ab' });
    const [, mac] = sessionId.split('.');
    const stretched = Buffer.from(`${IP}:ab:${T0 / 1000}:86400`).toString('base64url');
    expect(verify(`${stretched}.${mac}`, { now: T0 + 120_000 })).toEqual({ ok: false, reason: 'bad-signature' });
  });

  it('refuses non-canonical base64 (unused low bits set) even though it decodes to the signed payload', () => {
    const token = sign(`${IP}:abc:${T0 / 1000}:3600`); // 32 bytes: the last char carries 2 unused bits
    const [body = '', mac] = token.split('.');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet.indexOf(body.at(-1) ?? 'A');
    const sibling = `${body.slice(0, -1)}${alphabet[last ^ 1]}`;
    expect(Buffer.from(sibling, 'base64url').equals(Buffer.from(body, 'base64url'))).toBe(true);
    expect(verify(`${sibling}.${mac}`)).toEqual({ ok: false, reason: 'malformed' });
  });

  it('refuses malformed tokens as malformed, without throwing, even when validly signed', () => {
    const now = T0 / 1000;
    const mac = 'a'.repeat(64);
    const cases: unknown[] = [
      '',
      'no-dot-at-all',
      `.${mac}`,
      `${Buffer.from(`${IP}:ab:${now}:60`).toString('base64url')}.`,
      `${Buffer.from(`${IP}:ab:${now}:60`).toString('base64url')}.${mac}.${mac}`,
      `!!!notbase64!!!.${mac}`,
      `QQ===.${mac}`,
      `Q.${mac}`,
      `${Buffer.from(`${IP}:ab:${now}:60`).toString('base64url')}.${mac.toUpperCase()}`,
      `${Buffer.from(`${IP}:ab:${now}:60`).toString('base64url')}.${mac.slice(2)}`,
      `${'A'.repeat(600)}.${mac}`,
      sign(`${IP}:ab:${now}`), // three fields
      sign(`ab:${now}:60`),
      sign(`${IP}:ab:${now}:60:extra`), // five fields: "203.0.113.10:ab" is not an IP
      sign(`${IP}:zz:${now}:60`), // nonce not hex
      sign(`${IP}::${now}:60`), // empty nonce
      sign(`${IP}:ab:${now}.5:60`),
      sign(`${IP}:ab:${now}:60.0`),
      sign(`${IP}:ab:${now}:-60`),
      sign(`${IP}:ab:-${now}:60`),
      sign(`${IP}:ab:${now}:0`),
      sign(`${IP}:ab:${now}:1e3`),
      sign(`${IP}:ab:${now}:0x10`),
      sign(`${IP}:ab:${now}:060`),
      sign(`${IP}:ab:${now}: 60`),
      sign(`${IP}:ab:${now}:99999999999999999999999`),
      sign(`${IP}:ab:99999999999999999999:60`),
      sign(`${IP}:ab:${now}:${MAX_SESSION_TTL_SECONDS + 1}`),
      sign(`example.com:ab:${now}:60`),
      sign(`1.2.3.4\u0000:ab:${now}:60`),
      sign(`\u00e9:ab:${now}:60`),
      null,
      undefined,
      42,
      { toString: () => 'x' },
    ];
    for (const token of cases) {
      expect(verify(token as string), String(token)).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('property: any change to a valid token is refused', () => {
    const { sessionId } = mint({ clientIp: '2001:db8::7', nonce: 'c0ffee00c0ffee00' });
    const spellings = new Set([sessionId, padded(sessionId)]);
    const printable = fc.string({ unit: fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=.:%'.split('')), minLength: 0, maxLength: 3 });
    const mutation = fc.oneof(
      fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), text: printable }),
      fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), text: printable }),
      fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), text: fc.constant('') }),
      fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), text: fc.constant('') }),
    );
    fc.assert(
      fc.property(fc.array(mutation, { minLength: 1, maxLength: 4 }), (mutations) => {
        let token = sessionId;
        for (const { kind, at, text } of mutations) {
          const i = at % (token.length + 1);
          if (kind === 'insert') token = token.slice(0, i) + text + token.slice(i);
          else if (kind === 'delete') token = token.slice(0, i) + token.slice(i + 1);
          else if (kind === 'replace') token = token.slice(0, i) + text + token.slice(i + text.length);
          else if (i < token.length) token = token.slice(0, i) + String.fromCharCode(token.charCodeAt(i) ^ (1 << at % 7)) + token.slice(i + 1);
        }
        fc.pre(!spellings.has(token));
        const verdict = verify(token, { observedIp: '2001:db8::7' });
        expect(verdict.ok).toBe(false);
      }),
      { numRuns: 3000 },
    );
  });
});

describe('canonicalIp', () => {
  it.each([
    ['1.2.3.4', '1.2.3.4'],
    ['::ffff:1.2.3.4', '1.2.3.4'],
    ['::ffff:0102:0304', '1.2.3.4'],
    ['0:0:0:0:0:ffff:1.2.3.4', '1.2.3.4'],
    ['::1', '::1'],
    ['0:0::1', '::1'],
    ['::', '::'],
    ['2001:0DB8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:db8:0:1:0:0:0:1', '2001:db8:0:1::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['2001:db8:1:1:1:1:0:1', '2001:db8:1:1:1:1:0:1'],
    ['::1.2.3.4', '::102:304'],
    ['fe80::1%eth0', 'fe80::1%eth0'],
    // IPv4-mapped, in every spelling: its IPv4 address. The IPv4-compatible form is not mapped.
    ['::FFFF:1.2.3.4', '1.2.3.4'],
    ['::ffff:7f00:1', '127.0.0.1'],
    ['0:0:0:0:0:FFFF:0A00:0001', '10.0.0.1'],
    ['::0.0.0.1', '::1'],
    ['::ffff:0:1.2.3.4', '::ffff:0:102:304'],
    // A zone keeps a mapped address IPv6: another link, another address.
    ['::ffff:1.2.3.4%eth0', '::ffff:102:304%eth0'],
    // Zero runs: the longest of two or more groups is compressed, the first of two equal ones,
    // never a single zero group.
    ['0:0:0:0:0:0:0:0', '::'],
    ['1:0:0:0:0:0:0:0', '1::'],
    ['1:0:0:1:0:0:0:1', '1:0:0:1::1'],
    ['1:0:0:2:0:0:3:4', '1::2:0:0:3:4'],
    ['1:0:2:3:4:5:6:7', '1:0:2:3:4:5:6:7'],
    ['1::2:3:4:5:6:7', '1:0:2:3:4:5:6:7'],
    ['2001:db8::0:1', '2001:db8::1'],
    // Upper case and leading zeros are spellings; a zone is kept as given.
    ['FE80::ABCD%Eth0', 'fe80::abcd%Eth0'],
    ['2001:DB8:00AB::0CD', '2001:db8:ab::cd'],
  ])('%s -> %s', (input, expected) => {
    expect(canonicalIp(input)).toBe(expected);
  });

  it('a token minted for any spelling of an address binds its canonical form, in the payload bytes too', () => {
    for (const [spelled, canonical] of [
      ['0:0:0:0:0:FFFF:CB00:710A', IP],
      ['2001:0DB8:0:0:0:0:0:0001', '2001:db8::1'],
    ] as const) {
      const minted = mint({ clientIp: spelled, nonce: 'ab' });
      expect(minted.clientIp).toBe(canonical);
      expect(minted.sessionId).toBe(sign(`${canonical}:ab:${T0 / 1000}:3600`));
      expect(verify(minted.sessionId, { observedIp: canonical }).ok).toBe(true);
      expect(verify(minted.sessionId, { observedIp: spelled.toLowerCase() }).ok).toBe(true);
    }
  });

  it.each(['', '01.2.3.4', '256.1.1.1', '1.2.3', 'example.com', ':::1', '1::2::3', '::ffff:1.2.3.256', ' 1.2.3.4'])('refuses %j', (input) => {
    expect(canonicalIp(input)).toBeNull();
  });

  it('sameIp compares addresses, and never calls two non-addresses equal', () => {
    expect(sameIp('::ffff:10.0.0.1', '10.0.0.1')).toBe(true);
    expect(sameIp('nope', 'nope')).toBe(false);
  });
});

describe('SessionBook', () => {
  it('gives a verdict the digest its label and the book key on, the same for either spelling', () => {
    // The peer takes the label and the use count from the verdict's digest rather than parsing
    // and hashing the token again; they must be what redactSession and used(token) would say.
    const minted = mint();
    const book = new SessionBook();
    book.record(minted, 'peer-a');
    const plain = verify(minted.sessionId, { book });
    const pad = verify(padded(minted.sessionId), { book });
    if (!plain.ok || !pad.ok) throw new Error('a valid token was refused');
    expect(pad.digest).toBe(plain.digest);
    expect(labelOf(plain.digest)).toBe(redactSession(minted.sessionId));
    expect(labelOf(pad.digest)).toBe(redactSession(padded(minted.sessionId)));
    book.usedDigest(plain.digest, T0 + 1000);
    book.used(padded(minted.sessionId), T0 + 2000);
    expect(book.live(T0).find((e) => e.label === labelOf(plain.digest))).toMatchObject({ calls: 2, lastUsedAt: T0 + 2000 });
    expect(book.revoke(minted.sessionId, T0)).toBe(true);
    expect(book.isRevokedDigest(plain.digest)).toBe(true);
    expect(verify(padded(minted.sessionId), { book })).toEqual({ ok: false, reason: 'revoked' });
  });

  it('revokes a session before expiry, and the padded spelling is revoked too', () => {
    const book = new SessionBook();
    const minted = mint({ nonce: 'ab' }); // 31-byte payload: has a padded spelling
    book.record(minted, '203.0.113.10:51234', T0);
    expect(verify(minted.sessionId, { book }).ok).toBe(true);
    expect(book.revoke(minted.sessionId, T0)).toBe(true);
    expect(verify(minted.sessionId, { book })).toEqual({ ok: false, reason: 'revoked' });
    expect(padded(minted.sessionId)).not.toBe(minted.sessionId);
    expect(verify(padded(minted.sessionId), { book })).toEqual({ ok: false, reason: 'revoked' });
    // Another session is unaffected, and so is the same token checked without the book.
    expect(verify(mint().sessionId, { book }).ok).toBe(true);
    expect(book.liveCount(T0)).toBe(0);
  });

  it('revokes a client-minted token it never issued', () => {
    const book = new SessionBook();
    const clientMinted = sign(`${IP}:beef:${T0 / 1000}:600`);
    expect(book.revoke(clientMinted, T0)).toBe(true);
    expect(verify(clientMinted, { book })).toEqual({ ok: false, reason: 'revoked' });
    expect(book.revoke('garbage', T0)).toBe(false);
  });

  it('lists and counts live sessions, and is never consulted for expiry', () => {
    const book = new SessionBook();
    const short = mint({ ttlSeconds: 10 });
    const long = mint({ ttlSeconds: 1000 });
    book.record(short, 'a:1', T0);
    book.record(long, 'b:2', T0);
    expect(book.liveCount(T0)).toBe(2);
    expect(book.live(T0 + 11_000)).toEqual([
      { label: redactSession(long.sessionId), clientIp: IP, callerAddress: 'b:2', issuedAt: T0, expiresAt: T0 + 1_000_000, lastUsedAt: null, calls: 0 },
    ]);
    // Present in the book, but the token's own TTL has passed: expired.
    expect(verify(short.sessionId, { book, now: T0 + 11_000 })).toEqual({ ok: false, reason: 'expired' });
  });

  it('stays within its bounds: expired entries go first, then the oldest', () => {
    const book = new SessionBook({ maxEntries: 100 });
    for (let i = 0; i < 50; i++) book.record(mint({ ttlSeconds: 1 }), 'x', T0);
    for (let i = 0; i < 1000; i++) {
      book.record(mint({ now: T0 + 5000 }), 'y', T0 + 5000);
      expect(book.size).toBeLessThanOrEqual(100);
    }
    expect(book.live(T0 + 5000).every((e) => e.callerAddress === 'y')).toBe(true);
  });

  it('never forgets a live revocation: a full list throws, an expired one makes room', () => {
    const book = new SessionBook({ maxRevoked: 2 });
    expect(book.revoke(mint({ ttlSeconds: 10 }).sessionId, T0)).toBe(true);
    const kept = mint();
    expect(book.revoke(kept.sessionId, T0)).toBe(true);
    expect(() => book.revoke(mint().sessionId, T0)).toThrow(/revocation list is full/);
    expect(book.revoke(mint({ now: T0 + 20_000 }).sessionId, T0 + 20_000)).toBe(true);
    expect(book.isRevoked(kept.sessionId)).toBe(true);
    expect(book.revoke(mint().sessionId, T0 + 4_000_000)).toBe(false); // already expired
  });

  it('holds labels, never tokens', () => {
    const book = new SessionBook();
    const minted = mint();
    book.record(minted, 'c:3', T0);
    book.revoke(mint().sessionId, T0);
    const [body = '', mac = ''] = minted.sessionId.split('.');
    for (const text of [JSON.stringify(book.live(T0)), inspect(book, { depth: 10, showHidden: true })]) {
      expect(text).not.toContain(body);
      expect(text).not.toContain(mac);
    }
  });
});

describe('redactSession', () => {
  it('is short, stable across padding, distinct per session, and contains no part of the token', () => {
    const minted = mint({ nonce: 'ab' });
    const label = redactSession(minted.sessionId);
    expect(label).toMatch(/^sess_[0-9a-f]{12}$/);
    const [, mac = ''] = minted.sessionId.split('.');
    expect(redactSession(padded(minted.sessionId))).toBe(label);
    expect(redactSession(mint().sessionId)).not.toBe(label);
    expect(mac).not.toContain(label.slice(5));
    expect(redactSession('not a token')).toMatch(/^sess_[0-9a-f]{12}$/);
  });
});
