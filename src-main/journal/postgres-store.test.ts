/**
 * What is particular to the PostgreSQL store (postgres-store.ts): everything wrong with a URL or
 * a server is found at open, before anything is written, and said with the password masked;
 * durability is asserted; a role granted what the README documents can append and read and
 * cannot rewrite; writers in several processes share one chain. The contract both stores keep
 * is store-contract.test.ts.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { GENESIS_PREV_HASH } from '../../src-shared/journal/records';
import { Journal } from './journal';
import { JournalError } from './journal-error';
import { verifyJournalStore } from './journal-workers';
import { PostgresJournalStore } from './postgres-store';
import { checkDatabaseUrl, chooseDatabase, maskDatabaseUrl, postgresLimitsFrom } from './postgres-url';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { freshDatabase, postgresMissing, postgresUrl, sql } from '../../tests/support/postgres-support';

const CHILD = join(import.meta.dirname, '..', '..', 'tests', 'helpers', 'journal-append-child.ts');

const stores: PostgresJournalStore[] = [];
const journals: Journal[] = [];
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close().catch(() => undefined);
  for (const s of stores.splice(0)) await s.close().catch(() => undefined);
});

async function openError(url: string): Promise<JournalError> {
  try {
    stores.push(await PostgresJournalStore.open(url, { source: '--database', limits: { connectTimeoutMs: 3000 } }));
  } catch (error) {
    if (error instanceof JournalError) return error;
    throw error;
  }
  throw new Error('the store opened');
}

describe('a database URL, before anything connects', () => {
  it('is masked wherever it is shown: the password and any password parameter', () => {
    expect(maskDatabaseUrl('postgres://ann:s3cret-pw@db.example:5432/plane?sslmode=require')).toBe('postgres://ann:***@db.example:5432/plane?sslmode=require');
    expect(maskDatabaseUrl('postgresql://ann@db/plane?password=s3cret-pw')).not.toContain('s3cret-pw');
    expect(maskDatabaseUrl('s3cret-pw')).toBe('(not a URL)');
  });

  it('is refused with an error naming what is wrong, and never echoing the password', () => {
    const refusal = (url: string) => {
      try {
        checkDatabaseUrl(url, 'AGENTPLANE_DATABASE_URL');
      } catch (error) {
        return (error as Error).message;
      }
      return 'accepted';
    };
    expect(refusal('not a url s3cret-pw')).toMatch(/AGENTPLANE_DATABASE_URL is not a URL/);
    expect(refusal('not a url s3cret-pw')).not.toContain('s3cret-pw');
    expect(refusal('mysql://ann:s3cret-pw@db/plane')).toMatch(/must be a postgres:\/\/ or postgresql:\/\/ URL, not mysql:/);
    expect(refusal('mysql://ann:s3cret-pw@db/plane')).not.toContain('s3cret-pw');
    expect(refusal('postgres://ann:s3cret-pw@db')).toMatch(/names no database/);
    expect(refusal('postgres://ann:s3cret-pw@db:5432/plane')).toBe('accepted');
  });

  it('is chosen by the flag, else the environment, else none (SQLite)', () => {
    const env = { AGENTPLANE_DATABASE_URL: 'postgres://ann:pw@db/env' };
    expect(chooseDatabase('postgres://ann:pw@db/flag', env)).toEqual({ url: 'postgres://ann:pw@db/flag', source: '--database' });
    expect(chooseDatabase(undefined, env)).toEqual({ url: 'postgres://ann:pw@db/env', source: 'AGENTPLANE_DATABASE_URL' });
    expect(chooseDatabase(undefined, {})).toBeUndefined();
    expect(chooseDatabase('', { AGENTPLANE_DATABASE_URL: '' })).toBeUndefined();
  });

  it('takes pool and timeout bounds from the environment, refusing a malformed one by name', () => {
    expect(postgresLimitsFrom({ AGENTPLANE_DATABASE_POOL_MAX: '3' })).toMatchObject({ poolMax: 3, statementTimeoutMs: 30_000 });
    expect(() => postgresLimitsFrom({ AGENTPLANE_DATABASE_POOL_MAX: '0' })).toThrow(/AGENTPLANE_DATABASE_POOL_MAX must be a whole number from 1 to 100/);
    expect(() => postgresLimitsFrom({ AGENTPLANE_DATABASE_STATEMENT_TIMEOUT_MS: '5s' })).toThrow(/AGENTPLANE_DATABASE_STATEMENT_TIMEOUT_MS/);
  });

  it('an unreachable server is named (masked) at open', async () => {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const p = (server.address() as { port: number }).port;
        server.close(() => resolve(p));
      });
    });
    const error = await openError(`postgres://ann:s3cret-pw@127.0.0.1:${port}/plane`);
    expect(error.message).toMatch(new RegExp(`cannot reach PostgreSQL at postgres://ann:\\*\\*\\*@127\\.0\\.0\\.1:${port}/plane \\(ECONNREFUSED\\)`));
    expect(error.message).not.toContain('s3cret-pw');
  });
});

describe.skipIf(!postgresUrl())(`the PostgreSQL store on a real server${postgresUrl() ? '' : ` (skipped: ${postgresMissing()})`}`, () => {
  it('a wrong password, a missing database: errors that name them, the password masked', async () => {
    const url = new URL(postgresUrl()!);
    url.password = 'wrong-s3cret';
    const login = await openError(url.toString());
    expect(login.message).toMatch(/refused the login: password authentication failed for user "postgres"/);
    expect(login.message).not.toContain('wrong-s3cret');
    const missing = new URL(postgresUrl()!);
    missing.pathname = '/no_such_database';
    const absent = await openError(missing.toString());
    expect(absent.message).toMatch(/database "no_such_database" does not exist \(create it first: createdb\)/);
    expect(absent.message).not.toContain(new URL(postgresUrl()!).password);
  });

  it("refuses a schema that is someone else's, and one a newer AgentPlane migrated, writing nothing", async () => {
    const foreign = await freshDatabase('foreign');
    await sql(foreign, 'CREATE SCHEMA agentplane; CREATE TABLE agentplane.orders (id int)');
    expect((await openError(foreign)).message).toMatch(/has a schema "agentplane" that is not an AgentPlane journal \(its tables: orders\)/);
    expect((await sql(foreign, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'agentplane'")).rows).toEqual([{ table_name: 'orders' }]);

    const newer = await freshDatabase('newer');
    await (await PostgresJournalStore.open(newer)).close();
    await sql(newer, "INSERT INTO agentplane.schema_migrations (id) VALUES ('999_from_the_future')");
    const refused = await openError(newer);
    expect(refused.code).toBe('NewerJournal');
    expect(refused.message).toMatch(/written by a newer AgentPlane \(migration 999_from_the_future is not known to this build\)/);
  });

  it('commits are synchronous (durable when acknowledged), and the location shows the URL masked', async () => {
    const url = await freshDatabase();
    const store = await PostgresJournalStore.open(url);
    stores.push(store);
    expect(store.location).toContain(':***@');
    expect(store.location).not.toContain(new URL(url).password);
    expect(store.workerDatabasePath).toBeUndefined();
  });

  it('a role granted SELECT and INSERT only (as the README documents) appends and reads, and can rewrite nothing', async () => {
    const url = await freshDatabase('roles');
    const role = `plane_writer_${randomBytes(4).toString('hex')}`;
    await (await PostgresJournalStore.open(url)).close();
    await sql(
      url,
      `CREATE ROLE ${role} LOGIN PASSWORD 'writer-pw';
       GRANT USAGE ON SCHEMA agentplane TO ${role};
       GRANT SELECT, INSERT ON agentplane.records TO ${role};
       GRANT SELECT, INSERT, UPDATE ON agentplane.journal_meta TO ${role};
       GRANT SELECT ON agentplane.schema_migrations TO ${role};
       GRANT SELECT, INSERT ON agentplane.checkpoints TO ${role};`,
    );
    const asWriter = new URL(url);
    asWriter.username = role;
    asWriter.password = 'writer-pw';
    const journal = await Journal.open({ dataDir: tempDataDir(), databaseUrl: asWriter.toString() });
    journals.push(journal);
    await journal.appendBatch(runDrafts('run-a', 1));
    // Its key's admission (keyring.ts), then the run's four records.
    expect((await journal.head()).seq).toBe(5);
    await expect(sql(asWriter.toString(), "UPDATE agentplane.records SET body = '{}'")).rejects.toThrow(/permission denied/);
    await expect(sql(asWriter.toString(), 'DELETE FROM agentplane.records')).rejects.toThrow(/permission denied/);
    // Roles are the cluster's, not the database's: this one goes, so a cluster someone keeps
    // (AGENTPLANE_TEST_DATABASE_URL) is left as it was found.
    await journal.close();
    journals.splice(journals.indexOf(journal), 1);
    await sql(url, `DROP OWNED BY ${role}; DROP ROLE ${role};`);
  });

  it('three processes appending at once, each with its own data dir and key: one chain, no gap, no fork', async () => {
    const url = await freshDatabase('writers');
    // The schema exists before they start: migrations serialise anyway, this keeps the test on appends.
    await (await PostgresJournalStore.open(url)).close();
    const dataDirs = [0, 1, 2].map(() => tempDataDir('ap-pg-writer-'));
    const exits = await Promise.all(
      dataDirs.map(
        (dataDir, i) =>
          new Promise<{ code: number | null; stderr: string }>((resolve) => {
            const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'append', '--data-dir', dataDir, '--database', url, '--run-prefix', `writer${i}`, '--seed', String(i + 1), '--limit', '150', '--checkpoint-every', '40', ...(i === 1 ? [] : ['--yield'])], {
              stdio: ['ignore', 'ignore', 'pipe'],
            });
            let stderr = '';
            child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
            child.on('exit', (code) => resolve({ code, stderr }));
          }),
      ),
    );
    exits.forEach((exit, i) => expect(exit, `writer ${i}: ${exit.stderr}`).toMatchObject({ code: 0 }));
    const stats = (await sql(url, 'SELECT COUNT(*)::int AS n, COUNT(DISTINCT prev_hash)::int AS prevs, MIN(seq)::int AS lo, MAX(seq)::int AS hi FROM agentplane.records')).rows[0];
    // 150 records each, and each writer's key admitted once (a KeyAdmitted apiece).
    expect(stats).toEqual({ n: 453, prevs: 453, lo: 1, hi: 453 });
    const journal = await Journal.open({ dataDir: dataDirs[0]!, databaseUrl: url });
    journals.push(journal);
    const rows = await journal.readRange(1, null, 1000);
    rows.forEach((row, i) => expect(row.prevHash).toBe(i === 0 ? GENESIS_PREV_HASH : rows[i - 1]!.hash));
    // The writers' checkpoints, each under its own admitted key, vouch for the whole shared chain.
    const report = await verifyJournalStore(journal);
    expect(report).toMatchObject({ ok: true, count: 453 });
    expect(report.ok && report.keys?.length).toBe(3);
  }, 60_000);
});
