/**
 * What a stretch of the journal did to runs, read from the records themselves without folding
 * any run: each run touched, the kind of its last record there, and the status that record
 * leaves it in. It is what `journal.appended` carries per commit and what `journal.changes`
 * answers a client that resumes after a seq, so a client re-reads only the runs touched.
 *
 * The status rule follows the runtime's reading of a run (runtime/run-history.ts): a run is
 * sealed by RunSealed (with its outcome), waits after Suspended (and still waits after a
 * snooze of that wait), and is running after anything else it writes. It is a hint for a list;
 * `runs.get` is the run's full account.
 */
import type { JournalChanges, RunChange } from '../../src-shared/ipc/contract';
import { RunOutcomeSchema } from '../../src-shared/vocabulary/runs';
import type { JournalRecord } from '../../src-shared/journal/records';
import type { Journal } from '../journal/journal';

/** The most records one `journal.changes` reads; a client further behind re-reads its views. */
export const CHANGES_MAX_RECORDS = 5000;

type RecordFacts = Pick<JournalRecord, 'runId' | 'kind' | 'body'>;

function statusAfter(record: RecordFacts): Pick<RunChange, 'status' | 'outcome'> {
  switch (record.kind) {
    case 'RunSealed': {
      const outcome = RunOutcomeSchema.safeParse(record.body.outcome);
      return { status: 'sealed', outcome: outcome.success ? outcome.data : null };
    }
    case 'Suspended':
      return { status: 'suspended', outcome: null };
    case 'Decision':
      return { status: record.body.decision === 'snooze' ? 'suspended' : 'running', outcome: null };
    default:
      return { status: 'running', outcome: null };
  }
}

/** One entry per run the records touch, in the order of each run's last record. */
export function runChangesOf(records: readonly RecordFacts[]): RunChange[] {
  const byRun = new Map<string, RunChange>();
  for (const record of records) {
    if (!record.runId) continue;
    byRun.delete(record.runId);
    byRun.set(record.runId, { runId: record.runId, kind: record.kind, ...statusAfter(record) });
  }
  return [...byRun.values()];
}

/** `journal.changes`: the runs changed after `afterSeq`, or `truncated` when that cannot be listed. */
export async function readJournalChanges(journal: Journal, afterSeq: number | null): Promise<JournalChanges> {
  const head = (await journal.head()).seq;
  const journalId = journal.journalId;
  // A seq past the head was never this journal's: the client followed another one.
  if (afterSeq === null || afterSeq > head || head - afterSeq > CHANGES_MAX_RECORDS) return { journalId, head, runs: [], truncated: true };
  if (afterSeq === head) return { journalId, head, runs: [], truncated: false };
  const records = await journal.readRange(afterSeq + 1, head, CHANGES_MAX_RECORDS);
  return { journalId, head, runs: runChangesOf(records), truncated: false };
}
