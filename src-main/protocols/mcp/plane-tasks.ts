/**
 * The plane's runs as MCP tasks (the backend tasks.ts speaks the wire over).
 * docs/GOVERNED-RUNTIME.md, "MCP, being served": the task id IS the run id, so `tasks/get` is a
 * read of the journal through the door (`runs.get`) and the handle still means something after the
 * plane restarts; cancelling a task is the runtime's own cancellation (`runs.cancel`, honoured at
 * the next step boundary); both act only on runs the asker admitted: another caller's run id
 * answers exactly as an unknown id does (no such task), so a run id tells nobody else whether the
 * run exists.
 *
 * Status, from the run:
 * - running → working;
 * - suspended on an `input` wait → input_required (2026-07-28 carries the question as an
 *   `elicitation/create` input request keyed by the wait id; the answer comes back through
 *   `tasks/update` and is decided through the door like any answer, journaled with who gave it);
 * - suspended on anything else (approval, budget, recovery, payment, halt) → working, with a
 *   statusMessage saying it waits for a person at AgentPlane and where (`approveWith`): a
 *   person decides those, never the MCP host;
 * - sealed: succeeded → completed with the call's own result; cancelled → cancelled;
 *   failed, denied or halted → failed on 2025-11-25 (whose `failed` covers a tool result with
 *   isError), but completed with the isError result on 2026-07-28, whose extension reserves
 *   `failed` for JSON-RPC errors.
 */
import type { ServerContext } from '@modelcontextprotocol/server';
import type { CommandResponse, RunView } from '../../../src-shared/ipc/contract';
import type { McpCallContext, McpPlaneDoor } from './plane-door';
import { endedResult, succeededResult, waitSummary } from './tool-result';
import type { TaskBackend, TaskEra, TaskState } from './tasks';

const RUN_ID = /^run-[0-9a-f]{20}$/;
/** Runs looked at for tasks/list (runs.list's cap, newest first). */
const RUNS_SCANNED = 1000;
/** How long tasks/cancel waits for the runtime to seal a cancelled run before answering. */
const CANCEL_WAIT_MS = 2_000;
/** A run is re-read at least this often while someone waits on it, even with no journal notification. */
const REREAD_MS = 1_000;
/** The key a run's input question carries in `inputRequests` is its wait id. */
const ANSWER_FIELD = 'answer';

async function read<T>(door: McpPlaneDoor, name: string, request: unknown, context: McpCallContext): Promise<T | null> {
  const answer = await door.dispatch(name, request, context);
  return answer.ok ? (answer.value as T) : null;
}

/**
 * Re-reads the run on each journal commit naming it (and every REREAD_MS in case a commit is
 * missed) until `done(run)`, the deadline, or the signal; `onRun` sees every read. Answers null
 * if the run cannot be read. MCP's tasks and A2A's tasks follow runs with it.
 */
export async function followRun(
  door: McpPlaneDoor,
  runId: string,
  context: McpCallContext,
  options: { deadline: number; signal: AbortSignal; done: (run: RunView) => boolean; onRun?: (run: RunView) => void },
): Promise<RunView | null> {
  let wake = () => {};
  const unsubscribe = door.onJournal((runs) => {
    if (runs.some((r) => r.runId === runId)) wake();
  });
  try {
    for (;;) {
      // Armed before the read, so a commit between the read and the wait is not missed.
      const touched = new Promise<void>((resolve) => (wake = resolve));
      const run = await read<RunView>(door, 'runs.get', { runId }, context);
      if (run) options.onRun?.(run);
      const left = options.deadline - Date.now();
      if (!run || options.done(run) || left <= 0 || options.signal.aborted) return run;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        touched,
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, Math.min(left, REREAD_MS));
          options.signal.addEventListener('abort', () => resolve(), { once: true });
        }),
      ]);
      clearTimeout(timer);
    }
  } finally {
    unsubscribe();
  }
}

export function taskOfRun(run: RunView, era: TaskEra, approveWith: string): TaskState {
  const common = { taskId: run.runId, createdAt: run.admittedAt, lastUpdatedAt: run.lastAt, ttlMs: null };
  if (run.status === 'running') return { ...common, status: 'working', statusMessage: `run ${run.runId} (${run.agent}) is running` };
  if (run.status === 'suspended') {
    const wait = run.pending;
    if (wait?.reason === 'input') {
      const prompt = (wait.subject as { prompt?: unknown }).prompt;
      const message = typeof prompt === 'string' ? prompt : `run ${run.runId} (${run.agent}) asks for input`;
      return {
        ...common,
        status: 'input_required',
        statusMessage: `run ${run.runId} (${run.agent}) asks: ${message}`,
        inputRequests: {
          [wait.waitId]: {
            method: 'elicitation/create',
            params: { mode: 'form', message, requestedSchema: { type: 'object', properties: { [ANSWER_FIELD]: { type: 'string', title: 'Answer' } }, required: [ANSWER_FIELD] } },
          },
        } as TaskState['inputRequests'],
      };
    }
    const what = wait ? waitSummary(wait) : 'a decision';
    return {
      ...common,
      status: 'working',
      statusMessage: `run ${run.runId} (${run.agent}) waits for a person's approval at AgentPlane (${what}); approve at ${approveWith}`,
    };
  }
  if (run.outcome === 'succeeded') return { ...common, status: 'completed', result: succeededResult(run) };
  if (run.outcome === 'cancelled') return { ...common, status: 'cancelled', statusMessage: `run ${run.runId} (${run.agent}) was cancelled`, result: endedResult(run) };
  const ended = endedResult(run);
  const why = ended.content[0]?.type === 'text' ? ended.content[0].text : `run ${run.runId} ended ${run.outcome ?? 'without an outcome'}`;
  return { ...common, status: era === 'legacy' ? 'failed' : 'completed', statusMessage: why, result: ended };
}

/**
 * Asks the host for the answer a run waits for, inside a request of that host (2025-11-25:
 * elicitation/create on the `tasks/result` stream); answers whether it asked.
 */
export type AskHost = (run: RunView, ctx: ServerContext) => Promise<boolean>;

/** The plane's runs, for one MCP caller, as a task backend in one era. */
export function planeTasks(door: McpPlaneDoor, context: McpCallContext, era: TaskEra, askHost?: AskHost): TaskBackend {
  /** The caller's own run, or null (unknown, malformed, or someone else's: the same answer). */
  const ownRun = async (taskId: string): Promise<RunView | null> => {
    if (!RUN_ID.test(taskId)) return null;
    const run = await read<RunView>(door, 'runs.get', { runId: taskId }, context);
    return run && run.chain[0] === context.principal ? run : null;
  };
  const stateOf = (run: RunView) => taskOfRun(run, era, door.approveWith(run.runId));

  return {
    async get(taskId) {
      const run = await ownRun(taskId);
      return run ? stateOf(run) : null;
    },

    async cancel(taskId) {
      const run = await ownRun(taskId);
      if (!run) return null;
      if (run.status === 'sealed') return 'terminal';
      // runs.cancel journals the cancellation and answers once the run is sealed: at once for a
      // waiting run, at the next step boundary for a running one. The answer does not wait
      // longer than CANCEL_WAIT_MS for the latter; the cancellation stands either way.
      const cancelled = door.dispatch('runs.cancel', { runId: taskId, reason: `cancelled through MCP tasks/cancel by ${context.principal}` }, context);
      let timer: NodeJS.Timeout | undefined;
      const answer = await Promise.race([cancelled, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), CANCEL_WAIT_MS)))]);
      clearTimeout(timer);
      // Refused as already ended (it sealed meanwhile) or already being cancelled: nothing more to ask.
      if (answer && !answer.ok && answer.error.code !== 'AP_CONFLICT') throw new Error(answer.error.message);
      return 'requested';
    },

    async update(taskId, inputResponses) {
      const run = await ownRun(taskId);
      if (!run) return false;
      const wait = run.pending;
      const response = wait?.reason === 'input' ? (inputResponses[wait.waitId] as { action?: unknown; content?: Record<string, unknown> } | undefined) : undefined;
      const answer = response?.action === 'accept' ? response.content?.[ANSWER_FIELD] : undefined;
      // A key that is not outstanding, a decline, or no text: ignored, and the run keeps waiting.
      if (!wait || typeof answer !== 'string') return true;
      await door.dispatch(
        'approvals.decide',
        { runId: taskId, waitId: wait.waitId, decision: 'approve', subjectHash: wait.subjectHash, value: { kind: 'input', input: answer } },
        context,
      );
      return true;
    },

    async settled(taskId, ctx) {
      // Each input wait is asked of the host once per tasks/result (the spec's input_required
      // flow: the requestor calls tasks/result, the receiver sends its requests there). A
      // declined question leaves the run waiting for a person, and the call goes on waiting.
      const asked = new Set<string>();
      const askable = (r: RunView) => askHost !== undefined && r.status === 'suspended' && r.pending?.reason === 'input' && !asked.has(r.pending.waitId);
      for (;;) {
        const run = await followRun(door, taskId, context, { deadline: Number.POSITIVE_INFINITY, signal: ctx.mcpReq.signal, done: (r) => r.status === 'sealed' || askable(r) });
        if (!run || run.chain[0] !== context.principal) return null;
        if (!askable(run) || ctx.mcpReq.signal.aborted) return stateOf(run);
        asked.add(run.pending!.waitId);
        await askHost!(run, ctx).catch(() => false);
      }
    },

    async list() {
      const listed = await read<CommandResponse<'runs.list'>>(door, 'runs.list', { limit: RUNS_SCANNED }, context);
      return (listed?.runs ?? [])
        .filter((run) => run.chain[0] === context.principal)
        .map(stateOf);
    },
  };
}
