/**
 * `agentplane journal copy --to <postgres url>`: moves a data dir's SQLite journal into a
 * PostgreSQL database, record for record (seq, time, hashes and bodies as they are), so the
 * data dir's key and checkpoint log vouch for the copy exactly as for the original, and the
 * data dir can then serve with `--database` and find every run where it was.
 *
 * Verified on both sides: the source before anything is written (a journal that does not
 * verify is not copied), the copy after (the same report, against the same checkpoints). The
 * target must be empty, or hold a shorter copy of this same journal (an interrupted copy goes
 * on from where it stopped, after checking the records it holds are the source's); a database
 * holding another journal is refused before anything is written.
 */
import { Journal, journalStoreOf } from './journal';
import { JournalError } from './journal-error';
import { verifyJournalStore } from './journal-workers';
import { PostgresJournalStore } from './postgres-store';
import { maskDatabaseUrl } from './postgres-url';
import type { VerifyReport } from './verify';

/** Records moved per transaction: each page is one INSERT, and either all of it lands or none. */
const COPY_PAGE = 2000;

export interface CopyResult {
  /** The target as it may be shown (password masked). */
  to: string;
  journalId: string;
  /** Records written by this copy. */
  copied: number;
  /** Records the target already held (an earlier, interrupted copy), checked and kept. */
  alreadyThere: number;
  /** Records the copy's signed checkpoints cover, as on the source. */
  records: number;
  /** The signed root both sides verified to. */
  root: string;
}

/** Copies `source` (a journal opened on its data dir) into the database at `url`. */
export async function copyJournal(source: Journal, url: string, onProgress?: (copied: number, total: number) => void): Promise<CopyResult> {
  // Records past the last checkpoint (a plane killed before its next one) are signed first,
  // so the copy carries every record vouched for; a read-only source is copied as it stands.
  if (!source.readOnly) await source.checkpoint();
  const sourceReport = await verifyJournalStore(source);
  if (!sourceReport.ok) throw new JournalError('Refused', `the journal in ${source.dataDir} does not verify (seq ${sourceReport.seq ?? '?'}: ${sourceReport.reason}); nothing was copied`);
  const head = (await source.head()).seq;
  const target = await PostgresJournalStore.open(url, { source: '--to' });
  let alreadyThere: number;
  let copied = 0;
  try {
    const held = await target.head();
    if (held.seq === 0) {
      await target.adoptJournalId(source.journalId);
    } else if (target.journalId !== source.journalId) {
      throw new JournalError('Refused', `${target.location} already holds another journal (${target.journalId}, ${held.seq} records); copy into an empty database`);
    } else if (held.seq > head) {
      throw new JournalError('Refused', `${target.location} holds ${held.seq} records of this journal, more than ${source.dataDir} does (${head}); nothing was copied`);
    } else {
      const mine = (await source.readRange(held.seq, held.seq, 1))[0];
      if (mine?.hash !== held.hash) throw new JournalError('Refused', `${target.location} holds a different history of this journal at seq ${held.seq}; nothing was copied`);
    }
    alreadyThere = held.seq;
    const store = journalStoreOf(source);
    for (let from = held.seq + 1; from <= head; from += COPY_PAGE) {
      const page = await store.readRange(from, Math.min(head, from + COPY_PAGE - 1), COPY_PAGE);
      await target.importRecords(page);
      copied += page.length;
      onProgress?.(alreadyThere + copied, head);
    }
  } finally {
    await target.close();
  }
  // The copy, read back through a journal of its own, against the data dir's checkpoints.
  const copy = await Journal.open({ dataDir: source.dataDir, databaseUrl: url, databaseUrlSource: '--to', readOnly: true });
  let targetReport: VerifyReport;
  try {
    targetReport = await verifyJournalStore(copy);
  } finally {
    await copy.close();
  }
  if (!targetReport.ok || targetReport.count !== sourceReport.count || targetReport.root !== sourceReport.root) {
    throw new JournalError('Io', `the copy in ${maskDatabaseUrl(url)} does not verify as the original does (${targetReport.ok ? `${targetReport.count} records, root ${targetReport.root}` : `seq ${targetReport.seq ?? '?'}: ${targetReport.reason}`})`);
  }
  return { to: maskDatabaseUrl(url), journalId: source.journalId, copied, alreadyThere, records: targetReport.count, root: targetReport.root };
}
