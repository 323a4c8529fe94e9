import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordPreimage } from '../../src-shared/journal/record-hash';
import { canonicalize } from '../../src-shared/journal/canonical-json';
import { CURRENT_VERSION, GENESIS_PREV_HASH, checkRecordBody } from '../../src-shared/journal/records';
import { recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import { journalStoreOf, Journal, prepare } from './journal';
import { JournalError } from './journal-error';
import { journalPath, SqliteJournalStore } from './sqlite-store';
import { migrate, migrations } from './migrations';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { verifyJournalStore } from './journal-workers';

const open: Journal[] = [];
async function openJournal(dataDir = tempDataDir(), checkpointEvery = 1000): Promise<Journal> {
  let t = Date.parse('2026-01-01T00:00:00Z');
  const journal = await Journal.open({ dataDir, checkpointEvery, now: () => (t += 1) });
  open.push(journal);
  return journal;
}
afterEach(async () => {
  for (const j of open.splice(0)) await j.close().catch(() => undefined);
});

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('journal store', () => {
  it('opens in WAL mode, synchronous=NORMAL, with the WAL synced before each acknowledgement', async () => {
    const journal = await openJournal();
    expect((journalStoreOf(journal) as SqliteJournalStore).settings()).toMatchObject({ journalMode: 'wal', synchronous: 1, walSyncedBeforeAck: true });
  });

  it('chains records: gapless seq from 1, prevHash links, hash over the canonical preimage', async () => {
    const journal = await openJournal();
    const records = await journal.appendBatch(runDrafts('run-a', 3));
    await journal.append({ runId: null, kind: 'PeerLifecycle', body: { peerId: 'p1', event: 'started', address: 'mcpv2://127.0.0.1:9/mcpv2' } });
    const all = await journal.readRange(1, null, 100);
    expect(all.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(all[0]!.prevHash).toBe(GENESIS_PREV_HASH);
    for (let i = 0; i < all.length; i++) {
      const r = all[i]!;
      if (i > 0) expect(r.prevHash).toBe(all[i - 1]!.hash);
      expect(r.hash).toBe(sha(recordPreimage(r)));
      expect(recordPreimageFromBodyText(r, r.bodyText)).toBe(recordPreimage(r));
    }
    expect(records.map((r) => r.hash)).toEqual(all.slice(0, 8).map((r) => r.hash));
    expect(all[0]!.time).toBe('2026-01-01T00:00:00.001Z');
  });

  it('reads the records of given kinds in a range, and nothing else', async () => {
    const journal = await openJournal();
    await journal.appendBatch([...runDrafts('run-a', 2), ...runDrafts('run-b', 1)]);
    const all = await journal.readRange(1, null, 100);
    const kinds = ['EffectDone', 'RunSealed'];
    const want = (from: number, to: number) => all.filter((r) => r.seq >= from && r.seq <= to && kinds.includes(r.kind));
    expect(await journal.readKinds(1, all.length, kinds, 100)).toEqual(want(1, all.length));
    expect(await journal.readKinds(3, 7, kinds, 100)).toEqual(want(3, 7));
    // A page: the first `limit` in seq order.
    expect(await journal.readKinds(1, all.length, kinds, 2)).toEqual(want(1, all.length).slice(0, 2));
    expect(await journal.readKinds(1, all.length, ['HaltApplied'], 100)).toEqual([]);
    expect(await journal.readKinds(1, all.length, [], 100)).toEqual([]);
  });

  it('counts what its appends cost: commits, records, time in the transactions and in the syncs', async () => {
    const journal = await openJournal();
    const store = journalStoreOf(journal) as SqliteJournalStore;
    const before = store.writeStats();
    await journal.appendBatch(runDrafts('run-a', 2));
    await journal.append({ runId: null, kind: 'PeerLifecycle', body: { peerId: 'p1', event: 'started', address: 'mcpv2://127.0.0.1:9/mcpv2' } });
    const after = store.writeStats();
    expect(after.commits - before.commits).toBe(2);
    expect(after.records - before.records).toBe(7);
    expect(after.syncs - before.syncs).toBe(2);
    expect(after.transactionMs).toBeGreaterThan(before.transactionMs);
    expect(after.syncMs).toBeGreaterThan(before.syncMs);
    // A refused draft is no commit.
    await expect(journal.append({ runId: 'r', kind: 'Nope' as never, body: {} as never })).rejects.toThrow();
    expect(store.writeStats().commits).toBe(after.commits);
  });

  it('refuses invalid drafts with a message naming the field, and writes nothing', async () => {
    const journal = await openJournal();
    await expect(
      journal.append({ runId: 'r', kind: 'EffectDone', body: { step: 0, key: 'nothex', result: 1, spend: {}, provenance: 'x' } as never }),
    ).rejects.toThrow(/EffectDone body is invalid: key: .*spend\.effects/);
    await expect(journal.append({ runId: 'r', kind: 'Nope' as never, body: {} as never })).rejects.toThrow(/unknown record kind Nope/);
    await expect(
      journal.append({ runId: 'r', kind: 'Cancelled', body: { by: 'me', reason: 'x', atStep: 1, extra: Number.NaN } as never }),
    ).rejects.toThrow(/cannot canonicalize \$\.extra/);
    await expect(journal.appendBatch([...runDrafts('ok', 1), { runId: 'bad', kind: 'Cancelled', body: { by: 5 } as never }])).rejects.toThrow(
      JournalError,
    );
    expect((await journal.head()).seq).toBe(0);
  });


  it('refuses a body nested past what SQLite and verifiers read, alone and clearly, and goes on', async () => {
    const journal = await openJournal();
    const nested = (levels: number): unknown => JSON.parse('['.repeat(levels) + ']'.repeat(levels));
    for (const levels of [1_000, 5_000, 100_000]) {
      const deep = { runId: 'r', kind: 'Observation' as const, body: { source: 'acp', sessionId: 's', update: 'message', detail: nested(levels) } };
      await expect(journal.append(deep as never)).rejects.toThrow(/Observation body cannot canonicalize \$\.detail(\[0\])+: nested deeper than 512 levels/);
    }
    // A batch beside the refused one is untouched, and the journal still appends and verifies.
    const [ok] = await Promise.all([journal.appendBatch(runDrafts('ok', 2)), journal.append({ runId: 'r', kind: 'Observation', body: { source: 'acp', sessionId: 's', update: 'message', detail: nested(2_000) } } as never).catch(() => null)]);
    const written = runDrafts('ok', 2).length;
    expect(ok.map((r) => r.seq)).toEqual(Array.from({ length: written }, (_, i) => i + 1));
    expect((await journal.head()).seq).toBe(written);
  });

  it('writes a draft prepare() made as it was prepared, and checks anything else that claims to be prepared', async () => {
    const journal = await openJournal();
    // Every read of `by` counted: the schema check and the canonical text each read it.
    let reads = 0;
    const body = { reason: 'x', atStep: 1 } as Record<string, unknown>;
    Object.defineProperty(body, 'by', { enumerable: true, get: () => ((reads += 1), 'me') });
    const prepared = prepare({ runId: 'run-p', kind: 'Cancelled', body: body as never });
    const readsToPrepare = reads;
    expect(readsToPrepare).toBeGreaterThan(0);
    expect(Object.isFrozen(prepared)).toBe(true);
    const [written] = await journal.appendBatch([prepared]);
    // Not checked nor canonicalised a second time: no further read of the body.
    expect(reads).toBe(readsToPrepare);
    const [stored] = await journal.readRange(written!.seq, written!.seq, 1);
    expect(stored!.bodyText).toBe(prepared.bodyText);
    expect(stored!.bodyText).toBe('{"atStep":1,"by":"me","reason":"x"}');

    // A look-alike not made by prepare(): its bodyText is ignored and its body checked.
    const forged = { runId: 'run-f', kind: 'Cancelled' as const, v: 1, bodyText: '{"by":"someone else"}', body: { by: 'me', reason: 'y', atStep: 2 } };
    const [fromForged] = await journal.appendBatch([forged]);
    const [storedForged] = await journal.readRange(fromForged!.seq, fromForged!.seq, 1);
    expect(storedForged!.bodyText).toBe('{"atStep":2,"by":"me","reason":"y"}');
    // A copy of a prepared draft, even one on the same prototype, is a look-alike too.
    // (`bodyText` is a getter on that prototype, so the copy's own is defined over it.)
    const copied = Object.create(Object.getPrototypeOf(prepared) as object, {
      ...Object.getOwnPropertyDescriptors({ ...prepared }),
      bodyText: { value: '{"by":"forged"}', enumerable: true },
    }) as typeof prepared;
    expect(copied.bodyText).toBe('{"by":"forged"}');
    const [fromCopied] = await journal.appendBatch([copied]);
    const [storedCopied] = await journal.readRange(fromCopied!.seq, fromCopied!.seq, 1);
    expect(storedCopied!.bodyText).toBe('{"atStep":1,"by":"me","reason":"x"}');
    const invalid = { runId: 'run-g', kind: 'Cancelled' as const, v: 1, bodyText: '{"by":"me"}', body: { by: 5 } as never };
    await expect(journal.appendBatch([invalid])).rejects.toThrow(/Cancelled body is invalid/);
    expect((await journal.head()).seq).toBe(3);
  });
  it('the database itself refuses updates, deletes, gaps and forks', async () => {
    const dataDir = tempDataDir();
    const journal = await openJournal(dataDir);
    await journal.appendBatch(runDrafts('r', 1));
    const raw = new Database(journalPath(dataDir));
    expect(() => raw.prepare("UPDATE records SET body = '{}' WHERE seq = 1").run()).toThrow(/append-only/);
    expect(() => raw.prepare('DELETE FROM records WHERE seq = 1').run()).toThrow(/append-only/);
    const insert = raw.prepare('INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    expect(() => insert.run(9, null, 'Cancelled', 1, 't', '{}', 'a'.repeat(64), 'b'.repeat(64))).toThrow(/no gap/);
    expect(() => insert.run(5, null, 'Cancelled', 1, 't', '{}', 'a'.repeat(64), 'b'.repeat(64))).toThrow(/previous record/);
    raw.close();
  });

  it('migrations: applied once, in order, and a newer database is refused', async () => {
    const dataDir = tempDataDir();
    const store = SqliteJournalStore.open(journalPath(dataDir));
    await store.close();
    const raw = new Database(journalPath(dataDir));
    expect(raw.prepare('SELECT id FROM schema_migrations').pluck().all()).toEqual(migrations.map((m) => m.id));
    raw.prepare("INSERT INTO schema_migrations VALUES ('999_from_the_future', 'x')").run();
    raw.close();
    expect(() => SqliteJournalStore.open(journalPath(dataDir))).toThrow(/newer AgentPlane \(migration 999_from_the_future/);
  });

  it('reopening starts the Merkle tree from the state kept with the last checkpoint, and folds only what follows it', async () => {
    const dataDir = tempDataDir();
    const first = await openJournal(dataDir, 100);
    for (let i = 0; i < 30; i++) await first.appendBatch(runDrafts(`run-${i}`, 4));
    const root = first.rootHex();
    await first.close();
    const fullFoldRoot = async () => {
      // The tree folded from every record, the state deleted: what the kept state must equal.
      const raw = new Database(journalPath(dataDir));
      raw.prepare("DELETE FROM journal_meta WHERE key = 'merkle_tree'").run();
      raw.close();
      const store = SqliteJournalStore.open(journalPath(dataDir));
      const read = vi.spyOn(store, 'readHashes');
      const journal = await Journal.open({ dataDir, store });
      const folded = { root: journal.rootHex(), readFrom: read.mock.calls.map((c) => c[0]) };
      await journal.close();
      return folded;
    };

    const store = SqliteJournalStore.open(journalPath(dataDir));
    const read = vi.spyOn(store, 'readHashes');
    const reopened = await Journal.open({ dataDir, store });
    expect(reopened.size).toBe(30 * 10);
    expect(reopened.rootHex()).toBe(root);
    // The close signed a checkpoint over every record and kept the tree: nothing to fold.
    expect(read).not.toHaveBeenCalled();
    // Records after the kept state are folded onto it, and the next open starts from there.
    await reopened.appendBatch(runDrafts('run-after', 1));
    const grown = reopened.rootHex();
    await reopened.close();
    const full = await fullFoldRoot();
    expect(full).toEqual({ root: grown, readFrom: [1] });

    // A kept state no signed checkpoint vouches for (a frontier hash changed) is not used:
    // every record is folded, and the tree is right.
    const forged = await openJournal(dataDir, 100);
    await forged.close();
    const raw = new Database(journalPath(dataDir));
    const state = JSON.parse(raw.prepare("SELECT value FROM journal_meta WHERE key = 'merkle_tree'").pluck().get() as string) as { frontier: string[] };
    state.frontier[0] = state.frontier[0]!.replace(/^./, (c) => (c === '0' ? '1' : '0'));
    raw.prepare("UPDATE journal_meta SET value = ? WHERE key = 'merkle_tree'").run(JSON.stringify(state));
    raw.close();
    const checkedStore = SqliteJournalStore.open(journalPath(dataDir));
    const checkedRead = vi.spyOn(checkedStore, 'readHashes');
    const checked = await Journal.open({ dataDir, store: checkedStore });
    open.push(checked);
    expect(checked.rootHex()).toBe(grown);
    expect(checkedRead.mock.calls.map((c) => c[0])).toEqual([1]);
  });

  it('migration 005 rebuilds the records table without the hash indexes, keeping every record, index and trigger', async () => {
    const dataDir = tempDataDir();
    // A journal as migrations 001..004 left it, with records and a checkpoint over them.
    const before = new Database(journalPath(dataDir));
    migrate(before, migrations.slice(0, 4));
    const insertOld = before.prepare('INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    let prevHash = GENESIS_PREV_HASH;
    [...runDrafts('run-a', 3), ...runDrafts('run-b', 2)].forEach((draft, i) => {
      const fields = { seq: i + 1, runId: draft.runId, kind: draft.kind, v: CURRENT_VERSION[draft.kind], time: '2026-01-01T00:00:00.000Z', prevHash };
      const bodyText = canonicalize(draft.body);
      const hash = sha(recordPreimageFromBodyText(fields, bodyText));
      insertOld.run(fields.seq, fields.runId, fields.kind, fields.v, fields.time, bodyText, prevHash, hash);
      prevHash = hash;
    });
    before.close();
    const schemaOf = (db: Database.Database) =>
      db.prepare("SELECT type, name, sql FROM sqlite_master WHERE tbl_name = 'records' AND name NOT LIKE 'sqlite_autoindex%' ORDER BY type, name").all();
    const raw = new Database(journalPath(dataDir), { readonly: true });
    const schemaBefore = schemaOf(raw);
    const rowsBefore = raw.prepare('SELECT * FROM records ORDER BY seq').all();
    expect(raw.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sqlite_autoindex_records%'").pluck().get()).toBe(2);
    raw.close();

    const journal = await openJournal(dataDir);
    const after = new Database(journalPath(dataDir), { readonly: true });
    expect(after.prepare('SELECT * FROM records ORDER BY seq').all()).toEqual(rowsBefore);
    // The indexes and triggers are the ones it had, as they were (beside those of the migrations
    // after 005, which the open applied too); the table lost its two UNIQUEs.
    const later = new Set(['records_acp_session_ids', 'records_case_bound']);
    expect(schemaOf(after).filter((r) => (r as { type: string; name: string }).type !== 'table' && !later.has((r as { name: string }).name))).toEqual(schemaBefore.filter((r) => (r as { type: string }).type !== 'table'));
    expect(after.prepare("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'sqlite_autoindex_records%'").pluck().get()).toBe(0);
    after.close();
    expect((await verifyJournalStore(journal)).ok).toBe(true);
    await journal.append({ runId: null, kind: 'PeerLifecycle', body: { peerId: 'p1', event: 'started', address: 'mcpv2://127.0.0.1:9/mcpv2' } });
    // The chain is still the database's own rule: a record that re-links an earlier one, or
    // repeats a seq, is refused without the UNIQUE indexes.
    const writer = new Database(journalPath(dataDir));
    const head = writer.prepare('SELECT seq, hash, prev_hash FROM records ORDER BY seq DESC LIMIT 1').get() as { seq: number; hash: string; prev_hash: string };
    const insert = writer.prepare("INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (?, NULL, 'PeerLifecycle', 1, 't', '{}', ?, ?)");
    expect(() => insert.run(head.seq + 1, head.prev_hash, 'f'.repeat(64))).toThrow(/prev_hash must be the previous record's hash/);
    expect(() => insert.run(head.seq, head.prev_hash, 'f'.repeat(64))).toThrow(/seq must follow the head|UNIQUE|PRIMARY KEY/);
    expect(() => writer.prepare('DELETE FROM records WHERE seq = 1').run()).toThrow(/append-only/);
    writer.close();
  });

  it("says before migration 005 rebuilds a large records table that it will take a while, and says nothing for a small one", async () => {
    // A journal as migrations 001..004 left it, with `records` rows chained as the trigger wants.
    const journalOf = (records: number) => {
      const dataDir = tempDataDir();
      const db = new Database(journalPath(dataDir));
      migrate(db, migrations.slice(0, 4));
      const insert = db.prepare("INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (?, NULL, 'PeerLifecycle', 1, '2026-01-01T00:00:00.000Z', '{}', ?, ?)");
      db.transaction(() => {
        let prev = GENESIS_PREV_HASH;
        for (let seq = 1; seq <= records; seq++) {
          const hash = seq.toString(16).padStart(64, '0');
          insert.run(seq, prev, hash);
          prev = hash;
        }
      })();
      db.close();
      return dataDir;
    };
    const heard = async (dataDir: string) => {
      const notices: string[] = [];
      const journal = await Journal.open({ dataDir, onMigrationNotice: (message) => notices.push(message) });
      open.push(journal);
      expect((await journal.head()).seq).toBeGreaterThan(0);
      return notices;
    };
    expect(await heard(journalOf(10))).toEqual([]);
    const notices = await heard(journalOf(120_000));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/upgrading the journal's records table \(120,000 records, about 1 s\); this happens once/);
  }, 60_000);

  it('finds the runs a run called through one index, on a journal made before the index existed too', async () => {
    const dataDir = tempDataDir();
    // A journal as the first release wrote it: migration 001 only.
    const first = new Database(journalPath(dataDir));
    migrate(first, migrations.slice(0, 1));
    first.close();
    const journal = await openJournal(dataDir);
    const admit = (runId: string, extra: Record<string, unknown>) => ({
      runId,
      kind: 'RunAdmitted' as const,
      body: { agent: 'skill:ask', owner: 'plane', chain: ['plane'], input: {}, inputProvenance: 'plane', budget: { maxEffects: 1 }, trigger: { via: 'peer' as const, by: 'plane' }, host: 'peer:beta', ...extra },
    });
    await journal.appendBatch([admit('run-p', {}), admit('run-c1', { parentRunId: 'run-p', parentStep: 2 }), admit('run-x', {}), admit('run-c2', { parentRunId: 'run-p' })]);
    expect(await journalStoreOf(journal).childRuns('run-p', 10)).toEqual([
      { runId: 'run-c1', seq: 2, agent: 'skill:ask', host: 'peer:beta', parentStep: 2 },
      { runId: 'run-c2', seq: 4, agent: 'skill:ask', host: 'peer:beta', parentStep: null },
    ]);
    expect(await journalStoreOf(journal).childRuns('run-c1', 10)).toEqual([]);
    const raw = new Database(journalPath(dataDir), { readonly: true });
    const plan = raw
      .prepare("EXPLAIN QUERY PLAN SELECT run_id FROM records WHERE kind = 'RunAdmitted' AND json_extract(body, '$.parentRunId') IS NOT NULL AND json_extract(body, '$.parentRunId') = ?")
      .all('run-p') as Array<{ detail: string }>;
    raw.close();
    expect(plan.map((row) => row.detail).join(' ')).toContain('records_by_parent_run');
  });

  it('lists observed ACP sessions through their own index, newest activity first, whatever else the journal holds', async () => {
    const journal = await openJournal();
    const observe = (runId: string, update: string, sessionId = 's') => ({ runId, kind: 'Observation' as const, body: { source: 'acp' as const, sessionId, update, detail: {} } });
    await journal.appendBatch([observe('run-a', 'tap/started', 'sa'), ...runDrafts('run-x', 3), observe('run-b', 'tap/started', 'sb'), observe('run-a', 'message', 'sa')]);
    // A run that is not the tap's (its first record is not tap/started) is not a session.
    await journal.appendBatch([...runDrafts('run-y', 1), observe('run-y', 'tap/started', 'sy')]);
    expect(await journalStoreOf(journal).observedRuns(10)).toEqual([
      { runId: 'run-a', sessionId: 'sa', firstSeq: 1, lastSeq: 11, records: 2, lastKind: 'Observation' },
      { runId: 'run-b', sessionId: 'sb', firstSeq: 10, lastSeq: 10, records: 1, lastKind: 'Observation' },
    ]);
    expect(await journalStoreOf(journal).observedRuns(1)).toHaveLength(1);
    const raw = new Database(journalPath(journal.dataDir), { readonly: true });
    const plan = raw
      .prepare("EXPLAIN QUERY PLAN SELECT run_id FROM records o WHERE o.kind = 'Observation' AND json_extract(o.body, '$.update') = 'tap/started'")
      .all() as Array<{ detail: string }>;
    raw.close();
    expect(plan.map((row) => row.detail).join(' ')).toContain('records_acp_sessions');
  });

  it('refuses a corrupt or foreign database file with a clear error; an empty file becomes a journal', async () => {
    const dataDir = tempDataDir();
    writeFileSync(journalPath(dataDir), Buffer.from('this is not a database at all, just text'.repeat(50)));
    expect(() => SqliteJournalStore.open(journalPath(dataDir))).toThrow(/is not an AgentPlane journal: it is not a SQLite database/);

    const foreign = join(tempDataDir(), 'foreign.sqlite');
    const db = new Database(foreign);
    db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)');
    db.close();
    expect(() => SqliteJournalStore.open(foreign)).toThrow(/SQLite database but not an AgentPlane journal \(its tables: users\)/);

    const truncated = join(tempDataDir(), 'truncated.sqlite');
    const good = await openJournal();
    await good.appendBatch(runDrafts('r', 50));
    const bytes = readFileSync(journalPath(good.dataDir));
    const half = Buffer.concat([bytes.subarray(0, 100), Buffer.alloc(4096, 0xff)]);
    writeFileSync(truncated, half);
    expect(() => SqliteJournalStore.open(truncated)).toThrow(JournalError);

    const empty = join(tempDataDir(), 'empty.sqlite');
    writeFileSync(empty, '');
    const store = SqliteJournalStore.open(empty);
    expect((await store.head()).seq).toBe(0);
    await store.close();
  });

  it('reads and verifies a record of a kind from a newer version, and shows it as unknown', async () => {
    const dataDir = tempDataDir();
    const journal = await openJournal(dataDir);
    await journal.appendBatch(runDrafts('r', 1));
    const head = await journal.head();
    // What a newer AgentPlane writing the same data dir would leave behind.
    const fields = { seq: head.seq + 1, runId: 'r', kind: 'HologramProjected', v: 3, time: '2027-01-01T00:00:00.000Z', prevHash: head.hash };
    const bodyText = '{"beam":"blue"}';
    const hash = sha(recordPreimageFromBodyText(fields, bodyText));
    const raw = new Database(journalPath(dataDir));
    raw.prepare('INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
      fields.seq, 'r', fields.kind, 3, fields.time, bodyText, head.hash, hash,
    );
    raw.close();
    const [future] = await journal.readRange(fields.seq, fields.seq, 1);
    expect(future).toMatchObject({ kind: 'HologramProjected', v: 3, body: { beam: 'blue' } });
    expect(checkRecordBody(future!.kind, future!.v, future!.body)).toEqual({ known: false, why: 'record kind HologramProjected is newer than this AgentPlane' });
    expect(checkRecordBody('Cancelled', 7, {})).toMatchObject({ known: false });
    const report = await verifyJournalStore(journal);
    // Verified, and not yet signed (no checkpoint was due): reported as an unsigned tail.
    expect(report).toMatchObject({ ok: true, count: 0, unsignedTail: { fromSeq: 1, toSeq: fields.seq }, unknownKinds: 1 });
  });

  it('a full disk fails the append, acknowledges nothing and leaves the database valid', async () => {
    const dataDir = tempDataDir();
    const journal = await openJournal(dataDir);
    await journal.appendBatch(runDrafts('before', 2));
    const db = (journalStoreOf(journal) as SqliteJournalStore).connectionForTests;
    const pages = Number(db.pragma('page_count', { simple: true }));
    db.pragma(`max_page_count = ${pages + 1}`);
    const big = { runId: 'big', kind: 'Cancelled' as const, body: { by: 'x'.repeat(20_000) } };
    let failure: unknown;
    const acknowledged: number[] = [];
    for (let i = 0; i < 50 && !failure; i++) {
      try {
        acknowledged.push((await journal.append(big)).seq);
      } catch (error) {
        failure = error;
      }
    }
    expect(failure).toBeInstanceOf(JournalError);
    expect((failure as JournalError).code).toBe('Io');
    expect((failure as Error).message).toMatch(/nothing was written \(SQLITE_FULL/);
    const head = await journal.head();
    expect(head.seq).toBe(6 + acknowledged.length);
    expect(await journalStoreOf(journal).integrityCheck()).toBe('ok');
    db.pragma('max_page_count = 1073741823');
    await journal.append({ runId: 'after', kind: 'Cancelled', body: { by: 'me' } });
    expect(await verifyJournalStore(journal)).toMatchObject({ ok: true, count: 0, unsignedTail: { fromSeq: 1, toSeq: head.seq + 1 } });
  });

  it('issues a signed checkpoint every N records and one at close', async () => {
    const dataDir = tempDataDir();
    const journal = await openJournal(dataDir, 10);
    for (let i = 0; i < 5; i++) await journal.appendBatch(runDrafts(`r${i}`, 2)); // 6 records each
    await journal.checkpoint();
    const sizes = journal.checkpoints.readAll().map((jws) => JSON.parse(Buffer.from(jws.split('.')[1]!, 'base64url').toString()).treeSize);
    expect(sizes.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < sizes.length; i++) expect(sizes[i]! - sizes[i - 1]!).toBeLessThanOrEqual(12);
    await journal.append({ runId: null, kind: 'HaltApplied', body: { scope: 'subject:x', lifted: false, by: 'me' } });
    await journal.close();
    const after = journal.checkpoints.readAll();
    const last = JSON.parse(Buffer.from(after[after.length - 1]!.split('.')[1]!, 'base64url').toString());
    expect(last.treeSize).toBe(31);
    expect(existsSync(join(dataDir, 'checkpoints', 'checkpoints.jsonl'))).toBe(true);
  });
});
