/**
 * An MCPv2 `ping` through a whole peer (as bench/peer-ping.bench.ts measures it: Host/Origin,
 * session, rate limit, run admission, the run's one journal commit, the answer) on each journal
 * backend. Subject: the peer's journal in PostgreSQL (a throwaway cluster of this run,
 * tests/support/postgres-cluster.ts, loopback, fsync on). Baseline: the same peer with its
 * journal in a SQLite file of its data dir. Both in this process, called by the same client,
 * interleaved call by call and round by round (round-trip-comparison.ts).
 *
 * Goal: a ping on PostgreSQL within 4× the SQLite ping's p50, and at least a quarter of its
 * throughput at c=16. A durable PostgreSQL commit is a network round trip to another process
 * that fsyncs its WAL, where SQLite's is an fdatasync of a file this process writes; what the
 * shared journal buys (several instances, takeover) is paid there, and this says how much.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Pool } from 'undici';
import { createLogger } from '../src-main/base/logger';
import { settingsFromEnv, startPeer } from '../src-main/plane/peer-host';
import { PeerRegistry } from '../src-main/peers/peer-registry';
import { mintSession } from '../src-main/peers/session-token';
import { createLocalProvider } from '../src-main/providers/local-provider';
import { startPostgresCluster } from '../tests/support/postgres-cluster';
import type { Benchmark, BenchResult } from './bench-types';
import type { Operation } from './measure';
import { compareRoundTrips } from './round-trip-comparison';

const CONCURRENCY = 16;
const PATH = '/mcpv2';
const BODY = JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {} } }]);
const SECRET = 'bench-secret';

/** A peer on 127.0.0.1 with its journal where `databaseUrl` says (undefined: SQLite in its data dir). */
async function peerOn(root: string, name: string, databaseUrl: string | undefined) {
  const dataDir = mkdtempSync(join(root, `${name}-`));
  const registry = new PeerRegistry(dataDir);
  const record = registry.create({ id: name, port: 0, publicIp: '127.0.0.1', secret: SECRET });
  // The peer reads its journal's database from the environment, as a peer the plane starts does.
  const saved = process.env.AGENTPLANE_DATABASE_URL;
  if (databaseUrl) process.env.AGENTPLANE_DATABASE_URL = databaseUrl;
  else delete process.env.AGENTPLANE_DATABASE_URL;
  try {
    return await startPeer({
      dataDir,
      record,
      // Consulted on every request, never refusing here (see peer-ping.bench.ts).
      settings: { ...settingsFromEnv({}), ratePerSecond: 1_000_000 },
      logger: createLogger(join(registry.dir, record.id, 'peer.jsonl')),
      providers: new Map([['local', createLocalProvider()]]),
    });
  } finally {
    if (saved === undefined) delete process.env.AGENTPLANE_DATABASE_URL;
    else process.env.AGENTPLANE_DATABASE_URL = saved;
  }
}

function caller(port: number, session: string): { pool: Pool; call: Operation } {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY, pipelining: 1 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${session}` };
  const call = async () => {
    const response = await pool.request({ path: PATH, method: 'POST', headers, body: BODY });
    const body = (await response.body.json()) as Array<{ result?: { pong?: boolean } }>;
    if (response.statusCode !== 200 || body[0]?.result?.pong !== true) throw new Error(`the peer answered ${response.statusCode} ${JSON.stringify(body).slice(0, 200)}`);
  };
  return { pool, call };
}

async function run(): Promise<BenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-pg-ping-'));
  const cluster = await startPostgresCluster();
  const admin = new pg.Client({ connectionString: cluster.url });
  await admin.connect();
  await admin.query('CREATE DATABASE ping');
  await admin.end();
  const url = new URL(cluster.url);
  url.pathname = '/ping';
  const onPostgres = await peerOn(root, 'pg', url.toString());
  const onSqlite = await peerOn(root, 'sqlite', undefined);
  const session = mintSession({ secret: SECRET, clientIp: '127.0.0.1', ttlSeconds: 3600 }).sessionId;
  const subject = caller(onPostgres.port, session);
  const baseline = caller(onSqlite.port, session);
  try {
    if (!onPostgres.journal.location.startsWith('postgres://')) throw new Error(`the subject's journal is not on PostgreSQL: ${onPostgres.journal.location}`);
    const comparison = await compareRoundTrips(subject.call, baseline.call, { warmUp: 500, sequential: 1000, concurrency: CONCURRENCY, requestsPerRound: 400, rounds: 6 });
    const [p50, , , rps] = comparison.measurements;
    return {
      subject: 'tools/call ping through startPeer, its journal in PostgreSQL (loopback cluster, synchronous_commit=on)',
      baseline: 'the same peer and ping, its journal in SQLite in its data dir (WAL fdatasynced before each acknowledgement)',
      measurements: [
        { ...p50!, metric: 'p50 vs 4× SQLite', baseline: p50!.baseline * 4, judged: true },
        { ...rps!, metric: `throughput vs ¼ SQLite (c=${CONCURRENCY})`, baseline: rps!.baseline / 4, judged: true },
        ...comparison.measurements.map((m) => ({ ...m, judged: false })),
      ],
      notes: [...comparison.notes, `node ${process.version}, ${process.platform}/${process.arch}`],
    };
  } finally {
    await subject.pool.close();
    await baseline.pool.close();
    await onPostgres.close();
    await onSqlite.close();
    cluster.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'postgres-ping',
  goal: { maxRatio: 1, text: 'a ping on PostgreSQL within 4× the SQLite ping p50, and ≥ ¼ of its throughput at c=16' },
  run,
};
export default benchmark;
