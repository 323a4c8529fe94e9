/**
 * The scan a runtime makes when it starts: one pass over the whole journal that verifies it (as
 * `verifyJournalStore` does) and, from the same records, notes which runs were admitted and not
 * yet sealed and every halt applied or lifted. On a large journal that pass is the heaviest
 * thing a plane does at start, so it can run in a journal worker (journal-workers.ts); the
 * answer is the same plain JSON either way.
 */
import type { KeyObject } from 'node:crypto';
import type { RecordBody } from '../../src-shared/journal/records';
import type { JournalReads } from './journal-store';
import type { StoredRecordText } from './sqlite-reader';
import { verifyStoreRecords, type StoreVerifyPlan, type TextReads } from './store-verify';
import type { VerifyReport } from './verify';

export interface JournalIndex {
  /**
   * Runs with a RunAdmitted and no RunSealed after it, in admission order, with the host their
   * admission named (null: it named none).
   */
  unsealed: Array<{ runId: string; host: string | null }>;
  /** Every HaltApplied, in seq order. */
  halts: Array<{ seq: number; scope: string; lifted: boolean }>;
}

export interface JournalScan {
  report: VerifyReport;
  index: JournalIndex;
}

/**
 * What one contiguous chunk of the journal says towards the index (a chunk of the start-up scan
 * split across the journal workers): the runs admitted in it and not sealed in it, the runs it
 * seals that were admitted before it, and its halts. Plain JSON.
 */
export interface ChunkIndex extends JournalIndex {
  sealedFromBefore: string[];
}

/**
 * Folds chunk indexes, in seq order, into the index one pass over the same records gives: a
 * run's admission comes before its seal, so a seal that a chunk could not match was of a run
 * admitted in an earlier chunk (or never: then it removes nothing, as in one pass).
 */
export function mergeChunkIndexes(chunks: readonly ChunkIndex[]): JournalIndex {
  const unsealed = new Map<string, string | null>();
  const halts: JournalIndex['halts'] = [];
  for (const chunk of chunks) {
    for (const runId of chunk.sealedFromBefore) unsealed.delete(runId);
    for (const run of chunk.unsealed) unsealed.set(run.runId, run.host);
    halts.push(...chunk.halts);
  }
  return { unsealed: [...unsealed].map(([runId, host]) => ({ runId, host })), halts };
}

/** Folds records, in seq order, into a JournalIndex. */
export class JournalIndexer {
  private readonly unsealed = new Map<string, string | null>();
  private readonly halts: JournalIndex['halts'] = [];
  /** Seals of runs this indexer saw no admission of (a chunk's, admitted in an earlier chunk). */
  private readonly sealedUnseen: string[] = [];

  /**
   * Takes the body as its stored text and parses it only for the two kinds that need it:
   * the verifying pass this rides on never parses a body.
   */
  observe(row: Pick<StoredRecordText, 'seq' | 'kind' | 'runId' | 'bodyText'>): void {
    if (row.kind === 'RunAdmitted' && row.runId) {
      const host = (JSON.parse(row.bodyText) as { host?: unknown }).host;
      this.unsealed.set(row.runId, typeof host === 'string' ? host : null);
    } else if (row.kind === 'RunSealed' && row.runId) {
      if (!this.unsealed.delete(row.runId)) this.sealedUnseen.push(row.runId);
    } else if (row.kind === 'HaltApplied') {
      const body = JSON.parse(row.bodyText) as RecordBody<'HaltApplied'>;
      this.halts.push({ seq: row.seq, scope: body.scope, lifted: Boolean(body.lifted) });
    }
  }

  index(): JournalIndex {
    return { unsealed: [...this.unsealed].map(([runId, host]) => ({ runId, host })), halts: this.halts.slice() };
  }

  chunkIndex(): ChunkIndex {
    return { ...this.index(), sealedFromBefore: this.sealedUnseen.slice() };
  }
}

/** Verifies and indexes the journal `reads` sees, in one pass over its records. */
export async function scanStoreRecords(reads: Pick<JournalReads, 'head' | 'iterate'> & Partial<TextReads>, plan: StoreVerifyPlan, options: { publicKey?: KeyObject } = {}): Promise<JournalScan> {
  const indexer = new JournalIndexer();
  const report = await verifyStoreRecords(reads, plan, { ...options, observe: (row) => indexer.observe(row) });
  return { report, index: indexer.index() };
}
