/**
 * The plane's agents served over MCP: the "plane surface". `createPlaneSurface(door)` answers
 * a factory that builds one low-level SDK `Server` per MCP session (2025-11-25) or per request
 * (2026-07-28); the transports (mcp-http.ts, mcp-stdio.ts) call it with the authenticated
 * caller. State that must outlive one server (idempotency keys) lives in the surface.
 *
 * Rules and reasons (docs/GOVERNED-RUNTIME.md, "MCP, being served"):
 * - Descriptors derive from the manifest: a tool per agent, named for it, its description the
 *   manifest's, its inputSchema the manifest's `input` verbatim. An agent that declares no input
 *   is not offered: the only honest argument shape to hand a model is one somebody reviewed.
 * - A host calls a tool and a governed run happens, under the same admission any other door
 *   gets: `runs.start` through the plane's one dispatch, acting for the MCP caller (trigger via
 *   `mcp`, the caller at the root of the chain, its input labelled as the caller's). Policy is
 *   asked about that caller at admission; a refusal is a tool error, never a crash.
 * - Arguments the schema refuses answer JSON-RPC -32602 naming the field. The runtime's own
 *   validation (the same one every door gets) is the source of truth; its "input.x: ..." is
 *   mapped, not re-checked here with a second validator that could disagree.
 * - A suspended run is never reported failed or succeeded: it stays among the waiting runs, and
 *   the answer names the run, what it waits for and where a person decides (tool-result.ts).
 * - Tasks (tasks.ts over plane-tasks.ts) are the only way a waiting run is said on MCP. A
 *   2026-07-28 request declaring the extension is offered every agent, and its call answers with
 *   a task whose id is the run id after a short settle (a run that already ended answers its
 *   result at once, which the extension allows); a run asking for input reads `input_required`
 *   with the question in `inputRequests`, answered by `tasks/update`.
 * - A caller without Tasks (any 2025-11-25 session, whose experimental tasks are not served,
 *   and a 2026-07-28 request without the extension) is offered only the agents whose runs never
 *   wait for a person by their own declaration (plane-catalogue.ts), and a call naming another
 *   is refused before anything is admitted, naming the extension. Such a call gets the bounded
 *   wait; a run that waits anyway (a halt, an effect in doubt) is answered naming the run and
 *   where a person decides (tool-result.ts).
 * - A run that waits for a person is said while the call is open: where the call carried a
 *   `progressToken`, one progress notification names what it waits for and where a person
 *   decides (the task's status message says the same).
 * - Prompts: an agent's system prompt(s), verbatim, no arguments, one prompt per offered agent
 *   that has any.
 * - Resources: the caller's own runs (run-resource.ts) and one declaration of the plane,
 *   `agentplane://declaration`: every agent served, its input schema, grants, budget and why its
 *   runs may wait, so a host can decide whether to call before it calls.
 * - Completion of a run id, and on 2025-11-25 sessions subscriptions to one's own runs and log
 *   messages as they move (run-watch.ts).
 */
import { ProtocolError, ProtocolErrorCode, Server, type CallToolResult, type Prompt, type ServerContext } from '@modelcontextprotocol/server';
import type { AgentSummary, RunView } from '../../../src-shared/ipc/contract';
import type { ErrorBody } from '../../../src-shared/ipc/errors';
import type { Logger } from '../../base/logger';
import type { McpCallContext, McpPlaneDoor } from './plane-door';
import { runResult } from './tool-result';
import { createTaskResult, extensionDeclared, registerTaskMethods, TASKS_EXTENSION, taskCapabilities } from './tasks';
import { followRun, planeTasks, taskOfRun } from './plane-tasks';
import { listOwnRuns, readOwnRun, runTemplate } from './run-resource';
import { watchRuns } from './run-watch';
import { declarationOf, declarationResource, DECLARATION_URI, needsTasks, offeredAgents, promptOf, promptResult, servable, toolOf } from './plane-catalogue';
import { MCP_SERVED_VERSIONS, type McpServerFactory } from './mcp-factory';
import { IDEMPOTENCY_META_KEY, IdempotencyKeys, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency';


export interface PlaneSurfaceOptions {
  version: string;
  /** How long a tools/call waits for its run to end or suspend before answering `running` (ms). */
  settleMs?: number;
  /** How long a tools/call answered with a task (2026-07-28) waits for its run first (ms). */
  taskSettleMs?: number;
  /** Kept for the transports' common options; the surface logs nothing of its own today. */
  logger?: Logger;
  idempotency?: IdempotencyKeys;
}

export const DEFAULT_SETTLE_MS = 30_000;
export const DEFAULT_TASK_SETTLE_MS = 1_000;

/** A refusal from the door, kept whole so the tool's answer can say what the plane said. */
class Refused extends Error {
  constructor(readonly body: ErrorBody) {
    super(body.message);
  }
}

async function ask<T>(door: McpPlaneDoor, name: string, request: unknown, context: McpCallContext): Promise<T> {
  const answer = await door.dispatch(name, request, context);
  if (!answer.ok) throw new Refused(answer.error);
  return answer.value as T;
}

/** The first field the runtime's "input.x.y: must ..." (or "input: must have required property 'x'") names. */
export function fieldOf(message: string): string | null {
  const path = /input\.([^:;\s]+):/.exec(message)?.[1];
  if (path) return path;
  return /required property '([^']+)'/.exec(message)?.[1] ?? null;
}

function idempotencyKeyOf(meta: unknown): string | null {
  if (typeof meta !== 'object' || meta === null) return null;
  const key = (meta as Record<string, unknown>)[IDEMPOTENCY_META_KEY];
  if (key === undefined) return null;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: _meta["${IDEMPOTENCY_META_KEY}"] must be a string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters`, {
      field: `_meta.${IDEMPOTENCY_META_KEY}`,
    });
  }
  return key;
}

function progressTokenOf(meta: unknown): string | number | undefined {
  const token = typeof meta === 'object' && meta !== null ? (meta as { progressToken?: unknown }).progressToken : undefined;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

/**
 * A run that waits for a person is said while the call is still open, where the host asked for
 * progress (a `progressToken`, utilities/progress): one notification naming what it waits for
 * and where a person decides, the same words as its task's status message. Best effort: a host
 * that went away still gets the call's answer (or nothing), and the run waits either way.
 */
async function saidWaiting(run: RunView, approveWith: string, progressToken: string | number | undefined, ctx: ServerContext): Promise<void> {
  if (progressToken === undefined || run.status !== 'suspended') return;
  const message = taskOfRun(run, 'modern', approveWith).statusMessage ?? `run ${run.runId} (${run.agent}) waits for a person`;
  await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken, progress: 0, message } }).catch(() => undefined);
}

/** A refusal of runs.start as MCP answers it: bad arguments are the protocol's -32602, the rest tool errors. */
function refusalOf(tool: string, body: ErrorBody): CallToolResult {
  if (body.code === 'AP_BAD_REQUEST') {
    const field = fieldOf(body.message);
    throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: ${body.message}`, field ? { field } : undefined);
  }
  if (body.code === 'AP_NOT_FOUND') throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no tool named ${tool}`, { tool });
  const text =
    body.code === 'AP_FORBIDDEN'
      ? `the plane's policy refused to start ${tool} for this caller (${body.code}); an operator can allow it in the data dir's policy.json`
      : `the plane could not start ${tool}: ${body.message} (${body.code})`;
  return { isError: true, content: [{ type: 'text', text }], structuredContent: { error: body } };
}

export function createPlaneSurface(door: McpPlaneDoor, options: PlaneSurfaceOptions): McpServerFactory {
  const settleMs = options.settleMs ?? DEFAULT_SETTLE_MS;
  const taskSettleMs = options.taskSettleMs ?? DEFAULT_TASK_SETTLE_MS;
  const keys = options.idempotency ?? new IdempotencyKeys();

  /** The run, re-read on each journal commit naming it, until it is no longer running or the deadline passes. */
  async function settle(runId: string, context: McpCallContext, deadline: number, signal: AbortSignal): Promise<RunView> {
    const run = await followRun(door, runId, context, { deadline, signal, done: (r) => r.status !== 'running' });
    return run ?? ask<RunView>(door, 'runs.get', { runId }, context);
  }

  return (caller) => {
    const context: McpCallContext = { principal: caller.principal };
    const server = new Server(
      { name: 'agentplane', version: options.version },
      {
        capabilities: {
          tools: { listChanged: false },
          prompts: { listChanged: false },
          // Subscriptions and log messages ride a 2025-11-25 session's stream (run-watch.ts).
          resources: { listChanged: false, ...(caller.era === 'legacy' ? { subscribe: true } : {}) },
          ...(caller.era === 'legacy' ? { logging: {} } : {}),
          completions: {},
          // 2025-11-25's experimental tasks are not served: its sessions are hosts without Tasks.
          ...(caller.era === 'modern' ? taskCapabilities(caller.era) : {}),
        },
        supportedProtocolVersions: [...MCP_SERVED_VERSIONS],
        instructions:
          `Each tool is an AgentPlane agent; a call admits a governed run (journaled, under the plane's policy and budgets). An agent whose runs may wait for a person is offered only where you declare the ${TASKS_EXTENSION} extension (MCP 2026-07-28); such a call answers with a task whose id is the run id. Read ${DECLARATION_URI} for every agent served and what it needs, and agentplane://runs/<runId> for a run's journal.`,
      },
    );

    /** Whether this request's caller holds Tasks: 2026-07-28 with the extension declared on it. */
    const holdsTasks = (ctx: ServerContext) => caller.era === 'modern' && extensionDeclared(ctx);
    const agents = async () => (await ask<{ agents: AgentSummary[] }>(door, 'agents.list', {}, context)).agents;
    const watch = watchRuns(server, door, context, caller, async (ctx) =>
      offeredAgents(await agents(), holdsTasks(ctx))
        .map(promptOf)
        .flatMap((p) => (p === null ? [] : [p.name])),
    );

    server.setRequestHandler('tools/list', async (_request, ctx) => ({ tools: offeredAgents(await agents(), holdsTasks(ctx)).map(toolOf) }));

    server.setRequestHandler('tools/call', async (request, ctx) => {
      const name = request.params.name;
      const input = request.params.arguments ?? {};
      const agent = (await agents()).find((a) => a.name === name && servable(a));
      if (!agent) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no tool named ${name}`, { tool: name });
      // Refused before admission: a caller that cannot hold a task cannot be told its run waits.
      if (offeredAgents([agent], holdsTasks(ctx)).length === 0) throw needsTasks(agent, caller.era);
      const key = idempotencyKeyOf(request.params._meta ?? ctx.mcpReq._meta);
      const start = async () => (await ask<RunView>(door, 'runs.start', { agent: name, input }, context)).runId;
      let runId: string;
      try {
        runId = key === null ? await start() : await keys.runFor(caller.principal, name, key, start);
      } catch (error) {
        if (error instanceof Refused) return refusalOf(name, error.body);
        throw error;
      }
      watch.started(runId);
      const approveWith = door.approveWith(runId);
      const run = await settle(runId, context, Date.now() + (holdsTasks(ctx) ? taskSettleMs : settleMs), ctx.mcpReq.signal);
      await saidWaiting(run, approveWith, progressTokenOf(request.params._meta ?? ctx.mcpReq._meta), ctx);
      if (!holdsTasks(ctx) || run.status === 'sealed') return runResult(run, approveWith);
      return createTaskResult(taskOfRun(run, caller.era, approveWith), caller.era);
    });

    server.setRequestHandler('prompts/list', async (_request, ctx) => ({
      prompts: offeredAgents(await agents(), holdsTasks(ctx))
        .map(promptOf)
        .filter((p): p is Prompt => p !== null),
    }));
    server.setRequestHandler('prompts/get', async (request, ctx) => promptResult(offeredAgents(await agents(), holdsTasks(ctx)), request.params.name));

    if (caller.era === 'modern') registerTaskMethods(server, caller.era, planeTasks(door, context, caller.era));
    server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: [runTemplate] }));
    server.setRequestHandler('resources/list', async () => ({ resources: [declarationResource, ...(await listOwnRuns(door, context))] }));
    server.setRequestHandler('resources/read', async (request, ctx) =>
      request.params.uri === DECLARATION_URI ? declarationOf(await agents(), holdsTasks(ctx), options.version) : readOwnRun(door, request.params.uri, context),
    );
    return server;
  };
}
