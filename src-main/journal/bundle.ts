/**
 * Export bundles and offline verification.
 *
 * A bundle is one self-contained JSONL file:
 *   line 1      {"format":"agentplane-journal-bundle","version":1, journalId, scope, publicKey, keyId, createdAt, records}
 *   then        {"hash":"<hex>","proof":[…],"record":<the record's canonical preimage>}   one per record, in seq order
 *   last lines  {"checkpoint":"<compact JWS>"}
 * A record line carries the exact bytes that were hashed, so a verifier checks them without
 * re-canonicalising, and can still read every field (seq first among them) with any JSON
 * parser. `proof` (an RFC 6962 audit path to the anchor checkpoint) is present in run and
 * seq-range bundles, whose records do not start at seq 1.
 *
 * Export first issues a checkpoint over the current head, then writes only records that
 * checkpoint covers, and always writes that checkpoint: a bundle is always fully anchored, even
 * while other writers append. That is what lets a verifier refuse every record no signed
 * checkpoint covers (see verify.ts): a genuine bundle never has one. It is written to a
 * temporary file and renamed, so a failed export leaves no half bundle behind.
 */
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { createReadStream, existsSync, closeSync, fstatSync, openSync, readSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import type { JWK } from 'jose';
import { recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import { BundleError } from './bundle-error';
import { peekCheckpoint } from './checkpoints';
import { fromHex, toHex } from './hex';
import type { Journal } from './journal';
import type { JournalReads, StoredRecord } from './journal-store';
import type { StoredRecordText } from './sqlite-store';
import { MerkleLevels } from './merkle-levels';
import { leafHash } from './merkle';
import { publicPlaneKey } from './plane-key';
import { JournalWorkers, type JobTimes } from './journal-worker-pool';
import { ChunkChecker, chunkCount, claimedCheckpoints, foldChunks, sameCheckpoints, PARALLEL_VERIFY_FROM_RECORDS, type ChunkOutcome, type ChunkPlan } from './verify-chunks';
import { RecordChecks, verifyCheckpoints, verifyJournal, type VerifiableRecord, type VerifyReport, type VerifyScope } from './verify';

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
});
export type BundleHeader = z.infer<typeof BundleHeaderSchema>;

export { BundleError };

export interface ExportResult {
  file: string;
  records: number;
  treeSize: number;
  rootHash: string;
  /** The signing key's id: what a recipient pins with `journal verify --key-id`. */
  keyId: string;
}

export type ExportProgress = (written: number, total: number) => void;

function recordLine(record: StoredRecord, proof: Uint8Array[] | null): string {
  const preimage = recordPreimageFromBodyText(record, record.bodyText);
  const proofPart = proof ? `,"proof":[${proof.map((h) => `"${toHex(h)}"`).join(',')}]` : '';
  return `{"hash":"${record.hash}"${proofPart},"record":${preimage}}\n`;
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
}

/** Signs the anchor and checks the scope against it; the first half of `exportBundle`. */
export async function planExport(journal: Journal, scope: VerifyScope): Promise<ExportPlan> {
  const anchor = await journal.checkpoint();
  const treeSize = anchor.checkpoint.treeSize;
  if (scope.kind === 'range') {
    if (scope.fromSeq > scope.toSeq) throw new BundleError(`--from ${scope.fromSeq} is after --to ${scope.toSeq}`);
    if (scope.toSeq > treeSize) throw new BundleError(`--to ${scope.toSeq} is beyond the journal's last record (seq ${treeSize})`);
  }
  // The anchor (signed above, over exactly the records written) is carried whatever the log
  // holds: it is the signature that covers the bundle's last record.
  const checkpoints =
    scope.kind === 'full'
      ? [
          ...journal.checkpoints.readAll().filter((jws) => {
            const c = peekCheckpoint(jws);
            return jws !== anchor.jws && c !== null && c.journalId === journal.journalId && c.keyId === journal.key.keyId && c.treeSize <= treeSize;
          }),
          anchor.jws,
        ]
      : [anchor.jws];
  return {
    scope,
    journalId: journal.journalId,
    publicKey: journal.key.publicJwk as Record<string, unknown>,
    keyId: journal.key.keyId,
    treeSize,
    rootHash: anchor.checkpoint.rootHash,
    checkpoints,
  };
}

/**
 * Writes the bundle a plan describes, reading the records through `reads` (the journal's own
 * store, or a worker's read-only connection); the second half of `exportBundle`.
 */
export async function writeBundle(reads: JournalReads, plan: ExportPlan, file: string, onProgress?: ExportProgress): Promise<ExportResult> {
  const { scope, treeSize } = plan;
  let seqs: number[] | null = null;
  if (scope.kind === 'run') {
    seqs = (await reads.runSeqs(scope.runId)).filter((s) => s <= treeSize);
    if (seqs.length === 0) throw new BundleError(`no run ${scope.runId} in this journal`);
  }
  const total = scope.kind === 'full' ? treeSize : scope.kind === 'range' ? scope.toSeq - scope.fromSeq + 1 : seqs!.length;
  const levels = scope.kind === 'full' ? null : new MerkleLevels((await reads.readHashes(1, treeSize)).map((h) => leafHash(fromHex(h))));

  const header: BundleHeader = {
    format: BUNDLE_FORMAT,
    version: 1,
    journalId: plan.journalId,
    scope,
    publicKey: plan.publicKey,
    keyId: plan.keyId,
    createdAt: new Date().toISOString(),
    records: total,
  };
  const temporary = partialFileOf(file);
  const fd = openSync(temporary, 'w', 0o644);
  try {
    writeSync(fd, `${JSON.stringify(header)}\n`);
    let written = 0;
    const emit = (record: StoredRecord) => {
      writeSync(fd, recordLine(record, levels ? levels.inclusionProof(record.seq - 1) : null));
      written += 1;
      if (onProgress && (written % 1000 === 0 || written === total)) onProgress(written, total);
    };
    if (scope.kind === 'run') {
      for (let i = 0; i < seqs!.length; i += 500) {
        const chunk = seqs!.slice(i, i + 500);
        const rows = await reads.readRun(scope.runId, chunk[0]!, chunk.length);
        for (const row of rows) if (row.seq <= treeSize) emit(row);
      }
    } else {
      const from = scope.kind === 'range' ? scope.fromSeq : 1;
      const to = scope.kind === 'range' ? scope.toSeq : treeSize;
      for await (const row of reads.iterate(from, to)) emit(row);
    }
    for (const jws of plan.checkpoints) writeSync(fd, `${JSON.stringify({ checkpoint: jws })}\n`);
    closeSync(fd);
    renameSync(temporary, file);
    return { file, records: written, treeSize, rootHash: plan.rootHash, keyId: plan.keyId };
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** Where a bundle is written before it is renamed into place (removed if the export fails). */
export function partialFileOf(file: string): string {
  return `${file}.partial-${process.pid}`;
}

export async function exportBundle(journal: Journal, scope: VerifyScope, file: string, onProgress?: ExportProgress): Promise<ExportResult> {
  return writeBundle(journal.store, await planExport(journal, scope), file, onProgress);
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

function unreadable(why: string): VerifiableRecord {
  return { seq: 0, prevHash: '', hash: '', kind: '', runId: null, preimage: '', unreadable: why };
}

export interface BundleVerifyOptions {
  /** Refuse a bundle (or data dir) whose key is not this one: the plane's key id, as its bundles name it. */
  expectKeyId?: string;
}

export type BundleReport = VerifyReport & { header?: BundleHeader };

/**
 * Verifies a bundle file: across the bundle workers (verifyBundleInParallel) when it is a full
 * journal of PARALLEL_VERIFY_FROM_RECORDS records or more of the plain form export writes, and
 * workers can start here; on this thread otherwise. The report is the same either way.
 */
export async function verifyBundleFile(file: string, options: BundleVerifyOptions = {}): Promise<BundleReport> {
  if (!existsSync(file)) throw new BundleError(`${file} does not exist`);
  if (statSync(file).isDirectory()) throw new BundleError(`${file} is a folder, not a journal bundle`);
  if (statSync(file).size === 0) throw new BundleError(`${file} is empty: not a journal bundle`);
  return (await verifyBundleInParallel(file, options)) ?? verifyBundleFileInThread(file, options);
}

/** `verifyBundleFile` on the calling thread, one line at a time: the reference every other path answers as. */
export async function verifyBundleFileInThread(file: string, options: BundleVerifyOptions = {}): Promise<BundleReport> {
  if (!existsSync(file)) throw new BundleError(`${file} does not exist`);
  if (statSync(file).isDirectory()) throw new BundleError(`${file} is a folder, not a journal bundle`);
  if (statSync(file).size === 0) throw new BundleError(`${file} is empty: not a journal bundle`);
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity })[Symbol.asyncIterator]();
  const first = await lines.next();
  let header: BundleHeader;
  try {
    const parsed = BundleHeaderSchema.safeParse(JSON.parse(String(first.value)));
    if (!parsed.success) throw new Error('schema');
    header = parsed.data;
  } catch {
    void lines.return?.();
    throw new BundleError(`${file} is not an AgentPlane journal bundle (its first line is not a bundle header)`);
  }
  let key;
  try {
    key = await publicPlaneKey(header.publicKey as JWK);
  } catch (error) {
    throw new BundleError(`${file}: ${(error as Error).message}`);
  }
  if (key.keyId !== header.keyId) throw new BundleError(`${file}: the header's key id does not match its public key`);
  if (options.expectKeyId && key.keyId !== options.expectKeyId) {
    return { ok: false, seq: null, reason: `the bundle is signed by key ${key.keyId}, not the expected ${options.expectKeyId}`, count: 0, header };
  }

  const checkpoints: string[] = [];
  async function* records(): AsyncIterable<VerifiableRecord> {
    for (;;) {
      const next = await lines.next();
      if (next.done) return;
      const line = String(next.value);
      if (line === '') continue;
      if (line.startsWith('{"checkpoint":')) {
        try {
          const { checkpoint } = JSON.parse(line) as { checkpoint?: unknown };
          if (typeof checkpoint === 'string') checkpoints.push(checkpoint);
          continue;
        } catch {
          yield unreadable('a checkpoint line is not valid JSON');
          return;
        }
      }
      if (checkpoints.length > 0) {
        yield unreadable('a record line follows the checkpoints');
        return;
      }
      yield parseRecordLine(line);
    }
  }
  // Checkpoints come last in the file, so records are buffered only as far as needed: the
  // verifier runs over them once the checkpoints are known.
  const buffered: VerifiableRecord[] = [];
  for await (const record of records()) buffered.push(record);
  // A bundle is handed over: a record no checkpoint signed by its key covers is vouched for by
  // nobody, so it fails (a genuine export never has one; see exportBundle).
  const report = await verifyJournal({
    scope: header.scope,
    records: buffered,
    checkpoints,
    publicKey: key.publicKey,
    keyId: key.keyId,
    journalId: header.journalId,
    uncovered: 'fail',
  });
  if (report.ok && report.count !== header.records) {
    return { ok: false, seq: null, reason: `the header promises ${header.records} records but the bundle holds ${report.count}`, count: report.count, header };
  }
  return { ...report, header };
}

let bundleWorkers: JournalWorkers | null = null;

/** What the shared bundle pool's workers have measured of their jobs so far; null before it has started. */
export function bundleWorkerTimes(): JobTimes | null {
  return bundleWorkers?.jobTimes() ?? null;
}

/**
 * The pool bundle verification splits across: one per process, started at the first large
 * bundle, reading files only (no database), at normal priority. Its idle workers are unref'd,
 * so it never keeps a process alive.
 */
function sharedBundleWorkers(): JournalWorkers | null {
  // Normal priority: whoever verifies a bundle file waits for the answer (the CLI), and the
  // plane's own background work never comes here.
  if (!bundleWorkers && JournalWorkers.available()) bundleWorkers = new JournalWorkers({ lowPriority: false });
  return bundleWorkers;
}

const CHECKPOINT_LINE = '{"checkpoint":';
const CHECKPOINT_LINE_BYTES = Buffer.from(CHECKPOINT_LINE);
const CHECKPOINT_AFTER_NEWLINE = Buffer.from(`\n${CHECKPOINT_LINE}`);

/** Where a bundle's parts are, read from its two ends only (bundleEnds). */
interface BundleEnds {
  header: string;
  /** The record lines are bytes [recordsStart, recordsEnd): after the header, before the checkpoint lines. */
  recordsStart: number;
  recordsEnd: number;
  checkpoints: string[];
}

/** The longest header line read in search of its end; a real header is a few hundred bytes. */
const MAX_HEADER_BYTES = 1 << 20;

/**
 * The header line and the checkpoint lines (and empty ones) at the end of a bundle, read from the
 * file's two ends without reading the records between: reading a large bundle whole on this
 * thread cost more than its workers took to check it (9 MB: 33 ms to read into fresh memory,
 * 15 ms more to scan it for a CR, against about 60 ms of checking). Null for what the parallel
 * path leaves to the single-thread one: a header or checkpoint line with a CR in it, a header
 * with no end, a checkpoint line that is not JSON.
 */
function bundleEnds(file: string): BundleEnds | null {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    let headerEnd = -1;
    let head: Buffer = Buffer.alloc(0);
    for (let want = 64 * 1024; headerEnd < 0; want *= 4) {
      head = readBytes(fd, file, 0, Math.min(size, want));
      headerEnd = head.indexOf(0x0a);
      if (headerEnd < 0 && (head.length === size || want >= MAX_HEADER_BYTES)) return null;
    }
    // readline also ends a line at a lone CR; a genuine bundle (JSON lines) never holds a raw one.
    if (head.subarray(0, headerEnd).includes(0x0d)) return null;
    const recordsStart = headerEnd + 1;
    // Walk back over the last lines while they are checkpoint lines or empty; a tail read that
    // holds no line start but the first it began inside is read again, larger.
    for (let want = 64 * 1024; ; want *= 4) {
      const from = Math.max(recordsStart, size - want);
      const tail = readBytes(fd, file, from, size - from);
      const checkpoints: string[] = [];
      let recordsEnd = size;
      let complete = true;
      for (;;) {
        if (recordsEnd <= recordsStart) break;
        const lineEnd = tail[recordsEnd - 1 - from] === 0x0a ? recordsEnd - 1 : recordsEnd;
        const newline = lineEnd - from - 1 < 0 ? -1 : tail.lastIndexOf(0x0a, lineEnd - from - 1);
        if (newline < 0 && from > recordsStart) {
          complete = false;
          break;
        }
        const lineStart = newline < 0 ? recordsStart : from + newline + 1;
        const line = tail.subarray(lineStart - from, lineEnd - from);
        if (line.length > 0 && line.compare(CHECKPOINT_LINE_BYTES, 0, CHECKPOINT_LINE_BYTES.length, 0, Math.min(line.length, CHECKPOINT_LINE_BYTES.length)) !== 0) break;
        if (line.length > 0) {
          try {
            const { checkpoint } = JSON.parse(line.toString('utf8')) as { checkpoint?: unknown };
            if (typeof checkpoint === 'string') checkpoints.unshift(checkpoint);
          } catch {
            return null;
          }
        }
        recordsEnd = lineStart;
      }
      if (!complete) continue;
      if (tail.subarray(Math.max(0, recordsEnd - from)).includes(0x0d)) return null;
      return { header: head.toString('utf8', 0, headerEnd), recordsStart, recordsEnd, checkpoints };
    }
  } finally {
    closeSync(fd);
  }
}

function changedWhileVerified(file: string): BundleError {
  return new BundleError(`${file} changed while it was verified`);
}

/** Bytes [position, position + length) of an open file, into `into` (or a new buffer). */
function readBytes(fd: number, file: string, position: number, length: number, into?: Buffer): Buffer {
  const bytes = into ?? Buffer.allocUnsafe(length);
  for (let read = 0; read < length; ) {
    const n = readSync(fd, bytes, read, length - read, position + read);
    if (n === 0) throw changedWhileVerified(file);
    read += n;
  }
  return into ? bytes.subarray(0, length) : bytes;
}

/**
 * A full-journal bundle verified across the bundle workers, each checking the record lines that
 * start in one byte range of the file (verify-chunks.ts); the header and the checkpoint lines
 * are read here, from the file's two ends (bundleEnds), and the checkpoints' signatures are
 * verified here while the workers check the records. Null, so the caller verifies on one
 * thread, for anything but the plain form export writes (a CR anywhere, a checkpoint line among
 * the records, bytes that are not UTF-8, an unparsable checkpoint line, any header or key
 * problem: the single-thread path words those), a run or range bundle, a small one, a machine of
 * one core, or one where workers cannot start. A worker that dies fails the verification
 * (JournalError 'WorkerCrashed').
 */
export async function verifyBundleInParallel(file: string, options: BundleVerifyOptions = {}, workers: JournalWorkers | null = sharedBundleWorkers()): Promise<BundleReport | null> {
  if (!workers || workers.size < 2) return null;
  const ends = bundleEnds(file);
  if (!ends) return null;
  const { recordsStart, recordsEnd, checkpoints } = ends;
  let header: BundleHeader;
  try {
    const parsed = BundleHeaderSchema.safeParse(JSON.parse(ends.header));
    if (!parsed.success) return null;
    header = parsed.data;
  } catch {
    return null;
  }
  if (header.scope.kind !== 'full' || header.records < PARALLEL_VERIFY_FROM_RECORDS) return null;
  let key;
  try {
    key = await publicPlaneKey(header.publicKey as JWK);
  } catch {
    return null;
  }
  if (key.keyId !== header.keyId || (options.expectKeyId && key.keyId !== options.expectKeyId)) return null;

  const claimed = claimedCheckpoints(checkpoints, key.keyId);
  if (!claimed) return null;
  // Byte ranges of about equal size (chunkCount of them); each worker checks the lines that
  // start in its range, the last of them read to its end.
  const plan: ChunkPlan = { signed: claimed, uncovered: 'fail', startSeq: null };
  const parts = chunkCount(header.records, workers.size);
  const jobs: Array<Promise<ChunkOutcome>> = [];
  for (let part = 0; part < parts; part++) {
    const start = recordsStart + Math.floor(((recordsEnd - recordsStart) * part) / parts);
    const end = recordsStart + Math.floor(((recordsEnd - recordsStart) * (part + 1)) / parts);
    if (end > start) jobs.push(workers.run({ kind: 'verifyBundleChunk', plan, file, start, end, limit: recordsEnd }).then((o) => ({ summary: o.result, roots: o.bytes ?? new Uint8Array(0) })));
  }
  const settled = Promise.allSettled(jobs);
  const verified = await verifyCheckpoints({ checkpoints, publicKey: key.publicKey, keyId: key.keyId, journalId: header.journalId });
  const chunks: ChunkOutcome[] = [];
  for (const result of await settled) {
    if (result.status === 'rejected') throw result.reason as Error;
    chunks.push(result.value);
  }
  // The single-thread verifier checks every signature before any record: its failure is first.
  if ('failed' in verified) return { ...verified.failed, header };
  if (!sameCheckpoints(verified.signed, claimed)) return null;
  const checks = new RecordChecks({ kind: 'full' }, verified.signed, 'fail');
  const empty = checks.checkEmptyTree();
  if (empty) return { ...empty, header };
  const report = foldChunks(checks, chunks);
  if (!report) return null;
  if (report.ok && report.count !== header.records) {
    return { ok: false, seq: null, reason: `the header promises ${header.records} records but the bundle holds ${report.count}`, count: report.count, header };
  }
  return { ...report, header };
}

/**
 * How much of a bundle a worker reads at a time (grown for a longer line). One buffer per worker
 * thread, kept between chunks: reading into fresh memory costs its page faults every time
 * (measured here: 9 MB read into a new buffer 45 ms, the same through a reused 1 MB one 8 ms).
 */
export const BUNDLE_WINDOW_BYTES = 1 << 20;
let windowBuffer: Buffer | null = null;

/**
 * Checks the record lines that start in bytes [start, end) of a bundle file, reading each to its
 * end (no further than `limit`, where the checkpoint lines begin): a chunk, in a worker. The line
 * a range starts inside belongs to the range before. The records are parsed from the bytes
 * (recordOfLineBytes), so each preimage is hashed as the file holds it and only envelopes are
 * decoded. Every byte of the range is also checked for what would make the single-thread
 * verifier read the file differently (a CR, a checkpoint line, bytes that are not UTF-8),
 * even after a record has failed: any of them declines the chunk's answer (`declined`).
 */
export function verifyBundleChunk(file: string, start: number, end: number, limit: number, plan: ChunkPlan, windowBytes = BUNDLE_WINDOW_BYTES): ChunkOutcome {
  const checker = new ChunkChecker(plan);
  let declined: string | null = null;
  if (!windowBuffer || windowBuffer.length !== windowBytes) windowBuffer = Buffer.allocUnsafe(windowBytes);
  let window = windowBuffer;
  const fd = openSync(file, 'r');
  try {
    if (fstatSync(fd).size < limit) throw changedWhileVerified(file);
    // The first line starting at `start` or later: the byte before `start` is read with it, so
    // a line starting exactly at `start` is found by the newline before it.
    let pos = end;
    for (let at = start - 1; at < end; ) {
      const view = readBytes(fd, file, at, Math.min(window.length, end - at), window);
      const newline = view.indexOf(0x0a);
      if (newline >= 0) {
        pos = at + newline + 1;
        break;
      }
      at += view.length;
    }
    let checking = true;
    while (pos < end && declined === null) {
      const view = readBytes(fd, file, pos, Math.min(window.length, limit - pos), window);
      const last = pos + view.length === limit;
      let at = 0;
      while (at < view.length && pos + at < end) {
        let newline = view.indexOf(0x0a, at);
        if (newline < 0) {
          if (!last) break; // the line goes on past the window
          newline = view.length;
        }
        if (checking && newline > at && !checker.check(recordOfLineBytes(view, at, newline))) checking = false;
        at = Math.min(newline + 1, view.length);
      }
      if (at === 0) {
        // One line longer than the window: read it again into a window twice as large.
        window = Buffer.allocUnsafe(window.length * 2);
        continue;
      }
      const lines = view.subarray(0, at);
      if (lines.includes(0x0d)) declined = 'a CR among the record lines';
      else if (!isUtf8(lines)) declined = 'record lines that are not UTF-8';
      else if (lines.indexOf(CHECKPOINT_AFTER_NEWLINE) >= 0 || lines.compare(CHECKPOINT_LINE_BYTES, 0, CHECKPOINT_LINE_BYTES.length, 0, Math.min(at, CHECKPOINT_LINE_BYTES.length)) === 0) {
        declined = 'a checkpoint line among the record lines';
      }
      pos += at;
    }
  } finally {
    closeSync(fd);
  }
  const outcome = checker.result();
  if (declined !== null) outcome.summary.declined = declined;
  return outcome;
}

/**
 * Checks seqs fromSeq..toSeq as `reads` sees them (a chunk, in a worker), read as text.
 * `observe` sees every record read, before it is checked (as verifyStoreRecords' does).
 */
export async function verifyStoreChunk(reads: TextReads, fromSeq: number, toSeq: number, plan: ChunkPlan, observe?: (row: StoredRecordText) => void): Promise<ChunkOutcome> {
  const checker = new ChunkChecker(plan);
  for (let next = fromSeq; next <= toSeq; ) {
    const rows = await reads.readRangeText(next, toSeq, VERIFY_PAGE);
    for (const row of rows) {
      observe?.(row);
      if (!checker.check(verifiableOf(row))) return checker.result();
    }
    if (rows.length < VERIFY_PAGE) break;
    next = rows[rows.length - 1]!.seq + 1;
  }
  return checker.result();
}

/**
 * What verifying a data dir's journal needs besides its records, as plain JSON: the checkpoints
 * to check them against, the public key and the journal's id. Gathered on the thread that has
 * the Journal, so the records can be read and checked in a journal worker.
 */
export interface StoreVerifyPlan {
  checkpoints: string[];
  publicKey: Record<string, unknown>;
  /** The key's id, when the caller has it (computed from the key otherwise). */
  keyId?: string;
  journalId: string;
  uncovered?: 'fail' | 'report';
}

/** The plan `verifyJournalStore` checks a data dir's journal by: its own log's checkpoints, its own key. */
export function storeVerifyPlan(journal: Journal): StoreVerifyPlan {
  return {
    checkpoints: journal.checkpoints.readAll().filter((jws) => peekCheckpoint(jws)?.journalId === journal.journalId),
    publicKey: journal.key.publicJwk as Record<string, unknown>,
    keyId: journal.key.keyId,
    journalId: journal.journalId,
    uncovered: 'report',
  };
}

/** The data dir's key is refused before anything is read when it is not the one expected. */
export function unexpectedKey(journal: Journal, options: BundleVerifyOptions): VerifyReport | null {
  if (options.expectKeyId && journal.key.keyId !== options.expectKeyId) {
    return { ok: false, seq: null, reason: `the data dir's key is ${journal.key.keyId}, not the expected ${options.expectKeyId}`, count: 0 };
  }
  return null;
}

/** The one read verification needs from a store that has it (sqlite-store.ts): records without their bodies parsed. */
export interface TextReads {
  readRangeText(fromSeq: number, toSeq: number | null, limit: number): Promise<StoredRecordText[]>;
}

/**
 * Records per read while verifying: one await and one SQLite statement per page. Small, because
 * a page is what the young generation holds live while it is checked (eight strings and two
 * objects a record), and every scavenge copies what is live: at 2,000 a page the garbage
 * collector took about as long as reading the rows. Measured on 20,020 records, in-thread:
 * the start-up scan's first pass 290 ms at 2,000 a page, 190 ms at 250 (warm: 100 ms, 80 ms);
 * data-dir verification on one thread 128k -> 219k records/s (bench journal-verify).
 */
const VERIFY_PAGE = 250;

function verifiableOf(row: StoredRecordText): VerifiableRecord {
  return { seq: row.seq, prevHash: row.prevHash, hash: row.hash, kind: row.kind, runId: row.runId, preimage: recordPreimageFromBodyText(row, row.bodyText) };
}

/**
 * One turn of the event loop. The store's reads answer at once (better-sqlite3 is synchronous),
 * so a pass over a journal on the calling thread would otherwise run to its end in microtasks,
 * and a plane checking its journal in the background (the runtime's start-up scan below
 * SCAN_IN_WORKER_FROM_RECORDS) would start and answer nothing until it ended: measured with
 * bench serve-startup on a 20,020-record journal, the URL line waited for the whole scan
 * (spawn to URL 2.9x -> 3.75x bare fastify) once the checkpoints' signatures, the scan's only
 * real asynchronous step, were verified synchronously. A turn a page costs about 80 turns for
 * those 20,020 records.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Verifies records 1..head as `reads` sees them (its head read when the first record is asked
 * for) against a plan. `observe` sees every record read, in seq order, before it is checked:
 * a caller folding the journal in the same pass (the runtime at start) reads it only once.
 *
 * No check here needs a record's body as an object (the hash covers the body's stored text),
 * so a store that can read rows as text (`readRangeText`) is read that way, a page at a time;
 * any other store through `iterate`.
 */
export async function verifyStoreRecords(
  reads: Pick<JournalReads, 'head' | 'iterate'> & Partial<TextReads>,
  plan: StoreVerifyPlan,
  options: { publicKey?: KeyObject; observe?: (row: StoredRecordText) => void } = {},
): Promise<VerifyReport> {
  async function* pages(): AsyncIterable<VerifiableRecord[]> {
    const head = await reads.head();
    const readText = reads.readRangeText?.bind(reads);
    if (readText) {
      for (let next = 1; next <= head.seq; ) {
        const rows = await readText(next, head.seq, VERIFY_PAGE);
        if (rows.length === 0) return;
        const page = new Array<VerifiableRecord>(rows.length);
        for (let i = 0; i < rows.length; i++) {
          const row = rows[i]!;
          options.observe?.(row);
          page[i] = verifiableOf(row);
        }
        yield page;
        if (rows.length < VERIFY_PAGE) return;
        next = rows[rows.length - 1]!.seq + 1;
        await nextTurn();
      }
      return;
    }
    let page: VerifiableRecord[] = [];
    for await (const row of reads.iterate(1, head.seq)) {
      options.observe?.(row);
      page.push(verifiableOf(row));
      if (page.length === VERIFY_PAGE) {
        yield page;
        page = [];
      }
    }
    if (page.length > 0) yield page;
  }
  return verifyJournal({
    scope: { kind: 'full' },
    records: pages(),
    checkpoints: plan.checkpoints,
    publicKey: options.publicKey ?? createPublicKey({ key: plan.publicKey as JsonWebKey, format: 'jwk' }),
    ...(plan.keyId !== undefined ? { keyId: plan.keyId } : {}),
    journalId: plan.journalId,
    ...(plan.uncovered !== undefined ? { uncovered: plan.uncovered } : {}),
  });
}

/**
 * Verifies a data dir's journal against its own checkpoint log and key. Records after the
 * newest checkpoint (a writer killed before its next one) are reported, as `unsigned` and
 * `unsignedTail`, and not counted as verified: nobody has vouched for them yet. The next
 * writer to open the data dir signs them (Journal.open).
 *
 * This runs on the calling thread; `verifyJournalStoreInWorker` (journal-workers.ts) runs the
 * same check in a journal worker and answers the same report.
 */
export async function verifyJournalStore(journal: Journal, options: BundleVerifyOptions = {}): Promise<VerifyReport> {
  return unexpectedKey(journal, options) ?? verifyStoreRecords(journal.store, storeVerifyPlan(journal), { publicKey: journal.key.publicKey });
}
