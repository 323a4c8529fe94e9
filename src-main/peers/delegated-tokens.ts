/**
 * The peer's side of delegated credentials (docs/SECURITY.md, "Delegated credentials"): a peer
 * whose registry record names a `tokenIssuer` accepts only that issuer's access tokens, each
 * checked here before anything else is read:
 * - the signature, against the issuer's JWKS or its one configured key, with the algorithm
 *   fixed here (EdDSA or ES256), never taken from the token's header alone;
 * - `iss` = the configured issuer, `aud` = this peer (`peer:<id>`): a token minted for another
 *   peer is refused, so a peer that leaks one cannot replay it elsewhere; `exp` present and
 *   not passed;
 * - `act.sub` = the configured actor (the plane): the token says who is acting, and only the
 *   plane may act here.
 * The caller is then `delegated:<sub>`: whom the plane acts for, marked as vouched for by the
 * issuer. Only this door makes such a principal, so the peer's policy (peer-policy.ts) can
 * admit it knowing the issuer authorized this very peer for it.
 */
import { createRemoteJWKSet, customFetch, importJWK, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { TokenIssuerTrust } from './peer-registry';

const ALGORITHMS = ['EdDSA', 'ES256'];
const CLOCK_TOLERANCE_SECONDS = 30;

export const DELEGATED_PREFIX = 'delegated:';
export const delegatedPrincipal = (subject: string) => `${DELEGATED_PREFIX}${subject}`;

export type DelegatedCheck = { ok: true; subject: string; actor: string } | { ok: false; reason: string };

/**
 * How the issuer's key set is fetched: the peer's own netguard (peer-host.ts), so a JWKS URL is
 * judged like every other outbound request of the peer (an issuer on loopback or a private network
 * only once a person allows its origin), never a bare fetch around it.
 */
export type JwksFetch = (url: string, init: RequestInit) => Promise<Response>;

/** Remote key sets by URL: jose caches the keys and refetches on an unknown `kid`. */
const keySets = new Map<string, JWTVerifyGetKey>();

/** The token's claims once its signature and `iss`, `exp` and `sub` hold; throws otherwise. */
async function verifiedClaims(trust: TokenIssuerTrust, token: string, now: number, fetchJwks: JwksFetch): Promise<JWTPayload> {
  const rules = { algorithms: ALGORITHMS, issuer: trust.issuer, requiredClaims: ['exp', 'sub'], clockTolerance: CLOCK_TOLERANCE_SECONDS, currentDate: new Date(now) };
  if (trust.jwksUrl) {
    let set = keySets.get(trust.jwksUrl);
    if (!set) keySets.set(trust.jwksUrl, (set = createRemoteJWKSet(new URL(trust.jwksUrl), { [customFetch]: fetchJwks })));
    return (await jwtVerify(token, set, rules)).payload;
  }
  const jwk = trust.publicKey!;
  return (await jwtVerify(token, await importJWK(jwk, jwk.kty === 'EC' ? 'ES256' : 'EdDSA'), rules)).payload;
}

export async function verifyDelegatedToken(trust: TokenIssuerTrust, me: string, token: string, fetchJwks: JwksFetch, now = Date.now()): Promise<DelegatedCheck> {
  let payload: JWTPayload;
  try {
    payload = await verifiedClaims(trust, token, now, fetchJwks);
  } catch {
    return { ok: false, reason: `not a valid access token from ${trust.issuer}` };
  }
  const aud = payload.aud;
  if (!(aud === `peer:${me}` || (Array.isArray(aud) && aud.includes(`peer:${me}`)))) return { ok: false, reason: 'the token was issued for another audience' };
  const act = payload.act as { sub?: unknown } | undefined;
  if (typeof act !== 'object' || act === null || act.sub !== trust.actor) return { ok: false, reason: `the token does not name ${trust.actor} as its actor (act)` };
  return { ok: true, subject: payload.sub as string, actor: trust.actor };
}
