/**
 * One verification of a full journal split across the journal workers, so every core hashes
 * (docs/PERFORMANCE.md). The records are cut into contiguous chunks (a data dir's seq range, a bundle's
 * lines); each worker checks its chunk with the very checks `verifyJournal` runs (RecordChecks,
 * verify.ts), started as if every record before the chunk had passed, and the calling thread
 * folds the chunks' answers in order into one RecordChecks. The report is the single-thread
 * verifier's, word for word, for these reasons:
 *
 * - A record's checks depend on what came before it only through the seq expected, the count,
 *   the previous hash and the Merkle tree. If every earlier record passed, the first two are
 *   fixed by the chunk's first seq (a full journal starts at seq 1 and has no gap), so a worker
 *   starts from them. The fold confirms that start against the true one before it takes
 *   anything from the chunk; when they differ (rows missing at a chunk's edge, an unreadable
 *   first line) it answers null and the caller verifies on one thread instead.
 * - The previous hash is not known to the worker: its first record's link is left unchecked
 *   there (a previous hash is always 64 hex digits, so its well-formedness test does not need
 *   it) and checked by the fold. Every other check of that record comes before the link, so a
 *   failure the worker reports at its first record is the record's first failure.
 * - The Merkle tree and the signed checkpoints stay with the fold: a worker returns the roots
 *   of aligned perfect subtrees covering the leaves of the records that passed, cut at every
 *   checkpoint's tree size (RFC 6962 trees compose from aligned complete subtrees:
 *   MerkleAccumulator.appendSubtree), so the fold checks each checkpoint at the same point, and
 *   with the same count, as the single-thread verifier does, for O(log n) node hashes a chunk.
 * - A chunk's own first failure comes after every record before it passed and every checkpoint
 *   they complete was checked, which is the order the single-thread verifier meets them in.
 *
 * The roots travel as one Buffer (32 bytes a root), transferred, not as JSON.
 */
import { HASH_SIZE, perfectRootInPlace, writeLeafHashOfHex } from './merkle';
import { peekCheckpoint, type Checkpoint } from './checkpoints';
import { isKeyringKind } from './keyring';
import { EFFECT_REUSED } from './fork-references';
import { BROKEN_LINK, RecordChecks, type SignedCheckpoints, type VerifiableRecord, type VerifyReport } from './verify';

/**
 * What the records will be checked against, from the checkpoints' own claims, before their
 * signatures are verified: so the workers start at once, while the calling thread verifies the
 * signatures (one per thousand records, about 85 µs each: 2 ms of a 20,000-record verification,
 * 85 ms of a million-record one).
 * The chunks' answers are taken only if the verified set is exactly this one
 * (sameCheckpoints: every signature good, so the claims are what was signed); null when a claim
 * does not even read.
 */
export function claimedCheckpoints(checkpoints: readonly string[], keyId: string): SignedCheckpoints | null {
  const claimed: Checkpoint[] = [];
  for (const jws of checkpoints) {
    const checkpoint = peekCheckpoint(jws);
    if (!checkpoint) return null;
    claimed.push(checkpoint);
  }
  return { keyId, checkpoints: claimed.sort((a, b) => a.treeSize - b.treeSize) };
}

/** Whether chunks planned with `claimed` checked against exactly the verified checkpoints. */
export function sameCheckpoints(verified: SignedCheckpoints, claimed: SignedCheckpoints): boolean {
  return JSON.stringify(verified) === JSON.stringify(claimed);
}

/** Below this many records a verification stays on one thread: starting workers costs more than they save. */
export const PARALLEL_VERIFY_FROM_RECORDS = 2000;

/**
 * Chunks per worker: more chunks than workers, taken from the pool's queue by whichever worker
 * is free, so a worker slowed by other load on its core holds up less than a whole share.
 */
export const CHUNKS_PER_WORKER = 4;

/** How many chunks `records` records are cut into for `workers` workers: none smaller than 500 records. */
export function chunkCount(records: number, workers: number): number {
  return Math.max(1, Math.min(workers * CHUNKS_PER_WORKER, Math.floor(records / 500)));
}

/** What a worker is told about its chunk of a full journal; plain JSON. */
export interface ChunkPlan {
  /** The checkpoints the caller has verified (signatures, journal, key): the worker trusts them. */
  signed: SignedCheckpoints;
  uncovered?: 'fail' | 'report';
  /** The seq the chunk starts at (a data dir's range); null: its first record's own (a bundle's byte range). */
  startSeq: number | null;
}

/** A chunk's answer, besides the subtree roots (its bytes). */
export interface ChunkSummary {
  /** The seq the chunk was checked from (null: its first record did not say, and nothing was checked). */
  startSeq: number | null;
  /** Records in the chunk. */
  records: number;
  /** Of those, how many passed, from the first. */
  passed: number;
  /** The first failure, as the single-thread verifier words it when the chunk's start is the true one. */
  failure: Extract<VerifyReport, { ok: false }> | null;
  /** The first record's prevHash (its link, checked by the fold) and the last passing record's hash. */
  firstPrevHash: string | null;
  lastHash: string | null;
  unknownKinds: number;
  /** The heights of the aligned perfect subtrees over the passing records' leaves, in order; their roots are the bytes. */
  heights: number[];
  /**
   * Why this chunk's answer cannot stand for the single-thread verifier's, whatever it found: the
   * bytes are ones that verifier would read differently (a bundle chunk with a CR, a checkpoint
   * line among the records, bytes that are not UTF-8). The caller then verifies on one thread.
   */
  declined?: string;
}

export interface ChunkOutcome {
  summary: ChunkSummary;
  roots: Uint8Array;
}

/** Checks one chunk's records in order (in a worker), then says what the fold needs. */
export class ChunkChecker {
  private readonly checks: RecordChecks;
  /** The passing records' leaf hashes, 32 bytes each, one after another (grown by doubling). */
  private leaves = Buffer.allocUnsafe(1024 * HASH_SIZE);
  private passed = 0;
  private startSeq: number | null;
  private records = 0;
  private failure: Extract<VerifyReport, { ok: false }> | null = null;
  private firstPrevHash: string | null = null;
  private lastHash: string | null = null;
  private declined: string | null = null;

  constructor(private readonly plan: ChunkPlan) {
    this.checks = new RecordChecks({ kind: 'full' }, plan.signed, plan.uncovered, (hash) => this.addLeaf(hash));
    this.startSeq = plan.startSeq;
    if (plan.startSeq !== null) this.startAt(plan.startSeq);
  }

  private startAt(seq: number): void {
    this.checks.expected = seq;
    this.checks.count = seq - 1;
    this.checks.prevHash = null;
  }

  private addLeaf(hash: string): void {
    if ((this.passed + 1) * HASH_SIZE > this.leaves.length) {
      const grown = Buffer.allocUnsafe(this.leaves.length * 2);
      this.leaves.copy(grown, 0, 0, this.passed * HASH_SIZE);
      this.leaves = grown;
    }
    writeLeafHashOfHex(hash, this.leaves, this.passed * HASH_SIZE);
    this.passed += 1;
  }

  /** Checks the next record; false once one has failed (the chunk has nothing more to say). */
  check(record: VerifiableRecord): boolean {
    if (this.failure) return false;
    if (this.records === 0 && this.startSeq === null) {
      if (record.unreadable || !Number.isSafeInteger(record.seq) || record.seq < 1) {
        // Where this chunk starts is unknown: the fold will not take its word for anything.
        this.records = 1;
        this.failure = { ok: false, seq: null, reason: 'the chunk does not say where it starts', count: 0 };
        return false;
      }
      this.startSeq = record.seq;
      this.startAt(record.seq);
    }
    if (this.records === 0) this.firstPrevHash = record.prevHash;
    this.records += 1;
    // A keyring decides which keys' checkpoints count, and it is folded from every record before
    // any checkpoint is checked: only the single-thread verifier does that (bundle-verify.ts).
    if (isKeyringKind(record.kind)) this.declined ??= `a ${record.kind} record: a journal with a keyring is verified on one thread`;
    // A fork's references reach back to its parent's records (fork-references.ts): checked on one thread.
    if (record.kind === EFFECT_REUSED) this.declined ??= `an ${EFFECT_REUSED} record: a fork's references to its parent are checked on one thread`;
    const failed = this.checks.check(record);
    if (failed) {
      this.failure = failed as Extract<VerifyReport, { ok: false }>;
      return false;
    }
    this.lastHash = record.hash;
    return true;
  }

  /** The chunk's answer; once only, since the subtree roots are computed over the leaves in place. */
  result(): ChunkOutcome {
    const passed = this.passed;
    const from = this.startSeq === null ? 0 : this.startSeq - 1;
    const cuts = this.plan.signed.checkpoints.map((c) => c.treeSize);
    const heights = alignedSubtrees(from, from + passed, cuts);
    const roots = new Uint8Array(heights.length * HASH_SIZE);
    let at = 0;
    heights.forEach((height, i) => {
      const width = 2 ** height;
      roots.set(perfectRootInPlace(this.leaves, at * HASH_SIZE, width), i * HASH_SIZE);
      at += width;
    });
    return {
      summary: {
        startSeq: this.startSeq,
        records: this.records,
        passed,
        failure: this.failure,
        firstPrevHash: passed > 0 ? this.firstPrevHash : null,
        lastHash: passed > 0 ? this.lastHash : null,
        unknownKinds: this.checks.unknownKinds,
        heights,
        ...(this.declined !== null ? { declined: this.declined } : {}),
      },
      roots,
    };
  }
}

/**
 * The heights of the perfect subtrees that cover leaves [from, to), each aligned (its first
 * leaf's index a multiple of its width) and none crossing a cut (a tree size a checkpoint is
 * checked at), largest first where alignment allows: O(log n) of them between two cuts.
 */
export function alignedSubtrees(from: number, to: number, cuts: readonly number[]): number[] {
  const ends = [...new Set(cuts.filter((c) => c > from && c < to)), to].sort((a, b) => a - b);
  const heights: number[] = [];
  let at = from;
  for (const end of ends) {
    while (at < end) {
      let height = 0;
      while (at % 2 ** (height + 1) === 0 && at + 2 ** (height + 1) <= end) height += 1;
      heights.push(height);
      at += 2 ** height;
    }
  }
  return heights;
}

/**
 * Folds the chunks' answers, in chunk order, into `checks` (a full-scope RecordChecks whose
 * empty-tree checkpoints were checked): the report the single-thread verifier gives, or null
 * when a chunk declined (ChunkSummary.declined) or was checked from a start that turned out not
 * to be the true one (the caller then verifies on one thread).
 */
export function foldChunks(checks: RecordChecks, chunks: readonly ChunkOutcome[]): VerifyReport | null {
  if (chunks.some((chunk) => chunk.summary.declined !== undefined)) return null;
  for (const { summary, roots } of chunks) {
    if (summary.records === 0) continue;
    if (summary.startSeq !== checks.expected || checks.count !== checks.expected - 1 || checks.accumulator.size !== checks.count) return null;
    if (summary.passed === 0) return summary.failure;
    // The first record passed every check before its link: the link is this side's.
    if (checks.prevHash !== null && summary.firstPrevHash !== checks.prevHash) {
      return { ok: false, seq: checks.expected, reason: BROKEN_LINK, count: checks.count };
    }
    // A subtree ends at every checkpoint's size (the chunk was cut there), so each checkpoint
    // meets the tree at its own size, with the count of the records before its last one.
    for (let i = 0; i < summary.heights.length; i++) {
      checks.accumulator.appendSubtree(roots.subarray(i * HASH_SIZE, (i + 1) * HASH_SIZE), summary.heights[i]!);
      const failed = checks.checkDueCheckpoints(checks.accumulator.size - 1);
      if (failed) return failed;
    }
    checks.expected = summary.startSeq + summary.passed;
    checks.count += summary.passed;
    checks.prevHash = summary.lastHash;
    checks.unknownKinds += summary.unknownKinds;
    if (summary.failure) return summary.failure;
  }
  return checks.finish();
}
