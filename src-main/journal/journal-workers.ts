/**
 * What the journal runs on its worker pool (journal-worker-pool.ts):
 * whole-journal verification, exports and the runtime's start-up scan, in `worker_threads`, so
 * the thread that answers the UI, the bridge and the peers keeps answering while they run.
 * Verifying 100,000 records in-thread held every other request for over a second (it now gives
 * the loop a turn between pages, and still takes the thread's CPU for its whole length).
 *
 * A data dir's verification of PARALLEL_VERIFY_FROM_RECORDS records or more is split across
 * every worker of the pool in contiguous seq ranges (a few per worker, taken by whichever is
 * free) and folded here (verify-chunks.ts): the same report as one worker's, with every core
 * hashing. The runtime's start-up scan is split the same way, each range indexed as it is
 * verified and the ranges' indexes merged in order. What needs the plane's private
 * key stays on this thread; a worker gets only public material.
 */
import { rmSync } from 'node:fs';
import type { KeyObject } from 'node:crypto';
import { exportBundle, partialFileOf, planExport } from './bundle-export';
import type { BundleVerifyOptions, ExportResult } from './bundle-format';
import { journalStoreOf, type Journal } from './journal';
import type { JournalWorkers } from './journal-worker-pool';
import { mergeChunkIndexes, scanStoreRecords, type JournalScan } from './journal-scan';
import { storeVerifyPlan, unexpectedKey, verifyStoreOfJournal, type StoreVerifyPlan } from './store-verify';
import { chunkCount, claimedCheckpoints, foldChunks, PARALLEL_VERIFY_FROM_RECORDS, sameCheckpoints, type ChunkPlan } from './verify-chunks';
import { RecordChecks, verifyCheckpoints, type SignedCheckpoints, type VerifyReport, type VerifyScope } from './verify';

/**
 * A journal this large or larger is scanned at start in the workers; a smaller one in-thread.
 * Starting a worker loads its own copy of the journal's modules, about 400 ms on a 2-core
 * machine while the main thread is loading the plane's, against about 10 µs a record for the
 * in-thread pass: measured with bench serve-startup on a 20,020-record journal, the scan phase
 * took 779 ms split across two workers and 332 ms in-thread (fresh data dir: 138 ms). The two
 * cross near 80,000 records; nothing is being served while the scan runs, so in-thread costs
 * the plane nothing else.
 */
export const SCAN_IN_WORKER_FROM_RECORDS = 100_000;

/**
 * Verifies a data dir's journal on the calling thread (store-verify.ts verifyStoreOfJournal,
 * given this journal's store). Records after the newest checkpoint are reported as `unsigned`
 * and `unsignedTail`, not counted as verified.
 */
export function verifyJournalStore(journal: Journal, options: BundleVerifyOptions = {}): Promise<VerifyReport> {
  return verifyStoreOfJournal(journal, journalStoreOf(journal), options);
}

/**
 * `verifyJournalStore` in the journal's workers: the same checks and the same report. The plan
 * (checkpoints, public key, journal id) is read here; the records are read and checked there,
 * split across every worker when there are enough of them (verifyStoreInParallel), in one
 * worker otherwise.
 */
export async function verifyJournalStoreInWorker(journal: Journal, options: BundleVerifyOptions = {}): Promise<VerifyReport> {
  if (!journal.hasWorkers) return verifyJournalStore(journal, options);
  const refused = unexpectedKey(journal, options);
  if (refused) return refused;
  const plan = storeVerifyPlan(journal);
  const head = await journal.head();
  if (head.seq >= PARALLEL_VERIFY_FROM_RECORDS && journal.workers.size > 1) {
    const report = await verifyStoreInParallel(journal.workers, plan, head.seq, { publicKey: journal.key.publicKey });
    if (report) return report;
  }
  return (await journal.workers.run({ kind: 'verifyStore', plan })).result;
}

/**
 * Verifies seqs 1..`head` of the pool's database in contiguous ranges (chunkCount), and folds
 * the ranges' answers here (verify-chunks.ts). Null when a range's answer cannot be taken
 * (rows missing at its edge): the caller verifies in one worker instead, for the exact report.
 * A worker that dies fails the whole verification (JournalError 'WorkerCrashed'), never a
 * partial "ok". `faultAtSeq` crashes the worker whose range holds that seq (tests).
 */
export async function verifyStoreInParallel(
  workers: JournalWorkers,
  plan: StoreVerifyPlan,
  head: number,
  options: { publicKey: KeyObject; faultAtSeq?: number },
): Promise<VerifyReport | null> {
  const pass = await chunksAgainstCheckpoints(workers, plan, head, options.publicKey, (chunkPlan, fromSeq, toSeq) => {
    const fault = options.faultAtSeq !== undefined && options.faultAtSeq >= fromSeq && options.faultAtSeq <= toSeq ? { faultAtSeq: options.faultAtSeq } : {};
    return workers.run({ kind: 'verifyStoreChunk', plan: chunkPlan, fromSeq, toSeq, ...fault }).then((outcome) => ({ summary: outcome.result, roots: outcome.bytes ?? new Uint8Array(0) }));
  });
  if ('failed' in pass) return pass.failed;
  return pass.checks.checkEmptyTree() ?? foldChunks(pass.checks, pass.chunks);
}

/**
 * Runs `job` over seqs 1..`head` in chunks (inChunks) against the plan's checkpoints, and answers
 * the chunks with a RecordChecks holding the verified checkpoints, or the first checkpoint that
 * fails (which the single-thread verifier reports before any record). The workers start on the
 * checkpoints' claims (claimedCheckpoints) while this thread verifies their signatures; in the
 * unexpected case that the verified set differs from the claims, the chunks are run again
 * against the verified one. Every chunk is awaited either way, so nothing is left running.
 */
async function chunksAgainstCheckpoints<T>(
  workers: JournalWorkers,
  plan: StoreVerifyPlan,
  head: number,
  publicKey: KeyObject,
  job: (chunkPlan: ChunkPlan, fromSeq: number, toSeq: number) => Promise<T>,
): Promise<{ failed: VerifyReport } | { checks: RecordChecks; chunks: T[] }> {
  const chunkPlanOf = (signed: SignedCheckpoints): ChunkPlan => ({ signed, startSeq: null, ...(plan.uncovered !== undefined ? { uncovered: plan.uncovered } : {}) });
  const run = (signed: SignedCheckpoints) => inChunks(head, workers.size, (fromSeq, toSeq) => job({ ...chunkPlanOf(signed), startSeq: fromSeq }, fromSeq, toSeq));
  const claimed = plan.keyId !== undefined ? claimedCheckpoints(plan.checkpoints, plan.keyId) : null;
  const early = claimed ? run(claimed).then((chunks) => ({ chunks }), (error: unknown) => ({ error })) : null;
  const verified = await verifyCheckpoints({ checkpoints: plan.checkpoints, publicKey, ...(plan.keyId !== undefined ? { keyId: plan.keyId } : {}), journalId: plan.journalId });
  const started = await early;
  if ('failed' in verified) return { failed: verified.failed };
  const checks = new RecordChecks({ kind: 'full' }, verified.signed, plan.uncovered);
  if (started && claimed && sameCheckpoints(verified.signed, claimed)) {
    if ('error' in started) throw started.error;
    return { checks, chunks: started.chunks };
  }
  return { checks, chunks: await run(verified.signed) };
}

/**
 * Runs `job` over seqs 1..`head` cut into contiguous ranges (chunkCount), every range at once,
 * and answers in range order. Every job is awaited, so a failed one leaves none of the others
 * unobserved; the first failure is thrown.
 */
async function inChunks<T>(head: number, workers: number, job: (fromSeq: number, toSeq: number) => Promise<T>): Promise<T[]> {
  const parts = chunkCount(head, workers);
  const jobs: Array<Promise<T>> = [];
  for (let part = 0; part < parts; part++) jobs.push(job(Math.floor((head * part) / parts) + 1, Math.floor((head * (part + 1)) / parts)));
  const settled = await Promise.allSettled(jobs);
  return settled.map((result) => {
    if (result.status === 'rejected') throw result.reason;
    return result.value;
  });
}

/**
 * `exportBundle` with the writing in a journal worker (on this thread for a journal whose
 * workers cannot read its store, a server database): the anchor is signed here (the key stays
 * on this thread), the records are read, proved and written there. A worker that dies
 * mid-export leaves no partial file behind.
 */
export async function exportBundleInWorker(journal: Journal, scope: VerifyScope, file: string): Promise<ExportResult> {
  if (!journal.hasWorkers) return exportBundle(journal, scope, file);
  const plan = await planExport(journal, scope);
  try {
    return (await journal.workers.run({ kind: 'exportBundle', plan, file })).result;
  } catch (error) {
    rmSync(partialFileOf(file), { force: true });
    throw error;
  }
}

/**
 * The runtime's start-up pass: verify the journal and index its unsealed runs and halts
 * (journal-scan.ts). A journal of SCAN_IN_WORKER_FROM_RECORDS records or more is scanned in a
 * worker; a smaller one here, where the pass costs less than starting a worker would.
 */
export async function scanWholeJournal(journal: Journal, plan: StoreVerifyPlan): Promise<JournalScan> {
  const head = await journal.head();
  if (head.seq < SCAN_IN_WORKER_FROM_RECORDS || !journal.hasWorkers) return scanStoreRecords(journalStoreOf(journal), plan, { publicKey: journal.key.publicKey });
  return scanInWorkers(journal, plan, head.seq);
}

/** The start-up scan in the journal workers, split across them where there are several. */
export async function scanInWorkers(journal: Journal, plan: StoreVerifyPlan, head?: number): Promise<JournalScan> {
  if (journal.workers.size > 1) {
    const scan = await scanInParallel(journal.workers, plan, head ?? (await journal.head()).seq, journal.key.publicKey);
    if (scan) return scan;
  }
  return (await journal.workers.run({ kind: 'scan', plan })).result;
}

/**
 * The start-up scan split across every worker, as verifyStoreInParallel splits a verification:
 * each range is verified and indexed in one pass (scanStoreChunk), the verifications folded
 * (verify-chunks.ts) and the ranges' indexes merged in order (mergeChunkIndexes), which gives
 * the index one pass gives. Null when the journal does not verify or a range's answer cannot be
 * taken: the caller then scans in one worker, whose index stops where that pass stops.
 */
async function scanInParallel(workers: JournalWorkers, plan: StoreVerifyPlan, head: number, publicKey: KeyObject): Promise<JournalScan | null> {
  const pass = await chunksAgainstCheckpoints(workers, plan, head, publicKey, (chunkPlan, fromSeq, toSeq) => workers.run({ kind: 'scanStoreChunk', plan: chunkPlan, fromSeq, toSeq }));
  if ('failed' in pass || pass.checks.checkEmptyTree()) return null;
  const report = foldChunks(
    pass.checks,
    pass.chunks.map((outcome) => ({ summary: outcome.result.summary, roots: outcome.bytes ?? new Uint8Array(0) })),
  );
  if (!report?.ok) return null;
  return { report, index: mergeChunkIndexes(pass.chunks.map((outcome) => outcome.result.index)) };
}
