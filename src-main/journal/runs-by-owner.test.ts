/**
 * The index of the runs each owner admitted (migration 004) and the store's queries on it:
 * ownedRuns / countOwnedRuns read one owner's admissions only (the plan says which index), a
 * context is its opening run and the runs admitted into it, activity since a seq finds a run
 * admitted before it but active after, and firstSeqAtOrAfter is a binary search over seq.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyRecordDraft } from '../../src-shared/journal/records';
import { journalStoreOf, Journal } from './journal';
import { journalPath } from './sqlite-store';
import { migrate, migrations } from './migrations';
import { tempDataDir, ZERO_SPEND } from '../../tests/support/journal-support';

const open: Journal[] = [];
afterEach(async () => {
  for (const j of open.splice(0)) await j.close().catch(() => undefined);
});

async function openJournal(dataDir = tempDataDir()): Promise<Journal> {
  let t = Date.parse('2026-01-01T00:00:00Z');
  // One second per record: record n is at 00:00:0n, so times name seqs in the assertions.
  const journal = await Journal.open({ dataDir, checkpointEvery: 1000, now: () => (t += 1000) });
  open.push(journal);
  return journal;
}

const admit = (runId: string, owner: string, extra: Record<string, unknown> = {}): AnyRecordDraft => ({
  runId,
  kind: 'RunAdmitted',
  body: { agent: 'echo', owner, chain: [owner], input: {}, inputProvenance: owner, budget: { maxEffects: 1 }, trigger: { via: 'a2a', by: owner }, ...extra },
});
const seal = (runId: string): AnyRecordDraft => ({ runId, kind: 'RunSealed', body: { outcome: 'succeeded', spend: ZERO_SPEND, records: 2 } });

describe('the index of the runs each owner admitted', () => {
  it("lists and counts one owner's runs, newest admission first, with each filter narrowing", async () => {
    const journal = await openJournal();
    await journal.appendBatch([
      admit('run-a1', 'a2a:local'), // 1
      admit('run-b1', 'user:local'), // 2
      admit('run-a2', 'a2a:local', { agent: 'other' }), // 3
      admit('run-a3', 'a2a:local', { context: 'run-a1' }), // 4
      admit('run-b2', 'user:local', { context: 'run-a1' }), // 5: another owner naming the same id is not in a2a:local's context
      admit('run-a4', 'a2a:local', { host: 'peer:p1' }), // 6
      seal('run-a1'), // 7: a1, admitted first, is active last
    ]);
    const store = journalStoreOf(journal);
    const owned = await store.ownedRuns({ owner: 'a2a:local' }, 10);
    expect(owned).toEqual([
      { runId: 'run-a4', seq: 6, lastSeq: 6 },
      { runId: 'run-a3', seq: 4, lastSeq: 4 },
      { runId: 'run-a2', seq: 3, lastSeq: 3 },
      { runId: 'run-a1', seq: 1, lastSeq: 7 },
    ]);
    expect(await store.countOwnedRuns({ owner: 'a2a:local' })).toBe(4);
    expect(await store.countOwnedRuns({ owner: 'nobody' })).toBe(0);
    expect((await store.ownedRuns({ owner: 'a2a:local', agent: 'echo' }, 10)).map((r) => r.runId)).toEqual(['run-a4', 'run-a3', 'run-a1']);
    expect((await store.ownedRuns({ owner: 'a2a:local', host: 'plane' }, 10)).map((r) => r.runId)).toEqual(['run-a3', 'run-a2', 'run-a1']);
    expect((await store.ownedRuns({ owner: 'a2a:local', host: 'peer:p1' }, 10)).map((r) => r.runId)).toEqual(['run-a4']);
    // A context: its opening run and the runs admitted into it, this owner's only.
    expect((await store.ownedRuns({ owner: 'a2a:local', context: 'run-a1' }, 10)).map((r) => r.runId)).toEqual(['run-a3', 'run-a1']);
    expect(await store.countOwnedRuns({ owner: 'a2a:local', context: 'run-a1' })).toBe(2);
    expect((await store.ownedRuns({ owner: 'user:local', context: 'run-a1' }, 10)).map((r) => r.runId)).toEqual(['run-b2']);
    // A run that continues a context is not a context's id itself.
    expect(await store.ownedRuns({ owner: 'a2a:local', context: 'run-a3' }, 10)).toEqual([]);
    // Paging by admission seq: the cursor is the last row's seq.
    const first = await store.ownedRuns({ owner: 'a2a:local' }, 2);
    expect(first.map((r) => r.runId)).toEqual(['run-a4', 'run-a3']);
    expect((await store.ownedRuns({ owner: 'a2a:local', beforeSeq: first[1]!.seq }, 2)).map((r) => r.runId)).toEqual(['run-a2', 'run-a1']);
  });

  it('activity since a seq: admitted before it but with a record after it counts; idle since does not', async () => {
    const journal = await openJournal();
    await journal.appendBatch([admit('run-old', 'o'), admit('run-idle', 'o'), seal('run-idle')]); // 1, 2, 3
    await journal.appendBatch([admit('run-new', 'o'), seal('run-old')]); // 4, 5
    const store = journalStoreOf(journal);
    expect(await store.firstSeqAtOrAfter('2026-01-01T00:00:04.000Z')).toBe(4);
    expect(await store.firstSeqAtOrAfter('2026-01-01T00:00:03.500Z')).toBe(4);
    expect(await store.firstSeqAtOrAfter('2000-01-01T00:00:00.000Z')).toBe(1);
    expect(await store.firstSeqAtOrAfter('2027-01-01T00:00:00.000Z')).toBe(6);
    const since = await store.firstSeqAtOrAfter('2026-01-01T00:00:04.000Z');
    expect((await store.ownedRuns({ owner: 'o', activeFromSeq: since }, 10)).map((r) => r.runId)).toEqual(['run-new', 'run-old']);
    expect(await store.countOwnedRuns({ owner: 'o', activeFromSeq: since })).toBe(2);
    expect(await store.countOwnedRuns({ owner: 'o', activeFromSeq: 6 })).toBe(0);
  });

  it("reads through the owner index (another owner's runs are not visited), on a journal made before 004 too", async () => {
    const dataDir = tempDataDir();
    const before = new Database(journalPath(dataDir));
    migrate(before, migrations.slice(0, 3));
    before.close();
    const journal = await openJournal(dataDir);
    await journal.appendBatch([admit('run-x', 'someone'), admit('run-y', 'me')]);
    expect((await journalStoreOf(journal).ownedRuns({ owner: 'me' }, 10)).map((r) => r.runId)).toEqual(['run-y']);
    const raw = new Database(journalPath(dataDir), { readonly: true });
    const plan = (sql: string) => (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map((row) => row.detail).join(' | ');
    const byOwner = plan("SELECT a.run_id FROM records a WHERE a.kind = 'RunAdmitted' AND json_extract(a.body, '$.owner') = 'me' AND a.seq < 100 ORDER BY a.seq DESC");
    const byContext = plan("SELECT a.run_id FROM records a WHERE a.kind = 'RunAdmitted' AND json_extract(a.body, '$.context') IS NOT NULL AND json_extract(a.body, '$.context') = 'run-y'");
    raw.close();
    expect(byOwner).toContain('records_runs_by_owner');
    expect(byOwner).not.toMatch(/SCAN a\b(?! USING)/);
    expect(byContext).toMatch(/records_runs_by_(context|owner)/);
  });
});
