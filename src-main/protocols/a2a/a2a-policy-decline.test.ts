/**
 * A request the plane's policy declines is answered as a Message (the agent declines), not as a
 * JSON-RPC error (docs/GOVERNED-RUNTIME.md, "A2A, being called"): an error reads as a fault or an
 * inability and a caller retries a decision that will not change. A real plane whose policy lets
 * a2a:local start only `summarize`, the real endpoint on 127.0.0.1, and @a2a-js/sdk 1.3's client
 * against it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SendMessageRequest, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { call, testPlane } from '../../../tests/support/runtime-support';
import { sdkA2aClient } from '../../../tests/doubles/sdk-a2a-client';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { startPlaneA2aEndpoint, type PlaneA2aEndpoint } from '../../plane/a2a-endpoint';
import { silentLogger } from '../../base/logger';
import { PolicyEngine } from '../../runtime/policy';

const tempDir = useTempFolders('agentplane-a2a-decline-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function served() {
  const policy = PolicyEngine.parse({ rules: [{ effect: 'allow', principal: 'a2a:local', action: 'runtime:run.start', resource: 'agent:summarize' }] }, 'test');
  const plane = await testPlane({ dataDir: tempDir(), policy });
  cleanups.push(() => plane.close());
  const endpoint = await startPlaneA2aEndpoint(plane, { port: 0, uiOrigin: 'http://127.0.0.1:5555', logger: silentLogger, blockMs: 15_000 });
  cleanups.push(() => endpoint.close());
  return { plane, endpoint };
}

const clientFor = (endpoint: PlaneA2aEndpoint, agent: string): Promise<Client> => sdkA2aClient(endpoint.url, agent, endpoint.token);

// No contextId: one the caller did not open is refused before the gate (a2a-list-context.test.ts).
const note = SendMessageRequest.fromJSON({ message: { messageId: 'm-decline-1', role: 'ROLE_USER', parts: [{ data: { title: 'the user', topic: 'x' } }] } });

describe('a policy decline over A2A', () => {
  it('SendMessage answers a Message from the agent saying it declines, names no rule, and admits no run', async () => {
    const { plane, endpoint } = await served();
    const client = await clientFor(endpoint, 'write-note');
    const answer = (await client.sendMessage(note)) as { messageId?: string; role?: number; contextId?: string; parts?: Array<{ content: { $case: string; value: unknown } }>; status?: unknown };
    // A Message, not a Task: no status, an agent role, one text part.
    expect(answer.status).toBeUndefined();
    expect(answer.messageId).toMatch(/^declined-/);
    // Nothing was admitted, so no context was opened for it to name.
    expect(answer.contextId).toBe('');
    const text = answer.parts?.[0]?.content.value as string;
    expect(answer.parts?.[0]?.content.$case).toBe('text');
    expect(text).toContain('write-note declines');
    // The decline says only that it was declined: not the action or resource the gate keyed on.
    expect(text).not.toMatch(/runtime:|agent:write-note|rule/);
    expect((await call(plane, 'runs.list', { limit: 10 })).runs).toHaveLength(0);

    // Raw wire: HTTP 200 with a result holding `message`, never a JSON-RPC error.
    const raw = await fetch(`${endpoint.url}a2a/write-note`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${endpoint.token}`, 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message: { messageId: 'm-2', role: 'ROLE_USER', parts: [{ data: { title: 't', topic: 'x' } }] } } }),
    });
    const body = (await raw.json()) as { result?: { message?: { role?: string; metadata?: Record<string, unknown> } }; error?: unknown };
    expect(raw.status).toBe(200);
    expect(body.error).toBeUndefined();
    expect(body.result?.message).toMatchObject({ role: 'ROLE_AGENT', metadata: { 'io.agentplane.a2a/declined': true } });
  });

  it('SendStreamingMessage streams the decline as its one Message; an allowed agent still runs', async () => {
    const { endpoint } = await served();
    const client = await clientFor(endpoint, 'write-note');
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(note)) events.push(event as StreamResponse);
    expect(events).toHaveLength(1);
    expect(JSON.stringify(events[0])).toContain('declines');

    // The policy's allow still holds: the decline is the policy's answer, not a broken door.
    const allowed = await clientFor(endpoint, 'summarize');
    const task = (await allowed.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: 'm-ok', role: 'ROLE_USER', parts: [{ text: 'short text' }] } }))) as { id?: string };
    expect(task.id).toMatch(/^run-/);
  });
});
