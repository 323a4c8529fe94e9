/**
 * The tap's journal worker (started by observation-worker.ts, which says why it exists): it
 * turns the framed lines the tap posts into Observation records and commits them to the data
 * dir's journal, opened directly as a peer process opens it (JournalSink: no plane.lock).
 *
 * Group commits: one loop takes whatever has arrived (up to COMMIT_RECORDS events), places it
 * in runs, hands every resulting write to the journal at once (which commits what is asked for
 * in one turn as one transaction: one fsync), and waits for that commit before it takes more.
 * While a commit runs, the tap's next messages queue up, so the slower the disk, the bigger the
 * next commit: the journal keeps up with a burst instead of paying an fsync per message. The
 * cap keeps one commit short enough that progress stays visible and memory flat under a long
 * burst. A message's bytes are handed back to the tap's bound (`written`) only once all its
 * records are committed (or have failed: observation is best effort, and a journal that cannot
 * be written is said once, not per record).
 *
 * At the end: what has arrived is committed, then each run gets tap/ended and its seal (which
 * counts the run's committed records, so the seals go one at a time, after everything else),
 * the journal is closed with its final checkpoint, `closed` is posted, and the worker lets its
 * port go and exits.
 *
 * The worker runs below normal priority where the OS gives each thread its own (Linux), as the
 * journal's own workers do: on a machine with few cores the editor, the agent, the tap's
 * forwarding and this thread compete for them during a burst, and as an equal this thread takes
 * CPU from the forwarding. It catches up when the burst ends; the queue's byte bound covers
 * what waits meanwhile.
 */
import { readlinkSync } from 'node:fs';
import { constants, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { JournalSink, ResilientSink } from './observation-sink';
import type { FromTapWorker, PostedEvent, TapWorkerConfig, ToTapWorker } from './observation-worker';
import { addPlaced, SessionRuns, type RunWrite, type TapEnd, type WireEvent } from './session-runs';

/** At most this many events go into one commit. */
const COMMIT_RECORDS = 2000;

const config = workerData as TapWorkerConfig;
const maybePort = parentPort;
if (!maybePort) throw new Error('acp-tap-worker.ts runs as the worker thread of the acp tap (observation-worker.ts)');
const port = maybePort;
const post = (message: FromTapWorker) => port.postMessage(message);

/** Lowers this thread's priority (Linux, where a nice value is per thread); a best effort. */
function yieldToTheForwarding(): void {
  if (process.platform !== 'linux') return;
  try {
    // /proc/thread-self names this thread's task id; readlink opens no descriptor.
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isSafeInteger(tid) && tid > 0) setPriority(tid, constants.priority.PRIORITY_BELOW_NORMAL);
  } catch {
    // Without it the worker simply competes for the CPU as an equal.
  }
}
yieldToTheForwarding();

const runs = new SessionRuns((at) => ({ update: 'tap/started', detail: { at, ...config.started } }), undefined, config.started.record);
// A failed write is retried, then written record by record, and what is still lost is a gap in
// its run (observation-sink.ts): one refused record never takes its commit's others with it.
const sink = new ResilientSink(new JournalSink(config.dataDir), (message) => post({ type: 'notice', message }));
const announced = new Set<string>();

interface Arrived {
  events: PostedEvent[];
  bytes: Buffer;
  held: number;
  /** The next of `events` to place. */
  next: number;
}
const arrived: Arrived[] = [];
let ending: TapEnd | null = null;
let pumping = false;

function write(runWrite: RunWrite): Promise<void> {
  return sink.write(runWrite);
}

function wireEvent(event: PostedEvent, bytes: Buffer): WireEvent {
  if (event.kind === 'gap') return event;
  const own = bytes.subarray(event.offset, event.offset + event.length);
  if (event.kind === 'overlong') return { kind: 'overlong', dir: event.dir, wire: event.wire, at: event.at, size: event.size, digest: event.digest, head: own };
  return { kind: 'line', dir: event.dir, wire: event.wire, at: event.at, bytes: own, ...(event.inserted ? { inserted: true } : {}) };
}

/** Places up to COMMIT_RECORDS of what has arrived; returns the writes and the bytes of the messages it finished. */
function takeBatch(): { writes: RunWrite[]; held: number } {
  const writes: RunWrite[] = [];
  let held = 0;
  let taken = 0;
  while (arrived.length > 0 && taken < COMMIT_RECORDS) {
    const message = arrived[0]!;
    while (message.next < message.events.length && taken < COMMIT_RECORDS) {
      taken += 1;
      for (const placed of runs.place(wireEvent(message.events[message.next++]!, message.bytes))) {
        if (!announced.has(placed.runId)) {
          announced.add(placed.runId);
          post({ type: 'opened', sessionId: placed.sessionId, runId: placed.runId });
        }
        // Consecutive observations of one run go in one batch.
        addPlaced(writes, placed);
      }
    }
    if (message.next === message.events.length) {
      arrived.shift();
      held += message.held;
    }
  }
  return { writes, held };
}

/** The one loop that writes: a commit at a time, then the end once everything before it is in. */
async function pump(): Promise<void> {
  if (pumping) return;
  pumping = true;
  try {
    while (arrived.length > 0) {
      const { writes, held } = takeBatch();
      // Handed to the journal all at once: it commits what is asked for in one turn together.
      await Promise.all(writes.map(write));
      if (held > 0) post({ type: 'written', held });
    }
    if (ending) await finish(ending);
  } finally {
    pumping = false;
  }
}

async function finish(end: TapEnd): Promise<void> {
  ending = null;
  // One at a time: each seal counts the records of its run committed before it.
  for (const runWrite of runs.end(end)) await write(runWrite);
  try {
    await sink.close();
  } catch (error) {
    post({ type: 'notice', message: `closing the journal failed: ${(error as Error).message}` });
  }
  post({ type: 'closed' });
  port.close();
}

port.on('message', (message: ToTapWorker) => {
  if (message.type === 'events') arrived.push({ events: message.events, bytes: Buffer.from(message.bytes), held: message.held, next: 0 });
  else ending = message.end;
  void pump();
});
