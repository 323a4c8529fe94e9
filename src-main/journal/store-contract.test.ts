/**
 * The JournalStore contract (journal-store.ts), one suite run against both stores: SQLite in a
 * data dir, and PostgreSQL in a fresh database of the run's test cluster. What the layers above
 * read through the Journal (its door) must answer the same on either, and each database must
 * itself refuse a rewrite, a gap or a fork, whatever a writer does.
 */
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { GENESIS_PREV_HASH, type AnyRecordDraft } from '../../src-shared/journal/records';
import { recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import { exportBundle } from './bundle-export';
import { verifyBundleFileInThread as verifyBundle } from './bundle-verify';
import { journalStoreOf, Journal } from './journal';
import { verifyJournalStore, verifyJournalStoreInWorker, exportBundleInWorker } from './journal-workers';
import { journalPath, sha256Hex } from './sqlite-store';
import { SESSION_RUNS_SQL } from './sqlite-reader';
import { SESSION_RUNS_PG_SQL } from './postgres-store';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { freshDatabase, postgresMissing, postgresUrl, sql } from '../../tests/support/postgres-support';
import { join } from 'node:path';

interface Backend {
  name: string;
  /** Set on the PostgreSQL backend only (its targets carry a database URL). */
  databaseUrl?: true;
  available: boolean;
  /** Opens a journal on a new, empty store; the same `target` reopens the same store. */
  target(): Promise<{ dataDir: string; databaseUrl?: string }>;
  /**
   * Records a writable open appends before any of the test's: none on SQLite, the instance's
   * KeyAdmitted on PostgreSQL (a shared journal's keyring, keyring.ts). The test's seqs follow them.
   */
  admissions: number;
  /** Runs a raw statement as the database's owner would, bypassing the Journal (tamper tests). */
  raw(target: { dataDir: string; databaseUrl?: string }, text: string): Promise<void>;
}

const backends: Backend[] = [
  {
    name: 'SQLite',
    available: true,
    admissions: 0,
    target: async () => ({ dataDir: tempDataDir() }),
    raw: async ({ dataDir }, text) => {
      const db = new Database(journalPath(dataDir));
      try {
        db.exec(text);
      } finally {
        db.close();
      }
    },
  },
  {
    name: postgresUrl() ? 'PostgreSQL' : `PostgreSQL (skipped: ${postgresMissing()})`,
    available: postgresUrl() !== null,
    admissions: 1,
    databaseUrl: true,
    target: async () => ({ dataDir: tempDataDir(), databaseUrl: await freshDatabase('contract') }),
    raw: async ({ databaseUrl }, text) => {
      await sql(databaseUrl!, `SET search_path = agentplane; ${text}`);
    },
  },
];

const open: Journal[] = [];
afterEach(async () => {
  for (const journal of open.splice(0)) await journal.close().catch(() => undefined);
});

async function openOn(target: { dataDir: string; databaseUrl?: string }, options: { readOnly?: boolean; checkpointEvery?: number } = {}): Promise<Journal> {
  let t = Date.parse('2026-12-07T10:00:00.000Z');
  const journal = await Journal.open({ ...target, now: () => (t += 1000), ...options });
  open.push(journal);
  return journal;
}

function admit(runId: string, body: Record<string, unknown>): AnyRecordDraft {
  return {
    runId,
    kind: 'RunAdmitted',
    body: { agent: 'echo', owner: 'user:local', chain: ['user:local'], input: {}, inputProvenance: 'user:local', budget: { maxEffects: 1 }, trigger: { via: 'cli', by: 'user:local' }, ...body },
  } as AnyRecordDraft;
}

for (const backend of backends) {
  describe.skipIf(!backend.available)(`the journal store contract on ${backend.name}`, () => {
    /** Seq `n` of the test's own records (after the backend's admissions). */
    const at = (n: number) => n + backend.admissions;
    it('chains records: gapless seqs from 1, prevHash links, each hash over its canonical preimage', async () => {
      const journal = await openOn(await backend.target());
      const written = await journal.appendBatch(runDrafts('run-a', 2));
      await journal.append(runDrafts('run-b', 0)[0]!);
      const rows = await journal.readRange(1, null, 100);
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: at(7) }, (_, i) => i + 1));
      rows.forEach((row, i) => {
        expect(row.prevHash).toBe(i === 0 ? GENESIS_PREV_HASH : rows[i - 1]!.hash);
        expect(row.hash).toBe(sha256Hex(recordPreimageFromBodyText({ seq: row.seq, runId: row.runId, kind: row.kind, v: row.v, time: row.time, prevHash: row.prevHash }, row.bodyText)));
      });
      expect(written.map((r) => r.hash)).toEqual(rows.slice(at(0), at(6)).map((r) => r.hash));
      expect(await journal.head()).toEqual({ seq: at(7), hash: rows[at(6)]!.hash });
    });

    it('reads ranges, runs, kinds, hashes and pages, and finds a seq by time', async () => {
      const journal = await openOn(await backend.target());
      await journal.appendBatch([...runDrafts('run-a', 2), ...runDrafts('run-b', 1)]);
      expect((await journal.readRun('run-b', 1, 100)).map((r) => r.kind)).toEqual(['RunAdmitted', 'EffectStarted', 'EffectDone', 'RunSealed']);
      expect((await journal.readRun('run-a', at(3), 2)).map((r) => r.seq)).toEqual([at(3), at(4)]);
      expect((await journal.readKinds(1, 100, ['RunSealed', 'RunAdmitted'], 100)).map((r) => `${r.seq}:${r.kind}`)).toEqual([`${at(1)}:RunAdmitted`, `${at(6)}:RunSealed`, `${at(7)}:RunAdmitted`, `${at(10)}:RunSealed`]);
      expect(await journal.runLastSeq('run-a')).toBe(at(6));
      expect(await journal.runLastSeq('nope')).toBeNull();
      expect(await journal.runRecordCount('run-b')).toBe(4);
      const store = journalStoreOf(journal);
      expect(await store.runSeqs('run-b')).toEqual([7, 8, 9, 10].map(at));
      expect(await store.readHashes(2, 3)).toEqual((await journal.readRange(2, 3, 10)).map((r) => r.hash));
      const iterated: number[] = [];
      for await (const record of store.iterate(4, 8)) iterated.push(record.seq);
      expect(iterated).toEqual([4, 5, 6, 7, 8]);
      const runs = await journal.runs(10);
      expect(runs.map((r) => [r.runId, r.firstSeq, r.lastSeq, r.records, r.agent, r.firstKind, r.lastKind])).toEqual([
        ['run-b', at(7), at(10), 4, 'echo', 'RunAdmitted', 'RunSealed'],
        ['run-a', at(1), at(6), 6, 'echo', 'RunAdmitted', 'RunSealed'],
      ]);
      const third = (await journal.readRange(3, 3, 1))[0]!;
      expect(await journal.firstSeqAtOrAfter(third.time)).toBe(3);
      expect(await journal.firstSeqAtOrAfter('2999-01-01T00:00:00.000Z')).toBe(at(11));
      expect(await journal.firstSeqAtOrAfter('2000-01-01T00:00:00.000Z')).toBe(1);
      expect(await store.integrityCheck()).toBe('ok');
    });

    it('answers the reads of the layers above: children, owners, contexts, sealed results, observed sessions', async () => {
      const journal = await openOn(await backend.target());
      await journal.appendBatch([
        admit('run-p', { owner: 'ann', input: { context: { conversation: 'c1' } } }),
        admit('run-c1', { owner: 'ann', parentRunId: 'run-p', parentStep: 2, host: 'peer:beta', agent: 'skill:ask' }),
        admit('run-x', { owner: 'bob' }),
        admit('run-c2', { owner: 'ann', parentRunId: 'run-p', context: 'run-p' }),
        { runId: 'run-p', kind: 'RunSealed', body: { outcome: 'succeeded', result: { text: 'hi' }, spend: { effects: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 }, records: 2 } } as AnyRecordDraft,
        { runId: 'run-o', kind: 'Observation', body: { source: 'acp', sessionId: 'sess-1', update: 'tap/started', detail: {} } } as AnyRecordDraft,
        { runId: 'run-o', kind: 'Observation', body: { source: 'acp', sessionId: 'sess-1', update: 'message', detail: {} } } as AnyRecordDraft,
      ]);
      expect(await journal.childRuns('run-p', 10)).toEqual([
        { runId: 'run-c1', seq: at(2), agent: 'skill:ask', host: 'peer:beta', parentStep: 2 },
        { runId: 'run-c2', seq: at(4), agent: 'echo', host: 'plane', parentStep: null },
      ]);
      expect((await journal.ownedRuns({ owner: 'ann' }, 10)).map((r) => [r.runId, r.seq, r.lastSeq])).toEqual([
        ['run-c2', at(4), at(4)],
        ['run-c1', at(2), at(2)],
        ['run-p', at(1), at(5)],
      ]);
      expect(await journal.countOwnedRuns({ owner: 'ann' })).toBe(3);
      expect(await journal.countOwnedRuns({ owner: 'ann', host: 'peer:beta' })).toBe(1);
      expect((await journal.ownedRuns({ owner: 'ann', context: 'run-p' }, 10)).map((r) => r.runId)).toEqual(['run-c2', 'run-p']);
      expect((await journal.ownedRuns({ owner: 'ann', beforeSeq: at(4) }, 10)).map((r) => r.runId)).toEqual(['run-c1', 'run-p']);
      expect((await journal.ownedRuns({ owner: 'ann', activeFromSeq: at(5) }, 10)).map((r) => r.runId)).toEqual(['run-p']);
      expect(await journal.countOwnedRuns({ owner: 'nobody' })).toBe(0);
      expect(await journal.sealedRunResults('echo', '$.context.conversation', 'c1', 10)).toEqual([{ runId: 'run-p', input: { context: { conversation: 'c1' } }, result: { text: 'hi' } }]);
      expect(await journal.sealedRunResults('echo', '$.context.conversation', 'c2', 10)).toEqual([]);
      await expect(journal.sealedRunResults('echo', "$.x'); DROP TABLE records; --", 'c1', 10)).rejects.toThrow(/not a plain JSON path/);
      expect(await journal.observedRuns(10)).toEqual([{ runId: 'run-o', sessionId: 'sess-1', firstSeq: at(6), lastSeq: at(7), records: 2, lastKind: 'Observation' }]);
    });

    it('finds an ACP session by its session id, and a case by its id, each in one read of its own index', async () => {
      const target = await backend.target();
      const journal = await openOn(target);
      const at = (n: number) => n + backend.admissions;
      const observe = (runId: string, sessionId: string, update: string) => ({ runId, kind: 'Observation', body: { source: 'acp', sessionId, update, detail: {} } }) as AnyRecordDraft;
      const bind = (caseId: string, sessionId: string, runIds: string[]) => ({ runId: null, kind: 'CaseBound', body: { caseId, sessionId, runIds, by: 'local-user' } }) as AnyRecordDraft;
      await journal.appendBatch([
        observe('run-o1', 'sess-1', 'tap/started'),
        observe('run-o1', 'sess-1', 'message'),
        observe('run-o2', 'sess-2', 'tap/started'),
        observe('run-o3', 'sess-1', 'tap/started'),
        bind('M-1', 'sess-1', ['run-o1', 'run-o3']),
        bind('M-2', 'sess-2', ['run-o2']),
      ]);
      expect(await journal.sessionRuns('sess-1')).toEqual([
        { runId: 'run-o1', sessionId: 'sess-1', firstSeq: at(1), lastSeq: at(2), records: 2, lastKind: 'Observation' },
        { runId: 'run-o3', sessionId: 'sess-1', firstSeq: at(4), lastSeq: at(4), records: 1, lastKind: 'Observation' },
      ]);
      expect(await journal.sessionRuns('sess-none')).toEqual([]);
      expect((await journal.caseRecords('M-1', 10)).map((r) => [r.seq, r.runId, r.body])).toEqual([[at(5), null, { caseId: 'M-1', sessionId: 'sess-1', runIds: ['run-o1', 'run-o3'], by: 'local-user' }]]);
      expect((await journal.caseRecords(null, 10)).map((r) => r.body.caseId)).toEqual(['M-2', 'M-1']);
      expect(await journal.caseRecords('M-none', 10)).toEqual([]);
      // The session is found through its index, not by reading the records.
      if (backend.databaseUrl === undefined) {
        const db = new Database(journalPath(target.dataDir), { readonly: true });
        try {
          const plan = (db.prepare(`EXPLAIN QUERY PLAN ${SESSION_RUNS_SQL}`).all('sess-1') as Array<{ detail: string }>).map((r) => r.detail);
          expect(plan[0]).toMatch(/SEARCH o USING INDEX records_acp_session_ids/);
          expect(plan.join('\n')).not.toMatch(/SCAN (o|records)\b/);
        } finally {
          db.close();
        }
      } else {
        const results = (await sql(target.databaseUrl!, `SET search_path = agentplane; SET enable_seqscan = off; EXPLAIN ${SESSION_RUNS_PG_SQL.replace('$1', "'sess-1'")}`)) as unknown as Array<{ rows: Array<Record<string, string>> }>;
        const plan = results.at(-1)!.rows.map((r) => Object.values(r)[0]).join('\n');
        expect(plan).toMatch(/Index Scan using records_tap_started_by_session/);
      }
    });

    it('the database itself refuses an update, a delete, a gap and a fork, and keeps every record', async () => {
      const target = await backend.target();
      const journal = await openOn(target);
      await journal.appendBatch(runDrafts('run-a', 1));
      const head = await journal.head();
      await expect(backend.raw(target, "UPDATE records SET body = '{}' WHERE seq = 1")).rejects.toThrow(/append-only/);
      await expect(backend.raw(target, 'DELETE FROM records WHERE seq = 4')).rejects.toThrow(/append-only/);
      const fake = (seq: number, prev: string) => `INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (${seq}, 'run-z', 'RunSealed', 1, '2026-12-07T10:00:00.000Z', '{}', '${prev}', '${'f'.repeat(63)}${seq}')`;
      await expect(backend.raw(target, fake(head.seq + 2, head.hash))).rejects.toThrow(/gap/);
      await expect(backend.raw(target, fake(head.seq + 1, 'a'.repeat(64)))).rejects.toThrow(/prev_hash/);
      expect(await journal.head()).toEqual(head);
      await journal.checkpoint();
      expect(await verifyJournalStore(journal)).toMatchObject({ ok: true, count: head.seq });
    });

    it('reopens at its head, with the tree kept at the last checkpoint, and verifies and exports alike', async () => {
      const target = await backend.target();
      const first = await openOn(target, { checkpointEvery: 5 });
      await first.appendBatch([...runDrafts('run-a', 3), ...runDrafts('run-b', 2)]);
      const root = first.rootHex();
      await first.close();
      const journal = await openOn(target);
      expect(journal.size).toBe(at(14));
      expect(journal.rootHex()).toBe(root);
      await journal.append(runDrafts('run-c', 0)[0]!);
      await journal.checkpoint();
      expect(await verifyJournalStoreInWorker(journal)).toMatchObject({ ok: true, count: at(15) });
      const file = join(tempDataDir(), 'run-b.jsonl');
      const exported = await exportBundleInWorker(journal, { kind: 'run', runId: 'run-b' }, file);
      expect(exported.records).toBe(6);
      expect(await verifyBundle(file, { expectKeyId: journal.key.keyId })).toMatchObject({ ok: true });
      const whole = join(tempDataDir(), 'all.jsonl');
      await exportBundle(journal, { kind: 'full' }, whole);
      expect(await verifyBundle(whole, { expectKeyId: journal.key.keyId })).toMatchObject({ ok: true, count: at(15) });
    });

    it('a closed journal refuses reads and appends with a clear error', async () => {
      const journal = await openOn(await backend.target());
      await journal.close();
      await expect(journal.append(runDrafts('run-a', 0)[0]!)).rejects.toThrow(/closed/);
      await expect(journalStoreOf(journal).head()).rejects.toThrow(/closed/);
    });
  });
}
