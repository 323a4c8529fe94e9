/**
 * What a generic A2A client (the SDK's, the TCK's) expects of the wire beyond the methods: the
 * interface URL joined with `/`, 404s as JSON-RPC bodies, `error.data` as an array holding a
 * google.rpc.ErrorInfo, proto (snake_case) field names read as their JSON names, cards cached
 * with ETag/Last-Modified/Cache-Control, and streams that end at INPUT_REQUIRED. A real plane on
 * a temporary data dir, the real endpoint on 127.0.0.1, @a2a-js/sdk 1.3's client where it fits
 * and raw fetch for what the SDK would never send.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ListTasksRequest, SendMessageRequest, SubscribeToTaskRequest, TaskState, type StreamResponse } from '@a2a-js/sdk';
import { call, testPlane } from '../../../tests/support/runtime-support';
import { sdkA2aClient, sdkA2aClientAt } from '../../../tests/doubles/sdk-a2a-client';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { startPlaneA2aEndpoint, type PlaneA2aEndpoint } from '../../plane/a2a-endpoint';
import type { Plane } from '../../plane/plane';
import { silentLogger } from '../../base/logger';

const tempDir = useTempFolders('agentplane-a2a-interop-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function served(dataDir = tempDir()): Promise<{ plane: Plane; endpoint: PlaneA2aEndpoint }> {
  const plane = await testPlane({ dataDir });
  cleanups.push(() => plane.close());
  const endpoint = await startPlaneA2aEndpoint(plane, { port: 0, uiOrigin: 'http://127.0.0.1:5555', logger: silentLogger, blockMs: 15_000 });
  cleanups.push(() => endpoint.close());
  return { plane, endpoint };
}

type RpcError = { code: number; message: string; data?: unknown };
type RpcAnswer = { jsonrpc?: string; id?: unknown; result?: Record<string, unknown>; error?: RpcError };

async function rpcAt(url: string, token: string, method: string, params: unknown): Promise<{ status: number; body: RpcAnswer }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
  });
  return { status: response.status, body: (await response.json()) as RpcAnswer };
}
const rpc = (endpoint: PlaneA2aEndpoint, agent: string, method: string, params: unknown) => rpcAt(`${endpoint.url}a2a/${agent}`, endpoint.token, method, params);

const note = { title: 'the user', topic: 'x' };
let count = 0;
const startMessage = (part: Record<string, unknown>) => ({ messageId: `i-${++count}`, role: 'ROLE_USER', parts: [part] });

const errorInfo = (reason: string, domain: string, metadata: Record<string, string> = {}) => [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason, domain, metadata }];

describe('the interface URL joined with a slash, and JSON-RPC bodies on every refusal', () => {
  it('POST /a2a/<agent>/ answers exactly as POST /a2a/<agent>; the SDK resolves the card from <interface url>/', async () => {
    const { endpoint } = await served();
    const bare = await rpc(endpoint, 'summarize', 'ListTasks', {});
    const slashed = await rpcAt(`${endpoint.url}a2a/summarize/`, endpoint.token, 'ListTasks', {});
    expect(slashed).toEqual(bare);
    expect(slashed.body.result).toMatchObject({ tasks: [] });

    // createFromUrl('<interface url>/') reads `.well-known/agent-card.json` beside it.
    const client = await sdkA2aClientAt(`${endpoint.url}a2a/summarize/`, '.well-known/agent-card.json', endpoint.token);
    const listed = await client.listTasks(ListTasksRequest.fromJSON({}));
    expect(listed.tasks).toEqual([]);
  });

  it('answers a 404 (and a 405) with a JSON-RPC error body, naming what was not found', async () => {
    const { endpoint } = await served();
    const cases: Array<[string, string, number, RegExp]> = [
      ['GET', 'nowhere', 404, /no A2A route at \/nowhere/],
      ['GET', 'a2a/nobody/.well-known/agent-card.json', 404, /no agent named nobody/],
      // What the SDK requests from a base without the trailing slash (`new URL('.well-known/…', '<host>/a2a/summarize')`):
      // the path names no agent, and the answer says where the cards are.
      ['GET', 'a2a/.well-known/agent-card.json', 404, /names no agent.*\/a2a\/<agent>\/\.well-known\/agent-card\.json/],
      ['POST', 'a2a/summarize/extra', 404, /no A2A route/],
      ['GET', 'a2a/summarize', 405, /POST JSON-RPC/],
      ['GET', 'a2a/summarize/', 405, /POST JSON-RPC/],
    ];
    for (const [method, path, status, message] of cases) {
      const response = await fetch(`${endpoint.url}${path}`, { method, ...(method === 'POST' ? { body: '{}', headers: { Authorization: `Bearer ${endpoint.token}` } } : {}) });
      expect(response.status, path).toBe(status);
      expect(response.headers.get('content-type'), path).toContain('application/json');
      const body = (await response.json()) as RpcAnswer;
      expect(body, path).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: expect.any(Number), message: expect.stringMatching(message) } });
      expect(Array.isArray(body.error?.data), path).toBe(true);
    }
  });
});

describe('error.data: an array holding a google.rpc.ErrorInfo', () => {
  it('an A2A error is under the spec domain with its reason; a JSON-RPC one under the plane domain; the detail is string metadata', async () => {
    const { endpoint } = await served();
    const unknown = await rpc(endpoint, 'summarize', 'GetTask', { id: 'run-00000000000000000000' });
    expect(unknown.body.error).toEqual({ code: -32001, message: 'no task run-00000000000000000000', data: errorInfo('TASK_NOT_FOUND', 'a2a-protocol.org', { taskId: 'run-00000000000000000000' }) });
    const bad = await rpc(endpoint, 'summarize', 'SendMessage', {});
    expect(bad.body.error?.data).toEqual(errorInfo('INVALID_PARAMS', 'agentplane.io', { field: 'message' }));
    const method = await rpc(endpoint, 'summarize', 'message/send', {});
    expect(method.body.error?.data).toEqual(errorInfo('METHOD_NOT_FOUND', 'agentplane.io', { method: 'message/send' }));
    const old = await fetch(`${endpoint.url}a2a/summarize`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${endpoint.token}`, 'A2A-Version': '0.3' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: {} }),
    });
    expect(((await old.json()) as RpcAnswer).error?.data).toEqual(errorInfo('VERSION_NOT_SUPPORTED', 'a2a-protocol.org', { supportedVersions: '["1.0"]' }));
    const parse = await fetch(`${endpoint.url}a2a/summarize`, { method: 'POST', headers: { Authorization: `Bearer ${endpoint.token}`, 'A2A-Version': '1.0' }, body: '{nope' });
    expect(((await parse.json()) as RpcAnswer).error?.data).toEqual(errorInfo('JSON_PARSE', 'agentplane.io'));
  });
});

describe('proto field names (snake_case) read as their JSON names', () => {
  it('push config create/get/list take task_id; SendMessage takes return_immediately and task_push_notification_config', async () => {
    const { plane, endpoint } = await served();
    await call(plane, 'net.allow.add', { origin: 'http://127.0.0.1:9' });
    const sent = await rpc(endpoint, 'write-note', 'SendMessage', {
      message: { message_id: `s-${++count}`, role: 'ROLE_USER', parts: [{ data: note }] },
      configuration: { return_immediately: true, task_push_notification_config: { id: 'with-message', url: 'http://127.0.0.1:9/hook' } },
    });
    const taskId = (sent.body.result?.task as { id: string } | undefined)?.id;
    expect(taskId, JSON.stringify(sent.body)).toMatch(/^run-/);
    const created = await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { task_id: taskId, id: 'snake', url: 'http://127.0.0.1:9/hook' });
    expect(created.body.result, JSON.stringify(created.body)).toMatchObject({ id: 'snake', taskId });
    const got = await rpc(endpoint, 'write-note', 'GetTaskPushNotificationConfig', { task_id: taskId, id: 'snake' });
    expect(got.body.result).toMatchObject({ id: 'snake', taskId });
    const listed = await rpc(endpoint, 'write-note', 'ListTaskPushNotificationConfigs', { task_id: taskId });
    expect((listed.body.result?.configs as Array<{ id: string }>).map((c) => c.id).sort()).toEqual(['snake', 'with-message']);
    const history = await rpc(endpoint, 'write-note', 'ListTasks', { page_size: 1, include_artifacts: true });
    expect(history.body.result).toMatchObject({ pageSize: 1 });
  });

  it('both spellings of one field with different values is -32602 naming the field; the same value is accepted', async () => {
    const { endpoint } = await served();
    const clash = await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: 'run-00000000000000000000', task_id: 'run-11111111111111111111', url: 'https://example.com/x' });
    expect(clash.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/taskId.*task_id.*different values/) });
    expect(clash.body.error?.data).toEqual(errorInfo('INVALID_PARAMS', 'agentplane.io', { field: 'taskId' }));
    const nested = await rpc(endpoint, 'write-note', 'SendMessage', { message: { ...startMessage({ data: note }), message_id: 'other' } });
    expect(nested.body.error).toMatchObject({ code: -32602, data: errorInfo('INVALID_PARAMS', 'agentplane.io', { field: 'message.messageId' }) });
    const same = await rpc(endpoint, 'summarize', 'ListTasks', { pageSize: 2, page_size: 2 });
    expect(same.body.result).toMatchObject({ pageSize: 2 });
  });
});

describe('agent cards are cacheable', () => {
  const sha = (bytes: ArrayBuffer) => `"sha256-${createHash('sha256').update(Buffer.from(bytes)).digest('base64url')}"`;

  it('each card carries Cache-Control, a strong ETag of its exact bytes and Last-Modified; a matching If-None-Match is 304 without a body', async () => {
    const { endpoint } = await served();
    for (const path of ['a2a/summarize/.well-known/agent-card.json', '.well-known/agent-card.json']) {
      const response = await fetch(`${endpoint.url}${path}`);
      const bytes = await response.arrayBuffer();
      expect(response.status).toBe(200);
      expect(response.headers.get('cache-control')).toMatch(/^public, max-age=\d+$/);
      const etag = response.headers.get('etag');
      expect(etag).toBe(sha(bytes));
      const lastModified = response.headers.get('last-modified');
      expect(new Date(lastModified ?? '').getTime()).not.toBeNaN();
      for (const ifNoneMatch of [etag!, `"other", ${etag!}`, `W/${etag!}`, '*']) {
        const again = await fetch(`${endpoint.url}${path}`, { headers: { 'If-None-Match': ifNoneMatch } });
        expect(again.status, ifNoneMatch).toBe(304);
        expect(again.headers.get('etag')).toBe(etag);
        expect(again.headers.get('cache-control')).toMatch(/max-age/);
        expect(await again.text()).toBe('');
      }
      const stale = await fetch(`${endpoint.url}${path}`, { headers: { 'If-None-Match': '"sha256-stale"' } });
      expect(stale.status).toBe(200);
      expect(sha(await stale.arrayBuffer())).toBe(etag);
    }
  });

  it('the ETag follows the body when the agents are reloaded', async () => {
    const dataDir = tempDir();
    const own = join(dataDir, 'agents');
    mkdirSync(own, { recursive: true, mode: 0o700 });
    const manifest = (description: string) => `name: greeter\ndescription: ${description}\ninput: { type: object }\nsteps:\n  - model: { provider: local, prompt: hi }\ngrants:\n  - { kind: model, name: local }\n`;
    writeFileSync(join(own, 'greeter.yaml'), manifest('says hi'), { mode: 0o600 });
    const { plane, endpoint } = await served(dataDir);
    const first = await fetch(`${endpoint.url}a2a/greeter/.well-known/agent-card.json`);
    const before = { etag: first.headers.get('etag'), body: await first.text() };
    const directoryBefore = (await fetch(`${endpoint.url}.well-known/agent-card.json`)).headers.get('etag');
    writeFileSync(join(own, 'greeter.yaml'), manifest('says hello'), { mode: 0o600 });
    await call(plane, 'agents.reload', {});
    const second = await fetch(`${endpoint.url}a2a/greeter/.well-known/agent-card.json`, { headers: { 'If-None-Match': before.etag! } });
    expect(second.status).toBe(200);
    const body = await second.text();
    expect(body).toContain('says hello');
    expect(second.headers.get('etag')).not.toBe(before.etag);
    expect(second.headers.get('etag')).toBe(`"sha256-${createHash('sha256').update(body).digest('base64url')}"`);
    expect((await fetch(`${endpoint.url}.well-known/agent-card.json`)).headers.get('etag')).not.toBe(directoryBefore);
  });
});

describe('streams end at INPUT_REQUIRED', () => {
  const stateOf = (event: StreamResponse | undefined) =>
    event?.payload?.$case === 'task' ? event.payload.value.status?.state : event?.payload?.$case === 'statusUpdate' ? event.payload.value.status?.state : undefined;

  it('SubscribeToTask on a task that is or becomes INPUT_REQUIRED sends that state, then the iterator ends', async () => {
    const { plane, endpoint } = await served();
    const client = await sdkA2aClient(endpoint.url, 'write-note', endpoint.token);
    // Subscribed at once: the task is still working or already waits; either way the stream ends at the wait.
    const started = (await client.sendMessage(SendMessageRequest.fromJSON({ message: startMessage({ data: note }), configuration: { returnImmediately: true } }))) as { id: string };
    const events: StreamResponse[] = [];
    for await (const event of client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: started.id }))) events.push(event);
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect((await call(plane, 'runs.get', { runId: started.id })).status).toBe('suspended');

    // Already waiting: the task as it stands, and the end.
    const again: StreamResponse[] = [];
    for await (const event of client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: started.id }))) again.push(event);
    expect(again.map((e) => e.payload?.$case)).toEqual(['task']);
    expect(stateOf(again[0])).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  });

  it('SendStreamingMessage ends with the INPUT_REQUIRED status', async () => {
    const { endpoint } = await served();
    const client = await sdkA2aClient(endpoint.url, 'write-note', endpoint.token);
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: startMessage({ data: note }) }))) events.push(event);
    expect(stateOf(events.at(-1))).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
  });
});
