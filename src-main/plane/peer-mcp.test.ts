/**
 * A peer's skills over MCP on the peer's own port (plane/peer-mcp.ts), inside one process: a real
 * peer (startPeer, the local model, a custom skill) listening on 127.0.0.1, its `/mcp` called
 * with the official SDK client in both revisions, and raw HTTP for what a client library would
 * not send (a foreign Host, an Origin, a wrong token).
 */
import { request as httpRequest } from 'node:http';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { useTempFolders, useUmask } from '../../tests/helpers/temp-folders';
import { silentLogger } from '../base/logger';
import { createLocalProvider } from '../providers/local-provider';
import { PeerRegistry } from '../peers/peer-registry';
import { describeSkills } from '../peers/skills';
import { loadOrCreateMcpToken, readMcpAddress } from './mcp-address';
import { startPlaneMcpEndpoint } from './mcp-endpoint';
import { settingsFromEnv, startPeer, type PeerSettings, type StartedPeer } from './peer-host';
import { testPlane } from '../../tests/support/runtime-support';

const tempDir = useTempFolders('agentplane-peer-mcp-');
useUmask(0o022);
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Era = 'modern' | 'legacy';

async function servedPeer(options: { settings?: Partial<PeerSettings>; policy?: unknown; dataDir?: string; bindHost?: string } = {}): Promise<{ peer: StartedPeer; dataDir: string; token: string }> {
  const dataDir = options.dataDir ?? tempDir();
  if (options.policy) writeFileSync(join(dataDir, 'policy.json'), JSON.stringify(options.policy));
  const skillsFile = join(dataDir, 'skills.json');
  writeFileSync(
    skillsFile,
    JSON.stringify({
      skills: [{ name: 'note', description: 'takes a note', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, response: { noted: true } }],
    }),
  );
  const registry = new PeerRegistry(dataDir);
  const record = registry.create({ id: 'mcp-peer', port: 0, publicIp: '127.0.0.1', secret: 'peer-mcp-secret', llmMode: false, customSkills: skillsFile, ...(options.bindHost ? { bindHost: options.bindHost } : {}) });
  const peer = await startPeer({
    dataDir,
    record,
    settings: { ...settingsFromEnv({}), ...options.settings },
    logger: silentLogger,
    providers: new Map([['local', createLocalProvider()]]),
  });
  cleanups.push(() => peer.close());
  return { peer, dataDir, token: readMcpAddress(dataDir)!.token };
}

async function connect(peer: StartedPeer, token: string | null, era: Era): Promise<Client> {
  const client = new Client({ name: 'peer-mcp-test', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {});
  const transport = new StreamableHTTPClientTransport(new URL(peer.mcpUrl!), token === null ? {} : { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

function structured(result: unknown): Record<string, unknown> {
  return (result as { structuredContent: Record<string, unknown> }).structuredContent;
}

/** Raw HTTP, for headers fetch will not let a caller set (Host). */
function rawPost(port: number, headers: Record<string, string>, body: unknown, path = '/mcp', address = '127.0.0.1'): Promise<{ status: number; headers: Record<string, unknown>; json: { error?: { code: number; message: string } } & Record<string, unknown> }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: address, port, path, method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(text), ...headers } },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (data += chunk));
        res.on('end', () => {
          let json = {};
          try {
            json = JSON.parse(data) as object;
          } catch {
            json = { raw: data };
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json });
        });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } };

async function skillRuns(peer: StartedPeer, skill: string) {
  return (await peer.runtime.listRuns(1000)).filter((run) => run.agent === `skill:${skill}`);
}

describe.each<Era>(['modern', 'legacy'])("a peer's skills over MCP (%s era)", (era) => {
  it('lists every skill as a tool, with its description and input schema', async () => {
    const { peer, token } = await servedPeer();
    expect(peer.mcpUrl).toBe(`http://127.0.0.1:${peer.port}/mcp`);
    const client = await connect(peer, token, era);
    expect(client.getNegotiatedProtocolVersion()).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
    const { tools } = await client.listTools();
    const skills = describeSkills({ custom: [{ name: 'note' } as never] });
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['ping', 'ask', 'pay', 'note']));
    expect(tools.map((t) => t.name).sort()).toEqual(skills.map((s) => s.name).sort());
    const ask = tools.find((t) => t.name === 'ask');
    const described = skills.find((s) => s.name === 'ask');
    expect(ask?.description).toBe(described?.description);
    expect(ask?.inputSchema).toEqual(described?.inputSchema);
    expect(tools.find((t) => t.name === 'note')?.inputSchema).toMatchObject({ required: ['text'] });
  });

  it("runs ping as a skill run in the peer's runtime, admitted for the MCP caller via mcp", async () => {
    const { peer, token } = await servedPeer();
    const client = await connect(peer, token, era);
    const result = await client.callTool({ name: 'ping', arguments: {} });
    expect(result.isError ?? false).toBe(false);
    const answer = structured(result);
    expect(answer).toMatchObject({ status: 'sealed', outcome: 'succeeded', result: { pong: true, peer: 'mcp-peer' } });
    const records = await peer.journal.readRun(String(answer.runId), 1, 100);
    expect(records[0]?.kind).toBe('RunAdmitted');
    expect(records[0]?.body).toMatchObject({
      agent: 'skill:ping',
      host: 'peer:mcp-peer',
      chain: ['mcp:local'],
      owner: 'mcp:local',
      inputProvenance: 'mcp:local',
      trigger: { via: 'mcp', by: 'mcp:local' },
      input: { arguments: {}, context: { conversation: 'mcp:local' } },
    });
    expect(records.at(-1)?.kind).toBe('RunSealed');
    // A custom skill runs the same way.
    const noted = await client.callTool({ name: 'note', arguments: { text: 'hello' } });
    expect(structured(noted)).toMatchObject({ outcome: 'succeeded', result: { noted: true } });
  });

  it('answers a bad argument with -32602 naming the field, and admits nothing', async () => {
    const { peer, token } = await servedPeer();
    const client = await connect(peer, token, era);
    const wrongType = await client.callTool({ name: 'ask', arguments: { query: 42 } }).catch((e: unknown) => e);
    expect(wrongType).toBeInstanceOf(ProtocolError);
    expect((wrongType as ProtocolError).code).toBe(-32602);
    expect((wrongType as ProtocolError).message).toMatch(/input\.query/);
    expect((wrongType as ProtocolError).data).toEqual({ field: 'query' });
    const extra = await client.callTool({ name: 'ping', arguments: { loud: true } }).catch((e: unknown) => e as ProtocolError);
    expect([(extra as ProtocolError).code, (extra as ProtocolError).data]).toEqual([-32602, { field: 'loud' }]);
    const custom = await client.callTool({ name: 'note', arguments: {} }).catch((e: unknown) => e as ProtocolError);
    expect([(custom as ProtocolError).code, (custom as ProtocolError).data]).toEqual([-32602, { field: 'text' }]);
    const base64 = await client.callTool({ name: 'upload_file', arguments: { filename: 'a.txt', content: '%%%', encoding: 'base64' } }).catch((e: unknown) => e as ProtocolError);
    expect([(base64 as ProtocolError).code, (base64 as ProtocolError).data]).toEqual([-32602, { field: 'content' }]);
    const unknown = await client.callTool({ name: 'nope', arguments: {} }).catch((e: unknown) => e as ProtocolError);
    expect((unknown as ProtocolError).code).toBe(-32602);
    expect(await peer.runtime.listRuns(100)).toHaveLength(0);
  });

  it('refuses a missing or wrong token with 401', async () => {
    const { peer } = await servedPeer();
    for (const token of [null, 'not-the-token']) {
      const error = await connect(peer, token, era).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(error?.message ?? '').toMatch(/401|Unauthorized/i);
    }
  });
});

describe("a peer's /mcp: who may call", () => {
  it("uses the data dir's MCP token, the one the plane's endpoint serves behind", async () => {
    const dataDir = tempDir();
    const { token } = await servedPeer({ dataDir });
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(loadOrCreateMcpToken(dataDir)).toBe(token);
    // The peer made the file (no port yet); the plane's endpoint takes the same token and adds its port.
    expect(readMcpAddress(dataDir)).toEqual({ token });
    const plane = await testPlane({ dataDir });
    cleanups.push(() => plane.close());
    const endpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger });
    cleanups.push(() => endpoint.close());
    expect(endpoint.token).toBe(token);
    expect(readMcpAddress(dataDir)).toEqual({ port: endpoint.port, token });
  });

  it('keeps an existing token, replaces a damaged file, and writes it for the owner alone', () => {
    const dataDir = tempDir();
    const made = loadOrCreateMcpToken(dataDir);
    expect(loadOrCreateMcpToken(dataDir)).toBe(made);
    expect(statSync(join(dataDir, 'mcp-address.json')).mode & 0o777).toBe(0o600);
    expect(readdirSync(dataDir)).toEqual(['mcp-address.json']);
    writeFileSync(join(dataDir, 'mcp-address.json'), '{"token": "short"}');
    const replaced = loadOrCreateMcpToken(dataDir);
    expect(replaced).not.toBe(made);
    expect(readMcpAddress(dataDir)).toEqual({ token: replaced });
  });

  it('refuses a foreign Host and any Origin with 403, a bad token with 401, and leaves the MCPv2 routes as they were', async () => {
    const { peer, token } = await servedPeer();
    const auth = { authorization: `Bearer ${token}` };
    const good = await rawPost(peer.port, { ...auth, host: `127.0.0.1:${peer.port}` }, initialize);
    expect(good.status).toBe(200);
    const foreignHost = await rawPost(peer.port, { ...auth, host: `evil.example:${peer.port}` }, initialize);
    expect(foreignHost.status).toBe(403);
    // The peer refuses every Origin, a loopback one too: a browser page never reaches its skills.
    for (const origin of ['http://evil.example', `http://127.0.0.1:${peer.port}`]) {
      expect((await rawPost(peer.port, { ...auth, host: `127.0.0.1:${peer.port}`, origin }, initialize)).status).toBe(403);
    }
    const wrong = await rawPost(peer.port, { authorization: 'Bearer nope', host: `127.0.0.1:${peer.port}` }, initialize);
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe(`Bearer resource_metadata="http://127.0.0.1:${peer.port}/.well-known/oauth-protected-resource/mcp"`);
    expect(JSON.stringify(wrong.json)).not.toContain(token);
    // MCPv2 is untouched: the plane's MCP token is no MCPv2 session, refused with MCPv2's own answer.
    const mcpv2 = await rawPost(peer.port, { ...auth, host: `127.0.0.1:${peer.port}` }, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, '/mcpv2');
    expect(mcpv2.status).toBe(401);
    expect(mcpv2.json.error?.message).toMatch(/^invalid session/);
  });

  // A peer may bind every interface for its MCPv2 callers; the plane's token still only works from this machine.
  const lanAddress = Object.values(networkInterfaces())
    .flat()
    .find((i) => i?.family === 'IPv4' && !i.internal)?.address;
  it.runIf(lanAddress !== undefined)('answers a caller from a non-loopback address with 403, even with the token and a loopback Host', async () => {
    const { peer, token } = await servedPeer({ bindHost: '0.0.0.0' });
    expect(peer.mcpUrl).toBe(`http://127.0.0.1:${peer.port}/mcp`);
    const headers = { authorization: `Bearer ${token}`, host: `127.0.0.1:${peer.port}` };
    const remote = await rawPost(peer.port, headers, initialize, '/mcp', lanAddress);
    expect(remote.status).toBe(403);
    expect(remote.json.error?.message).toMatch(/loopback/);
    expect((await rawPost(peer.port, headers, initialize)).status).toBe(200);
  });

  it("spends the peer's rate budgets, answering 429 with Retry-After", async () => {
    const { peer, token } = await servedPeer({ settings: { ratePerSecond: 1 } });
    const headers = { authorization: `Bearer ${token}`, host: `127.0.0.1:${peer.port}` };
    const first = await rawPost(peer.port, headers, initialize);
    expect(first.status).toBe(200);
    const second = await rawPost(peer.port, headers, { ...initialize, id: 2 });
    expect(second.status).toBe(429);
    expect(second.json.error).toMatchObject({ code: -32005 });
    expect(second.headers['retry-after']).toBe('1');
    // A request without the token is refused before it spends anything.
    expect((await rawPost(peer.port, { host: headers.host }, initialize)).status).toBe(401);
  });

  it('refuses a body nested deeper than the cap with -32602', async () => {
    const { peer, token } = await servedPeer();
    let deep: unknown = 'x';
    for (let i = 0; i < 100; i++) deep = { deep };
    const answer = await rawPost(peer.port, { authorization: `Bearer ${token}`, host: `127.0.0.1:${peer.port}` }, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'ping', arguments: { deep } } });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ id: 7, error: { code: -32602 } });
    expect(answer.json.error?.message).toMatch(/nests deeper than 64/);
  });
});

describe("a peer's /mcp: governance", () => {
  it('answers a skill that waits for a person (a payment) as an error naming the run, that it waits on this plane and where to approve', async () => {
    const { peer, token, dataDir } = await servedPeer();
    const client = await connect(peer, token, 'modern');
    const result = await client.callTool({ name: 'pay', arguments: { amount: 5, currency: 'EUR', payee: 'acme' } });
    // The call has no result to give, so it is an error of the call; the run is not failed.
    expect(result.isError).toBe(true);
    expect((result.content as Array<{ text: string }>)[0]?.text).toContain('is waiting on this plane for a person');
    const answer = structured(result);
    expect(answer).toMatchObject({ status: 'suspended', waitingFor: { reason: 'payment' } });
    expect(answer.approveWith).toBe(`agentplane approvals approve ${String(answer.runId)} --data-dir ${dataDir}`);
    expect((await skillRuns(peer, 'pay'))[0]?.status).toBe('suspended');
  });

  it('obeys a deny rule for the MCP caller: a tool error, journaled as a refusal', async () => {
    // A data dir's own policy.json replaces the bundled one: it states the allow, then narrows it.
    const policy = {
      rules: [
        { effect: 'allow', principal: 'mcp:local', action: 'mcpv2:skill.call', resource: 'skill:*' },
        { effect: 'deny', principal: 'mcp:local', action: 'mcpv2:skill.call', resource: 'skill:ask' },
      ],
    };
    const { peer, token } = await servedPeer({ policy });
    const client = await connect(peer, token, 'modern');
    const refused = await client.callTool({ name: 'ask', arguments: { query: 'hello?' } });
    expect(refused.isError).toBe(true);
    expect((refused.content as Array<{ text: string }>)[0]!.text).toMatch(/policy refused to start ask.*AP_FORBIDDEN/);
    const head = (await peer.journal.head()).seq;
    const refusals = (await peer.journal.readRange(1, head, 1000)).filter((r) => r.kind === 'AdmissionRefused');
    expect(refusals.at(-1)?.body).toMatchObject({ agent: 'skill:ask', principal: 'mcp:local', resource: 'skill:ask' });
    // Anything the rule does not name is still allowed.
    expect(structured(await client.callTool({ name: 'ping', arguments: {} }))).toMatchObject({ outcome: 'succeeded' });
  });

  it("reads the caller's own skill runs as resources", async () => {
    const { peer, token } = await servedPeer();
    const client = await connect(peer, token, 'legacy');
    const runId = String(structured(await client.callTool({ name: 'ping', arguments: {} })).runId);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['agentplane://declaration', `agentplane://runs/${runId}`]);
    const read = await client.readResource({ uri: `agentplane://runs/${runId}` });
    const body = JSON.parse((read.contents[0] as { text: string }).text) as { run: { agent: string; host: string }; records: Array<{ kind: string }> };
    expect(body.run).toMatchObject({ agent: 'skill:ping', host: 'peer:mcp-peer' });
    expect(body.records.map((r) => r.kind)).toContain('RunSealed');
  });
});
