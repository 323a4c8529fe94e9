/**
 * The keys remote A2A agents sign their cards with, pinned per destination origin on first use
 * (`<data dir>/a2a-pins.json`, 0600, written atomically through base/private-files.ts).
 *
 * - First use: a signed card that verifies pins its key for the card URL's origin.
 * - Same key later: accepted. A changed key: refused, and the new key is kept as `pending` for a
 *   person to look at; only `a2a.pins.accept {origin}` (CLI `agentplane a2a pins accept`) makes
 *   it the pin. A key change is what a compromised or impersonated host looks like, and it is
 *   also what an honest rotation looks like; telling the two apart is a person's call.
 * - An origin with a pin whose card now comes unsigned is refused too: a client that verifies
 *   only when a signature is present is one an attacker downgrades by stripping it.
 *
 * Only public keys are kept (a JWK's public members); nothing here is secret, but the file is
 * the user's trust decisions, so it is private like the rest of the data dir.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { canonicalize } from '../../../../src-shared/journal/canonical-json';
import { writePrivateFileAtomically } from '../../../base/private-files';

export const A2A_PINS_FILE = 'a2a-pins.json';

const PublicJwkSchema = z.record(z.string(), z.unknown());
const PinnedKeySchema = z.object({ keyId: z.string(), jwk: PublicJwkSchema, at: z.string() }).strict();
const PinSchema = z.object({ key: PinnedKeySchema, pending: PinnedKeySchema.optional() }).strict();
const PinsFileSchema = z.object({ version: z.literal(1), pins: z.record(z.string(), PinSchema) }).strict();
type PinsFile = z.infer<typeof PinsFileSchema>;
export type PinnedKey = z.infer<typeof PinnedKeySchema>;

/** What `a2a.pins.list` shows of one origin: never more than the key id and when. */
export interface PinView {
  origin: string;
  keyId: string;
  pinnedAt: string;
  pending?: { keyId: string; seenAt: string };
}

export class A2aPinsError extends Error {
  override readonly name = 'A2aPinsError';
}

/** The public members of a JWK (what identifies the key), in a comparable form. */
function publicKeyOf(jwk: Record<string, unknown>): string {
  const members = ['kty', 'crv', 'x', 'y', 'n', 'e'];
  return canonicalize(Object.fromEntries(members.filter((m) => jwk[m] !== undefined).map((m) => [m, jwk[m]])));
}

function publicJwk(jwk: Record<string, unknown>): Record<string, unknown> {
  return JSON.parse(publicKeyOf(jwk)) as Record<string, unknown>;
}

export type PinVerdict = { kind: 'pinned-now' } | { kind: 'matches' } | { kind: 'changed'; pinned: PinnedKey };

export class A2aPins {
  private readonly file: string;

  constructor(dataDir: string) {
    this.file = join(dataDir, A2A_PINS_FILE);
  }

  private read(): PinsFile {
    if (!existsSync(this.file)) return { version: 1, pins: {} };
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.file, 'utf8'));
    } catch (error) {
      throw new A2aPinsError(`${this.file}: not valid JSON (${(error as Error).message}); fix or remove it`);
    }
    const parsed = PinsFileSchema.safeParse(raw);
    if (!parsed.success) throw new A2aPinsError(`${this.file}: not an A2A pins file (${parsed.error.issues[0]?.message ?? 'invalid'}); fix or remove it`);
    return parsed.data;
  }

  private write(content: PinsFile): void {
    writePrivateFileAtomically(this.file, `${JSON.stringify(content, null, 2)}\n`);
  }

  /** The pin of an origin, if any. */
  pinOf(origin: string): PinnedKey | null {
    return this.read().pins[origin]?.key ?? null;
  }

  /**
   * Judges a verified key for an origin: pins it on first use, accepts the pinned one, and keeps
   * a different one as pending (the caller refuses the card).
   */
  judge(origin: string, keyId: string, jwk: Record<string, unknown>, now = new Date()): PinVerdict {
    const file = this.read();
    const entry = file.pins[origin];
    const seen: PinnedKey = { keyId, jwk: publicJwk(jwk), at: now.toISOString() };
    if (!entry) {
      file.pins[origin] = { key: seen };
      this.write(file);
      return { kind: 'pinned-now' };
    }
    if (publicKeyOf(entry.key.jwk) === publicKeyOf(jwk)) return { kind: 'matches' };
    if (!entry.pending || publicKeyOf(entry.pending.jwk) !== publicKeyOf(jwk)) {
      file.pins[origin] = { key: entry.key, pending: seen };
      this.write(file);
    }
    return { kind: 'changed', pinned: entry.key };
  }

  list(): PinView[] {
    return Object.entries(this.read().pins)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([origin, pin]) => ({ origin, keyId: pin.key.keyId, pinnedAt: pin.key.at, ...(pin.pending ? { pending: { keyId: pin.pending.keyId, seenAt: pin.pending.at } } : {}) }));
  }

  /** A person accepts the changed key an origin's card was refused for. */
  accept(origin: string): PinView {
    const file = this.read();
    const entry = file.pins[origin];
    if (!entry) throw new A2aPinsError(`no key is pinned for ${origin}`);
    if (!entry.pending) throw new A2aPinsError(`${origin} has no changed key waiting to be accepted (its pinned key is ${entry.key.keyId})`);
    file.pins[origin] = { key: entry.pending };
    this.write(file);
    return { origin, keyId: entry.pending.keyId, pinnedAt: entry.pending.at };
  }
}
