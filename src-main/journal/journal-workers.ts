/**
 * The journal's worker pool: whole-journal verification, exports and the runtime's start-up
 * scan run in `worker_threads`, so the thread that answers the UI, the bridge and the peers
 * keeps answering while they run. Verifying 100,000 records in-thread held every other request
 * for over a second.
 *
 * - Each worker reads through a read-only SQLite connection of its own, opened by better-sqlite3
 *   alone (SqliteJournalReader.open). SQLite's locks are POSIX advisory locks that belong to the
 *   process, not the thread, and closing any descriptor of the database, -wal or -shm drops all
 *   of them (see preparePrivateFiles in sqlite-store.ts), so a worker never opens, reads or
 *   closes those files itself, and never goes through SqliteJournalStore.open.
 * - What needs the plane's private key (signing the anchor of an export, or the head before the
 *   UI's verify) stays on the calling thread; a worker gets only public material.
 * - Jobs and their results cross as JSON text, so nothing but plain data can cross.
 * - The pool holds at most one worker per core (os.availableParallelism(), at least one), starts
 *   none until the first job, runs one job per worker at a time and queues the rest. A worker
 *   that dies mid-job (an uncaught error, process.exit, out of memory) fails that job with
 *   `JournalError('WorkerCrashed')` and is dropped; the next job gets a new one.
 * - A Journal owns one pool (`journal.workers`) and closes it when it closes, which is how the
 *   plane's close ends it: queued and running jobs fail with `JournalError('Closed')`.
 * - Idle workers are unref'd: a pool with nothing to do never keeps a process alive.
 */
import { rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { appRoot } from '../base/app-paths';
import {
  BundleError,
  partialFileOf,
  planExport,
  storeVerifyPlan,
  unexpectedKey,
  type BundleVerifyOptions,
  type ExportPlan,
  type ExportResult,
  type StoreVerifyPlan,
} from './bundle';
import type { Journal } from './journal';
import { JournalError, type JournalErrorCode } from './journal-error';
import { scanStoreRecords, type JournalScan } from './journal-scan';
import type { VerifyReport, VerifyScope } from './verify';

export type JournalJob =
  | { kind: 'verifyStore'; plan: StoreVerifyPlan }
  | { kind: 'scan'; plan: StoreVerifyPlan }
  | { kind: 'exportBundle'; plan: ExportPlan; file: string }
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
}

/** What the pool posts to a worker, as JSON text. */
export interface JobMessage {
  id: number;
  job: JournalJob;
}

/** What a worker posts back, as JSON text. */
export type ReplyMessage = { id: number; threadId: number; timing: JobTiming } & (
  | { ok: true; result: unknown }
  | { ok: false; error: { name: string; message: string; code?: string } }
);

/** What every worker is started with (its `workerData`). */
export interface WorkerConfig {
  databasePath: string;
  busyTimeoutMs?: number;
  /** The worker entry's URL, when it is started from source through the tsx bootstrap. */
  entry?: string;
}

export interface JournalWorkersOptions {
  /** The SQLite journal each worker opens read-only. */
  databasePath: string;
  /** At most this many workers; default the machine's available parallelism, at least 1. */
  size?: number;
  busyTimeoutMs?: number;
}

/** A journal this large or larger is scanned at start in a worker; a smaller one in-thread (a worker's start costs more than its scan). */
export const SCAN_IN_WORKER_FROM_RECORDS = 10_000;

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

  constructor(private readonly options: JournalWorkersOptions) {
    this.size = Math.max(1, Math.floor(options.size ?? availableParallelism()));
  }

  /** Workers started so far (replacements included), workers alive now, and jobs a dying worker failed. */
  stats(): { started: number; alive: number; crashed: number } {
    return { started: this.spawned, alive: this.slots.size, crashed: this.crashed };
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
      slot.job = pending;
      slot.worker.ref();
      slot.worker.postMessage(JSON.stringify({ id: pending.id, job: pending.job } satisfies JobMessage));
    }
  }

  private spawn(): Slot {
    const { filename, entry } = workerEntry();
    const workerData: WorkerConfig = {
      databasePath: this.options.databasePath,
      ...(this.options.busyTimeoutMs !== undefined ? { busyTimeoutMs: this.options.busyTimeoutMs } : {}),
      ...(entry ? { entry } : {}),
    };
    const worker = new Worker(filename, { workerData });
    const slot: Slot = { worker, threadId: worker.threadId, job: null, fault: null };
    this.spawned += 1;
    worker.on('message', (text: string) => this.onReply(slot, text));
    // An uncaught error in the worker; 'exit' follows it, and settles the job.
    worker.on('error', (error) => {
      slot.fault = error;
    });
    worker.on('exit', (code) => this.onExit(slot, code));
    this.slots.add(slot);
    return slot;
  }

  private onReply(slot: Slot, text: string): void {
    const reply = JSON.parse(text) as ReplyMessage;
    const pending = slot.job;
    if (!pending || pending.id !== reply.id) return;
    slot.job = null;
    slot.worker.unref();
    if (reply.ok) pending.resolve({ result: reply.result as JobResults[JobKind], threadId: reply.threadId, timing: reply.timing });
    else pending.reject(errorFromReply(reply.error));
    this.dispatch();
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

/**
 * `verifyJournalStore` in a journal worker: the same checks and the same report. The plan
 * (checkpoints, public key, journal id) is read here; the records are read and checked there.
 */
export async function verifyJournalStoreInWorker(journal: Journal, options: BundleVerifyOptions = {}): Promise<VerifyReport> {
  const refused = unexpectedKey(journal, options);
  if (refused) return refused;
  return (await journal.workers.run({ kind: 'verifyStore', plan: storeVerifyPlan(journal) })).result;
}

/**
 * `exportBundle` with the writing in a journal worker: the anchor is signed here (the key stays
 * on this thread), the records are read, proved and written there. A worker that dies
 * mid-export leaves no partial file behind.
 */
export async function exportBundleInWorker(journal: Journal, scope: VerifyScope, file: string): Promise<ExportResult> {
  const plan = await planExport(journal, scope);
  try {
    return (await journal.workers.run({ kind: 'exportBundle', plan, file })).result;
  } catch (error) {
    rmSync(partialFileOf(file), { force: true });
    throw error;
  }
}

/**
 * The runtime's start-up pass: verify the journal and index its unsealed runs and halts
 * (journal-scan.ts). A journal of SCAN_IN_WORKER_FROM_RECORDS records or more is scanned in a
 * worker; a smaller one here, where the pass costs less than starting a worker would.
 */
export async function scanWholeJournal(journal: Journal, plan: StoreVerifyPlan): Promise<JournalScan> {
  const head = await journal.head();
  if (head.seq < SCAN_IN_WORKER_FROM_RECORDS) return scanStoreRecords(journal.store, plan, { publicKey: journal.key.publicKey });
  return (await journal.workers.run({ kind: 'scan', plan })).result;
}
