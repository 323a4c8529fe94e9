/**
 * Offline verification of a journal, from its data dir or from an exported bundle. The one
 * rule, applied the same way to both sources:
 *
 * 1. every checkpoint's signature verifies with the plane's public key (algorithm fixed here),
 *    and names that key; for a journal whose records hold a keyring (a team plane's, keyring.ts),
 *    with the admitted key it names instead, refused when that key was never admitted or was
 *    retired before the records it covers;
 * 2. records come in seq order with no gap, duplicate or reordering;
 * 3. each record's bytes hash to its stored hash, and its prevHash is the previous hash;
 * 4. the Merkle root over seqs 1..N equals every signed checkpoint at tree size N (a full
 *    journal), or each record's inclusion proof leads to the anchor checkpoint's root (a run or
 *    seq-range bundle);
 * 5. no signed checkpoint covers records that are not there (a truncated tail);
 * 6. a signed checkpoint covers the last record. A signature over a root pins a set of records;
 *    a record past the newest signed root is vouched for by nobody, however well it chains
 *    (anyone can append a record and recompute a hash). In a bundle that is a failure,
 *    `not covered by a signed checkpoint`, naming the first such seq. In a data dir it is the
 *    tail a writer left when it was killed before its next checkpoint: `uncovered: 'report'`
 *    reports it (`unsigned`, `unsignedTail`) without counting it as verified, and the next
 *    writer to open the data dir signs it.
 *
 * The first failure is reported with the seq it concerns and why; nothing is "mostly fine".
 * A chain rewritten after signing, with every later hash recomputed, links perfectly, and only
 * a checkpoint can catch it: the report then names the first seq after the last checkpoint
 * that still matches, and the range the mismatching checkpoint covers, because a signature over
 * a root pins the set of records, not which one of them changed.
 *
 * What "covered" means per scope:
 * - full (seqs 1..N from genesis): the newest signed checkpoint has tree size exactly N (one
 *   larger is a truncated tail, one smaller leaves seqs size+1..N uncovered), its root is the
 *   root recomputed over 1..N, and every older checkpoint matches the root at its own size.
 * - range and run (records that do not start at seq 1, each with an inclusion proof): the anchor
 *   is the newest signed checkpoint in the bundle; every record's seq is at most its tree size
 *   and every record's proof leads from its hash to the anchor's signed root. A range must also
 *   be contiguous and chained; a run's records all carry its run id, in rising seq order, and a
 *   RunSealed record's count must match. What a proof cannot show is that no other record of
 *   the run exists before its seal: inclusion, not completeness.
 * An empty full journal is covered by a checkpoint at tree size 0 (export signs one).
 */
import type { KeyObject } from 'node:crypto';
import type { JWK } from 'jose';
import { GENESIS_PREV_HASH, recordKinds } from '../../src-shared/journal/records';
import { verifyCheckpointsAll, type Checkpoint } from './checkpoints';
import { fromHex, toHex } from './hex';
import { emptyRoot, leafHash, leafHashOfHex, MerkleAccumulator, sha256Hex, verifyInclusion } from './merkle';
import { verifyCheckpointsWithKeyring, type Keyring } from './keyring';
import { keyIdOf } from './plane-key';

/** One record as a verifier sees it: the exact bytes that were hashed, and what they say. */
export interface VerifiableRecord {
  seq: number;
  prevHash: string;
  hash: string;
  kind: string;
  runId: string | null;
  /**
   * The canonical preimage whose SHA-256 must equal `hash`: as text, or as its UTF-8 bytes (a
   * bundle worker hashes the bytes of the file as they are; bundle-format.ts recordOfLineBytes).
   */
  preimage: string | Uint8Array;
  proof?: string[];
  /** Set by a source that could not read the record at all (a line that is not JSON). */
  unreadable?: string;
}

export type VerifyScope = { kind: 'full' } | { kind: 'range'; fromSeq: number; toSeq: number } | { kind: 'run'; runId: string };

export interface VerifyInput {
  scope: VerifyScope;
  /**
   * The records in the order they are to be checked. An async source may yield them a page
   * at a time (an array): a store read in pages then costs one await per page, not per record.
   */
  records: AsyncIterable<VerifiableRecord | readonly VerifiableRecord[]> | Iterable<VerifiableRecord>;
  checkpoints: readonly string[];
  publicKey: KeyObject;
  /** The key's id (RFC 7638 thumbprint), if the caller has it; computed from `publicKey` otherwise. */
  keyId?: string;
  journalId: string;
  /**
   * What records after the newest signed checkpoint of a full journal are. 'fail' for anything
   * handed over (a bundle): nobody vouches for them, so the bundle fails. 'report' for a data
   * dir's own journal, whose next writer signs them at open: reported as `unsigned` and
   * `unsignedTail`, not counted as verified. Run and range scopes have no tail to report (each
   * record needs a proof to a signed root) and fail either way.
   */
  uncovered?: 'fail' | 'report';
  /**
   * The journal's keyring (keyring.ts), folded from its KeyAdmitted and KeyRetired records. When
   * it holds any, each checkpoint is verified with the admitted key it names instead of
   * `publicKey`; absent or empty, every checkpoint must be `publicKey`'s, as before keyrings.
   */
  keyring?: Keyring;
  /** With a keyring: `keyId`'s key must be admitted and sign the newest checkpoint (a bundle's header key). */
  anchored?: boolean;
}

export type VerifyReport =
  | {
      ok: true;
      /**
       * Records verified and covered by a signed checkpoint: for a full journal seqs 1..count,
       * for a run or range bundle every record in it. Unsigned records are not counted here.
       */
      count: number;
      /** The signed Merkle root they were checked against (the empty tree's root when none is signed). */
      root: string;
      /** Tree size of the newest signed checkpoint the records were checked against. */
      checkpointSize: number;
      /** Records after the newest checkpoint (a data dir only): chained and hashed, vouched for by nobody yet. */
      unsigned: number;
      /** Their seqs, present only when there are any. */
      unsignedTail?: { fromSeq: number; toSeq: number };
      unknownKinds: number;
      /** The keys whose checkpoints were verified, present only for a journal with a keyring (keyring.ts). */
      keys?: string[];
    }
  | { ok: false; seq: number | null; reason: string; count: number };

const HEX64 = /^[0-9a-f]{64}$/;
const KNOWN_KINDS = new Set<string>(recordKinds);

/** The words every "this record is vouched for by nobody" failure starts with. */
export const NOT_COVERED = 'not covered by a signed checkpoint';

export function sha256HexOf(text: string | Uint8Array): string {
  return sha256Hex(text);
}

/** What an unverified checkpoint says about itself, for naming it in a failure; never trusted. */
function claimsOf(jws: string): { treeSize?: unknown; keyId?: unknown } {
  try {
    const claims: unknown = JSON.parse(Buffer.from(jws.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof claims === 'object' && claims !== null ? (claims as { treeSize?: unknown; keyId?: unknown }) : {};
  } catch {
    return {};
  }
}

/** The checkpoints a verification holds records to, each signature verified; plain JSON. */
export interface SignedCheckpoints {
  /** The id of the key every checkpoint was signed with. */
  keyId: string;
  /** Sorted by tree size, oldest first. */
  checkpoints: Checkpoint[];
}

/**
 * Check 1: every checkpoint's signature, journal and key, in the order given; the first that
 * fails is the report. What passes is what records are then held to.
 */
export async function verifyCheckpoints(
  input: Pick<VerifyInput, 'checkpoints' | 'publicKey' | 'keyId' | 'journalId' | 'keyring' | 'anchored'>,
): Promise<{ failed: VerifyReport } | { signed: SignedCheckpoints; keys?: string[] }> {
  const keyId = input.keyId ?? (await keyIdOf(input.publicKey.export({ format: 'jwk' }) as JWK));
  if (input.keyring && !input.keyring.empty) {
    return verifyCheckpointsWithKeyring({ checkpoints: input.checkpoints, journalId: input.journalId, keyring: input.keyring, keyId, anchored: input.anchored ?? false });
  }
  const checkpoints: Checkpoint[] = [];
  const checks = await verifyCheckpointsAll(input.checkpoints, () => input.publicKey);
  for (const [at, jws] of input.checkpoints.entries()) {
    const check = checks[at]!;
    if (!check.ok) {
      const claimed = claimsOf(jws);
      const size = typeof claimed.treeSize === 'number' ? claimed.treeSize : null;
      const names = typeof claimed.keyId === 'string' ? ` (it names key ${claimed.keyId}; the key it was checked with is ${keyId})` : '';
      return { failed: { ok: false, seq: size, reason: `the checkpoint at tree size ${size ?? '?'}: ${check.reason}${names}`, count: 0 } };
    }
    if (check.checkpoint.journalId !== input.journalId) {
      return { failed: { ok: false, seq: check.checkpoint.treeSize, reason: `the checkpoint at tree size ${check.checkpoint.treeSize} belongs to another journal (${check.checkpoint.journalId})`, count: 0 } };
    }
    if (check.checkpoint.keyId !== keyId) {
      return {
        failed: {
          ok: false,
          seq: check.checkpoint.treeSize,
          reason: `the checkpoint at tree size ${check.checkpoint.treeSize} names key ${check.checkpoint.keyId} but was signed by key ${keyId}`,
          count: 0,
        },
      };
    }
    checkpoints.push(check.checkpoint);
  }
  checkpoints.sort((a, b) => a.treeSize - b.treeSize);
  return { signed: { keyId, checkpoints } };
}

/** The failure a record whose prevHash is not the previous record's hash reports. */
export const BROKEN_LINK = "its prevHash is not the previous record's hash (a record before it was removed, inserted or altered)";

/**
 * Checks 2 to 6 over records one at a time, in order, and what they have established so far
 * (the next seq expected, the previous hash, the count, the Merkle tree). `verifyJournal` runs
 * one over every record; verify-chunks.ts runs one per chunk of a full journal in a worker,
 * with `onLeaf` taking each passing record's hash instead of the tree, and a state that starts
 * where the chunk does, and folds what the chunks return into one on the calling thread. So
 * both paths check with this one code and report in the same words.
 */
export class RecordChecks {
  expected: number;
  /** The previous record's hash; null when there is none to compare with (a run, or a chunk's first record). */
  prevHash: string | null;
  count = 0;
  unknownKinds = 0;
  lastMatchedSize = 0;
  /** The root recomputed at the newest checkpoint's size: what a full journal's report names. */
  signedRoot = toHex(emptyRoot());
  readonly accumulator = new MerkleAccumulator();
  readonly full: boolean;
  private readonly bySize = new Map<number, Checkpoint[]>();
  private readonly newest: Checkpoint | undefined;
  private readonly signedLimit: number;
  private readonly noneSigned: string;

  constructor(
    private readonly scope: VerifyScope,
    signed: SignedCheckpoints,
    private readonly uncovered: 'fail' | 'report' | undefined,
    /**
     * Takes each passing record's hash (64 lowercase hex digits) in place of the Merkle tree and
     * its checkpoints: a chunk in a worker, which computes the leaf hashes where it keeps them.
     */
    private readonly onLeaf?: (hash: string) => void,
  ) {
    for (const c of signed.checkpoints) {
      const same = this.bySize.get(c.treeSize);
      if (same) same.push(c);
      else this.bySize.set(c.treeSize, [c]);
    }
    this.newest = signed.checkpoints[signed.checkpoints.length - 1];
    this.full = scope.kind === 'full';
    this.expected = scope.kind === 'range' ? scope.fromSeq : 1;
    this.prevHash = this.full ? GENESIS_PREV_HASH : null;
    this.noneSigned = `${NOT_COVERED} (the bundle carries none signed by key ${signed.keyId})`;
    // In a bundle, the first record past the newest signed checkpoint fails as soon as it is
    // reached (before its content is looked at: nothing vouches for that content either).
    this.signedLimit = this.full && uncovered === 'fail' ? (this.newest?.treeSize ?? 0) : Number.POSITIVE_INFINITY;
  }

  /** A checkpoint over the empty tree is checked before any record is folded in. */
  checkEmptyTree(): VerifyReport | null {
    for (const checkpoint of this.full ? (this.bySize.get(0) ?? []) : []) {
      if (checkpoint.rootHash !== this.signedRoot) {
        return { ok: false, seq: 1, reason: `the checkpoint at tree size 0 signs root ${checkpoint.rootHash.slice(0, 16)}…, not the empty tree's`, count: this.count };
      }
    }
    return null;
  }

  /**
   * The checkpoints signed at the tree's current size against its root, once the record (or
   * aligned subtree) that ends there is in: `count` is the count of records before that last one.
   */
  checkDueCheckpoints(count: number): VerifyReport | null {
    const due = this.bySize.get(this.accumulator.size);
    if (!due) return null;
    const root = toHex(this.accumulator.root());
    for (const checkpoint of due) {
      if (checkpoint.rootHash !== root) {
        return {
          ok: false,
          seq: this.lastMatchedSize + 1,
          reason: `records ${this.lastMatchedSize + 1}..${checkpoint.treeSize} are not the records the checkpoint at tree size ${checkpoint.treeSize} signed (root ${checkpoint.rootHash.slice(0, 16)}…, recomputed ${root.slice(0, 16)}…): the chain was rewritten after it was signed`,
          count,
        };
      }
    }
    this.lastMatchedSize = this.accumulator.size;
    this.signedRoot = root;
    return null;
  }

  /**
   * One record's checks, in the order that decides which failure is reported first; null when
   * it passes (and the state has moved past it). Synchronous, so a page of records costs no
   * await per record.
   */
  check(record: VerifiableRecord): VerifyReport | null {
    const { scope, full, newest, signedLimit } = this;
    const expected = this.expected;
    const prevHash = this.prevHash;
    const count = this.count;
    if (record.unreadable) return { ok: false, seq: expected, reason: record.unreadable, count };
    // The record is hashed first (pure, and done for every record that passes anyway): a hash
    // equal to the digest of its preimage, or a prevHash equal to the previous record's hash,
    // is 64 lowercase hex digits by construction, so the pattern test runs only when neither
    // holds. The failures and their order are unchanged. (A previous hash is always 64 hex
    // digits, so with none to compare with, as at a chunk's start, the test alone decides.)
    const contentMatches = sha256HexOf(record.preimage) === record.hash;
    const hashWellFormed = contentMatches || HEX64.test(record.hash);
    const prevWellFormed = (prevHash !== null && record.prevHash === prevHash) || HEX64.test(record.prevHash);
    if (!Number.isSafeInteger(record.seq) || !hashWellFormed || !prevWellFormed) {
      return { ok: false, seq: expected, reason: `the record after seq ${expected - 1} has a malformed envelope`, count };
    }
    if (scope.kind !== 'run') {
      if (record.seq !== expected) {
        const what = record.seq > expected ? `a record is missing (the next one present is seq ${record.seq})` : `seq ${record.seq} appears again or out of order`;
        return { ok: false, seq: expected, reason: `expected seq ${expected} here: ${what}`, count };
      }
    } else if (record.runId !== scope.runId) {
      return { ok: false, seq: record.seq, reason: `seq ${record.seq} belongs to run ${record.runId ?? '(none)'}, not ${scope.runId}`, count };
    } else if (record.seq < expected) {
      return { ok: false, seq: record.seq, reason: `seq ${record.seq} appears again or out of order`, count };
    }
    // A record needs a signed root that reaches it: the newest checkpoint's tree size.
    if (record.seq > signedLimit || (!full && (!newest || record.seq > newest.treeSize))) {
      return { ok: false, seq: record.seq, reason: newest ? pastNewest(newest.treeSize) : this.noneSigned, count };
    }
    if (!contentMatches) {
      return { ok: false, seq: record.seq, reason: 'its content does not match its hash (the record was altered)', count };
    }
    if (prevHash !== null && record.prevHash !== prevHash) {
      return { ok: false, seq: record.seq, reason: BROKEN_LINK, count };
    }
    if (full) {
      // The hash is 64 lowercase hex digits (checked above): no fromHex round trip.
      if (this.onLeaf) {
        this.onLeaf(record.hash);
      } else {
        this.accumulator.append(leafHashOfHex(record.hash));
        const failed = this.checkDueCheckpoints(count);
        if (failed) return failed;
      }
    } else if (newest) {
      const proof = record.proof ?? [];
      const proofOk =
        proof.every((h) => HEX64.test(h)) &&
        verifyInclusion(leafHash(fromHex(record.hash)), record.seq - 1, newest.treeSize, proof.map(fromHex), fromHex(newest.rootHash));
      if (!proofOk) {
        return { ok: false, seq: record.seq, reason: `its inclusion proof does not lead to the signed root at tree size ${newest.treeSize}`, count };
      }
    }
    if (scope.kind === 'run' && record.kind === 'RunSealed') {
      const text = typeof record.preimage === 'string' ? record.preimage : Buffer.from(record.preimage.buffer, record.preimage.byteOffset, record.preimage.byteLength).toString('utf8');
      const sealed = JSON.parse(text) as { body?: { records?: unknown } };
      if (typeof sealed.body?.records === 'number' && sealed.body.records !== count) {
        return { ok: false, seq: record.seq, reason: `the run sealed after ${sealed.body.records} records but the bundle holds ${count} before the seal (a record of this run is missing or added)`, count };
      }
    }
    if (!KNOWN_KINDS.has(record.kind)) this.unknownKinds += 1;
    this.prevHash = scope.kind === 'run' ? null : record.hash;
    this.expected = record.seq + 1;
    this.count = count + 1;
    return null;
  }

  /** The report once every record has passed: what is covered, what is not, and the tail checks. */
  finish(): VerifyReport {
    const { scope, newest, count, unknownKinds } = this;
    if (scope.kind === 'range' && count > 0 && this.expected - 1 !== scope.toSeq) {
      return { ok: false, seq: this.expected, reason: `the range ends at seq ${this.expected - 1}, not at ${scope.toSeq} as its header says`, count };
    }
    if (!this.full) {
      // Every record was proved against the newest signed root above; with no record there is
      // nothing to prove, but a bundle with no signature at all still vouches for nothing.
      if (!newest) return { ok: false, seq: null, reason: this.noneSigned, count };
      return { ok: true, count, root: newest.rootHash, checkpointSize: newest.treeSize, unsigned: 0, unknownKinds };
    }
    const signedSize = newest?.treeSize ?? 0;
    if (signedSize > count) {
      return {
        ok: false,
        seq: count + 1,
        reason: `the signed checkpoint covers ${signedSize} records but the records end at seq ${count} (the tail was truncated)`,
        count,
      };
    }
    // In a bundle every record was held to `signedLimit` above; one with no record and no
    // checkpoint still vouches for nothing.
    if (this.uncovered === 'fail' && !newest) return { ok: false, seq: null, reason: this.noneSigned, count };
    const unsigned = count - signedSize;
    return {
      ok: true,
      count: signedSize,
      root: this.signedRoot,
      checkpointSize: signedSize,
      unsigned,
      ...(unsigned > 0 ? { unsignedTail: { fromSeq: signedSize + 1, toSeq: count } } : {}),
      unknownKinds,
    };
  }
}

function pastNewest(size: number): string {
  return `${NOT_COVERED} (the newest one, at tree size ${size}, ends before it)`;
}

export async function verifyJournal(input: VerifyInput): Promise<VerifyReport> {
  const verified = await verifyCheckpoints(input);
  if ('failed' in verified) return verified.failed;
  const checks = new RecordChecks(input.scope, verified.signed, input.uncovered);
  const empty = checks.checkEmptyTree();
  if (empty) return empty;

  if (Symbol.iterator in input.records) {
    for (const record of input.records) {
      const failed = checks.check(record);
      if (failed) return failed;
    }
  } else {
    for await (const item of input.records) {
      for (const record of Array.isArray(item) ? (item as readonly VerifiableRecord[]) : [item as VerifiableRecord]) {
        const failed = checks.check(record);
        if (failed) return failed;
      }
    }
  }
  const report = checks.finish();
  return report.ok && verified.keys ? { ...report, keys: verified.keys } : report;
}
