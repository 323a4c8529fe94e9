/**
 * Large values and the journal. The journal is append-only, hash-chained and permanent: every
 * byte in it is kept for ever (it cannot be erased without breaking the chain), hashed again by
 * every `journal verify`, and carried by every export. So a value larger than
 * `LARGE_VALUE_BYTES` is journaled as its SHA-256 and size (`DigestRef`), and its bytes live
 * where they can be deleted (a peer's content-addressed `inputs/` folder, or the file store for
 * uploads), exactly as uploads already are.
 *
 * Why 64 KiB: every input a person writes by hand fits well under it (ask prompts were capped
 * at 20,000 characters before, process_instructions takes 10,000), so ordinary runs stay
 * readable in the timeline and self-contained in an export; above it a value is a document,
 * and a record that size is no longer something anyone reads in the journal, only something
 * that makes it grow. The digest still pins the value: an effect's key covers it, so an edited
 * input shows up on replay as divergence exactly as an edited text would.
 */
import { createHash } from 'node:crypto';
import { canonicalize } from '../../src-shared/journal/canonical-json';

export const LARGE_VALUE_BYTES = 64 * 1024;

/** What the journal holds in place of a large value. */
export interface DigestRef {
  sha256: string;
  bytes: number;
}

export function digestRef(text: string): DigestRef {
  const bytes = Buffer.from(text, 'utf8');
  return { sha256: createHash('sha256').update(bytes).digest('hex'), bytes: bytes.length };
}

/** A string as the journal should hold it: itself, or its digest and size when it is large. */
export function journaledText(text: string): string | DigestRef {
  return Buffer.byteLength(text, 'utf8') > LARGE_VALUE_BYTES ? digestRef(text) : text;
}

/** What the journal and the run hold in place of a result too large to keep, and why. */
export interface LargeValue {
  large: DigestRef;
  note: string;
}

/**
 * Any JSON value as the journal should hold it: itself (`large` null), or, when its canonical
 * JSON is larger than LARGE_VALUE_BYTES, null and the digest and size of that JSON. The digest is
 * over the canonical form, so the same value always digests the same: an effect whose request
 * holds it keeps a stable key, and an edited value still shows up on replay as divergence.
 */
export function journaledValue(value: unknown): { value: unknown; large: DigestRef | null } {
  const text = canonicalize(value ?? null);
  if (Buffer.byteLength(text, 'utf8') <= LARGE_VALUE_BYTES) return { value, large: null };
  return { value: null, large: digestRef(text) };
}
