/**
 * PostgreSQL for one test file: a fresh database in the run's test cluster (postgres-setup.ts),
 * so each file's journal starts empty and files running side by side never meet.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/** The cluster's superuser URL, or null when this run has no PostgreSQL (see postgresMissing). */
export function postgresUrl(): string | null {
  return inject('postgresUrl');
}

/** Why this run has no PostgreSQL, for a skipped test's name; null when it has one. */
export function postgresMissing(): string | null {
  return inject('postgresMissing');
}

/** A new, empty database in the test cluster, as a URL with the cluster's credentials. */
export async function freshDatabase(prefix = 'journal'): Promise<string> {
  const admin = postgresUrl();
  if (!admin) throw new Error(postgresMissing() ?? 'no PostgreSQL for this run');
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs SQL on a database as the cluster's superuser (for tests that tamper with it). */
export async function sql(url: string, text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}
