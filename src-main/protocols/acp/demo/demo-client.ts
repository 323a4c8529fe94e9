/**
 * The demo client: an editor stand-in written with the official ACP SDK, the other half of
 * `agentplane acp demo`. It starts a command that speaks ACP on stdio (normally `agentplane
 * acp tap -- <demo agent>`, but any agent command), opens one session in a demo workspace, sends
 * one prompt, and serves what an editor serves: files, terminals, permission answers.
 *
 * Why it is built this way: the demo is the first session a new user sees in the Editor
 * sessions view, so the client must be an honest editor, not a shortcut. It advertises fs
 * read/write and terminals and implements them for real, but only inside the workspace (a path
 * outside it is refused with a clear error, not silently served: the demo must never become a
 * way to read the user's files). Its answer to a permission request is configurable: 'allow'
 * and 'reject' answer at once; 'wait' never answers itself, so the question stays open for
 * whoever else answers (the plane's inbox, when the tap runs with `--policy inbox`); the
 * request then ends when the agent side withdraws it or the connection ends.
 *
 * It narrates the session as short human lines (stderr by default), and can report every
 * ndjson line it exchanges with the command (`onWire`), taken from the child's own pipes.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable, Writable } from 'node:stream';
import {
  client,
  methods,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type PermissionOptionKind,
  type RequestPermissionResponse,
  type SessionUpdate,
  type StopReason,
} from '@agentclientprotocol/sdk';
import { DemoTerminals } from './demo-terminals';
import { prepareDemoWorkspace } from './demo-workspace';

export const DEMO_CLIENT_NAME = 'agentplane-demo-client';
export const DEMO_PROMPT = 'Make the greeting in greeting.ts friendlier, then check that it still works.';

export type DemoPermissionAnswer = 'allow' | 'reject' | 'wait';
export type WireDirection = 'to-agent' | 'from-agent';

export interface DemoClientOptions {
  /** argv of the agent command (no shell). */
  command: string[];
  /** The workspace folder (created and seeded when needed); a new temporary folder when absent. */
  cwd?: string;
  permission: DemoPermissionAnswer;
  /** Receives each transcript line; stderr when absent. */
  log?: (line: string) => void;
  /** Receives each ndjson line exchanged with the command, as written on its pipes. */
  onWire?: (direction: WireDirection, line: string) => void;
  /** Aborting it cancels the turn (`session/cancel`); the prompt then ends with stopReason 'cancelled'. */
  signal?: AbortSignal;
  prompt?: string;
  version?: string;
}

export interface DemoClientResult {
  stopReason: StopReason;
  transcript: string[];
  workspace: string;
  sessionId: string;
}

const CANCELLED: RequestPermissionResponse = { outcome: { outcome: 'cancelled' } };
const ANSWER_KINDS: Record<'allow' | 'reject', PermissionOptionKind[]> = {
  allow: ['allow_once', 'allow_always'],
  reject: ['reject_once', 'reject_always'],
};
/** How long the command gets to exit after its stdin closes before it is killed. */
const EXIT_GRACE_MS = 3000;

export async function runDemoClient(options: DemoClientOptions): Promise<DemoClientResult> {
  const [program, ...args] = options.command;
  if (!program) throw new Error('runDemoClient: the agent command is empty');
  const workspace = prepareDemoWorkspace(options.cwd);
  const transcript: string[] = [];
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const say = (line: string): void => {
    transcript.push(line);
    log(line);
  };
  const narrator = new UpdateNarrator(say);
  const cancelled = new AbortController();

  const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'], shell: false });
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  let exitedHow = '';
  const exited = new Promise<void>((done) =>
    child.once('close', (code, signal) => {
      exitedHow = signal ? `was killed by ${signal}` : `exited with code ${String(code)}`;
      done();
    }),
  );
  // A child that dies mid-write must not take this process down with EPIPE.
  child.stdin.on('error', () => undefined);
  createInterface({ input: child.stderr }).on('line', (line) => say(`agent stderr: ${line}`));

  const inside = (path: string): string => insideWorkspace(workspace, path);
  const terminals = new DemoTerminals((cwd) => (cwd === null || cwd === undefined ? workspace : inside(cwd)), {
    started: (id, argv, cwd) => say(`terminal ${id}: $ ${argv.map(shortArg).join(' ')}  (in ${relative(workspace, cwd) || '.'})`),
    exited: (id, status, output) => {
      for (const line of output.trimEnd().split('\n')) if (line) say(`terminal ${id}: | ${line}`);
      say(`terminal ${id}: exited ${status.signal ? `on ${status.signal}` : String(status.exitCode)}`);
    },
  });

  const app = client({ name: DEMO_CLIENT_NAME })
    .onNotification(methods.client.session.update, ({ params }) => narrator.update(params.update))
    .onRequest(methods.client.session.requestPermission, async ({ params, signal }) => {
      narrator.flush();
      const question = params.toolCall.title ?? params.toolCall.toolCallId;
      say(`permission asked: ${question} [${params.options.map((option) => option.optionId).join(', ')}]`);
      if (cancelled.signal.aborted) return CANCELLED;
      if (options.permission === 'wait') {
        // Not even our own session/cancel answers it: the agent withdraws it ($/cancel_request,
        // which aborts `signal`), or the connection ends (which aborts it too).
        say('permission: left open for an answer from elsewhere (the plane inbox)');
        await abortOf(signal);
        say('permission: withdrawn before this client answered');
        return CANCELLED;
      }
      const option = ANSWER_KINDS[options.permission].map((kind) => params.options.find((offered) => offered.kind === kind)).find((found) => found !== undefined);
      if (!option) {
        say(`permission: the agent offered no ${options.permission} option; answering cancelled`);
        return CANCELLED;
      }
      say(`permission answered: ${option.optionId}`);
      return { outcome: { outcome: 'selected', optionId: option.optionId } };
    })
    .onRequest(methods.client.fs.readTextFile, ({ params }) => {
      const path = refuseOutside(say, 'read', () => inside(params.path));
      const text = readFileSync(path, 'utf8');
      const lines = text.split('\n');
      const first = Math.max((params.line ?? 1) - 1, 0);
      const content = params.line == null && params.limit == null ? text : lines.slice(first, params.limit == null ? undefined : first + params.limit).join('\n');
      say(`fs read ${relative(workspace, path)}`);
      return { content };
    })
    .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
      const path = refuseOutside(say, 'write', () => inside(params.path));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, params.content);
      say(`fs wrote ${relative(workspace, path)}`);
      return {};
    })
    .onRequest(methods.client.terminal.create, ({ params }) => ({ terminalId: refuseOutside(say, 'terminal', () => terminals.create(params)) }))
    .onRequest(methods.client.terminal.output, ({ params }) => terminals.output(params.terminalId))
    .onRequest(methods.client.terminal.waitForExit, ({ params }) => terminals.waitForExit(params.terminalId))
    .onRequest(methods.client.terminal.kill, ({ params }) => {
      terminals.kill(params.terminalId);
      return {};
    })
    .onRequest(methods.client.terminal.release, ({ params }) => {
      terminals.release(params.terminalId);
      return {};
    });

  let sessionId = '';
  let result: DemoClientResult | undefined;
  let failure: unknown;
  try {
    const stream = ndJsonStream(tappedWritable(child.stdin, options.onWire), tappedReadable(child.stdout, options.onWire));
    const stopReason = await app.connectWith(stream, async (agent) => {
      const init = await agent.request(methods.agent.initialize, {
        protocolVersion: PROTOCOL_VERSION,
        clientInfo: { name: DEMO_CLIENT_NAME, title: 'AgentPlane demo client', version: options.version ?? '0.0.0' },
        clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
      });
      if (init.protocolVersion !== PROTOCOL_VERSION) throw new Error(`the agent speaks ACP protocol version ${init.protocolVersion}; this client speaks ${PROTOCOL_VERSION}`);
      say(`connected to ${init.agentInfo ? `${init.agentInfo.name} ${init.agentInfo.version}` : 'an agent that did not name itself'} (ACP v${init.protocolVersion})`);
      sessionId = (await agent.request(methods.agent.session.new, { cwd: workspace, mcpServers: [] })).sessionId;
      say(`session ${sessionId} in ${workspace}`);
      // After session/cancel, a permission request this client would answer itself is answered
      // 'cancelled' (ACP); one left waiting ends when the agent withdraws it.
      const cancel = (): void => {
        say('cancelling the turn');
        agent.notify(methods.agent.session.cancel, { sessionId }).catch(() => undefined);
        cancelled.abort();
      };
      if (options.signal?.aborted) cancel();
      else options.signal?.addEventListener('abort', cancel, { once: true });
      const prompt = options.prompt ?? DEMO_PROMPT;
      say(`you: ${prompt}`);
      try {
        const response = await agent.request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: prompt }] });
        return response.stopReason;
      } finally {
        options.signal?.removeEventListener('abort', cancel);
        narrator.flush();
      }
    });
    say(`turn ended: ${stopReason}`);
    result = { stopReason, transcript, workspace, sessionId };
  } catch (error) {
    failure = error;
  }
  terminals.releaseAll();
  child.stdin.end();
  const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_GRACE_MS);
  await exited;
  clearTimeout(timer);
  if (result) return result;
  // A command that never started, or that ended mid-session, explains the failure better than
  // the closed connection does.
  if (spawnError) throw spawnError;
  const reason = failure instanceof Error ? failure.message : String(failure);
  throw new Error(`${exitedHow ? `the agent command ${exitedHow}` : 'the session failed'} before the turn ended (${reason})`, { cause: failure });
}

/**
 * `path` as a real absolute path inside `workspace`, or a thrown RequestError naming both.
 * ACP paths are absolute; symlinks are resolved through the deepest existing ancestor, so a link
 * inside the workspace that points out of it is refused like the outside path itself.
 */
export function insideWorkspace(workspace: string, path: string): string {
  if (!isAbsolute(path)) throw RequestError.invalidParams({ path }, `ACP paths are absolute; ${path} is not`);
  const target = resolve(path);
  let existing = target;
  while (!existsSync(existing) && dirname(existing) !== existing) existing = dirname(existing);
  const real = join(realpathSync(existing), relative(existing, target));
  for (const candidate of [target, real]) {
    const rel = relative(workspace, candidate);
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw RequestError.invalidParams({ path, workspace }, `refused: ${path} is outside the demo workspace ${workspace}`);
    }
  }
  return real;
}

/** Runs `resolvePath`; a refusal is told in the transcript before it goes back to the agent. */
function refuseOutside<T>(say: (line: string) => void, what: string, resolvePath: () => T): T {
  try {
    return resolvePath();
  } catch (error) {
    say(`${what} refused: ${error instanceof Error ? error.message : String(error)}`);
    throw error;
  }
}

function abortOf(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((done) => signal.addEventListener('abort', () => done(), { once: true }));
}

function shortArg(arg: string): string {
  const quoted = /[\s'"]/.test(arg) ? JSON.stringify(arg) : arg;
  return quoted.length > 48 ? `${quoted.slice(0, 45)}…"` : quoted;
}

/** The child's stdin as the SDK's output, reporting each complete line written to it. */
function tappedWritable(stdin: Writable, onWire: DemoClientOptions['onWire']): WritableStream<Uint8Array> {
  const pipe = Writable.toWeb(stdin) as WritableStream<Uint8Array>;
  if (!onWire) return pipe;
  const tap = lineTap('to-agent', onWire);
  tap.readable.pipeTo(pipe).catch(() => undefined);
  return tap.writable;
}

/** The child's stdout as the SDK's input, reporting each complete line read from it. */
function tappedReadable(stdout: Readable, onWire: DemoClientOptions['onWire']): ReadableStream<Uint8Array> {
  const pipe = Readable.toWeb(stdout) as ReadableStream<Uint8Array>;
  return onWire ? pipe.pipeThrough(lineTap('from-agent', onWire)) : pipe;
}

/** Passes bytes through unchanged and reports every non-empty line they carry. */
function lineTap(direction: WireDirection, onWire: NonNullable<DemoClientOptions['onWire']>): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  let pending = '';
  const report = (line: string): void => {
    if (line.trim() !== '') onWire(direction, line.replace(/\r$/, ''));
  };
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(chunk);
      pending += decoder.decode(chunk, { stream: true });
      for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
        report(pending.slice(0, newline));
        pending = pending.slice(newline + 1);
      }
    },
    flush() {
      report(pending + decoder.decode());
    },
  });
}

/**
 * Turns `session/update` notifications into transcript lines: streamed text is gathered until
 * something else happens (one line per thought or message, not one per chunk); tool calls are
 * named by their titles.
 */
class UpdateNarrator {
  private text: { kind: 'thinking' | 'agent'; value: string } | null = null;
  private readonly titles = new Map<string, string>();

  constructor(private readonly say: (line: string) => void) {}

  update(update: SessionUpdate): void {
    switch (update.sessionUpdate) {
      case 'agent_thought_chunk':
      case 'agent_message_chunk': {
        const kind = update.sessionUpdate === 'agent_thought_chunk' ? 'thinking' : 'agent';
        const chunk = update.content.type === 'text' ? update.content.text : `[${update.content.type}]`;
        if (this.text?.kind !== kind) this.flush();
        this.text = { kind, value: (this.text?.value ?? '') + chunk };
        return;
      }
      case 'plan':
        this.flush();
        this.say(`plan: ${update.entries.map((entry) => `${PLAN_MARKS[entry.status]} ${entry.content}`).join(' · ')}`);
        return;
      case 'tool_call': {
        this.flush();
        this.titles.set(update.toolCallId, update.title);
        const diffs = (update.content ?? []).filter((content) => content.type === 'diff');
        const diffNote = diffs.map((diff) => ` with a diff of ${lineCount(diff.oldText)} -> ${lineCount(diff.newText)} lines`).join('');
        this.say(`tool ${update.title} (${update.kind ?? 'other'}): ${update.status ?? 'pending'}${diffNote}`);
        return;
      }
      case 'tool_call_update':
        this.flush();
        if (update.status) this.say(`tool ${this.titles.get(update.toolCallId) ?? update.toolCallId}: ${update.status}`);
        return;
      default:
        this.flush();
        this.say(`update: ${update.sessionUpdate}`);
    }
  }

  flush(): void {
    if (this.text) this.say(`${this.text.kind}: ${this.text.value}`);
    this.text = null;
  }
}

const PLAN_MARKS = { pending: '[ ]', in_progress: '[>]', completed: '[x]' } as const;

function lineCount(text: string | null | undefined): number {
  return text ? text.split('\n').length : 0;
}
