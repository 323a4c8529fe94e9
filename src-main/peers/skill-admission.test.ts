/**
 * The one door into a peer (skill-admission.ts), against a real peer on a loopback port: a
 * skill call over MCPv2 (`POST /mcpv2`) and one over MCP (`/mcp`, the official SDK client) are
 * admitted through the same door, so an oversized argument is refused by both with the one
 * check's words and admits nothing, and an ordinary call is a skill run on either surface.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Mcpv2Error } from '../../src-shared/protocol/mcpv2';
import { readMcpAddress } from '../plane/mcp-address';
import { startTestPeer, type TestPeer } from '../../tests/support/peer-support';
import { argumentsRefusal } from './skill-admission';

let testPeer: TestPeer;
let client: Client;

beforeAll(async () => {
  testPeer = await startTestPeer('door', { secret: 'skill-admission-secret', ratePerSecond: 10_000 });
  const { peer, dataDir } = testPeer;
  client = new Client({ name: 'skill-admission-test', version: '1.0.0' });
  const token = readMcpAddress(dataDir)!.token;
  await client.connect(new StreamableHTTPClientTransport(new URL(peer.mcpUrl!), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
});
afterAll(async () => {
  await client?.close();
  await testPeer?.close();
});

async function overMcpv2(name: string, args: Record<string, unknown>): Promise<{ result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const { peer } = testPeer;
  const response = await peer.app.inject({
    method: 'POST',
    url: '/mcpv2',
    headers: { host: `127.0.0.1:${peer.port}`, authorization: `Bearer ${testPeer.session()}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  return JSON.parse(response.body) as never;
}

async function overMcp(name: string, args: Record<string, unknown>): Promise<unknown> {
  return client.callTool({ name, arguments: args }).catch((error: unknown) => error);
}

describe("a peer's one admission door", () => {
  it('refuses the same oversized argument over MCPv2 and MCP with the one check\'s words, and admits nothing', async () => {
    const { peer } = testPeer;
    const args = { query: 'y'.repeat(2_000_000) };
    const refusal = argumentsRefusal('ask', args);
    expect(refusal).toMatch(/^input for skill:ask is too large: input\.query is 2\.0 MB; the cap is 1 MB$/);
    const runsBefore = (await peer.runtime.listRuns(1000)).length;

    const v2 = await overMcpv2('ask', args);
    expect(v2.error).toEqual({ code: Mcpv2Error.InvalidParams, message: `invalid params: ${refusal}` });

    const mcp = await overMcp('ask', args);
    expect(mcp).toBeInstanceOf(ProtocolError);
    expect((mcp as ProtocolError).code).toBe(-32602);
    expect((mcp as ProtocolError).message).toContain(`Invalid params: ${refusal}`);

    expect(await peer.runtime.listRuns(1000)).toHaveLength(runsBefore);
  });

  it('admits an ordinary call as a skill run on either surface, each with its own trigger', async () => {
    const { peer } = testPeer;
    const v2 = await overMcpv2('ping', {});
    expect(v2.result).toMatchObject({ pong: true, peer: 'door' });
    const mcp = await overMcp('ping', {});
    expect((mcp as { structuredContent: Record<string, unknown> }).structuredContent).toMatchObject({ outcome: 'succeeded', result: { pong: true, peer: 'door' } });

    const pings = (await peer.runtime.listRuns(1000)).filter((run) => run.agent === 'skill:ping');
    expect(pings).toHaveLength(2);
    const admitted = await Promise.all(pings.map(async (run) => (await peer.journal.readRun(run.runId, 1, 1))[0]?.body as { trigger: { via: string }; chain: string[] }));
    expect(admitted.map((body) => body.trigger.via).sort()).toEqual(['mcp', 'peer']);
    expect(admitted.every((body) => body.chain.length === 1)).toBe(true);
  });
});
