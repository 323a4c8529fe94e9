/**
 * Peer credentials: a short-lived JWT signed with the calling peer's Ed25519 key, for exactly
 * one audience (the called peer). The called peer checks the signature against the caller's
 * public key in the plane's registry, the audience against itself, and expiry; then the
 * registry, not the token, says which of its skills the caller may call.
 *
 * A credential minted for peer B and presented to peer A is refused by A (audience), and the
 * minting side cannot hand one to the wrong peer either: it is a PeerCredential, whose secret
 * is reachable only through presentTo(audience). The algorithm is fixed here; the token's own
 * header is never trusted for it.
 */
import { randomBytes } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify, SignJWT } from 'jose';
import { PeerCredential } from './peer-credential';
import type { PeerRegistry } from './peer-registry';

const ALGORITHMS = ['EdDSA'];
export const CREDENTIAL_TTL_SECONDS = 120;

export const audienceOf = (peerId: string) => `peer:${peerId}`;

export async function mintPeerCredential(registry: PeerRegistry, callerId: string, audienceId: string, now = Date.now()): Promise<PeerCredential> {
  const seconds = Math.floor(now / 1000);
  const jwt = await new SignJWT({})
    .setProtectedHeader({ alg: 'EdDSA', kid: callerId, typ: 'agentplane-peer+jwt' })
    .setIssuer(audienceOf(callerId))
    .setSubject(audienceOf(callerId))
    .setAudience(audienceOf(audienceId))
    .setIssuedAt(seconds)
    .setExpirationTime(seconds + CREDENTIAL_TTL_SECONDS)
    .setJti(randomBytes(12).toString('hex'))
    .sign(registry.privateKeyOf(callerId));
  return new PeerCredential(audienceOf(audienceId), jwt, audienceOf(callerId), (seconds + CREDENTIAL_TTL_SECONDS) * 1000);
}

export type CredentialCheck =
  | { ok: true; caller: string }
  | { ok: false; reason: 'malformed' | 'unknown-caller' | 'revoked' | 'wrong-audience' | 'invalid' };

/** A JWT has three dot-separated parts; an MCPv2 session token has two. */
export function looksLikePeerCredential(token: string): boolean {
  return token.split('.').length === 3;
}

export async function verifyPeerCredential(registry: PeerRegistry, me: string, token: string, now = Date.now()): Promise<CredentialCheck> {
  let caller: string;
  try {
    const header = decodeProtectedHeader(token);
    if (typeof header.kid !== 'string') return { ok: false, reason: 'malformed' };
    caller = header.kid;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const record = registry.get(caller);
  const key = record ? registry.publicKeyOf(caller) : null;
  if (!record || !key) return { ok: false, reason: 'unknown-caller' };
  if (record.revoked) return { ok: false, reason: 'revoked' };
  // Everything but the audience first (signature, issuer, type, a short life that must be
  // stated), so that "wrong audience" is said only of a credential that is otherwise sound.
  const rules = {
    algorithms: ALGORITHMS,
    issuer: audienceOf(caller),
    typ: 'agentplane-peer+jwt',
    requiredClaims: ['exp', 'iat', 'jti'],
    maxTokenAge: `${CREDENTIAL_TTL_SECONDS + 30}s`,
    currentDate: new Date(now),
  };
  try {
    await jwtVerify(token, key, rules);
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  try {
    await jwtVerify(token, key, { ...rules, audience: audienceOf(me) });
  } catch {
    return { ok: false, reason: 'wrong-audience' };
  }
  return { ok: true, caller };
}
