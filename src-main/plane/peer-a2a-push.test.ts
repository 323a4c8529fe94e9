/**
 * A2A push notifications on a peer's own port (plane/peer-a2a.ts over a2a-push-wiring.ts), end to
 * end in one process: a real peer (startPeer) on 127.0.0.1, @a2a-js/sdk 1.3's client setting
 * configs with the data dir's MCP token, and a real HTTP receiver on loopback whose exact origin a
 * person allowed (net-allow.json, written as `agentplane net allow` writes it, while the peer
 * runs). The peer is stopped and started again while its run waits for a payment approval, which
 * a person then gives at the plane (another journal connection on the same data dir, as the plane
 * process is): the receiver must end with every event once by id, none lost.
 */
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SendMessageRequest, TaskPushNotificationConfig, verifyAgentCardSignature } from '@a2a-js/sdk';
import { call, testPlane } from '../../tests/support/runtime-support';
import { capturingLogger, pushReceivers, type PushReceived } from '../../tests/doubles/push-receiver';
import { sdkA2aClient } from '../../tests/doubles/sdk-a2a-client';
import { errorData } from '../../tests/support/a2a-support';
import { useTempFolders } from '../../tests/helpers/temp-folders';
import type { Logger } from '../base/logger';
import { loadPlaneKey } from '../journal/plane-key';
import { createLocalProvider } from '../providers/local-provider';
import { PeerRegistry, type PeerRecord } from '../peers/peer-registry';
import { verifyAgentCard } from '../protocols/a2a/card-signature';
import { pushStorePath } from '../protocols/a2a/push-store';
import { startPlaneA2aEndpoint } from './a2a-endpoint';
import { readMcpAddress } from './mcp-address';
import { NetAllowStore } from './net-allow';
import { settingsFromEnv, startPeer, type StartedPeer } from './peer-host';

const tempDir = useTempFolders('agentplane-peer-a2a-push-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
const receiver = pushReceivers(cleanups);


const PEER_ID = 'push-peer';

function peerRecord(dataDir: string): PeerRecord {
  const skillsFile = join(dataDir, 'skills.json');
  writeFileSync(
    skillsFile,
    JSON.stringify({
      skills: [{ name: 'note', description: 'takes a note', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, response: { noted: true } }],
    }),
  );
  return new PeerRegistry(dataDir).create({ id: PEER_ID, port: 0, publicIp: '127.0.0.1', secret: 'peer-push-secret', llmMode: false, customSkills: skillsFile });
}

/** Starts the peer; `close` is idempotent (a test stops it mid-way, the cleanup again). */
async function openPeer(dataDir: string, record: PeerRecord, logger: Logger = capturingLogger()): Promise<StartedPeer> {
  const peer = await startPeer({ dataDir, record, settings: settingsFromEnv({}), logger, providers: new Map([['local', createLocalProvider()]]), a2aBlockMs: 10_000 });
  cleanups.push(() => peer.close());
  return peer;
}

async function rpc(url: string, skill: string, token: string, method: string, params: unknown) {
  const response = await fetch(`${url}a2a/${skill}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, 'A2A-Version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: Record<string, unknown> } };
}

let messageCount = 0;
function send(part: Record<string, unknown>, configuration?: Record<string, unknown>) {
  return SendMessageRequest.fromJSON({ message: { messageId: `pp-${++messageCount}`, role: 'ROLE_USER', parts: [part] }, ...(configuration ? { configuration } : {}) });
}

const payment = { amount: 5, currency: 'EUR', payee: 'acme' };
const stateOf = (r: PushReceived) => (r.body.statusUpdate?.status as { state?: string } | undefined)?.state ?? (r.body.artifactUpdate ? 'ARTIFACT' : '?');
const storedConfigs = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { configs: Array<{ taskId: string; id: string; cursor: { sentKey: string; done: boolean } }> }).configs;
/**
 * The events as a receiver that drops ids it has seen keeps them: the guarantee is at-least-once
 * with a stable id, and a POST the receiver answered but whose cursor write a stop cut short is
 * sent again, under the same id.
 */
const firstById = (got: PushReceived[]) => [...new Map(got.map((r) => [r.eventId, r] as const).reverse()).values()].reverse();

describe("A2A push notifications on a peer's own port", () => {
  it('cards say pushNotifications: true, in the signed payload, and verify with the data dir key', async () => {
    const dataDir = tempDir();
    const peer = await openPeer(dataDir, peerRecord(dataDir));
    const key = await loadPlaneKey(dataDir);
    for (const path of ['.well-known/agent-card.json', 'a2a/pay/.well-known/agent-card.json', 'a2a/note/.well-known/agent-card.json']) {
      const card = (await (await fetch(`${peer.a2aUrl!}${path}`)).json()) as { capabilities: Record<string, unknown> };
      expect(card.capabilities, path).toMatchObject({ pushNotifications: true, streaming: true });
      expect(await verifyAgentCard(card as never, key.publicJwk), path).toMatchObject({ ok: true, keyId: key.keyId });
      await expect(verifyAgentCardSignature(async () => key.publicKey)(card as never)).resolves.toBeUndefined();
      // The capability is signed: turning it off breaks the signature.
      const tampered = { ...card, capabilities: { ...card.capabilities, pushNotifications: false } };
      expect(await verifyAgentCard(tampered as never, key.publicJwk), path).toMatchObject({ ok: false });
    }
  });

  it('delivers every state of a peer task once by event id, across a peer stop and start while the run waits for approval', async () => {
    const dataDir = tempDir();
    const record = peerRecord(dataDir);
    const target = await receiver({ failFirst: 1 });
    const logger = capturingLogger();
    const first = await openPeer(dataDir, record, logger);
    const token = readMcpAddress(dataDir)!.token;
    // The person allows the receiver while the peer runs (the file the plane's `net allow` writes):
    // the peer's netguard reads the list live, so the grant holds here without a restart.
    new NetAllowStore(dataDir).add(target.origin);

    const client = await sdkA2aClient(first.a2aUrl!, 'pay', token);
    const task = (await client.sendMessage(send({ data: payment }, { returnImmediately: true }))) as { id: string };
    const set = await client.createTaskPushNotificationConfig(TaskPushNotificationConfig.fromJSON({ taskId: task.id, id: 'hook-1', url: target.url, token: 'receiver-token' }));
    expect(set).toMatchObject({ id: 'hook-1', taskId: task.id, url: target.url, token: 'receiver-token' });
    // The first POST is answered 503: retried with the same event id, delivered once.
    await expect.poll(() => target.got.map(stateOf), { timeout: 10_000 }).toEqual(['TASK_STATE_INPUT_REQUIRED']);
    expect(target.hits()).toBe(2);
    expect(target.got[0]).toMatchObject({ token: 'receiver-token', eventId: expect.stringMatching(new RegExp(`^${task.id}:\\d+:status$`)) });
    // The peer's own store, in its own folder, 0600; the plane's file is not touched.
    const peerFile = pushStorePath(join(dataDir, 'peers', PEER_ID));
    expect(statSync(peerFile).mode & 0o777).toBe(0o600);
    expect(storedConfigs(peerFile)).toMatchObject([{ taskId: task.id, id: 'hook-1' }]);
    expect(existsSync(pushStorePath(dataDir))).toBe(false);
    // The cursor is written after the 2xx; once it is, a restart must send nothing for that state.
    await expect.poll(() => storedConfigs(peerFile)[0]?.cursor.sentKey, { timeout: 5_000 }).not.toBe('');

    // Stop the peer mid-run and start it again on the same data dir (a new port).
    await first.close();
    const second = await openPeer(dataDir, record, logger);
    expect(second.a2aUrl).not.toBe(first.a2aUrl);
    expect((await second.runtime.history(task.id)).status).toBe('suspended');
    // Nothing re-sent by the new process for a state the receiver already has.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.hits()).toBe(2);

    // A person approves at the plane: the peer's runtime follows the decision from the journal.
    const plane = await testPlane({ dataDir });
    cleanups.push(() => plane.close());
    const run = await call(plane, 'runs.get', { runId: task.id });
    await call(plane, 'approvals.decide', { runId: task.id, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    await expect.poll(() => target.got.map(stateOf).at(-1), { timeout: 15_000 }).toBe('TASK_STATE_COMPLETED');
    const events = firstById(target.got);
    const states = events.map(stateOf);
    expect(states[0]).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(states.slice(-2)).toEqual(['ARTIFACT', 'TASK_STATE_COMPLETED']);
    // Between them at most the WORKING the run passed through (a state shorter than one read may coalesce).
    expect(states.slice(1, -2).every((state) => state === 'TASK_STATE_WORKING')).toBe(true);
    expect(events.at(-2)!.body.artifactUpdate).toMatchObject({ taskId: task.id, artifact: { artifactId: `${task.id}-output` } });
    expect(events.every((r) => r.eventId.startsWith(`${task.id}:`))).toBe(true);
    // Nothing lost or doubled by the stop: each state once, in journal order.
    const seqs = events.map((r) => Number(r.eventId.split(':')[1]));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    // The receiver's token never reaches the log.
    expect(logger.lines.join('\n')).not.toContain('receiver-token');

    // Terminal, and its cursor written: nothing more, even after another restart.
    await expect.poll(() => storedConfigs(peerFile)[0]?.cursor.done, { timeout: 5_000 }).toBe(true);
    const count = target.hits();
    await second.close();
    await openPeer(dataDir, record, logger);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.hits()).toBe(count);
  });

  it('refuses a loopback receiver without an allow entry, naming why, and admits no run for a SendMessage carrying one', async () => {
    const dataDir = tempDir();
    const peer = await openPeer(dataDir, peerRecord(dataDir));
    const token = readMcpAddress(dataDir)!.token;
    const target = await receiver();
    const client = await sdkA2aClient(peer.a2aUrl!, 'pay', token);
    const task = (await client.sendMessage(send({ data: payment }, { returnImmediately: true }))) as { id: string };
    const url = peer.a2aUrl!;

    const notAllowed = await rpc(url, 'pay', token, 'CreateTaskPushNotificationConfig', { taskId: task.id, url: target.url });
    expect(notAllowed.error).toMatchObject({ code: -32602, data: errorData({ field: 'url' }) });
    expect(notAllowed.error!.message).toContain(`${target.origin} is not a granted push receiver: its exact origin is not on the outbound allow list`);
    expect(notAllowed.error!.message).toContain(`agentplane net allow ${target.origin}`);
    // https does not help: every receiver's exact origin needs a person's grant.
    const loopbackHttps = await rpc(url, 'pay', token, 'CreateTaskPushNotificationConfig', { taskId: task.id, url: 'https://127.0.0.1:9/hook' });
    expect(loopbackHttps.error).toMatchObject({ code: -32602, message: expect.stringMatching(/https:\/\/127\.0\.0\.1:9 is not a granted push receiver/) });
    const publicHttps = await rpc(url, 'pay', token, 'CreateTaskPushNotificationConfig', { taskId: task.id, url: 'https://hooks.example.com/a2a' });
    expect(publicHttps.error).toMatchObject({ code: -32602, message: expect.stringMatching(/https:\/\/hooks\.example\.com is not a granted push receiver/) });
    const before = (await peer.runtime.listRuns(100)).length;
    const refusedSend = await rpc(url, 'pay', token, 'SendMessage', { message: { messageId: 'x1', role: 'ROLE_USER', parts: [{ data: payment }] }, configuration: { taskPushNotificationConfig: { url: target.url } } });
    expect(refusedSend.error).toMatchObject({ code: -32602, data: errorData({ field: 'configuration.taskPushNotificationConfig.url' }) });
    expect(await peer.runtime.listRuns(100)).toHaveLength(before);
    expect(existsSync(pushStorePath(join(dataDir, 'peers', PEER_ID)))).toBe(false);
    expect(target.hits()).toBe(0);

    // Granted, then withdrawn by the person while the peer runs: each holds at once.
    const allow = new NetAllowStore(dataDir);
    allow.add(target.origin);
    expect((await rpc(url, 'pay', token, 'CreateTaskPushNotificationConfig', { taskId: task.id, id: 'ok', url: target.url })).result).toMatchObject({ id: 'ok' });
    // Delivered, and its cursor written, before the grant goes (and before the test stops the peer).
    await expect.poll(() => storedConfigs(pushStorePath(join(dataDir, 'peers', PEER_ID)))[0]?.cursor.sentKey, { timeout: 5_000 }).not.toBe('');
    expect(target.got.map(stateOf)).toEqual(['TASK_STATE_INPUT_REQUIRED']);
    allow.remove(target.origin);
    const withdrawn = await rpc(url, 'pay', token, 'CreateTaskPushNotificationConfig', { taskId: task.id, id: 'again', url: target.url });
    expect(withdrawn.error).toMatchObject({ code: -32602, message: expect.stringContaining('not on the outbound allow list') });
  });

  it('stopping the peer stops its worker: a failing receiver is not retried after close', async () => {
    const dataDir = tempDir();
    const record = peerRecord(dataDir);
    const target = await receiver({ failFirst: 1000 });
    const peer = await openPeer(dataDir, record);
    const token = readMcpAddress(dataDir)!.token;
    new NetAllowStore(dataDir).add(target.origin);
    const client = await sdkA2aClient(peer.a2aUrl!, 'pay', token);
    await client.sendMessage(send({ data: payment }, { returnImmediately: true, taskPushNotificationConfig: { url: target.url } }));
    await expect.poll(() => target.hits(), { timeout: 5_000 }).toBeGreaterThan(0);
    await peer.close();
    const hits = target.hits();
    // The retries would come 250 ms, then 500 ms after a failure; none comes from a stopped peer.
    await new Promise((resolve) => setTimeout(resolve, 900));
    expect(target.hits()).toBe(hits);
  });

  it("the plane's store and a peer's are separate files, each holding only its own configs", async () => {
    const dataDir = tempDir();
    const record = peerRecord(dataDir);
    const target = await receiver();
    const plane = await testPlane({ dataDir });
    const endpoint = await startPlaneA2aEndpoint(plane, { port: 0, uiOrigin: null, logger: capturingLogger(), blockMs: 10_000 });
    cleanups.push(async () => {
      await endpoint.close();
      await plane.close();
    });
    const peer = await openPeer(dataDir, record);
    await call(plane, 'net.allow.add', { origin: target.origin });

    const peerClient = await sdkA2aClient(peer.a2aUrl!, 'note', readMcpAddress(dataDir)!.token);
    const peerTask = (await peerClient.sendMessage(send({ text: 'remember the milk' }, { taskPushNotificationConfig: { id: 'peer-hook', url: target.url } }))) as { id: string };
    const planeClient = await sdkA2aClient(endpoint.url, 'write-note', endpoint.token);
    const planeTask = (await planeClient.sendMessage(send({ data: { title: 'the user', topic: 'x' } }, { returnImmediately: true, taskPushNotificationConfig: { id: 'plane-hook', url: target.url } }))) as { id: string };

    const peerFile = pushStorePath(join(dataDir, 'peers', PEER_ID));
    const planeFile = pushStorePath(dataDir);
    expect(peerFile).not.toBe(planeFile);
    expect(storedConfigs(peerFile)).toEqual([expect.objectContaining({ taskId: peerTask.id, id: 'peer-hook' })]);
    expect(storedConfigs(planeFile)).toEqual([expect.objectContaining({ taskId: planeTask.id, id: 'plane-hook' })]);
    // Each delivers its own task's events; the peer's reaches its end.
    await expect.poll(() => target.got.filter((r) => r.eventId.startsWith(`${peerTask.id}:`)).map(stateOf).at(-1), { timeout: 10_000 }).toBe('TASK_STATE_COMPLETED');
    await expect.poll(() => target.got.some((r) => r.eventId.startsWith(`${planeTask.id}:`)), { timeout: 10_000 }).toBe(true);
    // A config of one is unknown to the other: the peer's task is not the plane's.
    const elsewhere = await rpc(endpoint.url, 'write-note', endpoint.token, 'GetTaskPushNotificationConfig', { taskId: peerTask.id, id: 'peer-hook' });
    // (No such config, or no such task for this endpoint: either way the peer's config is not the plane's.)
    expect([-32602, -32001]).toContain(elsewhere.error?.code);
    expect(elsewhere.result).toBeUndefined();
  });
});
