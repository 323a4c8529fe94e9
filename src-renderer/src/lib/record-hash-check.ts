/**
 * Recomputes a record's hash in the window: SHA-256 over its RFC 8785 preimage, with WebCrypto.
 * The inspector shows the result beside the hash the plane reported, so a person can see the
 * chain hold for the record in front of them without trusting the plane's word for it.
 */
import { recordPreimage } from '../../../src-shared/journal/record-hash';
import type { JournalRecord } from '../../../src-shared/journal/records';

export function preimageOf(record: JournalRecord & { stored?: Record<string, unknown> }): string {
  const { hash: _hash, ...fields } = record;
  // A sealed record's hash covers its stored (sealed) body, not the payload it opened to (docs/ERASURE.md).
  return recordPreimage({ seq: fields.seq, runId: fields.runId, kind: fields.kind, v: fields.v, time: fields.time, body: fields.stored ?? fields.body, prevHash: fields.prevHash });
}

export async function sha256Hex(text: string): Promise<string | null> {
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return null; // not a secure context: the check is skipped, and the view says so
  const digest = await subtle.digest('SHA-256', new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}
