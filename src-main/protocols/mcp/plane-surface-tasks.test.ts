/**
 * MCP Tasks on the plane surface, end to end inside one process: a real plane on a temporary
 * data dir, the real MCP endpoint on 127.0.0.1, and the two revisions' own wire.
 *
 * - 2025-11-25: the official SDK client on a real session, task methods sent with `request` and
 *   a schema (the client has no Tasks API of its own in 2.4.0).
 * - 2026-07-28: JSON-RPC over HTTP written out here, because the SDK client (2.4.0) refuses a
 *   result whose `resultType` is `task` ("Unsupported result type"), which is exactly the answer
 *   under test; each request carries the revision's headers and `_meta` envelope, declaring the
 *   extension in its client capabilities.
 */
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { call, testPlane } from '../../../tests/support/runtime-support';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { startPlaneMcpEndpoint, type PlaneMcpEndpoint } from '../../plane/mcp-endpoint';
import type { Plane } from '../../plane/plane';
import { silentLogger } from '../../base/logger';
import { TASKS_EXTENSION } from './tasks';

const tempDir = useTempFolders('agentplane-mcp-tasks-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function servedPlane(dataDir = tempDir()): Promise<{ plane: Plane; endpoint: PlaneMcpEndpoint; dataDir: string }> {
  const plane = await testPlane({ dataDir });
  cleanups.push(() => plane.close());
  const endpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: 'http://127.0.0.1:5555', logger: silentLogger, settleMs: 15_000 });
  cleanups.push(() => endpoint.close());
  return { plane, endpoint, dataDir };
}

type Json = Record<string, unknown>;
class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/** One 2026-07-28 request, as the revision puts it on the wire. */
/** `progressToken` goes in the request's `_meta`; `notes` collects the notifications sent on its stream. */
async function modern(endpoint: PlaneMcpEndpoint, method: string, params: Json, options: { tasks?: boolean; token?: string; progressToken?: string; notes?: Json[] } = {}): Promise<Json> {
  const name = method === 'tools/call' ? params.name : method.startsWith('tasks/') ? params.taskId : undefined;
  const body = {
    jsonrpc: '2.0',
    id: Math.floor(Math.random() * 1e9),
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'tasks-test', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': options.tasks === false ? {} : { extensions: { [TASKS_EXTENSION]: {} } },
        ...(options.progressToken !== undefined ? { progressToken: options.progressToken } : {}),
      },
    },
  };
  const response = await fetch(endpoint.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      ...(typeof name === 'string' ? { 'mcp-name': name } : {}),
      authorization: `Bearer ${options.token ?? endpoint.token}`,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const messages = (response.headers.get('content-type') ?? '').includes('text/event-stream')
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => JSON.parse(l.slice(5)) as Json)
    : [JSON.parse(text) as Json];
  options.notes?.push(...messages.filter((m) => m.id === undefined));
  const payload = messages.find((m) => m.id === body.id);
  if (!payload) throw new Error(`no answer to ${method}: HTTP ${response.status} ${text.slice(0, 300)}`);
  const error = payload.error as { code: number; message: string; data?: unknown } | undefined;
  if (error) throw new RpcError(error.code, error.message, error.data);
  return payload.result as Json;
}

async function legacyClient(endpoint: PlaneMcpEndpoint): Promise<Client> {
  const client = new Client({ name: 'tasks-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } } }));
  cleanups.push(() => client.close());
  return client;
}

const Loose = z.looseObject({});
const rejected = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (e: unknown) => e as { code?: number; message: string; data?: unknown },
  );

async function approve(plane: Plane, runId: string): Promise<void> {
  const run = await call(plane, 'runs.get', { runId });
  await call(plane, 'approvals.decide', { runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
}

describe('tasks on the plane surface (2026-07-28, the io.modelcontextprotocol/tasks extension)', () => {
  it('advertises the extension under capabilities.extensions, not capabilities.tasks', async () => {
    const { endpoint } = await servedPlane();
    const discovered = await modern(endpoint, 'server/discover', {});
    const capabilities = discovered.capabilities as Json;
    expect(capabilities.extensions).toEqual({ [TASKS_EXTENSION]: {} });
    expect(capabilities.tasks).toBeUndefined();
  });

  it('answers a run waiting for approval as a task whose id is the run id; approved, the task completes with the call result', async () => {
    const { plane, endpoint } = await servedPlane();
    const created = await modern(endpoint, 'tools/call', { name: 'write-note', arguments: { title: 'tasks', topic: 'served agents' } });
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: null, pollIntervalMs: 1000 });
    const runId = String(created.taskId);
    expect(runId).toMatch(/^run-[0-9a-f]{20}$/);
    const run = await call(plane, 'runs.get', { runId });
    expect(run).toMatchObject({ status: 'suspended', chain: ['mcp:local'], pending: { reason: 'approval' } });
    expect(created.createdAt).toBe(run.admittedAt);

    const working = await modern(endpoint, 'tasks/get', { taskId: runId });
    expect(working).toMatchObject({ resultType: 'complete', taskId: runId, status: 'working' });
    expect(String(working.statusMessage)).toMatch(/waits for a person's approval at AgentPlane \(approval: tool file\.write\)/);
    expect(String(working.statusMessage)).toContain(`agentplane approvals approve ${runId}`);
    expect(working.result).toBeUndefined();

    await approve(plane, runId);
    await expect.poll(async () => (await call(plane, 'runs.get', { runId })).status, { timeout: 10_000 }).toBe('sealed');
    const done = await modern(endpoint, 'tasks/get', { taskId: runId });
    expect(done).toMatchObject({ status: 'completed', result: { structuredContent: { runId, status: 'sealed', outcome: 'succeeded' } } });
    const sealed = await call(plane, 'runs.get', { runId });
    expect((done.result as { content: Array<{ text: string }> }).content[0]!.text).toBe(JSON.stringify(sealed.result));
    // tasks/result and tasks/list do not exist in this revision.
    expect((await rejected(modern(endpoint, 'tasks/result', { taskId: runId })))?.code).toBe(-32601);
    expect((await rejected(modern(endpoint, 'tasks/list', {})))?.code).toBe(-32601);
  });

  it('says what a waiting run waits for while it waits: a progress notification where the call carried a progressToken, and the task status message', async () => {
    const { endpoint } = await servedPlane();
    const notes: Json[] = [];
    const created = await modern(endpoint, 'tools/call', { name: 'write-note', arguments: { title: 'progress', topic: 'x' } }, { progressToken: 'note-1', notes });
    const runId = String(created.taskId);
    expect(String(created.statusMessage)).toMatch(new RegExp(`run ${runId} \\(write-note\\) waits for a person's approval at AgentPlane \\(approval: tool file\\.write\\); approve at http://127\\.0\\.0\\.1:5555/#/approvals`));
    const progress = notes.filter((n) => n.method === 'notifications/progress').map((n) => n.params as Json);
    expect(progress).toHaveLength(1);
    expect(progress[0]).toMatchObject({ progressToken: 'note-1', progress: 0 });
    expect(String(progress[0]?.message)).toBe(String(created.statusMessage));

    const quiet: Json[] = [];
    await modern(endpoint, 'tools/call', { name: 'write-note', arguments: { title: 'no token', topic: 'x' } }, { notes: quiet });
    expect(quiet.filter((n) => n.method === 'notifications/progress')).toEqual([]);
  });

  it('answers a run that ends within the short settle with its result, not a task', async () => {
    const { endpoint } = await servedPlane();
    const result = await modern(endpoint, 'tools/call', { name: 'summarize', arguments: { text: 'quick' } });
    expect(result.resultType).toBe('complete');
    expect(result.structuredContent).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
  });

  it('cancels a waiting run through tasks/cancel: an empty ack, and the journal says cancelled', async () => {
    const { plane, endpoint } = await servedPlane();
    const created = await modern(endpoint, 'tools/call', { name: 'write-note', arguments: { title: 'cancel me', topic: 'x' } });
    const runId = String(created.taskId);
    const ack = await modern(endpoint, 'tasks/cancel', { taskId: runId });
    expect(Object.keys(ack).filter((k) => k !== '_meta')).toEqual(['resultType']);
    expect(await call(plane, 'runs.get', { runId })).toMatchObject({ status: 'sealed', outcome: 'cancelled' });
    // The journal names who asked: the MCP caller, not the person at this machine.
    const { records } = await call(plane, 'journal.records', { runId });
    expect(records.find((r) => r.kind === 'Cancelled')?.body).toMatchObject({ by: 'mcp:local' });
    expect(await modern(endpoint, 'tasks/get', { taskId: runId })).toMatchObject({ status: 'cancelled' });
    // Again, on a terminal task: the same ack.
    expect((await modern(endpoint, 'tasks/cancel', { taskId: runId })).resultType).toBe('complete');
  });

  it('asks for input as input_required and takes the answer through tasks/update', async () => {
    const { plane, endpoint } = await servedPlane();
    const created = await modern(endpoint, 'tools/call', { name: 'ask-first', arguments: { question: 'What colour?' } });
    const runId = String(created.taskId);
    const asking = await modern(endpoint, 'tasks/get', { taskId: runId });
    expect(asking.status).toBe('input_required');
    const requests = asking.inputRequests as Record<string, { method: string; params: { message: string } }>;
    const [key] = Object.keys(requests);
    expect(requests[key!]).toMatchObject({ method: 'elicitation/create', params: { message: 'What colour?' } });
    expect((await modern(endpoint, 'tasks/update', { taskId: runId, inputResponses: { [key!]: { action: 'accept', content: { answer: 'green' } } } })).resultType).toBe('complete');
    await expect.poll(async () => (await modern(endpoint, 'tasks/get', { taskId: runId })).status, { timeout: 10_000 }).toBe('completed');
    const { records } = await call(plane, 'journal.records', { runId });
    expect(records.find((r) => r.kind === 'Decision')?.body).toMatchObject({ by: 'mcp:local', decision: 'approve' });
  });

  it("answers another caller's run, an unknown id and a malformed id as no such task (-32602)", async () => {
    const { plane, endpoint } = await servedPlane();
    const mine = await call(plane, 'runs.start', { agent: 'write-note', input: { title: 'the user', topic: 'x' } });
    for (const taskId of [mine.runId, 'run-00000000000000000000', 'not-a-run']) {
      const error = await rejected(modern(endpoint, 'tasks/get', { taskId }));
      expect(error?.code).toBe(-32602);
      expect((await rejected(modern(endpoint, 'tasks/cancel', { taskId })))?.code).toBe(-32602);
    }
    expect((await call(plane, 'runs.get', { runId: mine.runId })).status).toBe('suspended');
  });

  it('without the extension: the task methods answer -32021 naming it, and a tool whose runs may wait is hidden and refused before admission', async () => {
    const { plane, endpoint } = await servedPlane();
    const error = await rejected(modern(endpoint, 'tasks/get', { taskId: 'run-00000000000000000000' }, { tasks: false }));
    expect(error?.code).toBe(-32021);
    expect(error?.data).toMatchObject({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    const without = (await modern(endpoint, 'tools/list', {}, { tasks: false })).tools as Json[];
    expect(without.map((t) => t.name)).not.toContain('write-note');
    const refused = await rejected(modern(endpoint, 'tools/call', { name: 'write-note', arguments: { title: 'no tasks', topic: 'x' } }, { tasks: false }));
    expect(refused?.code).toBe(-32021);
    expect(refused?.message).toMatch(/the tool write-note \(its runs may wait for a person: approval; no run was started\) needs the io\.modelcontextprotocol\/tasks extension/);
    expect((await call(plane, 'runs.list', {})).runs).toHaveLength(0);
  });

  it('with the extension: every agent with an input schema is offered, as a tool and (where it has one) its system prompt', async () => {
    const { plane, endpoint } = await servedPlane();
    const { agents } = await call(plane, 'agents.list', {});
    const tools = (await modern(endpoint, 'tools/list', {})).tools as Json[];
    expect(tools.map((t) => t.name).sort()).toEqual(agents.map((a) => a.name).sort());
    const prompts = (await modern(endpoint, 'prompts/list', {})).prompts as Json[];
    expect(prompts.map((p) => p.name)).toEqual(['summarize', 'write-note'].filter((n) => agents.find((a) => a.name === n)?.systemPrompts?.length));
    expect(prompts.map((p) => p.name)).toContain('summarize');
    const without = (await modern(endpoint, 'prompts/list', {}, { tasks: false })).prompts as Json[];
    // Without the extension: only the prompts of agents that wait at most at a ceiling.
    const calm = agents.filter((a) => a.systemPrompts?.length && a.mayWaitFor?.every((w) => w === 'budget')).map((a) => a.name);
    expect(calm).toContain('summarize');
    expect(without.map((p) => p.name).sort()).toEqual(calm.sort());
  });

  it('still answers tasks/get from the journal after the plane restarts', async () => {
    const first = await servedPlane();
    const created = await modern(first.endpoint, 'tools/call', { name: 'write-note', arguments: { title: 'restart', topic: 'x' } });
    const runId = String(created.taskId);
    await first.endpoint.close();
    await first.plane.close();
    const again = await servedPlane(first.dataDir);
    expect(again.endpoint.token).toBe(first.endpoint.token);
    const read = await modern(again.endpoint, 'tasks/get', { taskId: runId });
    expect(read).toMatchObject({ taskId: runId, status: 'working', createdAt: created.createdAt });
    await approve(again.plane, runId);
    await expect.poll(async () => (await modern(again.endpoint, 'tasks/get', { taskId: runId })).status, { timeout: 10_000 }).toBe('completed');
  });
});

describe('a 2025-11-25 session: a host without Tasks (its experimental tasks are not served)', () => {
  it('declares no capabilities.tasks and no execution.taskSupport, and answers the task methods -32601', async () => {
    const { endpoint } = await servedPlane();
    const client = await legacyClient(endpoint);
    expect(client.getServerCapabilities()?.tasks).toBeUndefined();
    const { tools } = await client.listTools();
    for (const tool of tools) expect(tool.execution).toBeUndefined();
    expect((await rejected(client.request({ method: 'tasks/get', params: { taskId: 'run-00000000000000000000' } }, Loose)))?.code).toBe(-32601);
  });

  it('refuses a call to a tool whose runs may wait, with or without params.task, before anything is admitted', async () => {
    const { plane, endpoint } = await servedPlane();
    const client = await legacyClient(endpoint);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).not.toContain('write-note');
    for (const params of [{ name: 'write-note', arguments: { title: 'legacy', topic: 'x' }, task: {} }, { name: 'ask-first', arguments: { question: 'Which?' } }]) {
      const refused = await rejected(client.request({ method: 'tools/call', params }, Loose));
      expect(refused?.code).toBe(-32602);
      expect(refused?.message).toMatch(new RegExp(`the tool ${params.name} .*needs the io\\.modelcontextprotocol/tasks extension, which a 2025-11-25 session cannot hold`));
    }
    expect((await call(plane, 'runs.list', {})).runs).toHaveLength(0);
  });
});
