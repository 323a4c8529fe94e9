/**
 * Verifying a bundle file (bundle-format.ts), offline, by one of three strategies that answer
 * the same report: on the calling thread, one line at a time (verifyBundleFileInThread, the
 * reference); across a pool of bundle workers, each checking the record lines of one byte range
 * (verifyBundleInParallel, for a large full-journal bundle of the plain form export writes); and
 * that one byte range, in a worker (verifyBundleChunk). verifyBundleFile picks between the first
 * two.
 */
import { isUtf8 } from 'node:buffer';
import { createReadStream, existsSync, closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { JWK } from 'jose';
import { BundleHeaderSchema, CHECKPOINT_LINE, parseRecordLine, recordOfLineBytes, unreadable, type BundleHeader, type BundleVerifyOptions } from './bundle-format';
import { BundleError } from './bundle-error';
import { Keyring, keyringRecordOf } from './keyring';
import { EFFECT_REUSED, forkReferenceProblem, type ForkCheckRecord } from './fork-references';
import { publicPlaneKey } from './plane-key';
import { JournalWorkers, type JobTimes } from './journal-worker-pool';
import { ChunkChecker, chunkCount, claimedCheckpoints, foldChunks, sameCheckpoints, PARALLEL_VERIFY_FROM_RECORDS, type ChunkOutcome, type ChunkPlan } from './verify-chunks';
import { RecordChecks, verifyCheckpoints, verifyJournal, type VerifiableRecord, type VerifyReport } from './verify';

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
  // A full journal's keyring is its own KeyAdmitted and KeyRetired records (keyring.ts): read
  // before any checkpoint, since it says which keys' checkpoints count. A run or range bundle
  // carries its exporter's checkpoints only, checked against the header's key as before.
  let keyring = Keyring.NONE;
  if (header.scope.kind === 'full') {
    const folded = await Keyring.fold(buffered.map(keyringRecordOf).filter((r) => r !== null));
    if ('failed' in folded) return { ok: false, seq: folded.failed.seq, reason: folded.failed.reason, count: 0, header };
    keyring = folded.keyring;
  }
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
    keyring,
    anchored: true,
  });
  if (report.ok && report.count !== header.records) {
    return { ok: false, seq: null, reason: `the header promises ${header.records} records but the bundle holds ${report.count}`, count: report.count, header };
  }
  if (report.ok) {
    const problem = await forkReferencesOfBundle(buffered, header.scope.kind === 'full');
    if (problem) return { ok: false, seq: problem.seq, reason: problem.reason, count: report.count, header };
  }
  return { ...report, header };
}

/** A verified bundle's forks checked against their parents' records in it (fork-references.ts). */
async function forkReferencesOfBundle(records: readonly VerifiableRecord[], full: boolean): Promise<{ seq: number; reason: string } | null> {
  const parsed = (record: VerifiableRecord): ForkCheckRecord => {
    const preimage = typeof record.preimage === 'string' ? record.preimage : Buffer.from(record.preimage).toString('utf8');
    return { seq: record.seq, hash: record.hash, kind: record.kind, runId: record.runId, body: (JSON.parse(preimage) as { body?: unknown }).body };
  };
  const reused = records.filter((r) => r.kind === EFFECT_REUSED).map(parsed);
  if (reused.length === 0) return null;
  const bySeq = new Map(records.map((r) => [r.seq, r]));
  return forkReferenceProblem(
    reused,
    async (seqs) => {
      const found = new Map<number, ForkCheckRecord>();
      for (const seq of seqs) {
        const record = bySeq.get(seq);
        if (record) found.set(seq, parsed(record));
      }
      return found;
    },
    full,
  );
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
 * problem: the single-thread path words those), a bundle with a keyring (a checkpoint of
 * another key than the header's, or a keyring record in a chunk: keyring.ts is folded before any
 * checkpoint, on one thread), a run or range bundle, a small one, a machine of
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
  // Checkpoints of other keys are a keyring's, which only the single-thread path folds.
  if (!claimed || claimed.checkpoints.some((c) => c.keyId !== key.keyId)) return null;
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
