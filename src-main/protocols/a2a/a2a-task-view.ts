/**
 * Tasks as A2A 1.0 answers them, read from the runs they are. Vocabulary, kept at this adapter
 * (the core is not renamed after one protocol): a task IS a run (task id = run id, so GetTask
 * still answers after a restart), and its contextId is its run's context (the run itself when it
 * names none).
 * - running → WORKING; suspended (approval, input, budget, …) → INPUT_REQUIRED, its status message
 *   says what it waits for and where a person decides; sealed: succeeded → COMPLETED (the output
 *   as an artifact: a status-only completed task would discard the answer), failed/halted →
 *   FAILED, cancelled → CANCELED, denied → REJECTED.
 *
 * GetTask, ListTasks rows, subscriptions and push events (a2a-push.ts) all answer from here, so
 * a task has one state whichever way it is read.
 */
import type { RunView } from '../../../src-shared/ipc/contract';
import type { RunOutcome } from '../../../src-shared/vocabulary/runs';
import { waitSummary } from '../mcp/tool-result';
import type { Json } from './a2a-wire';

/** A task id is a run id: anything else names no task. */
export const RUN_ID = /^run-[0-9a-f]{20}$/;

/** A2A 1.0's task states, in the proto's numbering from 1 (0 is UNSPECIFIED). */
export const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;
export type TaskState = (typeof TASK_STATES)[number];

const SEALED_STATE: Record<RunOutcome, TaskState> = {
  succeeded: 'TASK_STATE_COMPLETED',
  observed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  halted: 'TASK_STATE_FAILED',
  cancelled: 'TASK_STATE_CANCELED',
  denied: 'TASK_STATE_REJECTED',
};

export function taskStateOf(run: RunView): TaskState {
  if (run.status === 'running') return 'TASK_STATE_WORKING';
  if (run.status === 'suspended') return 'TASK_STATE_INPUT_REQUIRED';
  return run.outcome ? SEALED_STATE[run.outcome] : 'TASK_STATE_COMPLETED';
}

const TERMINAL: ReadonlySet<TaskState> = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);

export const isTerminalState = (state: TaskState): boolean => TERMINAL.has(state);

export const INPUT_REQUIRED: TaskState = 'TASK_STATE_INPUT_REQUIRED';

/**
 * Where a stream (SubscribeToTask, SendStreamingMessage) ends: a terminal state, or
 * INPUT_REQUIRED, which may last as long as a person takes to answer (a2a-server.ts stream).
 */
export const endsStream = (state: TaskState): boolean => isTerminalState(state) || state === INPUT_REQUIRED;

/** The task's contextId: the run's context, or the run itself when it names none. */
export const contextOf = (run: RunView): string => run.context ?? run.runId;

function agentMessage(run: RunView, text: string): Json {
  return { messageId: `${run.runId}-status`, role: 'ROLE_AGENT', parts: [{ text }], taskId: run.runId, contextId: contextOf(run) };
}

export function artifactOf(run: RunView): Json | null {
  if (taskStateOf(run) !== 'TASK_STATE_COMPLETED' || run.result === undefined) return null;
  const part = typeof run.result === 'string' ? { text: run.result, mediaType: 'text/plain' } : { data: run.result as Json, mediaType: 'application/json' };
  return { artifactId: `${run.runId}-output`, name: 'output', parts: [part] };
}

/**
 * Whether a task is answered with its artifacts: `with` (GetTask, streams, push), `without` (a
 * ListTasks row not asking for them, as the spec's default), `omitted` (asked for, but past the
 * page's artifact budget: left out and marked, so a bounded answer is not shaped like a complete one).
 */
export type TaskArtifacts = 'with' | 'without' | 'omitted';

/** One task, one state: GetTask, ListTasks rows and subscription snapshots all come from here. */
export function taskOf(run: RunView, approveWith: (runId: string) => string, artifacts: TaskArtifacts = 'with'): Json {
  const state = taskStateOf(run);
  const status: Json = { state, timestamp: run.lastAt };
  if (run.status === 'suspended' && run.pending) {
    // A question (an input wait) may be answered by the caller's message naming this task
    // (a2a-continue.ts, where policy lets it); every other wait is a person's at the plane.
    const how = run.pending.reason === 'input' ? 'answer with a message naming this task (taskId), or a person answers at AgentPlane' : 'a person decides at AgentPlane';
    status.message = agentMessage(run, `waits for ${waitSummary(run.pending)}; ${how}: ${approveWith(run.runId)}`);
  } else if (state === 'TASK_STATE_FAILED' || state === 'TASK_STATE_REJECTED') {
    status.message = agentMessage(run, run.error ? `${run.error.code}: ${run.error.message}` : `the run ended ${run.outcome ?? 'unsuccessfully'}`);
  }
  const artifact = artifacts === 'with' ? artifactOf(run) : null;
  const metadata: Json = { 'io.agentplane/agent': run.agent, ...(artifacts === 'omitted' ? { 'io.agentplane.a2a/artifactsOmitted': true } : {}) };
  return { id: run.runId, contextId: contextOf(run), status, ...(artifact ? { artifacts: [artifact] } : {}), metadata };
}
