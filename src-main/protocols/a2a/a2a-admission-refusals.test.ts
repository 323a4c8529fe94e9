/**
 * Admission's three refusals over A2A (docs/GOVERNED-RUNTIME.md, "A2A, being called"): a full
 * quota of open tasks (-32029), a halt (-32030), a plane shutting down (-32031), each with an
 * ErrorInfo in this plane's domain and one fixed sentence, never -32603. A real plane, the real
 * endpoint on 127.0.0.1, and @a2a-js/sdk 1.3's client beside raw JSON-RPC.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SendMessageRequest } from '@a2a-js/sdk';
import { agent, call, failure, testPlane } from '../../../tests/support/runtime-support';
import { sdkA2aClient } from '../../../tests/doubles/sdk-a2a-client';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { startPlaneA2aEndpoint, type PlaneA2aEndpoint } from '../../plane/a2a-endpoint';
import { silentLogger } from '../../base/logger';
import { A2A_ERRORS, ERROR_INFO_TYPE, PLANE_ERROR_DOMAIN, PLANE_REFUSALS } from './a2a-wire';
import { maxOpenTasksOf } from './a2a-server';

const tempDir = useTempFolders('agentplane-a2a-refusals-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Waits for a person's input: a task that stays open until answered. */
const ask = agent({
  name: 'ask',
  input: { type: 'object', required: ['question'], properties: { question: { type: 'string' } } },
  steps: [{ as: 'answer', input: { prompt: '{{input.question}}' } }, { output: { answer: '{{steps.answer}}' } }],
  grants: [],
});

async function served(maxOpenTasks?: number) {
  const plane = await testPlane({ dataDir: tempDir(), agents: [ask] });
  cleanups.push(() => plane.close());
  const endpoint = await startPlaneA2aEndpoint(plane, { port: 0, uiOrigin: 'http://127.0.0.1:5555', logger: silentLogger, blockMs: 15_000, ...(maxOpenTasks !== undefined ? { maxOpenTasks } : {}) });
  cleanups.push(() => endpoint.close());
  return { plane, endpoint };
}

type RpcAnswer = { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } };

let count = 0;
async function sendMessage(endpoint: PlaneA2aEndpoint): Promise<RpcAnswer> {
  const response = await fetch(`${endpoint.url}a2a/ask`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${endpoint.token}`, 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: `m-${++count}`, role: 'ROLE_USER', parts: [{ data: { question: 'why?' } }] }, configuration: { returnImmediately: true } } }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as RpcAnswer;
}

/** The refusal's whole identity: its code, its ErrorInfo (this plane's domain, its reason, no metadata) and its fixed sentence. */
function expectRefusal(answer: RpcAnswer, kind: keyof typeof PLANE_REFUSALS, reason: string) {
  expect(answer.result).toBeUndefined();
  expect(answer.error).toEqual({ code: PLANE_REFUSALS[kind].code, message: PLANE_REFUSALS[kind].message, data: [{ '@type': ERROR_INFO_TYPE, reason, domain: PLANE_ERROR_DOMAIN, metadata: {} }] });
  // The outcome, not the internals: no counter, no operator reason, no instance name.
  expect(answer.error?.message).not.toMatch(/\d|maintenance|plane-7|\bask\b/);
}

describe('admission refusals over A2A', () => {
  it('a caller holding maxOpenTasks open tasks is refused with -32029 QUOTA_EXHAUSTED; once one ends, it is admitted again', async () => {
    const { plane, endpoint } = await served(1);
    const first = await sendMessage(endpoint);
    const taskId = (first.result?.task as { id: string }).id;
    expect(taskId).toMatch(/^run-/);
    await expect.poll(async () => (await call(plane, 'runs.get', { runId: taskId })).status).toBe('suspended');

    expectRefusal(await sendMessage(endpoint), 'quota', 'QUOTA_EXHAUSTED');
    expect(A2A_ERRORS.quotaExhausted).toBe(-32029);
    // Nothing was admitted for the refused message.
    expect((await call(plane, 'runs.list', { limit: 10 })).runs).toHaveLength(1);
    // The SDK client sees a JSON-RPC error too (not a task, not a decline).
    const client = await sdkA2aClient(endpoint.url, 'ask', endpoint.token);
    await expect(client.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: 'm-sdk', role: 'ROLE_USER', parts: [{ data: { question: 'x' } }] } }))).rejects.toThrow(/open tasks/);

    // The open task ends: the quota has room again.
    await call(plane, 'runs.cancel', { runId: taskId, reason: 'done with it' });
    await expect.poll(async () => (await call(plane, 'runs.get', { runId: taskId })).status).toBe('sealed');
    expect((await sendMessage(endpoint)).result?.task).toBeDefined();
  });

  it('a halted agent is refused with -32030 HALTED, not declined, and nothing says why it was halted', async () => {
    const { plane, endpoint } = await served();
    await call(plane, 'halts.apply', { scope: 'agent:ask', reason: 'maintenance on plane-7' });
    expectRefusal(await sendMessage(endpoint), 'halted', 'HALTED');
    expect((await call(plane, 'runs.list', { limit: 10 })).runs).toHaveLength(0);
    // Lifted, the same message is admitted.
    await call(plane, 'halts.lift', { scope: 'agent:ask' });
    expect((await sendMessage(endpoint)).result?.task).toBeDefined();
  });

  it('a plane shutting down refuses a new message with -32031 DRAINING', async () => {
    const { plane, endpoint } = await served();
    // The runtime stops admitting (what a plane's close does first); the endpoint still answers.
    await plane.runtime.close();
    expectRefusal(await sendMessage(endpoint), 'draining', 'DRAINING');
  });

  it("the runtime's answer carries the reason a door branches on: halted for a halt, draining for a close", async () => {
    const { plane } = await served();
    await call(plane, 'halts.apply', { scope: 'agent:ask' });
    expect(await failure(plane, 'runs.start', { agent: 'ask', input: { question: 'x' } })).toEqual({ code: 'AP_FORBIDDEN', message: 'the plane refused to start this run', reason: 'halted' });
    await plane.runtime.close();
    expect(await failure(plane, 'runs.start', { agent: 'ask', input: { question: 'x' } })).toMatchObject({ code: 'AP_UNAVAILABLE', reason: 'draining' });
  });

  it('maxOpenTasks must be a positive integer', () => {
    expect(maxOpenTasksOf(undefined)).toBe(32);
    expect(maxOpenTasksOf(1)).toBe(1);
    expect(() => maxOpenTasksOf(0)).toThrow(/maxOpenTasks must be a positive integer \(got 0\)/);
    expect(() => maxOpenTasksOf(1.5)).toThrow(/maxOpenTasks/);
  });
});
