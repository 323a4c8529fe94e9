/**
 * The tap's side of its journal worker (the worker is acp-tap-worker.ts). With no plane to
 * write through, the tap journals into the data dir itself, and everything that costs more than
 * framing runs in that `worker_threads` Worker, never on the thread that forwards the editor's
 * bytes: placing each message in its session's run (session-runs.ts), parsing, redaction and
 * caps (message-caps.ts), canonical JSON and hashing, and the SQLite commit. The commit is the
 * reason: every commit waits for its WAL to be on disk, and on the forwarding thread each one
 * stalled both of the editor's pipes for its whole length (measured when commits were
 * synchronous=FULL: the journal took about half of the tap's main-thread time, and a 1 KB round
 * trip's p50 went from 0.19 ms to 1.2 ms).
 *
 * - Framed lines wait in the ObservationQueue (bounded by bytes) and are posted once per turn
 *   of the event loop (setImmediate), as one message: their bytes copied into one fresh
 *   ArrayBuffer that is transferred, not cloned, with each event's place in it (until then a
 *   line may be a view of the chunk it was read in, wire-lines.ts `shareChunks`). Their bytes stay
 *   counted against the queue's bound until the worker says they are committed, so the bound
 *   covers the worker's backlog too and an overflow is still one `gap`, never a wait.
 * - The worker tells this side which runs it opened (sessions(), for the inbox's polling), and
 *   anything worth one line on stderr (a journal that cannot be written).
 * - finish() posts the tap's end and resolves once the worker has written tap/ended and the
 *   seals and closed the journal (its final checkpoint): the tap exits only after that, so
 *   every message forwarded is journaled by the time the process is gone. A worker that dies
 *   or cannot start ends the observing, said once; the forwarding goes on regardless.
 * - Only the worker opens the journal in this process: SQLite's locks belong to the process,
 *   and a second connection's close on this thread would drop the worker's (journal-workers.ts).
 *
 * Built (out/main, the CLI) the worker is its own entry, out/main/acp-tap-worker.js
 * (electron.vite.config.ts); from source (vitest, tsx) it is acp-tap-worker.ts, started through
 * the journal's tsx bootstrap (journal-worker-from-source.mjs), as journal-workers.ts does.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { WireDirection } from '../../../src-shared/protocol/acp/session-view';
import { appRoot } from '../../base/app-paths';
import type { ObservationQueue } from './observation-queue';
import type { TapEnd } from './session-runs';
import type { RecordMode } from '../../../src-shared/protocol/acp/evidence';

/** The worker's `workerData`. */
export interface TapWorkerConfig {
  dataDir: string;
  /** What every run's tap/started says besides its `at`. */
  started: { tapName: string; policy: string; record: RecordMode; command: string[] };
  /** The worker entry's URL, when it is started from source through the tsx bootstrap. */
  entry?: string;
}

/** A wire event as posted: its bytes (a line's, or an over-long line's head) are `bytes[offset, offset + length)` of the message. */
export type PostedEvent =
  | { kind: 'line'; dir: WireDirection; wire: number; at: string; offset: number; length: number; inserted?: boolean }
  | { kind: 'overlong'; dir: WireDirection; wire: number; at: string; size: number; digest: string; offset: number; length: number }
  | { kind: 'gap'; dropped: number; fromWire: number; toWire: number; at: string };

export type ToTapWorker =
  /** `held`: what these events count against the queue's bound, handed back in `written`. */
  | { type: 'events'; events: PostedEvent[]; bytes: ArrayBuffer; held: number }
  | { type: 'end'; end: TapEnd };

export type FromTapWorker =
  | { type: 'opened'; sessionId: string; runId: string }
  | { type: 'written'; held: number }
  | { type: 'notice'; message: string }
  | { type: 'closed' };

function workerEntry(): { filename: string; entry?: string } {
  const here = fileURLToPath(import.meta.url);
  if (here.endsWith('.ts')) {
    const bootstrap = join(dirname(here), '..', '..', 'journal', 'journal-worker-from-source.mjs');
    return { filename: bootstrap, entry: pathToFileURL(join(dirname(here), 'acp-tap-worker.ts')).href };
  }
  return { filename: join(appRoot(), 'out', 'main', 'acp-tap-worker.js') };
}

export class ObservationWorker {
  private readonly worker: Worker;
  private readonly runs = new Map<string, string>();
  private scheduled = false;
  private gone = false;
  private readonly exited: Promise<void>;

  constructor(
    private readonly queue: ObservationQueue,
    config: Omit<TapWorkerConfig, 'entry'>,
    private readonly notice: (message: string) => void,
  ) {
    const { filename, entry } = workerEntry();
    const workerData: TapWorkerConfig = { ...config, ...(entry ? { entry } : {}) };
    this.worker = new Worker(filename, { workerData });
    this.worker.on('message', (message: FromTapWorker) => this.onMessage(message));
    let fault: Error | null = null;
    this.worker.on('error', (error) => (fault = error));
    this.exited = new Promise<void>((resolve) =>
      this.worker.on('exit', (code) => {
        if (!this.gone && (code !== 0 || fault)) {
          this.notice(`the journal worker stopped (${fault ? fault.message : `exit ${code}`}); the session goes on unrecorded`);
        }
        this.gone = true;
        resolve();
      }),
    );
  }

  /** The runs the worker has opened so far, sessionId → runId. */
  sessions(): Array<{ sessionId: string; runId: string }> {
    return [...this.runs].map(([sessionId, runId]) => ({ sessionId, runId }));
  }

  /** Something was pushed onto the queue: it is posted once this turn's I/O has been handled. */
  schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.flush());
  }

  /** Posts the tap's end after what is queued; resolves once the worker has closed the journal (or is gone). */
  async finish(end: TapEnd): Promise<void> {
    this.flush();
    if (!this.gone) this.worker.postMessage({ type: 'end', end } satisfies ToTapWorker);
    await this.exited;
  }

  private flush(): void {
    this.scheduled = false;
    const { items, bytes: held } = this.queue.takeHeld();
    if (items.length === 0) return;
    if (this.gone) return;
    let total = 0;
    for (const item of items) total += item.kind === 'line' ? item.bytes.length : item.kind === 'overlong' ? item.head.length : 0;
    const buffer = new ArrayBuffer(total);
    const into = new Uint8Array(buffer);
    let offset = 0;
    const events: PostedEvent[] = [];
    const place = (bytes: Buffer) => {
      into.set(bytes, offset);
      offset += bytes.length;
      return { offset: offset - bytes.length, length: bytes.length };
    };
    for (const item of items) {
      if (item.kind === 'line') events.push({ kind: 'line', dir: item.dir, wire: item.wire, at: item.at, ...place(item.bytes), ...(item.inserted ? { inserted: true } : {}) });
      else if (item.kind === 'overlong') events.push({ kind: 'overlong', dir: item.dir, wire: item.wire, at: item.at, size: item.size, digest: item.digest, ...place(item.head) });
      else if (item.kind === 'gap') events.push(item);
    }
    this.worker.postMessage({ type: 'events', events, bytes: buffer, held } satisfies ToTapWorker, [buffer]);
  }

  private onMessage(message: FromTapWorker): void {
    switch (message.type) {
      case 'opened':
        this.runs.set(message.sessionId, message.runId);
        return;
      case 'written':
        this.queue.release(message.held);
        return;
      case 'notice':
        this.notice(message.message);
        return;
      case 'closed':
        // The journal is closed: what is left is the worker's own exit.
        this.gone = true;
        return;
    }
  }
}
