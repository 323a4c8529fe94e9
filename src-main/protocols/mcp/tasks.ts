/**
 * MCP Tasks on a served surface: the wire of both revisions, over one small backend a surface
 * implements (the plane's runs in plane-tasks.ts, an in-memory table in the conformance fixtures).
 *
 * The two revisions say different things, so each is spoken as written:
 * - 2025-11-25 (base specification, basic/utilities/tasks): the requestor asks for a task
 *   (`params.task` on `tools/call`) where the server declared `capabilities.tasks` and the tool
 *   `execution.taskSupport`. The answer is `{task: Task}` (`ttl`, `pollInterval`); `tasks/get`
 *   answers the Task, `tasks/result` blocks until the task is terminal and answers the call's own
 *   result (with `_meta["io.modelcontextprotocol/related-task"]`), `tasks/cancel` answers the
 *   cancelled Task and refuses a terminal one with -32602, `tasks/list` lists. A tool result with
 *   `isError` is `failed` in this revision.
 * - 2026-07-28 (the `io.modelcontextprotocol/tasks` extension, SEP-2663): negotiated per request
 *   through `_meta["io.modelcontextprotocol/clientCapabilities"].extensions`, advertised under
 *   `capabilities.extensions`; the server decides. The answer is a flat `CreateTaskResult`
 *   (`resultType: "task"`, `ttlMs`, `pollIntervalMs`); `tasks/get` inlines `result`, `error` or
 *   `inputRequests`; `tasks/update` delivers `inputResponses`; `tasks/cancel` answers an empty
 *   ack (also for a terminal task). `tasks/result` and `tasks/list` do not exist (the SDK's 2026
 *   codec answers them -32601). Without the extension, the task methods answer -32021 naming it.
 *   A tool result with `isError` is `completed` here ("failed" is reserved for JSON-RPC errors).
 *
 * SDK v2 (2.4.0) has no Tasks runtime; it lets a low-level `Server` register these methods with
 * explicit schemas (`setRequestHandler(method, {params}, handler)`): on 2026-07-28 only that form
 * reaches `tasks/get` and `tasks/cancel` (its era gate lets SEP-2663's re-used names through for
 * handlers registered with a schema), and `tasks/update` is not a spec method in either era.
 * The SDK itself strips `execution` from tools/list and `capabilities.tasks` on 2026-07-28, and
 * validates the `Mcp-Name` header against `params.taskId` for the three task methods.
 */
import * as z from 'zod';
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type InputRequests,
  type Server,
  type ServerCapabilities,
  type ServerContext,
  type TaskStatus,
} from '@modelcontextprotocol/server';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** What a client may say in a CreateTaskResult's `_meta` for the model meanwhile (2025-11-25, provisional). */
export const MODEL_IMMEDIATE_RESPONSE_META_KEY = 'io.modelcontextprotocol/model-immediate-response';
/** Suggested interval between polls (ms). */
export const TASK_POLL_MS = 1_000;
/** Tasks per tasks/list page (2025-11-25). */
export const TASKS_PER_PAGE = 50;

export type TaskEra = 'modern' | 'legacy';
/** A task ends in any status but these two: the spec's statuses are the SDK's `TaskStatus`. */
export function isTerminal(status: TaskStatus): boolean {
  return status !== 'working' && status !== 'input_required';
}

/** A task as a backend knows it, before either revision's wire shape is put on it. */
export interface TaskState {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /** null: kept as long as its store keeps it (a run's journal keeps it for good). */
  ttlMs: number | null;
  /** The call's own result, once there is one (completed; on 2025-11-25 also failed). */
  result?: CallToolResult;
  /** A JSON-RPC error the call ended with (failed). */
  error?: { code: number; message: string; data?: unknown };
  /** Outstanding requests to the client (input_required, 2026-07-28). */
  inputRequests?: InputRequests;
}

/** What a surface gives the task methods. `null` everywhere means "no such task for this caller". */
export interface TaskBackend {
  get(taskId: string): Promise<TaskState | null>;
  /** Asks for cancellation; `'terminal'` when the task had already ended. */
  cancel(taskId: string): Promise<'requested' | 'terminal' | null>;
  /** Delivers `inputResponses` (2026-07-28); keys not outstanding are ignored. */
  update(taskId: string, inputResponses: Record<string, unknown>): Promise<boolean>;
  /**
   * The task once terminal (or when the request is cancelled: its state then): 2025-11-25's
   * blocking `tasks/result`, whose request is also where the server asks the requestor for
   * input the task needs (`ctx`).
   */
  settled(taskId: string, ctx: ServerContext): Promise<TaskState | null>;
  /** The caller's tasks, newest first (bounded by the backend). */
  list(): Promise<TaskState[]>;
}

/** The capabilities a surface adds for Tasks in each era. */
export function taskCapabilities(era: TaskEra): Partial<ServerCapabilities> {
  return era === 'modern'
    ? ({ extensions: { [TASKS_EXTENSION]: {} } } as Partial<ServerCapabilities>)
    : ({ tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } as Partial<ServerCapabilities>);
}

/** Whether this request's own client capabilities declare the extension (2026-07-28: per request). */
export function extensionDeclared(ctx: ServerContext): boolean {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** Whether a `tools/call` may be answered with a task: the 2025 requestor asked (`params.task`), the 2026 one declared the extension. */
export function taskWanted(era: TaskEra, params: { task?: unknown }, ctx: ServerContext): boolean {
  return era === 'modern' ? extensionDeclared(ctx) : typeof params.task === 'object' && params.task !== null;
}

export function missingTasksExtension(what: string): MissingRequiredClientCapabilityError {
  return new MissingRequiredClientCapabilityError(
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } } as ConstructorParameters<typeof MissingRequiredClientCapabilityError>[0],
    `Missing required client capability: ${what} needs the ${TASKS_EXTENSION} extension declared in _meta["${CLIENT_CAPABILITIES_META_KEY}"].extensions`,
  );
}

export function noSuchTask(taskId: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: no task ${JSON.stringify(taskId.slice(0, 200))}`, { taskId: taskId.slice(0, 200) });
}

function base(state: TaskState, era: TaskEra): Record<string, unknown> {
  return {
    taskId: state.taskId,
    status: state.status,
    ...(state.statusMessage ? { statusMessage: state.statusMessage } : {}),
    createdAt: state.createdAt,
    lastUpdatedAt: state.lastUpdatedAt,
    ...(era === 'modern' ? { ttlMs: state.ttlMs, pollIntervalMs: TASK_POLL_MS } : { ttl: state.ttlMs, pollInterval: TASK_POLL_MS }),
  };
}

/** The answer to a `tools/call` that made a task. */
export function createTaskResult(state: TaskState, era: TaskEra): CallToolResult {
  if (era === 'modern') return { resultType: 'task', ...base(state, era) } as unknown as CallToolResult;
  // 2025-11-25's CreateTaskResult is `{task}`. The SDK's 2025 tools/call seam refuses a result
  // carrying `task` without `content` ("another result family cannot default into an empty
  // tools/call success"), so the task also carries a text block saying what it is: the same
  // words as the provisional model-immediate-response, useful to a client that reads only content.
  const said = state.statusMessage ?? `task ${state.taskId} is ${state.status}`;
  return {
    task: base(state, era),
    content: [{ type: 'text', text: `${said} (task ${state.taskId}: poll tasks/get, then tasks/result)` }],
    _meta: { [MODEL_IMMEDIATE_RESPONSE_META_KEY]: said },
  } as unknown as CallToolResult;
}

/** `tasks/get`: 2026-07-28 inlines what the status carries; 2025-11-25 answers the bare Task. */
export function taskView(state: TaskState, era: TaskEra): Record<string, unknown> {
  if (era === 'legacy') return base(state, era);
  return {
    ...base(state, era),
    ...(state.status === 'completed' && state.result ? { result: state.result } : {}),
    ...(state.status === 'failed' ? { error: state.error ?? { code: ProtocolErrorCode.InternalError, message: state.statusMessage ?? 'the task failed' } } : {}),
    ...(state.status === 'input_required' ? { inputRequests: state.inputRequests ?? {} } : {}),
  };
}

const TaskIdParams = z.object({ taskId: z.string().min(1) });

export function registerTaskMethods(server: Server, era: TaskEra, backend: TaskBackend): void {
  const known = async (taskId: string) => {
    const state = await backend.get(taskId);
    if (!state) throw noSuchTask(taskId);
    return state;
  };

  if (era === 'modern') {
    const gate = (ctx: ServerContext, method: string) => {
      if (!extensionDeclared(ctx)) throw missingTasksExtension(method);
    };
    server.setRequestHandler('tasks/get', { params: TaskIdParams }, async ({ taskId }, ctx) => {
      gate(ctx, 'tasks/get');
      return taskView(await known(taskId), era);
    });
    // The SDK lifts `params.inputResponses` off every inbound request (the multi-round-trip seam)
    // and hands it over as `ctx.mcpReq.inputResponses`, dropping entries shaped like requests.
    server.setRequestHandler('tasks/update', { params: TaskIdParams }, async ({ taskId }, ctx) => {
      gate(ctx, 'tasks/update');
      if (!(await backend.update(taskId, ctx.mcpReq.inputResponses ?? {}))) throw noSuchTask(taskId);
      return {};
    });
    server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, async ({ taskId }, ctx) => {
      gate(ctx, 'tasks/cancel');
      // An ack either way: cancelling a task that already ended is idempotent in this revision.
      if ((await backend.cancel(taskId)) === null) throw noSuchTask(taskId);
      return {};
    });
    return;
  }

  server.setRequestHandler('tasks/get', { params: TaskIdParams }, async ({ taskId }) => taskView(await known(taskId), era));
  server.setRequestHandler('tasks/result', { params: TaskIdParams }, async ({ taskId }, ctx) => {
    await known(taskId);
    const state = await backend.settled(taskId, ctx);
    if (!state) throw noSuchTask(taskId);
    if (state.error && !state.result) throw new ProtocolError(state.error.code, state.error.message, state.error.data);
    const result = state.result ?? { isError: true, content: [{ type: 'text', text: state.statusMessage ?? `task ${taskId} ended ${state.status}` }] };
    return { ...result, _meta: { ...(result._meta ?? {}), [RELATED_TASK_META_KEY]: { taskId } } };
  });
  server.setRequestHandler('tasks/list', { params: z.object({ cursor: z.string().optional() }) }, async ({ cursor }) => {
    // The cursor is the offset of the next page (opaque to the client, which must not parse it).
    const offset = cursor === undefined ? 0 : /^(0|[1-9][0-9]{0,8})$/.test(cursor) ? Number(cursor) : -1;
    const all = await backend.list();
    if (offset < 0 || offset > all.length) throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid params: not a tasks/list cursor this server issued', { cursor: cursor?.slice(0, 100) });
    const next = offset + TASKS_PER_PAGE;
    return { tasks: all.slice(offset, next).map((s) => taskView(s, era)), ...(next < all.length ? { nextCursor: String(next) } : {}) };
  });
  server.setRequestHandler('tasks/cancel', { params: TaskIdParams }, async ({ taskId }) => {
    const answer = await backend.cancel(taskId);
    if (answer === null) throw noSuchTask(taskId);
    if (answer === 'terminal') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: task ${taskId} has already ended and cannot be cancelled`, { taskId });
    return taskView(await known(taskId), era);
  });
}
