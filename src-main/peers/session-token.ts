/**
 * MCPv2 session tokens (docs/PEER-PROTOCOL.md, "Session token"), exactly the protocol's wire format:
 *
 *     sessionId = base64url(payload) + "." + hex(HMAC-SHA256(secret, payload))
 *     payload   = "<client_ip>:<nonce>:<issued_at>:<ttl>"      (issued_at, ttl: integer seconds)
 *
 * What is true, and why:
 *
 * - One rule, checked one way, every time. A token is valid iff its HMAC matches, `issued_at`
 *   is not more than the clock skew in the future, `now <= issued_at + ttl`, and the caller's
 *   observed IP is the IP inside the token. The protocol's split-brain expiry bug (docs/PEER-PROTOCOL.md)
 *   was a server that checked sessions in its in-memory dict against one timeout and every
 *   other validly signed token (including the ones peers mint for themselves in client mode)
 *   against a different, tighter window: two tokens signed a second apart had different
 *   lifetimes depending on bookkeeping, not intent. The TTL therefore lives inside the signed
 *   payload, so the token alone decides its lifetime, and nobody can stretch it without the
 *   secret. `SessionBook` is optional bookkeeping (listing, counting, early revocation) and is
 *   never consulted for expiry.
 * - A token minted by anyone holding the secret is exactly as valid as one this peer issued.
 *   That is the protocol's shared-secret trust model (its stated ceiling, not a bug we can fix in
 *   the token): "do you know the string".
 * - The IP binding compares addresses, not spellings: an IPv4-mapped IPv6 address
 *   (`::ffff:1.2.3.4`, what a dual-stack socket reports for an IPv4 caller) equals its IPv4
 *   address, and IPv6 addresses compare in canonical form (`0:0::1` is `::1`). An IPv6 address
 *   contains colons, so the payload is parsed from the right: the last three fields are nonce,
 *   issued_at and ttl, and everything before them is the IP.
 * - Exactly one spelling of a token verifies (apart from optional base64 padding, which is
 *   accepted on input and never produced): base64url must re-encode to the characters given
 *   (Node's decoder otherwise ignores stray characters and the unused low bits of the last
 *   character, so several strings would decode to one payload), and the HMAC is exactly 64
 *   lowercase hex digits. So a revocation keyed by the token cannot be dodged by re-spelling
 *   it, and any mutation of a valid token is refused.
 * - The HMAC is compared as raw bytes of equal length with `timingSafeEqual`, which never
 *   stops at the first differing byte. Everything checked before it (shape, lengths, field
 *   syntax) depends only on what the caller sent, never on the secret.
 * - Verification never throws on hostile input: every refusal is a reason, so the HTTP layer
 *   answers -32001 (invalid session) without a try/catch around attacker bytes.
 * - The token is a bearer credential: it is never logged, journaled or shown. `redactSession`
 *   gives the short label logs and the UI use instead, and `SessionBook` keeps only hashes (in
 *   memory and in its revocation file).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { IdentityRow, SessionRow } from '../../src-shared/vocabulary/peers';
import { loadRevocations, writeRevocations } from './revocation-file';

/** `MCPV2_SESSION_TIMEOUT` default: one hour. */
export const DEFAULT_SESSION_TTL_SECONDS = 3600;
/** `MCPV2_CLOCK_SKEW` default: how far in the future `issued_at` may be. */
export const DEFAULT_CLOCK_SKEW_SECONDS = 300;
/** Longest TTL a token may carry (a year and a day); anything longer is malformed, not "valid for ever". */
export const MAX_SESSION_TTL_SECONDS = 366 * 24 * 3600;
/** A token longer than this is refused before any decoding: the largest real one is ~250 chars. */
const MAX_TOKEN_LENGTH = 512;
/** 9999-12-31T23:59:59Z: a later `issued_at` is not a time, it is an attempt at overflow. */
const MAX_ISSUED_AT_SECONDS = 253_402_300_799;
const HMAC_HEX = /^[0-9a-f]{64}$/;
const NONCE_HEX = /^[0-9a-fA-F]{1,128}$/;
const DECIMAL = /^(0|[1-9][0-9]{0,14})$/;
const BASE64URL = /^([A-Za-z0-9_-]+)(=*)$/;
/** The payload is printable ASCII only: an IP, hex and digits (and an IPv6 zone after `%`). */
const PAYLOAD_CHARS = /^[\x21-\x7e]+$/;

export type SessionSecret = string | Uint8Array;

export interface MintSessionOptions {
  secret: SessionSecret;
  /** The caller's IP as this peer observes it (the socket's remote address). */
  clientIp: string;
  ttlSeconds: number;
  /** Milliseconds since the epoch; `issued_at` is its whole seconds. */
  now?: number;
  /** Hex; random (128 bits) when omitted. Given only by tests and replays. */
  nonce?: string;
}

export interface MintedSession {
  sessionId: string;
  /** The IP bound into the token, in canonical form. */
  clientIp: string;
  /** Milliseconds since the epoch (the payload's `issued_at` seconds x 1000). */
  issuedAt: number;
  /** Milliseconds since the epoch: `(issued_at + ttl) * 1000`; valid up to and including it. */
  expiresAt: number;
  /** Seconds, as in the payload. */
  ttl: number;
}

export type SessionRefusal = 'malformed' | 'bad-signature' | 'future' | 'expired' | 'wrong-ip' | 'revoked';

export type SessionVerdict =
  | {
      ok: true;
      clientIp: string;
      issuedAt: number;
      ttl: number;
      expiresAt: number;
      nonce: string;
      /**
       * SHA-256 of the token's one spelling, hex: what the book keys on and the label is cut
       * from (labelOf, SessionBook.usedDigest). Made once here; a request that needed the
       * label, the revocation check and the use count each parsed and hashed the token again,
       * a tenth of a loaded peer's time per ping.
       */
      digest: string;
    }
  | { ok: false; reason: SessionRefusal };

export interface VerifySessionOptions {
  secret: SessionSecret;
  token: string;
  /** The IP the request came from, as this peer observes it. */
  observedIp: string;
  /** Milliseconds since the epoch. */
  now?: number;
  clockSkewSeconds?: number;
  /** Consulted only for revocation, never for expiry. */
  book?: SessionBook;
  /** Tokens whose signature this secret already proved: a hit skips the parse and the HMAC. */
  proven?: ProvenTokens;
}

/**
 * The canonical text of an IP address, or null when `text` is not one: IPv4 as Node's strict
 * dotted quad (no leading zeros), an IPv4-mapped IPv6 address as its IPv4, other IPv6 in RFC
 * 5952 form (lowercase, no leading zeros, the longest run of two or more zero groups as `::`).
 * A zone (`%eth0`) is kept as given: two zones are two different links.
 */
export function canonicalIp(text: string): string | null {
  if (typeof text !== 'string') return null;
  if (isIPv4(text)) return text;
  // Node's check decides what is an address; ipaddr.js writes it. The zone is cut off first and
  // kept as given: ipaddr.js reads only zones of letters and digits.
  if (!isIPv6(text)) return null;
  const percent = text.indexOf('%');
  const zone = percent >= 0 ? text.slice(percent) : '';
  const bare = percent >= 0 ? text.slice(0, percent) : text;
  let address: ipaddr.IPv6;
  try {
    // ipaddr.js reads the IPv4-compatible form `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d`,
    // another address (one that would then equal the IPv4 caller a.b.c.d); written `0::a.b.c.d`
    // it reads the address as it is.
    address = ipaddr.IPv6.parse(/^::[\d.]+$/.test(bare) ? `0${bare}` : bare);
  } catch {
    return null;
  }
  if (zone === '' && address.isIPv4MappedAddress()) return address.toIPv4Address().toString();
  return address.toRFC5952String() + zone;
}

/** True when two IP texts name the same address (see `canonicalIp`); false if either is not an IP. */
export function sameIp(a: string, b: string): boolean {
  const ca = canonicalIp(a);
  return ca !== null && ca === canonicalIp(b);
}

function hmac(secret: SessionSecret, payload: Buffer): Buffer {
  return createHmac('sha256', secret).update(payload).digest();
}

function assertSecret(secret: SessionSecret): void {
  if (typeof secret === 'string' ? secret.length === 0 : !(secret instanceof Uint8Array) || secret.length === 0) {
    throw new TypeError('a session secret is a non-empty string or byte array');
  }
}

/** Issue a token for `clientIp`. Throws on bad arguments: they come from our own code, never a caller. */
export function mintSession(options: MintSessionOptions): MintedSession {
  const { secret, ttlSeconds, now = Date.now() } = options;
  assertSecret(secret);
  const clientIp = canonicalIp(options.clientIp);
  if (clientIp === null) throw new TypeError(`not an IP address: ${JSON.stringify(options.clientIp)}`);
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_SESSION_TTL_SECONDS) {
    throw new RangeError(`ttlSeconds must be an integer from 1 to ${MAX_SESSION_TTL_SECONDS}, got ${ttlSeconds}`);
  }
  const issuedAtSeconds = Math.floor(now / 1000);
  if (!Number.isSafeInteger(issuedAtSeconds) || issuedAtSeconds < 0 || issuedAtSeconds > MAX_ISSUED_AT_SECONDS) {
    throw new RangeError(`now is not a usable time: ${now}`);
  }
  const nonce = options.nonce ?? randomBytes(16).toString('hex');
  if (!NONCE_HEX.test(nonce)) throw new TypeError('a session nonce is 1 to 128 hex digits');
  const payload = Buffer.from(`${clientIp}:${nonce}:${issuedAtSeconds}:${ttlSeconds}`, 'latin1');
  return {
    sessionId: `${payload.toString('base64url')}.${hmac(secret, payload).toString('hex')}`,
    clientIp,
    issuedAt: issuedAtSeconds * 1000,
    expiresAt: (issuedAtSeconds + ttlSeconds) * 1000,
    ttl: ttlSeconds,
  };
}

interface ParsedToken {
  payload: Buffer;
  signature: Buffer;
  /** The one spelling of this token: unpadded base64url, dot, lowercase hex. */
  canonical: string;
  clientIp: string;
  nonce: string;
  issuedAtSeconds: number;
  ttlSeconds: number;
}

/** base64url that re-encodes to exactly the characters given, with optional correct padding. */
function decodeBase64UrlStrict(text: string): Buffer | null {
  const match = BASE64URL.exec(text);
  if (!match) return null;
  const body = match[1] ?? '';
  const padding = (match[2] ?? '').length;
  const remainder = body.length % 4;
  if (remainder === 1) return null;
  if (padding !== 0 && padding !== (4 - remainder) % 4) return null;
  if (padding !== 0 && remainder === 0) return null;
  const bytes = Buffer.from(body, 'base64url');
  return bytes.toString('base64url') === body ? bytes : null;
}

/** The token's parts, or null when it is not a well-formed token. Checks no signature. */
function parseToken(token: unknown): ParsedToken | null {
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) return null;
  const dot = token.indexOf('.');
  if (dot <= 0 || dot !== token.lastIndexOf('.')) return null;
  const signatureHex = token.slice(dot + 1);
  if (!HMAC_HEX.test(signatureHex)) return null;
  const payload = decodeBase64UrlStrict(token.slice(0, dot));
  if (!payload) return null;
  const text = payload.toString('latin1');
  if (!PAYLOAD_CHARS.test(text)) return null;
  // From the right: an IPv6 client IP is full of colons, the three trailing fields never are.
  const ttlAt = text.lastIndexOf(':');
  const issuedAt = ttlAt > 0 ? text.lastIndexOf(':', ttlAt - 1) : -1;
  const nonceAt = issuedAt > 0 ? text.lastIndexOf(':', issuedAt - 1) : -1;
  if (nonceAt <= 0) return null;
  const ipText = text.slice(0, nonceAt);
  const nonce = text.slice(nonceAt + 1, issuedAt);
  const issuedText = text.slice(issuedAt + 1, ttlAt);
  const ttlText = text.slice(ttlAt + 1);
  if (!NONCE_HEX.test(nonce) || !DECIMAL.test(issuedText) || !DECIMAL.test(ttlText)) return null;
  const issuedAtSeconds = Number(issuedText);
  const ttlSeconds = Number(ttlText);
  if (issuedAtSeconds > MAX_ISSUED_AT_SECONDS) return null;
  if (ttlSeconds < 1 || ttlSeconds > MAX_SESSION_TTL_SECONDS) return null;
  const clientIp = canonicalIp(ipText);
  if (clientIp === null) return null;
  return {
    payload,
    signature: Buffer.from(signatureHex, 'hex'),
    canonical: `${payload.toString('base64url')}.${signatureHex}`,
    clientIp,
    nonce,
    issuedAtSeconds,
    ttlSeconds,
  };
}

/**
 * The protocol's one rule. Order of refusals: malformed, bad-signature, revoked, future, expired,
 * wrong-ip. Nothing past 'bad-signature' is reported for a token the secret did not sign, so a
 * prober learns nothing about forged payloads beyond "not signed".
 *
 * With `proven`, a token whose signature this secret proved before skips straight to the checks
 * that depend on the request and the moment (revoked, future, expired, wrong-ip), which every
 * request still runs: see ProvenTokens.
 */
export function verifySession(options: VerifySessionOptions): SessionVerdict {
  const { secret, token, observedIp, now = Date.now(), clockSkewSeconds = DEFAULT_CLOCK_SKEW_SECONDS, book, proven: cache } = options;
  assertSecret(secret);
  let proven = cache?.get(secret, token, now);
  if (!proven) {
    const parsed = parseToken(token);
    if (!parsed) return { ok: false, reason: 'malformed' };
    const expected = hmac(secret, parsed.payload);
    // Both are 32 bytes (the hex was checked to be 64 digits): timingSafeEqual compares every byte.
    if (!timingSafeEqual(expected, parsed.signature)) return { ok: false, reason: 'bad-signature' };
    const issuedAt = parsed.issuedAtSeconds * 1000;
    proven = {
      clientIp: parsed.clientIp,
      issuedAt,
      ttl: parsed.ttlSeconds,
      expiresAt: issuedAt + parsed.ttlSeconds * 1000,
      nonce: parsed.nonce,
      digest: sha256Hex(parsed.canonical),
    };
    cache?.remember(secret, token, proven, now);
  }
  if (book?.isRevokedDigest(proven.digest)) return { ok: false, reason: 'revoked' };
  if (proven.issuedAt - now > clockSkewSeconds * 1000) return { ok: false, reason: 'future' };
  if (now > proven.expiresAt) return { ok: false, reason: 'expired' };
  if (canonicalIp(observedIp) !== proven.clientIp) return { ok: false, reason: 'wrong-ip' };
  return { ok: true, ...proven };
}

/** What a token's signature proved: everything in the verdict, fixed for the token's life. */
type ProvenToken = Omit<Extract<SessionVerdict, { ok: true }>, 'ok'>;

/** How many proven tokens a peer keeps: a caller beyond them is verified in full, as before. */
export const DEFAULT_PROVEN_TOKENS = 1024;

/**
 * Tokens whose HMAC one secret has proved, so a session's second request does not parse its
 * token and compute the HMAC and the digest again: 24 of the 284 µs a loaded peer spent on a
 * ping (CPU profile at 16 concurrent callers). Measured with bench peer-ping, three alternated
 * runs each: the door's p50 (an unknown method's answer: every check a ping passes, no run)
 * went from 228-254 µs to 178-185 µs, a sequential ping's judged p50 ratio from 1.45-1.51 to
 * 1.31-1.42; throughput at 16 callers moved within the noise.
 *
 * What is kept decides nothing on its own. A token's signature, payload and digest are fixed by
 * its text and the secret, so they are kept, keyed by the exact text (a padded spelling of the
 * same token is an entry of its own, with the same digest); what changes with the request or the
 * moment (revocation, the clock, the caller's IP) is checked on every request by verifySession
 * as for a token seen for the first time. Only signed tokens get in, so a prober cannot fill it
 * with forgeries; a token past its expiry is dropped when next looked up, and past
 * `maxEntries` the oldest is dropped (the next request with it is verified in full). Proven
 * under one secret only: asked with another (a rotated secret), it forgets everything first,
 * so no token is accepted on the strength of a secret that is no longer the peer's. Only a
 * string secret (a peer's, from its record) is served: a byte array can change in place under
 * the same reference, and a token must never outlive the bytes that proved it.
 */
export class ProvenTokens {
  readonly #entries = new Map<string, ProvenToken>();
  #secret: string | null = null;

  constructor(readonly maxEntries: number = DEFAULT_PROVEN_TOKENS) {}

  /** The token's proof under `secret`, unless it has none or has expired by `now` (then forgotten). */
  get(secret: SessionSecret, token: string, now: number): ProvenToken | undefined {
    if (secret !== this.#secret) {
      this.#entries.clear();
      this.#secret = typeof secret === 'string' ? secret : null;
      return undefined;
    }
    if (typeof token !== 'string') return undefined;
    const proven = this.#entries.get(token);
    if (proven && now > proven.expiresAt) {
      this.#entries.delete(token);
      return undefined;
    }
    return proven;
  }

  remember(secret: SessionSecret, token: string, proven: ProvenToken, now: number): void {
    if (typeof secret !== 'string' || secret !== this.#secret) return;
    if (now > proven.expiresAt) return;
    if (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(token, proven);
  }

  get size(): number {
    return this.#entries.size;
  }
}

/** SHA-256 of the token's one spelling (padding removed), hex. What the book keys on. */
function tokenDigest(token: string): string {
  return sha256Hex(parseToken(token)?.canonical ?? String(token));
}

function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/**
 * A short, non-secret label for a session, for logs and UI ids: `sess_` and 12 hex digits of
 * the SHA-256 of the token. The same session gets the same label whether or not the token was
 * padded, and the label reveals nothing that helps forge or replay the token.
 */
export function redactSession(token: string): string {
  return labelOf(tokenDigest(token));
}

/** redactSession for a token whose digest is already known (a verdict's `digest`). */
export function labelOf(digest: string): string {
  return `sess_${digest.slice(0, 12)}`;
}

/** An issued session as the book lists it; its label is `redactSession(token)`: the book never holds the token. */
export type SessionEntry = SessionRow;

export interface SessionBookOptions {
  /** Issued sessions kept for listing; beyond it, expired then oldest entries are dropped. */
  maxEntries?: number;
  /** Live revocations kept; beyond it `revoke` throws rather than forget one. */
  maxRevoked?: number;
  /**
   * Where revocations outlive the process (a peer's `revoked.jsonl`, see revocation-file.ts):
   * read when the book is made (a malformed file throws `RevocationFileError`), rewritten
   * durably before `revoke`/`revokeLabel` return. Without it revocations live in memory only,
   * which is right only for a book that never outlives its process's callers (a client's).
   */
  revocationFile?: string;
}

/**
 * Optional bookkeeping: which sessions this peer issued (for listing and counting) and which
 * were revoked before expiry. Bounded: dropping a listing entry loses only a row in a table,
 * because validity never depends on it; a revocation is kept until its token expires and is
 * never dropped early (that would silently un-revoke it), so a full revocation list throws.
 *
 * Revocations are durable when the book has a revocation file: a revocation is on disk before
 * the call that made it returns, so a peer restarted a moment after answering the plane's
 * revoke still refuses the token. The listing of issued sessions is not kept across a restart
 * (validity never depends on it; a session issued before a restart can still be revoked by its
 * token, not by its label).
 */
export class SessionBook {
  readonly #entries = new Map<string, SessionEntry>();
  /** caller peer id -> its identity credentials' use; bounded like the entries. */
  readonly #identities = new Map<string, IdentityRow>();
  /** token digest -> expiresAt (ms); pruned once the token would be refused as expired anyway. */
  readonly #revoked = new Map<string, number>();
  readonly #maxEntries: number;
  readonly #maxRevoked: number;
  readonly #revocationFile: string | null;

  constructor(options: SessionBookOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 10_000;
    this.#maxRevoked = options.maxRevoked ?? 100_000;
    if (!Number.isSafeInteger(this.#maxEntries) || this.#maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
    if (!Number.isSafeInteger(this.#maxRevoked) || this.#maxRevoked < 1) throw new RangeError('maxRevoked must be a positive integer');
    this.#revocationFile = options.revocationFile ?? null;
    if (this.#revocationFile !== null) {
      for (const { sha256, expiresAt } of loadRevocations(this.#revocationFile)) this.#revoked.set(sha256, expiresAt);
    }
  }

  /** Note a session this peer issued. */
  record(session: MintedSession, callerAddress: string, now: number = Date.now()): SessionEntry {
    if (this.#entries.size >= this.#maxEntries) {
      for (const [key, entry] of this.#entries) if (now > entry.expiresAt) this.#entries.delete(key);
      // Still full: drop the oldest tenth at once, so the scan above is not repeated per record.
      if (this.#entries.size >= this.#maxEntries) {
        const target = Math.floor(this.#maxEntries * 0.9);
        for (const key of this.#entries.keys()) {
          if (this.#entries.size <= target) break;
          this.#entries.delete(key);
        }
      }
    }
    const entry: SessionEntry = {
      label: redactSession(session.sessionId),
      clientIp: session.clientIp,
      callerAddress,
      issuedAt: session.issuedAt,
      expiresAt: session.expiresAt,
      lastUsedAt: null,
      calls: 0,
    };
    this.#entries.set(tokenDigest(session.sessionId), entry);
    return { ...entry };
  }

  /**
   * Count one admitted request on a session (called where the request is authenticated). A
   * valid token this book did not issue (client-minted with the shared secret) is not listed,
   * so it is not counted either.
   */
  used(token: string, now: number = Date.now()): void {
    this.usedDigest(tokenDigest(token), now);
  }

  /** `used`, for a token whose digest a verdict already holds. */
  usedDigest(digest: string, now: number = Date.now()): void {
    const entry = this.#entries.get(digest);
    if (!entry) return;
    entry.lastUsedAt = now;
    entry.calls += 1;
  }

  /** Count one admitted request made with a peer identity credential, by the calling peer. */
  identityUsed(caller: string, clientIp: string, now: number = Date.now()): void {
    const known = this.#identities.get(caller);
    if (known) {
      // Re-inserted, so the map stays in last-use order.
      this.#identities.delete(caller);
      this.#identities.set(caller, { ...known, clientIp, lastUsedAt: now, calls: known.calls + 1 });
      return;
    }
    if (this.#identities.size >= this.#maxEntries) {
      // Forget the caller seen least recently: the map is kept in last-use order (below).
      const oldest = this.#identities.keys().next().value;
      if (oldest !== undefined) this.#identities.delete(oldest);
    }
    this.#identities.set(caller, { caller, clientIp, firstSeenAt: now, lastUsedAt: now, calls: 1 });
  }

  /** Identity credentials in use, one row per calling peer, most recently used last. Plain JSON. */
  identities(): IdentityRow[] {
    return [...this.#identities.values()].map((row) => ({ ...row }));
  }

  /**
   * Refuse this session from now on, until it expires (after which the expiry rule refuses it).
   * Works for any well-formed token, issued here or client-minted. Returns false for a token
   * that is malformed or already expired (both are refused without a revocation).
   */
  revoke(token: string, now: number = Date.now()): boolean {
    const parsed = parseToken(token);
    if (!parsed) return false;
    const expiresAt = (parsed.issuedAtSeconds + parsed.ttlSeconds) * 1000;
    const key = tokenDigest(token);
    if (now > expiresAt) {
      this.#entries.delete(key);
      return false;
    }
    this.#addRevocation(key, expiresAt, now);
    this.#entries.delete(key);
    return true;
  }

  /**
   * Revoke an issued session by its label (what the UI and logs show): the book knows the
   * token's digest and expiry from when it was issued, so the token itself is not needed.
   */
  revokeLabel(label: string, now: number = Date.now()): boolean {
    for (const [key, entry] of this.#entries) {
      if (entry.label !== label) continue;
      if (now > entry.expiresAt) {
        this.#entries.delete(key);
        return false;
      }
      this.#addRevocation(key, entry.expiresAt, now);
      this.#entries.delete(key);
      return true;
    }
    return false;
  }

  /**
   * Records a revocation: on disk first (when the book has a file), then in memory. If the
   * write fails it throws and nothing changed, so the caller is told the revocation did not
   * take and can repeat it (by label too: the listing entry is removed only after success).
   */
  #addRevocation(key: string, expiresAt: number, now: number): void {
    for (const [k, until] of this.#revoked) if (now > until) this.#revoked.delete(k);
    if (!this.#revoked.has(key) && this.#revoked.size >= this.#maxRevoked) {
      throw new RangeError(`the revocation list is full (${this.#maxRevoked} live revocations); rotate the secret instead`);
    }
    const until = Math.max(this.#revoked.get(key) ?? 0, expiresAt);
    if (this.#revocationFile !== null) {
      const next = new Map(this.#revoked).set(key, until);
      writeRevocations(this.#revocationFile, [...next].map(([sha256, at]) => ({ sha256, expiresAt: at })));
    }
    this.#revoked.set(key, until);
  }

  isRevoked(token: string): boolean {
    return this.isRevokedDigest(tokenDigest(token));
  }

  /** `isRevoked`, for a token whose digest is already known. */
  isRevokedDigest(digest: string): boolean {
    return this.#revoked.has(digest);
  }

  /** Issued, unrevoked sessions that have not expired at `now`, oldest first. Plain JSON. */
  live(now: number = Date.now()): SessionEntry[] {
    return [...this.#entries.values()].filter((e) => now <= e.expiresAt).map((e) => ({ ...e }));
  }

  liveCount(now: number = Date.now()): number {
    let count = 0;
    for (const entry of this.#entries.values()) if (now <= entry.expiresAt) count++;
    return count;
  }

  /** Entries held, expired ones included until pruned (for the memory bound's tests). */
  get size(): number {
    return this.#entries.size;
  }
}
