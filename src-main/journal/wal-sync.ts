/**
 * Making the journal's commits durable without stopping the event loop.
 *
 * better-sqlite3 is synchronous: under `synchronous=FULL` every COMMIT is an fdatasync of the
 * WAL taken on the calling thread, and the plane's one thread then reads no request, answers no
 * stream and runs no other run for the whole of it (measured: a quarter of a loaded peer's main
 * thread was that wait, and runs shared a commit only when they happened to reach it in the same
 * turn). So the writer connection runs with `synchronous=NORMAL`, under which a COMMIT writes
 * its WAL frames to the OS and returns, and the store then calls `durable()`, which syncs the
 * WAL file itself: on the calling thread while syncs are fast, on libuv's thread pool once they
 * are slow (below). The store acknowledges nothing before that sync has ended,
 * so the rule the journal keeps is the one FULL kept: a record is on disk before anyone is told
 * it was written.
 *
 * Why this is the same durability as FULL and not weaker:
 * - The WAL is written in commit order, and one fdatasync makes every frame written to the file
 *   before it started durable, the commit frame included. A sync that starts after a commit
 *   returned covers that commit.
 * - Under NORMAL SQLite still syncs the WAL before every checkpoint copies it into the database,
 *   syncs the database after, and syncs the WAL's header when it starts reusing the file, so no
 *   checkpoint or WAL restart can lose a commit that a sync here covered.
 * - A process crash loses nothing either way (the frames are in the OS's page cache); only a
 *   power loss tells the two apart, and it can only take commits nobody was told of.
 *
 * Group commit across turns: commits made while a sync is in flight all wait for the one sync
 * that starts when it ends, so under load the number of commits per fsync grows by itself and
 * the thread keeps reading requests meanwhile.
 *
 * Inline while syncs are fast. Handing a sync to the thread pool is not free: the pool thread
 * is woken, and the main thread woken again when it is done. Measured on a VM whose fdatasync
 * takes about 0.3 ms, a single append acknowledged after a pool sync took 590-685 µs against
 * 456-473 µs synced inline, and a peer's sequential ping 2.2 ms against 1.5 ms. So a lone
 * caller's sync runs inline, on the calling thread, as long as syncs are
 * fast, and moves to the pool once they are slow (a running average above `slowMs`, 2 ms by
 * default: a laptop disk under load, a network file system), where blocking the thread would
 * cost more than the hop; it comes back inline once the pool's syncs, hop included, average
 * under half that. Either way nothing is acknowledged before its sync has ended.
 *
 * Under load, off the thread whatever the disk's speed. A commit that answers more than one
 * caller (Journal.flush grouped several appends of one turn) says so, and its sync goes to the
 * pool: callers arriving together mean more are on their way, and the thread reads and runs them
 * while the disk works (their commits share the next sync if this one is still in flight), where
 * syncing inline stopped everything for the disk's whole wait. A lone caller (a sequential ping,
 * a single append, one batch) still syncs inline and pays no hop. Measured with a peer's pings
 * (docs/PERFORMANCE.md): 8,325-8,404 calls/s at 16 concurrent callers against 7,760-7,801 with
 * every sync inline, for the same CPU a call; one caller at a time unchanged.
 *
 * Committed is not acknowledged: another connection (the read side, a worker, the CLI) can see a
 * record before its sync ends, as it could see it between COMMIT and the caller's
 * acknowledgement before. Anything it does about the record is written after it in the WAL and
 * made durable by a later sync, which covers the record too.
 *
 * A failed sync cannot be retried: after an fsync error Linux may already have dropped the
 * dirty pages it could not write, and a second fsync can succeed without them. The first
 * failure is kept, every commit waiting on it and every later append is refused with it, and
 * nothing is acknowledged again until the plane reopens the journal (SQLite's recovery reads
 * what the file really holds).
 *
 * The WAL file is opened here read-only, once, and closed with the store. That is safe although
 * the journal's other files are never opened by this process outside SQLite
 * (sqlite-store.ts, preparePrivateFiles): POSIX locks belong to the process, and closing any
 * descriptor of a file drops every lock on it, but SQLite takes its locks on the database and the
 * -shm files, never on the -wal. fdatasync through a read-only descriptor flushes the file's
 * data all the same (it acts on the file, not the descriptor).
 */
import { closeSync, constants, fdatasync, fdatasyncSync, openSync } from 'node:fs';
import { JournalError } from './journal-error';

/** Syncs a file's data to disk; fdatasync on libuv's thread pool unless a test supplies its own. */
export type SyncFile = (fd: number) => Promise<void>;

export const fdatasyncOnPool: SyncFile = (fd) =>
  new Promise((resolve, reject) => {
    fdatasync(fd, (error) => (error ? reject(error) : resolve()));
  });

export interface WalSyncOptions {
  /** The off-thread sync (fdatasync on the thread pool unless a test holds or fails it). */
  syncFile?: SyncFile;
  /** The inline sync (fdatasyncSync unless a test supplies its own). */
  syncFileInline?: (fd: number) => void;
  /** The running average of a sync's time above which syncs leave the calling thread; 0: always off it. */
  slowMs?: number;
}

/** Weight of the newest sync in the running average of their times. */
const AVERAGE_WEIGHT = 0.2;

export class WalSync {
  private fd: number | null = null;
  private readonly syncFile: SyncFile;
  private readonly syncFileInline: (fd: number) => void;
  private readonly slowMs: number;
  /** Whether syncs run on the thread pool now (see "Inline while syncs are fast"). */
  private offThread: boolean;
  private averageMs = 0;
  /** The sync in flight, if any. */
  private running: Promise<void> | null = null;
  /** The sync that starts when `running` ends, shared by every commit made meanwhile. */
  private queued: Promise<void> | null = null;
  private failure: JournalError | null = null;
  private syncs = 0;
  private syncMs = 0;

  constructor(
    private readonly walPath: string,
    options: WalSyncOptions = {},
  ) {
    this.syncFile = options.syncFile ?? fdatasyncOnPool;
    this.syncFileInline = options.syncFileInline ?? fdatasyncSync;
    this.slowMs = options.slowMs ?? 2;
    this.offThread = this.slowMs <= 0;
  }

  /** Where syncs run now: on the calling thread while they are fast, on the thread pool once slow. */
  get mode(): 'inline' | 'thread-pool' {
    return this.offThread ? 'thread-pool' : 'inline';
  }

  /** The failure that stopped acknowledgements, if a sync failed. */
  get failed(): JournalError | null {
    return this.failure;
  }

  /** How many syncs have been started (for tests and the bench's notes). */
  get count(): number {
    return this.syncs;
  }

  /** Milliseconds spent in syncs so far, hop to the thread pool included (the bench's notes). */
  get totalMs(): number {
    return this.syncMs;
  }

  /**
   * Resolves once everything committed to the WAL before this call is on disk; rejects with the
   * first sync failure, for good. `offThread`: sync on the thread pool even while syncs are fast,
   * for a commit that answers several callers at once (see the module comment, "Under load").
   */
  durable(options: { offThread?: boolean } = {}): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.queued) return this.queued;
    if (!this.running) return this.offThread || options.offThread === true ? this.start() : this.syncInline();
    // A sync already in flight may have started before this caller's commit was written: it
    // waits for the next one, which every commit made until then shares.
    const queued = this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return this.start();
      });
    this.queued = queued;
    return queued;
  }

  /** Waits for the syncs in flight (a close must not pull the file from under one). */
  async idle(): Promise<void> {
    while (this.running || this.queued) await (this.queued ?? this.running)!.catch(() => undefined);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private start(): Promise<void> {
    const run = this.syncOnce().finally(() => {
      if (this.running === run) this.running = null;
    });
    this.running = run;
    return run;
  }

  /** One sync on the calling thread; the promise is settled when this returns. */
  private syncInline(): Promise<void> {
    this.syncs += 1;
    const started = performance.now();
    try {
      this.syncFileInline(this.openWal());
    } catch (error) {
      return Promise.reject(this.keepFailure(error));
    }
    this.timed(performance.now() - started);
    return Promise.resolve();
  }

  private async syncOnce(): Promise<void> {
    if (this.failure) throw this.failure;
    this.syncs += 1;
    const started = performance.now();
    try {
      await this.syncFile(this.openWal());
    } catch (error) {
      throw this.keepFailure(error);
    }
    this.timed(performance.now() - started);
  }

  private openWal(): number {
    this.fd ??= openSync(this.walPath, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    return this.fd;
  }

  /** Folds a sync's time into the running average and picks where the next one runs. */
  private timed(ms: number): void {
    this.syncMs += ms;
    this.averageMs += AVERAGE_WEIGHT * (ms - this.averageMs);
    if (this.slowMs <= 0) return;
    if (!this.offThread && this.averageMs > this.slowMs) this.offThread = true;
    else if (this.offThread && this.averageMs < this.slowMs / 2) this.offThread = false;
  }

  /** The first failure, kept: every later sync and append is refused with it. */
  private keepFailure(error: unknown): JournalError {
    const code = (error as NodeJS.ErrnoException).code ?? 'unknown';
    this.failure ??= new JournalError(
      'Io',
      `the journal's write-ahead log could not be synced to disk (${code}: ${(error as Error).message}); records written since the last sync are not known to be durable, so nothing more is acknowledged until the journal is reopened`,
    );
    return this.failure;
  }
}
