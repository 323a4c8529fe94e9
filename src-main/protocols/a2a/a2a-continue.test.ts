/**
 * Continuing an INPUT_REQUIRED task by message (a2a-continue.ts), end to end in one process: a
 * real plane on a temporary data dir, the real endpoint on 127.0.0.1 (plane/a2a-endpoint.ts),
 * @a2a-js/sdk 1.3's client for the flows it sends, raw fetch for the bad inputs it would not.
 * The policy is the shipped resources/policy.json, with or without the one rule README.md tells
 * a user to add to <data dir>/policy.json; the journal is read back to see what was decided.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GetTaskRequest, SendMessageRequest, TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { agent, call, countingProvider, testPlane } from '../../../tests/support/runtime-support';
import { sdkA2aClient } from '../../../tests/doubles/sdk-a2a-client';
import { errorData } from '../../../tests/support/a2a-support';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { startPlaneA2aEndpoint, type PlaneA2aEndpoint } from '../../plane/a2a-endpoint';
import { resourcesDir } from '../../plane/plane-config';
import type { Plane } from '../../plane/plane';
import { silentLogger } from '../../base/logger';
import type { ModelProvider } from '../../runtime/model-provider';

const tempDir = useTempFolders('agentplane-a2a-continue-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The rule README.md documents: A2A callers may answer input waits. */
const DELIVER_INPUT = { effect: 'allow', principal: 'a2a:local', action: 'a2a:event.deliver', resource: 'wait:input' };

const ask = agent({
  name: 'ask',
  input: { type: 'object', required: ['question'], properties: { question: { type: 'string' } } },
  steps: [{ as: 'answer', input: { prompt: '{{input.question}}' } }, { output: { answer: '{{steps.answer}}' } }],
  grants: [],
});
const guarded = agent({
  name: 'guarded',
  steps: [{ as: 'saved', tool: { name: 'file.write', args: { path: 'notes/a.md', content: 'x' } } }, { output: '{{steps.saved}}' }],
  grants: [{ kind: 'tool', name: 'file.write', approve: true }],
});
const slowAsk = agent({
  name: 'slow-ask',
  steps: [{ as: 'draft', model: { provider: 'local', prompt: 'draft', maxTokens: 5 } }, { as: 'more', input: { prompt: 'more?' } }, { output: '{{steps.more}}' }],
  grants: [{ kind: 'model', name: 'local' }],
});

async function served(options: { extraRules?: object[]; provider?: ModelProvider } = {}): Promise<{ plane: Plane; endpoint: PlaneA2aEndpoint }> {
  const dataDir = tempDir();
  if (options.extraRules) {
    // The user's own policy: the shipped bundle plus their rules (README.md, "The plane as an A2A server").
    const shipped = JSON.parse(readFileSync(join(resourcesDir(), 'policy.json'), 'utf8')) as { rules: object[] };
    writeFileSync(join(dataDir, 'policy.json'), JSON.stringify({ ...shipped, rules: [...shipped.rules, ...options.extraRules] }));
  }
  const plane = await testPlane({ dataDir, agents: [ask, guarded, slowAsk], ...(options.provider ? { providers: new Map([['local', options.provider]]) } : {}) });
  cleanups.push(() => plane.close());
  const endpoint = await startPlaneA2aEndpoint(plane, { port: 0, uiOrigin: 'http://127.0.0.1:5555', logger: silentLogger, blockMs: 15_000 });
  cleanups.push(() => endpoint.close());
  return { plane, endpoint };
}

const clientFor = (endpoint: PlaneA2aEndpoint, name: string): Promise<Client> => sdkA2aClient(endpoint.url, name, endpoint.token);

type RpcAnswer = { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };

async function rpc(endpoint: PlaneA2aEndpoint, name: string, params: Record<string, unknown>): Promise<RpcAnswer> {
  const response = await fetch(`${endpoint.url}a2a/${name}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${endpoint.token}`, 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as RpcAnswer;
}

let count = 0;
const answerTo = (taskId: string, part: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  message: { messageId: `answer-${++count}`, role: 'ROLE_USER', taskId, parts: [part], ...extra },
});

/** Starts `name` over A2A and waits until its task is INPUT_REQUIRED. */
async function waitingTask(endpoint: PlaneA2aEndpoint, plane: Plane, name: string, input: Record<string, unknown> = {}): Promise<string> {
  const started = await rpc(endpoint, name, { message: { messageId: `start-${++count}`, role: 'ROLE_USER', parts: [{ data: input }] }, configuration: { returnImmediately: true } });
  const taskId = (started.result?.task as { id: string }).id;
  await expect.poll(async () => (await call(plane, 'runs.get', { runId: taskId })).status, { timeout: 10_000 }).toBe('suspended');
  return taskId;
}

async function decisionsOf(plane: Plane, runId: string) {
  return (await plane.journal.readRun(runId, 1, 1_000)).filter((r) => r.kind === 'Decision').map((r) => r.body as Record<string, unknown>);
}

describe('continuing an INPUT_REQUIRED task by message (@a2a-js/sdk client)', () => {
  it('answers the question: the same run completes with the answer, the decision names a2a:local and the message; the same message again applies nothing', async () => {
    const { plane, endpoint } = await served({ extraRules: [DELIVER_INPUT] });
    const client = await clientFor(endpoint, 'ask');
    const asked = (await client.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: 'q-1', role: 'ROLE_USER', parts: [{ text: 'which colour?' }] } }))) as { id: string; status: { state: number; message?: { parts: Array<{ content: { value: unknown } }> } } };
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(String(asked.status.message?.parts[0]?.content.value)).toContain('waits for input: which colour?');

    const answer = SendMessageRequest.fromJSON({ message: { messageId: 'a-1', role: 'ROLE_USER', taskId: asked.id, contextId: asked.id, parts: [{ text: 'blue' }] } });
    const done = (await client.sendMessage(answer)) as { id: string; status: { state: number }; artifacts: Array<{ parts: Array<{ content: { $case: string; value: unknown } }> }> };
    expect(done.id).toBe(asked.id);
    expect(done.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(done.artifacts[0]?.parts[0]?.content).toMatchObject({ $case: 'data', value: { answer: 'blue' } });
    const decisions = await decisionsOf(plane, asked.id);
    expect(decisions).toEqual([expect.objectContaining({ decision: 'approve', by: 'a2a:local', messageId: 'a-1', value: { kind: 'input', input: 'blue' } })]);

    // The same message again (a retry after a lost answer): the task as it stands, nothing applied twice.
    const again = (await client.sendMessage(answer)) as { id: string; status: { state: number } };
    expect(again).toMatchObject({ id: asked.id, status: { state: TaskState.TASK_STATE_COMPLETED } });
    expect(await decisionsOf(plane, asked.id)).toHaveLength(1);
    expect((await plane.journal.readRun(asked.id, 1, 1_000)).filter((r) => r.kind === 'RunSealed')).toHaveLength(1);
    // The same id with another answer is not a repeat: refused, naming the field.
    const reused = await rpc(endpoint, 'ask', { message: { messageId: 'a-1', role: 'ROLE_USER', taskId: asked.id, parts: [{ text: 'red' }] } });
    expect(reused.error).toMatchObject({ code: -32602, message: expect.stringMatching(/messageId a-1 already answered this run with another value/), data: errorData({ field: 'message.messageId' }) });
    expect(await decisionsOf(plane, asked.id)).toHaveLength(1);

    // A new message for the ended task is refused naming its state (the spec: a terminal task takes no message).
    const late = await rpc(endpoint, 'ask', answerTo(asked.id, { text: 'green' }));
    expect(late.error).toMatchObject({ code: -32004, message: expect.stringMatching(/has ended \(TASK_STATE_COMPLETED\)/), data: errorData({ state: 'TASK_STATE_COMPLETED' }) });
    // The bearer token is never journaled.
    expect(JSON.stringify(await plane.journal.readRun(asked.id, 1, 1_000))).not.toContain(endpoint.token);
  });

  it('SendStreamingMessage with taskId streams the same task on to COMPLETED; a data part answers with its object', async () => {
    const { plane, endpoint } = await served({ extraRules: [DELIVER_INPUT] });
    const client = await clientFor(endpoint, 'ask');
    const taskId = await waitingTask(endpoint, plane, 'ask', { question: 'where?' });
    const events: StreamResponse[] = [];
    const message = SendMessageRequest.fromJSON({ message: { messageId: 'stream-answer', role: 'ROLE_USER', taskId, parts: [{ data: { city: 'Lyon' } }] } });
    for await (const event of client.sendMessageStream(message)) events.push(event);
    expect(events[0]?.payload?.$case === 'task' && events[0].payload.value.id).toBe(taskId);
    const artifact = events.find((e) => e.payload?.$case === 'artifactUpdate')?.payload;
    expect(artifact?.$case === 'artifactUpdate' ? artifact.value.artifact?.parts[0]?.content : undefined).toMatchObject({ $case: 'data', value: { answer: { city: 'Lyon' } } });
    const last = events.at(-1)?.payload;
    expect(last?.$case === 'statusUpdate' ? last.value.status?.state : undefined).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await client.getTask(GetTaskRequest.fromJSON({ id: taskId }))).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('the same message sent twice at once lands once (the answer is taken under the run\'s decision lock)', async () => {
    const { plane, endpoint } = await served({ extraRules: [DELIVER_INPUT] });
    const taskId = await waitingTask(endpoint, plane, 'ask', { question: 'twice?' });
    // Straight at the door's command, so the two reach the runtime in the same tick.
    const asCaller = { transport: 'local', caller: { principal: 'a2a:local', via: 'a2a' } } as const;
    const request = { runId: taskId, messageId: 'raced', input: 'once' };
    const [first, second] = await Promise.all([plane.dispatch('runs.answer', request, asCaller), plane.dispatch('runs.answer', request, asCaller)]);
    expect([first, second].map((a) => a.ok && (a.value as { repeated: boolean }).repeated).sort()).toEqual([false, true]);
    await expect.poll(async () => (await call(plane, 'runs.get', { runId: taskId })).outcome, { timeout: 10_000 }).toBe('succeeded');
    expect(await decisionsOf(plane, taskId)).toEqual([expect.objectContaining({ messageId: 'raced', value: { kind: 'input', input: 'once' } })]);
  });

  it('with the shipped policy alone (no a2a:event.deliver rule) the answer is declined as a Message and the run keeps waiting', async () => {
    const { plane, endpoint } = await served();
    const taskId = await waitingTask(endpoint, plane, 'ask', { question: 'why?' });
    const answer = await rpc(endpoint, 'ask', answerTo(taskId, { text: 'because' }, { contextId: taskId }));
    expect(answer.error).toBeUndefined();
    expect(answer.result?.message).toMatchObject({ role: 'ROLE_AGENT', contextId: taskId, metadata: { 'io.agentplane.a2a/declined': true } });
    expect(JSON.stringify(answer.result)).not.toMatch(/event\.deliver|wait:input|rule/);
    expect((await call(plane, 'runs.get', { runId: taskId })).status).toBe('suspended');
    expect(await decisionsOf(plane, taskId)).toEqual([]);
    // The shipped bundle allows a2a:task.continue, so it was the second question that refused it, journaled for the operator.
    const refused = (await plane.journal.readRange(1, (await plane.journal.head()).seq, 1_000)).filter((r) => r.kind === 'AdmissionRefused').map((r) => r.body);
    expect(refused).toEqual([expect.objectContaining({ principal: 'a2a:local', action: 'a2a:event.deliver', resource: 'wait:input', agent: 'ask' })]);
  });
});

describe('a message with taskId that cannot answer is refused, and the run keeps waiting', () => {
  it('an approval wait is a person’s decision: refused by name whatever the policy says', async () => {
    const { plane, endpoint } = await served({ extraRules: [{ ...DELIVER_INPUT, resource: 'wait:*' }] });
    const taskId = await waitingTask(endpoint, plane, 'guarded');
    const answer = await rpc(endpoint, 'guarded', answerTo(taskId, { text: 'yes, approve it' }));
    expect(answer.error).toMatchObject({ code: -32004, message: expect.stringMatching(/waits for approval: tool file\.write; a person decides at AgentPlane: .*approvals approve/), data: errorData({ waitsFor: 'approval' }) });
    expect((await call(plane, 'runs.get', { runId: taskId })).pending?.reason).toBe('approval');
    expect(await decisionsOf(plane, taskId)).toEqual([]);
  });

  it('another caller’s task, another agent’s, and an unknown id are TaskNotFound alike; the runtime holds the owner rule too', async () => {
    const { plane, endpoint } = await served({ extraRules: [DELIVER_INPUT] });
    const theirs = await call(plane, 'runs.start', { agent: 'ask', input: { question: 'yours?' }, wait: true });
    expect(theirs.status).toBe('suspended');
    const own = await waitingTask(endpoint, plane, 'ask', { question: 'mine?' });
    for (const [name, taskId] of [['ask', theirs.runId], ['guarded', own], ['ask', 'run-00000000000000000000'], ['ask', 'not-a-run']] as const) {
      const answer = await rpc(endpoint, name, answerTo(taskId, { text: 'x' }));
      expect(answer.error).toMatchObject({ code: -32001, message: `no task ${taskId}` });
    }
    // The door's command refuses another's run by itself, not only the adapter in front of it.
    const direct = await plane.dispatch('runs.answer', { runId: theirs.runId, messageId: 'm', input: 'x' }, { transport: 'local', caller: { principal: 'a2a:local', via: 'a2a' } });
    expect(direct).toMatchObject({ ok: false, error: { code: 'AP_NOT_FOUND' } });
    // A person answers with approvals.decide, which shows them what they decide on.
    const person = await plane.dispatch('runs.answer', { runId: theirs.runId, messageId: 'm', input: 'x' }, { transport: 'local' });
    expect(person).toMatchObject({ ok: false, error: { code: 'AP_BAD_REQUEST', message: expect.stringMatching(/approvals\.decide/) } });
    expect(await decisionsOf(plane, theirs.runId)).toEqual([]);
    expect(await decisionsOf(plane, own)).toEqual([]);
  });

  it('a contextId that is not the task’s is -32602', async () => {
    const { plane, endpoint } = await served({ extraRules: [DELIVER_INPUT] });
    const taskId = await waitingTask(endpoint, plane, 'ask', { question: 'q' });
    const answer = await rpc(endpoint, 'ask', answerTo(taskId, { text: 'x' }, { contextId: 'another-context' }));
    expect(answer.error).toMatchObject({ code: -32602, data: errorData({ field: 'message.contextId' }) });
    expect((await call(plane, 'runs.get', { runId: taskId })).status).toBe('suspended');
  });

  it('a bad value is refused naming the rule: two parts, a non-object data part, a url part, a value the journal cannot hold', async () => {
    const { plane, endpoint } = await served({ extraRules: [DELIVER_INPUT] });
    const taskId = await waitingTask(endpoint, plane, 'ask', { question: 'q' });
    const twoParts = await rpc(endpoint, 'ask', { message: { messageId: 'two', role: 'ROLE_USER', taskId, parts: [{ text: 'a' }, { text: 'b' }] } });
    expect(twoParts.error).toMatchObject({ code: -32602, message: expect.stringMatching(/exactly one part/), data: errorData({ field: 'message.parts' }) });
    const list = await rpc(endpoint, 'ask', answerTo(taskId, { data: [1, 2] }));
    expect(list.error).toMatchObject({ code: -32602, data: errorData({ field: 'message.parts[0].data' }) });
    const url = await rpc(endpoint, 'ask', answerTo(taskId, { url: 'https://example.com/a.txt' }));
    expect(url.error).toMatchObject({ code: -32005 });
    // 1e17 is an integer beyond 2^53: canonical JSON (the journal's hashing) refuses it.
    const unsafe = await rpc(endpoint, 'ask', answerTo(taskId, { data: { n: 1e17 } }));
    expect(unsafe.error).toMatchObject({ code: -32602, message: expect.stringMatching(/cannot be journaled: cannot canonicalize input\.n.*still waits/) });
    expect((await call(plane, 'runs.get', { runId: taskId })).status).toBe('suspended');
    expect(await decisionsOf(plane, taskId)).toEqual([]);
    // Still answerable afterwards.
    const ok = await rpc(endpoint, 'ask', answerTo(taskId, { text: 'fine' }));
    expect((ok.result?.task as { status: { state: string } }).status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('a task that is working, not waiting for input, is refused naming its state', async () => {
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const dir = tempDir();
    const { plane, endpoint } = await served({ extraRules: [DELIVER_INPUT], provider: countingProvider(join(dir, 'calls'), () => gate) });
    cleanups.push(() => release());
    const started = await rpc(endpoint, 'slow-ask', { message: { messageId: 'slow', role: 'ROLE_USER', parts: [{ data: {} }] }, configuration: { returnImmediately: true } });
    const taskId = (started.result?.task as { id: string }).id;
    const early = await rpc(endpoint, 'slow-ask', answerTo(taskId, { text: 'too soon' }));
    expect(early.error).toMatchObject({ code: -32004, message: expect.stringMatching(/is TASK_STATE_WORKING, not waiting for input/), data: errorData({ state: 'TASK_STATE_WORKING' }) });
    release();
    await expect.poll(async () => (await call(plane, 'runs.get', { runId: taskId })).status, { timeout: 10_000 }).toBe('suspended');
    expect(await decisionsOf(plane, taskId)).toEqual([]);
  });
});
