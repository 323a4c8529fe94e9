/**
 * What a record's hash covers: the RFC 8785 canonical form of every envelope field except the
 * hash itself. hash = SHA-256(UTF-8(preimage)). Any verifier that canonicalises the same way
 * recomputes the same bytes, which is the point of canonical JSON. Hashing itself is done where
 * a SHA-256 is at hand (node:crypto in main, WebCrypto in a browser), so this file stays pure.
 *
 * The store keeps each body as its canonical text, so the preimage is assembled from the
 * envelope fields and that text by concatenation, in RFC 8785 key order (body, kind, prevHash,
 * runId, seq, time, v sort by UTF-16 code units exactly so). That keeps verification close to
 * the cost of the hash itself; `recordPreimage` (which canonicalises the body) must and does
 * produce the same bytes, and a property test holds the two together.
 */
import { canonicalize } from './canonical-json';
import type { JournalRecord } from './records';

export type RecordPreimageFields = Omit<JournalRecord, 'hash'>;
export type EnvelopeFields = Omit<RecordPreimageFields, 'body'>;

export function recordPreimage(record: RecordPreimageFields): string {
  return recordPreimageFromBodyText(record, canonicalize(record.body));
}

/** `bodyText` must already be canonical (the store only ever holds canonical body text). */
export function recordPreimageFromBodyText(fields: EnvelopeFields, bodyText: string): string {
  return (
    `{"body":${bodyText},"kind":${canonicalize(fields.kind)},"prevHash":${canonicalize(fields.prevHash)},` +
    `"runId":${fields.runId === null ? 'null' : canonicalize(fields.runId)},"seq":${canonicalize(fields.seq)},` +
    `"time":${canonicalize(fields.time)},"v":${canonicalize(fields.v)}}`
  );
}
