/**
 * One journal worker (the pool is journal-worker-pool.ts). It runs one job at a time, as the pool
 * sends them: verify the data dir's journal (whole, or one chunk of it: verify-chunks.ts), scan
 * it, write an export bundle, or check one byte range of a bundle file, reading the records
 * through a read-only connection of its own that it opens at its first job that reads the
 * database and keeps (a pool for bundle files has none).
 *
 * The connection is better-sqlite3's (SqliteJournalReader.open), never a file descriptor of
 * ours: SQLite's locks belong to the process, and closing any descriptor of the database, -wal
 * or -shm from any thread would drop the locks every other connection in the process holds.
 *
 * Jobs arrive and answers leave as JSON text; an answer carries the thread's id and where the
 * job's time went (`JobTiming`), and a verify chunk's also its subtree roots as transferred bytes.
 *
 * The worker runs below normal priority where the OS gives each thread its own (Linux): a
 * verify is background work, and on a machine with few cores it must yield the CPU to the
 * thread that answers the UI, not share it as an equal. It takes longer only when something
 * else wants the core. A pool for work someone waits on with nothing else to serve (the CLI
 * verifying a bundle file) starts its workers at normal priority (`lowPriority: false`).
 */
import { readlinkSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import { writeBundle } from './bundle-export';
import { verifyBundleChunk } from './bundle-verify';
import { JournalError } from './journal-error';
import { JournalIndexer, scanStoreRecords } from './journal-scan';
import { pagedRecords, type JournalReads, type JournalStore, type StoredRecord } from './journal-store';
import type { JobMessage, ReplyMessage, WorkerConfig, WorkerReply } from './journal-worker-pool';
import { SqliteJournalReader } from './sqlite-reader';
import { verifyStoreChunk, verifyStoreRecords, type TextReads } from './store-verify';

const config = workerData as WorkerConfig;
const port = parentPort;
if (!port) throw new Error('journal-worker.ts runs as a worker thread of the journal pool (journal-worker-pool.ts)');

let reader: SqliteJournalReader | null = null;

/** The worker's read-only connection, opened at the first job that reads the database. */
function openReader(): SqliteJournalReader {
  if (config.databasePath === undefined) throw new Error('this journal worker was started without a database (a pool for bundle files)');
  reader ??= SqliteJournalReader.open(config.databasePath, config.busyTimeoutMs !== undefined ? { busyTimeoutMs: config.busyTimeoutMs } : {});
  return reader;
}

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
if (config.lowPriority !== false) yieldToTheEventLoopThread();

/**
 * The worker's reads, timed: every call into the database (SQLite stepping, rows made into
 * records) adds to `readMs`, so a job can say how much of its time was reading.
 */
function timedReads(): { reads: JournalReads & TextReads & Pick<JournalStore, 'readKinds'>; readMs: () => number } {
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
  const reads: JournalReads & TextReads & Pick<JournalStore, 'readKinds'> = {
    readRangeText: timed((from: number, to: number | null, limit: number) => openReader().readRangeText(from, to, limit)),
    head: timed(() => openReader().head()),
    readRange: timed((from: number, to: number | null, limit: number) => openReader().readRange(from, to, limit)),
    readRun: timed((runId: string, from: number, limit: number) => openReader().readRun(runId, from, limit)),
    // A verify reads a fork's EffectReused records through the kind index (fork-references.ts).
    readKinds: timed((from: number, to: number, kinds: readonly string[], limit: number) => openReader().readKinds(from, to, kinds, limit)),
    readHashes: timed((from: number, to: number) => openReader().readHashes(from, to)),
    runs: timed((limit: number) => openReader().runs(limit)),
    runLastSeq: timed((runId: string) => openReader().runLastSeq(runId)),
    runSeqs: timed((runId: string) => openReader().runSeqs(runId)),
    // The same paging as every store's iterate, over the timed readRange.
    iterate: (fromSeq: number, toSeq: number | null): AsyncIterable<StoredRecord> => pagedRecords(reads.readRange, fromSeq, toSeq),
  };
  return { reads, readMs: () => readMs };
}

/** What a job answers: its JSON result, and for a verify chunk its subtree roots as bytes. */
async function run(message: JobMessage, reads: JournalReads & TextReads): Promise<{ result: unknown; bytes?: Uint8Array }> {
  const { job } = message;
  switch (job.kind) {
    case 'verifyStoreChunk': {
      const { faultAtSeq } = job;
      const chunkReads: TextReads =
        faultAtSeq === undefined
          ? reads
          : {
              // Dies holding the job once the rows reach that seq, as a worker out of memory would.
              readRangeText: async (from, to, limit) => {
                const rows = await reads.readRangeText(from, to, limit);
                if (rows.some((row) => row.seq >= faultAtSeq)) process.exit(70);
                return rows;
              },
            };
      const { summary, roots } = await verifyStoreChunk(chunkReads, job.fromSeq, job.toSeq, job.plan);
      return { result: summary, bytes: roots };
    }
    case 'scanStoreChunk': {
      const indexer = new JournalIndexer();
      const { summary, roots } = await verifyStoreChunk(reads, job.fromSeq, job.toSeq, job.plan, (row) => indexer.observe(row));
      return { result: { summary, index: indexer.chunkIndex() }, bytes: roots };
    }
    case 'verifyBundleChunk': {
      const { summary, roots } = verifyBundleChunk(job.file, job.start, job.end, job.limit, job.plan);
      return { result: summary, bytes: roots };
    }
    default:
      return { result: await runJson(job, reads) };
  }
}

async function runJson(job: Exclude<JobMessage['job'], { kind: 'verifyStoreChunk' | 'scanStoreChunk' | 'verifyBundleChunk' }>, reads: JournalReads & TextReads): Promise<unknown> {
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
  const reply = (body: { ok: true; result: unknown } | { ok: false; error: { name: string; message: string; code?: string } }, bytes?: Uint8Array) => {
    const text = JSON.stringify({ id: message.id, threadId, timing, ...body } satisfies ReplyMessage);
    // The bytes' buffer is transferred (never copied); they are a fresh array of their own.
    if (bytes) port.postMessage({ text, bytes } satisfies WorkerReply, [bytes.buffer as ArrayBuffer]);
    else port.postMessage(text satisfies WorkerReply);
  };
  let readMs = () => 0;
  void (async () => {
    const timed = timedReads();
    readMs = timed.readMs;
    return run(message, timed.reads);
  })().then(
    ({ result, bytes }) => {
      timing = { totalMs: performance.now() - started, readMs: readMs() };
      reply({ ok: true, result }, bytes);
    },
    (error: unknown) => {
      timing = { totalMs: performance.now() - started, readMs: readMs() };
      const e = error instanceof Error ? error : new Error(String(error));
      reply({ ok: false, error: { name: e.name, message: e.message, ...(e instanceof JournalError ? { code: e.code } : {}) } });
    },
  );
});
