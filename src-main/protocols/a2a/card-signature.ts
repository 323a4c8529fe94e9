/**
 * Agent Card signatures (A2A 1.0 §8.4): a JWS (RFC 7515, Flattened JSON form, detached payload)
 * over the RFC 8785 canonical form of the card without its `signatures` field, signed with the
 * plane's Ed25519 key (EdDSA).
 *
 * Why the public JWK rides in the protected header: a card is read before the caller holds any
 * credential, so the first reading has nothing to check it against except the key it carries. A
 * client pins that key per destination on first use (the A2A client's a2a-pins) and refuses a
 * later card signed under another key until a person accepts the change. `kid` is the RFC 7638
 * thumbprint of that same key, and it is checked against the embedded key so the two cannot
 * disagree.
 *
 * Why detached: the payload is the card itself, which the reader already has; repeating it
 * base64url-encoded inside the signature would double the card and give a verifier two copies
 * to compare. The verifier recomputes the canonical bytes from the card it parsed, so any field
 * changed after signing changes those bytes and the signature no longer holds.
 *
 * Canonical form: `canonicalize` from src-shared/journal (RFC 8785), the same bytes the journal
 * hashes. Cards built here carry no empty strings, empty arrays or nulls, so the form is also the
 * one @a2a-js/sdk's canonicalizeAgentCard computes (it drops empty values before JCS); the
 * interop test in card-signature.test.ts holds us to that.
 */
import { FlattenedSign, base64url, decodeProtectedHeader, flattenedVerify, type JWK } from 'jose';
import { canonicalize } from '../../../src-shared/journal/canonical-json';
import { keyIdOf, publicPlaneKey, type PlaneKey } from '../../journal/plane-key';

/** One entry of AgentCard.signatures (a2a.proto AgentCardSignature). */
export interface AgentCardSignature {
  /** base64url of the JSON protected header: alg, typ, kid, jwk. */
  protected: string;
  /** base64url of the Ed25519 signature. */
  signature: string;
  header?: Record<string, unknown>;
}

/** A card is any JSON object; only `signatures` is read here. */
export type SignableCard = Record<string, unknown> & { signatures?: AgentCardSignature[] };

/** The algorithm names RFC 8037 and RFC 9864 give Ed25519 signatures; nothing else is accepted. */
const ED25519_ALGS: readonly string[] = ['EdDSA', 'Ed25519'];

export const CARD_SIGNATURE_REFUSALS = [
  'unsigned',
  'malformed-signature',
  'unsupported-alg',
  'key-mismatch',
  'bad-signature',
  'not-canonicalizable',
] as const;
export type CardSignatureRefusal = (typeof CARD_SIGNATURE_REFUSALS)[number];

export type CardVerification =
  | { ok: true; keyId: string; jwk: JWK }
  | { ok: false; reason: CardSignatureRefusal; detail: string };

function payloadOf(card: SignableCard): Uint8Array {
  const rest: Record<string, unknown> = { ...card };
  delete rest.signatures;
  return new TextEncoder().encode(canonicalize(rest));
}

/** The card with one more signature appended (earlier signatures are kept, as the spec allows). */
export async function signAgentCard<C extends SignableCard>(card: C, key: PlaneKey): Promise<C & { signatures: AgentCardSignature[] }> {
  const jwk: JWK = { kty: key.publicJwk.kty, crv: key.publicJwk.crv, x: key.publicJwk.x };
  const jws = await new FlattenedSign(payloadOf(card))
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JOSE', kid: key.keyId, jwk })
    .sign(key.privateKey);
  const entry: AgentCardSignature = { protected: jws.protected ?? '', signature: jws.signature };
  return { ...card, signatures: [...(card.signatures ?? []), entry] };
}

/**
 * Verifies a card's signatures. With `pinned`, only a signature by that key counts (a card signed
 * by another key is `key-mismatch`, even when that signature is itself valid). Without it, the
 * key embedded in the protected header is used, and returned for the caller to pin.
 * The first signature that verifies wins; otherwise the first refusal met is returned.
 */
export async function verifyAgentCard(card: SignableCard, pinned?: JWK): Promise<CardVerification> {
  const signatures = card.signatures;
  if (!Array.isArray(signatures) || signatures.length === 0) return { ok: false, reason: 'unsigned', detail: 'the card has no signatures' };
  let payload: Uint8Array;
  try {
    payload = payloadOf(card);
  } catch (error) {
    return { ok: false, reason: 'not-canonicalizable', detail: (error as Error).message };
  }
  const pinnedId = pinned ? await keyIdOf(pinned) : undefined;
  let firstRefusal: CardVerification | undefined;
  for (const [index, entry] of signatures.entries()) {
    const result = await verifyOne(entry, index, payload, pinned, pinnedId);
    if (result.ok) return result;
    firstRefusal ??= result;
  }
  return firstRefusal ?? { ok: false, reason: 'unsigned', detail: 'the card has no signatures' };
}

async function verifyOne(
  entry: AgentCardSignature,
  index: number,
  payload: Uint8Array,
  pinned: JWK | undefined,
  pinnedId: string | undefined,
): Promise<CardVerification> {
  const where = `signatures[${index}]`;
  if (typeof entry !== 'object' || entry === null || typeof entry.protected !== 'string' || typeof entry.signature !== 'string') {
    return { ok: false, reason: 'malformed-signature', detail: `${where} needs string "protected" and "signature"` };
  }
  let header: ReturnType<typeof decodeProtectedHeader>;
  try {
    header = decodeProtectedHeader({ protected: entry.protected, signature: entry.signature });
  } catch {
    return { ok: false, reason: 'malformed-signature', detail: `${where}.protected is not a base64url JSON header` };
  }
  if (typeof header.alg !== 'string' || !ED25519_ALGS.includes(header.alg)) {
    return { ok: false, reason: 'unsupported-alg', detail: `${where} uses alg ${JSON.stringify(header.alg)}; only EdDSA (Ed25519) is accepted` };
  }
  const embedded = header.jwk;
  let verifyJwk: JWK;
  let keyId: string;
  if (pinned) {
    if (embedded && (await keyIdOf(embedded).catch(() => undefined)) !== pinnedId) {
      return { ok: false, reason: 'key-mismatch', detail: `${where} is signed by a key other than the pinned one` };
    }
    if (!embedded && header.kid !== pinnedId) {
      return { ok: false, reason: 'key-mismatch', detail: `${where} names key ${String(header.kid)}, not the pinned one` };
    }
    verifyJwk = pinned;
    keyId = pinnedId ?? (await keyIdOf(pinned));
  } else {
    if (!embedded) return { ok: false, reason: 'malformed-signature', detail: `${where} carries no public jwk and no key is pinned` };
    verifyJwk = embedded;
    try {
      keyId = (await publicPlaneKey(embedded)).keyId;
    } catch {
      return { ok: false, reason: 'unsupported-alg', detail: `${where}'s jwk is not an Ed25519 public key` };
    }
    if (header.kid !== undefined && header.kid !== keyId) {
      return { ok: false, reason: 'key-mismatch', detail: `${where}'s kid is not the thumbprint of its jwk` };
    }
  }
  let publicKey;
  try {
    publicKey = (await publicPlaneKey(verifyJwk)).publicKey;
  } catch {
    return { ok: false, reason: 'unsupported-alg', detail: 'the pinned key is not an Ed25519 public key' };
  }
  try {
    await flattenedVerify(
      { payload: base64url.encode(payload), protected: entry.protected, signature: entry.signature, ...(entry.header ? { header: entry.header } : {}) },
      publicKey,
      { algorithms: [header.alg] },
    );
  } catch {
    return { ok: false, reason: 'bad-signature', detail: `${where} does not verify over the card's canonical form` };
  }
  const jwk: JWK = { kty: verifyJwk.kty, crv: verifyJwk.crv, x: verifyJwk.x };
  return { ok: true, keyId, jwk };
}
