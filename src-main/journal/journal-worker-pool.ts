/**
 * The journal's worker pool (the pool itself; what runs on it is journal-workers.ts,
 * bundle-export.ts, bundle-verify.ts and store-verify.ts): whole-journal verification, exports
 * and the runtime's start-up scan run in `worker_threads`, so the thread that answers the UI,
 * the bridge and the peers keeps answering while they run. Verifying 100,000 records in-thread
 * held every other request for over a second (it now gives the loop a turn between pages, and
 * still takes the thread's CPU for its whole length).
 *
 * It imports only the shapes of what its jobs carry (bundle-format.ts, store-verify.ts,
 * journal-scan.ts, verify-chunks.ts), none of which reaches back to the Journal that owns a pool.
 *
 * - Each worker reads through a read-only SQLite connection of its own, opened by better-sqlite3
 *   alone (SqliteJournalReader.open). SQLite's locks are POSIX advisory locks that belong to the
 *   process, not the thread, and closing any descriptor of the database, -wal or -shm drops all
 *   of them (see preparePrivateFiles in sqlite-store.ts), so a worker never opens, reads or
 *   closes those files itself, and never goes through SqliteJournalStore.open.
 * - What needs the plane's private key (signing the anchor of an export, or the head before the
 *   UI's verify) stays on the calling thread; a worker gets only public material.
 * - Jobs and their results cross as JSON text, so nothing but plain data can cross; a result
 *   may carry one byte array besides (a verify chunk's subtree roots), transferred.
 * - The pool holds at most one worker per core (os.availableParallelism(), at least one), starts
 *   none until the first job, runs one job per worker at a time and queues the rest. A worker
 *   that dies mid-job (an uncaught error, process.exit, out of memory) fails that job with
 *   `JournalError('WorkerCrashed')` and is dropped; the next job gets a new one.
 * - A Journal owns one pool (`journal.workers`) and closes it when it closes, which is how the
 *   plane's close ends it: queued and running jobs fail with `JournalError('Closed')`.
 * - Idle workers are unref'd: a pool with nothing to do never keeps a process alive.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { appRoot } from '../base/app-paths';
import type { ExportPlan, ExportResult } from './bundle-format';
import { BundleError } from './bundle-error';
import { JournalError, type JournalErrorCode } from './journal-error';
import type { ChunkIndex, JournalScan } from './journal-scan';
import type { StoreVerifyPlan } from './store-verify';
import type { ChunkPlan, ChunkSummary } from './verify-chunks';
import type { VerifyReport } from './verify';

export type JournalJob =
  | { kind: 'verifyStore'; plan: StoreVerifyPlan }
  | { kind: 'scan'; plan: StoreVerifyPlan }
  | { kind: 'exportBundle'; plan: ExportPlan; file: string }
  /**
   * One chunk of a full journal's verification (verify-chunks.ts): seqs fromSeq..toSeq of the
   * worker's database, or the record lines that start in bytes [start, end) of a bundle file
   * (read no further than `limit`, where its checkpoint lines begin). `faultAtSeq`
   * ends the worker as 'crash' does ('exit') when it reaches that seq: what the tests of a
   * worker dying mid-verify use.
   */
  | { kind: 'verifyStoreChunk'; plan: ChunkPlan; fromSeq: number; toSeq: number; faultAtSeq?: number }
  /** A chunk of the start-up scan: verifyStoreChunk's checks, and the chunk's part of the index. */
  | { kind: 'scanStoreChunk'; plan: ChunkPlan; fromSeq: number; toSeq: number }
  | { kind: 'verifyBundleChunk'; plan: ChunkPlan; file: string; start: number; end: number; limit: number }
  /**
   * Ends the worker the way a fault does, while it holds the job: an uncaught exception
   * ('throw') or process.exit ('exit'). What the pool's own test crashes a real worker with.
   */
  | { kind: 'crash'; how: 'throw' | 'exit' };

export type JobKind = JournalJob['kind'];

export interface JobResults {
  verifyStore: VerifyReport;
  scan: JournalScan;
  exportBundle: ExportResult;
  verifyStoreChunk: ChunkSummary;
  scanStoreChunk: { summary: ChunkSummary; index: ChunkIndex };
  verifyBundleChunk: ChunkSummary;
  crash: never;
}

/** Where a job's time went, measured in the worker. */
export interface JobTiming {
  /** From the job's arrival in the worker to its answer. */
  totalMs: number;
  /** Of that, inside the database: SQLite stepping and turning rows into records. */
  readMs: number;
}

export interface JobOutcome<K extends JobKind> {
  result: JobResults[K];
  /** The worker thread that ran the job (never the caller's). */
  threadId: number;
  timing: JobTiming;
  /** Bytes the job answered besides its JSON (a chunk's subtree roots), transferred, not copied. */
  bytes?: Uint8Array;
}

/** JobTiming added up over the jobs a pool's workers have answered (JournalWorkers.jobTimes). */
export interface JobTimes {
  jobs: number;
  totalMs: number;
  readMs: number;
}

/** What the pool posts to a worker, as JSON text. */
export interface JobMessage {
  id: number;
  job: JournalJob;
}

/**
 * What a worker posts back, as JSON text; a job that answers bytes too posts `{ text, bytes }`
 * with the bytes' buffer transferred (WorkerReply).
 */
export type ReplyMessage = { id: number; threadId: number; timing: JobTiming } & (
  | { ok: true; result: unknown }
  | { ok: false; error: { name: string; message: string; code?: string } }
);

export type WorkerReply = string | { text: string; bytes: Uint8Array };

/** What every worker is started with (its `workerData`). */
export interface WorkerConfig {
  /** Absent for a pool that reads no database (verify-chunks of bundle files). */
  databasePath?: string;
  busyTimeoutMs?: number;
  /** False: the worker keeps normal priority (see journal-worker.ts); absent or true, it runs below it. */
  lowPriority?: boolean;
  /** The worker entry's URL, when it is started from source through the tsx bootstrap. */
  entry?: string;
}

export interface JournalWorkersOptions {
  /** The SQLite journal each worker opens read-only; absent for a pool that only reads files. */
  databasePath?: string;
  /** At most this many workers; default the machine's available parallelism, at least 1. */
  size?: number;
  busyTimeoutMs?: number;
  /**
   * Workers run below normal priority (default), so background work yields the CPU to the
   * thread that answers the UI. False for work someone is waiting on with nothing else to
   * serve meanwhile (the CLI verifying a bundle file).
   */
  lowPriority?: boolean;
  /**
   * A worker with no job for this long is ended (default 10 s); the next job starts a new one.
   * An idle worker's heap keeps what its last job allocated until it allocates again, which an
   * idle worker never does: measured in bench/memory, the whole-journal verification of a
   * 1M-record journal added 120-320 MB of resident memory that was still held when the bench
   * ended. A start costs a few hundred ms, against jobs (a verification, an export) that come
   * minutes apart; the chunks of one verification follow each other at once and keep it.
   */
  idleMs?: number;
}

/** See JournalWorkersOptions.idleMs. */
export const WORKER_IDLE_MS = 10_000;

interface PendingJob {
  id: number;
  job: JournalJob;
  resolve: (outcome: JobOutcome<JobKind>) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  threadId: number;
  job: PendingJob | null;
  /** The uncaught error the worker died of, if it reported one before exiting. */
  fault: Error | null;
  /** Ends the worker once it has been idle for idleMs (see JournalWorkersOptions). */
  idle: ReturnType<typeof setTimeout> | null;
}

/**
 * How to start a worker, from wherever this code runs. Built (out/main, for the CLI and
 * Electron) the worker is its own entry, out/main/journal-worker.js (electron.vite.config.ts),
 * found from the package root as other built files are (app-paths.ts). From source (vitest,
 * tsx) this module is a .ts file, and the worker is journal-worker.ts beside it, started
 * through a bootstrap that first registers tsx's loader in the new thread.
 */
function workerEntry(): { filename: string; entry?: string } {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) {
    return { filename: join(dirname(here), 'journal-worker-from-source.mjs'), entry: pathToFileURL(join(dirname(here), 'journal-worker.ts')).href };
  }
  return { filename: join(appRoot(), 'out', 'main', 'journal-worker.js') };
}

function errorFromReply(error: { name: string; message: string; code?: string }): Error {
  if (error.name === 'BundleError') return new BundleError(error.message);
  if (error.name === 'JournalError') return new JournalError((error.code ?? 'Io') as JournalErrorCode, error.message);
  const rebuilt = new Error(error.message);
  rebuilt.name = error.name;
  return rebuilt;
}

export class JournalWorkers {
  readonly size: number;
  private readonly slots = new Set<Slot>();
  private readonly queue: PendingJob[] = [];
  private nextId = 1;
  private closed = false;
  private spawned = 0;
  private crashed = 0;
  private retired = 0;
  private readonly answered: JobTimes = { jobs: 0, totalMs: 0, readMs: 0 };

  constructor(private readonly options: JournalWorkersOptions) {
    this.size = Math.max(1, Math.floor(options.size ?? availableParallelism()));
  }

  /** Workers started so far (replacements included), workers alive now, and jobs a dying worker failed. */
  /**
   * Whether workers can be started here: the built worker entry exists (a packaged app or a
   * build without it cannot), or this runs from source. Callers with a single-thread path take
   * it when this is false.
   */
  static available(): boolean {
    return existsSync(workerEntry().filename);
  }

  stats(): { started: number; alive: number; crashed: number; retired: number } {
    return { started: this.spawned, alive: this.slots.size, crashed: this.crashed, retired: this.retired };
  }

  /**
   * The jobs answered so far and what their workers measured of them (JobTiming), added up:
   * set against the wall time of the work that ran them, it says whether the workers were the
   * ones kept busy (bench journal-verify prints it).
   */
  jobTimes(): JobTimes {
    return { ...this.answered };
  }

  /** Runs one job in a worker; resolves with its result, or rejects with the worker's error. */
  run<K extends JobKind>(job: Extract<JournalJob, { kind: K }>): Promise<JobOutcome<K>> {
    if (this.closed) return Promise.reject(new JournalError('Closed', 'the journal is closed'));
    return new Promise<JobOutcome<K>>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, job, resolve: resolve as (outcome: JobOutcome<JobKind>) => void, reject });
      this.dispatch();
    });
  }

  /** Fails what is queued or running with JournalError('Closed') and ends every worker. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const slot of this.slots) if (slot.idle) clearTimeout(slot.idle);
    for (const pending of this.queue.splice(0)) pending.reject(new JournalError('Closed', `the journal closed before a worker ran its ${pending.job.kind}`));
    await Promise.all([...this.slots].map((slot) => slot.worker.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = [...this.slots].find((s) => s.job === null);
      if (!slot) {
        if (this.slots.size >= this.size) return;
        slot = this.spawn();
      }
      const pending = this.queue.shift()!;
      if (slot.idle) clearTimeout(slot.idle);
      slot.idle = null;
      slot.job = pending;
      slot.worker.ref();
      slot.worker.postMessage(JSON.stringify({ id: pending.id, job: pending.job } satisfies JobMessage));
    }
  }

  private spawn(): Slot {
    const { filename, entry } = workerEntry();
    const workerData: WorkerConfig = {
      ...(this.options.databasePath !== undefined ? { databasePath: this.options.databasePath } : {}),
      ...(this.options.busyTimeoutMs !== undefined ? { busyTimeoutMs: this.options.busyTimeoutMs } : {}),
      ...(this.options.lowPriority === false ? { lowPriority: false } : {}),
      ...(entry ? { entry } : {}),
    };
    const worker = new Worker(filename, { workerData });
    const slot: Slot = { worker, threadId: worker.threadId, job: null, fault: null, idle: null };
    this.spawned += 1;
    worker.on('message', (reply: WorkerReply) => this.onReply(slot, reply));
    // An uncaught error in the worker; 'exit' follows it, and settles the job.
    worker.on('error', (error) => {
      slot.fault = error;
    });
    worker.on('exit', (code) => this.onExit(slot, code));
    this.slots.add(slot);
    return slot;
  }

  private onReply(slot: Slot, message: WorkerReply): void {
    const reply = JSON.parse(typeof message === 'string' ? message : message.text) as ReplyMessage;
    const bytes = typeof message === 'string' ? undefined : message.bytes;
    const pending = slot.job;
    if (!pending || pending.id !== reply.id) return;
    slot.job = null;
    slot.worker.unref();
    this.answered.jobs += 1;
    this.answered.totalMs += reply.timing.totalMs;
    this.answered.readMs += reply.timing.readMs;
    if (reply.ok) pending.resolve({ result: reply.result as JobResults[JobKind], threadId: reply.threadId, timing: reply.timing, ...(bytes ? { bytes } : {}) });
    else pending.reject(errorFromReply(reply.error));
    this.dispatch();
    if (slot.job === null && !this.closed) this.retireWhenIdle(slot);
  }

  private retireWhenIdle(slot: Slot): void {
    if (slot.idle) clearTimeout(slot.idle);
    slot.idle = setTimeout(() => {
      slot.idle = null;
      if (slot.job !== null || this.closed) return;
      // Out of the pool first, so no job is handed to a worker on its way out; its exit then
      // finds no job to fail.
      this.slots.delete(slot);
      this.retired += 1;
      void slot.worker.terminate();
    }, this.options.idleMs ?? WORKER_IDLE_MS);
    slot.idle.unref();
  }

  private onExit(slot: Slot, code: number): void {
    this.slots.delete(slot);
    const pending = slot.job;
    slot.job = null;
    if (pending) {
      if (this.closed) {
        pending.reject(new JournalError('Closed', `the journal closed while a worker was running its ${pending.job.kind}`));
      } else {
        this.crashed += 1;
        const why = slot.fault ? `${slot.fault.name}: ${slot.fault.message}` : `it exited with code ${code}`;
        pending.reject(
          new JournalError('WorkerCrashed', `the journal worker (thread ${slot.threadId}) died while running ${pending.job.kind} (${why}); that job failed, and the next one gets a new worker`),
        );
      }
    }
    // Jobs waiting for a worker get a new one in place of the dead.
    if (!this.closed) this.dispatch();
  }
}

