/**
 * The plane's agents served over A2A 1.0 (JSON-RPC binding, ProtoJSON wire), "A2A, being called"
 * in docs/GOVERNED-RUNTIME.md. A plain node:http request handler; plane/a2a-endpoint.ts binds it
 * to 127.0.0.1. This module routes requests and dispatches the JSON-RPC methods; beside it:
 * a2a-wire.ts (the version and error codes), a2a-task-view.ts (a task as its run reads),
 * a2a-message.ts (a message's part as the agent input), a2a-list-tasks.ts (ListTasks, bounded),
 * a2a-push-config.ts (the push config methods), a2a-cards.ts (the cards and the root index) and
 * a2a-continue.ts (a message answering its task's question).
 *
 * Routes:
 * - `GET /.well-known/agent-card.json`: the plane's directory card (its agents as skills, each
 *   pointing at its own card). Cards are public: a caller reads them before it has credentials.
 * - `GET /a2a/<agent>/.well-known/agent-card.json`: that agent's signed card (card-signature.ts).
 * - `GET /`: a JSON index for whoever opens the printed URL (`AGENTPLANE_A2A_URL`): the directory
 *   card's URL, and per agent its card and its JSON-RPC endpoint, with what a call needs. Public
 *   like the cards, and naming nothing they do not (never the token).
 * - `POST /a2a/<agent>`: JSON-RPC. Needs the bearer token (401 + WWW-Authenticate otherwise: a
 *   refused credential is the one HTTP-level error; every other error is HTTP 200 with a JSON-RPC
 *   error, as docs/GOVERNED-RUNTIME.md says) and `A2A-Version: 1.0` (a missing header is a 0.3
 *   client — the spec reads empty as 0.3 — and answering it with 1.0 shapes would be mis-parsed:
 *   -32009).
 *
 * A task IS a run (a2a-task-view.ts). A context is the runs started into it: its id is the id of
 * its first run, and a message carrying only `contextId` opens another run in the same context
 * (journaled in its RunAdmitted, runs.start's `context`); a run that names none is its own
 * context, which is how every run from before contexts reads, with nothing migrated. A contextId
 * joins only a context the same caller opened: any other (unknown, another caller's, a task id
 * that is not a context's) is one -32602 naming message.contextId, the same answer for each, so
 * it tells nobody else a context exists.
 *
 * Every call goes through the plane's one door naming the A2A caller (`a2a:local` for the token
 * holder): admission, policy and the journal see that caller at the root of the chain. A task
 * belongs to the caller that admitted it: GetTask, CancelTask and SubscribeToTask on another
 * caller's run answer TaskNotFound (-32001), exactly as an unknown id does, and ListTasks lists
 * only the caller's own. A fault on the plane's side answers -32603 with one fixed sentence; the
 * detail goes to the operator's log.
 *
 * Admission refuses a run policy allows in three ways, each its own code with an ErrorInfo in
 * this plane's domain (a2a-wire.ts PLANE_REFUSALS): the caller holds `maxOpenTasks` open tasks
 * already (-32029, checked here before admission), a halt covers the agent or the caller
 * (-32030), the plane is shutting down (-32031). A policy denial stays a Message decline.
 *
 * Only the 1.0 method names are answered: 1.0 renamed every method, and a server answering both
 * would accept clients that have silently lost half the protocol.
 *
 * Push notifications are served when the endpoint supplies `push` (a2a-push-config.ts); without
 * it the push methods answer -32003.
 *
 * A message naming its task (`taskId`) answers the question that INPUT_REQUIRED task stopped on
 * and the same run goes on (a2a-continue.ts): the caller's own task, an input wait only (any
 * other wait is a person's at the plane), policy asked as `a2a:task.continue` and
 * `a2a:event.deliver`, the same messageId never applied twice.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AgentSummary, RunView } from '../../../src-shared/ipc/contract';
import type { Logger } from '../../base/logger';
import { secretsEqual } from '../../base/constant-time';
import type { LoopbackGuard } from '../../net/loopback-guard';
import type { PlaneKey } from '../../journal/plane-key';
import type { McpPlaneDoor } from '../mcp/plane-door';
import { followRun } from '../mcp/plane-tasks';
import { continueTask } from './a2a-continue';
import { createA2aCards } from './a2a-cards';
import { createListTasks } from './a2a-list-tasks';
import { checkSkill, fieldOfRuntime, inputOf } from './a2a-message';
import { createPushConfigMethods, type A2aPushOptions } from './a2a-push-config';
import { artifactOf, contextOf, endsStream, isTerminalState, RUN_ID, taskOf, taskStateOf } from './a2a-task-view';
import { createCardResponder } from './a2a-card-http';
import { jsonNamesOf } from './a2a-field-names';
import { A2A_ERRORS, A2A_PROTOCOL_VERSION, planeRefusal, RpcError, rpcErrorBody, type Json } from './a2a-wire';
import { ErrorCode, ErrorReason } from '../../../src-shared/ipc/errors';
import { RunStatusSchema } from '../../../src-shared/vocabulary/runs';

// This module's public names that the rooms beside it define.
export { A2A_ERRORS, A2A_PROTOCOL_VERSION, RpcError } from './a2a-wire';
export { artifactOf, contextOf, isTerminalState, taskOf, taskStateOf, type TaskArtifacts } from './a2a-task-view';
export { inputOf } from './a2a-message';
export type { A2aPushOptions } from './a2a-push-config';

/** The door is the MCP one: the same dispatch naming a caller, the same journal notifications. */
export type A2aPlaneDoor = McpPlaneDoor;

export const PRINCIPAL_A2A_LOCAL = 'a2a:local';
const CARD_PATH = /^\/a2a\/([^/]+)\/\.well-known\/agent-card\.json$/;
const AGENTLESS_CARD_PATH = '/a2a/.well-known/agent-card.json';
const RPC_PATH = /^\/a2a\/([^/]+)\/?$/;
const BODY_LIMIT = 1 << 20;
/** A blocking SendMessage waits at most this long before answering the task as it stands. */
const DEFAULT_BLOCK_MS = 30_000;

export interface A2aServerOptions {
  door: A2aPlaneDoor;
  token: string;
  key: PlaneKey;
  guard: LoopbackGuard;
  /** `http://127.0.0.1:<port>` once listening. */
  origin: () => string;
  version: string;
  logger: Logger;
  blockMs?: number;
  /** Push notifications: absent, the capability is false and the push methods answer -32003. */
  push?: A2aPushOptions;
  /**
   * The runtime host whose runs this endpoint answers for (`plane`, or `peer:<id>` on a peer's
   * port). The plane's door reads every run in the data dir's journal, a peer's included; a task
   * is answered only by the endpoint whose runtime admitted it, so a caller holding the plane's
   * token reads nothing a peer's endpoint admitted, and the other way round.
   */
  host: string;
  /** ListTasks' bounds (tests shrink them): tasks folded for a status filter, artifact bytes per page. */
  filterScanBudget?: number;
  artifactBudgetBytes?: number;
  /**
   * The most open (unsealed) tasks one A2A caller may hold at once; a message that would open
   * another is refused with -32029 before admission (default DEFAULT_MAX_OPEN_TASKS).
   */
  maxOpenTasks?: number;
}

export const DEFAULT_MAX_OPEN_TASKS = 32;

/** `maxOpenTasks` as given, or the default; anything but a positive integer is refused naming it. */
export function maxOpenTasksOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_OPEN_TASKS;
  if (!Number.isInteger(value) || value < 1) throw new Error(`maxOpenTasks must be a positive integer (got ${String(value)})`);
  return value;
}

export function createA2aHandler(options: A2aServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { door, logger } = options;
  const context = { principal: PRINCIPAL_A2A_LOCAL };
  const blockMs = options.blockMs ?? DEFAULT_BLOCK_MS;
  const maxOpenTasks = maxOpenTasksOf(options.maxOpenTasks);
  /** Admissions this handler has begun and not yet answered: counted with the open tasks, so concurrent messages cannot pass the quota together. */
  let admitting = 0;
  const listTasks = createListTasks({
    ask,
    principal: context.principal,
    host: options.host,
    approveWith: door.approveWith,
    token: options.token,
    filterScanBudget: options.filterScanBudget,
    artifactBudgetBytes: options.artifactBudgetBytes,
  });
  const pushConfigs = createPushConfigMethods(options.push, context.principal, readOwn);
  const cards = createA2aCards({
    agents: async () => (await ask<{ agents: AgentSummary[] }>('agents.list', {})).agents,
    key: options.key,
    origin: options.origin,
    version: options.version,
    push: options.push !== undefined,
  });

  async function ask<T>(name: string, request: unknown): Promise<T> {
    const answer = await door.dispatch(name, request, context);
    if (!answer.ok) throw Object.assign(new Error(answer.error.message), { body: answer.error });
    return answer.value as T;
  }

  async function agentNamed(name: string): Promise<AgentSummary | null> {
    const { agents } = await ask<{ agents: AgentSummary[] }>('agents.list', {});
    return agents.find((a) => a.name === name) ?? null;
  }

  async function readOwn(taskId: unknown): Promise<RunView> {
    if (typeof taskId !== 'string' || taskId.length === 0) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: id must be a task id', { field: 'id' });
    const answer = RUN_ID.test(taskId) ? await door.dispatch('runs.get', { runId: taskId }, context) : null;
    const run = answer?.ok ? (answer.value as RunView) : null;
    // Another caller's run answers exactly as an unknown one: an id tells nobody else it exists.
    if (!run || run.chain[0] !== context.principal || run.host !== options.host) throw new RpcError(A2A_ERRORS.taskNotFound, `no task ${taskId}`, { taskId });
    return run;
  }

  /** Re-reads the run on each journal commit naming it until done(run), the deadline or the signal (plane-tasks.ts followRun). */
  async function follow(runId: string, done: (run: RunView) => boolean, deadline: number, signal: AbortSignal, onRun?: (run: RunView) => void): Promise<RunView> {
    const run = await followRun(door, runId, context, { deadline, signal, done, ...(onRun ? { onRun } : {}) });
    // Unreadable: asked once more through ask(), which throws the plane's own error for it.
    return run ?? ask<RunView>('runs.get', { runId });
  }

  /**
   * A policy denial answered as a Message: the agent declines (docs/GOVERNED-RUNTIME.md, "A2A,
   * being called"). Not an error: -32603 reads as a transient fault and -32004 as "this agent
   * cannot do that", and either way a caller retries a decision that will not change. It says
   * only that it was declined — naming the action and resource the gate keyed on would let a
   * prober map this plane's authorization vocabulary. No task exists: nothing was admitted.
   */
  function declineOf(agent: AgentSummary, message: Json, what = 'start it'): Json {
    return {
      messageId: `declined-${randomUUID()}`,
      role: 'ROLE_AGENT',
      parts: [{ text: `${agent.name} declines: this plane's policy does not let this caller ${what}.` }],
      ...(typeof message.contextId === 'string' ? { contextId: message.contextId } : {}),
      metadata: { 'io.agentplane.a2a/declined': true },
    };
  }

  async function admit(agent: AgentSummary, params: Json): Promise<{ run: RunView } | { declined: Json }> {
    const message = params.message as Json | undefined;
    if (typeof message !== 'object' || message === null) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message is required', { field: 'message' });
    if (message.role !== 'ROLE_USER') throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.role must be ROLE_USER', { field: 'message.role' });
    if (typeof message.messageId !== 'string' || message.messageId.length === 0) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.messageId is required', { field: 'message.messageId' });
    checkSkill(message, agent);
    if (message.taskId !== undefined) {
      // Task input continues the same run (a2a-continue.ts): the answer to the question the named
      // task stopped on, never a new run. SendMessage then follows it as it follows a new task.
      return continueTask({ dispatch: (name, request) => door.dispatch(name, request, context), principal: context.principal, host: options.host, approveWith: door.approveWith, decline: () => declineOf(agent, message, "answer this task's question") }, agent, params);
    }
    const input = inputOf(message, agent);
    const joined = await contextToJoin(message.contextId);
    // A push config given with the message is checked before admission (a refused URL must not
    // leave a run behind) and stored once the run exists, so its first event is the first state.
    const pushInput = ((params.configuration ?? {}) as Json).taskPushNotificationConfig as Json | undefined;
    if (pushInput !== undefined) pushConfigs.check(pushInput, 'configuration.taskPushNotificationConfig.');
    if ((await openTasks()) + admitting >= maxOpenTasks) throw planeRefusal('quota');
    admitting += 1;
    const answer = await door.dispatch('runs.start', { agent: agent.name, input, ...(joined ? { context: joined } : {}) }, context).finally(() => {
      admitting -= 1;
    });
    if (!answer.ok) {
      const body = answer.error;
      // The runtime holds the same context rule (a context changing hands between our read and the admission).
      if (body.code === 'AP_BAD_REQUEST' && body.message.startsWith('context:')) throw contextRefused();
      if (body.code === 'AP_BAD_REQUEST') {
        const field = fieldOfRuntime(body.message);
        throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${body.message}`, { field: field ? `message.parts[0].data.${field}` : 'message.parts[0]' });
      }
      // Admission's refusals that are not a decision (docs/GOVERNED-RUNTIME.md, "A2A, being
      // called"): each its own code, told apart by the runtime's `reason`, never by its words.
      if (body.code === ErrorCode.Forbidden && body.reason === ErrorReason.Halted) throw planeRefusal('halted');
      if (body.code === ErrorCode.Unavailable && body.reason === ErrorReason.Draining) throw planeRefusal('draining');
      if (body.code === 'AP_FORBIDDEN') return { declined: declineOf(agent, message) };
      throw Object.assign(new Error(body.message), { body });
    }
    const run = answer.value as RunView;
    if (pushInput !== undefined) pushConfigs.put(run.runId, pushInput);
    return { run };
  }

  /**
   * The caller's open tasks on this host, up to the quota (a run running or waiting: not
   * sealed). Read from the journal's index, so tasks a previous process admitted count too.
   */
  async function openTasks(): Promise<number> {
    let open = 0;
    for (const status of [RunStatusSchema.enum.running, RunStatusSchema.enum.suspended]) {
      const { runs } = await ask<{ runs: RunView[] }>('runs.list', { owner: context.principal, host: options.host, status, limit: maxOpenTasks });
      open += runs.length;
    }
    return open;
  }

  const contextRefused = () => new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.contextId is not a context this caller opened (omit it to open a new one)', { field: 'message.contextId' });

  /**
   * The context a message joins, or null for a new one (its id will be the new run's). Joined
   * only when the caller opened it: the id names a run this caller admitted (readOwn's rule)
   * that is a context's first run. Unknown, another caller's, or a task that only continues a
   * context: one answer for all, so the refusal tells nobody else a context exists.
   */
  async function contextToJoin(contextId: unknown): Promise<string | null> {
    if (contextId === undefined || contextId === '') return null;
    if (typeof contextId !== 'string' || !RUN_ID.test(contextId)) throw contextRefused();
    const answer = await door.dispatch('runs.get', { runId: contextId }, context);
    const run = answer.ok ? (answer.value as RunView) : null;
    if (!run || run.chain[0] !== context.principal || run.host !== options.host || contextOf(run) !== run.runId) throw contextRefused();
    return run.runId;
  }

  const stillWorking = (run: RunView) => run.status === 'running';

  async function sendMessage(agent: AgentSummary, params: Json, signal: AbortSignal): Promise<Json> {
    const config = (params.configuration ?? {}) as Json;
    const admitted = await admit(agent, params);
    if ('declined' in admitted) return { message: admitted.declined };
    const { run } = admitted;
    // Blocking is the default: unset means blocking (the spec's rule). Admission happened first
    // either way, so the id handed back is one GetTask already answers for.
    if (config.returnImmediately === true) return { task: taskOf(run, door.approveWith) };
    const settled = await follow(run.runId, (r) => !stillWorking(r), Date.now() + blockMs, signal);
    return { task: taskOf(settled, door.approveWith) };
  }

  async function cancelTask(params: Json): Promise<Json> {
    const run = await readOwn(params.id);
    if (isTerminalState(taskStateOf(run))) throw new RpcError(A2A_ERRORS.taskNotCancelable, `task ${run.runId} has ended (${taskStateOf(run)})`, { taskId: run.runId });
    await ask<RunView>('runs.cancel', { runId: run.runId, reason: `cancelled through A2A CancelTask by ${context.principal}` });
    const settled = await follow(run.runId, (r) => r.status === 'sealed', Date.now() + 2_000, new AbortController().signal);
    return taskOf(settled, door.approveWith);
  }

  /**
   * SSE: the task as it stands, then a status update per change, the artifact, and the end. The
   * end is a terminal state or INPUT_REQUIRED (endsStream): a suspended run may wait days for an
   * answer, and a connection held open for that long is a leak; the caller subscribes again
   * after answering, and the stream is rebuilt from the journal, so nothing is lost by closing.
   */
  async function stream(res: ServerResponse, id: unknown, run: RunView, signal: AbortSignal): Promise<void> {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    const send = (result: Json) => res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`);
    send({ task: taskOf(run, door.approveWith) });
    let last = `${taskStateOf(run)}|${run.lastSeq}`;
    const ended = (r: RunView) => endsStream(taskStateOf(r));
    if (!ended(run)) {
      const final = await follow(run.runId, ended, Number.POSITIVE_INFINITY, signal, (r) => {
        const now = `${taskStateOf(r)}|${r.status === 'suspended' ? r.pending?.waitId : ''}`;
        if (now === last || ended(r)) return;
        last = now;
        send({ statusUpdate: { taskId: r.runId, contextId: contextOf(r), status: (taskOf(r, door.approveWith) as { status: Json }).status } });
      });
      if (signal.aborted) return;
      const artifact = artifactOf(final);
      if (artifact) send({ artifactUpdate: { taskId: final.runId, contextId: contextOf(final), artifact, lastChunk: true } });
      send({ statusUpdate: { taskId: final.runId, contextId: contextOf(final), status: (taskOf(final, door.approveWith) as { status: Json }).status } });
    }
    res.end();
  }

  async function rpc(agent: AgentSummary, body: Json, res: ServerResponse): Promise<Json | undefined> {
    const sent = (body.params ?? {}) as Json;
    if (typeof sent !== 'object' || sent === null || Array.isArray(sent)) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: params must be an object', { field: 'params' });
    // Proto names (task_id) and JSON names (taskId) alike, read once here for every method.
    const params = jsonNamesOf(sent);
    const aborter = new AbortController();
    res.on('close', () => aborter.abort());
    switch (body.method) {
      case 'SendMessage':
        return sendMessage(agent, params, aborter.signal);
      case 'SendStreamingMessage': {
        const admitted = await admit(agent, params);
        if ('declined' in admitted) {
          // A stream may be a single Message (the spec's StreamResponse.message): the decline.
          res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
          res.end(`data: ${JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { message: admitted.declined } })}\n\n`);
          return undefined;
        }
        await stream(res, body.id, admitted.run, aborter.signal);
        return undefined;
      }
      case 'GetTask':
        return taskOf(await readOwn(params.id), door.approveWith);
      case 'ListTasks':
        return listTasks(agent.name, params);
      case 'CancelTask':
        return cancelTask(params);
      case 'SubscribeToTask': {
        const run = await readOwn(params.id);
        if (isTerminalState(taskStateOf(run))) throw new RpcError(A2A_ERRORS.unsupportedOperation, `task ${run.runId} has ended (${taskStateOf(run)}); read it with GetTask`, { taskId: run.runId });
        // Resumable: every subscription opens with the task as the journal has it now, then
        // follows the journal, so a caller that dropped loses nothing by subscribing again.
        await stream(res, body.id, run, aborter.signal);
        return undefined;
      }
      // Every push method names a task, and answers for the caller's own tasks only (readOwn).
      case 'CreateTaskPushNotificationConfig':
        return pushConfigs.create(params);
      case 'GetTaskPushNotificationConfig':
        return pushConfigs.get(params);
      case 'ListTaskPushNotificationConfigs':
        return pushConfigs.list(params);
      case 'DeleteTaskPushNotificationConfig':
        return pushConfigs.delete(params);
      default:
        throw new RpcError(A2A_ERRORS.methodNotFound, `no method ${String(body.method)} (A2A 1.0 names only)`, { method: body.method });
    }
  }

  function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) {
    const text = JSON.stringify(value);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }
  const rpcError = rpcErrorBody;
  /** A refusal before any JSON-RPC request was read (a route, a method, the host): still a JSON-RPC error body. */
  const refuse = (res: ServerResponse, status: number, error: RpcError, headers: Record<string, string> = {}) => json(res, status, rpcError(null, error), headers);
  const sendCard = createCardResponder();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!options.guard.hostAllowed(req.headers.host) || !options.guard.originAllowed(req.headers.origin)) {
      refuse(res, 403, new RpcError(A2A_ERRORS.invalidRequest, 'forbidden host or origin'));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    if (req.method === 'GET' && path === '/.well-known/agent-card.json') {
      const card = await cards.directoryCard();
      if (card) sendCard(req, res, path, card);
      else refuse(res, 404, new RpcError(A2A_ERRORS.invalidRequest, 'no agent on this plane yet: the well-known card describes one of its agents', { path }));
      return;
    }
    if (req.method === 'GET' && path === '/') {
      json(res, 200, await cards.rootIndex());
      return;
    }
    if (req.method === 'GET' && path === AGENTLESS_CARD_PATH) {
      // What a client resolving `.well-known/agent-card.json` against `<origin>/a2a/<agent>` (no
      // trailing slash) asks for: the agent's name is the segment URL resolution dropped, so no
      // answer here could be that agent's card. Saying where the cards are beats guessing one.
      refuse(res, 404, new RpcError(A2A_ERRORS.invalidRequest, `${AGENTLESS_CARD_PATH} names no agent: each agent's card is at /a2a/<agent>/.well-known/agent-card.json (resolve against the interface URL with a trailing slash, /a2a/<agent>/)`, { path }));
      return;
    }
    const cardMatch = CARD_PATH.exec(path);
    if (req.method === 'GET' && cardMatch) {
      const name = decodeURIComponent(cardMatch[1]!);
      const agent = await agentNamed(name);
      if (!agent) refuse(res, 404, new RpcError(A2A_ERRORS.invalidParams, `no agent named ${name} on this plane`, { agent: name }));
      else sendCard(req, res, path, await cards.cardOf(agent));
      return;
    }
    // The interface URL, and the same joined with `/` (how a generic client posts to it).
    const rpcMatch = RPC_PATH.exec(path);
    if (!rpcMatch) {
      refuse(res, 404, new RpcError(A2A_ERRORS.invalidRequest, `no A2A route at ${path}: cards are at /.well-known/agent-card.json and /a2a/<agent>/.well-known/agent-card.json, JSON-RPC at /a2a/<agent>`, { path }));
      return;
    }
    if (req.method !== 'POST') {
      refuse(res, 405, new RpcError(A2A_ERRORS.invalidRequest, `POST JSON-RPC to ${path}`, { path }), { Allow: 'POST' });
      return;
    }
    const authorization = req.headers.authorization ?? '';
    const presented = authorization.startsWith('Bearer ') ? authorization.slice(7) : '';
    if (!secretsEqual(presented, options.token)) {
      refuse(res, 401, new RpcError(A2A_ERRORS.invalidRequest, 'a valid bearer token is required'), { 'WWW-Authenticate': 'Bearer' });
      return;
    }
    let body: Json;
    try {
      body = JSON.parse(await readBody(req)) as Json;
    } catch (error) {
      json(res, 200, rpcError(null, new RpcError(A2A_ERRORS.parse, (error as Error).message === 'too large' ? 'the request is over 1 MiB' : 'the body is not JSON')));
      return;
    }
    if (typeof body !== 'object' || body === null || body.jsonrpc !== '2.0' || typeof body.method !== 'string') {
      json(res, 200, rpcError(body?.id, new RpcError(A2A_ERRORS.invalidRequest, 'not a JSON-RPC 2.0 request')));
      return;
    }
    const version = req.headers['a2a-version'];
    if (version !== A2A_PROTOCOL_VERSION) {
      const said = version === undefined ? 'no A2A-Version header (read as 0.3)' : `A2A-Version ${String(version)}`;
      json(res, 200, rpcError(body.id, new RpcError(A2A_ERRORS.versionNotSupported, `${said}: this server speaks A2A 1.0 only; send A2A-Version: 1.0`, { supportedVersions: [A2A_PROTOCOL_VERSION] })));
      return;
    }
    const agentName = decodeURIComponent(rpcMatch[1]!);
    try {
      const agent = await agentNamed(agentName);
      if (!agent) throw new RpcError(A2A_ERRORS.invalidParams, `no agent named ${agentName} on this plane`, { agent: agentName });
      const result = await rpc(agent, body, res);
      if (result !== undefined) json(res, 200, { jsonrpc: '2.0', id: body.id, result });
    } catch (error) {
      if (error instanceof RpcError) {
        if (!res.headersSent) json(res, 200, rpcError(body.id, error));
        else res.end(`data: ${JSON.stringify(rpcError(body.id, error))}\n\n`);
        return;
      }
      logger.log('error', 'a2a: call failed', { method: body.method, agent: agentName, message: (error as Error).message });
      const fault = new RpcError(A2A_ERRORS.internal, 'the plane could not complete the call; the operator log has the detail');
      if (!res.headersSent) json(res, 200, rpcError(body.id, fault));
      else res.end(`data: ${JSON.stringify(rpcError(body.id, fault))}\n\n`);
    }
  }

  return (req, res) => {
    handle(req, res).catch((error: unknown) => {
      logger.log('error', 'a2a: request failed', { message: (error as Error).message });
      if (!res.headersSent) refuse(res, 500, new RpcError(A2A_ERRORS.internal, 'the plane could not complete the request; the operator log has the detail'));
      else res.end();
    });
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > BODY_LIMIT) {
        reject(new Error('too large'));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
