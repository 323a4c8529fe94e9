/**
 * The journal on PostgreSQL through node-postgres (`pg`): the store several plane instances
 * share (docs/ARCHITECTURE.md, "the journal's door"; README, "A team plane on PostgreSQL").
 *
 * It keeps the JournalStore contract (journal-store.ts) with PostgreSQL's own machinery, not a
 * replication of ours:
 * - An append is one transaction that first takes a transaction-scoped advisory lock, then
 *   reads the head, assigns the next seqs and chains the hashes, and inserts: writers in any
 *   number of processes are serialised by the database, and the triggers of migration 001
 *   refuse a gap, a fork or a rewrite anyway (postgres-schema.ts). The lock is released by the
 *   COMMIT or ROLLBACK itself, so a writer that dies cannot leave it held.
 * - Every connection runs `synchronous_commit = on` (checked at open), so COMMIT returns only
 *   once the commit is in the server's durable WAL: an append resolves after that, never before.
 * - Reads are plain statements on pooled connections: MVCC shows each one the committed
 *   records only, and a reader never blocks the writer nor the writer a reader.
 *
 * Bodies are kept as the canonical text that was hashed; the queries that look inside a body
 * cast it to jsonb, through the expression indexes migration 001 makes.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { GENESIS_PREV_HASH, type JournalRecord } from '../../src-shared/journal/records';
import { recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import { JournalError } from './journal-error';
import { pagedRecords, storedFromRow, type ChildRunRow, type JournalHead, type JournalStore, type ObservedRunRow, type OwnedRunRow, type OwnedRunsQuery, type PreparedDraft, type PublishedCheckpoint, type RecordRow, type RunSummaryRow, metaValueOf, type InstanceHolder, type InstanceLease, type InstanceLeaseHooks, type StoredRecord } from './journal-store';
import type { MerkleAccumulatorState } from './merkle';
import { PostgresInstanceLease } from './postgres-lease';
import { migratePostgres, SCHEMA } from './postgres-schema';
import { checkDatabaseUrl, DEFAULT_POSTGRES_LIMITS, maskDatabaseUrl, type PostgresLimits } from './postgres-url';
import { sha256Hex } from './sqlite-store';

/** The key of the advisory lock every append holds for its transaction (any constant; one per database). */
const APPEND_LOCK = 0x4147_5041; // "AGPA"
const TREE_STATE_KEY = 'merkle_tree';
/** BEGIN, the append lock, and the head read inside it; no parameters, so it goes as one simple query. */
const BEGIN_LOCKED_HEAD = `BEGIN; SELECT pg_advisory_xact_lock(${APPEND_LOCK}); SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1`;
const INT8_OID = 20;

/** bigint columns (seq, COUNT) as numbers: a journal's seqs stay far below 2^53. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format ?? 'text'))) as typeof pg.types.getTypeParser,
};



export interface PostgresStoreOptions {
  limits?: Partial<PostgresLimits>;
  /** Where the URL came from, for errors: `--database`, AGENTPLANE_DATABASE_URL, `--to`. */
  source?: string;
}

/** What a failed connection or first statement means to the person, with the URL masked. */
function openError(error: unknown, where: string): JournalError {
  if (error instanceof JournalError) return error;
  const e = error as { code?: string; message?: string };
  const message = e.message ?? String(error);
  switch (e.code) {
    case 'ECONNREFUSED':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ECONNRESET':
      return new JournalError('Io', `cannot reach PostgreSQL at ${where} (${e.code})`);
    case '28P01':
    case '28000':
      return new JournalError('Refused', `PostgreSQL at ${where} refused the login: ${message}`);
    case '3D000':
      return new JournalError('NotAJournal', `PostgreSQL at ${where}: ${message} (create it first: createdb)`);
    default:
      if (/timeout/i.test(message)) return new JournalError('Io', `cannot reach PostgreSQL at ${where} (no answer before the connect timeout)`);
      if (/SSL|TLS|certificate/i.test(message)) return new JournalError('Io', `PostgreSQL at ${where}: TLS failed: ${message}`);
      return new JournalError('Io', `PostgreSQL at ${where}: ${message}`);
  }
}

/** One ACP session's observed runs by its session id: through records_tap_started_by_session (migration 003), then each run's index. */
export const SESSION_RUNS_PG_SQL = `SELECT o.run_id AS "runId", (o.body::jsonb) ->> 'sessionId' AS "sessionId", o.seq AS "firstSeq",
              (SELECT MAX(seq) FROM records m WHERE m.run_id = o.run_id) AS "lastSeq",
              (SELECT COUNT(*) FROM records c WHERE c.run_id = o.run_id) AS records,
              (SELECT kind FROM records l WHERE l.run_id = o.run_id ORDER BY l.seq DESC LIMIT 1) AS "lastKind"
       FROM records o
       WHERE o.kind = 'Observation' AND ((o.body::jsonb) ->> 'update') = 'tap/started' AND ((o.body::jsonb) ->> 'sessionId') = $1
       ORDER BY o.seq`;

export class PostgresJournalStore implements JournalStore {
  /** None: the journal's workers read SQLite files; a server database's jobs run on the calling thread. */
  readonly workerDatabasePath: undefined = undefined;
  private closed = false;
  private treeState: unknown = null;
  /** This instance's lease on the journal (postgres-lease.ts), once taken: every append is fenced by it. */
  private lease: PostgresInstanceLease | null = null;
  /** Why the lease was lost, once it was: every append from then on is refused with it. */
  private leaseLost: string | null = null;
  /** The URL itself, password and all: only ever handed to node-postgres, never shown. */
  readonly #url: string;

  private constructor(
    /** The database URL with its password masked: the only form of it anything shows. */
    readonly location: string,
    readonly journalId: string,
    private readonly pool: pg.Pool,
    url: string,
  ) {
    this.#url = url;
  }

  /**
   * Connects, checks durability, migrates (or refuses), and reads the journal's id. Everything
   * that can be wrong with the URL or the server is found here, before a record is written:
   * a malformed URL, an unreachable server, a refused login, a missing database, someone
   * else's schema, a newer journal, a migration the role cannot apply.
   */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresJournalStore> {
    const source = options.source ?? 'the database URL';
    checkDatabaseUrl(url, source);
    const where = maskDatabaseUrl(url);
    const limits = { ...DEFAULT_POSTGRES_LIMITS, ...options.limits };
    const pool = new pg.Pool({
      connectionString: url,
      max: limits.poolMax,
      connectionTimeoutMillis: limits.connectTimeoutMs,
      statement_timeout: limits.statementTimeoutMs,
      // Our schema first; durability on for every connection, whatever the server's default.
      options: `-c search_path=${SCHEMA} -c synchronous_commit=on`,
      application_name: 'agentplane',
      types,
    });
    // An idle connection the server drops must not take the process down; the next query
    // gets a fresh connection or a clear error of its own.
    pool.on('error', () => undefined);
    try {
      const client = await pool.connect();
      try {
        const sync = (await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')).rows[0]?.synchronous_commit;
        if (sync !== 'on') throw new JournalError('Io', `PostgreSQL at ${where} refused synchronous_commit=on (got ${String(sync)}): commits would not be durable when acknowledged`);
        await migratePostgres(client, where);
        const journalId = await ensureJournalId(client);
        const saved = (await client.query<{ value: string }>('SELECT value FROM journal_meta WHERE key = $1', [TREE_STATE_KEY])).rows[0]?.value;
        const store = new PostgresJournalStore(where, journalId, pool, url);
        store.treeState = metaValueOf(saved);
        return store;
      } finally {
        client.release();
      }
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw openError(error, where);
    }
  }

  async append(drafts: readonly PreparedDraft[], time: () => string): Promise<JournalRecord[]> {
    this.assertOpen();
    if (drafts.length === 0) return [];
    this.assertLeased();
    const client = await this.connect();
    let committing = false;
    try {
      // One round trip for three statements (the simple protocol runs them in order, each with
      // its own snapshot under READ COMMITTED): the head is read after the lock is held, so
      // another instance's appends are chained onto, never forked from. An instance holding a
      // lease adds a fourth: the lease still held, checked under the append lock
      // (postgres-lease.ts), so nothing is appended once another instance may have claimed it.
      const fence = this.lease ? `; ${this.lease.fenceSql}` : '';
      const results = (await client.query(BEGIN_LOCKED_HEAD + fence)) as unknown as Array<pg.QueryResult<JournalHead>>;
      if (this.lease && (results[3]?.rows[0] as { held?: boolean } | undefined)?.held !== true) {
        this.leaseLost ??= `this instance's lease on ${this.location} is no longer held`;
        throw new JournalError('Refused', `${this.leaseLost}: nothing was written (another instance may hold its runs now)`);
      }
      const head = results[2]?.rows[0] ?? { seq: 0, hash: GENESIS_PREV_HASH };
      let seq = head.seq;
      let prevHash = head.hash;
      const written: JournalRecord[] = [];
      const columns: [number[], Array<string | null>, string[], number[], string[], string[], string[], string[]] = [[], [], [], [], [], [], [], []];
      for (const draft of drafts) {
        seq += 1;
        const at = time();
        const hash = sha256Hex(recordPreimageFromBodyText({ seq, runId: draft.runId, kind: draft.kind, v: draft.v, time: at, prevHash }, draft.bodyText));
        const row = [seq, draft.runId, draft.kind, draft.v, at, draft.bodyText, prevHash, hash] as const;
        row.forEach((value, i) => (columns[i] as unknown[]).push(value));
        written.push({ seq, runId: draft.runId, kind: draft.kind, v: draft.v, time: at, prevHash, body: draft.body, hash });
        prevHash = hash;
      }
      await insertRows(client, columns);
      committing = true;
      await client.query('COMMIT');
      return written;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      if (error instanceof JournalError) throw error;
      const code = (error as { code?: string }).code ?? 'unknown';
      // A connection lost during COMMIT leaves its outcome unknown to us: the server may have
      // committed. The head read by the next append (and the Journal's catch-up) says which.
      const outcome = committing ? 'the commit was sent and its outcome is unknown' : 'nothing was written';
      throw new JournalError('Io', `journal append failed and ${outcome} (${code}: ${(error as Error).message})`);
    } finally {
      client.release();
    }
  }

  /**
   * Writes records exactly as another journal holds them (seq, time, hashes and all): what
   * `journal copy` moves a journal with. The chain triggers check each row against the one
   * before, so a copy that does not continue this journal's head is refused whole.
   */
  async importRecords(records: readonly StoredRecord[]): Promise<void> {
    this.assertOpen();
    if (records.length === 0) return;
    const client = await this.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK]);
      const columns: [number[], Array<string | null>, string[], number[], string[], string[], string[], string[]] = [[], [], [], [], [], [], [], []];
      for (const r of records) [r.seq, r.runId, r.kind, r.v, r.time, r.bodyText, r.prevHash, r.hash].forEach((value, i) => (columns[i] as unknown[]).push(value));
      await insertRows(client, columns);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw new JournalError('Io', `copying records ${records[0]!.seq}..${records[records.length - 1]!.seq} failed and none of them was written: ${(error as Error).message}`);
    } finally {
      client.release();
    }
  }

  /**
   * Takes another journal's id, for a copy into an empty database: the copied checkpoints name
   * that id, so the copy must carry it. Refused once the database holds a record.
   */
  async adoptJournalId(journalId: string): Promise<void> {
    this.assertOpen();
    const client = await this.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [APPEND_LOCK]);
      const count = (await client.query<{ n: number }>('SELECT COUNT(*) AS n FROM records')).rows[0]!.n;
      if (count > 0) throw new JournalError('Refused', `${this.location} already holds journal ${this.journalId} (${count} records)`);
      await client.query("UPDATE journal_meta SET value = $1 WHERE key = 'journal_id'", [journalId]);
      await client.query('COMMIT');
      (this as { journalId: string }).journalId = journalId;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  saveTreeState(state: MerkleAccumulatorState): void {
    this.assertOpen();
    // A cache (journal-store.ts): written in the background, its failure costs one full fold.
    this.treeState = state;
    this.pool
      .query('INSERT INTO journal_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [TREE_STATE_KEY, JSON.stringify(state)])
      .catch(() => undefined);
  }

  /**
   * Adds a checkpoint this instance signed to the shared table (migration 002), so an export
   * from any instance carries it. Publishing one already there changes nothing.
   */
  async publishCheckpoint(signed: PublishedCheckpoint): Promise<void> {
    await this.query('INSERT INTO checkpoints (key_id, tree_size, jws) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [signed.keyId, signed.treeSize, signed.jws]);
  }

  /** Every checkpoint any instance published, as compact JWS, by tree size then key id. */
  async readCheckpoints(): Promise<string[]> {
    return (await this.query<{ jws: string }>('SELECT jws FROM checkpoints ORDER BY tree_size, key_id')).map((r) => r.jws);
  }

  loadTreeState(): unknown {
    this.assertOpen();
    return this.treeState;
  }

  async head(): Promise<JournalHead> {
    return (await this.query<JournalHead>('SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1'))[0] ?? { seq: 0, hash: GENESIS_PREV_HASH };
  }

  async readRange(fromSeq: number, toSeq: number | null, limit: number): Promise<StoredRecord[]> {
    return (await this.query<RecordRow>('SELECT * FROM records WHERE seq >= $1 AND seq <= $2 ORDER BY seq LIMIT $3', [fromSeq, toSeq ?? Number.MAX_SAFE_INTEGER, limit])).map(storedFromRow);
  }

  async readRun(runId: string, fromSeq: number, limit: number): Promise<StoredRecord[]> {
    return (await this.query<RecordRow>('SELECT * FROM records WHERE run_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3', [runId, fromSeq, limit])).map(storedFromRow);
  }

  async readKinds(fromSeq: number, toSeq: number, kinds: readonly string[], limit: number): Promise<StoredRecord[]> {
    return (await this.query<RecordRow>('SELECT * FROM records WHERE seq >= $1 AND seq <= $2 AND kind = ANY($3::text[]) ORDER BY seq LIMIT $4', [fromSeq, toSeq, [...kinds], limit])).map(storedFromRow);
  }

  async readHashes(fromSeq: number, toSeq: number): Promise<string[]> {
    return (await this.query<{ hash: string }>('SELECT hash FROM records WHERE seq >= $1 AND seq <= $2 ORDER BY seq', [fromSeq, toSeq])).map((r) => r.hash);
  }

  iterate(fromSeq: number, toSeq: number | null): AsyncIterable<StoredRecord> {
    return pagedRecords((from, to, limit) => this.readRange(from, to, limit), fromSeq, toSeq);
  }

  async runs(limit: number): Promise<RunSummaryRow[]> {
    return this.query<RunSummaryRow>(
      `SELECT r.run_id AS "runId", r.first_seq AS "firstSeq", r.last_seq AS "lastSeq", r.n AS records, f.time AS "firstTime", l.time AS "lastTime",
              l.kind AS "lastKind", (f.body::jsonb) ->> 'agent' AS agent, f.kind AS "firstKind"
       FROM (SELECT run_id, MIN(seq) AS first_seq, MAX(seq) AS last_seq, COUNT(*) AS n
             FROM records WHERE run_id IS NOT NULL GROUP BY run_id ORDER BY last_seq DESC LIMIT $1) r
       JOIN records f ON f.seq = r.first_seq
       JOIN records l ON l.seq = r.last_seq
       ORDER BY r.last_seq DESC`,
      [limit],
    );
  }

  async observedRuns(limit: number): Promise<ObservedRunRow[]> {
    return this.query<ObservedRunRow>(
      `SELECT o.run_id AS "runId", (o.body::jsonb) ->> 'sessionId' AS "sessionId", o.seq AS "firstSeq",
              (SELECT MAX(seq) FROM records m WHERE m.run_id = o.run_id) AS "lastSeq",
              (SELECT COUNT(*) FROM records c WHERE c.run_id = o.run_id) AS records,
              (SELECT kind FROM records l WHERE l.run_id = o.run_id ORDER BY l.seq DESC LIMIT 1) AS "lastKind"
       FROM records o
       WHERE o.kind = 'Observation' AND ((o.body::jsonb) ->> 'update') = 'tap/started' AND ((o.body::jsonb) ->> 'source') = 'acp'
         AND o.seq = (SELECT MIN(seq) FROM records f WHERE f.run_id = o.run_id)
       ORDER BY "lastSeq" DESC LIMIT $1`,
      [limit],
    );
  }

  async sessionRuns(sessionId: string): Promise<ObservedRunRow[]> {
    return this.query<ObservedRunRow>(
      SESSION_RUNS_PG_SQL,
      [sessionId],
    );
  }

  async caseRecords(caseId: string | null, limit: number): Promise<StoredRecord[]> {
    const rows =
      caseId === null
        ? await this.query<RecordRow>(`SELECT * FROM records WHERE kind = 'CaseBound' AND ((body::jsonb) ->> 'caseId') IS NOT NULL ORDER BY seq DESC LIMIT $1`, [limit])
        : await this.query<RecordRow>(`SELECT * FROM records WHERE kind = 'CaseBound' AND ((body::jsonb) ->> 'caseId') = $1 ORDER BY seq DESC LIMIT $2`, [caseId, limit]);
    return rows.map(storedFromRow);
  }

  async runLastSeq(runId: string): Promise<number | null> {
    return (await this.query<{ last: number | null }>('SELECT MAX(seq) AS last FROM records WHERE run_id = $1', [runId]))[0]?.last ?? null;
  }

  async runSeqs(runId: string): Promise<number[]> {
    return (await this.query<{ seq: number }>('SELECT seq FROM records WHERE run_id = $1 ORDER BY seq', [runId])).map((r) => r.seq);
  }

  async runSeqAt(runId: string, position: number): Promise<number | null> {
    return (await this.query<{ seq: number }>('SELECT seq FROM records WHERE run_id = $1 ORDER BY seq LIMIT 1 OFFSET $2', [runId, position]))[0]?.seq ?? null;
  }

  async sealedRunResults(agent: string, inputPath: string, value: string, limit: number, host?: string): Promise<Array<{ runId: string; input: unknown; result: unknown }>> {
    if (!/^\$(\.[A-Za-z_][A-Za-z0-9_]*)+$/.test(inputPath)) throw new JournalError('Refused', `not a plain JSON path: ${inputPath}`);
    const path = ['input', ...inputPath.slice(2).split('.')];
    const rows = await this.query<{ runId: string; input: unknown; result: unknown }>(
      `SELECT a.run_id AS "runId", (a.body::jsonb) -> 'input' AS input, (s.body::jsonb) -> 'result' AS result
       FROM records a JOIN records s ON s.run_id = a.run_id AND s.kind = 'RunSealed'
       WHERE a.kind = 'RunAdmitted' AND ((a.body::jsonb) ->> 'agent') = $1 AND ((a.body::jsonb) #>> $2::text[]) = $3
         AND ((s.body::jsonb) ->> 'outcome') = 'succeeded'
         AND ($4::text IS NULL OR COALESCE((a.body::jsonb) ->> 'host', 'plane') = $4::text)
       ORDER BY a.seq DESC LIMIT $5`,
      [agent, path, value, host ?? null, limit],
    );
    return rows.reverse().map((r) => ({ runId: r.runId, input: r.input ?? null, result: r.result ?? null }));
  }

  async childRuns(parentRunId: string, limit: number): Promise<ChildRunRow[]> {
    return this.query<ChildRunRow>(
      `SELECT run_id AS "runId", seq, (body::jsonb) ->> 'agent' AS agent, COALESCE((body::jsonb) ->> 'host', 'plane') AS host,
              ((body::jsonb) -> 'parentStep') AS "parentStep"
       FROM records WHERE kind = 'RunAdmitted' AND ((body::jsonb) ->> 'parentRunId') = $1
       ORDER BY seq LIMIT $2`,
      [parentRunId, limit],
    );
  }

  async ownedRuns(query: OwnedRunsQuery, limit: number): Promise<OwnedRunRow[]> {
    const { sql, params } = ownedRunsSql(query);
    params.push(limit);
    return this.query<OwnedRunRow>(`${sql} SELECT "runId", seq, (SELECT MAX(r.seq) FROM records r WHERE r.run_id = owned."runId") AS "lastSeq" FROM owned ORDER BY seq DESC LIMIT $${params.length}`, params);
  }

  async countOwnedRuns(query: OwnedRunsQuery): Promise<number> {
    const { sql, params } = ownedRunsSql(query);
    return (await this.query<{ n: number }>(`${sql} SELECT COUNT(*) AS n FROM owned`, params))[0]!.n;
  }

  async firstSeqAtOrAfter(time: string): Promise<number> {
    // Records are appended in time order: a binary search over seq, never a scan.
    let low = 1;
    let high = (await this.head()).seq + 1;
    while (low < high) {
      const mid = Math.floor((low + high) / 2);
      const at = (await this.query<{ time: string }>('SELECT time FROM records WHERE seq = $1', [mid]))[0]!.time;
      if (at < time) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** 'ok' when the seqs are 1..head with none missing; otherwise what is wrong. */
  async integrityCheck(): Promise<string> {
    const row = (await this.query<{ n: number; top: number | null }>('SELECT COUNT(*) AS n, MAX(seq) AS top FROM records'))[0]!;
    return row.n === (row.top ?? 0) ? 'ok' : `records hold ${row.n} rows for seqs 1..${row.top ?? 0}`;
  }

  /**
   * Takes this instance's lease (postgres-lease.ts): from then on each append is fenced by it,
   * and once it is lost every append is refused and `hooks.onLost` told.
   */
  async holdInstanceLease(holder: InstanceHolder, hooks: InstanceLeaseHooks): Promise<InstanceLease> {
    this.assertOpen();
    if (this.lease) throw new JournalError('Refused', `this process already holds the lease of ${this.lease.host} on ${this.location}`);
    const lease = await PostgresInstanceLease.take(
      {
        url: this.#url,
        location: this.location,
        schema: SCHEMA,
        types,
        appendBarrier: () => this.appendBarrier(),
        openError: (error) => openError(error, this.location),
      },
      holder,
      {
        ...hooks,
        onLost: (reason) => {
          this.leaseLost ??= reason;
          hooks.onLost(reason);
        },
      },
    );
    if (this.closed) {
      await lease.end();
      throw new JournalError('Closed', 'the journal is closed');
    }
    this.lease = lease;
    return lease;
  }

  /** A leased instance signs periodic checkpoints only while it holds the signer's role; an unleased process (a CLI, a peer) always. */
  signsPeriodicCheckpoints(): boolean {
    return this.lease === null || this.lease.signer;
  }

  /** Waits until no append holds the append lock: every append begun before this call has ended. */
  private async appendBarrier(): Promise<void> {
    const client = await this.connect();
    try {
      await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${APPEND_LOCK}); COMMIT`);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw openError(error, this.location);
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // The lease goes last, after every write of this process (the shutdown checkpoint's head read).
    await this.pool.end();
    await this.lease?.end();
  }

  private async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw openError(error, this.location);
    }
  }

  private async query<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
    this.assertOpen();
    try {
      return (await this.pool.query<T>(text, params)).rows;
    } catch (error) {
      if (error instanceof JournalError) throw error;
      const code = (error as { code?: string }).code;
      if (code === undefined || /^(E[A-Z]+)$/.test(code)) throw openError(error, this.location);
      throw new JournalError('Io', `reading the journal at ${this.location} failed (${code}: ${(error as Error).message})`);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new JournalError('Closed', 'the journal is closed');
  }

  private assertLeased(): void {
    if (this.leaseLost !== null) throw new JournalError('Refused', `${this.leaseLost}: nothing was written (another instance may hold its runs now)`);
  }
}

/** One INSERT of many rows, a column array each: one round trip however many records a group commit holds. */
async function insertRows(client: pg.PoolClient, columns: readonly unknown[][]): Promise<void> {
  await client.query(
    `INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash)
     SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[])`,
    columns as unknown[][],
  );
}

async function ensureJournalId(client: pg.PoolClient): Promise<string> {
  await client.query("INSERT INTO journal_meta (key, value) VALUES ('journal_id', $1) ON CONFLICT (key) DO NOTHING", [randomBytes(16).toString('hex')]);
  return (await client.query<{ value: string }>("SELECT value FROM journal_meta WHERE key = 'journal_id'")).rows[0]!.value;
}

/** The `owned` CTE of one owner's matching admissions (as sqlite-store.ts's), with positional parameters. */
function ownedRunsSql(query: OwnedRunsQuery): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const p = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const where = ["a.kind = 'RunAdmitted'", `((a.body::jsonb) ->> 'owner') = ${p(query.owner)}`];
  if (query.agent !== undefined) where.push(`((a.body::jsonb) ->> 'agent') = ${p(query.agent)}`);
  if (query.host !== undefined) where.push(`COALESCE((a.body::jsonb) ->> 'host', 'plane') = ${p(query.host)}`);
  if (query.beforeSeq !== undefined) where.push(`a.seq < ${p(query.beforeSeq)}`);
  if (query.activeFromSeq !== undefined) {
    const from = p(query.activeFromSeq);
    where.push(`(a.seq >= ${from} OR EXISTS (SELECT 1 FROM records r WHERE r.run_id = a.run_id AND r.seq >= ${from}))`);
  }
  const base = `SELECT a.run_id AS "runId", a.seq AS seq FROM records a WHERE ${where.join(' AND ')}`;
  if (query.context === undefined) return { sql: `WITH owned AS (${base})`, params };
  const context = p(query.context);
  return {
    sql: `WITH owned AS (${base} AND a.seq = (SELECT MIN(f.seq) FROM records f WHERE f.run_id = ${context}) AND a.run_id = ${context} AND ((a.body::jsonb) ->> 'context') IS NULL
      UNION ALL ${base} AND ((a.body::jsonb) ->> 'context') = ${context})`,
    params,
  };
}
