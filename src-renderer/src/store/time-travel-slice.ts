/**
 * Time travel over recorded runs (docs/GOVERNED-RUNTIME.md, "Fork, replay, diff"): forking a run
 * from one of its steps, replaying it dry against a changed manifest, input or model, and
 * comparing two runs step by step. Every answer is the plane's: the fork is a run like any
 * other (shown as soon as the plane returns it, then followed through the journal as every run
 * is), a replay report and a diff are shown as they came.
 *
 * A diff is read once per pair of runs opened and again when either run changes while it is
 * shown (a fork still running grows its steps); large values arrive as a digest and are opened
 * one record at a time by their seq.
 */
import type { RecordView, RunView } from '../../../src-shared/ipc/contract';
import { ErrorCode } from '../../../src-shared/ipc/error-codes';
import type { Result } from '../../../src-shared/ipc/result';
import type { ForkRequest, ReplayReport, ReplayRequest, RunDiff } from '../../../src-shared/protocol/time-travel';
import type { SliceDeps } from './store-types';

export interface DiffState {
  a: string;
  b: string;
  loading: boolean;
  diff: RunDiff | null;
  error: string | null;
  /** Bumped on every read: late answers for an earlier pair are dropped. */
  generation: number;
}

export interface TimeTravelSlice {
  /** The comparison on screen (or last shown). */
  runDiff: DiffState | null;
  loadDiff(a: string, b: string): Promise<void>;
  /** A new run of the same agent, its steps before `at` taken from the parent's record. */
  forkRun(request: ForkRequest): Promise<Result<RunView>>;
  /** Where the run would first diverge under the changes, performing nothing. */
  replayRun(request: ReplayRequest): Promise<Result<ReplayReport>>;
  /** The run's input, as its admission recorded it (the fork form starts from it). */
  readRunInput(runId: string): Promise<Result<unknown>>;
  /** One record of a run by its seq (a large value shown by digest in a diff, opened). */
  readRecord(runId: string, seq: number): Promise<Result<RecordView>>;
  /** The run's records in the `count` seqs before `seq` (a step's start, read from its answer's seq). */
  readRecordsBefore(runId: string, seq: number, count: number): Promise<Result<RecordView[]>>;
}

const notFound = (message: string): Result<never> => ({ ok: false, error: { code: ErrorCode.NotFound, message } });

export function createTimeTravelSlice({ set, get, client }: SliceDeps): TimeTravelSlice {
  let generation = 0;
  return {
    runDiff: null,

    async loadDiff(a, b) {
      const mine = ++generation;
      const current = get().runDiff;
      const same = current !== null && current.a === a && current.b === b;
      // Re-reading the pair on screen keeps its rows while the new answer comes.
      set({ runDiff: { a, b, loading: true, diff: same ? current.diff : null, error: null, generation: mine } });
      const result = await client.tryCall('runs.diff', { a, b });
      if (get().runDiff?.generation !== mine) return;
      if (result.ok) set({ runDiff: { a, b, loading: false, diff: result.value, error: null, generation: mine } });
      else set({ runDiff: { a, b, loading: false, diff: same ? current.diff : null, error: result.error.message, generation: mine } });
    },

    async forkRun(request) {
      const result = await client.tryCall('runs.fork', request);
      if (result.ok) {
        const run = result.value;
        set((s) => ({ runs: { ...s.runs, [run.runId]: run }, runHosts: { ...s.runHosts, [run.runId]: run.host } }));
        get().announce(`Fork of ${request.runId} at step ${request.at} started: ${run.runId}.`);
      }
      return result;
    },

    replayRun(request) {
      return client.tryCall('runs.replay', request);
    },

    async readRunInput(runId) {
      // A run's records start with its admission, which holds the input as the run received it.
      const result = await client.tryCall('journal.records', { runId, fromSeq: 1, limit: 1 });
      if (!result.ok) return result;
      const admitted = result.value.records[0];
      if (!admitted || admitted.kind !== 'RunAdmitted') return notFound(`the journal holds no admission for ${runId}`);
      return { ok: true, value: admitted.body.input };
    },

    async readRecord(runId, seq) {
      const result = await client.tryCall('journal.records', { runId, fromSeq: seq, limit: 1 });
      if (!result.ok) return result;
      const record = result.value.records[0];
      if (!record || record.seq !== seq) return notFound(`the journal holds no record ${seq} of ${runId}`);
      return { ok: true, value: record };
    },

    async readRecordsBefore(runId, seq, count) {
      const fromSeq = Math.max(1, seq - count);
      const result = await client.tryCall('journal.records', { runId, fromSeq, limit: Math.max(1, seq - fromSeq) });
      return result.ok ? { ok: true, value: result.value.records.filter((r) => r.seq < seq) } : result;
    },
  };
}
