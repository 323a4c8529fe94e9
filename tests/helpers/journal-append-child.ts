/**
 * A child process for the journal's crash-safety and concurrency tests. Started as
 * `node --import tsx tests/helpers/journal-append-child.ts <mode> [--flag value …]`; it speaks
 * one line per event on stdout, so the parent can follow it with readline.
 *
 * Mode `append` opens `Journal.open({ dataDir, checkpointEvery })` and appends realistic runs
 * (from runDrafts) in a loop, mixing single appends and appendBatch batches of 1–5 (or batches
 * of exactly `--batch` records). Lines:
 *   READY                     (with --wait-go) loaded and waiting for "GO" on stdin
 *   OPEN <headSeq>            the journal is open (after its open-time checkpoint)
 *   ACK <lastSeq> <hash>      after each append promise resolved, never before: for a batch,
 *                             the last seq of the batch and its hash, once the whole batch is
 *                             acknowledged (durable)
 *   DONE <records>            after `--limit` records were appended and the journal closed
 * Flags: --data-dir (required), --database (a PostgreSQL URL: the journal lives there, the data
 * dir keeps this process's key and checkpoints), --run-prefix (default "child"), --seed (default 1), --limit
 * (records; 0 = forever, the default), --batch (0 = mixed, the default), --checkpoint-every
 * (default 500), --wait-go (open only after reading a line "GO" on stdin, so several children
 * start together), --yield (after each acknowledgement, let the event loop turn once, as a
 * process doing any I/O between appends does; without it the loop is a pure chain of
 * microtasks, because better-sqlite3 answers synchronously, and asynchronous work such as
 * signing a checkpoint does not run until the loop ends).
 *
 * Mode `lease` opens the journal in `--database` and holds its server lease (postgres-store.ts),
 * printing `LEASED`, until it is killed.
 *
 * Mode `hold-lock` holds SQLite's write lock on the data dir's journal from a raw better-sqlite3
 * connection: BEGIN IMMEDIATE, insert one valid next record (chained and hashed like the
 * journal does, so a reader that saw it would see a real record), print `LOCKED <headSeq>`,
 * wait `--hold-ms` (default 1000), ROLLBACK, print `RELEASED`.
 */
import Database from 'better-sqlite3';
import { createInterface } from 'node:readline';
import { recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import { GENESIS_PREV_HASH, type AnyRecordDraft } from '../../src-shared/journal/records';
import { Journal } from '../../src-main/journal/journal';
import { journalPath, sha256Hex } from '../../src-main/journal/sqlite-store';
import { runDrafts, seededRandom } from '../support/journal-support';

type Flags = Record<string, string>;

function parseFlags(argv: readonly string[]): Flags {
  const flags: Flags = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new Error(`unexpected argument ${arg}`);
    const next = argv[i + 1];
    if (next === undefined || next.startsWith('--')) {
      flags[arg.slice(2)] = 'true';
    } else {
      flags[arg.slice(2)] = next;
      i++;
    }
  }
  return flags;
}

function intFlag(flags: Flags, name: string, fallback: number): number {
  const raw = flags[name];
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`--${name} must be a non-negative integer, got ${raw}`);
  return value;
}

/** An endless stream of whole runs (admitted, n effects, sealed), each with its own runId. */
function* draftStream(prefix: string, random: () => number): Generator<AnyRecordDraft> {
  for (let run = 1; ; run++) yield* runDrafts(`${prefix}-${run}`, 1 + Math.floor(random() * 6));
}

function say(line: string): void {
  // stdout to a pipe is synchronous on Linux: the line is in the pipe before the next append.
  process.stdout.write(`${line}\n`);
}

async function waitForGo(): Promise<void> {
  say('READY');
  const lines = createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (line.trim() === 'GO') break;
  }
  lines.close();
}

async function appendMode(flags: Flags): Promise<void> {
  const dataDir = flags['data-dir'];
  if (!dataDir) throw new Error('--data-dir is required');
  const prefix = flags['run-prefix'] ?? 'child';
  const limit = intFlag(flags, 'limit', 0);
  const fixedBatch = intFlag(flags, 'batch', 0);
  const random = seededRandom(intFlag(flags, 'seed', 1));
  const yieldEach = flags['yield'] === 'true';
  if (flags['wait-go']) await waitForGo();

  const journal = await Journal.open({ dataDir, checkpointEvery: intFlag(flags, 'checkpoint-every', 500), ...(flags.database ? { databaseUrl: flags.database } : {}) });
  say(`OPEN ${(await journal.head()).seq}`);
  const drafts = draftStream(prefix, random);
  const take = (n: number) => Array.from({ length: n }, () => drafts.next().value as AnyRecordDraft);
  let appended = 0;
  while (limit === 0 || appended < limit) {
    const room = limit === 0 ? Number.POSITIVE_INFINITY : limit - appended;
    if (fixedBatch > 0) {
      const records = await journal.appendBatch(take(Math.min(fixedBatch, room)));
      appended += records.length;
      say(`ACK ${records.at(-1)!.seq} ${records.at(-1)!.hash}`);
    } else if (random() < 0.5) {
      const record = await journal.append(take(1)[0]!);
      appended += 1;
      say(`ACK ${record.seq} ${record.hash}`);
    } else {
      const records = await journal.appendBatch(take(Math.min(1 + Math.floor(random() * 5), room)));
      appended += records.length;
      say(`ACK ${records.at(-1)!.seq} ${records.at(-1)!.hash}`);
    }
    if (yieldEach) await new Promise((resolve) => setImmediate(resolve));
  }
  await journal.close();
  say(`DONE ${appended}`);
}

async function holdLockMode(flags: Flags): Promise<void> {
  const dataDir = flags['data-dir'];
  if (!dataDir) throw new Error('--data-dir is required');
  const holdMs = intFlag(flags, 'hold-ms', 1000);
  const db = new Database(journalPath(dataDir));
  db.pragma('busy_timeout = 10000');
  db.exec('BEGIN IMMEDIATE');
  const head = (db.prepare('SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1').get() as { seq: number; hash: string } | undefined) ?? {
    seq: 0,
    hash: GENESIS_PREV_HASH,
  };
  const fields = { seq: head.seq + 1, runId: 'lock-holder', kind: 'Cancelled', v: 1, time: new Date().toISOString(), prevHash: head.hash };
  const bodyText = '{"by":"lock-holder"}';
  db.prepare('INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)').run(
    fields.seq,
    fields.runId,
    fields.kind,
    fields.v,
    fields.time,
    bodyText,
    fields.prevHash,
    sha256Hex(recordPreimageFromBodyText(fields, bodyText)),
  );
  say(`LOCKED ${head.seq}`);
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  db.exec('ROLLBACK');
  db.close();
  say('RELEASED');
}

/**
 * Holds a shared journal's instance lease as host `--host` (default plane@child) until killed,
 * after admitting one run under that host (a run another instance has to take over).
 */
async function leaseMode(flags: Flags): Promise<void> {
  const dataDir = flags['data-dir'];
  if (!dataDir || !flags.database) throw new Error('--data-dir and --database are required');
  const host = flags.host ?? 'plane@child';
  const journal = await Journal.open({ dataDir, databaseUrl: flags.database });
  await journal.holdInstanceLease({ host, pid: process.pid, hostname: 'child', dataDir, since: new Date().toISOString() }, { onWaiting: () => say('WAITING'), onLost: () => say('LOST') });
  const runId = `run_${host.replace(/[^a-z0-9]/gi, '')}_${process.pid}`;
  await journal.append({
    runId,
    kind: 'RunAdmitted',
    body: { agent: 'held', owner: 'user:local', chain: ['user:local'], input: null, inputProvenance: 'plane', budget: {}, trigger: { via: 'plane', by: 'test' }, host },
  });
  say(`LEASED ${runId}`);
  await new Promise(() => undefined);
}

async function main(argv: readonly string[]): Promise<void> {
  const [mode, ...rest] = argv;
  const flags = parseFlags(rest);
  if (mode === 'append') return appendMode(flags);
  if (mode === 'hold-lock') return holdLockMode(flags);
  if (mode === 'lease') return leaseMode(flags);
  throw new Error(`unknown mode ${String(mode)}: expected append, hold-lock or lease`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
