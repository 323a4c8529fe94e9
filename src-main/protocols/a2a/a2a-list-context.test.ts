/**
 * A2A contexts and ListTasks read from the journal's index of each caller's runs
 * (docs/GOVERNED-RUNTIME.md, "A2A, being called"): @a2a-js/sdk 1.3's client against a2a-server.ts
 * over a real plane and a real listener on 127.0.0.1, raw fetch for what the SDK would never send.
 * The handler is built here as plane/a2a-endpoint.ts builds it (the plane's door naming the A2A
 * caller), so ListTasks' bounds can be made small enough to bite with a handful of runs. The other
 * caller is reached through the plane's own door as `mcp:local`: its runs are somebody else's to
 * the A2A caller.
 */
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { GetTaskRequest, ListTasksRequest, SendMessageRequest, TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { RunView } from '../../../src-shared/ipc/contract';
import { call, failure, testPlane } from '../../../tests/support/runtime-support';
import { sdkA2aClient } from '../../../tests/doubles/sdk-a2a-client';
import { errorData } from '../../../tests/support/a2a-support';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import type { Plane } from '../../plane/plane';
import { silentLogger } from '../../base/logger';
import { loadOrCreatePlaneKey } from '../../journal/plane-key';
import { loopbackGuard } from '../../net/loopback-guard';
import { PolicyEngine } from '../../runtime/policy';
import { createA2aHandler, type A2aPlaneDoor } from './a2a-server';

const tempDir = useTempFolders('agentplane-a2a-list-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const TOKEN = 'a2a-list-context-test-token';

interface Served {
  plane: Plane;
  url: string;
}

async function newPlane(policy?: PolicyEngine): Promise<Plane> {
  const plane = await testPlane({ dataDir: tempDir(), ...(policy ? { policy } : {}) });
  cleanups.push(() => plane.close());
  return plane;
}

/** The A2A handler over `plane`, as a2a-endpoint.ts wires it, with ListTasks' bounds as given. */
async function served(plane: Plane, bounds: { filterScanBudget?: number; artifactBudgetBytes?: number } = {}): Promise<Served> {
  const key = await loadOrCreatePlaneKey(plane.dataDir);
  let port = 0;
  const door: A2aPlaneDoor = {
    dispatch: (name, request, context) => plane.dispatch(name, request, { transport: 'local', caller: { principal: context.principal, via: 'a2a' } }),
    onJournal: (listener) =>
      plane.events.subscribe((event) => {
        if (event.name === 'journal.appended') listener(event.payload.runs);
      }),
    approveWith: (runId) => `agentplane approvals approve ${runId}`,
  };
  const handler = createA2aHandler({ host: 'plane', door, token: TOKEN, key, guard: loopbackGuard(() => port), origin: () => `http://127.0.0.1:${port}`, version: 'test', logger: silentLogger, blockMs: 15_000, ...bounds });
  const server: Server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { plane, url: `http://127.0.0.1:${port}/` };
}

const clientFor = (at: Served, agent: string): Promise<Client> => sdkA2aClient(at.url, agent, TOKEN);

type RpcAnswer = { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };

async function rpc(at: Served, agent: string, method: string, params: Record<string, unknown>): Promise<RpcAnswer> {
  const response = await fetch(`${at.url}a2a/${agent}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}`, 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as RpcAnswer;
}

let messageCount = 0;
function send(part: Record<string, unknown>, extra: { contextId?: string; configuration?: Record<string, unknown> } = {}) {
  return SendMessageRequest.fromJSON({
    message: { messageId: `m-${++messageCount}`, role: 'ROLE_USER', parts: [part], ...(extra.contextId ? { contextId: extra.contextId } : {}) },
    ...(extra.configuration ? { configuration: extra.configuration } : {}),
  });
}

const note = { title: 'the user', topic: 'x' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function summarized(client: Client, text: string, contextId?: string): Promise<Task> {
  const task = (await client.sendMessage(send({ text }, contextId ? { contextId } : {}))) as Task;
  expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  return task;
}

async function suspendedNote(client: Client, plane: Plane): Promise<string> {
  const result = (await client.sendMessage(send({ data: note }, { configuration: { returnImmediately: true } }))) as Task;
  await expect.poll(async () => (await call(plane, 'runs.get', { runId: result.id })).status, { timeout: 10_000 }).toBe('suspended');
  return result.id;
}

async function listAll(client: Client, request: Record<string, unknown>): Promise<{ ids: string[]; totals: number[]; pages: number }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let pageToken = '';
  let pages = 0;
  do {
    const page = await client.listTasks(ListTasksRequest.fromJSON({ ...request, ...(pageToken ? { pageToken } : {}) }));
    ids.push(...page.tasks.map((t) => t.id));
    totals.push(page.totalSize);
    pageToken = page.nextPageToken;
    pages += 1;
  } while (pageToken !== '' && pages < 20);
  return { ids, totals, pages };
}

describe('A2A contexts: a message carrying only contextId opens another run in the same context', () => {
  it('two runs in one context: contextId is the first run’s id everywhere the server writes it, journaled in RunAdmitted', async () => {
    const at = await served(await newPlane());
    const client = await clientFor(at, 'summarize');
    const first = await summarized(client, 'The first turn of a conversation.');
    expect(first.contextId).toBe(first.id);
    const second = await summarized(client, 'The second turn of the same conversation.', first.id);
    expect(second.id).not.toBe(first.id);
    expect(second.contextId).toBe(first.id);
    expect((await client.getTask(GetTaskRequest.fromJSON({ id: second.id }))).contextId).toBe(first.id);
    const run = await call(at.plane, 'runs.get', { runId: second.id });
    expect(run.context).toBe(first.id);
    expect((await call(at.plane, 'runs.get', { runId: first.id })).context).toBeUndefined();
    const [admitted] = await call(at.plane, 'journal.records', { runId: second.id, fromSeq: 1, limit: 1 }).then((r) => r.records);
    expect(admitted).toMatchObject({ kind: 'RunAdmitted', body: { context: first.id } });

    // A stream in the context: every event carries the context's id.
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(send({ text: 'A third turn, streamed.' }, { contextId: first.id }))) events.push(event);
    const contextIds = events.map((e) => (e.payload?.$case === 'task' || e.payload?.$case === 'statusUpdate' || e.payload?.$case === 'artifactUpdate' ? e.payload.value.contextId : null));
    expect(events.map((e) => e.payload?.$case)).toContain('artifactUpdate');
    expect(new Set(contextIds)).toEqual(new Set([first.id]));

    const listed = await client.listTasks(ListTasksRequest.fromJSON({ contextId: first.id }));
    expect(listed.totalSize).toBe(3);
    expect(listed.tasks.map((t) => t.contextId)).toEqual([first.id, first.id, first.id]);
    expect(listed.tasks[2]?.id).toBe(first.id);
    expect((await client.listTasks(ListTasksRequest.fromJSON({ contextId: second.id }))).totalSize).toBe(0);
  });

  it('a contextId this caller did not open is refused naming message.contextId, one answer whether unknown, another caller’s or a continuing task', async () => {
    const at = await served(await newPlane());
    const client = await clientFor(at, 'summarize');
    const opened = await summarized(client, 'Opens a context.');
    const joined = await summarized(client, 'Joins it.', opened.id);
    // Another caller's run, admitted through the plane's door as an MCP host.
    const theirs = await at.plane.dispatch('runs.start', { agent: 'summarize', input: { text: 'not the A2A caller’s' } }, { transport: 'local', caller: { principal: 'mcp:local', via: 'mcp' } });
    expect(theirs.ok).toBe(true);
    const theirRun = (theirs as { value: RunView }).value;
    const answers = [];
    for (const contextId of [theirRun.runId, 'run-00000000000000000000', joined.id, 'not-a-run-id']) {
      answers.push(await rpc(at, 'summarize', 'SendMessage', { message: { messageId: `ctx-${contextId}`, role: 'ROLE_USER', parts: [{ text: 'x' }], contextId } }));
    }
    for (const answer of answers) {
      expect(answer.error).toEqual({ code: -32602, message: 'Invalid params: message.contextId is not a context this caller opened (omit it to open a new one)', data: errorData({ field: 'message.contextId' }) });
    }
    // Nothing was admitted for any of them.
    expect((await client.listTasks(ListTasksRequest.fromJSON({}))).totalSize).toBe(2);
    // The runtime holds the rule too, for every door: the person at the plane cannot join the A2A caller's context.
    expect(await failure(at.plane, 'runs.start', { agent: 'summarize', input: { text: 'x' }, context: opened.id })).toMatchObject({ code: 'AP_BAD_REQUEST', message: expect.stringMatching(/^context: run-[0-9a-f]+ is not a context user:local opened/) });
    // And another caller's runs are not listed in a context of the same id.
    expect((await at.plane.dispatch('runs.list', { owner: 'mcp:local', context: opened.id }, { transport: 'local' })) as { value: { runs: unknown[]; total: number } }).toMatchObject({ ok: true, value: { runs: [], total: 0 } });
  });
});

describe('A2A contexts and a policy decline', () => {
  it('a declined message in a context the caller opened answers in that context, and admits nothing into it', async () => {
    const policy = PolicyEngine.parse({ rules: [{ effect: 'allow', principal: 'a2a:local', action: 'runtime:run.start', resource: 'agent:summarize' }] }, 'test');
    const at = await served(await newPlane(policy));
    const opened = await summarized(await clientFor(at, 'summarize'), 'Opens a context another agent then declines in.');
    const declined = await rpc(at, 'write-note', 'SendMessage', { message: { messageId: 'declined-in-context', role: 'ROLE_USER', parts: [{ data: note }], contextId: opened.id } });
    expect(declined.result?.message).toMatchObject({ role: 'ROLE_AGENT', contextId: opened.id, metadata: { 'io.agentplane.a2a/declined': true } });
    expect((await call(at.plane, 'runs.list', { limit: 10, owner: 'a2a:local', context: opened.id })).total).toBe(1);
  });
});

describe('ListTasks from the index of the caller’s runs', () => {
  it('pages newest first with the exact totalSize on every page, another caller’s runs not counted; status pages too', async () => {
    const at = await served(await newPlane());
    const client = await clientFor(at, 'summarize');
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await summarized(client, `Text number ${i} to summarize.`)).id);
    await call(at.plane, 'runs.start', { agent: 'summarize', input: { text: 'the person at the plane' } });
    const all = await listAll(client, { pageSize: 2 });
    expect(all.ids).toEqual([...ids].reverse());
    expect(all.totals).toEqual([5, 5, 5]);
    expect(all.pages).toBe(3);
    const completed = await listAll(client, { pageSize: 2, status: 'TASK_STATE_COMPLETED' });
    expect(completed.ids).toEqual([...ids].reverse());
    expect(completed.totals).toEqual([5, 5, 5]);
    expect((await client.listTasks(ListTasksRequest.fromJSON({ status: 'TASK_STATE_FAILED' }))).totalSize).toBe(0);
  });

  it('filters by status and statusTimestampAfter, which takes a task admitted before it but updated after', async () => {
    const at = await served(await newPlane());
    const client = await clientFor(at, 'write-note');
    const updatedLater = await suspendedNote(client, at.plane);
    const idle = await suspendedNote(client, at.plane);
    await sleep(5);
    const t = new Date().toISOString();
    await sleep(5);
    const pending = (await call(at.plane, 'runs.get', { runId: updatedLater })).pending!;
    await call(at.plane, 'approvals.decide', { runId: updatedLater, waitId: pending.waitId, decision: 'approve', subjectHash: pending.subjectHash });
    await expect.poll(async () => (await call(at.plane, 'runs.get', { runId: updatedLater })).outcome, { timeout: 10_000 }).toBe('succeeded');
    const newer = await suspendedNote(client, at.plane);

    const since = await client.listTasks(ListTasksRequest.fromJSON({ statusTimestampAfter: t }));
    expect(since.tasks.map((task) => task.id)).toEqual([newer, updatedLater]);
    expect(since.totalSize).toBe(2);
    const waiting = await client.listTasks(ListTasksRequest.fromJSON({ status: 'TASK_STATE_INPUT_REQUIRED' }));
    expect(waiting.tasks.map((task) => task.id)).toEqual([newer, idle]);
    expect(waiting.totalSize).toBe(2);
    const done = await client.listTasks(ListTasksRequest.fromJSON({ status: 'TASK_STATE_COMPLETED', statusTimestampAfter: t }));
    expect(done.tasks.map((task) => task.id)).toEqual([updatedLater]);
    // A time after every record matches nothing; an offset form is read as the instant it names.
    const later = new Date(Date.now() + 60_000);
    expect((await client.listTasks(ListTasksRequest.fromJSON({ statusTimestampAfter: later.toISOString() }))).totalSize).toBe(0);
    const offset = new Date(Date.parse(t) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect((await client.listTasks(ListTasksRequest.fromJSON({ statusTimestampAfter: offset }))).totalSize).toBe(2);
  });

  it('a status filter over the scan budget is refused naming statusTimestampAfter, which then narrows it under the budget', async () => {
    const plane = await newPlane();
    const at = await served(plane, { filterScanBudget: 2 });
    const client = await clientFor(at, 'summarize');
    for (let i = 0; i < 2; i++) await summarized(client, `Older text ${i}.`);
    await sleep(5);
    const t = new Date().toISOString();
    const newest = await summarized(client, 'The newest text.');
    const over = await rpc(at, 'summarize', 'ListTasks', { status: 'TASK_STATE_COMPLETED' });
    expect(over.error).toMatchObject({ code: -32602, message: expect.stringMatching(/more than 2 match the other filters; narrow with statusTimestampAfter/), data: errorData({ field: 'statusTimestampAfter', scanBudget: 2 }) });
    // No status filter: counted from the index, no fold beyond the page, no budget to bite.
    expect((await client.listTasks(ListTasksRequest.fromJSON({}))).totalSize).toBe(3);
    const narrowed = await client.listTasks(ListTasksRequest.fromJSON({ status: 'TASK_STATE_COMPLETED', statusTimestampAfter: t }));
    expect(narrowed.tasks.map((task) => task.id)).toEqual([newest.id]);
    expect(narrowed.totalSize).toBe(1);
  });

  it('artifacts only when asked; past the page’s artifact budget the rest are marked artifactsOmitted, and GetTask returns them', async () => {
    const plane = await newPlane();
    const plain = await served(plane);
    const client = await clientFor(plain, 'summarize');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await summarized(client, `Artifact text ${i}.`)).id);
    const without = await client.listTasks(ListTasksRequest.fromJSON({}));
    expect(without.tasks.map((task) => task.artifacts.length)).toEqual([0, 0, 0]);
    const withAll = await client.listTasks(ListTasksRequest.fromJSON({ includeArtifacts: true }));
    expect(withAll.tasks.map((task) => task.artifacts.length)).toEqual([1, 1, 1]);
    expect(withAll.tasks.some((task) => task.metadata?.['io.agentplane.a2a/artifactsOmitted'] !== undefined)).toBe(false);

    // A budget that holds exactly the newest task's artifact, as the server writes it.
    const newest = (await rpc(plain, 'summarize', 'GetTask', { id: ids[2] })).result as { artifacts: unknown[] };
    const budget = Buffer.byteLength(JSON.stringify(newest.artifacts[0]));
    const bounded = await served(plane, { artifactBudgetBytes: budget });
    const listed = (await rpc(bounded, 'summarize', 'ListTasks', { includeArtifacts: true })).result as { tasks: Array<{ id: string; artifacts?: unknown[]; metadata: Record<string, unknown> }>; totalSize: number };
    expect(listed.totalSize).toBe(3);
    expect(listed.tasks.map((task) => task.artifacts?.length ?? 0)).toEqual([1, 0, 0]);
    expect(listed.tasks.map((task) => task.metadata['io.agentplane.a2a/artifactsOmitted'] ?? false)).toEqual([false, true, true]);
    const recovered = (await rpc(bounded, 'summarize', 'GetTask', { id: listed.tasks[1]!.id })).result as { artifacts?: unknown[]; metadata: Record<string, unknown> };
    expect(recovered.artifacts).toHaveLength(1);
    expect(recovered.metadata['io.agentplane.a2a/artifactsOmitted']).toBeUndefined();
  });

  it('refuses a pageToken it never gave, one for other filters, and bad filter values, each naming its field', async () => {
    const at = await served(await newPlane());
    const client = await clientFor(at, 'summarize');
    for (let i = 0; i < 3; i++) await summarized(client, `Token text ${i}.`);
    const first = await client.listTasks(ListTasksRequest.fromJSON({ pageSize: 1 }));
    expect(first.nextPageToken).not.toBe('');
    const [payload, mac] = first.nextPageToken.split('.');
    const forged = `${Buffer.from(JSON.stringify({ b: 999, q: JSON.parse(Buffer.from(payload!, 'base64url').toString()).q })).toString('base64url')}.${mac}`;
    for (const pageToken of ['run-00000000000000000000', 'garbage', forged, `${first.nextPageToken}x`]) {
      expect((await rpc(at, 'summarize', 'ListTasks', { pageToken })).error).toMatchObject({ code: -32602, message: 'Invalid params: pageToken is not one this server gave', data: errorData({ field: 'pageToken' }) });
    }
    expect((await rpc(at, 'summarize', 'ListTasks', { pageToken: first.nextPageToken, status: 'TASK_STATE_COMPLETED' })).error).toMatchObject({ code: -32602, data: errorData({ field: 'pageToken' }) });
    expect((await rpc(at, 'summarize', 'ListTasks', { pageToken: first.nextPageToken, pageSize: 1 })).result).toMatchObject({ totalSize: 3, pageSize: 1 });
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ pageSize: 0 }, 'pageSize'],
      [{ pageSize: 101 }, 'pageSize'],
      [{ status: 'DONE' }, 'status'],
      [{ statusTimestampAfter: 'yesterday' }, 'statusTimestampAfter'],
      [{ includeArtifacts: 'yes' }, 'includeArtifacts'],
      [{ historyLength: -1 }, 'historyLength'],
      [{ contextId: 5 }, 'contextId'],
    ];
    for (const [params, field] of bad) expect((await rpc(at, 'summarize', 'ListTasks', params)).error).toMatchObject({ code: -32602, data: errorData({ field }) });
    // historyLength is accepted (no message history is kept to return) and changes nothing.
    expect((await rpc(at, 'summarize', 'ListTasks', { historyLength: 2 })).result).toMatchObject({ totalSize: 3 });
    // runs.list's index filters go with an owner.
    expect(await failure(at.plane, 'runs.list', { limit: 10, beforeSeq: 5 })).toMatchObject({ code: 'AP_BAD_REQUEST', message: expect.stringMatching(/owner/) });
  });
});

describe('the rules on a message: a declared mediaType agrees with its part, a named skill is this card’s', () => {
  it('refuses a text part declared as JSON, a data part declared as text, and another skill, each naming the field', async () => {
    const at = await served(await newPlane());
    const message = (part: Record<string, unknown>, metadata?: Record<string, unknown>) => ({ message: { messageId: `seed-${++messageCount}`, role: 'ROLE_USER', parts: [part], ...(metadata ? { metadata } : {}) } });
    const textAsJson = await rpc(at, 'summarize', 'SendMessage', message({ text: '{"text":"x"}', mediaType: 'application/json' }));
    expect(textAsJson.error).toMatchObject({ code: -32602, message: expect.stringMatching(/text part but declares mediaType "application\/json"/), data: errorData({ field: 'message.parts[0].mediaType' }) });
    const dataAsText = await rpc(at, 'summarize', 'SendMessage', message({ data: { text: 'x' }, mediaType: 'text/plain' }));
    expect(dataAsText.error).toMatchObject({ code: -32602, data: errorData({ field: 'message.parts[0].mediaType' }) });
    const otherSkill = await rpc(at, 'summarize', 'SendMessage', message({ text: 'x' }, { skill: 'write-note' }));
    expect(otherSkill.error).toMatchObject({ code: -32602, message: expect.stringMatching(/message\.metadata\.skill "write-note" is not a skill of this agent; its card declares one skill, summarize/), data: errorData({ field: 'message.metadata.skill' }) });
    // Agreeing declarations and the card's own skill are served.
    const agreed = await rpc(at, 'summarize', 'SendMessage', message({ data: { text: 'Agreeing parts are served.' }, mediaType: 'application/json; charset=utf-8' }, { skill: 'summarize' }));
    expect(agreed.result).toMatchObject({ task: { status: { state: 'TASK_STATE_COMPLETED' } } });
    const textPlain = await rpc(at, 'summarize', 'SendMessage', message({ text: 'Plain text is text.', mediaType: 'text/plain' }));
    expect(textPlain.error).toBeUndefined();
    // Nothing refused was admitted.
    expect((await rpc(at, 'summarize', 'ListTasks', {})).result).toMatchObject({ totalSize: 2 });
  });
});
