/**
 * A2A on a peer's own port (plane/peer-a2a.ts), end to end: a real peer (startPeer, a custom
 * skill) listening on 127.0.0.1, its cards fetched and verified, its JSON-RPC interface called by
 * @a2a-js/sdk 1.3's own client with the data dir's MCP token; raw fetch for the bad inputs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GetTaskRequest, SendMessageRequest, TaskState, verifyAgentCardSignature, type StreamResponse } from '@a2a-js/sdk';
import { sdkA2aClient } from '../../tests/doubles/sdk-a2a-client';
import { useTempFolders } from '../../tests/helpers/temp-folders';
import { silentLogger } from '../base/logger';
import { loadPlaneKey } from '../journal/plane-key';
import { createLocalProvider } from '../providers/local-provider';
import { PeerRegistry } from '../peers/peer-registry';
import { verifyAgentCard } from '../protocols/a2a/card-signature';
import { readMcpAddress } from './mcp-address';
import { settingsFromEnv, startPeer, type StartedPeer } from './peer-host';

const tempDir = useTempFolders('agentplane-peer-a2a-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function servedPeer(policy?: unknown): Promise<{ peer: StartedPeer; dataDir: string; token: string; url: string }> {
  const dataDir = tempDir();
  if (policy) writeFileSync(join(dataDir, 'policy.json'), JSON.stringify(policy));
  const skillsFile = join(dataDir, 'skills.json');
  writeFileSync(
    skillsFile,
    JSON.stringify({
      skills: [{ name: 'note', description: 'takes a note', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, response: { noted: true } }],
    }),
  );
  const registry = new PeerRegistry(dataDir);
  const record = registry.create({ id: 'a2a-peer', port: 0, publicIp: '127.0.0.1', secret: 'peer-a2a-secret', llmMode: false, customSkills: skillsFile });
  const peer = await startPeer({ dataDir, record, settings: settingsFromEnv({}), logger: silentLogger, providers: new Map([['local', createLocalProvider()]]), a2aBlockMs: 10_000 });
  cleanups.push(() => peer.close());
  return { peer, dataDir, token: readMcpAddress(dataDir)!.token, url: peer.a2aUrl! };
}

describe("A2A on a peer's own port (@a2a-js/sdk client)", () => {
  it('serves the directory card and a card per skill, signed with the data dir key, readable without the token', async () => {
    const { dataDir, url, peer } = await servedPeer();
    expect(url).toBe(`http://127.0.0.1:${peer.port}/`);
    const card = (await (await fetch(`${url}a2a/note/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
    expect(card).toMatchObject({ name: 'note', supportedInterfaces: [{ url: `${url}a2a/note`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], skills: [{ id: 'note' }] });
    const key = await loadPlaneKey(dataDir);
    expect(await verifyAgentCard(card, key.publicJwk)).toMatchObject({ ok: true, keyId: key.keyId });
    await expect(verifyAgentCardSignature(async () => key.publicKey)(card as never)).resolves.toBeUndefined();
    // The well-known card is one skill's own (the first by name), listing every skill in its directory extension.
    const directory = (await (await fetch(`${url}.well-known/agent-card.json`)).json()) as { skills: Array<{ id: string }>; capabilities: { extensions: Array<{ params: { agents: Array<{ name: string }> } }> } };
    expect(directory.skills).toHaveLength(1);
    expect(directory.capabilities.extensions[0]!.params.agents.map((a) => a.name)).toContain('note');
    expect(await verifyAgentCard(directory as never, key.publicJwk)).toMatchObject({ ok: true });
    expect((await fetch(`${url}a2a/nobody/.well-known/agent-card.json`)).status).toBe(404);
  });

  it('SendMessage (text part) runs the skill in the peer runtime for a2a:local and completes with its output; GetTask reads it', async () => {
    const { peer, url, token } = await servedPeer();
    const client = await sdkA2aClient(url, 'note', token);
    const task = (await client.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: 'p-1', role: 'ROLE_USER', parts: [{ text: 'remember the milk' }] } }))) as { id: string; status: { state: number }; artifacts: Array<{ parts: Array<{ content: { $case: string; value: unknown } }> }> };
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts[0]?.parts[0]?.content).toMatchObject({ $case: 'data', value: { noted: true } });
    const history = await peer.runtime.history(task.id);
    expect(history.host).toBe('peer:a2a-peer');
    expect(history.owner).toBe('a2a:local');
    // The run says it came over A2A (not MCP, whose door this one shares).
    const [admitted] = await peer.journal.readRun(task.id, 1, 1);
    expect(admitted?.body).toMatchObject({ trigger: { via: 'a2a', by: 'a2a:local' } });
    const again = await client.getTask(GetTaskRequest.fromJSON({ id: task.id }));
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // Streaming goes through the same hijacked route: the task, the artifact, the final status.
    const events: StreamResponse[] = [];
    for await (const event of client.sendMessageStream(SendMessageRequest.fromJSON({ message: { messageId: 'p-2', role: 'ROLE_USER', parts: [{ data: { text: 'and the bread' } }] } }))) events.push(event as StreamResponse);
    const last = events.at(-1)?.payload;
    expect(last?.$case).toBe('statusUpdate');
    expect(last?.$case === 'statusUpdate' ? last.value.status?.state : undefined).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(events.map((e) => e.payload?.$case)).toContain('artifactUpdate');
  });

  it('refuses a bad token (401), a missing A2A-Version (-32009) and an unknown skill, each naming why', async () => {
    const { url, token } = await servedPeer();
    const post = (headers: Record<string, string>, path = 'a2a/note') =>
      fetch(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'run-00000000000000000000' } }) });
    const unauthorized = await post({ Authorization: 'Bearer not-the-token', 'A2A-Version': '1.0' });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('www-authenticate')).toBe('Bearer');
    const noVersion = (await (await post({ Authorization: `Bearer ${token}` })).json()) as { error: { code: number } };
    expect(noVersion.error.code).toBe(-32009);
    const unknown = (await (await post({ Authorization: `Bearer ${token}`, 'A2A-Version': '1.0' }, 'a2a/nobody')).json()) as { error: { code: number; message: string } };
    expect(unknown.error.message).toContain('nobody');
    // The peer's root hooks still hold for these routes: a browser Origin is refused.
    expect((await fetch(`${url}.well-known/agent-card.json`, { headers: { Origin: 'http://evil.example' } })).status).toBe(403);
  });

  it('answers the interface URL joined with a slash as the URL itself, and a card with an ETag a client can revalidate', async () => {
    const { url, token } = await servedPeer();
    const post = (path: string) =>
      fetch(`${url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}`, 'A2A-Version': '1.0' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'run-00000000000000000000' } }) });
    const bare = (await (await post('a2a/note')).json()) as unknown;
    expect(await (await post('a2a/note/')).json()).toEqual(bare);
    expect(bare).toMatchObject({ error: { code: -32001, data: [{ reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' }] } });
    const card = await fetch(`${url}a2a/note/.well-known/agent-card.json`);
    const etag = card.headers.get('etag');
    expect(etag).toMatch(/^"sha256-/);
    expect((await fetch(`${url}a2a/note/.well-known/agent-card.json`, { headers: { 'If-None-Match': etag! } })).status).toBe(304);
    const missing = await fetch(`${url}a2a/.well-known/agent-card.json`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringMatching(/names no agent/) } });
  });

  it("a peer whose policy does not grant a2a:local its skills declines with a Message, and admits no run", async () => {
    const { peer, url, token } = await servedPeer({ rules: [{ effect: 'allow', principal: 'mcp:local', action: 'mcpv2:skill.call', resource: 'skill:*' }], authority: {} });
    const client = await sdkA2aClient(url, 'note', token);
    const answer = (await client.sendMessage(SendMessageRequest.fromJSON({ message: { messageId: 'p-3', role: 'ROLE_USER', parts: [{ text: 'x' }] } }))) as { messageId?: string; status?: unknown };
    expect(answer.status).toBeUndefined();
    expect(answer.messageId).toMatch(/^declined-/);
    expect(await peer.runtime.listRuns(10)).toHaveLength(0);
  });
});
