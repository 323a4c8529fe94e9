/**
 * A PostgreSQL journal's address: the URL a person gives (`serve --database`,
 * AGENTPLANE_DATABASE_URL, `journal copy --to`), checked before anything connects, and the
 * same URL with its password masked, which is the only form that is ever shown: in logs,
 * errors, plane.json, the UI and the journal itself (docs/SECURITY.md).
 *
 * TLS settings in the URL (sslmode, sslrootcert, …) are node-postgres's own and honoured as
 * it reads them; the connection string is handed to it whole.
 */
import { JournalError } from './journal-error';

/** The environment variable that points a plane (serve, the desktop app, its peers) at PostgreSQL. */
export const DATABASE_URL_ENV = 'AGENTPLANE_DATABASE_URL';

/** Pool and statement bounds, from the environment or the caller; each refused when not a positive integer in range. */
export interface PostgresLimits {
  /** Connections this process opens at most (reads and appends share them). */
  poolMax: number;
  /** Milliseconds any one statement may run before PostgreSQL cancels it. */
  statementTimeoutMs: number;
  /** Milliseconds to wait for a connection before reporting the server unreachable. */
  connectTimeoutMs: number;
}

export const DEFAULT_POSTGRES_LIMITS: PostgresLimits = { poolMax: 8, statementTimeoutMs: 30_000, connectTimeoutMs: 10_000 };

const LIMIT_ENV: Record<keyof PostgresLimits, { name: string; min: number; max: number }> = {
  poolMax: { name: 'AGENTPLANE_DATABASE_POOL_MAX', min: 1, max: 100 },
  statementTimeoutMs: { name: 'AGENTPLANE_DATABASE_STATEMENT_TIMEOUT_MS', min: 100, max: 3_600_000 },
  connectTimeoutMs: { name: 'AGENTPLANE_DATABASE_CONNECT_TIMEOUT_MS', min: 100, max: 600_000 },
};

/** The limits the environment sets over the defaults; a malformed value is an error naming the variable. */
export function postgresLimitsFrom(env: NodeJS.ProcessEnv): PostgresLimits {
  const limits = { ...DEFAULT_POSTGRES_LIMITS };
  for (const [field, { name, min, max }] of Object.entries(LIMIT_ENV) as Array<[keyof PostgresLimits, (typeof LIMIT_ENV)[keyof PostgresLimits]]>) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || value < min || value > max) throw new JournalError('Refused', `${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(raw.slice(0, 40))}`);
    limits[field] = value;
  }
  return limits;
}

/**
 * The URL with any password replaced by `***` (and any `password` query parameter too). A
 * string that is not a URL at all is not echoed: it may be a password pasted in the wrong place.
 */
export function maskDatabaseUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(not a URL)';
  }
  if (parsed.password) parsed.password = '***';
  for (const key of [...parsed.searchParams.keys()]) if (/pass/i.test(key)) parsed.searchParams.set(key, '***');
  return parsed.toString();
}

/**
 * Checks that `url` is a PostgreSQL connection URL naming a host and a database, before any
 * connection is tried; the error names what is wrong and shows the URL masked.
 */
export function checkDatabaseUrl(url: string, source: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new JournalError('Refused', `${source} is not a URL (expected postgres://user:password@host:port/database)`);
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new JournalError('Refused', `${source} must be a postgres:// or postgresql:// URL, not ${parsed.protocol}// (${maskDatabaseUrl(url)})`);
  }
  if (!parsed.hostname && !parsed.searchParams.get('host')) throw new JournalError('Refused', `${source} names no host (${maskDatabaseUrl(url)})`);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database) throw new JournalError('Refused', `${source} names no database: add /<database> after the host (${maskDatabaseUrl(url)})`);
  if (parsed.port && !(Number(parsed.port) >= 1 && Number(parsed.port) <= 65535)) throw new JournalError('Refused', `${source} has an invalid port (${maskDatabaseUrl(url)})`);
}

/** Where a plane's journal is, when not the data dir's SQLite file: the URL and where it was given. */
export interface DatabaseChoice {
  url: string;
  /** `--database`, AGENTPLANE_DATABASE_URL: named in the URL's errors. */
  source: string;
}

/**
 * The PostgreSQL journal a command names: its `--database` flag, else AGENTPLANE_DATABASE_URL,
 * else none (the data dir's SQLite file, the default that needs nothing configured).
 */
export function chooseDatabase(flag: string | undefined, env: NodeJS.ProcessEnv): DatabaseChoice | undefined {
  if (flag !== undefined && flag !== '') return { url: flag, source: '--database' };
  const fromEnv = env[DATABASE_URL_ENV];
  return fromEnv ? { url: fromEnv, source: DATABASE_URL_ENV } : undefined;
}

/** Journal.open's options for a choice (none: SQLite). */
export function databaseOptions(choice: DatabaseChoice | undefined): { databaseUrl?: string; databaseUrlSource?: string } {
  return choice ? { databaseUrl: choice.url, databaseUrlSource: choice.source } : {};
}

/** Whether a journal location names a PostgreSQL database rather than a SQLite file. */
export function isDatabaseUrl(location: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(location);
}
