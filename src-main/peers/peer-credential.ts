/**
 * A credential bound to exactly one audience (one peer). Why it is shaped like this:
 *
 * - Token confusion: a bearer token sent to peer B and accepted by peer A is the whole
 *   vulnerability class RFC 8707 exists for. We cannot make peer A check the audience, but we
 *   can refuse to hand it a token minted for B: `presentTo(audience)` is the only way to the
 *   secret, and it throws for any other audience, so no code path reaches a credential
 *   without passing the check.
 * - It can never be journaled or logged. The journal is append-only and hash-chained: a token
 *   in a record cannot be redacted later, because the hash covers it and the chain would break.
 *   So the type has no JSON form (`toJSON` throws; canonical JSON refuses class instances too),
 *   and its string and inspection forms show the audience (the part worth debugging) but never
 *   the secret. The secret is a private field: not enumerable, not cloned, not spread.
 */
import { inspect } from 'node:util';

export class CredentialAudienceError extends Error {
  override readonly name = 'CredentialAudienceError';
}

export class PeerCredential {
  readonly #secret: string;

  constructor(
    /** The one peer this credential may be presented to. */
    readonly audience: string,
    secret: string,
    /** Whose authority it carries: `plane`, or the principal it was minted for. */
    readonly subject: string = 'plane',
    /** Expiry (ms since epoch), when the issuer set one. */
    readonly expiresAt: number | null = null,
  ) {
    if (!audience) throw new TypeError('a credential names its audience');
    if (!secret) throw new TypeError('a credential has a secret');
    this.#secret = secret;
  }

  /** The secret, for exactly this credential's audience; any other audience is refused. */
  presentTo(audience: string, now: number = Date.now()): string {
    if (audience !== this.audience) {
      throw new CredentialAudienceError(`a credential for ${this.audience} cannot be presented to ${audience}`);
    }
    if (this.expiresAt !== null && now >= this.expiresAt) {
      throw new CredentialAudienceError(`the credential for ${this.audience} has expired`);
    }
    return this.#secret;
  }

  toJSON(): never {
    throw new TypeError(`a credential has no JSON form (audience ${this.audience}): it must never reach the journal, a log or an answer`);
  }

  toString(): string {
    return `PeerCredential(audience=${this.audience}, subject=${this.subject}, secret=[redacted])`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
