/**
 * Instance leases on a shared PostgreSQL journal (InstanceLease, journal-store.ts): what makes
 * several plane instances one team plane without any of them performing an effect of a run
 * another holds (docs/TEAM-PLANE.md).
 *
 * An instance's lease is a session advisory lock, keyed by its runtime host, on a connection
 * of its own. The heartbeat is that session: PostgreSQL releases the lock when the session
 * ends, whether the holder closed, was killed (its socket closes, the lock goes at once) or
 * went silent (the server's TCP keepalives below give up on it within 25 s). Nothing of ours
 * has to expire a timestamp, so no clock of any machine decides who holds a run.
 *
 * While held, the lease fences this instance's appends: each append checks, inside its own
 * transaction and under the journal's append lock, that the lease's session still holds the
 * lock (fenceSql). Another instance claims a dead one's lease (tryClaim) and then waits for
 * the append lock once, so an append the dead instance began while it still held its lease
 * has committed or rolled back before the claimer reads what it left; every later append of
 * the dead instance is refused by the fence. What the claimer then reads is all of it.
 *
 * Who an instance is (its InstanceHolder) is kept in journal_meta under `instance:<host>`,
 * for the people (status, `agentplane status`) and for the instance that takes its runs over.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { metaValueOf, type InstanceHolder, type InstanceLease, type InstanceLeaseHooks } from './journal-store';
import { JournalError } from './journal-error';

/** The advisory-lock class of instance leases ("AGPL"); the second key is the host's (leaseKeyOf). */
export const LEASE_CLASS = 0x4147_504c;
const INSTANCE_KEY_PREFIX = 'instance:';
/** The lock name of the checkpoint signer's role (journal-store.ts signsPeriodicCheckpoints); no host is named so. */
const SIGNER_ROLE = 'role:checkpoint-signer';
/**
 * TCP keepalives on the lease's session, set on the server's side: a holder whose machine
 * sleeps or drops off the network is found dead within idle + interval * count seconds (25 s),
 * and its lock released; a holder killed outright closes its socket and loses it at once.
 */
const LEASE_KEEPALIVE = '-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3';

/** The lease's lock key for a host: a 32-bit digest of it (two-key advisory locks take int4s). */
export function leaseKeyOf(host: string): number {
  return createHash('sha256').update(host, 'utf8').digest().readInt32BE(0);
}

/**
 * A statement (no parameters: it rides in the append's one simple query) answering `held`:
 * whether the session `pid` still holds the lease of `host`. pg_locks shows a two-key advisory
 * lock with the keys in classid and objid (as unsigned oids) and objsubid 2.
 */
function fenceSql(pid: number, host: string): string {
  if (!Number.isSafeInteger(pid)) throw new JournalError('Io', `the lease's session reported no process id (${String(pid)})`);
  return `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND pid = ${pid} AND classid = ${LEASE_CLASS} AND objid = ${leaseKeyOf(host) >>> 0} AND objsubid = 2) AS held`;
}

export interface LeaseConnection {
  url: string;
  /** The database URL with its password masked. */
  location: string;
  /** The schema journal_meta lives in. */
  schema: string;
  /** node-postgres type parsers the store uses (bigint as number). */
  types: pg.CustomTypesConfig;
  /** Waits until no append holds the journal's append lock (PostgresJournalStore.appendBarrier). */
  appendBarrier(): Promise<void>;
  /** What a failed connection means to the person (the store's openError). */
  openError(error: unknown): JournalError;
}

export class PostgresInstanceLease implements InstanceLease {
  /** Leases of dead instances this one has claimed and not yet released. */
  private readonly claimed = new Set<string>();
  private ended = false;
  /** Whether this instance holds the checkpoint signer's role (see trySigner). */
  signer = false;

  private constructor(
    readonly host: string,
    private readonly client: pg.Client,
    private readonly connection: LeaseConnection,
    /** The fence every append of this instance runs (see the file's comment). */
    readonly fenceSql: string,
  ) {}

  /** Takes `holder.host`'s lease, waiting (and saying so) while it is held; see the file's comment. */
  static async take(connection: LeaseConnection, holder: InstanceHolder, hooks: InstanceLeaseHooks): Promise<PostgresInstanceLease> {
    const client = new pg.Client({
      connectionString: connection.url,
      options: `-c search_path=${connection.schema} -c statement_timeout=0 ${LEASE_KEEPALIVE}`,
      keepAlive: true,
      application_name: 'agentplane-lease',
      types: connection.types,
    });
    let lease: PostgresInstanceLease | null = null;
    client.on('error', () => undefined);
    client.on('end', () => {
      if (lease && !lease.ended) hooks.onLost(`the session holding this instance's lease on ${connection.location} ended`);
    });
    const abort = () => void client.end().catch(() => undefined);
    hooks.signal?.addEventListener('abort', abort, { once: true });
    const key = leaseKeyOf(holder.host);
    try {
      await client.connect();
      const free = (await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [LEASE_CLASS, key])).rows[0]!.got;
      if (!free) {
        const current = (await client.query<{ value: string }>('SELECT value FROM journal_meta WHERE key = $1', [INSTANCE_KEY_PREFIX + holder.host])).rows[0]?.value;
        hooks.onWaiting(parseHolder(current));
        await client.query('SELECT pg_advisory_lock($1, $2)', [LEASE_CLASS, key]);
      }
      await writeHolder(client, holder);
      const pid = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      lease = new PostgresInstanceLease(holder.host, client, connection, fenceSql(pid, holder.host));
      await lease.trySigner();
      return lease;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (hooks.signal?.aborted) throw new JournalError('Closed', `stopped while waiting for this instance's lease on ${connection.location}`);
      throw connection.openError(error);
    } finally {
      hooks.signal?.removeEventListener('abort', abort);
    }
  }

  /**
   * Takes the checkpoint signer's role if nobody holds it: a session lock like the lease itself,
   * so it is held until this instance's session ends and then free for the next to try.
   */
  private async trySigner(): Promise<void> {
    if (this.signer || this.ended) return;
    this.signer = (await this.client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [LEASE_CLASS, leaseKeyOf(SIGNER_ROLE)])).rows[0]!.got;
  }

  async instances(): Promise<Array<InstanceHolder & { alive: boolean }>> {
    await this.trySigner();
    const rows = (await this.client.query<{ value: string }>('SELECT value FROM journal_meta WHERE key LIKE $1 ORDER BY key', [`${INSTANCE_KEY_PREFIX}%`])).rows;
    const held = new Set((await this.client.query<{ objid: number }>("SELECT objid::bigint AS objid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = $1 AND objsubid = 2", [LEASE_CLASS])).rows.map((r) => r.objid));
    const out: Array<InstanceHolder & { alive: boolean }> = [];
    for (const row of rows) {
      const holder = parseHolder(row.value);
      if (holder && !isReleased(row.value)) out.push({ ...holder, alive: held.has(leaseKeyOf(holder.host) >>> 0) && !this.claimed.has(holder.host) });
    }
    return out;
  }

  async tryClaim(host: string): Promise<boolean> {
    if (host === this.host || this.claimed.has(host) || this.ended) return false;
    const got = (await this.client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS got', [LEASE_CLASS, leaseKeyOf(host)])).rows[0]!.got;
    if (!got) return false;
    this.claimed.add(host);
    await this.connection.appendBarrier();
    return true;
  }

  async release(host: string, forget: boolean): Promise<void> {
    if (!this.claimed.has(host)) return;
    // Marked released before the lock goes: the instance's own process, waiting for its lease,
    // writes itself in again once it has it.
    if (forget) await this.client.query("UPDATE journal_meta SET value = jsonb_set(value::jsonb, '{released}', to_jsonb(now()::text))::text WHERE key = $1", [INSTANCE_KEY_PREFIX + host]);
    await this.client.query('SELECT pg_advisory_unlock($1, $2)', [LEASE_CLASS, leaseKeyOf(host)]);
    this.claimed.delete(host);
  }

  /** Ends the lease's session (the store's close, after its last write). */
  async end(): Promise<void> {
    this.ended = true;
    await this.client.end().catch(() => undefined);
  }
}

async function writeHolder(client: pg.Client, holder: InstanceHolder): Promise<void> {
  await client.query('INSERT INTO journal_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value', [INSTANCE_KEY_PREFIX + holder.host, JSON.stringify(holder)]);
}

function isReleased(text: string): boolean {
  const value = metaValueOf(text) as { released?: unknown } | null;
  return typeof value?.released === 'string';
}

function parseHolder(text: string | undefined): InstanceHolder | null {
  const value = metaValueOf(text) as Partial<InstanceHolder> | null;
  if (!value || typeof value.host !== 'string' || typeof value.pid !== 'number' || typeof value.hostname !== 'string' || typeof value.dataDir !== 'string' || typeof value.since !== 'string') return null;
  return { host: value.host, pid: value.pid, hostname: value.hostname, dataDir: value.dataDir, since: value.since };
}
