/**
 * The newest runs by last activity (SqliteJournalReader.runs): found walking back from the head,
 * they are exactly the runs the whole index of runs grouped gives (the query it replaced, kept
 * as its fallback), in the same order with the same counts, whether the runs are many and
 * interleaved, fewer than asked for, or few and so long that the walk's bound comes first.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyRecordDraft } from '../../src-shared/journal/records';
import { Journal } from './journal';
import { NEWEST_RUNS_GROUPED } from './sqlite-reader';
import { journalPath } from './sqlite-store';
import { runDrafts, seededRandom, tempDataDir } from '../../tests/support/journal-support';

const open: Journal[] = [];
afterEach(async () => {
  for (const j of open.splice(0)) await j.close().catch(() => undefined);
});

async function journalOf(drafts: AnyRecordDraft[]): Promise<{ journal: Journal; grouped: (limit: number) => unknown[] }> {
  const dataDir = tempDataDir('ap-newest-runs-');
  const journal = await Journal.open({ dataDir });
  open.push(journal);
  for (let i = 0; i < drafts.length; i += 1000) await journal.appendBatch(drafts.slice(i, i + 1000));
  return {
    journal,
    grouped: (limit) => {
      const db = new Database(journalPath(dataDir), { readonly: true });
      try {
        return db.prepare(NEWEST_RUNS_GROUPED).all(limit);
      } finally {
        db.close();
      }
    },
  };
}

/** Runs of 1 to 12 effects, interleaved a record at a time in a seeded random order, with run-less records among them. */
function interleaved(runs: number, seed: number): AnyRecordDraft[] {
  const random = seededRandom(seed);
  const queues = Array.from({ length: runs }, (_, i) => runDrafts(`run-${String(i).padStart(4, '0')}`, 1 + Math.floor(random() * 12)));
  const out: AnyRecordDraft[] = [];
  while (queues.length > 0) {
    const i = Math.floor(random() * Math.min(queues.length, 8));
    out.push(queues[i]!.shift()!);
    if (queues[i]!.length === 0) queues.splice(i, 1);
    if (random() < 0.02) out.push({ runId: null, kind: 'HaltApplied', body: { scope: `subject:${out.length}`, lifted: false, by: 'user:local' } });
  }
  return out;
}

describe('the newest runs by last activity', () => {
  it('are the runs grouped from the whole index, in order, with their first seq, count, times, kinds and agent', async () => {
    const { journal, grouped } = await journalOf(interleaved(400, 7));
    for (const limit of [1, 5, 50, 399, 400]) expect(await journal.runs(limit)).toEqual(grouped(limit));
  });

  it('are every run when the journal holds fewer than asked for, and none in an empty journal', async () => {
    const { journal, grouped } = await journalOf(interleaved(30, 11));
    expect(await journal.runs(1000)).toHaveLength(30);
    expect(await journal.runs(1000)).toEqual(grouped(1000));
    const empty = await journalOf([]);
    expect(await empty.journal.runs(10)).toEqual([]);
  });

  it('are still exact when a few runs are so long that the walk back gives up and groups every run', async () => {
    // Three runs, the last 21,002 records long: past the walk's bound of 20,000 records before a fourth run is met.
    const drafts = [...runDrafts('run-first', 2), ...runDrafts('run-second', 1), ...runDrafts('run-long', 10_500)];
    const { journal, grouped } = await journalOf(drafts);
    const runs = await journal.runs(4);
    expect(runs.map((r) => [r.runId, r.records])).toEqual([
      ['run-long', 21_002],
      ['run-second', 4],
      ['run-first', 6],
    ]);
    expect(runs).toEqual(grouped(4));
    expect(await journal.runs(2)).toEqual(grouped(2));
  });
});
