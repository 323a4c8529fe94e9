/**
 * A2A push notifications end to end in one process: a real plane on a temporary data dir, the
 * real endpoint on 127.0.0.1, @a2a-js/sdk 1.3's client setting configs, and a real HTTP receiver
 * on loopback whose exact origin a person allowed (`net.allow.add`). The plane is restarted on
 * the same data dir while a run waits for approval; the receiver must end with every event once
 * by id, none lost.
 */
import { statSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SendMessageRequest, TaskPushNotificationConfig, ListTaskPushNotificationConfigsRequest, GetTaskPushNotificationConfigRequest, DeleteTaskPushNotificationConfigRequest } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { call, testPlane } from '../../../tests/support/runtime-support';
import { capturingLogger, pushReceivers, type PushReceived } from '../../../tests/doubles/push-receiver';
import { sdkA2aClient } from '../../../tests/doubles/sdk-a2a-client';
import { errorData } from '../../../tests/support/a2a-support';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { startPlaneA2aEndpoint, type PlaneA2aEndpoint } from '../../plane/a2a-endpoint';
import type { Plane } from '../../plane/plane';
import type { Logger } from '../../base/logger';
import { PushStore, pushStorePath } from './push-store';

const tempDir = useTempFolders('agentplane-a2a-push-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const receiver = pushReceivers(cleanups);


async function open(dataDir: string, logger: Logger = capturingLogger()): Promise<{ plane: Plane; endpoint: PlaneA2aEndpoint; close: () => Promise<void> }> {
  const plane = await testPlane({ dataDir });
  const endpoint = await startPlaneA2aEndpoint(plane, { port: 0, uiOrigin: 'http://127.0.0.1:5555', logger, blockMs: 15_000 });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await endpoint.close();
    await plane.close();
  };
  cleanups.push(close);
  return { plane, endpoint, close };
}

const clientFor = (endpoint: PlaneA2aEndpoint, agent: string): Promise<Client> => sdkA2aClient(endpoint.url, agent, endpoint.token);

async function rpc(endpoint: PlaneA2aEndpoint, agent: string, method: string, params: unknown) {
  const response = await fetch(`${endpoint.url}a2a/${agent}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${endpoint.token}`, 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };
}

const note = { title: 'the user', topic: 'x' };
let messageCount = 0;
function send(part: Record<string, unknown>, configuration?: Record<string, unknown>) {
  return SendMessageRequest.fromJSON({ message: { messageId: `p-${++messageCount}`, role: 'ROLE_USER', parts: [part] }, ...(configuration ? { configuration } : {}) });
}

const stateOf = (r: PushReceived) => (r.body.statusUpdate?.status as { state?: string } | undefined)?.state ?? (r.body.artifactUpdate ? 'ARTIFACT' : '?');

describe('A2A push notifications', () => {
  it('delivers every status and artifact event once, in order, across a plane restart while the run waits for approval', async () => {
    const dataDir = tempDir();
    const target = await receiver({ failFirst: 1 });
    const first = await open(dataDir);
    await call(first.plane, 'net.allow.add', { origin: target.origin });
    const card = (await (await fetch(`${first.endpoint.url}a2a/write-note/.well-known/agent-card.json`)).json()) as { capabilities: Record<string, unknown> };
    expect(card.capabilities).toMatchObject({ pushNotifications: true });

    const client = await clientFor(first.endpoint, 'write-note');
    const task = (await client.sendMessage(send({ data: note }, { returnImmediately: true }))) as { id: string };
    // The config goes on once the run waits: on a loaded machine it could still be working, and
    // that state would rightly be delivered first.
    await expect.poll(async () => (await call(first.plane, 'runs.get', { runId: task.id })).status, { timeout: 15_000 }).toBe('suspended');
    const set = await client.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({ taskId: task.id, id: 'hook-1', url: target.url, token: 'receiver-token', authentication: { scheme: 'Bearer', credentials: 'receiver-secret' } }),
    );
    expect(set).toMatchObject({ id: 'hook-1', taskId: task.id, url: target.url, token: 'receiver-token' });
    // The first POST is answered 503: retried with the same event id, delivered once.
    await expect.poll(() => target.got.map(stateOf), { timeout: 10_000 }).toEqual(['TASK_STATE_INPUT_REQUIRED']);
    expect(target.hits()).toBe(2);
    expect(target.got[0]).toMatchObject({ token: 'receiver-token', authorization: 'Bearer receiver-secret' });
    expect(target.got[0]!.eventId).toMatch(new RegExp(`^${task.id}:\\d+:status$`));
    expect(statSync(pushStorePath(dataDir)).mode & 0o777).toBe(0o600);
    const listed = await client.listTaskPushNotificationConfig(ListTaskPushNotificationConfigsRequest.fromJSON({ taskId: task.id }));
    expect(listed.configs.map((c) => c.id)).toEqual(['hook-1']);
    // The credentials are never answered back.
    const got = await client.getTaskPushNotificationConfig(GetTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: 'hook-1' }));
    expect(got.authentication?.credentials ?? '').toBe('');

    // Restart on the same data dir mid-run.
    await first.close();
    const second = await open(dataDir);
    const run = await call(second.plane, 'runs.get', { runId: task.id });
    expect(run.status).toBe('suspended');
    // Nothing re-sent by the new plane for a state the receiver already has.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.got).toHaveLength(1);
    await call(second.plane, 'approvals.decide', { runId: task.id, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    await expect.poll(() => target.got.map(stateOf).at(-1), { timeout: 15_000 }).toBe('TASK_STATE_COMPLETED');
    const states = target.got.map(stateOf);
    const ids = target.got.map((r) => r.eventId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(states[0]).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(states.slice(-2)).toEqual(['ARTIFACT', 'TASK_STATE_COMPLETED']);
    expect(states.filter((s) => s === 'ARTIFACT')).toHaveLength(1);
    expect(target.got.at(-2)!.body.artifactUpdate).toMatchObject({ taskId: task.id, artifact: { artifactId: `${task.id}-output` } });
    // Terminal: nothing more, even after another restart.
    const count = target.got.length;
    await second.close();
    await open(dataDir);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.got).toHaveLength(count);
  });

  it('a plane closed while a delivery is in flight lets it finish, so the next start does not send it again', async () => {
    // The receiver has the event at once and answers 400 ms later: a close in between used to
    // abort the POST, leave the cursor behind and send the same event again at the next start.
    const dataDir = tempDir();
    const target = await receiver({ answerAfterMs: 400 });
    const first = await open(dataDir);
    await call(first.plane, 'net.allow.add', { origin: target.origin });
    const client = await clientFor(first.endpoint, 'write-note');
    const task = (await client.sendMessage(send({ data: note }, { returnImmediately: true }))) as { id: string };
    await client.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({ taskId: task.id, id: 'hook-slow', url: target.url }));
    // The wait for approval is the last state; its POST is unanswered for 400 ms from here.
    await expect.poll(() => target.got.map(stateOf).at(-1), { timeout: 10_000 }).toBe('TASK_STATE_INPUT_REQUIRED');
    const sent = target.got.length;
    await first.close();
    expect(new PushStore(dataDir).get(task.id, 'hook-slow')?.cursor.sentKey).toMatch(/^TASK_STATE_INPUT_REQUIRED\|/);
    await open(dataDir);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(target.hits()).toBe(sent);
    const ids = target.got.map((r) => r.eventId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a config given with SendMessage is stored with the task and delivers its events', async () => {
    const target = await receiver();
    const { plane, endpoint } = await open(tempDir());
    await call(plane, 'net.allow.add', { origin: target.origin });
    const client = await clientFor(endpoint, 'summarize');
    const task = (await client.sendMessage(send({ text: 'Push this, please.' }, { taskPushNotificationConfig: { url: target.url } }))) as { id: string };
    await expect.poll(() => target.got.map(stateOf).at(-1), { timeout: 10_000 }).toBe('TASK_STATE_COMPLETED');
    expect(target.got.every((r) => r.eventId.startsWith(`${task.id}:`))).toBe(true);
    expect(target.got.filter((r) => r.body.artifactUpdate)).toHaveLength(1);
  });

  it('refuses the 11th config of a task, an http target not allowed, a URL with credentials, and another caller’s task', async () => {
    const target = await receiver();
    const { plane, endpoint } = await open(tempDir());
    await call(plane, 'net.allow.add', { origin: target.origin });
    const client = await clientFor(endpoint, 'write-note');
    const task = (await client.sendMessage(send({ data: note }, { returnImmediately: true }))) as { id: string };
    for (let i = 0; i < 10; i++) expect((await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: task.id, id: `c${i}`, url: target.url })).result).toMatchObject({ id: `c${i}` });
    const eleventh = await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: task.id, id: 'c10', url: target.url });
    expect(eleventh.error).toMatchObject({ code: -32602, message: expect.stringMatching(/already has 10 push notification configs/) });
    // Replacing one of the ten is not an eleventh; deleting one makes room.
    expect((await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: task.id, id: 'c0', url: target.url, token: 't' })).result).toMatchObject({ id: 'c0', token: 't' });
    await client.deleteTaskPushNotificationConfig(DeleteTaskPushNotificationConfigRequest.fromJSON({ taskId: task.id, id: 'c0' }));
    expect((await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: task.id, id: 'c10', url: target.url })).result).toMatchObject({ id: 'c10' });
    expect((await rpc(endpoint, 'write-note', 'GetTaskPushNotificationConfig', { taskId: task.id, id: 'c0' })).error).toMatchObject({ code: -32602, message: expect.stringMatching(/no push notification config c0/) });
    // Deleting is idempotent (the spec's DeleteTaskPushNotificationConfig: "multiple deletions of
    // the same config have the same effect"): a second delete answers as the first did.
    expect(await rpc(endpoint, 'write-note', 'DeleteTaskPushNotificationConfig', { taskId: task.id, id: 'c0' })).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    expect((await rpc(endpoint, 'write-note', 'DeleteTaskPushNotificationConfig', { taskId: task.id, id: '' })).error).toMatchObject({ code: -32602, data: errorData({ field: 'id' }) });

    const other = await task2(client);
    const notAllowed = await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: other, url: 'http://127.0.0.1:9/hook' });
    expect(notAllowed.error).toMatchObject({ code: -32602, data: errorData({ field: 'url' }), message: expect.stringMatching(/http:\/\/127\.0\.0\.1:9 is not a granted push receiver: its exact origin is not on the outbound allow list \(a person grants it with: agentplane net allow http:\/\/127\.0\.0\.1:9\)/) });
    // https is no grant: a public host a caller names is refused until a person grants it.
    const publicHttps = await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: other, url: 'https://hooks.example.com/a2a' });
    expect(publicHttps.error).toMatchObject({ code: -32602, data: errorData({ field: 'url' }), message: expect.stringMatching(/https:\/\/hooks\.example\.com is not a granted push receiver/) });
    await call(plane, 'net.allow.add', { origin: 'https://hooks.example.com' });
    expect((await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: other, id: 'granted', url: 'https://hooks.example.com/a2a' })).result).toMatchObject({ id: 'granted' });
    await call(plane, 'net.allow.remove', { origin: 'https://hooks.example.com' });
    const loopbackHttps = await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: other, url: 'https://127.0.0.1:9/hook' });
    expect(loopbackHttps.error).toMatchObject({ code: -32602, message: expect.stringMatching(/https:\/\/127\.0\.0\.1:9 is not a granted push receiver/) });
    const metadata = await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: other, url: 'https://169.254.169.254/latest' });
    expect(metadata.error).toMatchObject({ code: -32602, message: expect.stringMatching(/https:\/\/169\.254\.169\.254 is not a granted push receiver/) });
    const userinfo = await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: other, url: 'https://u:p@example.com/hook' });
    expect(userinfo.error).toMatchObject({ code: -32602, message: expect.stringMatching(/no user name or password/) });
    const noUrl = await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: other });
    expect(noUrl.error).toMatchObject({ code: -32602, data: errorData({ field: 'url' }) });
    const badAuth = await rpc(endpoint, 'write-note', 'CreateTaskPushNotificationConfig', { taskId: other, url: target.url, authentication: { scheme: 'Bearer', credentials: 'a\r\nX-Injected: 1' } });
    expect(badAuth.error).toMatchObject({ code: -32602, data: errorData({ field: 'authentication' }) });
    // A SendMessage whose push URL is refused admits no run.
    const before = (await call(plane, 'runs.list', { limit: 100 })).runs.length;
    const refusedSend = await rpc(endpoint, 'write-note', 'SendMessage', { message: { messageId: 'x1', role: 'ROLE_USER', parts: [{ data: note }] }, configuration: { taskPushNotificationConfig: { url: 'http://127.0.0.1:9/hook' } } });
    expect(refusedSend.error).toMatchObject({ code: -32602, data: errorData({ field: 'configuration.taskPushNotificationConfig.url' }) });
    expect((await call(plane, 'runs.list', { limit: 100 })).runs.length).toBe(before);

    // Another caller's task (the embedder's run) answers TaskNotFound on every push method.
    const theirs = await call(plane, 'runs.start', { agent: 'write-note', input: note });
    for (const method of ['CreateTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs', 'GetTaskPushNotificationConfig', 'DeleteTaskPushNotificationConfig']) {
      const answer = await rpc(endpoint, 'write-note', method, { taskId: theirs.runId, id: 'x', url: target.url });
      expect(answer.error, method).toMatchObject({ code: -32001 });
    }
  });

  it('a receiver answering a redirect gets no event delivered and the redirect is not followed (netguard)', async () => {
    const inner = await receiver();
    const target = await receiver({ redirectTo: `${inner.url}` });
    const logger = capturingLogger();
    const { plane, endpoint } = await open(tempDir(), logger);
    await call(plane, 'net.allow.add', { origin: target.origin });
    await call(plane, 'net.allow.add', { origin: inner.origin });
    const client = await clientFor(endpoint, 'write-note');
    const task = (await client.sendMessage(send({ data: note }, { returnImmediately: true, taskPushNotificationConfig: { url: target.url, token: 'never-logged' } }))) as { id: string };
    await expect.poll(() => logger.lines.filter((l) => l.includes('a2a push: delivery failed')).length, { timeout: 10_000 }).toBeGreaterThan(0);
    const failed = logger.lines.find((l) => l.includes('a2a push: delivery failed'))!;
    expect(failed).toMatch(/redirect/);
    expect(failed).toContain(task.id);
    expect(logger.lines.join('\n')).not.toContain('never-logged');
    expect(inner.hits()).toBe(0);
  });
});

describe('the push store', () => {
  it('refuses a broken a2a-push.json by name rather than forgetting every cursor', () => {
    const dir = tempDir();
    writeFileSync(pushStorePath(dir), '{"configs": [', { mode: 0o600 });
    expect(() => new PushStore(dir)).toThrow(/a2a-push\.json: not valid JSON/);
    writeFileSync(pushStorePath(dir), '{"configs": [{"id": 1}]}', { mode: 0o600 });
    expect(() => new PushStore(dir)).toThrow(/a2a-push\.json: not a push config file \(configs\.0\.id/);
  });
});

async function task2(client: Client): Promise<string> {
  return ((await client.sendMessage(send({ data: note }, { returnImmediately: true }))) as { id: string }).id;
}
