/**
 * The journal on SQLite through better-sqlite3.
 *
 * Durability: a journal that acknowledges a record must have it on disk. The writer runs WAL
 * with `synchronous=NORMAL` (asserted at open; an open that cannot get WAL fails), under which
 * a COMMIT returns once its frames are written to the OS, and `append` resolves only after the
 * WAL file has been fdatasynced (wal-sync.ts): the guarantee `synchronous=FULL` gives. The sync
 * runs inline while syncs are fast and on libuv's thread pool once they are slow, so a slow disk
 * does not stop the plane's only thread; commits made while a sync is in flight share the next.
 *
 * Concurrency: appends run in `BEGIN IMMEDIATE`, i.e. under SQLite's single write lock, which
 * serialises writers across processes (busy_timeout makes a second writer wait rather than
 * fail). Inside the lock the head is read, seqs assigned and hashes chained; the triggers of
 * migration 001 refuse a gap or a fork anyway, and seq is the primary key.
 * Reads use a second, read-only connection (sqlite-reader.ts): in WAL mode readers see the last
 * committed snapshot and never block the writer, and never see half a transaction.
 */
import { hash as oneShotHash, randomBytes } from 'node:crypto';
import { chmodSync, closeSync, constants, lstatSync, openSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { GENESIS_PREV_HASH, type JournalRecord } from '../../src-shared/journal/records';
import { recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import { JournalError } from './journal-error';
import { metaValueOf, type ChildRunRow, type JournalHead, type JournalStore, type ObservedRunRow, type OwnedRunRow, type OwnedRunsQuery, type PreparedDraft, type RunSummaryRow, type StoredRecord } from './journal-store';
import type { MerkleAccumulatorState } from './merkle';
import { migrate } from './migrations';
import { nativeBinding, SqliteJournalReader, type StoredRecordText } from './sqlite-reader';
import { WalSync, type WalSyncOptions } from './wal-sync';

const SYNCHRONOUS_NORMAL = 1;
/** The journal_meta key of the Merkle tree's state at the last checkpoint (saveTreeState). */
const TREE_STATE_KEY = 'merkle_tree';

/**
 * SHA-256 of the UTF-8 of `text`, as lowercase hex. One-shot `crypto.hash` (Node 20.12+): for
 * inputs the size of a record (a few hundred bytes) the streaming Hash object's construction
 * costs more than the hash itself, and every append hashes each record once.
 */
export function sha256Hex(text: string): string {
  return oneShotHash('sha256', text, 'hex');
}

/**
 * The database and the two files SQLite keeps beside it in WAL mode are 0600 before SQLite
 * opens them. The -wal holds the newest records in clear (a run's input, before the next
 * checkpoint folds it into the database), so it matters as much as the database itself.
 *
 * SQLite creates a new database 0644 less the umask, and creates -wal and -shm with the mode
 * of the database file. The process umask is not the lever: it is process-wide, so changing it
 * around the open would race every other file another part of the plane creates meanwhile.
 * Instead each of the three is created here 0600 when absent (an empty -wal or -shm is what
 * SQLite itself starts from: O_CREAT|O_EXCL|O_NOFOLLOW, so it is a new file of ours) and
 * tightened by name when present (left 0644 by an older version), after lstat has shown a
 * regular file: a symlink planted at any of the three names refuses the open rather than
 * letting SQLite write the journal through it.
 *
 * A file that exists is never opened here. SQLite's locks are POSIX advisory locks, which
 * belong to the process, and closing ANY descriptor of a file drops every lock the process
 * holds on it: opening and closing the -shm while a connection of this process is open would
 * drop its lock marking the database in use, and another process would then take itself for
 * the only user, run WAL recovery under the live connection and lose what it had not seen.
 * (Swapping the checked file for a link between lstat and chmod needs write access to the
 * data dir, which the data dir check keeps to its owner.)
 */
export function preparePrivateFiles(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    let stat;
    try {
      stat = lstatSync(file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      try {
        closeSync(openSync(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600));
      } catch (raced) {
        // Another connection (this process or another) created it first: SQLite's, left as is.
        if ((raced as NodeJS.ErrnoException).code !== 'EEXIST') throw raced;
        stat = lstatSync(file);
      }
    }
    if (!stat) continue;
    if (stat.isSymbolicLink()) throw new JournalError('Io', `refusing to open ${file}: it is a symbolic link, which could point anywhere`);
    if (!stat.isFile()) throw new JournalError('Io', `refusing to open ${file}: it is not a regular file`);
    if (process.platform !== 'win32' && (stat.mode & 0o777) !== 0o600) chmodSync(file, 0o600);
  }
}

export interface SqliteStoreOptions {
  /** Milliseconds a writer waits for another process's write lock. */
  busyTimeoutMs?: number;
  /** How the WAL file is synced before an append is acknowledged (tests hold, time or fail it). */
  walSync?: WalSyncOptions;
  /** Hears what a slow migration says before it runs (migrations.ts `notice`), for the operator's log. */
  onMigrationNotice?: (message: string) => void;
}

export class SqliteJournalStore implements JournalStore {
  readonly journalId: string;
  /** The workers open this very file read-only (sqlite-reader.ts). */
  readonly workerDatabasePath: string;
  private readonly db: Database.Database;
  private readonly reads: SqliteJournalReader;
  private closed = false;
  /** The append transaction, made once (see `append`); run with `.immediate`. */
  private readonly writeChained: Database.Transaction<(batch: readonly PreparedDraft[], time: () => string) => JournalRecord[]>;
  private saveTreeStatement: Database.Statement | null = null;

  private constructor(
    readonly location: string,
    db: Database.Database,
    reader: Database.Database,
    journalId: string,
    private readonly walSync: WalSync,
  ) {
    this.db = db;
    this.workerDatabasePath = location;
    this.reads = new SqliteJournalReader(reader);
    this.journalId = journalId;
    const stmts = {
      head: db.prepare('SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1'),
      insert: db.prepare('INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)'),
    };
    // Inside the write lock: the head is read here, not before, so another process's appends
    // are chained onto rather than forked from (the triggers would refuse a fork anyway).
    this.writeChained = db.transaction((batch: readonly PreparedDraft[], time: () => string) => {
      const head = (stmts.head.get() as JournalHead | undefined) ?? { seq: 0, hash: GENESIS_PREV_HASH };
      let seq = head.seq;
      let prevHash = head.hash;
      const written: JournalRecord[] = [];
      for (const draft of batch) {
        seq += 1;
        const at = time();
        const hash = sha256Hex(recordPreimageFromBodyText({ seq, runId: draft.runId, kind: draft.kind, v: draft.v, time: at, prevHash }, draft.bodyText));
        stmts.insert.run(seq, draft.runId, draft.kind, draft.v, at, draft.bodyText, prevHash, hash);
        written.push({ seq, runId: draft.runId, kind: draft.kind, v: draft.v, time: at, prevHash, body: draft.body, hash });
        prevHash = hash;
      }
      return written;
    });
  }

  static open(path: string, options: SqliteStoreOptions = {}): SqliteJournalStore {
    preparePrivateFiles(path);
    const binding = nativeBinding();
    let db: Database.Database;
    try {
      db = new Database(path, binding ? { nativeBinding: binding } : {});
    } catch (error) {
      throw new JournalError('NotAJournal', `${path} cannot be opened as a journal: ${(error as Error).message}`);
    }
    try {
      db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
      const mode = switchToWal(db, options.busyTimeoutMs ?? 10_000);
      if (String(mode).toLowerCase() !== 'wal') throw new JournalError('Io', `${path}: SQLite refused WAL mode (got ${String(mode)})`);
      // NORMAL, and every commit's WAL frames synced before it is acknowledged (wal-sync.ts).
      db.pragma('synchronous = NORMAL');
      const sync = db.pragma('synchronous', { simple: true });
      if (sync !== SYNCHRONOUS_NORMAL) throw new JournalError('Io', `${path}: SQLite refused synchronous=NORMAL (got ${String(sync)})`);
      checkForeignSchema(db, path);
      try {
        migrate(db, undefined, options.onMigrationNotice);
      } catch (error) {
        if (error instanceof JournalError) throw error;
        const message = (error as Error).message;
        if (message.includes('newer AgentPlane')) throw new JournalError('NewerJournal', `${path}: ${message}`);
        throw error;
      }
      const journalId = ensureJournalId(db);
      // SQLite made -wal and -shm (WAL mode is on now); whatever their mode, they end 0600.
      preparePrivateFiles(path);
      const reader = new Database(path, { readonly: true, ...(binding ? { nativeBinding: binding } : {}) });
      reader.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
      return new SqliteJournalStore(path, db, reader, journalId, new WalSync(`${path}-wal`, options.walSync));
    } catch (error) {
      db.close();
      if (error instanceof JournalError) throw error;
      const code = (error as { code?: string }).code;
      // A file that is not SQLite is found by SQLite's own first read of its header, never by
      // opening it here: closing any descriptor of the file would drop the locks this
      // process's other connections hold on it (see preparePrivateFiles).
      if (code === 'SQLITE_NOTADB') throw new JournalError('NotAJournal', `${path} is not an AgentPlane journal: it is not a SQLite database`);
      if (code === 'SQLITE_CORRUPT') {
        throw new JournalError('NotAJournal', `${path} is not an AgentPlane journal: the database file is corrupt (${code})`);
      }
      throw new JournalError('Io', `${path}: ${(error as Error).message}`);
    }
  }

  /** The durability settings in force, for tests and for `agentplane journal info`. */
  settings(): { journalMode: string; synchronous: number; walSyncedBeforeAck: true; walSyncs: number; walSyncMode: 'inline' | 'thread-pool' } {
    return {
      journalMode: String(this.db.pragma('journal_mode', { simple: true })),
      synchronous: Number(this.db.pragma('synchronous', { simple: true })),
      walSyncedBeforeAck: true,
      walSyncs: this.walSync.count,
      walSyncMode: this.walSync.mode,
    };
  }

  /**
   * What this store's appends have cost so far: commits, records, the time inside the write
   * transactions (the chain's hashes, the inserts and the commit's WAL writes) and the time in
   * the WAL's syncs. Two clock reads a commit; read by the benches to say where a call's time went.
   */
  writeStats(): { commits: number; records: number; transactionMs: number; syncs: number; syncMs: number } {
    return { commits: this.commits, records: this.recordsWritten, transactionMs: this.transactionMs, syncs: this.walSync.count, syncMs: this.walSync.totalMs };
  }

  private commits = 0;
  private recordsWritten = 0;
  private transactionMs = 0;

  /** For tests only: the underlying connection, to simulate a full disk. */
  get connectionForTests(): Database.Database {
    return this.db;
  }

  async append(drafts: readonly PreparedDraft[], time: () => string, options: { shared?: boolean } = {}): Promise<JournalRecord[]> {
    this.assertOpen();
    if (drafts.length === 0) return [];
    // After a failed sync nothing is written either: it could never be acknowledged.
    if (this.walSync.failed) throw this.walSync.failed;
    // BEGIN IMMEDIATE, the inserts, COMMIT, then the WAL synced (off this thread), and nothing
    // returned (so nothing acknowledged) before that. The transaction function is made once, in
    // the constructor: each `db.transaction` call builds four wrapper functions and defines
    // their properties, which a single-record append would otherwise pay every time.
    let written: JournalRecord[];
    const started = performance.now();
    try {
      written = this.writeChained.immediate(drafts, time);
    } catch (error) {
      const code = (error as { code?: string }).code ?? 'unknown';
      throw new JournalError('Io', `journal append failed and nothing was written (${code}: ${(error as Error).message})`);
    }
    this.transactionMs += performance.now() - started;
    this.commits += 1;
    this.recordsWritten += written.length;
    await this.walSync.durable({ offThread: options.shared === true });
    return written;
  }

  saveTreeState(state: MerkleAccumulatorState): void {
    this.assertOpen();
    // journal_meta, not records: no chain and no trigger, and not durable on its own (a cache).
    // Prepared once: compiling it was about a tenth of every checkpoint's time.
    this.saveTreeStatement ??= this.db.prepare(`INSERT INTO journal_meta (key, value) VALUES ('${TREE_STATE_KEY}', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`);
    this.saveTreeStatement.run(JSON.stringify(state));
  }

  loadTreeState(): unknown {
    this.assertOpen();
    const text = this.db.prepare(`SELECT value FROM journal_meta WHERE key = '${TREE_STATE_KEY}'`).pluck().get() as string | undefined;
    return metaValueOf(text);
  }

  /** Resolves once every commit made so far (by any connection to this file) is on disk. */
  async durable(): Promise<void> {
    this.assertOpen();
    await this.walSync.durable();
  }

  async head(): Promise<JournalHead> {
    this.assertOpen();
    return this.reads.head();
  }

  async readRange(fromSeq: number, toSeq: number | null, limit: number): Promise<StoredRecord[]> {
    this.assertOpen();
    return this.reads.readRange(fromSeq, toSeq, limit);
  }

  async readRun(runId: string, fromSeq: number, limit: number): Promise<StoredRecord[]> {
    this.assertOpen();
    return this.reads.readRun(runId, fromSeq, limit);
  }

  async readKinds(fromSeq: number, toSeq: number, kinds: readonly string[], limit: number): Promise<StoredRecord[]> {
    this.assertOpen();
    return this.reads.readKinds(fromSeq, toSeq, kinds, limit);
  }

  async readHashes(fromSeq: number, toSeq: number): Promise<string[]> {
    this.assertOpen();
    return this.reads.readHashes(fromSeq, toSeq);
  }

  async readRangeText(fromSeq: number, toSeq: number | null, limit: number): Promise<StoredRecordText[]> {
    this.assertOpen();
    return this.reads.readRangeText(fromSeq, toSeq, limit);
  }

  iterate(fromSeq: number, toSeq: number | null): AsyncIterable<StoredRecord> {
    return this.reads.iterate(fromSeq, toSeq);
  }

  async runs(limit: number): Promise<RunSummaryRow[]> {
    this.assertOpen();
    return this.reads.runs(limit);
  }

  async observedRuns(limit: number): Promise<ObservedRunRow[]> {
    this.assertOpen();
    return this.reads.observedRuns(limit);
  }

  async sessionRuns(sessionId: string): Promise<ObservedRunRow[]> {
    this.assertOpen();
    return this.reads.sessionRuns(sessionId);
  }

  async caseRecords(caseId: string | null, limit: number): Promise<StoredRecord[]> {
    this.assertOpen();
    return this.reads.caseRecords(caseId, limit);
  }

  async runLastSeq(runId: string): Promise<number | null> {
    this.assertOpen();
    return this.reads.runLastSeq(runId);
  }

  async runSeqs(runId: string): Promise<number[]> {
    this.assertOpen();
    return this.reads.runSeqs(runId);
  }

  async runSeqAt(runId: string, position: number): Promise<number | null> {
    this.assertOpen();
    return this.reads.runSeqAt(runId, position);
  }

  async sealedRunResults(agent: string, inputPath: string, value: string, limit: number, host?: string): Promise<Array<{ runId: string; input: unknown; result: unknown }>> {
    this.assertOpen();
    if (!/^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(inputPath)) throw new JournalError('Refused', `not a plain JSON path: ${inputPath}`);
    const rows = this.reads.connection
      .prepare(
        `SELECT a.run_id AS runId, json_extract(a.body, '$.input') AS input, json_extract(s.body, '$.result') AS result
         FROM records a JOIN records s ON s.run_id = a.run_id AND s.kind = 'RunSealed'
         WHERE a.kind = 'RunAdmitted' AND json_extract(a.body, '$.agent') = ? AND json_extract(a.body, ?) = ?
           AND json_extract(s.body, '$.outcome') = 'succeeded'
           AND (? IS NULL OR COALESCE(json_extract(a.body, '$.host'), 'plane') = ?)
         ORDER BY a.seq DESC LIMIT ?`,
      )
      .all(agent, `$.input${inputPath.slice(1)}`, value, host ?? null, host ?? null, limit) as Array<{ runId: string; input: string; result: string | null }>;
    return rows.reverse().map((r) => ({ runId: r.runId, input: JSON.parse(r.input) as unknown, result: r.result === null ? null : (JSON.parse(r.result) as unknown) }));
  }

  async childRuns(parentRunId: string, limit: number): Promise<ChildRunRow[]> {
    this.assertOpen();
    // Spelled as the index (migration 002) is, so the planner reads it rather than every record.
    return this.reads.connection
      .prepare(
        `SELECT run_id AS runId, seq, json_extract(body, '$.agent') AS agent, COALESCE(json_extract(body, '$.host'), 'plane') AS host,
                json_extract(body, '$.parentStep') AS parentStep
         FROM records
         WHERE kind = 'RunAdmitted' AND json_extract(body, '$.parentRunId') IS NOT NULL AND json_extract(body, '$.parentRunId') = ?
         ORDER BY seq LIMIT ?`,
      )
      .all(parentRunId, limit) as ChildRunRow[];
  }

  async ownedRuns(query: OwnedRunsQuery, limit: number): Promise<OwnedRunRow[]> {
    this.assertOpen();
    const { sql, params } = ownedRunsSql(query);
    return this.reads.connection
      .prepare(`${sql} SELECT runId, seq, (SELECT MAX(r.seq) FROM records r WHERE r.run_id = owned.runId) AS lastSeq FROM owned ORDER BY seq DESC LIMIT @limit`)
      .all({ ...params, limit }) as OwnedRunRow[];
  }

  async countOwnedRuns(query: OwnedRunsQuery): Promise<number> {
    this.assertOpen();
    const { sql, params } = ownedRunsSql(query);
    return this.reads.connection.prepare(`${sql} SELECT COUNT(*) FROM owned`).pluck().get(params) as number;
  }

  async firstSeqAtOrAfter(time: string): Promise<number> {
    this.assertOpen();
    const timeAt = this.reads.connection.prepare('SELECT time FROM records WHERE seq = ?').pluck();
    let low = 1;
    let high = (await this.reads.head()).seq + 1;
    // Invariant: every seq below `low` is older than `time`; `high` is at or after it (head + 1 stands for "none").
    while (low < high) {
      const mid = Math.floor((low + high) / 2);
      if ((timeAt.get(mid) as string) < time) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  async integrityCheck(): Promise<string> {
    this.assertOpen();
    return String(this.db.pragma('integrity_check', { simple: true }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.walSync.idle();
    this.walSync.close();
    this.reads.close();
    this.db.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new JournalError('Closed', 'the journal is closed');
  }
}

/**
 * The `owned` CTE of one owner's matching admissions (runId, seq). Each branch is spelled as an
 * index of migration 004 is (kind and the json_extract of owner, or of context), so the planner
 * reads that index: the rows it visits are this owner's admissions, or this context's, never the
 * rest of the journal. A run counts as active from a seq when it was admitted at or after it or
 * has any record at or after it (one probe of records_by_run per older run, nothing folded).
 */
function ownedRunsSql(query: OwnedRunsQuery): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { owner: query.owner };
  const where = ["a.kind = 'RunAdmitted'", "json_extract(a.body, '$.owner') = @owner"];
  if (query.agent !== undefined) {
    where.push("json_extract(a.body, '$.agent') = @agent");
    params.agent = query.agent;
  }
  if (query.host !== undefined) {
    where.push("COALESCE(json_extract(a.body, '$.host'), 'plane') = @host");
    params.host = query.host;
  }
  if (query.beforeSeq !== undefined) {
    where.push('a.seq < @beforeSeq');
    params.beforeSeq = query.beforeSeq;
  }
  if (query.activeFromSeq !== undefined) {
    where.push('(a.seq >= @activeFrom OR EXISTS (SELECT 1 FROM records r WHERE r.run_id = a.run_id AND r.seq >= @activeFrom))');
    params.activeFrom = query.activeFromSeq;
  }
  const base = `SELECT a.run_id AS runId, a.seq AS seq FROM records a WHERE ${where.join(' AND ')}`;
  if (query.context === undefined) return { sql: `WITH owned AS (${base})`, params };
  params.context = query.context;
  // The run that opened the context carries none itself (its id is the context's): its first
  // record, found by seq through records_by_run. The runs that joined it carry it, found through
  // records_runs_by_context.
  return {
    sql: `WITH owned AS (${base} AND a.seq = (SELECT MIN(f.seq) FROM records f WHERE f.run_id = @context) AND a.run_id = @context AND json_extract(a.body, '$.context') IS NULL
      UNION ALL ${base} AND json_extract(a.body, '$.context') IS NOT NULL AND json_extract(a.body, '$.context') = @context)`,
    params,
  };
}

/**
 * Switching a new file to WAL needs an exclusive moment that busy_timeout does not wait for:
 * several processes opening one new data dir at once get SQLITE_BUSY at once. Retried until
 * the busy timeout, then reported.
 */
export function switchToWal(db: Database.Database, timeoutMs: number): unknown {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return db.pragma('journal_mode = WAL', { simple: true });
    } catch (error) {
      if ((error as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

/** A SQLite file with tables but none of ours is someone else's database: refuse, do not migrate into it. */
function checkForeignSchema(db: Database.Database, path: string): void {
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[]).sort();
  if (tables.length === 0) return;
  if (!tables.includes('schema_migrations') || (tables.includes('schema_migrations') && !tables.includes('records') && tables.length > 1)) {
    throw new JournalError('NotAJournal', `${path} is a SQLite database but not an AgentPlane journal (its tables: ${tables.slice(0, 8).join(', ')})`);
  }
}

function ensureJournalId(db: Database.Database): string {
  const existing = db.prepare("SELECT value FROM journal_meta WHERE key = 'journal_id'").pluck().get() as string | undefined;
  if (existing) return existing;
  db.prepare("INSERT OR IGNORE INTO journal_meta (key, value) VALUES ('journal_id', ?)").run(randomBytes(16).toString('hex'));
  return db.prepare("SELECT value FROM journal_meta WHERE key = 'journal_id'").pluck().get() as string;
}

export function journalPath(dataDir: string): string {
  return join(dataDir, 'journal.sqlite');
}
