/**
 * The plane's agents over A2A 1.0, end to end in one process: a real plane on a temporary data
 * dir (bundled agents and policy), the real endpoint on 127.0.0.1 (plane/a2a-endpoint.ts), and
 * @a2a-js/sdk 1.3's own client (JSON-RPC transport) against it; raw fetch for the bad inputs the
 * SDK would never send.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  CancelTaskRequest,
  GetTaskRequest,
  ListTasksRequest,
  SendMessageRequest,
  SubscribeToTaskRequest,
  TaskState,
  verifyAgentCardSignature,
  type StreamResponse,
} from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { call, testPlane } from '../../../tests/support/runtime-support';
import { sdkA2aClient, sdkA2aClientAt } from '../../../tests/doubles/sdk-a2a-client';
import { errorData } from '../../../tests/support/a2a-support';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { startPlaneA2aEndpoint, type PlaneA2aEndpoint } from '../../plane/a2a-endpoint';
import type { Plane } from '../../plane/plane';
import { silentLogger } from '../../base/logger';
import { loadPlaneKey } from '../../journal/plane-key';
import { verifyAgentCard } from './card-signature';
import { AGENT_DIRECTORY_EXTENSION } from './a2a-cards';

const tempDir = useTempFolders('agentplane-a2a-server-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function served(): Promise<{ plane: Plane; endpoint: PlaneA2aEndpoint }> {
  const plane = await testPlane({ dataDir: tempDir() });
  cleanups.push(() => plane.close());
  const endpoint = await startPlaneA2aEndpoint(plane, { port: 0, uiOrigin: 'http://127.0.0.1:5555', logger: silentLogger, blockMs: 15_000 });
  cleanups.push(() => endpoint.close());
  return { plane, endpoint };
}

const clientFor = (endpoint: PlaneA2aEndpoint, agent: string, token = endpoint.token): Promise<Client> => sdkA2aClient(endpoint.url, agent, token);

let messageCount = 0;
function send(part: Record<string, unknown>, configuration?: Record<string, unknown>) {
  return SendMessageRequest.fromJSON({
    message: { messageId: `m-${++messageCount}`, role: 'ROLE_USER', parts: [part] },
    ...(configuration ? { configuration } : {}),
  });
}

async function rpc(endpoint: PlaneA2aEndpoint, agent: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${endpoint.url}a2a/${agent}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${endpoint.token}`, 'A2A-Version': '1.0', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } } };
}

const note = { title: 'the user', topic: 'x' };

async function suspendedTask(client: Client, plane: Plane): Promise<string> {
  const result = await client.sendMessage(send({ data: note }, { returnImmediately: true }));
  const taskId = (result as { id: string }).id;
  await expect.poll(async () => (await call(plane, 'runs.get', { runId: taskId })).status, { timeout: 10_000 }).toBe('suspended');
  return taskId;
}

describe('the plane over A2A 1.0 (@a2a-js/sdk client)', () => {
  it('serves signed cards: per agent and the directory, readable without the token, verified by verifyAgentCard and the SDK', async () => {
    const { plane, endpoint } = await served();
    const response = await fetch(`${endpoint.url}a2a/summarize/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const card = (await response.json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      name: 'summarize',
      supportedInterfaces: [{ url: `${endpoint.url}a2a/summarize`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true, pushNotifications: true },
      skills: [{ id: 'summarize' }],
    });
    expect(card.securitySchemes).toHaveProperty('bearer.httpAuthSecurityScheme.scheme', 'Bearer');
    const key = await loadPlaneKey(plane.dataDir);
    expect(await verifyAgentCard(card, key.publicJwk)).toMatchObject({ ok: true, keyId: key.keyId });
    // The SDK verifier is given the card as served (ProtoJSON). Handing it AgentCard.fromJSON(card)
    // instead fails for any signer: re-parsing the SDK's internal form drops securitySchemes.
    await expect(verifyAgentCardSignature(async () => key.publicKey)(card as never)).resolves.toBeUndefined();
    expect(await verifyAgentCard({ ...card, description: 'changed' })).toMatchObject({ ok: false, reason: 'bad-signature' });

    expect(card.capabilities).not.toHaveProperty('extensions'); // an agent's own card is the card it would have alone

    // The well-known card is one real agent's (the first by name), not every agent posing as
    // interfaces of one; a directory extension lists them all, each with its card and digest.
    const agents = (await call(plane, 'agents.list', {})).agents.map((a) => a.name).sort();
    const directory = (await (await fetch(`${endpoint.url}.well-known/agent-card.json`)).json()) as Record<string, unknown> & {
      supportedInterfaces: Array<{ url: string }>;
      skills: Array<{ id: string }>;
      capabilities: { extensions: Array<{ uri: string; required?: boolean; params: { agents: Array<{ name: string; agentCard: string; endpoint: string; manifestDigest: string }> } }> };
    };
    expect(directory.name).toBe(agents[0]);
    expect(directory.supportedInterfaces).toEqual([{ url: `${endpoint.url}a2a/${agents[0]}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]);
    expect(directory.skills.map((s) => s.id)).toEqual([agents[0]]);
    const [extension] = directory.capabilities.extensions;
    expect(extension).toMatchObject({ uri: AGENT_DIRECTORY_EXTENSION });
    expect(extension!.required ?? false).toBe(false);
    expect(extension!.params.agents.map((a) => a.name)).toEqual(agents);
    const listed = extension!.params.agents.find((a) => a.name === 'write-note')!;
    expect(listed).toMatchObject({ agentCard: `${endpoint.url}a2a/write-note/.well-known/agent-card.json`, endpoint: `${endpoint.url}a2a/write-note`, manifestDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect((await fetch(listed.agentCard)).status).toBe(200);
    expect(new Set(extension!.params.agents.map((a) => a.manifestDigest)).size).toBe(agents.length);
    expect(await verifyAgentCard(directory as never, key.publicJwk)).toMatchObject({ ok: true });
    await expect(verifyAgentCardSignature(async () => key.publicKey)(directory as never)).resolves.toBeUndefined();
    // A generic client starting at the origin talks to that one agent, every time.
    const fromOrigin = await sdkA2aClientAt(endpoint.url, '.well-known/agent-card.json', endpoint.token);
    expect((await fromOrigin.getAgentCard()).name).toBe(agents[0]);
    expect((await fetch(`${endpoint.url}a2a/nobody/.well-known/agent-card.json`)).status).toBe(404);
  });

  it('SendMessage (blocking, text part for a one-string input) completes with the output as a data artifact, admitted for a2a:local', async () => {
    const { plane, endpoint } = await served();
    const client = await clientFor(endpoint, 'summarize');
    const task = (await client.sendMessage(send({ text: 'The plane runs agents and journals every effect.' }))) as { id: string; status: { state: number }; artifacts: Array<{ parts: Array<{ content: { $case: string; value: unknown } }> }> };
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts[0]?.parts[0]?.content.$case).toBe('data');
    expect(task.artifacts[0]?.parts[0]?.content.value).toHaveProperty('summary');
    const run = await call(plane, 'runs.get', { runId: task.id });
    expect(run.chain).toEqual(['a2a:local']);
    const got = await client.getTask(GetTaskRequest.fromJSON({ id: task.id }));
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('SendStreamingMessage streams the task, then the artifact and the final status', async () => {
    const { endpoint } = await served();
    const client = await clientFor(endpoint, 'summarize');
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(send({ data: { text: 'Stream this, please.' } }))) events.push(event);
    const cases = events.map((e) => e.payload?.$case);
    expect(cases[0]).toBe('task');
    expect(cases).toContain('artifactUpdate');
    const last = events[events.length - 1]!.payload;
    expect(last?.$case === 'statusUpdate' || last?.$case === 'task').toBe(true);
    const state = last?.$case === 'statusUpdate' ? last.value.status?.state : last?.$case === 'task' ? last.value.status?.state : undefined;
    expect(state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('a run waiting for approval is input-required with what it waits for; CancelTask cancels the run', async () => {
    const { plane, endpoint } = await served();
    const client = await clientFor(endpoint, 'write-note');
    const taskId = await suspendedTask(client, plane);
    const task = await client.getTask(GetTaskRequest.fromJSON({ id: taskId }));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const said = task.status?.message?.parts[0]?.content;
    expect(said?.$case === 'text' ? said.value : '').toMatch(/waits for approval: tool file\.write.*approvals approve/);
    const cancelled = await client.cancelTask(CancelTaskRequest.fromJSON({ id: taskId }));
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await call(plane, 'runs.get', { runId: taskId })).outcome).toBe('cancelled');
  });

  it('ListTasks pages the caller’s own tasks only', async () => {
    const { plane, endpoint } = await served();
    const client = await clientFor(endpoint, 'summarize');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(((await client.sendMessage(send({ text: `text ${i}` }))) as { id: string }).id);
    const embedder = await call(plane, 'runs.start', { agent: 'summarize', input: { text: 'not a task of a2a:local' } });
    const first = await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 2 }));
    expect(first.tasks).toHaveLength(2);
    expect(first.totalSize).toBe(3);
    expect(first.nextPageToken).not.toBe('');
    const second = await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 2, pageToken: first.nextPageToken }));
    expect(second.tasks).toHaveLength(1);
    expect(second.nextPageToken).toBe('');
    const listed = [...first.tasks, ...second.tasks].map((t) => t.id);
    expect(listed.sort()).toEqual([...ids].sort());
    expect(listed).not.toContain(embedder.runId);
  });

  it('SubscribeToTask: the task as it stands first; a wait for input ends the stream, and subscribing again reads it again', async () => {
    const { plane, endpoint } = await served();
    const client = await clientFor(endpoint, 'write-note');
    const taskId = await suspendedTask(client, plane);
    for (let round = 0; round < 2; round++) {
      const events: StreamResponse[] = [];
      for await (const event of client.resubscribeTask(SubscribeToTaskRequest.fromJSON({ id: taskId }))) events.push(event);
      expect(events.map((e) => e.payload?.$case)).toEqual(['task']);
      expect(events[0]?.payload?.$case === 'task' && events[0].payload.value.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    }
    const run = await call(plane, 'runs.get', { runId: taskId });
    await call(plane, 'approvals.decide', { runId: taskId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    await expect.poll(async () => (await client.getTask(GetTaskRequest.fromJSON({ id: taskId }))).status?.state, { timeout: 10_000 }).toBe(TaskState.TASK_STATE_COMPLETED);
  });
});

describe('the A2A endpoint refuses bad input, each with its reason', () => {
  it('a missing or other A2A-Version is -32009', async () => {
    const { endpoint } = await served();
    const request = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'run-00000000000000000000' } };
    const missing = await fetch(`${endpoint.url}a2a/summarize`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${endpoint.token}` }, body: JSON.stringify(request) });
    expect(missing.status).toBe(200);
    expect(((await missing.json()) as { error: { code: number; message: string } }).error).toMatchObject({ code: -32009, message: expect.stringMatching(/no A2A-Version header/) });
    const empty = await rpc(endpoint, 'summarize', request, { 'A2A-Version': '' });
    expect(empty.body.error?.code).toBe(-32009);
    const old = await rpc(endpoint, 'summarize', request, { 'A2A-Version': '0.3' });
    expect(old.body.error).toMatchObject({ code: -32009, message: expect.stringMatching(/A2A-Version 0\.3/) });
  });

  it('a bad token is 401 with WWW-Authenticate: Bearer, through the SDK client too', async () => {
    const { endpoint } = await served();
    const response = await fetch(`${endpoint.url}a2a/summarize`, { method: 'POST', headers: { Authorization: 'Bearer nope', 'A2A-Version': '1.0' }, body: '{}' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer');
    const client = await clientFor(endpoint, 'summarize', 'wrong-token');
    await expect(client.sendMessage(send({ text: 'x' }))).rejects.toThrow(/token/);
  });

  it('a text part for a multi-field schema names the schema; a bad data field is -32602 naming it', async () => {
    const { endpoint } = await served();
    const text = await rpc(endpoint, 'write-note', { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'a', role: 'ROLE_USER', parts: [{ text: 'hi' }] } } });
    expect(text.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/write-note's input schema needs the fields title, topic/) });
    const bad = await rpc(endpoint, 'summarize', { jsonrpc: '2.0', id: 2, method: 'SendMessage', params: { message: { messageId: 'b', role: 'ROLE_USER', parts: [{ data: { text: 5 } }] } } });
    expect(bad.body.error).toMatchObject({ code: -32602, data: errorData({ field: 'message.parts[0].data.text' }) });
    const noMessage = await rpc(endpoint, 'summarize', { jsonrpc: '2.0', id: 3, method: 'SendMessage', params: {} });
    expect(noMessage.body.error).toMatchObject({ code: -32602, data: errorData({ field: 'message' }) });
    const legacy = await rpc(endpoint, 'summarize', { jsonrpc: '2.0', id: 4, method: 'message/send', params: {} });
    expect(legacy.body.error?.code).toBe(-32601);
  });

  it('an unknown agent is refused by name', async () => {
    const { endpoint } = await served();
    const unknown = await rpc(endpoint, 'nobody', { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } });
    expect(unknown.body.error).toMatchObject({ code: -32602, message: 'no agent named nobody on this plane' });
  });

  it("another caller's task answers as no task at all (-32001)", async () => {
    const { plane, endpoint } = await served();
    const theirs = await call(plane, 'runs.start', { agent: 'write-note', input: note });
    for (const method of ['GetTask', 'CancelTask', 'SubscribeToTask']) {
      const answer = await rpc(endpoint, 'write-note', { jsonrpc: '2.0', id: 1, method, params: { id: theirs.runId } });
      expect(answer.body.error).toMatchObject({ code: -32001, message: `no task ${theirs.runId}` });
    }
    expect((await call(plane, 'runs.get', { runId: theirs.runId })).outcome).not.toBe('cancelled');
  });

  it('a Host header that is not loopback is 403 (DNS rebinding)', async () => {
    const { endpoint } = await served();
    const http = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${endpoint.url}.well-known/agent-card.json`, { headers: { Host: 'evil.example:80' } }, (res) => resolve(res.statusCode ?? 0));
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });
});
