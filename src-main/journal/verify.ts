/**
 * Offline verification of a journal, from its data dir or from an exported bundle. The one
 * rule, applied the same way to both sources:
 *
 * 1. every checkpoint's signature verifies with the plane's public key (algorithm fixed here);
 * 2. records come in seq order with no gap, duplicate or reordering;
 * 3. each record's bytes hash to its stored hash, and its prevHash is the previous hash;
 * 4. the Merkle root over seqs 1..N equals every signed checkpoint at tree size N (a full
 *    journal), or each record's inclusion proof leads to the anchor checkpoint's root (a run or
 *    seq-range bundle);
 * 5. no signed checkpoint covers records that are not there (a truncated tail).
 *
 * The first failure is reported with the seq it concerns and why; nothing is "mostly fine".
 * A chain rewritten after signing, with every later hash recomputed, links perfectly, and only
 * a checkpoint can catch it: the report then names the first seq after the last checkpoint
 * that still matches, and the range the mismatching checkpoint covers, because a signature over
 * a root pins the set of records, not which one of them changed.
 */
import { hash as oneShotHash, type KeyObject } from 'node:crypto';
import { GENESIS_PREV_HASH, recordKinds } from '../../src-shared/journal/records';
import { verifyCheckpoint, type Checkpoint } from './checkpoints';
import { fromHex, toHex } from './hex';
import { leafHash, MerkleAccumulator, verifyInclusion } from './merkle';

/** One record as a verifier sees it: the exact bytes that were hashed, and what they say. */
export interface VerifiableRecord {
  seq: number;
  prevHash: string;
  hash: string;
  kind: string;
  runId: string | null;
  /** The canonical preimage whose SHA-256 must equal `hash`. */
  preimage: string;
  proof?: string[];
  /** Set by a source that could not read the record at all (a line that is not JSON). */
  unreadable?: string;
}

export type VerifyScope = { kind: 'full' } | { kind: 'range'; fromSeq: number; toSeq: number } | { kind: 'run'; runId: string };

export interface VerifyInput {
  scope: VerifyScope;
  records: AsyncIterable<VerifiableRecord> | Iterable<VerifiableRecord>;
  checkpoints: readonly string[];
  publicKey: KeyObject;
  journalId: string;
}

export type VerifyReport =
  | {
      ok: true;
      count: number;
      root: string;
      /** Tree size of the newest signed checkpoint the records were checked against. */
      checkpointSize: number;
      /** Records after the newest checkpoint: chained and hashed, not yet signed. */
      unsigned: number;
      unknownKinds: number;
    }
  | { ok: false; seq: number | null; reason: string; count: number };

const HEX64 = /^[0-9a-f]{64}$/;
const KNOWN_KINDS = new Set<string>(recordKinds);

export function sha256HexOf(text: string): string {
  return oneShotHash('sha256', text, 'hex');
}

export async function verifyJournal(input: VerifyInput): Promise<VerifyReport> {
  // 1. Checkpoints: signatures first, each naming the last seq it covers.
  const checkpoints: Checkpoint[] = [];
  for (const jws of input.checkpoints) {
    const check = await verifyCheckpoint(jws, input.publicKey);
    if (!check.ok) {
      const peek = jws.split('.')[1];
      let size: number | null = null;
      try {
        size = (JSON.parse(Buffer.from(peek ?? '', 'base64url').toString('utf8')) as { treeSize?: number }).treeSize ?? null;
      } catch {
        size = null;
      }
      return { ok: false, seq: size, reason: `the checkpoint at tree size ${size ?? '?'}: ${check.reason}`, count: 0 };
    }
    if (check.checkpoint.journalId !== input.journalId) {
      return { ok: false, seq: check.checkpoint.treeSize, reason: `the checkpoint at tree size ${check.checkpoint.treeSize} belongs to another journal (${check.checkpoint.journalId})`, count: 0 };
    }
    checkpoints.push(check.checkpoint);
  }
  checkpoints.sort((a, b) => a.treeSize - b.treeSize);
  const bySize = new Map<number, Checkpoint[]>();
  for (const c of checkpoints) bySize.set(c.treeSize, [...(bySize.get(c.treeSize) ?? []), c]);
  const newest = checkpoints[checkpoints.length - 1];

  const full = input.scope.kind === 'full';
  if (!full && !newest) return { ok: false, seq: null, reason: 'the bundle carries no checkpoint to anchor its records', count: 0 };

  const accumulator = new MerkleAccumulator();
  let expected = input.scope.kind === 'range' ? input.scope.fromSeq : 1;
  let prevHash: string | null = full ? GENESIS_PREV_HASH : null;
  let count = 0;
  let unknownKinds = 0;
  let lastMatchedSize = 0;

  for await (const record of input.records) {
    if (record.unreadable) return { ok: false, seq: expected, reason: record.unreadable, count };
    if (!Number.isSafeInteger(record.seq) || !HEX64.test(record.hash) || !HEX64.test(record.prevHash)) {
      return { ok: false, seq: expected, reason: `the record after seq ${expected - 1} has a malformed envelope`, count };
    }
    if (input.scope.kind !== 'run') {
      if (record.seq !== expected) {
        const what = record.seq > expected ? `a record is missing (the next one present is seq ${record.seq})` : `seq ${record.seq} appears again or out of order`;
        return { ok: false, seq: expected, reason: `expected seq ${expected} here: ${what}`, count };
      }
    } else if (record.runId !== input.scope.runId) {
      return { ok: false, seq: record.seq, reason: `seq ${record.seq} belongs to run ${record.runId ?? '(none)'}, not ${input.scope.runId}`, count };
    } else if (record.seq < expected) {
      return { ok: false, seq: record.seq, reason: `seq ${record.seq} appears again or out of order`, count };
    }
    if (sha256HexOf(record.preimage) !== record.hash) {
      return { ok: false, seq: record.seq, reason: 'its content does not match its hash (the record was altered)', count };
    }
    if (prevHash !== null && record.prevHash !== prevHash) {
      return { ok: false, seq: record.seq, reason: 'its prevHash is not the previous record\'s hash (a record before it was removed, inserted or altered)', count };
    }
    if (full) {
      accumulator.append(leafHash(fromHex(record.hash)));
      const due = bySize.get(accumulator.size);
      if (due) {
        const root = toHex(accumulator.root());
        for (const checkpoint of due) {
          if (checkpoint.rootHash !== root) {
            return {
              ok: false,
              seq: lastMatchedSize + 1,
              reason: `records ${lastMatchedSize + 1}..${checkpoint.treeSize} are not the records the checkpoint at tree size ${checkpoint.treeSize} signed (root ${checkpoint.rootHash.slice(0, 16)}…, recomputed ${root.slice(0, 16)}…): the chain was rewritten after it was signed`,
              count,
            };
          }
        }
        lastMatchedSize = accumulator.size;
      }
    } else {
      const anchor = newest!;
      if (record.seq > anchor.treeSize) {
        return { ok: false, seq: record.seq, reason: `seq ${record.seq} is beyond the anchor checkpoint (tree size ${anchor.treeSize})`, count };
      }
      const proof = record.proof ?? [];
      const proofOk =
        proof.every((h) => HEX64.test(h)) &&
        verifyInclusion(leafHash(fromHex(record.hash)), record.seq - 1, anchor.treeSize, proof.map(fromHex), fromHex(anchor.rootHash));
      if (!proofOk) {
        return { ok: false, seq: record.seq, reason: `its inclusion proof does not lead to the signed root at tree size ${anchor.treeSize}`, count };
      }
    }
    if (input.scope.kind === 'run' && record.kind === 'RunSealed') {
      const sealed = JSON.parse(record.preimage) as { body?: { records?: unknown } };
      if (typeof sealed.body?.records === 'number' && sealed.body.records !== count) {
        return { ok: false, seq: record.seq, reason: `the run sealed after ${sealed.body.records} records but the bundle holds ${count} before the seal (a record of this run is missing or added)`, count };
      }
    }
    if (!KNOWN_KINDS.has(record.kind)) unknownKinds += 1;
    prevHash = input.scope.kind === 'run' ? null : record.hash;
    expected = record.seq + 1;
    count += 1;
  }

  if (input.scope.kind === 'range' && count > 0 && expected - 1 !== input.scope.toSeq) {
    return { ok: false, seq: expected, reason: `the range ends at seq ${expected - 1}, not at ${input.scope.toSeq} as its header says`, count };
  }
  if (full && newest && newest.treeSize > count) {
    return {
      ok: false,
      seq: count + 1,
      reason: `the signed checkpoint covers ${newest.treeSize} records but the records end at seq ${count} (the tail was truncated)`,
      count,
    };
  }
  const root = full ? toHex(accumulator.root()) : newest!.rootHash;
  return {
    ok: true,
    count,
    root,
    checkpointSize: newest?.treeSize ?? 0,
    unsigned: full ? count - (newest?.treeSize ?? 0) : 0,
    unknownKinds,
  };
}

