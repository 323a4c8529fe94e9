/**
 * The plane's agents served over A2A 1.0 (JSON-RPC binding, ProtoJSON wire), "A2A, being called"
 * in seed 002. A plain node:http request handler; plane/a2a-endpoint.ts binds it to 127.0.0.1.
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
 *   error, as the seed says) and `A2A-Version: 1.0` (a missing header is a 0.3 client — the spec
 *   reads empty as 0.3 — and answering it with 1.0 shapes would be mis-parsed: -32009).
 *
 * Vocabulary, kept at this adapter (the core is not renamed after one protocol): a task IS a run
 * (task id = run id, so GetTask still answers after a restart). A context is the runs started
 * into it: its id is the id of its first run, and a message carrying only `contextId` opens
 * another run in the same context (journaled in its RunAdmitted, runs.start's `context`); a run
 * that names none is its own context, which is how every run from before contexts reads, with
 * nothing migrated. A contextId joins only a context the same caller opened: any other (unknown,
 * another caller's, a task id that is not a context's) is one -32602 naming message.contextId,
 * the same answer for each, so it tells nobody else a context exists.
 * - running → WORKING; suspended (approval, input, budget, …) → INPUT_REQUIRED, its status message
 *   says what it waits for and where a person decides; sealed: succeeded → COMPLETED (the output
 *   as an artifact: a status-only completed task would discard the answer), failed/halted →
 *   FAILED, cancelled → CANCELED, denied → REJECTED.
 *
 * Every call goes through the plane's one door naming the A2A caller (`a2a:local` for the token
 * holder): admission, policy and the journal see that caller at the root of the chain. A task
 * belongs to the caller that admitted it: GetTask, CancelTask and SubscribeToTask on another
 * caller's run answer TaskNotFound (-32001), exactly as an unknown id does, and ListTasks lists
 * only the caller's own. A fault on the plane's side answers -32603 with one fixed sentence; the
 * detail goes to the operator's log.
 *
 * Only the 1.0 method names are answered: 1.0 renamed every method, and a server answering both
 * would accept clients that have silently lost half the protocol.
 *
 * Push notifications (a2a-push.ts, push-store.ts) are served when the endpoint supplies `push`
 * (durable config/cursor storage and netguard as the transport); only then do the cards say
 * `pushNotifications: true` (the capability is in the signed payload), and without it the push
 * methods answer -32003. A push config is the caller's like its task: every push method names a
 * task through readOwn first.
 *
 * A message naming its task (`taskId`) answers the question that INPUT_REQUIRED task stopped on
 * and the same run goes on (a2a-continue.ts): the caller's own task, an input wait only (any
 * other wait is a person's at the plane), policy asked as `a2a:task.continue` and
 * `a2a:event.deliver`, the same messageId never applied twice.
 *
 * ListTasks bounds both of its expensive answers and says when a bound bit, never a quietly
 * truncated total (seed 002). The candidates are read from the journal's index of the runs each
 * caller admitted (runs.list with `owner`), so another caller's runs and the embedder's cost a
 * listing nothing; with no status filter the exact totalSize is a COUNT from that index and only
 * the page is folded. A status filter needs every candidate folded, so it reads at most
 * `filterScanBudget` (1024) of the caller's tasks, and over that is a -32602 naming
 * statusTimestampAfter, the filter that narrows from the index. Artifacts (includeArtifacts,
 * false by default as the spec says) are bounded by their bytes: past `artifactBudgetBytes` a
 * page returns the rest without them, each marked `io.agentplane.a2a/artifactsOmitted`, and
 * GetTask on it returns them.
 *
 * Not served yet: file parts.
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AgentSummary, CommandResponse, RunView } from '../../../src-shared/ipc/contract';
import type { RunOutcome } from '../../../src-shared/vocabulary/runs';
import type { Logger } from '../../base/logger';
import { secretsEqual } from '../../base/constant-time';
import type { LoopbackGuard } from '../../net/loopback-guard';
import type { PlaneKey } from '../../journal/plane-key';
import type { McpPlaneDoor } from '../mcp/plane-door';
import { waitSummary } from '../mcp/tool-result';
import { followRun } from '../mcp/plane-tasks';
import { signAgentCard } from './card-signature';
import { continueTask } from './a2a-continue';
import { MAX_PUSH_CONFIGS_PER_TASK, type PushStore, type StoredPushConfig } from './push-store';

/** The door is the MCP one: the same dispatch naming a caller, the same journal notifications. */
export type A2aPlaneDoor = McpPlaneDoor;

export const A2A_PROTOCOL_VERSION = '1.0';
export const PRINCIPAL_A2A_LOCAL = 'a2a:local';
const BODY_LIMIT = 1 << 20;
const RUN_ID = /^run-[0-9a-f]{20}$/;
/** ListTasks folds at most this many of the caller's tasks to answer a status filter (seed 002's filter_scan_budget). */
const DEFAULT_FILTER_SCAN_BUDGET = 1024;
/** The artifact bytes one ListTasks page carries before the rest are omitted (and marked). */
const DEFAULT_ARTIFACT_BUDGET_BYTES = 4 << 20;
/** runs.list's own cap on one read. */
const RUNS_PER_READ = 1000;
const MAX_PAGE = 100;
const DEFAULT_PAGE = 50;
/** A blocking SendMessage waits at most this long before answering the task as it stands. */
const DEFAULT_BLOCK_MS = 30_000;

/** A2A 1.0 error codes (specification §5.4 / a2a.proto), and JSON-RPC's own. */
export const A2A_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotSupported: -32003,
  unsupportedOperation: -32004,
  contentTypeNotSupported: -32005,
  versionNotSupported: -32009,
} as const;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** A2A 1.0's task states, in the proto's numbering from 1 (0 is UNSPECIFIED). */
const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;
type TaskState = (typeof TASK_STATES)[number];

const SEALED_STATE: Record<RunOutcome, TaskState> = {
  succeeded: 'TASK_STATE_COMPLETED',
  observed: 'TASK_STATE_COMPLETED',
  failed: 'TASK_STATE_FAILED',
  halted: 'TASK_STATE_FAILED',
  cancelled: 'TASK_STATE_CANCELED',
  denied: 'TASK_STATE_REJECTED',
};

type Json = Record<string, unknown>;

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
}

export interface A2aPushOptions {
  store: PushStore;
  /**
   * Why a receiver URL may not be used, or null when it may (a2a-endpoint.ts: https, or an
   * origin on the outbound allow list, and netguard's pre-flight).
   */
  refuseTarget(url: string): string | null;
  /** A config was set: look at its task now. */
  poke(taskId: string): void;
}

export function taskStateOf(run: RunView): TaskState {
  if (run.status === 'running') return 'TASK_STATE_WORKING';
  if (run.status === 'suspended') return 'TASK_STATE_INPUT_REQUIRED';
  return run.outcome ? SEALED_STATE[run.outcome] : 'TASK_STATE_COMPLETED';
}

const TERMINAL: ReadonlySet<TaskState> = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);

export const isTerminalState = (state: TaskState): boolean => TERMINAL.has(state);

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

/** The agent's input from a message's parts (see the module comment of the seed's rules). */
export function inputOf(message: Json, agent: AgentSummary): unknown {
  const parts = message.parts;
  if (!Array.isArray(parts) || parts.length === 0) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.parts must hold one text or data part', { field: 'message.parts' });
  if (parts.length > 1) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.parts must hold exactly one part (the agent input)', { field: 'message.parts' });
  const part = parts[0] as Json;
  const members = ['text', 'data', 'raw', 'url'].filter((k) => part[k] !== undefined);
  if (members.length !== 1) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: a part holds exactly one of text, data, raw, url', { field: 'message.parts[0]' });
  checkMediaType(part, members[0]!);
  if (members[0] === 'data') {
    if (typeof part.data !== 'object' || part.data === null || Array.isArray(part.data)) {
      throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.parts[0].data must be an object (the agent input)', { field: 'message.parts[0].data' });
    }
    return part.data;
  }
  if (members[0] !== 'text') throw new RpcError(A2A_ERRORS.contentTypeNotSupported, 'raw and url parts are not accepted: send the input as a data part (or text, for a one-string input)', { field: 'message.parts[0]' });
  if (typeof part.text !== 'string') throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.parts[0].text must be a string', { field: 'message.parts[0].text' });
  const schema = agent.inputSchema as { required?: unknown; properties?: Record<string, { type?: unknown }> };
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const only = required.length === 1 ? required[0]! : null;
  if (only === null || schema.properties?.[only]?.type !== 'string') {
    throw new RpcError(
      A2A_ERRORS.invalidParams,
      `Invalid params: ${agent.name}'s input schema needs ${required.length === 0 ? 'an object' : `the fields ${required.join(', ')}`}, not one text; send a data part matching ${JSON.stringify(agent.inputSchema)}`,
      { field: 'message.parts[0]', inputSchema: agent.inputSchema },
    );
  }
  return { [only]: part.text };
}

/**
 * A part's declared mediaType must agree with the member it chose (seed 002, "Parts are a
 * oneof"): text declared as JSON, or data declared as plain text, is a sender that does not
 * know what it sent, and guessing which half it meant would run the agent on a misreading.
 * Empty is unset (ProtoJSON's default). raw and url parts are refused after this anyway.
 */
function checkMediaType(part: Json, member: string): void {
  const declared = part.mediaType;
  if (declared === undefined || declared === '') return;
  const type = typeof declared === 'string' ? declared.split(';')[0]!.trim().toLowerCase() : null;
  const json = type !== null && (type === 'application/json' || type.endsWith('+json'));
  const agrees = type !== null && (member === 'text' ? type.startsWith('text/') : member === 'data' ? json : true);
  if (!agrees) {
    const expected = member === 'text' ? 'a text/* type' : 'application/json (or a +json type)';
    throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: message.parts[0] is a ${member} part but declares mediaType ${JSON.stringify(declared)}; a ${member} part's mediaType is ${expected}`, { field: 'message.parts[0].mediaType' });
  }
}

/**
 * The capability is named, never inferred (seed 002): `message.metadata.skill`, when present,
 * must be this card's one skill (the agent's name). A message meant for another skill is refused
 * rather than run by whichever agent it happened to reach.
 */
function checkSkill(message: Json, agent: AgentSummary): void {
  const metadata = message.metadata;
  if (metadata === undefined || metadata === null) return;
  if (typeof metadata !== 'object' || Array.isArray(metadata)) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.metadata must be an object', { field: 'message.metadata' });
  const skill = (metadata as Json).skill;
  if (skill === undefined) return;
  if (skill !== agent.name) {
    throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: message.metadata.skill ${JSON.stringify(skill).slice(0, 80)} is not a skill of this agent; its card declares one skill, ${agent.name}`, { field: 'message.metadata.skill', skills: [agent.name] });
  }
}

/** Where the next ListTasks page starts: before an admission seq (index order), or after a task among the folded candidates (a status filter). */
type ListPosition = { b: number; r?: undefined } | { r: string; b?: undefined };

const pageTokenRefused = () => new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: pageToken is not one this server gave', { field: 'pageToken' });

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.(\d+))?(Z|[+-]\d{2}:\d{2})$/i;

/**
 * statusTimestampAfter as the journal writes times (ISO, milliseconds, Z). The spec returns a task
 * whose status timestamp is at or after it; a finer fraction than a millisecond rounds up, so a
 * record of the same millisecond but before the given instant is not taken for after it.
 */
function timestampOf(value: unknown): string {
  const match = typeof value === 'string' ? RFC3339.exec(value) : null;
  const at = match ? Date.parse(value as string) : Number.NaN;
  if (!match || Number.isNaN(at)) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: statusTimestampAfter must be an RFC 3339 timestamp such as 2026-01-01T00:00:00Z', { field: 'statusTimestampAfter' });
  const beyondMs = /[1-9]/.test((match[2] ?? '').slice(3));
  return new Date(at + (beyondMs ? 1 : 0)).toISOString();
}

interface ListQuery {
  pageSize: number;
  pageToken: string;
  contextId: string | null;
  status: TaskState | null;
  /** statusTimestampAfter, normalised (timestampOf). */
  after: string | null;
  includeArtifacts: boolean;
  /** What a page token is bound to: the filters, so a token is a position in this list only. */
  digest: string;
}

/** ListTasks' params, each checked, a bad one named. historyLength is accepted and has no effect: a task here keeps no message history to return. */
function listQueryOf(params: Json): ListQuery {
  const bad = (field: string, what: string) => new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${field} ${what}`, { field });
  const pageSize = params.pageSize === undefined || params.pageSize === null ? DEFAULT_PAGE : Number(params.pageSize);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE) throw bad('pageSize', `must be 1..${MAX_PAGE}`);
  if (params.pageToken !== undefined && typeof params.pageToken !== 'string') throw bad('pageToken', 'must be a string');
  if (params.contextId !== undefined && typeof params.contextId !== 'string') throw bad('contextId', 'must be a string');
  let status: TaskState | null = null;
  if (params.status !== undefined && params.status !== 'TASK_STATE_UNSPECIFIED' && params.status !== 0) {
    // ProtoJSON sends an enum by name; its number is accepted too.
    const named = typeof params.status === 'number' ? TASK_STATES[params.status - 1] : TASK_STATES.find((s) => s === params.status);
    if (named === undefined) throw bad('status', `must be a TaskState (${TASK_STATES.join(', ')})`);
    status = named;
  }
  const after = params.statusTimestampAfter === undefined || params.statusTimestampAfter === '' ? null : timestampOf(params.statusTimestampAfter);
  if (params.includeArtifacts !== undefined && typeof params.includeArtifacts !== 'boolean') throw bad('includeArtifacts', 'must be true or false');
  if (params.historyLength !== undefined && (!Number.isInteger(params.historyLength) || (params.historyLength as number) < 0)) throw bad('historyLength', 'must be a non-negative integer');
  const contextId = typeof params.contextId === 'string' && params.contextId !== '' ? params.contextId : null;
  return {
    pageSize,
    pageToken: (params.pageToken as string | undefined) ?? '',
    contextId,
    status,
    after,
    includeArtifacts: params.includeArtifacts === true,
    digest: createHash('sha256').update(JSON.stringify([contextId, status, after])).digest('base64url').slice(0, 22),
  };
}

function fieldOfRuntime(message: string): string | null {
  return /input\.([^:;\s]+):/.exec(message)?.[1] ?? /required property '([^']+)'/.exec(message)?.[1] ?? null;
}

export function createA2aHandler(options: A2aServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { door, logger } = options;
  const context = { principal: PRINCIPAL_A2A_LOCAL };
  const blockMs = options.blockMs ?? DEFAULT_BLOCK_MS;
  const filterScanBudget = options.filterScanBudget ?? DEFAULT_FILTER_SCAN_BUDGET;
  const artifactBudgetBytes = options.artifactBudgetBytes ?? DEFAULT_ARTIFACT_BUDGET_BYTES;
  const signed = new Map<string, { at: string; card: Json }>();

  async function ask<T>(name: string, request: unknown): Promise<T> {
    const answer = await door.dispatch(name, request, context);
    if (!answer.ok) throw Object.assign(new Error(answer.error.message), { body: answer.error });
    return answer.value as T;
  }

  async function agentNamed(name: string): Promise<AgentSummary | null> {
    const { agents } = await ask<{ agents: AgentSummary[] }>('agents.list', {});
    return agents.find((a) => a.name === name) ?? null;
  }

  async function cardOf(agent: AgentSummary): Promise<Json> {
    const url = `${options.origin()}/a2a/${encodeURIComponent(agent.name)}`;
    const card: Json = {
      name: agent.name,
      description: agent.description,
      version: options.version,
      provider: { organization: 'AgentPlane (local)', url: options.origin() },
      supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION }],
      capabilities: { streaming: true, pushNotifications: options.push !== undefined },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: "The plane's A2A token (agentplane serve prints it)." } } },
      securityRequirements: [{ schemes: { bearer: { list: ['a2a'] } } }],
      defaultInputModes: ['application/json', 'text/plain'],
      defaultOutputModes: ['application/json', 'text/plain'],
      skills: [{ id: agent.name, name: agent.name, description: agent.description, tags: ['agentplane'] }],
    };
    // Signed once per agent and origin; the description changes only with the manifest.
    const cacheKey = `${agent.name}\n${JSON.stringify(card)}`;
    const hit = signed.get(cacheKey);
    if (hit) return hit.card;
    const result = await signAgentCard(card, options.key);
    signed.set(cacheKey, { at: new Date().toISOString(), card: result });
    return result;
  }

  async function directoryCard(): Promise<Json> {
    const { agents } = await ask<{ agents: AgentSummary[] }>('agents.list', {});
    const card: Json = {
      name: 'AgentPlane',
      description: `The agents on this plane; each has its own card at ${options.origin()}/a2a/<agent>/.well-known/agent-card.json.`,
      version: options.version,
      supportedInterfaces: agents.map((a) => ({ url: `${options.origin()}/a2a/${encodeURIComponent(a.name)}`, protocolBinding: 'JSONRPC', protocolVersion: A2A_PROTOCOL_VERSION })),
      capabilities: { streaming: true, pushNotifications: options.push !== undefined },
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      securityRequirements: [{ schemes: { bearer: { list: ['a2a'] } } }],
      defaultInputModes: ['application/json', 'text/plain'],
      defaultOutputModes: ['application/json', 'text/plain'],
      skills: agents.map((a) => ({ id: a.name, name: a.name, description: a.description, tags: ['agentplane'] })),
    };
    return signAgentCard(card, options.key);
  }

  /** `GET /`: where the cards and the endpoints are, for a person or a client that starts at the root. */
  async function rootIndex(): Promise<Json> {
    const { agents } = await ask<{ agents: AgentSummary[] }>('agents.list', {});
    const origin = options.origin();
    return {
      name: 'AgentPlane',
      description: 'An A2A 1.0 server: one JSON-RPC endpoint per agent, each described by its signed agent card.',
      protocolVersion: A2A_PROTOCOL_VERSION,
      agentCard: `${origin}/.well-known/agent-card.json`,
      agents: agents.map((a) => ({
        name: a.name,
        description: a.description,
        agentCard: `${origin}/a2a/${encodeURIComponent(a.name)}/.well-known/agent-card.json`,
        endpoint: `${origin}/a2a/${encodeURIComponent(a.name)}`,
      })),
      calls: `POST JSON-RPC 2.0 to an agent's endpoint with Authorization: Bearer <token> and A2A-Version: ${A2A_PROTOCOL_VERSION}; the cards and this index need neither`,
    };
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
   * A policy denial answered as a Message: the agent declines (seed 002, "A2A, being called").
   * Not an error: -32603 reads as a transient fault and -32004 as "this agent cannot do that",
   * and either way a caller retries a decision that will not change. It says only that it was
   * declined — naming the action and resource the gate keyed on would let a prober map this
   * plane's authorization vocabulary. No task exists: nothing was admitted.
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
    if (pushInput !== undefined) checkPushConfig(pushInput, 'configuration.taskPushNotificationConfig.');
    const answer = await door.dispatch('runs.start', { agent: agent.name, input, ...(joined ? { context: joined } : {}) }, context);
    if (!answer.ok) {
      const body = answer.error;
      // The runtime holds the same context rule (a context changing hands between our read and the admission).
      if (body.code === 'AP_BAD_REQUEST' && body.message.startsWith('context:')) throw contextRefused();
      if (body.code === 'AP_BAD_REQUEST') {
        const field = fieldOfRuntime(body.message);
        throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${body.message}`, { field: field ? `message.parts[0].data.${field}` : 'message.parts[0]' });
      }
      if (body.code === 'AP_FORBIDDEN') return { declined: declineOf(agent, message) };
      throw Object.assign(new Error(body.message), { body });
    }
    const run = answer.value as RunView;
    if (pushInput !== undefined) putPushConfig(run.runId, pushInput);
    return { run };
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

  function pushOrRefuse(): A2aPushOptions {
    if (!options.push) throw new RpcError(A2A_ERRORS.pushNotSupported, 'push notifications are not served by this endpoint');
    return options.push;
  }

  /** A config's fields, checked: a bad one names itself (prefix: where it sat in the request). */
  function checkPushConfig(input: Json, prefix = ''): void {
    const push = pushOrRefuse();
    if (typeof input !== 'object' || input === null) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix || 'params'} must be a push notification config`, { field: prefix || 'params' });
    if (typeof input.url !== 'string' || input.url.length === 0) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix}url is required`, { field: `${prefix}url` });
    const refused = push.refuseTarget(input.url);
    if (refused) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix}url: ${refused}`, { field: `${prefix}url` });
    if (input.token !== undefined && (typeof input.token !== 'string' || input.token.length > 4096)) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix}token must be a string of at most 4096 characters`, { field: `${prefix}token` });
    if (input.id !== undefined && (typeof input.id !== 'string' || input.id.length > 200)) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix}id must be a string of at most 200 characters`, { field: `${prefix}id` });
    const auth = input.authentication as Json | undefined;
    if (auth !== undefined && (typeof auth !== 'object' || auth === null || typeof auth.scheme !== 'string' || !/^[A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]{0,99}$/.test(auth.scheme) || typeof auth.credentials !== 'string' || /[\r\n]/.test(auth.credentials))) {
      throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${prefix}authentication needs an HTTP auth scheme name and credentials on one line`, { field: `${prefix}authentication` });
    }
  }

  function putPushConfig(taskId: string, input: Json): Json {
    const push = pushOrRefuse();
    const auth = input.authentication as { scheme: string; credentials: string } | undefined;
    let stored: StoredPushConfig;
    try {
      stored = push.store.put({
        taskId,
        owner: context.principal,
        url: input.url as string,
        ...(typeof input.id === 'string' && input.id !== '' ? { id: input.id } : {}),
        ...(typeof input.token === 'string' && input.token !== '' ? { token: input.token } : {}),
        ...(auth ? { authentication: { scheme: auth.scheme, credentials: auth.credentials } } : {}),
      });
    } catch (error) {
      if (error instanceof RangeError) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: ${error.message}`, { field: 'id', limit: MAX_PUSH_CONFIGS_PER_TASK });
      throw error;
    }
    push.poke(taskId);
    return pushConfigView(stored);
  }

  /** A config as answered: the caller's own token back, the credentials never (only their scheme). */
  function pushConfigView(config: StoredPushConfig): Json {
    return {
      id: config.id,
      taskId: config.taskId,
      url: config.url,
      ...(config.token ? { token: config.token } : {}),
      ...(config.authentication ? { authentication: { scheme: config.authentication.scheme } } : {}),
    };
  }

  function ownPushConfig(taskId: string, id: unknown): StoredPushConfig {
    if (typeof id !== 'string' || id.length === 0) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: id must name a push notification config', { field: 'id' });
    const config = pushOrRefuse().store.get(taskId, id);
    if (!config) throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: task ${taskId} has no push notification config ${id}`, { field: 'id' });
    return config;
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

  /**
   * ListTasks (seed 002, "ListTasks bounds both of its expensive answers"). Rows come newest
   * admission first, so a page never shifts under a caller while tasks progress; the page token
   * is the position after the page's last task, signed (pageTokenOf) so a token this server never
   * gave is refused rather than read as a position.
   */
  async function listTasks(agentName: string, params: Json): Promise<Json> {
    const query = listQueryOf(params);
    // A contextId that is no run id is no context of anybody's: nothing matches it.
    if (query.contextId !== null && !RUN_ID.test(query.contextId)) return { tasks: [], nextPageToken: '', pageSize: query.pageSize, totalSize: 0 };
    const position = query.pageToken === '' ? null : positionOf(query.pageToken, query.digest);
    const filter = {
      owner: context.principal,
      agent: agentName,
      host: options.host,
      ...(query.contextId !== null ? { context: query.contextId } : {}),
      ...(query.after !== null ? { activeSince: query.after } : {}),
    };
    let page: RunView[];
    let totalSize: number;
    let next: ListPosition | null;
    if (query.status === null) {
      // Answered from the index: totalSize is its COUNT, and only the page is folded.
      if (position !== null && position.b === undefined) throw pageTokenRefused();
      const listed = await ask<CommandResponse<'runs.list'>>('runs.list', { ...filter, limit: query.pageSize, ...(position?.b !== undefined ? { beforeSeq: position.b } : {}) });
      page = listed.runs;
      totalSize = listed.total ?? listed.runs.length;
      next = listed.nextBeforeSeq !== undefined ? { b: listed.nextBeforeSeq } : null;
    } else {
      // A state is known only by folding each run: every candidate the other filters leave is
      // folded, so their number is bounded, and over it the caller is told which filter narrows
      // from the index rather than handed a total that quietly counts only part.
      if (position !== null && position.r === undefined) throw pageTokenRefused();
      const scanRefused = () =>
        new RpcError(
          A2A_ERRORS.invalidParams,
          `Invalid params: a status filter reads each of the caller's matching tasks, and more than ${filterScanBudget} match the other filters; narrow with statusTimestampAfter (or contextId)`,
          { field: 'statusTimestampAfter', scanBudget: filterScanBudget },
        );
      // The count comes from the index (one run folded); nothing more is read when it is over.
      const probe = await ask<CommandResponse<'runs.list'>>('runs.list', { ...filter, limit: 1 });
      if ((probe.total ?? 0) > filterScanBudget) throw scanRefused();
      const candidates: RunView[] = [...probe.runs];
      let before = probe.nextBeforeSeq;
      while (before !== undefined) {
        const more = await ask<CommandResponse<'runs.list'>>('runs.list', { ...filter, limit: Math.min(RUNS_PER_READ, filterScanBudget), beforeSeq: before });
        candidates.push(...more.runs);
        before = more.nextBeforeSeq;
        // Tasks admitted meanwhile can push the count past the budget: refused as well, never a partial count.
        if (candidates.length > filterScanBudget) throw scanRefused();
      }
      // The position is the last listed task's place among the candidates, which keep their order
      // (admission) and stay candidates as they progress, whatever their state becomes.
      const from = position?.r === undefined ? 0 : candidates.findIndex((r) => r.runId === position.r) + 1;
      if (position?.r !== undefined && from === 0) throw pageTokenRefused();
      const rest = candidates.slice(from).filter((r) => taskStateOf(r) === query.status);
      totalSize = candidates.filter((r) => taskStateOf(r) === query.status).length;
      page = rest.slice(0, query.pageSize);
      next = rest.length > query.pageSize ? { r: page[page.length - 1]!.runId } : null;
    }
    return {
      tasks: tasksWithArtifactBudget(page, query.includeArtifacts),
      nextPageToken: next ? pageTokenOf(next, query.digest) : '',
      pageSize: query.pageSize,
      totalSize,
    };
  }

  /**
   * A page's tasks, their artifacts included only when asked, and then within the page's budget:
   * an artifact is the run's whole output, so a page of large outputs would otherwise be an
   * answer of any size. Past the budget each task with an artifact is returned without it and
   * marked, never silently short; GetTask on it returns the artifact.
   */
  function tasksWithArtifactBudget(runs: RunView[], include: boolean): Json[] {
    let spent = 0;
    let over = false;
    return runs.map((run) => {
      if (!include) return taskOf(run, door.approveWith, 'without');
      const artifact = artifactOf(run);
      if (artifact === null) return taskOf(run, door.approveWith, 'without');
      spent += Buffer.byteLength(JSON.stringify(artifact));
      over ||= spent > artifactBudgetBytes;
      return taskOf(run, door.approveWith, over ? 'omitted' : 'with');
    });
  }

  /** An opaque page token: the position and the query it belongs to, MACed with a key derived from the endpoint's secret. */
  function pageTokenOf(position: ListPosition, digest: string): string {
    const payload = Buffer.from(JSON.stringify({ ...position, q: digest })).toString('base64url');
    return `${payload}.${pageTokenMac(payload)}`;
  }

  function positionOf(token: string, digest: string): ListPosition {
    const [payload, mac, extra] = token.split('.');
    if (payload === undefined || mac === undefined || extra !== undefined || !secretsEqual(mac, pageTokenMac(payload))) throw pageTokenRefused();
    const read = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { b?: unknown; r?: unknown; q?: unknown };
    // A token given for other filters would be a position in another list.
    if (read.q !== digest) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: pageToken was given for a ListTasks with other filters; send the same filters with it', { field: 'pageToken' });
    if (typeof read.b === 'number' && Number.isInteger(read.b)) return { b: read.b };
    if (typeof read.r === 'string' && RUN_ID.test(read.r)) return { r: read.r };
    throw pageTokenRefused();
  }

  const pageTokenMac = (payload: string) => createHmac('sha256', options.token).update(`a2a ListTasks page token\n${payload}`).digest('base64url');

  async function cancelTask(params: Json): Promise<Json> {
    const run = await readOwn(params.id);
    if (TERMINAL.has(taskStateOf(run))) throw new RpcError(A2A_ERRORS.taskNotCancelable, `task ${run.runId} has ended (${taskStateOf(run)})`, { taskId: run.runId });
    await ask<RunView>('runs.cancel', { runId: run.runId, reason: `cancelled through A2A CancelTask by ${context.principal}` });
    const settled = await follow(run.runId, (r) => r.status === 'sealed', Date.now() + 2_000, new AbortController().signal);
    return taskOf(settled, door.approveWith);
  }

  /** SSE: the task as it stands, then a status update per change, the artifact, and the end. */
  async function stream(res: ServerResponse, id: unknown, run: RunView, untilInterrupted: boolean, signal: AbortSignal): Promise<void> {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    const send = (result: Json) => res.write(`data: ${JSON.stringify({ jsonrpc: '2.0', id, result })}\n\n`);
    send({ task: taskOf(run, door.approveWith) });
    let last = `${taskStateOf(run)}|${run.lastSeq}`;
    const ended = (r: RunView) => TERMINAL.has(taskStateOf(r)) || (untilInterrupted && r.status === 'suspended');
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
    const params = (body.params ?? {}) as Json;
    if (typeof params !== 'object' || params === null || Array.isArray(params)) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: params must be an object', { field: 'params' });
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
        await stream(res, body.id, admitted.run, true, aborter.signal);
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
        if (TERMINAL.has(taskStateOf(run))) throw new RpcError(A2A_ERRORS.unsupportedOperation, `task ${run.runId} has ended (${taskStateOf(run)}); read it with GetTask`, { taskId: run.runId });
        // Resumable: every subscription opens with the task as the journal has it now, then
        // follows the journal, so a caller that dropped loses nothing by subscribing again.
        await stream(res, body.id, run, false, aborter.signal);
        return undefined;
      }
      // Every push method names a task, and answers for the caller's own tasks only (readOwn).
      case 'CreateTaskPushNotificationConfig': {
        pushOrRefuse();
        const run = await readOwn(params.taskId);
        checkPushConfig(params);
        return putPushConfig(run.runId, params);
      }
      case 'GetTaskPushNotificationConfig': {
        pushOrRefuse();
        const run = await readOwn(params.taskId);
        return pushConfigView(ownPushConfig(run.runId, params.id));
      }
      case 'ListTaskPushNotificationConfigs': {
        const push = pushOrRefuse();
        const run = await readOwn(params.taskId);
        // At most MAX_PUSH_CONFIGS_PER_TASK per task: one page always holds them all.
        return { configs: push.store.forTask(run.runId).map(pushConfigView), nextPageToken: '' };
      }
      case 'DeleteTaskPushNotificationConfig': {
        const push = pushOrRefuse();
        const run = await readOwn(params.taskId);
        push.store.delete(run.runId, ownPushConfig(run.runId, params.id).id);
        return {};
      }
      default:
        throw new RpcError(A2A_ERRORS.methodNotFound, `no method ${String(body.method)} (A2A 1.0 names only)`, { method: body.method });
    }
  }

  function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}) {
    const text = JSON.stringify(value);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
    res.end(text);
  }
  const rpcError = (id: unknown, error: RpcError) => ({ jsonrpc: '2.0', id: id ?? null, error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) } });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!options.guard.hostAllowed(req.headers.host) || !options.guard.originAllowed(req.headers.origin)) {
      json(res, 403, { error: 'forbidden host or origin' });
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const path = url.pathname;
    if (req.method === 'GET' && path === '/.well-known/agent-card.json') {
      json(res, 200, await directoryCard());
      return;
    }
    if (req.method === 'GET' && path === '/') {
      json(res, 200, await rootIndex());
      return;
    }
    const cardMatch = /^\/a2a\/([^/]+)\/\.well-known\/agent-card\.json$/.exec(path);
    if (req.method === 'GET' && cardMatch) {
      const agent = await agentNamed(decodeURIComponent(cardMatch[1]!));
      if (!agent) json(res, 404, { error: `no agent named ${decodeURIComponent(cardMatch[1]!)} on this plane` });
      else json(res, 200, await cardOf(agent));
      return;
    }
    const rpcMatch = /^\/a2a\/([^/]+)$/.exec(path);
    if (!rpcMatch) {
      json(res, 404, { error: 'not found' });
      return;
    }
    if (req.method !== 'POST') {
      json(res, 405, { error: 'POST JSON-RPC here' }, { Allow: 'POST' });
      return;
    }
    const authorization = req.headers.authorization ?? '';
    const presented = authorization.startsWith('Bearer ') ? authorization.slice(7) : '';
    if (!secretsEqual(presented, options.token)) {
      json(res, 401, { jsonrpc: '2.0', id: null, error: { code: A2A_ERRORS.invalidRequest, message: 'a valid bearer token is required' } }, { 'WWW-Authenticate': 'Bearer' });
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
      if (!res.headersSent) json(res, 500, { error: 'internal error' });
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
