/**
 * `agentplane acp tap`: a stdio proxy an editor launches in place of its ACP agent. The agent
 * runs as our child; the editor's bytes reach it and its bytes reach the editor exactly as
 * sent (piped, never re-encoded), and stderr passes through. Beside the pipes, each direction
 * is framed into lines and pushed onto a queue bounded by bytes (observation-queue.ts); that
 * is all the forwarding thread does with them. The journal is therefore never on the
 * forwarding path: a slow journal costs a `gap` record, never a stalled editor.
 *
 * Where the lines go from the queue:
 * - `journalDir` (no plane runs): to a worker thread (observation-worker.ts, acp-tap-worker.ts)
 *   that places them in session runs (session-runs.ts), redacts and caps them, and commits
 *   them to the data dir's journal in group commits. A commit is an fsync: on this thread it
 *   stalled both pipes for its length, so it must not run here.
 * - `sink` (the plane's API, with the journal as fallback; or a test's sink): drained on this
 *   thread when the wire pauses (`takeWhenQuiet`). Sending to the plane is network I/O, and the
 *   plane's process commits. The plane client is the CLI's (cli/ sits above protocols/ in the
 *   layers), so it is not built inside the worker; and once the plane has failed, the fallback
 *   JournalSink commits on this thread, as before the worker existed (the rare path, but the
 *   one place an fsync still reaches the forwarding thread).
 *
 * Ending, whichever side goes first: the agent exits (its code, signal and stderr tail are
 * recorded), the editor closes our stdin (the agent's whole process group is ended: SIGTERM,
 * then SIGKILL after a grace, since an agent's own children would otherwise outlive the
 * session), or the tap itself is told to close. Then every open session run gets tap/ended and
 * is sealed as `observed`, the sink (or the worker's journal) is closed, and only then does the
 * tap exit with the agent's status: every line forwarded is journaled by the time it is gone.
 *
 * Under `--policy inbox` the two stdout/stdin pipes become line forwarders (line-forwarder.ts)
 * so that permission-relay.ts can withhold one whole line and insert its own between lines;
 * everything else still passes byte for byte, and the inserted lines are journaled too, marked
 * `origin: 'tap'`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import type { TapPolicy, WireDirection } from '../../../src-shared/protocol/acp/session-view';
import { LineFramer, type FramedLine } from './wire-lines';
import { ObservationQueue } from './observation-queue';
import { redactedCommand } from './message-caps';
import { addPlaced, SessionRuns, type RunWrite, type TapEnd } from './session-runs';
import { DEFAULT_RECORD_MODE, type RecordMode } from '../../../src-shared/protocol/acp/evidence';
import { ResilientSink, type ObservationSink } from './observation-sink';
import { ObservationWorker } from './observation-worker';
import { LineForwarder } from './line-forwarder';
import { PermissionRelay, type PermissionAnswer, type PermissionInbox } from './permission-relay';

export type { TapPolicy } from '../../../src-shared/protocol/acp/session-view';

interface TapCommonOptions {
  command: readonly string[];
  tapName: string;
  policy: TapPolicy;
  editorIn: Readable;
  editorOut: Writable;
  editorErr: Writable;
  /** A line longer than this is recorded as over cap (digest and size), never buffered whole. */
  maxLineBytes?: number;
  /** What framed lines waiting to be journaled may hold (their bytes, plus 64 each) before a gap. */
  queueBytes?: number;
  /** Between SIGTERM and SIGKILL of the agent's process group. */
  killGraceMs?: number;
  /** Said once when a write to the sink fails (the tap keeps forwarding). */
  notice?: (message: string) => void;
  /** With `policy: 'inbox'`: where permission requests are held for a person (permission-relay.ts). */
  inbox?: PermissionInbox;
  /** `evidence` (default): presentation updates go to the transcript store, named in the journal; `full`: every message is journaled. */
  record?: RecordMode;
}

/** Exactly one of: a sink on this thread, or a data dir whose journal the tap's worker writes. */
export type TapOptions = TapCommonOptions & ({ sink: ObservationSink; journalDir?: never } | { journalDir: string; sink?: never });

export interface TapResult {
  end: TapEnd;
  /** The exit status the tap should end with: the agent's, or 128+signal. */
  exitCode: number;
}

export interface RunningTap {
  readonly agent: ChildProcess;
  /** Ends the session as `closed` (the tap was told to stop). */
  close(): void;
  /** The session runs open so far. */
  sessions(): Array<{ sessionId: string; runId: string }>;
  /** Under `inbox`: a person's answer to a held request; false when it is no longer open. */
  answerPermission(requestKey: string, answer: PermissionAnswer): boolean;
  readonly done: Promise<TapResult>;
}

const STDERR_TAIL = 2048;
/** The wire pause after which observations are journaled, and the longest they wait under unbroken traffic. */
const QUIET_MS = 50;
const MAX_DELAY_MS = 1000;
/** The default bound: a 10,000-message burst of 1 KB each way, and several more, fits. */
const QUEUE_BYTES = 64 * 1024 * 1024;

export function startTap(options: TapOptions): RunningTap {
  const [file, ...args] = options.command;
  if (!file) throw new Error('no agent command given');
  const grace = options.killGraceMs ?? 2000;
  const queue = new ObservationQueue(options.queueBytes ?? QUEUE_BYTES);
  const record = options.record ?? DEFAULT_RECORD_MODE;
  const started = { tapName: options.tapName, policy: options.policy, record, command: redactedCommand(options.command) };
  const observer = options.journalDir !== undefined ? new ObservationWorker(queue, { dataDir: options.journalDir, started }, (message) => options.notice?.(message)) : null;
  let wire = 0;
  // A burst's lines mostly come many to a chunk, read in the same millisecond: the timestamp's
  // text is made once per millisecond, not once per line.
  let atMs = Number.NaN;
  let atText = '';
  const framed = (dir: WireDirection, inserted = false) => (line: FramedLine) => {
    if (line.kind === 'line' && isBlank(line.bytes)) return;
    const now = Date.now();
    if (now !== atMs) {
      atMs = now;
      atText = new Date(now).toISOString();
    }
    const at = atText;
    wire += 1;
    if (line.kind === 'line') queue.push({ kind: 'line', dir, wire, at, bytes: line.bytes, ...(inserted ? { inserted } : {}) });
    else queue.push({ kind: 'overlong', dir, wire, at, size: line.size, digest: line.digest, head: line.head });
    observer?.schedule();
  };
  const maxLine = options.maxLineBytes ?? 16 * 1024 * 1024;
  // Lines may be views of what was read only where they leave the queue in the same turn: the
  // worker's flush (wire-lines.ts says why); a sink on this thread holds them until the wire pauses.
  const shareChunks = observer !== null;
  const toAgent = new LineFramer(maxLine, framed('toAgent'), shareChunks);
  const toEditor = new LineFramer(maxLine, framed('toEditor'), shareChunks);

  // detached: the agent leads a process group of its own, so ending the session ends its children too.
  const agent = spawn(file, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stderrTail = Buffer.alloc(0);
  let reason: TapEnd['reason'] | null = null;
  let spawnError: Error | null = null;

  const killGroup = (signal: NodeJS.Signals) => {
    if (agent.pid === undefined) return;
    try {
      process.kill(-agent.pid, signal);
    } catch {
      // ESRCH: the group is gone already.
    }
  };
  let killTimer: NodeJS.Timeout | null = null;
  const endAgent = (why: TapEnd['reason']) => {
    reason ??= why;
    if (killTimer) return;
    agent.stdin.end();
    killGroup('SIGTERM');
    killTimer = setTimeout(() => killGroup('SIGKILL'), grace);
    killTimer.unref();
  };

  // Forwarding: plain pipes (with their backpressure) unless the inbox needs whole lines; the
  // framers only listen, so what is observed is what each side sent.
  let relay: PermissionRelay | null = null;
  if (options.policy === 'inbox' && options.inbox) {
    const observeInserted = (dir: WireDirection, line: Buffer) => framed(dir, true)({ kind: 'line', bytes: line.subarray(0, line.length - 1) });
    const toAgentLines = new LineForwarder(agent.stdin, 64 * 1024, (line) => relay!.fromEditor(line));
    const toEditorLines = new LineForwarder(options.editorOut, 64 * 1024, (line) => (relay!.fromAgent(line), true));
    relay = new PermissionRelay(options.inbox, (dir, line) => {
      observeInserted(dir, line);
      (dir === 'toAgent' ? toAgentLines : toEditorLines).insert(line);
    });
    forwardLines(options.editorIn, agent.stdin, toAgentLines, true);
    forwardLines(agent.stdout, options.editorOut, toEditorLines, false);
  } else {
    options.editorIn.pipe(agent.stdin);
    agent.stdout.pipe(options.editorOut, { end: false });
  }
  options.editorIn.on('data', (chunk: Buffer) => toAgent.push(chunk));
  options.editorIn.on('end', () => {
    toAgent.end();
    endAgent('editor-disconnect');
  });
  options.editorIn.on('error', () => endAgent('closed'));
  agent.stdin.on('error', () => undefined); // EPIPE once the agent has gone: its exit is what we record
  agent.stdout.on('data', (chunk: Buffer) => toEditor.push(chunk));
  options.editorOut.on('error', () => endAgent('closed'));
  agent.stderr.on('data', (chunk: Buffer) => {
    options.editorErr.write(chunk);
    stderrTail = Buffer.concat([stderrTail, chunk]);
    if (stderrTail.length > STDERR_TAIL) stderrTail = stderrTail.subarray(stderrTail.length - STDERR_TAIL);
  });

  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    agent.on('error', (error) => {
      spawnError = error;
      resolve({ code: null, signal: null });
    });
    agent.on('exit', (code, signal) => resolve({ code, signal }));
  });
  // Everything the agent wrote is read before the session is ended (or, if a leftover child
  // holds its pipes open, after the grace).
  const drained = new Promise<void>((resolve) => agent.on('close', () => resolve()));

  // With a sink on this thread, the runs are placed here too; with the worker, there.
  const runs = observer ? null : new SessionRuns((at) => ({ update: 'tap/started', detail: { at, ...started } }), undefined, record);
  // A failed write is retried, then written record by record, and what is still lost is a gap
  // in its run (observation-sink.ts); the editor's session goes on whatever the journal does.
  const sink = runs ? new ResilientSink(options.sink!, (message) => options.notice?.(message)) : null;
  const write = (runWrite: RunWrite): Promise<void> => sink!.write(runWrite);
  const written = runs ? drain(queue, runs, write) : Promise.resolve();

  const done = (async (): Promise<TapResult> => {
    const status = await exited;
    reason ??= 'agent-exit';
    await Promise.race([drained, new Promise((r) => setTimeout(r, grace).unref())]);
    // Nothing of the group may outlive the session, whoever ended it.
    killGroup('SIGKILL');
    if (killTimer) clearTimeout(killTimer);
    if (!relay) options.editorIn.unpipe(agent.stdin);
    toEditor.end();
    const tail = stderrTail.toString('utf8') + (spawnError ? `${stderrTail.length ? '\n' : ''}cannot start ${file}: ${(spawnError as Error).message}` : '');
    const end: TapEnd = { at: new Date().toISOString(), reason, exitCode: status.code, signal: status.signal, stderrTail: tail.slice(-STDERR_TAIL) };
    queue.end();
    if (observer) {
      // Every line forwarded is journaled, the runs sealed and the journal closed before the tap exits.
      await observer.finish(end);
    } else {
      await written;
      for (const runWrite of runs!.end(end)) await write(runWrite);
      await sink!.close().catch((error: unknown) => options.notice?.(`closing the journal failed: ${(error as Error).message}`));
    }
    const exitCode = status.code ?? (status.signal ? 128 + signalNumber(status.signal) : spawnError ? 127 : 1);
    return { end, exitCode };
  })();

  return { agent, close: () => endAgent('closed'), sessions: () => (observer ? observer.sessions() : runs!.openRuns()), answerPermission: (key, answer) => relay?.answer(key, answer) ?? false, done };
}

/** Feeds `source` through a LineForwarder into `dest`, pausing the source while `dest` is full. */
function forwardLines(source: Readable, dest: Writable, lines: LineForwarder, endDest: boolean): void {
  source.on('data', (chunk: Buffer) => {
    if (!lines.push(chunk)) {
      source.pause();
      dest.once('drain', () => source.resume());
    }
  });
  source.on('end', () => {
    lines.end();
    if (endDest) dest.end();
  });
}

/** Drains the queue into a sink on this thread until the 'end' item, one run write at a time. */
async function drain(queue: ObservationQueue, runs: SessionRuns, write: (runWrite: RunWrite) => Promise<void>): Promise<void> {
  for (;;) {
    // Written when the wire pauses (observation-queue.ts): a slice of at most 500 messages, so
    // one commit holds the event loop, and with it the forwarding, for tens of milliseconds at most.
    const items = await queue.takeWhenQuiet(500, QUIET_MS, MAX_DELAY_MS);
    const writes: RunWrite[] = [];
    let ended = false;
    for (const item of items) {
      if (item.kind === 'end') {
        ended = true;
        break;
      }
      // Consecutive observations of one run go in one commit.
      for (const placed of runs.place(item)) addPlaced(writes, placed);
    }
    for (const runWrite of writes) await write(runWrite);
    if (ended) return;
    queue.restartQuiet();
  }
}

/** A line of nothing but whitespace (JSON's own: space, tab, CR) is a keep-alive, not a message. */
function isBlank(bytes: Buffer): boolean {
  // Indexed, not for…of: this runs for every line on the forwarding thread, and a message's first byte decides.
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  }
  return true;
}

function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGTERM: 15 };
  return numbers[signal] ?? 0;
}
