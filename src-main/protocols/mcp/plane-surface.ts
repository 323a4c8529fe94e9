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
 * - On a 2025-11-25 session whose host declared `elicitation`, a run that asks for input is
 *   asked of the host (elicitation/create); the answer is decided through the plane's door like
 *   any answer, journaled with who gave it. A declined or cancelled question leaves the run
 *   waiting. (2026-07-28 has no server-to-client requests; its multi-round-trip `input_required`
 *   results would need integrity-protected request state carrying the run id: not served. A
 *   2026-07-28 caller with the Tasks extension is asked through its task instead: the task reads
 *   `input_required` with the question in `inputRequests`, answered by `tasks/update`. A
 *   2025-11-25 task asks its host inside `tasks/result`, the same way as above.)
 * - No prompts are served: an agent's system prompt is a step's, not the agent's, so there is
 *   no one prompt per agent to serve verbatim yet.
 * - Tasks (tasks.ts over plane-tasks.ts): where the caller asked for one (2025-11-25
 *   `params.task`, every tool advertising `execution.taskSupport: optional`) or declared the
 *   extension on the request (2026-07-28), a call answers with a task whose id is the run id as
 *   soon as the run is admitted (2025-11-25) or after a short settle (2026-07-28, where a run
 *   that already ended answers its result at once, which the extension allows). A caller
 *   without Tasks gets exactly the bounded wait and the answer naming the run and where to
 *   approve it (tool-result.ts).
 */
import { ProtocolError, ProtocolErrorCode, RELATED_TASK_META_KEY, Server, type CallToolResult, type ServerContext, type Tool } from '@modelcontextprotocol/server';
import type { AgentSummary, RunView } from '../../../src-shared/ipc/contract';
import type { ErrorBody } from '../../../src-shared/ipc/errors';
import type { Logger } from '../../base/logger';
import { silentLogger } from '../../base/logger';
import type { McpCallContext, McpPlaneDoor } from './plane-door';
import { runResult } from './tool-result';
import { createTaskResult, registerTaskMethods, taskCapabilities, taskWanted } from './tasks';
import { followRun, planeTasks, taskOfRun } from './plane-tasks';
import { listOwnRuns, readOwnRun, runTemplate } from './run-resource';
import { MCP_SERVED_VERSIONS, type McpServerFactory } from './mcp-factory';
import { IDEMPOTENCY_META_KEY, IdempotencyKeys, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency';


export interface PlaneSurfaceOptions {
  version: string;
  /** How long a tools/call waits for its run to end or suspend before answering `running` (ms). */
  settleMs?: number;
  /** How long a tools/call answered with a task (2026-07-28) waits for its run first (ms). */
  taskSettleMs?: number;
  /** Questions asked of one host per call (elicitation rounds), at most. */
  maxElicitations?: number;
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

function toolOf(agent: AgentSummary): Tool | null {
  const schema = agent.inputSchema;
  if (typeof schema !== 'object' || schema === null || (schema as { type?: unknown }).type !== 'object') return null;
  return { name: agent.name, description: agent.description, inputSchema: schema as Tool['inputSchema'] };
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
  const maxElicitations = options.maxElicitations ?? 3;
  const logger = options.logger ?? silentLogger;
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
        capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, ...taskCapabilities(caller.era) },
        supportedProtocolVersions: [...MCP_SERVED_VERSIONS],
        instructions:
          "Each tool is an AgentPlane agent; a call admits a governed run (journaled, under the plane's policy and budgets). A run that waits for a person is answered as suspended, with where to approve it (or, where you use MCP Tasks, as a task whose id is the run id); read agentplane://runs/<runId> for its journal.",
      },
    );

    const tools = async (): Promise<Tool[]> => {
      const { agents } = await ask<{ agents: AgentSummary[] }>(door, 'agents.list', {}, context);
      const offered = agents.map(toolOf).filter((t): t is Tool => t !== null);
      // 2025-11-25 tool-level negotiation: any call may be a task (the SDK strips this on 2026-07-28).
      return caller.era === 'legacy' ? offered.map((t) => ({ ...t, execution: { taskSupport: 'optional' as const } })) : offered;
    };

    /** Asks the host for the answer a run waits for (2025-11-25 sessions whose host can elicit). */
    const elicited = async (run: RunView, ctx: ServerContext, task = false): Promise<boolean> => {
      const wait = run.pending;
      if (!wait || wait.reason !== 'input' || caller.era !== 'legacy' || !server.getClientCapabilities()?.elicitation) return false;
      const prompt = (wait.subject as { prompt?: unknown }).prompt;
      const reply = await ctx.mcpReq.elicitInput({
        message: typeof prompt === 'string' ? prompt : `run ${run.runId} (${run.agent}) asks for input`,
        requestedSchema: { type: 'object', properties: { answer: { type: 'string', title: 'Answer' } }, required: ['answer'] },
        // Asked inside tasks/result, the question belongs to the task (the run), and says so.
        ...(task ? { _meta: { [RELATED_TASK_META_KEY]: { taskId: run.runId } } } : {}),
      });
      const answer = reply.action === 'accept' ? reply.content?.answer : undefined;
      if (typeof answer !== 'string') return false;
      const decided = await door.dispatch(
        'approvals.decide',
        { runId: run.runId, waitId: wait.waitId, decision: 'approve', subjectHash: wait.subjectHash, value: { kind: 'input', input: answer } },
        context,
      );
      // Someone else answered first (a person in the UI): that answer stands; keep following the run.
      if (!decided.ok) logger.log('info', 'mcp: an elicited answer was not taken', { runId: run.runId, code: decided.error.code });
      return true;
    };

    server.setRequestHandler('tools/list', async () => ({ tools: await tools() }));

    server.setRequestHandler('tools/call', async (request, ctx) => {
      const name = request.params.name;
      const input = request.params.arguments ?? {};
      if (!(await tools()).some((t) => t.name === name)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `no tool named ${name}`, { tool: name });
      const key = idempotencyKeyOf(request.params._meta ?? ctx.mcpReq._meta);
      const start = async () => (await ask<RunView>(door, 'runs.start', { agent: name, input }, context)).runId;
      let runId: string;
      try {
        runId = key === null ? await start() : await keys.runFor(caller.principal, name, key, start);
      } catch (error) {
        if (error instanceof Refused) return refusalOf(name, error.body);
        throw error;
      }
      if (taskWanted(caller.era, request.params as { task?: unknown }, ctx)) {
        // 2025-11-25 answers at admission (a task begins `working`); 2026-07-28 may settle first.
        const run =
          caller.era === 'legacy'
            ? await ask<RunView>(door, 'runs.get', { runId }, context)
            : await settle(runId, context, Date.now() + taskSettleMs, ctx.mcpReq.signal);
        if (caller.era === 'modern' && run.status === 'sealed') return runResult(run, door.approveWith(runId));
        return createTaskResult(taskOfRun(run, caller.era, door.approveWith(runId)), caller.era);
      }
      const deadline = Date.now() + settleMs;
      let run = await settle(runId, context, deadline, ctx.mcpReq.signal);
      for (let round = 0; round < maxElicitations && run.status === 'suspended' && Date.now() < deadline; round++) {
        if (!(await elicited(run, ctx).catch(() => false))) break;
        run = await settle(runId, context, deadline, ctx.mcpReq.signal);
      }
      return runResult(run, door.approveWith(runId));
    });

    registerTaskMethods(server, caller.era, planeTasks(door, context, caller.era, (run, ctx) => elicited(run, ctx, true)));
    server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: [runTemplate] }));
    server.setRequestHandler('resources/list', async () => ({ resources: await listOwnRuns(door, context) }));
    server.setRequestHandler('resources/read', async (request) => readOwnRun(door, request.params.uri, context));
    return server;
  };
}
