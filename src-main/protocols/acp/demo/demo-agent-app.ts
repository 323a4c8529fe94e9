/**
 * The demo agent's behaviour: a scripted coding session written with the official ACP SDK
 * (`@agentclientprotocol/sdk`, protocol version 1), so what the plane taps is what a real
 * SDK-built agent sends, not a hand-rolled imitation of one.
 *
 * Why a script: this session is the first thing a new user sees in the Editor sessions view,
 * and it is there to exercise every element of that view once: thoughts, a plan whose entries
 * change status, a file read through the client, an edit tool call with a diff and locations
 * going pending -> in_progress -> completed, a permission request (left waiting in the inbox
 * when the tap runs with `--policy inbox`), a terminal embedded in a tool call, and a streamed
 * summary. It calls no model and reads no clock or randomness: ids are counters, texts are
 * fixed, so two runs against the same workspace put the same messages on the wire.
 *
 * Cancellation follows the protocol: `session/cancel` aborts the turn, a pending permission
 * request is withdrawn with `$/cancel_request` (the SDK sends it when the signal aborts) and
 * counts as cancelled, a running terminal is killed and released, and the prompt answers
 * `stopReason: 'cancelled'` rather than an error.
 */
import { join } from 'node:path';
import {
  agent,
  methods,
  PROTOCOL_VERSION,
  RequestError,
  type AgentApp,
  type AgentContext,
  type PermissionOption,
  type PlanEntry,
  type PlanEntryStatus,
  type PromptResponse,
  type RequestPermissionOutcome,
  type RequestPermissionRequest,
  type SessionUpdate,
  type StopReason,
  type ToolCallContent,
} from '@agentclientprotocol/sdk';
import { DEMO_FILE } from './demo-workspace';
import { randomBytes } from 'node:crypto';

export const DEMO_AGENT_NAME = 'agentplane-demo-agent';

/** The options the agent offers for its edit, in the order an editor shows them. */
export const DEMO_PERMISSION_OPTIONS: PermissionOption[] = [
  { optionId: 'allow_once', name: 'Allow this edit', kind: 'allow_once' },
  { optionId: 'allow_always', name: 'Always allow edits in this session', kind: 'allow_always' },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
];

/**
 * The command the agent asks the client's terminal to run from the session's cwd: a check
 * whose output tells whether the edit landed, so the transcript shows the edit's effect.
 * `node` is the one program an AgentPlane user is sure to have; the client runs it without a
 * shell, so the script is one argument.
 */
export const DEMO_CHECK_COMMAND = 'node';
export const DEMO_CHECK_ARGS = [
  '-e',
  "const s = require('node:fs').readFileSync('greeting.ts', 'utf8'); console.log(s.includes('!') ? 'greeting check: friendly' : 'greeting check: plain'); console.log('1 check, 0 failures');",
];

export interface DemoAgentOptions {
  version: string;
  /** Milliseconds to pause between steps, so a person watching the view sees it unfold. 0 in tests. */
  pauseMs?: number;
}

interface DemoSession {
  id: string;
  cwd: string;
  /** Set by the turn in progress; `session/cancel` aborts it. */
  turn: AbortController | null;
  /** The user chose allow_always: later edits in this session are not asked about again. */
  editsAllowed: boolean;
  turns: number;
}

/** Thrown inside a turn once it is cancelled; the prompt handler turns it into stopReason 'cancelled'. */
class TurnCancelled extends Error {}

const PLAN_STEPS = [
  { content: `Read ${DEMO_FILE}`, priority: 'high' },
  { content: `Make the greeting in ${DEMO_FILE} friendlier`, priority: 'high' },
  { content: 'Run the check', priority: 'medium' },
] as const;

/** The scripted edit: a template literal with an exclamation mark; an already edited file gets a note instead. */
export function friendlierGreeting(oldText: string): string {
  const edited = oldText.replace("'Hello, ' + name", '`Hello, ${name}!`');
  if (edited !== oldText) return edited;
  const separator = oldText === '' || oldText.endsWith('\n') ? '' : '\n';
  return `${oldText}${separator}// Reviewed by the AgentPlane demo agent: already friendly.\n`;
}

export function createDemoAgentApp(options: DemoAgentOptions): AgentApp {
  const sessions = new Map<string, DemoSession>();
  let sessionCount = 0;

  return agent({ name: DEMO_AGENT_NAME })
    .onRequest(methods.agent.initialize, () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentInfo: { name: DEMO_AGENT_NAME, title: 'AgentPlane demo agent', version: options.version },
      agentCapabilities: { loadSession: false },
      authMethods: [],
    }))
    .onRequest(methods.agent.session.new, ({ params }) => {
      sessionCount += 1;
      // Unique across demo runs (each is its own process), so two sessions in the list are told apart.
      const id = `demo-session-${sessionCount}-${randomBytes(3).toString('hex')}`;
      sessions.set(id, { id, cwd: params.cwd, turn: null, editsAllowed: false, turns: 0 });
      return { sessionId: id };
    })
    .onNotification(methods.agent.session.cancel, ({ params }) => {
      sessions.get(params.sessionId)?.turn?.abort(new TurnCancelled('session/cancel'));
    })
    .onRequest(methods.agent.session.prompt, async ({ params, client, signal }) => {
      const session = sessions.get(params.sessionId);
      if (!session) throw RequestError.sessionNotFound(params.sessionId);
      if (session.turn) throw RequestError.invalidRequest({ sessionId: session.id }, 'a prompt is already running in this session');
      const turn = new AbortController();
      session.turn = turn;
      session.turns += 1;
      // The turn ends on session/cancel, on $/cancel_request for this prompt, or when the connection closes.
      const turnSignal = AbortSignal.any([turn.signal, signal]);
      try {
        return await runScriptedTurn(session, client, turnSignal, options.pauseMs ?? 0);
      } catch (error) {
        if (turnSignal.aborted) return { stopReason: 'cancelled' satisfies StopReason };
        throw error;
      } finally {
        session.turn = null;
      }
    });
}

async function runScriptedTurn(session: DemoSession, client: AgentContext, signal: AbortSignal, pauseMs: number): Promise<PromptResponse> {
  const { id: sessionId } = session;
  const n = session.turns;
  const file = join(session.cwd, DEMO_FILE);
  const location = [{ path: file, line: 1 }];

  const checkpoint = async (): Promise<void> => {
    if (pauseMs > 0) await new Promise((done) => setTimeout(done, pauseMs));
    if (signal.aborted) throw new TurnCancelled('cancelled');
  };
  const send = async (update: SessionUpdate): Promise<void> => {
    if (signal.aborted) throw new TurnCancelled('cancelled');
    await client.notify(methods.client.session.update, { sessionId, update });
  };
  const text = (sessionUpdate: 'agent_thought_chunk' | 'agent_message_chunk', chunk: string): Promise<void> =>
    send({ sessionUpdate, content: { type: 'text', text: chunk } });
  const plan = (statuses: readonly [PlanEntryStatus, PlanEntryStatus, PlanEntryStatus]): Promise<void> =>
    send({ sessionUpdate: 'plan', entries: PLAN_STEPS.map((step, i): PlanEntry => ({ ...step, status: statuses[i] ?? 'pending' })) });
  const requestOptions = { cancellationSignal: signal, stopWaitingOnCancel: true };

  await text('agent_thought_chunk', `The user wants a friendlier greeting. `);
  await text('agent_thought_chunk', `I should read ${DEMO_FILE} before changing anything, then check the result.`);
  await checkpoint();
  await plan(['in_progress', 'pending', 'pending']);

  // 1. Read the file through the client (the editor's view of it, unsaved changes included).
  const readId = `read-${n}`;
  await send({ sessionUpdate: 'tool_call', toolCallId: readId, title: `Read ${DEMO_FILE}`, kind: 'read', status: 'in_progress', locations: location, rawInput: { path: file } });
  let oldText: string;
  try {
    oldText = (await client.request(methods.client.fs.readTextFile, { sessionId, path: file }, requestOptions)).content;
  } catch (error) {
    if (signal.aborted) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    await send({ sessionUpdate: 'tool_call_update', toolCallId: readId, status: 'failed', content: [{ type: 'content', content: { type: 'text', text: reason } }] });
    await text('agent_message_chunk', `I could not read ${DEMO_FILE} (${reason}), so I changed nothing.`);
    return { stopReason: 'end_turn' };
  }
  await send({ sessionUpdate: 'tool_call_update', toolCallId: readId, status: 'completed', rawOutput: { lines: oldText.split('\n').length } });
  await checkpoint();
  await plan(['completed', 'in_progress', 'pending']);
  await text('agent_thought_chunk', 'The greeting concatenates strings and ends flatly; a template literal with an exclamation mark reads better.');

  // 2. Propose the edit as a diff, ask before writing, write only when allowed.
  const newText = friendlierGreeting(oldText);
  const editId = `edit-${n}`;
  const diff: ToolCallContent = { type: 'diff', path: file, oldText, newText };
  const editTitle = `Edit ${DEMO_FILE}`;
  await send({ sessionUpdate: 'tool_call', toolCallId: editId, title: editTitle, kind: 'edit', status: 'pending', locations: location, content: [diff], rawInput: { path: file } });
  await checkpoint();

  let allowed = session.editsAllowed;
  if (!allowed) {
    const permissionRequest: RequestPermissionRequest = {
      sessionId,
      toolCall: { toolCallId: editId, title: editTitle, kind: 'edit', status: 'pending', locations: location, content: [diff] },
      options: DEMO_PERMISSION_OPTIONS,
    };
    let outcome: RequestPermissionOutcome;
    try {
      outcome = (
        await client.request(
          methods.client.session.requestPermission,
          permissionRequest,
          requestOptions,
        )
      ).outcome;
    } catch (error) {
      if (signal.aborted) throw new TurnCancelled('cancelled');
      throw error;
    }
    // A client answers 'cancelled' only for a cancelled turn (ACP); the turn ends either way.
    if (outcome.outcome === 'cancelled') {
      await send({ sessionUpdate: 'tool_call_update', toolCallId: editId, status: 'failed' }).catch(() => undefined);
      return { stopReason: 'cancelled' };
    }
    const chosen = DEMO_PERMISSION_OPTIONS.find((option) => option.optionId === outcome.optionId);
    allowed = chosen?.kind === 'allow_once' || chosen?.kind === 'allow_always';
    if (chosen?.kind === 'allow_always') session.editsAllowed = true;
  }

  if (allowed) {
    await send({ sessionUpdate: 'tool_call_update', toolCallId: editId, status: 'in_progress' });
    await client.request(methods.client.fs.writeTextFile, { sessionId, path: file, content: newText }, requestOptions);
    await send({ sessionUpdate: 'tool_call_update', toolCallId: editId, status: 'completed' });
    await plan(['completed', 'completed', 'in_progress']);
  } else {
    await send({
      sessionUpdate: 'tool_call_update',
      toolCallId: editId,
      status: 'failed',
      content: [diff, { type: 'content', content: { type: 'text', text: 'The edit was rejected; the file is unchanged.' } }],
    });
    await plan(['completed', 'pending', 'in_progress']);
  }
  await checkpoint();

  // 3. Run the check in a client terminal, shown inside its tool call.
  const runId = `run-${n}`;
  await send({
    sessionUpdate: 'tool_call',
    toolCallId: runId,
    title: 'Run the check',
    kind: 'execute',
    status: 'pending',
    rawInput: { command: DEMO_CHECK_COMMAND, args: DEMO_CHECK_ARGS, cwd: session.cwd },
  });
  const terminal = await client.createTerminal({ sessionId, command: DEMO_CHECK_COMMAND, args: DEMO_CHECK_ARGS, cwd: session.cwd, outputByteLimit: 4096 }, requestOptions);
  let output: string;
  let exitCode: number | null | undefined;
  try {
    await send({ sessionUpdate: 'tool_call_update', toolCallId: runId, status: 'in_progress', content: [{ type: 'terminal', terminalId: terminal.id }] });
    const exit = await untilAborted(terminal.waitForExit(), signal);
    if (!exit) {
      await terminal.kill().catch(() => undefined);
      throw new TurnCancelled('cancelled');
    }
    exitCode = exit.exitCode;
    output = (await terminal.currentOutput()).output;
  } finally {
    await terminal.release().catch(() => undefined);
  }
  const passed = exitCode === 0;
  await send({ sessionUpdate: 'tool_call_update', toolCallId: runId, status: passed ? 'completed' : 'failed', rawOutput: { exitCode, output } });
  await plan(['completed', allowed ? 'completed' : 'pending', 'completed']);
  await checkpoint();

  // 4. The summary, streamed in chunks as a model would.
  const firstLine = output.split('\n')[0] ?? '';
  const summary = allowed
    ? [`I changed ${DEMO_FILE} `, 'to build the greeting with a template literal ending in an exclamation mark, ', `then ran the check: ${firstLine} (exit ${String(exitCode)}).`]
    : [`You rejected the edit, so ${DEMO_FILE} is unchanged. `, `The check on the current file says: ${firstLine} (exit ${String(exitCode)}).`];
  for (const chunk of summary) await text('agent_message_chunk', chunk);
  return { stopReason: 'end_turn' };
}

/** Resolves with the promise's value, or with undefined as soon as `signal` aborts. */
async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return undefined;
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((done) => {
    onAbort = () => done(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([promise, aborted]);
  } finally {
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
