/**
 * A push receiver's sensitivity ceiling (docs/GOVERNED-RUNTIME.md, "Sensitivity"): a push sends a
 * task's states and output, so a task holding a value above the ceiling of `push:<origin>` sends
 * that receiver nothing. A config set on such a task is refused, naming the label and the
 * ceiling; one given with SendMessage (set before the run holds anything) is withheld at
 * delivery, said in the log, and the receiver gets no event; a receiver whose ceiling is high
 * enough gets every event. A real plane, its real A2A endpoint, real receivers on loopback.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SendMessageRequest, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { call, testPlane } from '../../../tests/support/runtime-support';
import { capturingLogger, pushReceivers, type PushReceived } from '../../../tests/doubles/push-receiver';
import { sdkA2aClient } from '../../../tests/doubles/sdk-a2a-client';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { startPlaneA2aEndpoint } from '../../plane/a2a-endpoint';

const tempDir = useTempFolders('agentplane-a2a-push-ceiling-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const receiver = pushReceivers(cleanups);

const stateOf = (r: PushReceived) => (r.body.statusUpdate?.status as { state?: string } | undefined)?.state ?? (r.body.artifactUpdate ? 'ARTIFACT' : '?');
let messages = 0;
const send = (data: unknown, configuration?: Record<string, unknown>) =>
  SendMessageRequest.fromJSON({ message: { messageId: `c-${++messages}`, role: 'ROLE_USER', parts: [{ data }] }, ...(configuration ? { configuration } : {}) });

/** A plane whose local model's answers are confidential and whose push receivers take `internal` at most, except `trusted`'s origin. */
async function open(trusted: string) {
  const dataDir = tempDir();
  writeFileSync(
    join(dataDir, 'sensitivity.json'),
    JSON.stringify({ destinations: { 'model:local': { result: 'confidential' }, 'push:*': { ceiling: 'internal' }, [`push:${trusted}`]: { ceiling: 'confidential' } } }),
  );
  const logger = capturingLogger();
  const plane = await testPlane({ dataDir });
  const endpoint = await startPlaneA2aEndpoint(plane, { port: 0, uiOrigin: 'http://127.0.0.1:5555', logger, blockMs: 15_000 });
  cleanups.push(async () => {
    await endpoint.close();
    await plane.close();
  });
  return { plane, endpoint, logger, client: await sdkA2aClient(endpoint.url, 'write-note', endpoint.token) };
}

describe('A2A push: the receiver’s sensitivity ceiling', () => {
  it('refuses a config on a task holding a value above the receiver’s ceiling, naming both; a receiver cleared for it gets every event', async () => {
    const low = await receiver();
    const high = await receiver();
    const { plane, client } = await open(high.origin);
    for (const target of [low, high]) await call(plane, 'net.allow.add', { origin: target.origin });
    const task = (await client.sendMessage(send({ title: 'ceiling', topic: 'x' }, { returnImmediately: true }))) as { id: string };
    // Waiting for approval, after the model's (confidential) draft.
    await expect.poll(async () => (await call(plane, 'runs.get', { runId: task.id })).status, { timeout: 15_000 }).toBe('suspended');

    const refused = await client.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({ taskId: task.id, id: 'low', url: low.url })).then(
      () => null,
      (error: Error) => error.message,
    );
    expect(refused).toMatch(new RegExp(`confidential value \\(the answer at step 0\\), above push:${low.origin.replace(/[.]/g, '\\.')}'s sensitivity ceiling internal`));

    await client.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({ taskId: task.id, id: 'high', url: high.url }));
    await expect.poll(() => high.got.map(stateOf), { timeout: 10_000 }).toEqual(['TASK_STATE_INPUT_REQUIRED']);
    expect(low.hits()).toBe(0);
  });

  it('withholds every event of a config given with SendMessage once its task holds a value above the ceiling, and says so in the log', async () => {
    const low = await receiver();
    const { plane, client, logger } = await open('http://127.0.0.1:1');
    await call(plane, 'net.allow.add', { origin: low.origin });
    const task = (await client.sendMessage(send({ title: 'withheld', topic: 'y' }, { returnImmediately: true, taskPushNotificationConfig: { url: low.url } }))) as { id: string };
    await expect.poll(() => logger.lines.find((l) => l.includes('a2a push: withheld')), { timeout: 15_000 }).toBeDefined();
    const line = logger.lines.find((l) => l.includes('a2a push: withheld'))!;
    expect(line).toContain(task.id);
    expect(line).toContain('above push:');
    // The run goes on (a person may still approve it); the receiver has heard nothing of it, and never will.
    const run = await call(plane, 'runs.get', { runId: task.id });
    await call(plane, 'approvals.decide', { runId: task.id, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    await expect.poll(async () => (await call(plane, 'runs.get', { runId: task.id })).status, { timeout: 15_000 }).toBe('sealed');
    // Only events a state the receiver could have been sent before the model answered (the task's first, `working`) may have gone out.
    expect(low.got.map(stateOf).filter((s) => s !== 'TASK_STATE_WORKING')).toEqual([]);
  });
});
