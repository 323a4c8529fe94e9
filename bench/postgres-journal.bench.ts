/**
 * The journal on PostgreSQL (postgres-store.ts), in a throwaway cluster of this run
 * (tests/support/postgres-cluster.ts: loopback, fsync on, as the tests run it).
 *
 * Judged: a durable append through `Journal.append` (one record per transaction: the schema
 * check, canonical text, the transaction's advisory lock, the head read, the chained INSERT,
 * COMMIT with synchronous_commit=on, the Merkle accumulator and the periodic checkpoint) against
 * a raw INSERT of the same precomputed row, one per transaction, into the same schema (the same
 * migration: table, indexes, chain and append-only triggers) at the same durability, over the
 * same driver. The ratio is what the journal adds over "put this row durably into PostgreSQL".
 * Group commits of 100 are measured the same way.
 *
 * Shown, not judged: the same single-record append on SQLite in a data dir, for the two
 * backends side by side; and the takeover time after SIGKILL of an instance holding a run:
 * from the kill to another instance having claimed its lease and committed the run's
 * RunAdopted (a killed holder's session closes with its socket, so its lease is claimable at
 * once; a plane looks for ended leases every DEFAULT_LEASE_CHECK_MS, which adds up to that;
 * a silent holder is found by TCP keepalives within about 25 s, not measured here).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { canonicalize } from '../src-shared/journal/canonical-json';
import { recordPreimageFromBodyText } from '../src-shared/journal/record-hash';
import { CURRENT_VERSION, GENESIS_PREV_HASH, type AnyRecordDraft } from '../src-shared/journal/records';
import { Journal } from '../src-main/journal/journal';
import { runsHeldBy } from '../src-main/journal/journal-scan';
import { DEFAULT_LEASE_CHECK_MS } from '../src-main/plane/plane';
import { sha256Hex } from '../src-main/journal/sqlite-store';
import { runDrafts } from '../tests/support/journal-support';
import { startPostgresCluster } from '../tests/support/postgres-cluster';
import type { Benchmark, BenchResult } from './bench-types';

const ROUNDS = 4;
const SINGLES_PER_ROUND = 300;
const GROUPS_PER_ROUND = 20;
const GROUP_SIZE = 100;
const WARM_UP = 100;
const TAKEOVERS = 5;
/** How often the bench's standby tries the dead instance's lease (a plane: DEFAULT_LEASE_CHECK_MS). */
const TAKEOVER_POLL_MS = 10;
const CHILD = join(import.meta.dirname, '..', 'tests', 'helpers', 'journal-append-child.ts');

const yieldOnce = () => new Promise<void>((resolve) => setImmediate(resolve));

function drafts(count: number): AnyRecordDraft[] {
  const out: AnyRecordDraft[] = [];
  for (let run = 0; out.length < count; run++) out.push(...runDrafts(`bench-${run}`, 5));
  return out.slice(0, count);
}

/** The chain those drafts make, hashed before anything is timed: the baseline inserts these rows as they are. */
/** The rows `list` makes, chained after `head` (the records the schema's opening journal wrote: its KeyAdmitted). */
function rows(list: readonly AnyRecordDraft[], head: { seq: number; hash: string } = { seq: 0, hash: GENESIS_PREV_HASH }): unknown[][] {
  let prevHash = head.hash;
  const time = new Date().toISOString();
  return list.map((draft, i) => {
    const fields = { seq: head.seq + i + 1, runId: draft.runId, kind: draft.kind, v: CURRENT_VERSION[draft.kind], time, prevHash };
    const body = canonicalize(draft.body);
    const hash = sha256Hex(recordPreimageFromBodyText(fields, body));
    prevHash = hash;
    return [fields.seq, fields.runId, fields.kind, fields.v, time, body, fields.prevHash, hash];
  });
}

async function database(admin: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * One takeover: a child holds an instance's lease with one open run; the standby instance
 * holds its own; the child is killed. Ms from the kill to the standby having claimed the dead
 * instance's lease (looked for every TAKEOVER_POLL_MS here; a plane looks every
 * DEFAULT_LEASE_CHECK_MS) and adopted its run (RunAdopted committed): `detect` and `adopt`.
 */
async function takeover(url: string, root: string, n: number): Promise<{ detect: number; adopt: number }> {
  const host = `plane@bench-child-${n}`;
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'lease', '--data-dir', mkdtempSync(join(root, `holder-${n}-`)), '--database', url, '--host', host], { stdio: ['ignore', 'pipe', 'inherit'] });
  const runId = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => line.startsWith('LEASED ') && resolve(line.slice('LEASED '.length)));
    child.once('exit', () => reject(new Error('the lease holder exited before holding the lease')));
  });
  const standby = await Journal.open({ dataDir: mkdtempSync(join(root, `standby-${n}-`)), databaseUrl: url });
  try {
    const lease = (await standby.holdInstanceLease({ host: `plane@bench-standby-${n}`, pid: process.pid, hostname: 'bench', dataDir: standby.dataDir, since: new Date().toISOString() }, { onWaiting: () => undefined, onLost: () => undefined }))!;
    if (await lease.tryClaim(host)) throw new Error('claimed the lease of a live instance');
    const killedAt = performance.now();
    child.kill('SIGKILL');
    while (!(await lease.tryClaim(host))) await new Promise((resolve) => setTimeout(resolve, TAKEOVER_POLL_MS));
    const claimedAt = performance.now();
    const runs = await runsHeldBy(standby, host);
    if (!runs.includes(runId)) throw new Error(`the dead instance's run ${runId} was not found open`);
    await standby.appendBatch(runs.map((id) => ({ runId: id, kind: 'RunAdopted' as const, body: { from: host, to: lease.host, reason: 'bench' } })));
    await lease.release(host, true);
    return { detect: claimedAt - killedAt, adopt: performance.now() - claimedAt };
  } finally {
    await standby.close();
  }
}

async function run(): Promise<BenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-pg-'));
  const cluster = await startPostgresCluster();
  try {
    const subjectUrl = await database(cluster.url, 'subject');
    const baselineUrl = await database(cluster.url, 'baseline');
    const total = WARM_UP + ROUNDS * (SINGLES_PER_ROUND + GROUPS_PER_ROUND * GROUP_SIZE);
    const list = drafts(total);
    const journal = await Journal.open({ dataDir: mkdtempSync(join(root, 'subject-')), databaseUrl: subjectUrl });
    // An instance of a team plane appends under its lease's fence (postgres-lease.ts): measured so.
    await journal.holdInstanceLease({ host: 'plane@bench', pid: process.pid, hostname: 'bench', dataDir: journal.dataDir, since: new Date().toISOString() }, { onWaiting: () => undefined, onLost: () => undefined });
    const sqlite = await Journal.open({ dataDir: mkdtempSync(join(root, 'sqlite-')) });
    // The baseline's schema is the journal's own migration, applied by opening a journal there
    // once; the raw rows chain onto what that opening wrote (its key's admission).
    const schemaJournal = await Journal.open({ dataDir: mkdtempSync(join(root, 'schema-')), databaseUrl: baselineUrl });
    const raw = rows(list, await schemaJournal.head());
    await schemaJournal.close();
    const baseline = new pg.Client({ connectionString: baselineUrl, options: '-c search_path=agentplane -c synchronous_commit=on' });
    await baseline.connect();
    let next = 0;
    let rawNext = 0;
    let sqliteNext = 0;
    const insert = `INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[])`;
    const rawWrite = async (batch: unknown[][]) => {
      const columns = Array.from({ length: 8 }, (_, c) => batch.map((row) => row[c]));
      await baseline.query('BEGIN');
      await baseline.query(insert, columns);
      await baseline.query('COMMIT');
    };
    const subjectSingles = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await journal.append(list[next++]! as never);
        await yieldOnce();
      }
    };
    const baselineSingles = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await rawWrite([raw[rawNext++]!]);
        await yieldOnce();
      }
    };
    const sqliteSingles = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await sqlite.append(list[sqliteNext++]! as never);
        await yieldOnce();
      }
    };
    const subjectGroups = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await journal.appendBatch(list.slice(next, next + GROUP_SIZE));
        next += GROUP_SIZE;
        await yieldOnce();
      }
    };
    const baselineGroups = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await rawWrite(raw.slice(rawNext, rawNext + GROUP_SIZE));
        rawNext += GROUP_SIZE;
        await yieldOnce();
      }
    };
    const timed = async (work: () => Promise<void>) => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    await subjectSingles(WARM_UP);
    await baselineSingles(WARM_UP);
    await sqliteSingles(WARM_UP);
    const ms = { subjectSingle: 0, baselineSingle: 0, sqliteSingle: 0, subjectGroup: 0, baselineGroup: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which side goes first, so drift lands on both.
      const order: Array<[keyof typeof ms, () => Promise<void>]> = [
        ['subjectSingle', () => subjectSingles(SINGLES_PER_ROUND)],
        ['baselineSingle', () => baselineSingles(SINGLES_PER_ROUND)],
        ['sqliteSingle', () => sqliteSingles(SINGLES_PER_ROUND)],
        ['subjectGroup', () => subjectGroups(GROUPS_PER_ROUND)],
        ['baselineGroup', () => baselineGroups(GROUPS_PER_ROUND)],
      ];
      if (round % 2 === 1) order.reverse();
      for (const [key, work] of order) ms[key] += await timed(work);
    }
    await baseline.end();
    await journal.close();
    await sqlite.close();
    const takeovers: Array<{ detect: number; adopt: number }> = [];
    for (let n = 0; n < TAKEOVERS; n++) takeovers.push(await takeover(await database(cluster.url, `lease_${n}`), root, n));
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const detect = median(takeovers.map((t) => t.detect));
    const adopt = median(takeovers.map((t) => t.adopt));
    const singles = ROUNDS * SINGLES_PER_ROUND;
    const grouped = ROUNDS * GROUPS_PER_ROUND * GROUP_SIZE;
    const perRecordUs = (total: number, count: number) => (total * 1000) / count;
    return {
      subject: 'Journal.append on PostgreSQL (durable: synchronous_commit=on, chained under an advisory lock)',
      baseline: 'a raw INSERT of the same row, same schema and triggers, same durability, one transaction each',
      measurements: [
        { metric: 'durable append, 1 record per commit', unit: 'µs/record', subject: perRecordUs(ms.subjectSingle, singles), baseline: perRecordUs(ms.baselineSingle, singles), better: 'lower', judged: true },
        { metric: `group commit of ${GROUP_SIZE}`, unit: 'µs/record', subject: perRecordUs(ms.subjectGroup, grouped), baseline: perRecordUs(ms.baselineGroup, grouped), better: 'lower', judged: true },
        { metric: 'the same append on SQLite (shown: backends side by side)', unit: 'µs/record', subject: perRecordUs(ms.subjectSingle, singles), baseline: perRecordUs(ms.sqliteSingle, singles), better: 'lower', judged: false },
        {
          metric: `takeover after SIGKILL of the instance holding a run: lease found ended + run adopted, median (a plane looks every ${DEFAULT_LEASE_CHECK_MS} ms; goal: that plus under 1 s)`,
          unit: 'ms',
          subject: detect + adopt,
          baseline: 1000,
          better: 'lower',
          judged: false,
        },
      ],
      notes: [
        `${singles} single-record appends and ${grouped} records in groups of ${GROUP_SIZE} per side, ${ROUNDS} rounds alternating which side goes first, after ${WARM_UP} warm-up appends`,
        `takeover over ${TAKEOVERS} kills, ms from the kill to the lease claimable (polled every ${TAKEOVER_POLL_MS} ms) + to the RunAdopted committed: ${takeovers.map((t) => `${t.detect.toFixed(0)}+${t.adopt.toFixed(0)}`).join(', ')}`,
        'the append above is fenced by an instance lease, as every append of a team plane instance is',
        'not measured here: ping p50 and throughput at c=16 through a peer on each backend',
      ],
    };
  } finally {
    cluster.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'postgres-journal',
  goal: { maxRatio: 2.5, text: 'a durable PostgreSQL append costs at most 2.5× a raw durable INSERT of the same row' },
  run,
};
export default benchmark;
