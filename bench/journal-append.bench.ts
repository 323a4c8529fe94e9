/**
 * What a durable journal append costs. Subject: the full path through `Journal.append` (one
 * record per transaction) and `Journal.appendBatch` (group commit, 100 per transaction):
 * schema check, RFC 8785 canonicalisation, seq and prevHash under the write lock, SHA-256,
 * INSERT, COMMIT (WAL, synchronous=NORMAL), the WAL's fdatasync on the thread pool before the
 * acknowledgement (wal-sync.ts), the Merkle accumulator and the periodic signed checkpoint, and
 * the acknowledgement (the promise resolving). Baseline: raw
 * better-sqlite3 INSERTs of the same rows (same canonical bodies, hashes precomputed outside
 * the timing) into a database with the same schema (the journal's own migrations, so the same
 * table, indexes, constraints and chain triggers), at the same durability (WAL with
 * synchronous=FULL: the WAL fsynced inside each COMMIT, so the row is on disk when it returns),
 * in the same transaction sizes (BEGIN IMMEDIATE, as the store does), in the same process and run.
 *
 * The ratio is what the journal adds over "put these bytes durably into SQLite", which no
 * journal can avoid. Both sides let the event loop turn once after each commit (as a real
 * caller doing I/O between appends does), so the subject's checkpoints are signed inside the
 * timing rather than piling up until the loop ends. A shown-only line compares group commit
 * with a bare table of the same columns without the chain triggers, to show what those cost.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { canonicalize } from '../src-shared/journal/canonical-json';
import { recordPreimageFromBodyText } from '../src-shared/journal/record-hash';
import { CURRENT_VERSION, GENESIS_PREV_HASH, type AnyRecordDraft } from '../src-shared/journal/records';
import { journalStoreOf, DEFAULT_CHECKPOINT_EVERY, Journal } from '../src-main/journal/journal';
import { migrate } from '../src-main/journal/migrations';
import { sha256Hex, type SqliteJournalStore } from '../src-main/journal/sqlite-store';
import { runDrafts } from '../tests/support/journal-support';
import type { Benchmark, BenchResult } from './bench-types';

/** The goals, from the floors measured (docs/PERFORMANCE.md): a single append ≤ 1.25× raw, a group of 100 ≤ 1.4× raw. */
const SINGLE_GOAL = 1.25;
const GROUP_GOAL = 1.4;
const ROUNDS = 6;
const SINGLES_PER_ROUND = 400;
const GROUP_SIZE = 100;
const GROUPS_PER_ROUND = 40;
const WARM_UP_SINGLES = 200;
const WARM_UP_GROUPS = 10;

const yieldOnce = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Realistic drafts, cycling through whole runs (admitted, 5 effects, sealed: 12 records each). */
function draftSource(): () => AnyRecordDraft {
  let run = 0;
  let queue: AnyRecordDraft[] = [];
  return () => {
    if (queue.length === 0) queue = runDrafts(`bench-run-${++run}`, 5);
    return queue.shift()!;
  };
}

interface Row {
  seq: number;
  runId: string | null;
  kind: string;
  v: number;
  time: string;
  body: string;
  prevHash: string;
  hash: string;
}

/** The rows a chain of `count` such drafts makes, hashed up front: the baseline inserts them as they are. */
function precomputedRows(count: number): Row[] {
  const next = draftSource();
  const rows: Row[] = [];
  let prevHash = GENESIS_PREV_HASH;
  const time = new Date().toISOString();
  for (let seq = 1; seq <= count; seq++) {
    const draft = next();
    const fields = { seq, runId: draft.runId, kind: draft.kind, v: CURRENT_VERSION[draft.kind], time, prevHash };
    const body = canonicalize(draft.body);
    const hash = sha256Hex(recordPreimageFromBodyText(fields, body));
    rows.push({ ...fields, body, hash });
    prevHash = hash;
  }
  return rows;
}

/** A raw SQLite database with the journal's durability settings; `schema` creates its table. */
function rawDatabase(file: string, schema: (db: Database.Database) => void) {
  const db = new Database(file);
  db.pragma('busy_timeout = 10000');
  if (String(db.pragma('journal_mode = WAL', { simple: true })).toLowerCase() !== 'wal') throw new Error('no WAL');
  db.pragma('synchronous = FULL');
  if (db.pragma('synchronous', { simple: true }) !== 2) throw new Error('no synchronous=FULL');
  schema(db);
  const insert = db.prepare('INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
  const write = db.transaction((rows: readonly Row[]) => {
    for (const r of rows) insert.run(r.seq, r.runId, r.kind, r.v, r.time, r.body, r.prevHash, r.hash);
  });
  return { db, write: (rows: readonly Row[]) => write.immediate(rows) };
}

function bareTable(db: Database.Database): void {
  db.exec(`CREATE TABLE records (
    seq INTEGER PRIMARY KEY CHECK (seq >= 1), run_id TEXT, kind TEXT NOT NULL, v INTEGER NOT NULL, time TEXT NOT NULL,
    body TEXT NOT NULL, prev_hash TEXT NOT NULL UNIQUE, hash TEXT NOT NULL UNIQUE) STRICT;
    CREATE INDEX records_by_run ON records (run_id, seq) WHERE run_id IS NOT NULL;`);
}

/**
 * Where an append's time went (docs/PERFORMANCE.md), per record, from the subject's own counters:
 * its transactions (the chain's hashes, the INSERTs, the COMMIT's WAL writes) and its WAL syncs
 * (wal-sync.ts), and the rest of the subject's time (the body's schema check, canonical text,
 * the Merkle accumulator, checkpoint signing, the promises and the yield). Beside it, the
 * baseline's whole time per record, which is its INSERT and a COMMIT that syncs the WAL.
 */
function whereTheTimeWent(
  ms: { subjectSingle: number; baselineSingle: number; subjectGroup: number; baselineGroup: number },
  inside: Record<'subjectSingle' | 'subjectGroup', { transactionMs: number; syncMs: number }>,
  singles: number,
  grouped: number,
): string[] {
  const us = (total: number, count: number) => ((total * 1000) / count).toFixed(1);
  const line = (label: string, subjectMs: number, baselineMs: number, parts: { transactionMs: number; syncMs: number }, count: number) =>
    `  ${label}: the subject ${us(subjectMs, count)} µs per record = its transaction ${us(parts.transactionMs, count)} + the WAL's sync ${us(parts.syncMs, count)} + the rest ${us(subjectMs - parts.transactionMs - parts.syncMs, count)}; the baseline ${us(baselineMs, count)} µs (INSERT and a syncing COMMIT)`;
  return [
    'where the time went (the subject\'s own counters over its timed rounds; the rest is the schema check, canonical text, Merkle, checkpoints, promises and the yield):',
    line('single-record commits', ms.subjectSingle, ms.baselineSingle, inside.subjectSingle, singles),
    line(`group commits of ${GROUP_SIZE}`, ms.subjectGroup, ms.baselineGroup, inside.subjectGroup, grouped),
  ];
}

async function run(): Promise<BenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-append-'));
  mkdirSync(join(root, 'subject'));
  const journal = await Journal.open({ dataDir: join(root, 'subject') });
  const sameSchema = rawDatabase(join(root, 'baseline-same-schema.sqlite'), (db) => void migrate(db));
  const bare = rawDatabase(join(root, 'baseline-bare.sqlite'), bareTable);
  try {
    const perSide = WARM_UP_SINGLES + WARM_UP_GROUPS * GROUP_SIZE + ROUNDS * (SINGLES_PER_ROUND + GROUPS_PER_ROUND * GROUP_SIZE);
    const rows = precomputedRows(perSide);
    let sameNext = 0;
    let bareNext = 0;
    // The subject's drafts are built before anything is timed, as the baseline's rows are: what
    // is timed on both sides is the write, not making its input (runDrafts' objects cost about a
    // microsecond a record, a twentieth of the subject's time, that the baseline never paid).
    const drafts = Array.from({ length: perSide }, draftSource());
    let draftNext = 0;
    const nextDraft = () => drafts[draftNext++]!;
    const nextGroup = () => {
      const group = drafts.slice(draftNext, draftNext + GROUP_SIZE);
      draftNext += GROUP_SIZE;
      return group;
    };

    const subjectSingles = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await journal.append(nextDraft());
        await yieldOnce();
      }
    };
    const subjectGroups = async (n: number) => {
      for (let i = 0; i < n; i++) {
        await journal.appendBatch(nextGroup());
        await yieldOnce();
      }
    };
    const baselineSingles = async (n: number) => {
      for (let i = 0; i < n; i++) {
        sameSchema.write([rows[sameNext++]!]);
        await yieldOnce();
      }
    };
    const baselineGroups = async (n: number, target: typeof sameSchema, at: () => number, advance: (k: number) => void) => {
      for (let i = 0; i < n; i++) {
        const start = at();
        target.write(rows.slice(start, start + GROUP_SIZE));
        advance(GROUP_SIZE);
        await yieldOnce();
      }
    };
    // The bare table takes the same rows from the start of the chain, group commits only.
    const sameGroups = (n: number) => baselineGroups(n, sameSchema, () => sameNext, (k) => (sameNext += k));
    const bareGroups = (n: number) => baselineGroups(n, bare, () => bareNext, (k) => (bareNext += k));

    // Warm-up (the bare table only takes group commits).
    await subjectSingles(WARM_UP_SINGLES);
    await baselineSingles(WARM_UP_SINGLES);
    await subjectGroups(WARM_UP_GROUPS);
    await sameGroups(WARM_UP_GROUPS);
    await bareGroups(WARM_UP_GROUPS);

    const timed = async (work: () => Promise<void>) => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    const ms = { subjectSingle: 0, baselineSingle: 0, subjectGroup: 0, baselineGroup: 0, bareGroup: 0 };
    // The subject's own counters across its timed rounds (SqliteJournalStore.writeStats): what
    // its transactions and its WAL syncs took, so the notes can say where the rest went.
    const store = journalStoreOf(journal) as SqliteJournalStore;
    const inside = { subjectSingle: { transactionMs: 0, syncMs: 0 }, subjectGroup: { transactionMs: 0, syncMs: 0 } };
    for (let round = 0; round < ROUNDS; round++) {
      // Alternate which side goes first, so drift lands on both.
      const singles: Array<[keyof typeof ms, () => Promise<void>]> = [
        ['subjectSingle', () => subjectSingles(SINGLES_PER_ROUND)],
        ['baselineSingle', () => baselineSingles(SINGLES_PER_ROUND)],
      ];
      const groups: Array<[keyof typeof ms, () => Promise<void>]> = [
        ['subjectGroup', () => subjectGroups(GROUPS_PER_ROUND)],
        ['baselineGroup', () => sameGroups(GROUPS_PER_ROUND)],
        ['bareGroup', () => bareGroups(GROUPS_PER_ROUND)],
      ];
      if (round % 2 === 1) {
        singles.reverse();
        groups.reverse();
      }
      for (const [key, work] of [...singles, ...groups]) {
        const before = store.writeStats();
        ms[key] += await timed(work);
        if (key === 'subjectSingle' || key === 'subjectGroup') {
          const after = store.writeStats();
          inside[key].transactionMs += after.transactionMs - before.transactionMs;
          inside[key].syncMs += after.syncMs - before.syncMs;
        }
      }
    }

    const head = await journal.head();
    const expected = WARM_UP_SINGLES + WARM_UP_GROUPS * GROUP_SIZE + ROUNDS * (SINGLES_PER_ROUND + GROUPS_PER_ROUND * GROUP_SIZE);
    if (head.seq !== expected) throw new Error(`the subject journal holds ${head.seq} records, expected ${expected}`);
    const baselineCount = sameSchema.db.prepare('SELECT COUNT(*) FROM records').pluck().get() as number;
    if (baselineCount !== expected) throw new Error(`the baseline holds ${baselineCount} rows, expected ${expected}`);

    const singleCount = ROUNDS * SINGLES_PER_ROUND;
    const groupCount = ROUNDS * GROUPS_PER_ROUND * GROUP_SIZE;
    const rate = (count: number, elapsedMs: number) => count / (elapsedMs / 1000);
    const checkpoints = journal.checkpoints.readAll().length;
    return {
      subject: 'Journal.append / Journal.appendBatch (validate, canonicalise, chain, hash, insert, fsync, Merkle, checkpoint, acknowledge)',
      baseline: 'raw better-sqlite3 INSERT of the same rows, same schema, same durability (WAL, synchronous=FULL), same transaction sizes',
      measurements: [
        // The goals, each as a ratio that must be ≤ 1 (docs/PERFORMANCE.md, set from the measured
        // floors): single appends ≤ 1.25× raw, group appends ≤ 1.4× raw (a record's three
        // hashes, canonical text and schema check, ~2.5 µs the raw insert does not do).
        {
          metric: `single-record commits vs raw ÷ ${SINGLE_GOAL}`,
          unit: 'rec/s',
          subject: rate(singleCount, ms.subjectSingle),
          baseline: rate(singleCount, ms.baselineSingle) / SINGLE_GOAL,
          better: 'higher',
          judged: true,
        },
        {
          metric: `group commit (${GROUP_SIZE}/txn) vs raw ÷ ${GROUP_GOAL}`,
          unit: 'rec/s',
          subject: rate(groupCount, ms.subjectGroup),
          baseline: rate(groupCount, ms.baselineGroup) / GROUP_GOAL,
          better: 'higher',
          judged: true,
        },
        { metric: 'single-record commits', unit: 'rec/s', subject: rate(singleCount, ms.subjectSingle), baseline: rate(singleCount, ms.baselineSingle), better: 'higher', judged: false },
        { metric: `group commit (${GROUP_SIZE}/txn)`, unit: 'rec/s', subject: rate(groupCount, ms.subjectGroup), baseline: rate(groupCount, ms.baselineGroup), better: 'higher', judged: false },
        {
          metric: `group commit vs bare table, no triggers`,
          unit: 'rec/s',
          subject: rate(groupCount, ms.subjectGroup),
          baseline: rate(groupCount, ms.bareGroup),
          better: 'higher',
          judged: false,
        },
      ],
      notes: [
        `${ROUNDS} alternating rounds of ${SINGLES_PER_ROUND} single-record commits and ${GROUPS_PER_ROUND} commits of ${GROUP_SIZE} per side, after a warm-up`,
        `drafts: whole runs from runDrafts (RunAdmitted, 5 × EffectStarted + EffectDone, RunSealed), ${head.seq} records in the subject journal`,
        `subject checkpoints every ${DEFAULT_CHECKPOINT_EVERY} records (the default): ${checkpoints} signed during the run`,
        `both sides yield to the event loop once per commit; node ${process.version}, ${process.platform}/${process.arch}`,
        ...whereTheTimeWent(ms, inside, singleCount, groupCount),
      ],
    };
  } finally {
    await journal.close();
    sameSchema.db.close();
    bare.db.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'journal-append',
  goal: { maxRatio: 1, text: `durable append ≤ ${SINGLE_GOAL}× a raw SQLite INSERT of the same rows at the same durability one per commit, ≤ ${GROUP_GOAL}× at 100 per commit` },
  run,
};

export default benchmark;
