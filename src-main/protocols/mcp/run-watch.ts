/**
 * Watching one's own runs from an MCP host, beside reading them (run-resource.ts):
 *
 * - Completion (`completion/complete`, both revisions): the run template's `runId` argument
 *   completes to the caller's own run ids starting with what was typed, newest first; an agent's
 *   prompt takes no arguments, so it completes to nothing; a prompt or template this caller is
 *   not offered is invalid params, as the specification says for an unknown one.
 * - Subscriptions (`resources/subscribe`, 2025-11-25 sessions, which hold a stream the plane
 *   can speak on): a caller subscribes to one of its own runs, `agentplane://runs/<runId>`, and
 *   hears `notifications/resources/updated` on each journal commit that touches it. Another
 *   caller's run, or anything else, is not found, the same answer a read gives, so a run id tells
 *   nobody else whether the run exists. The declaration never changes while the plane runs and
 *   is not subscribable.
 * - Log messages (`logging`, 2025-11-25 sessions; the 2026-07-28 revision deprecates it): the
 *   runs this session started or subscribed to are told as they move, one message per journal
 *   commit that touches them (`notice` when a run waits for a person, `error` when it ends other
 *   than succeeded, `info` otherwise), filtered by the level the host sets with
 *   `logging/setLevel`. Nothing of a run's input, effects or result is in a message: only its id,
 *   the record kind, its status and outcome; the run's journal is the resource.
 *
 * The session's journal listener is removed when its server closes (the session ends or is
 * evicted: mcp-sessions.ts), so a host that goes away leaves nothing listening.
 */
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError, type LoggingLevel, type Server, type ServerContext } from '@modelcontextprotocol/server';
import type { CommandResponse, RunChange, RunView } from '../../../src-shared/ipc/contract';
import type { McpCallContext, McpPlaneDoor } from './plane-door';
import { RUN_URI_PREFIX, runTemplate } from './run-resource';
import type { McpCaller } from './mcp-factory';

/** Completion values answered at most (the specification's own cap). */
const MAX_COMPLETIONS = 100;
/** Runs looked at to complete a run id (runs.list's cap). */
const RUNS_SCANNED = 1000;
const RUN_ID_ARGUMENT = 'runId';

export interface RunWatch {
  /** A run this session started: its moves are told as log messages. */
  started(runId: string): void;
}

async function ownRun(door: McpPlaneDoor, runId: string, context: McpCallContext): Promise<RunView | null> {
  const answer = await door.dispatch('runs.get', { runId }, context);
  if (!answer.ok) return null;
  const run = answer.value as RunView;
  return run.chain[0] === context.principal ? run : null;
}

function levelOf(change: RunChange): LoggingLevel {
  if (change.status === 'suspended') return 'notice';
  if (change.status === 'sealed' && change.outcome !== 'succeeded') return 'error';
  return 'info';
}

/** What one commit did to a run, in words a host's log shows. */
export function runChangeMessage(change: RunChange): string {
  const state = change.status === 'sealed' ? `ended ${change.outcome ?? 'without an outcome'}` : change.status === 'suspended' ? 'waits for a person on this plane' : 'is running';
  return `run ${change.runId}: ${change.kind}; it ${state}`;
}

/**
 * Registers completion on `server`, and on a 2025-11-25 session subscriptions and log messages;
 * `promptNames` answers the prompts this caller is offered (they take no arguments).
 */
export function watchRuns(server: Server, door: McpPlaneDoor, context: McpCallContext, caller: McpCaller, promptNames: (ctx: ServerContext) => Promise<string[]>): RunWatch {
  server.setRequestHandler('completion/complete', async (request, ctx) => {
    const { ref, argument } = request.params;
    if (ref.type === 'ref/prompt') {
      if (!(await promptNames(ctx)).includes(ref.name)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: no prompt named ${JSON.stringify(ref.name.slice(0, 200))}`, { prompt: ref.name.slice(0, 200) });
      return { completion: { values: [], total: 0, hasMore: false } };
    }
    if (ref.uri !== runTemplate.uriTemplate || argument.name !== RUN_ID_ARGUMENT) {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Invalid params: nothing completes ${JSON.stringify(argument.name.slice(0, 100))} of ${JSON.stringify(ref.uri.slice(0, 200))}; the template ${runTemplate.uriTemplate} completes ${RUN_ID_ARGUMENT}`, { ref: ref.uri.slice(0, 200), argument: argument.name.slice(0, 100) });
    }
    const listed = await door.dispatch('runs.list', { limit: RUNS_SCANNED }, context);
    const runs = listed.ok ? (listed.value as CommandResponse<'runs.list'>).runs : [];
    const matching = runs.filter((run) => run.chain[0] === context.principal && run.runId.startsWith(argument.value)).map((run) => run.runId);
    return { completion: { values: matching.slice(0, MAX_COMPLETIONS), total: matching.length, hasMore: matching.length > MAX_COMPLETIONS } };
  });

  if (caller.era === 'modern') return { started: () => undefined };

  const subscribed = new Set<string>();
  const told = new Set<string>();
  const unlisten = door.onJournal((changes) => {
    for (const change of changes) {
      if (subscribed.has(change.runId)) void server.sendResourceUpdated({ uri: `${RUN_URI_PREFIX}${change.runId}` }).catch(() => undefined);
      if (told.has(change.runId) || subscribed.has(change.runId)) {
        // The host's level is kept per session: the message names it, so the level filters it.
        void server.sendLoggingMessage({ level: levelOf(change), logger: 'agentplane', data: { message: runChangeMessage(change), ...change } }, caller.sessionId).catch(() => undefined);
      }
      if (change.status === 'sealed') told.delete(change.runId);
    }
  });
  const closed = server.onclose;
  server.onclose = () => {
    unlisten();
    closed?.();
  };

  const runIdOf = async (uri: string): Promise<string> => {
    const runId = uri.startsWith(RUN_URI_PREFIX) ? uri.slice(RUN_URI_PREFIX.length) : '';
    if (!runId || !(await ownRun(door, runId, context))) throw new ResourceNotFoundError(uri, `no run at ${uri}`);
    return runId;
  };
  server.setRequestHandler('resources/subscribe', async (request) => {
    subscribed.add(await runIdOf(request.params.uri));
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', async (request) => {
    subscribed.delete(await runIdOf(request.params.uri));
    return {};
  });
  return { started: (runId) => told.add(runId) };
}
