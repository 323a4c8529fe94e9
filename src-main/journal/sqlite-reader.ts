/**
 * Reading the journal's SQLite database over a read-only connection (SqliteJournalReader): what
 * the store (sqlite-store.ts) reads through, and what a journal worker (journal-worker.ts) opens
 * for itself. In WAL mode a reader sees the last committed snapshot, never half a transaction,
 * and never blocks a writer.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { GENESIS_PREV_HASH } from '../../src-shared/journal/records';
import { appRoot } from '../base/app-paths';
import { JournalError } from './journal-error';
import { pagedRecords, storedFromRow, type JournalHead, type RecordRow, type JournalReads, type ObservedRunRow, type RunSummaryRow, type StoredRecord } from './journal-store';

/** A row of the records table (journal-store.ts), as SQLite returns it. */
export type { RecordRow };

/** One ACP session's observed runs by its session id: through records_acp_session_ids (migration 006), then each run's index. */
export const SESSION_RUNS_SQL = `        SELECT o.run_id AS runId, json_extract(o.body, '$.sessionId') AS sessionId, o.seq AS firstSeq,
               (SELECT MAX(seq) FROM records m WHERE m.run_id = o.run_id) AS lastSeq,
               (SELECT COUNT(*) FROM records c WHERE c.run_id = o.run_id) AS records,
               (SELECT kind FROM records l WHERE l.run_id = o.run_id ORDER BY l.seq DESC LIMIT 1) AS lastKind
        FROM records o
        WHERE o.kind = 'Observation' AND json_extract(o.body, '$.update') = 'tap/started' AND json_extract(o.body, '$.sessionId') = ?
        ORDER BY o.seq`;

/** Records read at a time walking back from the head for the newest runs (SqliteJournalReader.runs). */
const RUNS_WALK_PAGE = 2000;
/**
 * How far that walk goes before grouping every run instead: this many records per run asked
 * for, and at least RUNS_WALK_MIN. A busy plane's runs are short and interleaved: the newest
 * 1,000 runs of the generated 10M journal (tests/support/scale-journal-generator.ts) lie within
 * its last 15,400 records, about 15 a run.
 */
const RUNS_WALK_PER_RUN = 100;
const RUNS_WALK_MIN = 20_000;

/** A stored record without its parsed body: the envelope and the body's canonical text (readRangeText). */
export type StoredRecordText = Omit<StoredRecord, 'body'>;


/** Where the Electron build of better-sqlite3 lives (scripts/electron-native.mjs puts it there). */
export function nativeBinding(): string | undefined {
  if (!process.versions.electron) return undefined;
  const file = join(appRoot(), 'native', 'electron', 'better_sqlite3.node');
  return existsSync(file) ? file : undefined;
}

/**
 * Reads over one read-only connection. In WAL mode a reader sees the last committed snapshot,
 * never half a transaction, and never blocks a writer. Each call is its own statement (its own
 * read transaction), so no snapshot is held open across awaits.
 *
 * `SqliteJournalStore` reads through one of these; a journal worker (journal-worker.ts) opens
 * its own with `SqliteJournalReader.open`, which goes through better-sqlite3 alone and opens,
 * creates or closes none of the database's files itself (see
 * preparePrivateFiles in sqlite-store.ts for why that matters to every other connection of the
 * process).
 */
/**
 * The newest `?` runs, each with its first and last record, by grouping the whole index of runs'
 * records: what a journal whose newest stretch holds fewer runs than asked for falls back to
 * (SqliteJournalReader.runs), and what its walk back from the head must agree with (its test).
 */
export const NEWEST_RUNS_GROUPED = `
  SELECT r.run_id AS runId, r.firstSeq, r.lastSeq, r.records, f.time AS firstTime, l.time AS lastTime, l.kind AS lastKind,
         json_extract(f.body, '$.agent') AS agent, f.kind AS firstKind
  FROM (SELECT run_id, MIN(seq) AS firstSeq, MAX(seq) AS lastSeq, COUNT(*) AS records
        FROM records WHERE run_id IS NOT NULL GROUP BY run_id ORDER BY lastSeq DESC LIMIT ?) r
  JOIN records f ON f.seq = r.firstSeq
  JOIN records l ON l.seq = r.lastSeq
  ORDER BY r.lastSeq DESC`;

export class SqliteJournalReader implements JournalReads {
  private closed = false;
  private readonly stmts;

  constructor(readonly connection: Database.Database) {
    this.stmts = {
      readHead: connection.prepare('SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1'),
      range: connection.prepare('SELECT * FROM records WHERE seq >= ? AND seq <= ? ORDER BY seq LIMIT ?'),
      run: connection.prepare('SELECT * FROM records WHERE run_id = ? AND seq >= ? ORDER BY seq LIMIT ?'),
      // The kinds as a JSON array: one statement for any set of them.
      kinds: connection.prepare('SELECT * FROM records WHERE seq >= ? AND seq <= ? AND kind IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT ?'),
      hashes: connection.prepare('SELECT hash FROM records WHERE seq >= ? AND seq <= ? ORDER BY seq').pluck(),
      runSeqs: connection.prepare('SELECT seq FROM records WHERE run_id = ? ORDER BY seq').pluck(),
      runLastSeq: connection.prepare('SELECT MAX(seq) FROM records WHERE run_id = ?').pluck(),
      // Counted along the run's covering index (records_by_run): 50-70 ms at the end of a run of 1,000,000.
      runSeqAt: connection.prepare('SELECT seq FROM records WHERE run_id = ? ORDER BY seq LIMIT 1 OFFSET ?').pluck(),
      // The newest runs by last activity, found from the head down (runs()): run ids of a
      // stretch of records below a seq, newest first, through the primary key.
      runIdsBelow: connection.prepare('SELECT seq, run_id FROM records WHERE seq < ? ORDER BY seq DESC LIMIT ?').raw(),
      // One run's first seq and count of records up to a seq, from its index (covering).
      runSpan: connection.prepare('SELECT MIN(seq) AS firstSeq, COUNT(*) AS records FROM records WHERE run_id = ? AND seq <= ?'),
      runEnds: connection.prepare(`
        SELECT f.time AS firstTime, l.time AS lastTime, l.kind AS lastKind, json_extract(f.body, '$.agent') AS agent, f.kind AS firstKind
        FROM records f JOIN records l ON l.seq = ? WHERE f.seq = ?`),
      // Every run, grouped from the index of runs: what runs() falls back to when the newest
      // stretch of the journal holds fewer runs than asked for.
      runsGrouped: connection.prepare(NEWEST_RUNS_GROUPED),
      // One session's observed runs, through the index of tap/started by session id (migration 006).
      sessionRuns: connection.prepare(SESSION_RUNS_SQL),
      caseRecords: connection.prepare(`SELECT * FROM records WHERE kind = 'CaseBound' AND json_extract(body, '$.caseId') = ? ORDER BY seq DESC LIMIT ?`),
      allCaseRecords: connection.prepare(`SELECT * FROM records WHERE kind = 'CaseBound' AND json_extract(body, '$.caseId') IS NOT NULL ORDER BY seq DESC LIMIT ?`),
      // Observed ACP sessions: every one begins with the tap's `tap/started` observation, found
      // through its own partial index (migration 003), so listing them reads one index entry per
      // session and, per session, its run's index; never every record of the journal.
      observedRuns: connection.prepare(`
        SELECT o.run_id AS runId, json_extract(o.body, '$.sessionId') AS sessionId, o.seq AS firstSeq,
               (SELECT MAX(seq) FROM records m WHERE m.run_id = o.run_id) AS lastSeq,
               (SELECT COUNT(*) FROM records c WHERE c.run_id = o.run_id) AS records,
               (SELECT kind FROM records l WHERE l.run_id = o.run_id ORDER BY l.seq DESC LIMIT 1) AS lastKind
        FROM records o
        WHERE o.kind = 'Observation' AND json_extract(o.body, '$.update') = 'tap/started'
          AND json_extract(o.body, '$.source') = 'acp'
          AND o.seq = (SELECT MIN(seq) FROM records f WHERE f.run_id = o.run_id)
        ORDER BY lastSeq DESC LIMIT ?`),
    };
  }

  /**
   * A read-only connection of its own to an existing journal, opened by better-sqlite3 alone:
   * no file of the database is created, chmodded, opened or closed here, and nothing is
   * migrated or written (SQLite refuses any write on it). What a journal worker reads through.
   */
  static open(path: string, options: { busyTimeoutMs?: number } = {}): SqliteJournalReader {
    const binding = nativeBinding();
    let connection: Database.Database;
    try {
      connection = new Database(path, { readonly: true, fileMustExist: true, ...(binding ? { nativeBinding: binding } : {}) });
    } catch (error) {
      throw new JournalError('NotAJournal', `${path} cannot be opened as a journal: ${(error as Error).message}`);
    }
    connection.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    return new SqliteJournalReader(connection);
  }

  async head(): Promise<JournalHead> {
    this.assertOpen();
    return (this.stmts.readHead.get() as JournalHead | undefined) ?? { seq: 0, hash: GENESIS_PREV_HASH };
  }

  async readRange(fromSeq: number, toSeq: number | null, limit: number): Promise<StoredRecord[]> {
    this.assertOpen();
    return (this.stmts.range.all(fromSeq, toSeq ?? Number.MAX_SAFE_INTEGER, limit) as RecordRow[]).map(storedFromRow);
  }

  async readRun(runId: string, fromSeq: number, limit: number): Promise<StoredRecord[]> {
    this.assertOpen();
    return (this.stmts.run.all(runId, fromSeq, limit) as RecordRow[]).map(storedFromRow);
  }

  async readKinds(fromSeq: number, toSeq: number, kinds: readonly string[], limit: number): Promise<StoredRecord[]> {
    this.assertOpen();
    return (this.stmts.kinds.all(fromSeq, toSeq, JSON.stringify(kinds), limit) as RecordRow[]).map(storedFromRow);
  }

  async readHashes(fromSeq: number, toSeq: number): Promise<string[]> {
    this.assertOpen();
    return this.stmts.hashes.all(fromSeq, toSeq) as string[];
  }

  /**
   * Records with from <= seq <= to (to null: the head), at most `limit`, as the text SQLite
   * holds: the body is not parsed (verification hashes the text and never needs the object),
   * and rows come from SQLite as arrays, not objects keyed by column. Added for verification
   * (store-verify.ts verifyStoreRecords), where parsing every body cost more than hashing it.
   */
  async readRangeText(fromSeq: number, toSeq: number | null, limit: number): Promise<StoredRecordText[]> {
    this.assertOpen();
    this.rangeTextStmt ??= this.connection.prepare('SELECT seq, run_id, kind, v, time, body, prev_hash, hash FROM records WHERE seq >= ? AND seq <= ? ORDER BY seq LIMIT ?').raw();
    const rows = this.rangeTextStmt.all(fromSeq, toSeq ?? Number.MAX_SAFE_INTEGER, limit) as Array<[number, string | null, string, number, string, string, string, string]>;
    return rows.map(([seq, runId, kind, v, time, bodyText, prevHash, hash]) => ({ seq, runId, kind, v, time, bodyText, prevHash, hash }) as StoredRecordText);
  }

  private rangeTextStmt: Database.Statement | undefined;

  iterate(fromSeq: number, toSeq: number | null): AsyncIterable<StoredRecord> {
    return pagedRecords((from, to, limit) => this.readRange(from, to, limit), fromSeq, toSeq);
  }

  /**
   * The newest `limit` runs by last activity. Read from the head down: the first time a run id
   * is met walking back is its last seq, and runs are met in order of it, so the first `limit`
   * distinct ids are exactly the newest `limit` runs. Each is then counted from its index. On a
   * journal of 10,000,000 records the newest 1,000 runs lie within its last 15,400 records,
   * where grouping the whole index of runs took 1.2 s (docs/PERFORMANCE.md, "At scale"). A
   * journal whose newest RUNS_WALK_PER_RUN × limit records hold fewer runs (few, long ones) is
   * grouped whole instead, as it always was. One read transaction: one snapshot throughout.
   */
  async runs(limit: number): Promise<RunSummaryRow[]> {
    this.assertOpen();
    return this.connection.transaction(() => {
      const found = this.newestRunIds(limit);
      if (found === null) return this.stmts.runsGrouped.all(limit) as RunSummaryRow[];
      return found.map(({ runId, lastSeq }) => {
        const span = this.stmts.runSpan.get(runId, lastSeq) as { firstSeq: number; records: number };
        const ends = this.stmts.runEnds.get(lastSeq, span.firstSeq) as Pick<RunSummaryRow, 'firstTime' | 'lastTime' | 'lastKind' | 'agent' | 'firstKind'>;
        return { runId, firstSeq: span.firstSeq, lastSeq, records: span.records, ...ends };
      });
    })();
  }

  /** The newest `limit` runs' ids and last seqs, newest first (runs()); null when the walk's bound came first. */
  private newestRunIds(limit: number): Array<{ runId: string; lastSeq: number }> | null {
    const found: Array<{ runId: string; lastSeq: number }> = [];
    const seen = new Set<string>();
    const bound = Math.max(RUNS_WALK_MIN, RUNS_WALK_PER_RUN * limit);
    let below = Number.MAX_SAFE_INTEGER;
    for (let walked = 0; walked < bound; ) {
      const rows = this.stmts.runIdsBelow.all(below, RUNS_WALK_PAGE) as Array<[number, string | null]>;
      for (const [seq, runId] of rows) {
        if (runId === null || seen.has(runId)) continue;
        seen.add(runId);
        found.push({ runId, lastSeq: seq });
        if (found.length === limit) return found;
      }
      // The journal's first record reached: every run has been met.
      if (rows.length < RUNS_WALK_PAGE) return found;
      walked += rows.length;
      below = rows[rows.length - 1]![0];
    }
    return null;
  }

  async observedRuns(limit: number): Promise<ObservedRunRow[]> {
    this.assertOpen();
    return this.stmts.observedRuns.all(limit) as ObservedRunRow[];
  }

  async sessionRuns(sessionId: string): Promise<ObservedRunRow[]> {
    this.assertOpen();
    return this.stmts.sessionRuns.all(sessionId) as ObservedRunRow[];
  }

  async caseRecords(caseId: string | null, limit: number): Promise<StoredRecord[]> {
    this.assertOpen();
    const rows = caseId === null ? this.stmts.allCaseRecords.all(limit) : this.stmts.caseRecords.all(caseId, limit);
    return (rows as RecordRow[]).map(storedFromRow);
  }

  async runLastSeq(runId: string): Promise<number | null> {
    this.assertOpen();
    return (this.stmts.runLastSeq.get(runId) as number | null | undefined) ?? null;
  }

  async runSeqs(runId: string): Promise<number[]> {
    this.assertOpen();
    return this.stmts.runSeqs.all(runId) as number[];
  }

  async runSeqAt(runId: string, position: number): Promise<number | null> {
    this.assertOpen();
    return (this.stmts.runSeqAt.get(runId, position) as number | undefined) ?? null;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.connection.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new JournalError('Closed', 'the journal is closed');
  }
}
