import { describe, it, expect } from 'vitest';
import { PROTOCOL_VERSION, agent, client, ndJsonStream, type SessionUpdate as SdkSessionUpdate } from '@agentclientprotocol/sdk';
import { classifyMessage, notificationParamsSchemas, requestParamsSchemas, responseResultSchemas } from './acp-schema';
import { foldSession, requestKeyOf, summarizeSession, type ObservedMessage } from './session-fold';
import { SessionViewSchema, type WireDirection } from './session-view';

const SESSION = 'sess-1';
const FILE = '/work/project/math.ts';
const OLD = 'export const add = (a: number, b: number) => a - b;\n';
const NEW = 'export const add = (a: number, b: number) => a + b;\n';

const at = (wire: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, 0, wire)).toISOString();

/**
 * Runs one scripted session between the SDK's own client and agent, in process, through a pair
 * of streams with a tap in the middle that records every line in the order it passed — what
 * `agentplane acp tap` journals, without spawning anything.
 */
async function recordScriptedSession(): Promise<Array<{ dir: WireDirection; line: string }>> {
  const lines: Array<{ dir: WireDirection; line: string }> = [];
  const tap = (dir: WireDirection) => {
    const decoder = new TextDecoder();
    let buffered = '';
    return new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        buffered += decoder.decode(chunk, { stream: true });
        for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim() !== '') lines.push({ dir, line });
        }
        controller.enqueue(chunk);
      },
    });
  };
  const toAgent = tap('toAgent');
  const toEditor = tap('toEditor');

  const agentApp = agent({ name: 'scripted-agent' })
    .onRequest('initialize', () => ({
      protocolVersion: PROTOCOL_VERSION,
      agentCapabilities: { loadSession: false },
      agentInfo: { name: 'scripted-agent', title: 'Scripted Agent', version: '0.1.0' },
      authMethods: [],
    }))
    .onRequest('session/new', () => ({ sessionId: SESSION }))
    .onRequest('session/prompt', async ({ params, client: editor }) => {
      const sessionId = params.sessionId;
      const update = (u: SdkSessionUpdate) => editor.notify('session/update', { sessionId, update: u });
      await update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'The bug is ' } });
      await update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'in add().' } });
      await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'I will fix ' } });
      await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'math.ts.' } });
      await update({
        sessionUpdate: 'plan',
        entries: [
          { content: 'Fix add()', priority: 'high', status: 'in_progress' },
          { content: 'Run the tests', priority: 'medium', status: 'pending' },
        ],
      });
      await update({ sessionUpdate: 'tool_call', toolCallId: 'call-1', title: 'Edit math.ts', kind: 'edit', status: 'pending', locations: [{ path: FILE, line: 1 }] });
      const answer = await editor.request('session/request_permission', {
        sessionId,
        toolCall: { toolCallId: 'call-1' },
        options: [
          { optionId: 'allow', name: 'Allow once', kind: 'allow_once' },
          { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
        ],
      });
      if (answer.outcome.outcome !== 'selected') return { stopReason: 'cancelled' };
      await update({ sessionUpdate: 'tool_call_update', toolCallId: 'call-1', status: 'in_progress' });
      await editor.request('fs/write_text_file', { sessionId, path: FILE, content: NEW });
      await update({ sessionUpdate: 'tool_call_update', toolCallId: 'call-1', status: 'completed', content: [{ type: 'diff', path: FILE, oldText: OLD, newText: NEW }] });
      const terminal = await editor.createTerminal({ sessionId, command: 'npm', args: ['test'] });
      await update({ sessionUpdate: 'tool_call', toolCallId: 'call-2', title: 'npm test', kind: 'execute', status: 'in_progress', content: [{ type: 'terminal', terminalId: terminal.id }] });
      await terminal.waitForExit();
      await terminal.currentOutput();
      await terminal.release();
      await update({ sessionUpdate: 'tool_call_update', toolCallId: 'call-2', status: 'completed' });
      await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Done.' } });
      return { stopReason: 'end_turn' };
    });

  const editorApp = client({ name: 'scripted-editor' })
    .onNotification('session/update', () => undefined)
    .onRequest('session/request_permission', () => ({ outcome: { outcome: 'selected', optionId: 'allow' } }))
    .onRequest('fs/write_text_file', () => ({}))
    .onRequest('terminal/create', () => ({ terminalId: 'term-1' }))
    .onRequest('terminal/wait_for_exit', () => ({ exitCode: 0, signal: null }))
    .onRequest('terminal/output', () => ({ output: 'PASS math.test.ts\n', truncated: false, exitStatus: { exitCode: 0, signal: null } }))
    .onRequest('terminal/release', () => ({}));

  const agentConnection = agentApp.connect(ndJsonStream(toEditor.writable, toAgent.readable));
  await editorApp.connectWith(ndJsonStream(toAgent.writable, toEditor.readable), async (ctx) => {
    await ctx.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
      clientInfo: { name: 'scripted-editor', title: 'Scripted Editor', version: '1.2.3' },
    });
    const { sessionId } = await ctx.request('session/new', { cwd: '/work/project', mcpServers: [] });
    await ctx.request('session/prompt', { sessionId, prompt: [{ type: 'text', text: 'Fix the failing test' }] });
  });
  agentConnection.close();
  return lines;
}

const started: ObservedMessage = { update: 'tap/started', at: at(0), tapName: 'scripted', policy: 'observe', command: ['scripted-agent'] };

function observe(lines: Array<{ dir: WireDirection; line: string }>): ObservedMessage[] {
  return [started, ...lines.map(({ dir, line }, i): ObservedMessage => ({ update: 'message', dir, wire: i + 1, at: at(i + 1), message: JSON.parse(line) as unknown }))];
}

/** A hand-built message, as the tap would journal it. */
let wire = 100;
function msg(dir: WireDirection, message: Record<string, unknown>): ObservedMessage {
  wire += 1;
  return { update: 'message', dir, wire, at: at(wire), message: { jsonrpc: '2.0', ...message } };
}
const update = (u: Record<string, unknown>) => msg('toEditor', { method: 'session/update', params: { sessionId: SESSION, update: u } });
const prompt = (id: number) => msg('toAgent', { id, method: 'session/prompt', params: { sessionId: SESSION, prompt: [{ type: 'text', text: 'go' }] } });
const permission = (id: number) =>
  msg('toEditor', {
    id,
    method: 'session/request_permission',
    params: { sessionId: SESSION, toolCall: { toolCallId: 'c1', title: 'Delete build/' }, options: [{ optionId: 'yes', name: 'Yes', kind: 'allow_once' }] },
  });

describe('a session recorded from the SDK in process', () => {
  it('is JSON-RPC the schemas read, line by line', async () => {
    const lines = await recordScriptedSession();
    const methods = new Map<string, string>();
    for (const { dir, line } of lines) {
      const json = JSON.parse(line) as { params?: unknown; result?: unknown };
      const c = classifyMessage(json);
      expect(c.type, line).not.toBe('invalid');
      if (c.type === 'request') {
        methods.set(requestKeyOf(dir, c.id ?? null), c.method ?? '');
        const schema = requestParamsSchemas[c.method as keyof typeof requestParamsSchemas];
        expect(schema, `a schema for ${c.method}`).toBeDefined();
        expect(schema.safeParse(json.params).success, line).toBe(true);
      } else if (c.type === 'notification') {
        expect(notificationParamsSchemas[c.method as keyof typeof notificationParamsSchemas].safeParse(json.params).success, line).toBe(true);
      } else {
        const method = methods.get(requestKeyOf(dir === 'toAgent' ? 'toEditor' : 'toAgent', c.id ?? null));
        expect(method, `the request answered by ${line}`).toBeDefined();
        const schema = responseResultSchemas[method as keyof typeof responseResultSchemas];
        if (schema) expect(schema.safeParse(json.result ?? {}).success, line).toBe(true);
      }
    }
    expect([...methods.values()]).toEqual([
      'initialize',
      'session/new',
      'session/prompt',
      'session/request_permission',
      'fs/write_text_file',
      'terminal/create',
      'terminal/wait_for_exit',
      'terminal/output',
      'terminal/release',
    ]);
  });

  it('folds into the conversation, plan, cards, permission, effects and terminal a person reads', async () => {
    const observed = observe(await recordScriptedSession());
    const view = foldSession('run-1', SESSION, observed);
    // What the plane answers is what the contract checks on arrival: the fold's output is of that shape, exactly.
    expect(SessionViewSchema.parse(view)).toEqual(view);
    expect(SessionViewSchema.safeParse({ ...view, counts: undefined }).success).toBe(false);
    expect(SessionViewSchema.safeParse({ runId: 'run-1', sessionId: SESSION }).success).toBe(false);
    expect(view.client).toEqual({ name: 'scripted-editor', title: 'Scripted Editor', version: '1.2.3' });
    expect(view.agent).toEqual({ name: 'scripted-agent', title: 'Scripted Agent', version: '0.1.0' });
    expect(view.cwd).toBe('/work/project');
    expect(view.tapName).toBe('scripted');
    expect(view.conversation.map((c) => c.kind)).toEqual(['prompt', 'thought', 'message', 'toolCall', 'permission', 'toolCall', 'message', 'turnEnd']);
    expect(view.conversation[0]).toMatchObject({ kind: 'prompt', blocks: [{ type: 'text', text: 'Fix the failing test' }] });
    expect(view.conversation[1]).toMatchObject({ kind: 'thought', text: 'The bug is in add().' });
    expect(view.conversation[2]).toMatchObject({ kind: 'message', text: 'I will fix math.ts.' });
    expect(view.conversation[6]).toMatchObject({ kind: 'message', text: 'Done.' });
    expect(view.conversation[7]).toMatchObject({ kind: 'turnEnd', stopReason: 'end_turn' });
    expect(view.plan).toEqual([
      { content: 'Fix add()', priority: 'high', status: 'in_progress' },
      { content: 'Run the tests', priority: 'medium', status: 'pending' },
    ]);
    const [edit, run] = view.toolCalls;
    expect(edit).toMatchObject({ toolCallId: 'call-1', title: 'Edit math.ts', toolKind: 'edit', status: 'completed', locations: [{ path: FILE, line: 1 }] });
    expect(edit?.statusChanges.map((s) => s.status)).toEqual(['pending', 'in_progress', 'completed']);
    expect(edit?.content).toEqual([{ type: 'diff', path: FILE, oldText: OLD, newText: NEW }]);
    expect(run).toMatchObject({ toolCallId: 'call-2', toolKind: 'execute', status: 'completed', content: [{ type: 'terminal', terminalId: 'term-1' }] });
    expect(view.permissions).toHaveLength(1);
    expect(view.permissions[0]).toMatchObject({
      toolCall: { toolCallId: 'call-1', title: 'Edit math.ts', toolKind: 'edit', locations: [{ path: FILE, line: 1 }] },
      options: [
        { optionId: 'allow', name: 'Allow once', kind: 'allow_once' },
        { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
      ],
      outcome: { by: 'editor', outcome: 'selected', optionId: 'allow' },
    });
    expect(view.clientEffects.map((e) => [e.method, e.summary, e.result])).toEqual([
      ['fs/write_text_file', FILE, 'done'],
      ['terminal/create', 'npm test', 'done'],
      ['terminal/wait_for_exit', 'term-1', 'done'],
      ['terminal/output', 'term-1', 'done'],
      ['terminal/release', 'term-1', 'done'],
    ]);
    expect(view.terminals).toEqual([
      { terminalId: 'term-1', command: 'npm test', output: 'PASS math.test.ts\n', truncated: false, exitStatus: { exitCode: 0, signal: null } },
    ]);
    expect(view.counts).toEqual({ prompts: 1, toolCalls: 2, permissions: 1, messages: view.counts.messages, malformed: 0, gaps: 0 });
    // Every line the tap saw was a JSON-RPC message of this session (tap/started is not one).
    expect(view.counts.messages).toBe(observed.length - 1);
    expect(view.state).toBe('idle');
    expect(summarizeSession('run-1', SESSION, observed)).toMatchObject({ state: 'idle', counts: view.counts });
  });
});

describe('the fold, on hand-built sessions', () => {
  it('shows an update kind it does not know as an unknownUpdate item', () => {
    const view = foldSession('r', SESSION, [update({ sessionUpdate: 'hologram_update', beams: 3 })]);
    expect(view.conversation).toEqual([
      { kind: 'unknownUpdate', wire: expect.any(Number), at: expect.any(String), update: 'hologram_update', raw: { sessionUpdate: 'hologram_update', beams: 3 } },
    ]);
  });

  it('counts malformed lines and gaps, and keeps folding past them', () => {
    const view = foldSession('r', SESSION, [
      { update: 'malformed', dir: 'toEditor', wire: 1, at: at(1), size: 9, digest: 'ab'.repeat(32), preview: '{"json' },
      { update: 'gap', dropped: 4, fromWire: 2, toWire: 5, at: at(2) },
      msg('toEditor', { result: 'not JSON-RPC', id: { an: 'object' } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'still here' } }),
    ]);
    expect(view.counts).toMatchObject({ malformed: 2, gaps: 1, messages: 1 });
    expect(view.conversation).toMatchObject([{ kind: 'message', text: 'still here' }]);
  });

  it('lets a decision at the plane answer first, and ignores the editor answering after', () => {
    const request = permission(7);
    const key = requestKeyOf('toEditor', 7);
    const view = foldSession('r', SESSION, [
      prompt(1),
      request,
      { update: 'decision', at: at(500), requestKey: key, by: 'alice', outcome: 'selected', optionId: 'yes' },
      msg('toAgent', { id: 7, result: { outcome: { outcome: 'cancelled' } } }),
    ]);
    expect(view.permissions[0]?.requestKey).toBe('toEditor:7');
    expect(view.permissions[0]?.outcome).toEqual({ by: 'plane:alice', outcome: 'selected', optionId: 'yes', at: at(500) });
    expect(view.state).toBe('active');
  });

  it('is waiting while a permission is open, and a cancelled turn resolves it as cancelled', () => {
    const open = [prompt(1), permission(8), msg('toAgent', { method: 'session/cancel', params: { sessionId: SESSION } })];
    expect(foldSession('r', SESSION, open).state).toBe('waiting');
    const view = foldSession('r', SESSION, [...open, msg('toEditor', { id: 1, result: { stopReason: 'cancelled' } })]);
    expect(view.permissions[0]?.outcome).toMatchObject({ by: 'cancelled', outcome: 'cancelled' });
    expect(view.conversation.at(-1)).toMatchObject({ kind: 'turnEnd', stopReason: 'cancelled' });
    expect(view.state).toBe('idle');
  });

  it('ignores a response with no request, and does not match a response travelling the request’s way', () => {
    const view = foldSession('r', SESSION, [
      msg('toEditor', { id: 42, result: { stopReason: 'end_turn' } }),
      prompt(1),
      msg('toAgent', { id: 1, result: { stopReason: 'end_turn' } }),
    ]);
    expect(view.conversation.map((c) => c.kind)).toEqual(['prompt']);
    expect(view.state).toBe('active');
  });

  it('makes a card from an update for an id never announced, and records only real status changes', () => {
    const view = foldSession('r', SESSION, [
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'ghost', status: 'in_progress' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'ghost', status: 'in_progress', title: 'Read a file' }),
      update({ sessionUpdate: 'tool_call_update', toolCallId: 'ghost', status: 'failed' }),
    ]);
    expect(view.toolCalls).toMatchObject([{ toolCallId: 'ghost', title: 'Read a file', toolKind: 'other', status: 'failed' }]);
    expect(view.toolCalls[0]?.statusChanges.map((s) => s.status)).toEqual(['in_progress', 'failed']);
  });

  it('shows stand-ins as digest and size, in blocks and inside text and diffs', () => {
    const big = { $digest: '0123456789abcdef'.repeat(4), $size: 2_000_000, $omitted: 'over 64 KB' };
    const view = foldSession('r', SESSION, [
      msg('toAgent', { id: 1, method: 'session/prompt', params: { sessionId: SESSION, prompt: [{ type: 'text', text: big }] } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: big } }),
      update({ sessionUpdate: 'tool_call', toolCallId: 'e', title: 'Edit', content: [{ type: 'diff', path: '/f', oldText: null, newText: big }] }),
    ]);
    expect(view.conversation[0]).toMatchObject({ blocks: [{ type: 'other', label: '2000000 bytes omitted', digest: big.$digest, size: 2_000_000 }] });
    expect(view.conversation[1]).toMatchObject({ text: '[2000000 bytes omitted, sha256 0123456789ab]' });
    expect(view.toolCalls[0]?.content).toEqual([{ type: 'diff', path: '/f', oldText: null, newText: '[2000000 bytes omitted, sha256 0123456789ab]', truncated: true }]);
  });

  it('is ended after tap/ended, whatever is still open', () => {
    const view = foldSession('r', SESSION, [
      started,
      prompt(1),
      permission(2),
      { update: 'tap/ended', at: at(900), reason: 'agent-exit', exitCode: 1, signal: null, stderrTail: 'boom' },
    ]);
    expect(view.state).toBe('ended');
    expect(view.ended).toEqual({ reason: 'agent-exit', exitCode: 1, signal: null, stderrTail: 'boom' });
    expect(view.lastAt).toBe(at(900));
    expect(view.startedAt).toBe(at(0));
  });

  it('shows a loaded session’s replayed user turns as prompts, but not a user chunk echoing a live prompt', () => {
    const userChunk = (text: string) => update({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text } });
    const view = foldSession('r', SESSION, [
      msg('toAgent', { id: 1, method: 'session/load', params: { sessionId: SESSION, cwd: '/repo', mcpServers: [] } }),
      userChunk('earlier '),
      userChunk('question'),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'earlier answer' } }),
      msg('toEditor', { id: 1, result: { modes: { currentModeId: 'ask', availableModes: [{ id: 'ask', name: 'Ask' }] } } }),
      prompt(2),
      userChunk('go'),
      update({ sessionUpdate: 'current_mode_update', currentModeId: 'code' }),
    ]);
    expect(view.cwd).toBe('/repo');
    expect(view.currentModeId).toBe('code');
    expect(view.conversation).toMatchObject([
      { kind: 'prompt', blocks: [{ type: 'text', text: 'earlier ' }, { type: 'text', text: 'question' }] },
      { kind: 'message', text: 'earlier answer' },
      { kind: 'prompt', blocks: [{ type: 'text', text: 'go' }] },
    ]);
    expect(view.counts.prompts).toBe(2);
  });

  it('shows an effect the editor refused as an error, and a terminal whose output was cut', () => {
    const out = { $digest: 'c'.repeat(64), $size: 100_000, $omitted: 'over 64 KB' };
    const view = foldSession('r', SESSION, [
      msg('toEditor', { id: 1, method: 'fs/read_text_file', params: { sessionId: SESSION, path: '/etc/shadow' } }),
      msg('toAgent', { id: 1, error: { code: -32603, message: 'denied' } }),
      msg('toEditor', { id: 2, method: 'terminal/output', params: { sessionId: SESSION, terminalId: 'lost' } }),
      msg('toAgent', { id: 2, result: { output: out, truncated: false } }),
    ]);
    expect(view.clientEffects.map((e) => e.result)).toEqual(['error: denied', 'done']);
    expect(view.terminals).toEqual([{ terminalId: 'lost', command: '', output: '[100000 bytes omitted, sha256 cccccccccccc]', truncated: true, exitStatus: null }]);
  });

  it('folds observations whose detail is missing or of a kind it does not know without throwing', () => {
    const odd = [{ update: 'tap/heartbeat', at: at(1) }, { update: 'message' }, { update: 'tap/ended', reason: 'closed' }, null] as unknown as ObservedMessage[];
    const view = foldSession('r', SESSION, odd);
    expect(view.counts.malformed).toBe(1);
    expect(view.ended).toEqual({ reason: 'closed', exitCode: null, signal: null, stderrTail: null });
    expect(view.startedAt).toBe(at(1));
  });

  it('skips messages that name another session', () => {
    const view = foldSession('r', SESSION, [
      msg('toEditor', { method: 'session/update', params: { sessionId: 'other', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'not ours' } } } }),
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'ours' } }),
    ]);
    expect(view.conversation).toMatchObject([{ kind: 'message', text: 'ours' }]);
  });
});
