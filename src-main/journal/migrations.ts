/**
 * Ordered, named migrations for the journal database. Each runs once, in order, inside a
 * transaction, and is recorded in `schema_migrations`; a database that has a migration this
 * build does not know was written by a newer AgentPlane and is refused rather than guessed at.
 */
import type Database from 'better-sqlite3';

export interface Migration {
  id: string;
  up(db: Database.Database): void;
  /**
   * What to tell the person before `up` runs, when it will take long enough to be noticed (a
   * start that stalls for seconds without a word looks hung); null when it will not.
   */
  notice?(db: Database.Database): string | null;
}

/** A rebuild of the records table copies about 100,000 records a second on a small machine. */
const REBUILD_NOTICE_FROM_RECORDS = 100_000;

export const migrations: readonly Migration[] = [
  {
    id: '001_init',
    up(db) {
      db.exec(`
        CREATE TABLE journal_meta (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        ) STRICT;

        -- One row per record. seq is assigned by the writer inside BEGIN IMMEDIATE (the
        -- database's write lock), and the triggers below make the database itself refuse a
        -- gap, a fork or a rewrite, whatever a writer does: the chain cannot fork even with
        -- several processes appending to one data dir.
        CREATE TABLE records (
          seq       INTEGER PRIMARY KEY CHECK (seq >= 1),
          run_id    TEXT,
          kind      TEXT NOT NULL,
          v         INTEGER NOT NULL,
          time      TEXT NOT NULL,
          body      TEXT NOT NULL,
          prev_hash TEXT NOT NULL UNIQUE,
          hash      TEXT NOT NULL UNIQUE
        ) STRICT;

        CREATE INDEX records_by_run ON records (run_id, seq) WHERE run_id IS NOT NULL;

        CREATE TRIGGER records_append_only_update BEFORE UPDATE ON records
        BEGIN SELECT RAISE(ABORT, 'journal records are append-only'); END;

        CREATE TRIGGER records_append_only_delete BEFORE DELETE ON records
        BEGIN SELECT RAISE(ABORT, 'journal records are append-only'); END;

        CREATE TRIGGER records_chain BEFORE INSERT ON records
        BEGIN
          SELECT RAISE(ABORT, 'journal seq must follow the head with no gap')
          WHERE NEW.seq != (SELECT COALESCE(MAX(seq), 0) + 1 FROM records);
          SELECT RAISE(ABORT, 'journal prev_hash must be the previous record''s hash')
          WHERE NEW.prev_hash != COALESCE((SELECT hash FROM records WHERE seq = NEW.seq - 1), '${'0'.repeat(64)}');
        END;
      `);
    },
  },
  {
    // Which runs a run called (a plane run's peer call and the skill run it admitted on the
    // peer): one indexed read for the run page's links, not a scan of every admission.
    id: '002_runs_by_parent',
    up(db) {
      db.exec(`
        CREATE INDEX records_by_parent_run ON records (json_extract(body, '$.parentRunId'), seq)
        WHERE kind = 'RunAdmitted' AND json_extract(body, '$.parentRunId') IS NOT NULL;
      `);
    },
  },
  {
    // The observed ACP sessions (each begins with the tap's tap/started): the Editor sessions
    // list and the inbox read them without a scan of every record.
    id: '003_acp_sessions',
    up(db) {
      db.exec(`
        CREATE INDEX records_acp_sessions ON records (seq)
        WHERE kind = 'Observation' AND json_extract(body, '$.update') = 'tap/started';
      `);
    },
  },
  {
    // The runs each principal admitted (RunAdmitted's owner), newest first by seq, and the runs
    // that continue a context: a caller's listing (A2A ListTasks) reads its own entries only, so
    // another caller's runs and the embedder's cost it nothing — neither a read nor a charge
    // against its scan budget. Written in the same transaction as the admission, like every index.
    id: '004_runs_by_owner',
    up(db) {
      db.exec(`
        CREATE INDEX records_runs_by_owner ON records (json_extract(body, '$.owner'), seq)
        WHERE kind = 'RunAdmitted';
        CREATE INDEX records_runs_by_context ON records (json_extract(body, '$.context'), seq)
        WHERE kind = 'RunAdmitted' AND json_extract(body, '$.context') IS NOT NULL;
      `);
    },
  },
  {
    // The records table without 001's UNIQUE on prev_hash and hash. Each was a B-tree keyed by
    // a random 64-character hex string, so every append landed on a random leaf of each and a
    // commit of four records dirtied and wrote some eight more pages than it needed (measured on
    // this schema: a four-record commit cost 3 to 5 times the same commit without them, and grew
    // with the table, about 26 s per 100,000 records by the millionth). They guarded nothing
    // the rest of the schema does not: seq is the primary key, so two records can never share a
    // place in the chain, and the records_chain trigger refuses any insert whose seq is not the
    // head's plus one or whose prev_hash is not the head's hash, so a fork or a re-link cannot
    // be written; a rewrite is refused by the append-only triggers. No read looks a record up
    // by its hash. SQLite cannot drop a column's constraint in place, so the table is rebuilt:
    // copied in seq order, the old one dropped (a DROP fires no DELETE trigger), the copy
    // renamed, and every index and trigger the old table had re-created from its own stored
    // definition, exactly as it was. One transaction: a crash leaves the old table whole.
    id: '005_records_without_hash_indexes',
    notice(db) {
      // Measured: 1.3 s at 200,000 records, 10.2 s at 1,000,000.
      const { records } = db.prepare('SELECT count(*) AS records FROM records').get() as { records: number };
      if (records < REBUILD_NOTICE_FROM_RECORDS) return null;
      const seconds = Math.max(1, Math.round(records / 100_000));
      return `upgrading the journal's records table (${records.toLocaleString('en-US')} records, about ${seconds} s); this happens once, and nothing is lost if it is interrupted`;
    },
    up(db) {
      const kept = (db.prepare("SELECT sql FROM sqlite_master WHERE tbl_name = 'records' AND type IN ('index', 'trigger') AND sql IS NOT NULL ORDER BY type, name").all() as Array<{ sql: string }>).map((r) => r.sql);
      db.exec(`
        CREATE TABLE records_rebuilt (
          seq       INTEGER PRIMARY KEY CHECK (seq >= 1),
          run_id    TEXT,
          kind      TEXT NOT NULL,
          v         INTEGER NOT NULL,
          time      TEXT NOT NULL,
          body      TEXT NOT NULL,
          prev_hash TEXT NOT NULL,
          hash      TEXT NOT NULL
        ) STRICT;
        INSERT INTO records_rebuilt (seq, run_id, kind, v, time, body, prev_hash, hash)
          SELECT seq, run_id, kind, v, time, body, prev_hash, hash FROM records ORDER BY seq;
        DROP TABLE records;
        ALTER TABLE records_rebuilt RENAME TO records;
      `);
      for (const sql of kept) db.exec(sql);
    },
  },
  {
    // An observed ACP session found by its session id (binding it to a case), and the bindings
    // of a case: each one indexed read, both partial indexes over the few records they cover.
    id: '006_sessions_and_cases',
    up(db) {
      db.exec(`
        CREATE INDEX records_acp_session_ids ON records (json_extract(body, '$.sessionId'), seq)
        WHERE kind = 'Observation' AND json_extract(body, '$.update') = 'tap/started';
        CREATE INDEX records_case_bound ON records (json_extract(body, '$.caseId'), seq)
        WHERE kind = 'CaseBound';
      `);
    },
  },
];

export function appliedMigrations(db: Database.Database): string[] {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!exists) return [];
  return (db.prepare('SELECT id FROM schema_migrations ORDER BY rowid').all() as Array<{ id: string }>).map((r) => r.id);
}

/**
 * Applies what is missing; returns the ids applied now. Throws naming a migration it does not
 * know. `onNotice` hears a migration's notice (a slow one says so) before it runs.
 */
export function migrate(db: Database.Database, list: readonly Migration[] = migrations, onNotice?: (message: string) => void): string[] {
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (id TEXT PRIMARY KEY, applied_at TEXT NOT NULL) STRICT');
  const applied = appliedMigrations(db);
  const known = new Set(list.map((m) => m.id));
  const unknown = applied.filter((id) => !known.has(id));
  if (unknown.length > 0) {
    throw new Error(`the journal was written by a newer AgentPlane (migration ${unknown.join(', ')} is unknown to this build)`);
  }
  const done: string[] = [];
  for (const migration of list) {
    if (applied.includes(migration.id)) continue;
    // Re-checked under the write lock: another process opening the same new data dir may have
    // applied it between our read and our lock.
    const ran = db
      .transaction(() => {
        if (db.prepare('SELECT 1 FROM schema_migrations WHERE id = ?').get(migration.id)) return false;
        const notice = onNotice ? migration.notice?.(db) : null;
        if (notice) onNotice?.(notice);
        migration.up(db);
        db.prepare('INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)').run(migration.id, new Date().toISOString());
        return true;
      })
      .immediate();
    if (ran) done.push(migration.id);
  }
  return done;
}
