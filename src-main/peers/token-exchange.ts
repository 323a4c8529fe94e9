/**
 * Delegated credentials: the plane obtains, for a run's owner, an access token for exactly one
 * peer by OAuth 2.0 Token Exchange (RFC 8693) at an issuer the person configured, and presents
 * it to that peer instead of its own credential (docs/SECURITY.md, "Delegated credentials").
 *
 * The request (RFC 8693 section 2.1), authenticated with the plane's client credentials (HTTP
 * Basic, RFC 6749 section 2.3.1):
 * - `subject_token`: a JWT the plane signs with its own Ed25519 key (keys/, the key that signs
 *   checkpoints), `iss` = `sub` of the actor = the plane's client id, `sub` = the run's owner,
 *   `aud` = the token endpoint, 60 s of life. This is how the plane attests whom it acts for:
 *   the issuer knows the plane's public key and trusts it to name its owners, and nothing the
 *   run's code supplies reaches the claim.
 * - `actor_token`: the same kind of JWT naming the plane itself (`sub` = client id), so the
 *   issued token can carry `act` (RFC 8693 section 4.1): who is acting.
 * - `audience` = `peer:<id>`, and `resource` (RFC 8707) = the peer's URL where one is mapped.
 *
 * An issued token whose `aud`, `sub` or `act` is not what was asked for is refused before it is
 * presented (misissued). Issued tokens are cached per (issuer, subject, audience) until their
 * expiry less 30 s, so a
 * run calling one peer many times asks once. A refusal (RFC 6749 section 5.2) fails the hop
 * with the OAuth `error` code only: `error_description` is free text from the issuer that may
 * echo what it was sent, and is never copied into a record, a log or an error. Configuration:
 * `<data dir>/token-issuers.json`; the client secret is read from a file or an environment
 * variable the entry names, never from the JSON itself, and never written anywhere.
 *
 * The issuer is reached through netguard (net/netguard.ts `guardedRequest`), as every other
 * outbound request of the plane is: the request carries the client secret, so its address is
 * judged at connect, a redirect is not followed and the answer is read under a cap. Declaring
 * an issuer does not allow its origin: one on loopback or a private network is refused, with
 * netguard's reason and before any request is made, until a person allows that origin
 * (docs/SECURITY.md, "Delegated credentials").
 */
import { randomBytes, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { decodeJwt, SignJWT } from 'jose';
import { z } from 'zod';
import { describeZodError } from '../../src-shared/ipc/errors';
import { readRegularFile } from '../base/private-files';
import { GuardedRequestError, guardedRequest, NetguardRefusal, type GuardedAnswer, type Netguard } from '../net/netguard';
import { PeerCredential } from './peer-credential';

export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const JWT_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:jwt';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';
/** An issued token is used until this long before its expiry, then exchanged again. */
export const EXPIRY_SKEW_MS = 30_000;
const ASSERTION_TTL_SECONDS = 60;
/** A token endpoint's answer is a few fields and a token: anything larger is not one. */
const ANSWER_MAX_BYTES = 64 * 1024;

const IssuerEntrySchema = z
  .object({
    tokenEndpoint: z.string().url(),
    clientId: z.string().min(1),
    /** A file holding the client secret (its first line). */
    clientSecretFile: z.string().min(1).optional(),
    /** An environment variable holding the client secret. */
    clientSecretEnv: z.string().min(1).optional(),
  })
  .strict()
  .refine((e) => (e.clientSecretFile === undefined) !== (e.clientSecretEnv === undefined), { message: 'give exactly one of clientSecretFile and clientSecretEnv' });
const IssuersFileSchema = z.object({ issuers: z.record(z.string().min(1), IssuerEntrySchema) }).strict();
export type IssuerEntry = z.infer<typeof IssuerEntrySchema>;

export function tokenIssuersFilePath(dataDir: string): string {
  return join(dataDir, 'token-issuers.json');
}

/** Why a token could not be had: `refused` carries the issuer's OAuth error code only. */
export class TokenExchangeError extends Error {
  override readonly name = 'TokenExchangeError';
  constructor(
    readonly stage: 'config' | 'unavailable' | 'refused',
    message: string,
    readonly oauthError: string | null = null,
  ) {
    super(message);
  }
}

/** The issuer's entry in token-issuers.json; the message names the file and field, never a value. */
export function readIssuerEntry(dataDir: string, name: string): IssuerEntry {
  const path = tokenIssuersFilePath(dataDir);
  let text: string | null;
  try {
    text = readRegularFile(path);
  } catch (error) {
    throw new TokenExchangeError('config', `${path}: cannot be read (${(error as Error).message})`);
  }
  if (text === null) throw new TokenExchangeError('config', `${path} does not exist; declare issuer ${name} there`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new TokenExchangeError('config', `${path}: not valid JSON`);
  }
  const parsed = IssuersFileSchema.safeParse(json);
  if (!parsed.success) throw new TokenExchangeError('config', `${path}: ${describeZodError(parsed.error)}`);
  const entry = parsed.data.issuers[name];
  if (!entry) throw new TokenExchangeError('config', `${path} declares no issuer named ${name}`);
  return entry;
}

function clientSecretOf(entry: IssuerEntry, env: NodeJS.ProcessEnv): string {
  if (entry.clientSecretEnv !== undefined) {
    const value = env[entry.clientSecretEnv]?.trim();
    if (!value) throw new TokenExchangeError('config', `the client secret variable ${entry.clientSecretEnv} is not set`);
    return value;
  }
  const text = readRegularFile(entry.clientSecretFile!)?.split('\n')[0]?.trim();
  if (!text) throw new TokenExchangeError('config', `the client secret file ${entry.clientSecretFile} is missing or empty`);
  return text;
}

/**
 * What is wrong with an issued token, judged from its claims before it is presented, or null.
 * The issuer is not taken at its word (docs/GOVERNED-RUNTIME.md, "Obtaining the credential"):
 * one that ignored the audience would hand back a token another peer accepts, one that ignored
 * the subject would name the wrong person. The signature is the peer's to check; these claims
 * are ours to refuse. A token that is not a JWT cannot be checked, and a peer that trusts an
 * issuer accepts only JWTs (delegated-tokens.ts), so it is refused here too.
 */
function misissued(token: string, request: ExchangeRequest, clientId: string): string | null {
  let claims: ReturnType<typeof decodeJwt>;
  try {
    claims = decodeJwt(token);
  } catch {
    return 'that is not a JWT';
  }
  const audiences = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!audiences.includes(request.audience)) return `for another audience than ${request.audience}`;
  if (claims.sub !== request.subject) return `for another subject than ${request.subject}`;
  if ((claims.act as { sub?: unknown } | undefined)?.sub !== clientId) return 'that does not name the plane as its actor';
  return null;
}

/**
 * Why the issuer was not asked or did not answer: netguard's refusal in its own words (it names
 * the address and the rule), a redirect, cap or deadline as the guarded request said it, else
 * the connection's error code. Never the request: it carries the secret.
 */
function unreachable(where: string, endpoint: string, error: unknown): string {
  const cause = (error as { cause?: unknown } | null)?.cause;
  const refusal = error instanceof NetguardRefusal ? error : cause instanceof NetguardRefusal ? cause : null;
  if (refusal) return `${where} at ${endpoint} was not asked: ${refusal.message}`;
  if (error instanceof GuardedRequestError) return `${where}: ${error.message}`;
  const code = (error as { code?: unknown }).code ?? (cause as { code?: unknown } | undefined)?.code ?? (error as Error).name;
  return `${where} could not be reached at ${endpoint} (${String(code)})`;
}

/** RFC 6749 appendix A.7: an error code is printable ASCII without `"` or `\`; anything else is not repeated. */
const OAUTH_ERROR_CODE = /^[\x20\x21\x23-\x5B\x5D-\x7E]{1,64}$/;

export interface TokenExchangerOptions {
  dataDir: string;
  /** Every request to an issuer goes through it: the plane passes its own (plane.ts). */
  netguard: Netguard;
  /** The plane's signing key (its Ed25519 key and the key's id), for the subject and actor tokens. */
  signingKey(): Promise<{ privateKey: KeyObject; keyId: string }>;
  /** The clock, ms since the epoch (injectable: tests move it instead of sleeping). */
  now?: () => number;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

export interface ExchangeRequest {
  /** The issuer's name in token-issuers.json. */
  issuer: string;
  /** Whom the token acts for: the run's owner principal. */
  subject: string;
  /** The one peer the token is for (`peer:<id>`). */
  audience: string;
  /** RFC 8707 resource indicator, where the peer's URL is mapped. */
  resource?: string;
}

export class TokenExchanger {
  private readonly cache = new Map<string, { credential: PeerCredential; useUntil: number }>();
  private readonly inFlight = new Map<string, Promise<PeerCredential>>();
  private readonly now: () => number;

  constructor(private readonly options: TokenExchangerOptions) {
    this.now = options.now ?? Date.now;
  }

  /** A token for `audience` acting for `subject`: cached while it has more than the skew left. */
  async tokenFor(request: ExchangeRequest): Promise<PeerCredential> {
    const key = JSON.stringify([request.issuer, request.subject, request.audience]);
    const cached = this.cache.get(key);
    if (cached && this.now() < cached.useUntil) return cached.credential;
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const exchange = this.exchange(request).finally(() => this.inFlight.delete(key));
    this.inFlight.set(key, exchange);
    const credential = await exchange;
    if (credential.expiresAt !== null) this.cache.set(key, { credential, useUntil: credential.expiresAt - EXPIRY_SKEW_MS });
    return credential;
  }

  private async assertion(entry: IssuerEntry, subject: string): Promise<string> {
    const { privateKey, keyId } = await this.options.signingKey();
    const seconds = Math.floor(this.now() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA', kid: keyId, typ: 'JWT' })
      .setIssuer(entry.clientId)
      .setSubject(subject)
      .setAudience(entry.tokenEndpoint)
      .setIssuedAt(seconds)
      .setExpirationTime(seconds + ASSERTION_TTL_SECONDS)
      .setJti(randomBytes(12).toString('hex'))
      .sign(privateKey);
  }

  private async exchange(request: ExchangeRequest): Promise<PeerCredential> {
    const entry = readIssuerEntry(this.options.dataDir, request.issuer);
    const secret = clientSecretOf(entry, this.options.env ?? process.env);
    const form = new URLSearchParams({
      grant_type: TOKEN_EXCHANGE_GRANT,
      subject_token: await this.assertion(entry, request.subject),
      subject_token_type: JWT_TOKEN_TYPE,
      actor_token: await this.assertion(entry, entry.clientId),
      actor_token_type: JWT_TOKEN_TYPE,
      requested_token_type: ACCESS_TOKEN_TYPE,
      audience: request.audience,
      ...(request.resource ? { resource: request.resource } : {}),
    });
    const basic = Buffer.from(`${encodeURIComponent(entry.clientId)}:${encodeURIComponent(secret)}`).toString('base64');
    const where = `issuer ${request.issuer}`;
    let response: GuardedAnswer;
    try {
      response = await guardedRequest(this.options.netguard, entry.tokenEndpoint, {
        method: 'POST',
        headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        maxBytes: ANSWER_MAX_BYTES,
        deadlineMs: this.options.timeoutMs ?? 10_000,
      });
    } catch (error) {
      throw new TokenExchangeError('unavailable', `${unreachable(where, entry.tokenEndpoint, error)}; nothing was sent to the peer`);
    }
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      throw new TokenExchangeError('unavailable', `${where} answered HTTP ${response.status} without a JSON body; nothing was sent to the peer`);
    }
    const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    if (response.status < 200 || response.status >= 300) {
      const code = typeof fields.error === 'string' && OAUTH_ERROR_CODE.test(fields.error) ? fields.error : null;
      if (response.status >= 500 || code === null) throw new TokenExchangeError('unavailable', `${where} answered HTTP ${response.status} without an OAuth error code; nothing was sent to the peer`);
      // error_description is deliberately dropped (see the module comment).
      throw new TokenExchangeError('refused', `${where} refused the token exchange: ${code}`, code);
    }
    const token = fields.access_token;
    if (typeof token !== 'string' || token.length === 0 || typeof fields.token_type !== 'string') {
      throw new TokenExchangeError('unavailable', `${where} answered without an access_token and token_type; nothing was sent to the peer`);
    }
    const wrong = misissued(token, request, entry.clientId);
    if (wrong) throw new TokenExchangeError('unavailable', `${where} issued a token ${wrong}; it was not presented, nothing was sent to the peer`);
    return new PeerCredential(request.audience, token, request.subject, this.expiryOf(fields.expires_in, token));
  }

  /** From `expires_in` (RFC 6749 section 5.1), else the token's own `exp`; null: not cached. */
  private expiryOf(expiresIn: unknown, token: string): number | null {
    if (typeof expiresIn === 'number' && Number.isFinite(expiresIn) && expiresIn > 0) return this.now() + expiresIn * 1000;
    try {
      const exp = decodeJwt(token).exp;
      return typeof exp === 'number' ? exp * 1000 : null;
    } catch {
      return null;
    }
  }
}
