/**
 * The PostgreSQL journal's schema, as ordered, named migrations in the schema `agentplane`:
 * each runs once, in order, in one transaction under an advisory lock (so instances starting
 * together do not race each other), and is recorded in `agentplane.schema_migrations`. A
 * database holding a migration this build does not know was written by a newer AgentPlane and
 * is refused, as the SQLite store refuses one (migrations.ts).
 *
 * The database itself keeps the journal's rules, whatever a writer does: seq is the primary
 * key, a row must follow the head with no gap and link to the previous row's hash (a BEFORE
 * INSERT trigger, which sees the rows inserted before it in the same statement), and UPDATE,
 * DELETE and TRUNCATE are refused by triggers (on the shared checkpoints of migration 002 too). The role a plane should run as is granted
 * SELECT and INSERT on records only (README, "A team plane on PostgreSQL"), so a rewrite would
 * need both a trigger dropped and a grant the plane never holds.
 */
import type { PoolClient } from 'pg';
import { GENESIS_PREV_HASH } from '../../src-shared/journal/records';
import { JournalError } from './journal-error';

export const SCHEMA = 'agentplane';

export interface PostgresMigration {
  id: string;
  sql: string;
}

export const postgresMigrations: readonly PostgresMigration[] = [
  {
    id: '001_init',
    sql: `
      CREATE TABLE ${SCHEMA}.journal_meta (
        key   text PRIMARY KEY,
        value text NOT NULL
      );

      -- One row per record; body is the record's canonical JSON text exactly as it was hashed,
      -- so export and offline verification read back the bytes the hash covers.
      CREATE TABLE ${SCHEMA}.records (
        seq       bigint PRIMARY KEY CHECK (seq >= 1),
        run_id    text,
        kind      text NOT NULL,
        v         integer NOT NULL,
        time      text NOT NULL,
        body      text NOT NULL,
        prev_hash text NOT NULL UNIQUE,
        hash      text NOT NULL UNIQUE
      );

      CREATE INDEX records_by_run ON ${SCHEMA}.records (run_id, seq) WHERE run_id IS NOT NULL;
      CREATE INDEX records_by_kind ON ${SCHEMA}.records (kind, seq);
      -- The reads of the layers above (JournalStore), each through its own index rather than a
      -- scan: one owner's admissions, one context's, one parent's children, observed sessions.
      CREATE INDEX records_admitted_by_owner ON ${SCHEMA}.records (((body::jsonb) ->> 'owner'), seq) WHERE kind = 'RunAdmitted';
      CREATE INDEX records_admitted_by_context ON ${SCHEMA}.records (((body::jsonb) ->> 'context'), seq) WHERE kind = 'RunAdmitted';
      CREATE INDEX records_admitted_by_parent ON ${SCHEMA}.records (((body::jsonb) ->> 'parentRunId'), seq) WHERE kind = 'RunAdmitted';
      CREATE INDEX records_admitted_by_agent ON ${SCHEMA}.records (((body::jsonb) ->> 'agent'), seq) WHERE kind = 'RunAdmitted';
      CREATE INDEX records_tap_started ON ${SCHEMA}.records (seq) WHERE kind = 'Observation' AND ((body::jsonb) ->> 'update') = 'tap/started';

      CREATE FUNCTION ${SCHEMA}.refuse_rewrite() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION 'journal records are append-only (% refused)', TG_OP USING ERRCODE = 'P0001';
      END $$;

      CREATE TRIGGER records_append_only BEFORE UPDATE OR DELETE ON ${SCHEMA}.records
        FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.refuse_rewrite();
      CREATE TRIGGER records_no_truncate BEFORE TRUNCATE ON ${SCHEMA}.records
        FOR EACH STATEMENT EXECUTE FUNCTION ${SCHEMA}.refuse_rewrite();

      CREATE FUNCTION ${SCHEMA}.check_chain() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        previous text;
      BEGIN
        IF NEW.seq = 1 THEN
          previous := '${GENESIS_PREV_HASH}';
        ELSE
          SELECT hash INTO previous FROM ${SCHEMA}.records WHERE seq = NEW.seq - 1;
          IF previous IS NULL THEN
            RAISE EXCEPTION 'journal seq % must follow the head with no gap', NEW.seq USING ERRCODE = 'P0001';
          END IF;
        END IF;
        IF NEW.prev_hash <> previous THEN
          RAISE EXCEPTION 'journal prev_hash of seq % must be the previous record''s hash', NEW.seq USING ERRCODE = 'P0001';
        END IF;
        RETURN NEW;
      END $$;

      CREATE TRIGGER records_chain BEFORE INSERT ON ${SCHEMA}.records
        FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.check_chain();
    `,
  },
  {
    // The checkpoints every instance of a team plane signs over this journal, each with its own
    // key, shared so that an export from any instance carries the keyring's signatures
    // (docs/SECURITY.md, "The keyring of a team plane"). Insert-only like the records: a
    // signature, once published, is never rewritten or withdrawn. An insert of a row already
    // there is idempotent (publishCheckpoint inserts with ON CONFLICT DO NOTHING).
    id: '002_checkpoints',
    sql: `
      CREATE TABLE ${SCHEMA}.checkpoints (
        key_id     text NOT NULL,
        tree_size  bigint NOT NULL CHECK (tree_size >= 0),
        jws        text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (key_id, tree_size)
      );

      CREATE TRIGGER checkpoints_append_only BEFORE UPDATE OR DELETE ON ${SCHEMA}.checkpoints
        FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.refuse_rewrite();
      CREATE TRIGGER checkpoints_no_truncate BEFORE TRUNCATE ON ${SCHEMA}.checkpoints
        FOR EACH STATEMENT EXECUTE FUNCTION ${SCHEMA}.refuse_rewrite();
    `,
  },
  {
    // An observed ACP session found by its session id (binding it to a case), and the bindings
    // of a case: each one indexed read (the SQLite store's 006_sessions_and_cases).
    id: '003_sessions_and_cases',
    sql: `
      CREATE INDEX records_tap_started_by_session ON ${SCHEMA}.records (((body::jsonb) ->> 'sessionId'), seq)
        WHERE kind = 'Observation' AND ((body::jsonb) ->> 'update') = 'tap/started';
      CREATE INDEX records_case_bound ON ${SCHEMA}.records (((body::jsonb) ->> 'caseId'), seq) WHERE kind = 'CaseBound';
    `,
  },
];

/** The key of the advisory lock migrations run under (any constant; one per database). */
const MIGRATION_LOCK = 0x4147_5031; // "AGP1"

/**
 * Brings the schema up to this build's migrations, or refuses: a schema `agentplane` that is not
 * ours (tables, no migration log) is someone else's and is not migrated into; a migration this
 * build does not know means a newer AgentPlane wrote the database. A migration the role may not
 * apply fails naming it, with nothing applied.
 */
export async function migratePostgres(client: PoolClient, where: string): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    const tables = (await client.query<{ name: string }>('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1', [SCHEMA])).rows.map((r) => r.name);
    if (tables.length > 0 && !tables.includes('schema_migrations')) {
      throw new JournalError('NotAJournal', `${where} has a schema "${SCHEMA}" that is not an AgentPlane journal (its tables: ${tables.slice(0, 8).join(', ')})`);
    }
    // DDL only when something is missing: a role granted reads and inserts alone (README) opens
    // a journal whose schema is complete without any right to change it.
    const schemaExists = (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [SCHEMA])).rowCount === 1;
    if (!schemaExists) await client.query(`CREATE SCHEMA ${SCHEMA}`);
    if (!tables.includes('schema_migrations')) await client.query(`CREATE TABLE ${SCHEMA}.schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
    const applied = new Set((await client.query<{ id: string }>(`SELECT id FROM ${SCHEMA}.schema_migrations`)).rows.map((r) => r.id));
    const known = new Set(postgresMigrations.map((m) => m.id));
    const unknown = [...applied].filter((id) => !known.has(id)).sort();
    if (unknown.length > 0) {
      throw new JournalError('NewerJournal', `${where} was written by a newer AgentPlane (migration ${unknown.join(', ')} is not known to this build); upgrade AgentPlane to open it`);
    }
    for (const migration of postgresMigrations) {
      if (applied.has(migration.id)) continue;
      try {
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${SCHEMA}.schema_migrations (id) VALUES ($1)`, [migration.id]);
      } catch (error) {
        const code = (error as { code?: string }).code;
        const reason = code === '42501' ? 'the role is not allowed to change the schema; apply it once as the database owner' : (error as Error).message;
        throw new JournalError('Io', `${where}: migration ${migration.id} could not be applied, and nothing was: ${reason}`);
      }
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
