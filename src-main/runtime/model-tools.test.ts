/**
 * Tool calling in a model step, end to end: the chat-completions driver against the fake chat
 * server scripted to call a tool, the tool an MCP server's (the misbehaving server in `polite`
 * mode, which counts every call that reaches it). Asserted: the journal holds model, tool,
 * model effects in order; an approval suspends mid-loop and a new plane resumes it without
 * asking the model or the tool again; the bound names maxTurns; an undeclared name is answered
 * to the model, not performed; the manifest refuses tools without grants, ambiguous names and
 * maxTurns out of range; the API key is nowhere in the journal. Agent tools (a child run) are
 * tested in agent-tools.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, testPlane } from '../../tests/support/runtime-support';
import { misbehavingStdio } from '../../tests/doubles/everything-server';
import { type FakeChatServer, FAKE_TOOL_ANSWER_PREFIX, startFakeChatServer } from '../../tests/doubles/fake-chat-server';
import type { Plane } from '../plane/plane';
import { writeMcpServersFile } from '../protocols/mcp/client/mcp-servers-file';
import { createOpenAiCompatibleProvider } from '../providers/openai-compatible';
import { ManifestError } from './manifest';
import { modelToolName, parseToolRef } from './model-tools';

const API_KEY = 'sk-tools-test-9d2e4b7a1c3f5e8d0b6a';
let fake: FakeChatServer;
const planes: Plane[] = [];

beforeAll(async () => {
  fake = await startFakeChatServer();
});
afterAll(() => fake.close());
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

function chatProviders(model: string) {
  return new Map([['chat', createOpenAiCompatibleProvider({ id: 'chat', baseUrl: fake.baseUrl, apiKey: API_KEY, model })]]);
}

function toolAgent(name: string, opts: { approve?: boolean; maxTurns?: number } = {}) {
  return agent({
    name,
    steps: [
      { as: 'answer', model: { provider: 'chat', prompt: 'Echo something, then tell me what came back.', tools: ['mcp:local/echo'], ...(opts.maxTurns ? { maxTurns: opts.maxTurns } : {}) } },
      { output: '{{steps.answer.text}}' },
    ],
    grants: [
      { kind: 'model', name: 'chat' },
      { kind: 'mcp', name: 'local/echo', approve: opts.approve ?? false },
    ],
  });
}

async function open(dataDir: string, model: string, agents: ReturnType<typeof agent>[]): Promise<Plane> {
  const p = await testPlane({ dataDir, agents, providers: chatProviders(model) });
  planes.push(p);
  return p;
}

async function effectsOf(p: Plane, runId: string): Promise<string[]> {
  const records = await p.journal.readRun(runId, 1, 1_000);
  return records.filter((r) => r.kind === 'EffectStarted').map((r) => `${String(r.body.effect)}:${String(r.body.name)}`);
}

function bodiesSince(from: number): Record<string, unknown>[] {
  return fake.requests.slice(from).map((r) => r.body as Record<string, unknown>);
}

describe('a model step with tools', () => {
  it('runs model, tool, model as three effects; an approval suspends mid-loop; a new plane resumes without repeating a call', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-model-tools-');
    const count = join(dataDir, 'calls');
    writeMcpServersFile(dataDir, { servers: { local: misbehavingStdio('polite', { COUNT_FILE: count }) } });
    const from = fake.requests.length;

    const first = await open(dataDir, 'tool-then-answer', [toolAgent('guarded', { approve: true })]);
    const run = await call(first, 'runs.start', { agent: 'guarded', input: {}, wait: true });
    expect(run.pending).toMatchObject({ reason: 'approval', subject: { effect: 'mcp', name: 'local/echo', request: { arguments: { message: 'ping from the model' } } } });
    expect(bodiesSince(from)).toHaveLength(1);
    const offered = bodiesSince(from)[0]!.tools as { function: { name: string; parameters: unknown } }[];
    // The server's own inputSchema is what the model is offered.
    expect(offered).toEqual([{ type: 'function', function: expect.objectContaining({ name: 'mcp__local__echo', parameters: expect.objectContaining({ required: ['message'] }) }) }]);
    expect(existsSync(count)).toBe(false);
    await first.close();

    // A new plane (a new provider instance too) resumes after the approval: turn 1 comes from
    // the journal, the tool runs once, and only turn 2 reaches the model.
    const second = await open(dataDir, 'tool-then-answer', [toolAgent('guarded', { approve: true })]);
    await call(second, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    await second.runtime.settled(run.runId);
    const finished = await call(second, 'runs.get', { runId: run.runId });
    expect(finished).toMatchObject({ outcome: 'succeeded' });
    expect(String(finished.result)).toContain(FAKE_TOOL_ANSWER_PREFIX);
    expect(String(finished.result)).toContain('ping from the model');
    expect(readFileSync(count, 'utf8')).toBe('echo\n');
    const bodies = bodiesSince(from);
    expect(bodies).toHaveLength(2);
    const conversation = bodies[1]!.messages as Record<string, unknown>[];
    expect(conversation.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(conversation[1]).toMatchObject({ tool_calls: [{ type: 'function', function: { name: 'mcp__local__echo' } }] });
    expect(conversation[2]).toMatchObject({ tool_call_id: (conversation[1]!.tool_calls as { id: string }[])[0]!.id });
    expect(await effectsOf(second, run.runId)).toEqual(['mcp:schema:local/echo', 'model:chat', 'mcp:local/echo', 'model:chat']);
    // The key covers the loop: each model effect's request holds the tools and the conversation so far.
    const modelRequests = (await second.journal.readRun(run.runId, 1, 1_000)).filter((r) => r.kind === 'EffectStarted' && r.body.effect === 'model').map((r) => r.body.request as { tools: { name: string }[]; messages: { role: string }[] });
    expect(modelRequests.map((r) => r.tools.map((t) => t.name))).toEqual([['mcp__local__echo'], ['mcp__local__echo']]);
    expect(modelRequests.map((r) => r.messages.map((m) => m.role))).toEqual([['user'], ['user', 'assistant', 'tool']]);
    const journal = JSON.stringify(await second.journal.readRun(run.runId, 1, 1_000));
    expect(journal).not.toContain(API_KEY);
    expect(journal).not.toContain(API_KEY.slice(3, 19));
    await second.close();

    // Nothing else reached the model: turn 1 was answered from the journal on resume.
    expect(fake.requests.length - from).toBe(2);
  });

  it('fails the step naming maxTurns when the model keeps calling tools; every turn and call was an effect', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-model-tools-');
    const count = join(dataDir, 'calls');
    writeMcpServersFile(dataDir, { servers: { local: misbehavingStdio('polite', { COUNT_FILE: count }) } });
    const from = fake.requests.length;
    const p = await open(dataDir, 'tool-call', [toolAgent('looping', { maxTurns: 2 })]);
    const run = await call(p, 'runs.start', { agent: 'looping', input: {}, wait: true });
    expect(run).toMatchObject({ outcome: 'failed', error: { code: 'ModelMaxTurns', message: expect.stringContaining('maxTurns (2)') } });
    expect(fake.requests.length - from).toBe(2);
    expect(readFileSync(count, 'utf8')).toBe('echo\necho\n');
    expect(await effectsOf(p, run.runId)).toEqual(['mcp:schema:local/echo', 'model:chat', 'mcp:local/echo', 'model:chat', 'mcp:local/echo']);
  });

  it('a call to an undeclared name is answered to the model as an error, not performed', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-model-tools-');
    const count = join(dataDir, 'calls');
    writeMcpServersFile(dataDir, { servers: { local: misbehavingStdio('polite', { COUNT_FILE: count }) } });
    const from = fake.requests.length;
    const p = await open(dataDir, 'unknown-tool', [toolAgent('confused', { maxTurns: 2 })]);
    const run = await call(p, 'runs.start', { agent: 'confused', input: {}, wait: true });
    expect(run).toMatchObject({ outcome: 'failed', error: { code: 'ModelMaxTurns' } });
    expect(existsSync(count)).toBe(false);
    expect(await effectsOf(p, run.runId)).toEqual(['mcp:schema:local/echo', 'model:chat', 'model:chat']);
    const second = bodiesSince(from)[1]!.messages as Record<string, unknown>[];
    expect(second.at(-1)).toMatchObject({ role: 'tool', content: expect.stringContaining('There is no tool named no_such_tool') });
  });
});

describe('a tool that fails', () => {
  it('is reported to the model as an error result (the failure journaled once), and the model answers', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-model-tools-');
    const count = join(dataDir, 'calls');
    writeMcpServersFile(dataDir, { servers: { local: misbehavingStdio('polite', { COUNT_FILE: count }) } });
    const failing = agent({
      name: 'failing-tool',
      steps: [{ as: 'answer', model: { provider: 'chat', prompt: 'Try the tool.', tools: ['mcp:local/fail'] } }, { output: '{{steps.answer.text}}' }],
      grants: [{ kind: 'model', name: 'chat' }, { kind: 'mcp', name: 'local/fail' }],
    });
    const from = fake.requests.length;
    const p = await open(dataDir, 'tool-then-answer', [failing]);
    const run = await call(p, 'runs.start', { agent: 'failing-tool', input: {}, wait: true });
    expect(run).toMatchObject({ outcome: 'succeeded' });
    expect(String(run.result)).toContain('The tool failed (McpToolError)');
    expect(readFileSync(count, 'utf8')).toBe('fail\n');
    const last = (bodiesSince(from)[1]!.messages as Record<string, unknown>[]).at(-1);
    expect(last).toMatchObject({ role: 'tool', content: expect.stringContaining('McpToolError') });
    const records = await p.journal.readRun(run.runId, 1, 1_000);
    expect(records.filter((r) => r.kind === 'EffectFailed')).toHaveLength(1);
  });
});

describe('tools at load', () => {
  const base = (tools: string[], grants: unknown[], extra: Record<string, unknown> = {}) =>
    agent({ name: 'loader', steps: [{ model: { provider: 'chat', prompt: 'p', tools, ...extra } }], grants: [{ kind: 'model', name: 'chat' }, ...grants] });

  it('accepts granted peer and MCP tools', () => {
    expect(() => base(['peer:alpha/ping', 'mcp:everything/echo'], [{ kind: 'peer', name: 'alpha', skills: ['ping'] }, { kind: 'mcp', name: 'everything/echo' }])).not.toThrow();
  });

  it('refuses a tool without its grant, or a skill the peer grant does not list', () => {
    expect(() => base(['mcp:everything/echo'], [])).toThrow(/needs the grant mcp:everything\/echo/);
    expect(() => base(['peer:alpha/ping'], [])).toThrow(/needs the grant peer:alpha/);
    expect(() => base(['peer:alpha/ping'], [{ kind: 'peer', name: 'alpha', skills: ['other'] }])).toThrow(/allows only other/);
  });

  it('refuses two tools that reach the model under one name, and says so', () => {
    const grants = [{ kind: 'mcp', name: 'srv/a.b' }, { kind: 'mcp', name: 'srv/a_b' }];
    expect(() => base(['mcp:srv/a.b', 'mcp:srv/a_b'], grants)).toThrow(/ambiguous: both reach the model as mcp__srv__a_b/);
    expect(() => base(['mcp:srv/a.b', 'mcp:srv/a.b'], grants)).toThrow(ManifestError);
  });

  it('refuses maxTurns out of range, a malformed reference, and an agent tool without its grant', () => {
    const grants = [{ kind: 'mcp', name: 'srv/t' }];
    expect(() => base(['mcp:srv/t'], grants, { maxTurns: 0 })).toThrow(/maxTurns must be between 1 and 32/);
    expect(() => base(['mcp:srv/t'], grants, { maxTurns: 33 })).toThrow(/maxTurns must be between 1 and 32/);
    expect(() => base(['mcp:srv/t'], grants, { maxTurns: 32 })).not.toThrow();
    expect(() => base(['srv/t'], grants)).toThrow(ManifestError);
    expect(() => base(['agent:summarize'], grants)).toThrow(/tool agent:summarize needs the grant agent:summarize/);
  });

  it('model-visible names are sanitised to [a-zA-Z0-9_-]{1,64}', () => {
    expect(modelToolName(parseToolRef('peer:alpha/ping'))).toBe('peer__alpha__ping');
    expect(modelToolName(parseToolRef('mcp:everything/echo'))).toBe('mcp__everything__echo');
    expect(modelToolName(parseToolRef('agent:summarize'))).toBe('agent__summarize');
    const long = modelToolName(parseToolRef(`mcp:srv/${'x.'.repeat(60)}`));
    expect(long).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });
});
