/**
 * The scan a runtime makes when it starts: one pass over the whole journal that verifies it (as
 * `verifyJournalStore` does) and, from the same records, notes which runs were admitted and not
 * yet sealed and every halt applied or lifted. On a large journal that pass is the heaviest
 * thing a plane does at start, so it can run in a journal worker (journal-workers.ts); the
 * answer is the same plain JSON either way.
 */
import type { KeyObject } from 'node:crypto';
import type { RecordBody } from '../../src-shared/journal/records';
import type { JournalReads, JournalStore } from './journal-store';
import type { StoredRecordText } from './sqlite-reader';
import { verifyStoreRecords, type StoreVerifyPlan, type TextReads } from './store-verify';
import type { VerifyReport } from './verify';

export interface JournalIndex {
  /**
   * Runs with a RunAdmitted and no RunSealed after it, in admission order, with the host that
   * holds each: the last RunAdopted's `to`, else the host its admission named (null: it named none).
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
  /** Adoptions of runs admitted before the chunk, in seq order. */
  adoptedFromBefore: Array<{ runId: string; host: string }>;
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
    // A run adopted and then sealed in one chunk is gone either way; adopted only, it has a new host.
    for (const run of chunk.adoptedFromBefore) if (unsealed.has(run.runId)) unsealed.set(run.runId, run.host);
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
  /** Adoptions of runs this indexer saw no admission of. */
  private readonly adoptedUnseen: Array<{ runId: string; host: string }> = [];

  /**
   * Takes the body as its stored text and parses it only for the kinds that need it:
   * the verifying pass this rides on never parses a body.
   */
  observe(row: Pick<StoredRecordText, 'seq' | 'kind' | 'runId' | 'bodyText'>): void {
    if (row.kind === 'RunAdmitted' && row.runId) {
      const host = (JSON.parse(row.bodyText) as { host?: unknown }).host;
      this.unsealed.set(row.runId, typeof host === 'string' ? host : null);
    } else if (row.kind === 'RunAdopted' && row.runId) {
      const to = (JSON.parse(row.bodyText) as RecordBody<'RunAdopted'>).to;
      if (this.unsealed.has(row.runId)) this.unsealed.set(row.runId, to);
      else this.adoptedUnseen.push({ runId: row.runId, host: to });
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
    return { ...this.index(), sealedFromBefore: this.sealedUnseen.slice(), adoptedFromBefore: this.adoptedUnseen.slice() };
  }
}

/** Verifies and indexes the journal `reads` sees, in one pass over its records. */
export async function scanStoreRecords(reads: Pick<JournalReads, 'head' | 'iterate'> & Partial<TextReads>, plan: StoreVerifyPlan, options: { publicKey?: KeyObject } = {}): Promise<JournalScan> {
  const indexer = new JournalIndexer();
  const report = await verifyStoreRecords(reads, plan, { ...options, observe: (row) => indexer.observe(row) });
  return { report, index: indexer.index() };
}

/** The kinds that say which runs are open and who holds them (runsHeldBy). */
const HOLDING_KINDS = ['RunAdmitted', 'RunAdopted', 'RunSealed'] as const;
const HOLDING_PAGE = 2000;

/**
 * The open runs `host` holds now, in admission order: read from the journal's admissions,
 * adoptions and seals only (an index on kind serves it), for an instance taking a dead one's
 * runs over (docs/TEAM-PLANE.md). A host of null is a run admitted naming none (`plane`).
 */
export async function runsHeldBy(reads: Pick<JournalStore, 'head' | 'readKinds'>, host: string): Promise<string[]> {
  const indexer = new JournalIndexer();
  const head = (await reads.head()).seq;
  let from = 1;
  while (from <= head) {
    const page = await reads.readKinds(from, head, HOLDING_KINDS, HOLDING_PAGE);
    for (const record of page) indexer.observe({ seq: record.seq, kind: record.kind, runId: record.runId, bodyText: record.bodyText });
    if (page.length < HOLDING_PAGE) break;
    from = page[page.length - 1]!.seq + 1;
  }
  return indexer
    .index()
    .unsealed.filter((run) => (run.host ?? 'plane') === host)
    .map((run) => run.runId);
}
