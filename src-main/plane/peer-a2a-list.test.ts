/**
 * ListTasks and contexts on a peer's own port (plane/peer-a2a.ts over peer-mcp.ts's door): the
 * door names its agents by skill while the runtime's runs are `skill:<name>`, and the journal is
 * shared with the plane, so the listing must read this peer's runs of that skill, and a context
 * opened here is joined here. @a2a-js/sdk 1.3's client against a real peer on 127.0.0.1.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ListTasksRequest, SendMessageRequest, TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { sdkA2aClient } from '../../tests/doubles/sdk-a2a-client';
import { useTempFolders } from '../../tests/helpers/temp-folders';
import { silentLogger } from '../base/logger';
import { createLocalProvider } from '../providers/local-provider';
import { PeerRegistry } from '../peers/peer-registry';
import { readMcpAddress } from './mcp-address';
import { settingsFromEnv, startPeer } from './peer-host';

const tempDir = useTempFolders('agentplane-peer-a2a-list-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function peerClient(): Promise<Client> {
  const dataDir = tempDir();
  const skillsFile = join(dataDir, 'skills.json');
  writeFileSync(
    skillsFile,
    JSON.stringify({ skills: [{ name: 'note', description: 'takes a note', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, response: { noted: true } }] }),
  );
  const record = new PeerRegistry(dataDir).create({ id: 'a2a-list-peer', port: 0, publicIp: '127.0.0.1', secret: 'peer-a2a-list-secret', llmMode: false, customSkills: skillsFile });
  const peer = await startPeer({ dataDir, record, settings: settingsFromEnv({}), logger: silentLogger, providers: new Map([['local', createLocalProvider()]]), a2aBlockMs: 10_000 });
  cleanups.push(() => peer.close());
  return sdkA2aClient(peer.a2aUrl!, 'note', readMcpAddress(dataDir)!.token);
}

let count = 0;
const send = (text: string, contextId?: string) =>
  SendMessageRequest.fromJSON({ message: { messageId: `pl-${++count}`, role: 'ROLE_USER', parts: [{ text }], ...(contextId ? { contextId } : {}) } });

describe("ListTasks and contexts on a peer's port", () => {
  it('lists the skill’s tasks with the exact total, and a context opened on the peer is joined and filtered there', async () => {
    const client = await peerClient();
    const first = (await client.sendMessage(send('first note'))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const second = (await client.sendMessage(send('second note, same context', first.id))) as Task;
    expect(second.contextId).toBe(first.id);
    const other = (await client.sendMessage(send('a note of its own'))) as Task;
    const all = await client.listTasks(ListTasksRequest.fromJSON({}));
    expect(all.tasks.map((t) => t.id)).toEqual([other.id, second.id, first.id]);
    expect(all.totalSize).toBe(3);
    const inContext = await client.listTasks(ListTasksRequest.fromJSON({ contextId: first.id }));
    expect(inContext.tasks.map((t) => t.id)).toEqual([second.id, first.id]);
    const completed = await client.listTasks(ListTasksRequest.fromJSON({ status: 'TASK_STATE_COMPLETED', pageSize: 2 }));
    expect(completed.totalSize).toBe(3);
    expect(completed.tasks).toHaveLength(2);
  });
});
