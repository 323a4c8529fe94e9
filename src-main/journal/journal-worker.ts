/**
 * One journal worker (the pool is journal-workers.ts). It runs one job at a time, as the pool
 * sends them: verify the data dir's journal, scan it, or write an export bundle, reading the
 * records through a read-only connection of its own that it opens at its first job and keeps.
 *
 * The connection is better-sqlite3's (SqliteJournalReader.open), never a file descriptor of
 * ours: SQLite's locks belong to the process, and closing any descriptor of the database, -wal
 * or -shm from any thread would drop the locks every other connection in the process holds.
 *
 * Jobs arrive and answers leave as JSON text; an answer carries the thread's id and where the
 * job's time went (`JobTiming`).
 *
 * The worker runs below normal priority where the OS gives each thread its own (Linux): a
 * verify is background work, and on a machine with few cores it must yield the CPU to the
 * thread that answers the UI, not share it as an equal. It takes longer only when something
 * else wants the core.
 */
import { readlinkSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { verifyStoreRecords, writeBundle, type TextReads } from './bundle';
import { JournalError } from './journal-error';
import { scanStoreRecords } from './journal-scan';
import type { JournalReads, StoredRecord } from './journal-store';
import type { JobMessage, ReplyMessage, WorkerConfig } from './journal-workers';
import { SqliteJournalReader } from './sqlite-store';

const config = workerData as WorkerConfig;
const port = parentPort;
if (!port) throw new Error('journal-worker.ts runs as a worker thread of the journal pool (journal-workers.ts)');

let reader: SqliteJournalReader | null = null;

/** Lowers this thread's priority (Linux, where a nice value is per thread); a best effort. */
function yieldToTheEventLoopThread(): void {
  if (process.platform !== 'linux') return;
  try {
    // /proc/thread-self names this thread's task id; readlink opens no descriptor.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, constants.priority.PRIORITY_BELOW_NORMAL);
  } catch {
    // Without it the worker simply competes for the CPU as an equal.
  }
}
yieldToTheEventLoopThread();

/**
 * The worker's reads, timed: every call into the database (SQLite stepping, rows made into
 * records) adds to `readMs`, so a job can say how much of its time was reading.
 */
function timedReads(): { reads: JournalReads & TextReads; readMs: () => number } {
  reader ??= SqliteJournalReader.open(config.databasePath, config.busyTimeoutMs !== undefined ? { busyTimeoutMs: config.busyTimeoutMs } : {});
  const inner = reader;
  let readMs = 0;
  const timed =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const started = performance.now();
      try {
        return await call(...args);
      } finally {
        readMs += performance.now() - started;
      }
    };
  const reads: JournalReads & TextReads = {
    readRangeText: timed((from: number, to: number | null, limit: number) => inner.readRangeText(from, to, limit)),
    head: timed(() => inner.head()),
    readRange: timed((from: number, to: number | null, limit: number) => inner.readRange(from, to, limit)),
    readRun: timed((runId: string, from: number, limit: number) => inner.readRun(runId, from, limit)),
    readHashes: timed((from: number, to: number) => inner.readHashes(from, to)),
    runs: timed((limit: number) => inner.runs(limit)),
    runLastSeq: timed((runId: string) => inner.runLastSeq(runId)),
    runSeqs: timed((runId: string) => inner.runSeqs(runId)),
    // The same paging as SqliteJournalReader.iterate, over the timed readRange.
    async *iterate(fromSeq: number, toSeq: number | null): AsyncIterable<StoredRecord> {
      const page = 2000;
      let next = fromSeq;
      for (;;) {
        const rows = await reads.readRange(next, toSeq, page);
        for (const row of rows) yield row;
        if (rows.length < page) return;
        next = rows[rows.length - 1]!.seq + 1;
      }
    },
  };
  return { reads, readMs: () => readMs };
}

async function run(message: JobMessage, reads: JournalReads): Promise<unknown> {
  const { job } = message;
  switch (job.kind) {
    case 'verifyStore':
      return verifyStoreRecords(reads, job.plan);
    case 'scan':
      return scanStoreRecords(reads, job.plan);
    case 'exportBundle':
      return writeBundle(reads, job.plan, job.file);
    case 'crash':
      if (job.how === 'exit') process.exit(70);
      // Thrown outside the job's promise chain: an uncaught exception, as a bug would be.
      setImmediate(() => {
        throw new Error('a deliberate crash of the journal worker');
      });
      return new Promise<never>(() => undefined);
  }
}

port.on('message', (text: string) => {
  const message = JSON.parse(text) as JobMessage;
  const started = performance.now();
  let timing = { totalMs: 0, readMs: 0 };
  const reply = (body: { ok: true; result: unknown } | { ok: false; error: { name: string; message: string; code?: string } }) => {
    port.postMessage(JSON.stringify({ id: message.id, threadId, timing, ...body } satisfies ReplyMessage));
  };
  let readMs = () => 0;
  void (async () => {
    const timed = timedReads();
    readMs = timed.readMs;
    return run(message, timed.reads);
  })().then(
    (result) => {
      timing = { totalMs: performance.now() - started, readMs: readMs() };
      reply({ ok: true, result });
    },
    (error: unknown) => {
      timing = { totalMs: performance.now() - started, readMs: readMs() };
      const e = error instanceof Error ? error : new Error(String(error));
      reply({ ok: false, error: { name: e.name, message: e.message, ...(e instanceof JournalError ? { code: e.code } : {}) } });
    },
  );
});
