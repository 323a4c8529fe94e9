/** `journal copy` (journal-copy.ts) into a real PostgreSQL. */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from './journal';
import { copyJournal } from './journal-copy';
import { verifyJournalStore } from './journal-workers';
import { journalPath } from './sqlite-store';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { freshDatabase, postgresMissing, postgresUrl, sql } from '../../tests/support/postgres-support';


const journals: Journal[] = [];
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close().catch(() => undefined);
});

async function opened(options: Parameters<typeof Journal.open>[0]): Promise<Journal> {
  const journal = await Journal.open(options);
  journals.push(journal);
  return journal;
}

/** A SQLite data dir holding three runs, closed (its checkpoint signed). */
async function sqliteJournal(): Promise<string> {
  const dataDir = tempDataDir('ap-copy-');
  const journal = await Journal.open({ dataDir, checkpointEvery: 7 });
  await journal.appendBatch([...runDrafts('run-a', 3), ...runDrafts('run-b', 1)]);
  await journal.appendBatch(runDrafts('run-c', 2));
  await journal.close();
  return dataDir;
}

describe.skipIf(!postgresUrl())(`journal copy into PostgreSQL${postgresUrl() ? '' : ` (skipped: ${postgresMissing()})`}`, () => {
  it('copies every record as it is, verified on both sides; the data dir then serves it with --database', async () => {
    const dataDir = await sqliteJournal();
    const url = await freshDatabase('copy');
    const source = await opened({ dataDir });
    const progress: number[] = [];
    const result = await copyJournal(source, url, (copied) => progress.push(copied));
    expect(result).toMatchObject({ copied: 18, alreadyThere: 0, records: 18, journalId: source.journalId });
    expect(result.to).not.toContain(new URL(url).password);
    expect(progress.at(-1)).toBe(18);
    const original = await source.readRange(1, null, 100);
    await source.close();

    const served = await opened({ dataDir, databaseUrl: url });
    expect(served.journalId).toBe(original[0] && source.journalId);
    expect((await served.readRange(1, 18, 100)).map((r) => [r.seq, r.hash, r.time, r.bodyText])).toEqual(original.map((r) => [r.seq, r.hash, r.time, r.bodyText]));
    expect(await served.runLastSeq('run-c')).toBe(18);
    // Served from the database, the data dir's key joins the journal's keyring (keyring.ts).
    expect((await served.readKinds(1, 100, ['KeyAdmitted'], 10)).map((r) => [r.seq, r.body.keyId])).toEqual([[19, served.key.keyId]]);
    await served.append(runDrafts('run-d', 0)[0]!);
    await served.checkpoint();
    expect(await verifyJournalStore(served)).toMatchObject({ ok: true, count: 20 });
  });

  it('a data dir that keeps another journal is refused on a database, before a record is written, naming journal copy', async () => {
    const dataDir = await sqliteJournal();
    const url = await freshDatabase('foreigndir');
    await expect(Journal.open({ dataDir, databaseUrl: url })).rejects.toThrow(
      /keeps the checkpoints of another journal \([0-9a-f]{32}\), not of the one at postgres:\/\/postgres:\*\*\*@.+ \([0-9a-f]{32}\): move its journal there first \(agentplane journal copy --to <url> --data-dir .+\)/,
    );
    expect((await sql(url, 'SELECT COUNT(*)::int AS n FROM agentplane.records')).rows[0]).toEqual({ n: 0 });
  });

  it('goes on from an interrupted copy, and copies nothing twice', async () => {
    const dataDir = await sqliteJournal();
    const url = await freshDatabase('resume');
    const source = await opened({ dataDir });
    await copyJournal(source, url);
    await source.appendBatch(runDrafts('run-e', 1));
    const again = await copyJournal(source, url);
    expect(again).toMatchObject({ copied: 4, alreadyThere: 18, records: 22 });
    expect((await sql(url, 'SELECT COUNT(*)::int AS n FROM agentplane.records')).rows[0]).toEqual({ n: 22 });
  });

  it('refuses a database holding another journal, and a source that does not verify, writing nothing', async () => {
    const other = await freshDatabase('other');
    const elsewhere = await opened({ dataDir: tempDataDir(), databaseUrl: other });
    await elsewhere.appendBatch(runDrafts('run-x', 0));
    const source = await opened({ dataDir: await sqliteJournal() });
    // Its two records after its key's admission.
    await expect(copyJournal(source, other)).rejects.toThrow(/already holds another journal \([0-9a-f]{32}, 3 records\); copy into an empty database/);
    expect((await sql(other, 'SELECT COUNT(*)::int AS n FROM agentplane.records')).rows[0]).toEqual({ n: 3 });

    const tamperedDir = await sqliteJournal();
    const raw = new Database(journalPath(tamperedDir));
    raw.exec('DROP TRIGGER records_append_only_update');
    raw.prepare("UPDATE records SET body = json_set(body, '$.input.text', 'edited') WHERE seq = 1").run();
    raw.close();
    const tampered = await opened({ dataDir: tamperedDir, readOnly: true });
    const empty = await freshDatabase('untouched');
    await expect(copyJournal(tampered, empty)).rejects.toThrow(/does not verify \(seq 1: .*\); nothing was copied/);
    expect((await sql(empty, "SELECT COUNT(*)::int AS n FROM information_schema.tables WHERE table_schema = 'agentplane'")).rows[0]).toEqual({ n: 0 });
  });
});
