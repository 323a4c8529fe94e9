/**
 * Local peers as every front end names them: how a peer admits callers, what state its process
 * is in, what creating one takes, and the sessions it has issued.
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';
import { PeerIdSchema } from './ids';

/**
 * Which callers a peer admits: `shared-secret` sessions (the MCPv2 protocol's HMAC tokens,
 * docs/PEER-PROTOCOL.md), `identity` (peer credentials signed with the caller's own key for this
 * peer alone), or `both`.
 */
export const PeerAuthModeSchema = z.enum(['shared-secret', 'identity', 'both']);
export type PeerAuthMode = z.infer<typeof PeerAuthModeSchema>;

/**
 * Which issuer's access tokens a peer accepts, and how it checks them: the signature against
 * the issuer's JWKS (`jwksUrl`) or one configured public key (`publicKey`, Ed25519 or P-256),
 * `iss` = `issuer`, `aud` = the peer, `exp`, and an `act` claim whose `sub` is `actor` (the
 * plane's client id at the issuer). `name` is the issuer's entry in the plane's
 * token-issuers.json, where the plane finds the token endpoint and its client credentials
 * (docs/SECURITY.md, "Delegated credentials").
 */
export const TokenIssuerTrustSchema = deferred(() => z
  .object({
    name: z.string().min(1).max(80),
    issuer: z.string().min(1),
    actor: z.string().min(1),
    jwksUrl: z.string().url().optional(),
    publicKey: z.union([z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: z.string() }), z.object({ kty: z.literal('EC'), crv: z.literal('P-256'), x: z.string(), y: z.string() })]).optional(),
    /** RFC 8707 `resource`: the peer's URL as the issuer knows it, when one is mapped. */
    resource: z.string().url().optional(),
  })
  .strict()
  .refine((t) => (t.jwksUrl === undefined) !== (t.publicKey === undefined), { message: 'give exactly one of jwksUrl and publicKey' }));
export type TokenIssuerTrust = z.infer<typeof TokenIssuerTrustSchema>;

/** A peer as its supervisor sees it; `failed` carries why it failed to start or stopped unexpectedly. */
export const PeerStatusSchema = z.enum(['stopped', 'starting', 'running', 'stopping', 'failed']);
export type PeerStatus = z.infer<typeof PeerStatusSchema>;

/** The statuses of a peer whose process is alive (the supervisor holds it). */
export const LivePeerStatusSchema = deferred(() => PeerStatusSchema.extract(['starting', 'running', 'stopping']));
export type LivePeerStatus = z.infer<typeof LivePeerStatusSchema>;

/** What creating a peer takes; defaults are what `peers.create` fills in. */
export const NewPeerSchema = deferred(() => z
  .object({
    id: PeerIdSchema,
    name: z.string().min(1).max(80).optional(),
    /** 0: any free port, chosen at each start. */
    port: z.number().int().min(0).max(65535),
    /** The address others are told to call (the protocol's --public-ip). */
    publicIp: z.string().min(1).default('127.0.0.1'),
    /** The address the socket binds (the protocol's --bind-host); the public IP when absent. */
    bindHost: z.string().min(1).optional(),
    portFallback: z.boolean().default(false),
    llmMode: z.boolean().default(false),
    auth: PeerAuthModeSchema.default('both'),
    /** A given shared secret (the protocol's --secret); generated when absent. */
    secret: z.string().min(8).max(512).optional(),
  })
  .strict());
export type NewPeer = z.input<typeof NewPeerSchema>;

/** A session a peer issued, as its admin route lists it: never the token, only its label. */
export const SessionRowSchema = deferred(() => z.object({
  /** `sess_` and 12 hex digits of the token's SHA-256: what logs and the UI show. */
  label: z.string(),
  clientIp: z.string(),
  /** Where the session request came from (socket address and port, or a note). */
  callerAddress: z.string(),
  /** Milliseconds since the epoch. */
  issuedAt: z.number(),
  expiresAt: z.number(),
  /** When a request last authenticated with it (ms since the epoch); null: never used yet. */
  lastUsedAt: z.number().nullable(),
  /** Requests that authenticated with it and were admitted past the rate limits. */
  calls: z.number().int().nonnegative(),
}));
export type SessionRow = z.infer<typeof SessionRowSchema>;

/**
 * A peer identity credential in use: keyed by the calling peer, never by the credential (each
 * call may present a fresh one, and a credential is a secret the listing must not carry).
 */
export const IdentityRowSchema = deferred(() => z.object({
  /** The calling peer's id (its principal is `peer:<caller>`). */
  caller: z.string(),
  /** The address its last call came from. */
  clientIp: z.string(),
  /** Milliseconds since the epoch. */
  firstSeenAt: z.number(),
  lastUsedAt: z.number(),
  calls: z.number().int().nonnegative(),
}));
export type IdentityRow = z.infer<typeof IdentityRowSchema>;
