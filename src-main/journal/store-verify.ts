/**
 * Verifying a data dir's journal: its records, as a store reads them, against its own checkpoint
 * log and key, and on a shared store every instance's published checkpoints under the journal's
 * keyring too (sharedStoreVerifyPlan, keyring.ts) (verifyJournalStore), on the calling thread or, through the plain-JSON plan
 * (StoreVerifyPlan), in a journal worker: whole (verifyStoreRecords) or one seq range of it
 * (verifyStoreChunk, folded by journal-workers.ts).
 */
import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import type { BundleVerifyOptions } from './bundle-format';
import { peekCheckpoint, type CheckpointLog } from './checkpoints';
import type { JournalReads, JournalStore } from './journal-store';
import { Keyring, readKeyringRecords, type KeyringRecord } from './keyring';
import type { PlaneKey } from './plane-key';
import type { StoredRecordText } from './sqlite-reader';
import { ChunkChecker, type ChunkOutcome, type ChunkPlan } from './verify-chunks';
import { EFFECT_REUSED, forkReferenceProblem, type ForkCheckRecord } from './fork-references';
import { verifyJournal, type VerifiableRecord, type VerifyReport } from './verify';

/**
 * What verifying a data dir's journal reads of its Journal (journal.ts): the journal's id, its
 * key's public half, its checkpoint log and its store. Named here rather than taken as the
 * Journal, so that this module, and the worker pool that carries its plans, depend on nothing
 * that owns a pool.
 */
export interface JournalToVerify {
  readonly journalId: string;
  readonly key: Pick<PlaneKey, 'keyId' | 'publicJwk' | 'publicKey'>;
  readonly checkpoints: Pick<CheckpointLog, 'readAll'>;
}

/**
 * What verifying a data dir reads of its store (journal.ts's journalStoreOf gives a Journal's);
 * a shared store's published checkpoints and keyring records too, where it has them.
 */
export type StoreToVerify = Pick<JournalReads, 'head' | 'iterate'> & Partial<TextReads> & Partial<Pick<JournalStore, 'readKinds' | 'readCheckpoints'>>;

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
  /** The journal's keyring records (a shared journal's; keyring.ts): absent or none, the key above alone. */
  keyringRecords?: KeyringRecord[];
}

/** The plan `verifyJournalStore` checks a data dir's journal by: its own log's checkpoints, its own key. */
export function storeVerifyPlan(journal: JournalToVerify): StoreVerifyPlan {
  return {
    checkpoints: journal.checkpoints.readAll().filter((jws) => peekCheckpoint(jws)?.journalId === journal.journalId),
    publicKey: journal.key.publicJwk as Record<string, unknown>,
    keyId: journal.key.keyId,
    journalId: journal.journalId,
    uncovered: 'report',
  };
}

/**
 * storeVerifyPlan, and for a store several instances share (one with published checkpoints):
 * every instance's checkpoints of this journal up to the head, and the journal's keyring records,
 * which say whose checkpoints count (keyring.ts).
 */
export async function sharedStoreVerifyPlan(journal: JournalToVerify, store: StoreToVerify): Promise<StoreVerifyPlan> {
  const plan = storeVerifyPlan(journal);
  if (!store.readCheckpoints || !store.readKinds) return plan;
  // The head first: a checkpoint another instance publishes meanwhile covers records the
  // verification may not read, and is left for the next one.
  const head = (await store.head()).seq;
  const keyringRecords = await readKeyringRecords(store as Pick<JournalStore, 'readKinds'>, head);
  const local = new Set(plan.checkpoints);
  const shared = (await store.readCheckpoints()).filter((jws) => {
    const claimed = peekCheckpoint(jws);
    return !local.has(jws) && claimed !== null && claimed.journalId === journal.journalId && claimed.treeSize <= head;
  });
  return { ...plan, checkpoints: [...plan.checkpoints, ...shared], keyringRecords };
}

/** The data dir's key is refused before anything is read when it is not the one expected. */
export function unexpectedKey(journal: Pick<JournalToVerify, 'key'>, options: BundleVerifyOptions): VerifyReport | null {
  if (options.expectKeyId && journal.key.keyId !== options.expectKeyId) {
    return { ok: false, seq: null, reason: `the data dir's key is ${journal.key.keyId}, not the expected ${options.expectKeyId}`, count: 0 };
  }
  return null;
}

/** The one read verification needs from a store that has it (sqlite-reader.ts): records without their bodies parsed. */
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
  const folded = await Keyring.fold(plan.keyringRecords ?? []);
  if ('failed' in folded) return { ok: false, seq: folded.failed.seq, reason: folded.failed.reason, count: 0 };
  const report = await verifyJournal({
    scope: { kind: 'full' },
    records: pages(),
    keyring: folded.keyring,
    checkpoints: plan.checkpoints,
    publicKey: options.publicKey ?? createPublicKey({ key: plan.publicKey as JsonWebKey, format: 'jwk' }),
    ...(plan.keyId !== undefined ? { keyId: plan.keyId } : {}),
    journalId: plan.journalId,
    ...(plan.uncovered !== undefined ? { uncovered: plan.uncovered } : {}),
  });
  return report.ok ? ((await forkReferencesOfStore(reads as Partial<Pick<JournalStore, 'readKinds' | 'readRange'>>, report)) ?? report) : report;
}

/**
 * A verified store's forks checked against their parents (fork-references.ts): the EffectReused
 * records read through the kind index, each parent record by its seq. A reader without those
 * reads (none here) leaves the check out.
 */
async function forkReferencesOfStore(reads: Partial<Pick<JournalStore, 'readKinds' | 'readRange'>>, report: Extract<VerifyReport, { ok: true }>): Promise<VerifyReport | null> {
  if (!reads.readKinds || !reads.readRange) return null;
  const head = report.count + report.unsigned;
  const reused: ForkCheckRecord[] = [];
  for (let from = 1; from <= head; ) {
    const page = await reads.readKinds(from, head, [EFFECT_REUSED], VERIFY_PAGE);
    reused.push(...page);
    if (page.length < VERIFY_PAGE) break;
    from = page.at(-1)!.seq + 1;
  }
  const readRange = reads.readRange.bind(reads);
  const problem = await forkReferenceProblem(
    reused,
    async (seqs) => {
      const found = new Map<number, ForkCheckRecord>();
      for (const seq of seqs) for (const record of await readRange(seq, seq, 1)) found.set(record.seq, record);
      return found;
    },
    true,
  );
  return problem ? { ok: false, seq: problem.seq, reason: problem.reason, count: report.count } : null;
}

/**
 * Verifies a data dir's journal, as `store` holds it, against its own checkpoint log and key
 * (journal-workers.ts's verifyJournalStore passes a Journal and its store). Records after the
 * newest checkpoint (a writer killed before its next one) are reported, as `unsigned` and
 * `unsignedTail`, and not counted as verified: nobody has vouched for them yet. The next
 * writer to open the data dir signs them (Journal.open).
 *
 * This runs on the calling thread; `verifyJournalStoreInWorker` (journal-workers.ts) runs the
 * same check in a journal worker and answers the same report.
 */
export async function verifyStoreOfJournal(journal: JournalToVerify, store: StoreToVerify, options: BundleVerifyOptions = {}): Promise<VerifyReport> {
  return unexpectedKey(journal, options) ?? verifyStoreRecords(store, await sharedStoreVerifyPlan(journal, store), { publicKey: journal.key.publicKey });
}
