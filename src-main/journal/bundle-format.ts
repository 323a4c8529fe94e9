/**
 * The export bundle's format: one self-contained JSONL file,
 *   line 1      {"format":"agentplane-journal-bundle","version":1, journalId, scope, publicKey, keyId, createdAt, records}
 *   then        {"hash":"<hex>","proof":[…],"record":<the record's canonical preimage>}   one per record, in seq order
 *   last lines  {"checkpoint":"<compact JWS>"}
 * A record line carries the exact bytes that were hashed, so a verifier checks them without
 * re-canonicalising, and can still read every field (seq first among them) with any JSON
 * parser. `proof` (an RFC 6962 audit path to the anchor checkpoint) is present in run and
 * seq-range bundles, whose records do not start at seq 1.
 *
 * Here: the header's schema, a record line written (recordLine) and read back, as text
 * (parseRecordLine) or as bytes (recordOfLineBytes), and the plain-JSON shapes that export
 * (bundle-export.ts), bundle verification (bundle-verify.ts), the data dir's verification
 * (store-verify.ts) and the worker pool (journal-worker-pool.ts) share. It imports none of them.
 */
import { z } from 'zod';
import { recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import { toHex } from './hex';
import { CosignatureEntrySchema, type CosignatureEntry } from './witness/cosignature-log';
import type { StoredRecord } from './journal-store';
import type { VerifiableRecord, VerifyScope } from './verify';

export const BUNDLE_FORMAT = 'agentplane-journal-bundle';

const ScopeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('full') }),
  z.object({ kind: z.literal('range'), fromSeq: z.number().int().positive(), toSeq: z.number().int().positive() }),
  z.object({ kind: z.literal('run'), runId: z.string().min(1) }),
]);

export const BundleHeaderSchema = z.object({
  format: z.literal(BUNDLE_FORMAT),
  version: z.literal(1),
  journalId: z.string(),
  scope: ScopeSchema,
  publicKey: z.record(z.string(), z.unknown()),
  keyId: z.string(),
  createdAt: z.string(),
  records: z.number().int().nonnegative(),
  /** Witnesses' cosignatures of this journal's checkpoints (docs/WITNESS.md); absent when it has none. */
  cosignatures: z.array(CosignatureEntrySchema).optional(),
});
export type BundleHeader = z.infer<typeof BundleHeaderSchema>;

/** The start of every checkpoint line (the bundle's last lines). */
export const CHECKPOINT_LINE = '{"checkpoint":';

export interface ExportResult {
  file: string;
  records: number;
  treeSize: number;
  rootHash: string;
  /** The signing key's id: what a recipient pins with `journal verify --key-id`. */
  keyId: string;
}

/**
 * What an export writes, settled on the thread that holds the plane's key: the anchor it has
 * just signed over the head, and the checkpoints the bundle carries (the anchor last). Plain
 * JSON, so the writing can happen in a journal worker (journal-workers.ts) with its own
 * read-only connection, while the key never leaves this thread.
 */
export interface ExportPlan {
  scope: VerifyScope;
  journalId: string;
  publicKey: Record<string, unknown>;
  keyId: string;
  /** The anchor's tree size and root: the bundle holds records up to this seq and no further. */
  treeSize: number;
  rootHash: string;
  checkpoints: string[];
  /** The cosignatures (docs/WITNESS.md) of checkpoints up to the anchor's size, for a full bundle. */
  cosignatures?: CosignatureEntry[];
}

export interface BundleVerifyOptions {
  /** Refuse a bundle (or data dir) whose key is not this one: the plane's key id, as its bundles name it. */
  expectKeyId?: string;
}

/** A record line as export writes it: its hash, its audit path when it has one, its preimage. */
export function recordLine(record: StoredRecord, proof: Uint8Array[] | null): string {
  const preimage = recordPreimageFromBodyText(record, record.bodyText);
  const proofPart = proof ? `,"proof":[${proof.map((h) => `"${toHex(h)}"`).join(',')}]` : '';
  return `{"hash":"${record.hash}"${proofPart},"record":${preimage}}\n`;
}
/**
 * The tail of a canonical preimage: every envelope field after the body, in RFC 8785 key
 * order. A JSON string here is `"` then anything but a bare `"` or `\`, or an escape.
 */
// A raw control character is never inside a JSON string, so the classes exclude them.
const ENVELOPE_TAIL =
  // eslint-disable-next-line no-control-regex
  /,"kind":("(?:[^"\\\x00-\x1f]|\\.)*"),"prevHash":"([0-9a-f]{64})","runId":(null|"(?:[^"\\\x00-\x1f]|\\.)*"),"seq":(0|[1-9][0-9]{0,15}),"time":"(?:[^"\\\x00-\x1f]|\\.)*","v":(?:0|[1-9][0-9]{0,15})}$/y;

/** A JSON string literal's value; only one holding an escape goes through JSON.parse (which may throw). */
function stringValue(literal: string): string {
  return literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
}

/**
 * The envelope fields the verifier reads (seq, prevHash, kind, runId), taken from a canonical
 * preimage without parsing its body: the body comes first, so its end is found from the tail.
 * The last `,"kind":"` in the text is the envelope's, because inside any JSON string a `"` is
 * escaped, so that sequence can only appear as a key, and every key after the body's is the
 * envelope's. Null when the text is not of that canonical form: the caller then parses it
 * whole, so an odd record costs a JSON.parse and means exactly what JSON.parse says.
 * The body's own bytes are not validated here: the record's hash covers them, and a record
 * verifies only when a signed root covers that hash.
 */
export function envelopeOfPreimage(preimage: string): Envelope | null {
  if (!preimage.startsWith('{"body":')) return null;
  const at = preimage.lastIndexOf(',"kind":"');
  return at < 0 ? null : envelopeAt(preimage, at);
}

type Envelope = { seq: number; prevHash: string; kind: string; runId: string | null };

/** The envelope of a canonical preimage whose last `,"kind":"` is at `at` (envelopeOfPreimage). */
function envelopeAt(text: string, at: number): Envelope | null {
  ENVELOPE_TAIL.lastIndex = at;
  const m = ENVELOPE_TAIL.exec(text);
  if (!m) return null;
  const seq = Number(m[4]);
  if (!Number.isSafeInteger(seq)) return null;
  try {
    return { seq, prevHash: m[2]!, kind: stringValue(m[1]!), runId: m[3] === 'null' ? null : stringValue(m[3]!) };
  } catch {
    return null; // an escape JSON does not know: the whole-text parse names the failure
  }
}

/** Parses a record line into what the verifier checks, without trusting anything in it. */
export function parseRecordLine(line: string): VerifiableRecord {
  // Fast path for the common form this module writes without a proof:
  // {"hash":"<64 hex>","record":<preimage>} — one JSON.parse instead of two.
  if (line.startsWith('{"hash":"') && line.charCodeAt(73) === 0x22 && line.startsWith(',"record":', 74) && line.endsWith('}')) {
    const preimage = line.slice(84, -1);
    const envelope = envelopeOfPreimage(preimage);
    // Built field by field in one shape with the other returns (a spread made it 3× slower).
    if (envelope) return { seq: envelope.seq, prevHash: envelope.prevHash, hash: line.slice(9, 73), kind: envelope.kind, runId: envelope.runId, preimage };
    let inner: { seq?: unknown; prevHash?: unknown; kind?: unknown; runId?: unknown };
    try {
      inner = JSON.parse(preimage) as typeof inner;
    } catch {
      return unreadable('a record line is not valid JSON');
    }
    if (typeof inner.seq !== 'number' || typeof inner.prevHash !== 'string' || typeof inner.kind !== 'string') {
      return unreadable('a record line lacks its hash, seq, prevHash or kind');
    }
    return { seq: inner.seq, prevHash: inner.prevHash, hash: line.slice(9, 73), kind: inner.kind, runId: typeof inner.runId === 'string' ? inner.runId : null, preimage };
  }
  const at = line.indexOf(',"record":');
  if (!line.startsWith('{"hash":') || at < 0 || !line.endsWith('}')) {
    return unreadable('a record line is not of the form {"hash":…,"record":…}');
  }
  let outer: { hash?: unknown; proof?: unknown };
  let inner: { seq?: unknown; prevHash?: unknown; kind?: unknown; runId?: unknown };
  const preimage = line.slice(at + ',"record":'.length, -1);
  try {
    outer = JSON.parse(`${line.slice(0, at)}}`) as typeof outer;
    inner = envelopeOfPreimage(preimage) ?? (JSON.parse(preimage) as typeof inner);
  } catch {
    return unreadable('a record line is not valid JSON');
  }
  if (typeof outer.hash !== 'string' || typeof inner.seq !== 'number' || typeof inner.prevHash !== 'string' || typeof inner.kind !== 'string') {
    return unreadable('a record line lacks its hash, seq, prevHash or kind');
  }
  if (outer.proof !== undefined && !(Array.isArray(outer.proof) && outer.proof.every((p) => typeof p === 'string'))) {
    return unreadable('a record line has a malformed proof');
  }
  return {
    seq: inner.seq,
    prevHash: inner.prevHash,
    hash: outer.hash,
    kind: inner.kind,
    runId: typeof inner.runId === 'string' ? inner.runId : null,
    preimage,
    proof: outer.proof as string[] | undefined,
  };
}

/** Bytes 73..91 of a plain record line: the hash's closing quote, the record's key, the body's. */
const PLAIN_LINE_MIDDLE = Buffer.from('","record":{"body":');
const LINE_HEAD = Buffer.from('{"hash":"');
const KIND_KEY = Buffer.from(',"kind":"');
const V_KEY = Buffer.from(',"v":');
const TIME_KEY = Buffer.from(',"time":');
const SEQ_KEY = Buffer.from(',"seq":');
const RUN_ID_KEY = Buffer.from(',"runId":');
const NULL_VALUE = Buffer.from('null');
const PREV_HASH_KEY = Buffer.from(',"prevHash":');
const KIND_KEY_ONLY = Buffer.from(',"kind":');

/** Whether bytes [at, at + literal.length) of `b` are `literal`: a loop, cheaper than a native compare at this size. */
function bytesAt(b: Buffer, at: number, literal: Buffer): boolean {
  if (at < 0 || at + literal.length > b.length) return false;
  for (let i = 0; i < literal.length; i++) if (b[at + i] !== literal[i]) return false;
  return true;
}

/** Where the JSON integer (0, or 1-9 then up to 15 digits) that ends at `end` starts; -1 if none does. */
function integerBefore(b: Buffer, end: number, floor: number): number {
  let at = end;
  while (at > floor && b[at - 1]! >= 0x30 && b[at - 1]! <= 0x39) at -= 1;
  const digits = end - at;
  return digits === 0 || digits > 16 || (digits > 1 && b[at] === 0x30) ? -1 : at;
}

/**
 * Where the JSON string that ends at `end` (its closing quote at end - 1) opens, for a string of
 * printable ASCII with no escape only; -1 for any other (the regex then decides).
 */
function plainStringBefore(b: Buffer, end: number, floor: number): number {
  if (b[end - 1] !== 0x22) return -1;
  for (let at = end - 2; at >= floor; at--) {
    const c = b[at]!;
    if (c === 0x22) return at;
    if (c < 0x20 || c === 0x5c || c >= 0x80) return -1;
  }
  return -1;
}

/**
 * The envelope of a canonical preimage held as bytes [ps, pe), read backward from its end with no
 * regex and no text but the fields': what a bundle worker does for nearly every record (measured:
 * decoding the tail and running ENVELOPE_TAIL was the largest cost after hashing). It accepts only
 * the common case, strings of printable ASCII without escapes; null for anything else, and the
 * caller then runs the regex over the decoded tail. Where this accepts, that regex accepts with
 * the same fields: the bytes from the `,"kind":"` found here to the end are ENVELOPE_TAIL's form,
 * and it is the last `,"kind":"` in the text, since none of the fields after it can hold a `"`.
 */
function envelopeOfBytes(b: Buffer, ps: number, pe: number): Envelope | null {
  let end = pe - 1;
  if (end <= ps || b[end] !== 0x7d) return null;
  end = integerBefore(b, end, ps); // v
  if (end < 0 || !bytesAt(b, (end -= V_KEY.length), V_KEY)) return null;
  end = plainStringBefore(b, end, ps); // time
  if (end < 0 || !bytesAt(b, (end -= TIME_KEY.length), TIME_KEY)) return null;
  const seqEnd = end;
  const seqStart = integerBefore(b, end, ps);
  if (seqStart < 0 || !bytesAt(b, (end = seqStart - SEQ_KEY.length), SEQ_KEY)) return null;
  let runId: string | null = null;
  if (b[end - 1] === 0x22) {
    const open = plainStringBefore(b, end, ps);
    if (open < 0) return null;
    runId = b.toString('latin1', open + 1, end - 1);
    end = open;
  } else if (bytesAt(b, end - NULL_VALUE.length, NULL_VALUE)) {
    end -= NULL_VALUE.length;
  } else {
    return null;
  }
  if (!bytesAt(b, (end -= RUN_ID_KEY.length), RUN_ID_KEY) || b[end - 1] !== 0x22 || b[end - 66] !== 0x22) return null;
  for (let i = end - 65; i < end - 1; i++) {
    const c = b[i]!;
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return null;
  }
  const prevHash = b.toString('latin1', end - 65, end - 1);
  end -= 66;
  if (!bytesAt(b, (end -= PREV_HASH_KEY.length), PREV_HASH_KEY)) return null;
  const open = plainStringBefore(b, end, ps);
  if (open < 0 || !bytesAt(b, open - KIND_KEY_ONLY.length, KIND_KEY_ONLY) || open - KIND_KEY_ONLY.length < ps + 8) return null;
  const seq = Number(b.toString('latin1', seqStart, seqEnd));
  if (!Number.isSafeInteger(seq)) return null;
  return { seq, prevHash, kind: b.toString('latin1', open + 1, end - 1), runId };
}

/**
 * `parseRecordLine` over the UTF-8 bytes [s, e) of one line, for a bundle worker: the record's
 * preimage is its bytes (hashed as they are, never decoded), and only the envelope's fields are
 * decoded to text. The record it returns is the one `parseRecordLine` returns for the decoded
 * line, provided the bytes are valid UTF-8 (the caller checks, since a decoder replaces what is
 * not): up to byte 84 the line is ASCII here (its hash's bytes are checked), so byte and character
 * offsets agree, and an ASCII `,"kind":"` cannot occur inside a multi-byte character. Any line
 * not of the plain form export writes is decoded and parsed as text.
 */
export function recordOfLineBytes(bytes: Buffer, s: number, e: number): VerifiableRecord {
  if (e - s > 92 && bytes[e - 1] === 0x7d && bytesAt(bytes, s, LINE_HEAD) && bytesAt(bytes, s + 73, PLAIN_LINE_MIDDLE)) {
    let high = 0;
    for (let i = s + 9; i < s + 73; i++) high |= bytes[i]!;
    // A byte of 0x80 or more in the hash would make character offsets differ from byte offsets.
    if (high < 0x80) {
      const preimage = bytes.subarray(s + 84, e - 1);
      let envelope = envelopeOfBytes(bytes, s + 84, e - 1);
      if (!envelope) {
        const at = preimage.lastIndexOf(KIND_KEY);
        envelope = at >= 0 ? envelopeAt(preimage.toString('utf8', at), 0) : null;
      }
      if (envelope) return { seq: envelope.seq, prevHash: envelope.prevHash, hash: bytes.toString('latin1', s + 9, s + 73), kind: envelope.kind, runId: envelope.runId, preimage };
    }
  }
  return parseRecordLine(bytes.toString('utf8', s, e));
}

/** What a line that cannot be read as a record verifies as: it fails, with why. */
export function unreadable(why: string): VerifiableRecord {
  return { seq: 0, prevHash: '', hash: '', kind: '', runId: null, preimage: '', unreadable: why };
}
