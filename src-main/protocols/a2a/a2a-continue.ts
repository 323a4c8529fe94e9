/**
 * Continuing an INPUT_REQUIRED task by message (docs/GOVERNED-RUNTIME.md, "A2A, being called":
 * "Context continues with a new task; task input continues the same run"). A message carrying
 * `taskId` answers the question the named run stopped on, and the run goes on from exactly that
 * journaled wait: it is not a new run, and it is not matched to a run by anything in its content
 * (two tasks may wait on the same business key; the task id names the one).
 *
 * The rules, in the order they are applied:
 * - The task must be the caller's own and this agent's: another caller's task, another agent's,
 *   or an unknown id answer TaskNotFound (-32001) alike, before anything else is looked at, so a
 *   task id tells nobody else it exists. The runtime checks the owner again (runs.answer), so the
 *   rule does not rest on this adapter.
 * - A supplied `contextId` must be the task's context (a2a-task-view.ts contextOf): -32602 otherwise.
 *   The task id alone names the run; a context id that disagrees is a caller confused about
 *   which conversation it is in, and answering would put its answer in the wrong one.
 * - The answer is the message's one part: a data part is that object, a text part that string;
 *   raw and url parts are not accepted (-32005). An input wait asks a prompt and carries no schema,
 *   so any JSON the journal can hold answers it; one it cannot (a lone surrogate, an integer beyond
 *   2^53) is -32602 naming where, and the run keeps waiting.
 * - The caller and the message's stable `messageId` are the answer's identity: the same message
 *   sent again after its answer landed returns the task as it stands and applies nothing twice
 *   (the runtime finds the decision that names it, under the lock decisions are made under); the
 *   same id with another answer is -32602 naming message.messageId.
 * - Only an `input` wait can be answered by a caller. Approval, payment, budget, oversight,
 *   recovery and halt waits are a person's decision at this plane, refused by name whatever the
 *   policy says: a caller must never approve its own run's risky effect.
 * - Policy is asked twice, in A2A's words: `a2a:task.continue` on `agent:<agent>` (may this caller
 *   continue its task at all) and `a2a:event.deliver` on `wait:<reason>` (may it supply this kind
 *   of event; the question the plane's event door asks as `api:event.deliver`, so a rule narrowing
 *   which kinds a caller may answer holds on every door). A refusal is the same decline Message a
 *   refused admission gets (a2a-server.ts declineOf): a decision that will not change on a retry.
 * - A task that is not waiting for input (working, or ended) is refused naming its state
 *   (-32004: the spec's answer to a message for a terminal task).
 *
 * The answer is journaled as a Decision approving the wait with the input, `by` the caller (not
 * the person at the plane) and naming the messageId.
 */
import type { AgentSummary, CommandResponse, RunView } from '../../../src-shared/ipc/contract';
import { ErrorCode } from '../../../src-shared/ipc/errors';
import type { Result } from '../../../src-shared/ipc/result';
import { isRunId } from '../../../src-shared/vocabulary/ids';
import { waitSummary } from '../mcp/tool-result';
import { contextOf, taskStateOf } from './a2a-task-view';
import { A2A_ERRORS, RpcError } from './a2a-wire';

type Json = Record<string, unknown>;

export interface ContinueDeps {
  /** The plane's door, acting for the A2A caller. */
  dispatch(name: string, request: unknown): Promise<Result<unknown>>;
  /** The authenticated caller (`a2a:local`). */
  principal: string;
  /** The runtime host this endpoint answers for (a2a-server.ts A2aServerOptions.host). */
  host: string;
  /** Where a person decides a waiting run. */
  approveWith(runId: string): string;
  /** The Message an agent declines with (a2a-server.ts declineOf). */
  decline(): Json;
}

/** The answer a message carries: its one data part's object, or its one text part's string. */
export function answerOf(message: Json): unknown {
  const parts = message.parts;
  if (!Array.isArray(parts) || parts.length !== 1) {
    throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: a message continuing a task holds exactly one part, the answer (a text part, or a data part for an object)', { field: 'message.parts' });
  }
  const part = parts[0] as Json;
  const members = typeof part === 'object' && part !== null ? ['text', 'data', 'raw', 'url'].filter((k) => part[k] !== undefined) : [];
  if (members.length !== 1) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: a part holds exactly one of text, data, raw, url', { field: 'message.parts[0]' });
  if (members[0] === 'raw' || members[0] === 'url') {
    throw new RpcError(A2A_ERRORS.contentTypeNotSupported, 'raw and url parts are not accepted: answer with a text part, or a data part for an object', { field: 'message.parts[0]' });
  }
  if (members[0] === 'data') {
    if (typeof part.data !== 'object' || part.data === null || Array.isArray(part.data)) {
      throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.parts[0].data must be an object (the answer)', { field: 'message.parts[0].data' });
    }
    return part.data;
  }
  if (typeof part.text !== 'string') throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.parts[0].text must be a string', { field: 'message.parts[0].text' });
  return part.text;
}

/** The refusal for a task that cannot take an answer now, naming its state (and, for a person's wait, where they decide). */
function notAnswerable(run: RunView, approveWith: (runId: string) => string): RpcError {
  const state = taskStateOf(run);
  if (run.status === 'suspended' && run.pending && run.pending.reason !== 'input') {
    return new RpcError(A2A_ERRORS.unsupportedOperation, `task ${run.runId} waits for ${waitSummary(run.pending)}; a person decides at AgentPlane: ${approveWith(run.runId)}. A message answers only a task's question (input).`, {
      taskId: run.runId,
      state,
      waitsFor: run.pending.reason,
    });
  }
  const now = run.status === 'sealed' ? `has ended (${state})` : `is ${state}, not waiting for input`;
  return new RpcError(A2A_ERRORS.unsupportedOperation, `task ${run.runId} ${now}: a message naming it answers only a task in TASK_STATE_INPUT_REQUIRED${run.status === 'sealed' ? '; send a message without taskId to start a new task' : ''}`, { taskId: run.runId, state });
}

/**
 * Answers the task the message names. `{run}` when the answer was taken (or had been: a repeated
 * message), `{declined}` when policy refused it; every other outcome is an RpcError.
 */
export async function continueTask(deps: ContinueDeps, agent: AgentSummary, params: Json): Promise<{ run: RunView } | { declined: Json }> {
  const message = params.message as Json;
  const taskId = message.taskId;
  if (typeof taskId !== 'string' || taskId.length === 0) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.taskId must be a task id', { field: 'message.taskId' });
  const read = isRunId(taskId) ? await deps.dispatch('runs.get', { runId: taskId }) : null;
  const task = read?.ok ? (read.value as RunView) : null;
  // Another caller's task, another agent's, another endpoint's, and an unknown one answer alike.
  if (!task || task.chain[0] !== deps.principal || task.agent !== agent.name || task.host !== deps.host) throw new RpcError(A2A_ERRORS.taskNotFound, `no task ${taskId}`, { taskId });
  if (typeof message.messageId !== 'string' || message.messageId.length > 200) {
    throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.messageId must be at most 200 characters (it is the answer\'s identity, kept in the journal)', { field: 'message.messageId' });
  }
  if (message.contextId !== undefined && message.contextId !== contextOf(task)) {
    throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: message.contextId ${JSON.stringify(message.contextId)} is not task ${task.runId}'s context (${contextOf(task)})`, { field: 'message.contextId' });
  }
  if (((params.configuration ?? {}) as Json).taskPushNotificationConfig !== undefined) {
    throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: a message continuing a task sets no push config; use CreateTaskPushNotificationConfig on the task', { field: 'configuration.taskPushNotificationConfig' });
  }
  const input = answerOf(message);
  const answer = await deps.dispatch('runs.answer', { runId: task.runId, messageId: message.messageId, input });
  if (answer.ok) return { run: (answer.value as CommandResponse<'runs.answer'>).run };
  const body = answer.error;
  switch (body.code) {
    case ErrorCode.NotFound:
      throw new RpcError(A2A_ERRORS.taskNotFound, `no task ${taskId}`, { taskId });
    case ErrorCode.Forbidden:
      return { declined: deps.decline() };
    case ErrorCode.BadRequest:
      // The runtime's words name what was wrong: the value, or a messageId reused for another answer.
      throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${body.message}`, { field: body.message.startsWith('messageId') ? 'message.messageId' : 'message.parts[0]' });
    case ErrorCode.Conflict: {
      // Not waiting for input (any more): said with the task's state as it is now.
      const now = await deps.dispatch('runs.get', { runId: task.runId });
      throw notAnswerable(now.ok ? (now.value as RunView) : task, deps.approveWith);
    }
    case ErrorCode.UnknownCommand:
      // A door without runs.answer (a peer's port): its runs are answered at the plane.
      throw new RpcError(A2A_ERRORS.unsupportedOperation, 'continuing a task by message is not served here: a person answers a waiting run at AgentPlane', { field: 'message.taskId' });
    default:
      throw Object.assign(new Error(body.message), { body });
  }
}
