/**
 * `agentplane mcp --stdio` answers every request it read before its stdin closed, then exits
 * A host may write its requests and close its end at once (a script piping a
 * file in, a one-shot host): stdin's EOF means "no more requests", not "drop the ones in flight".
 * Both ways the command serves: relaying to a plane already running on the data dir, and, with
 * none running, becoming the plane itself. The CLI is the real process (its TypeScript entry
 * through tsx); the running plane is a real plane with its real MCP endpoint, in this process.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../base/logger';
import { createPlane, type Plane } from '../plane/plane';
import { planeFilePath, writePlaneFile } from '../plane/plane-file';
import { startPlaneMcpEndpoint, type PlaneMcpEndpoint } from '../plane/mcp-endpoint';
import { call } from '../../tests/support/runtime-support';
import { useTempFolders } from '../../tests/helpers/temp-folders';
import { CALM_AGENT, writeCalmAgent } from '../../tests/support/calm-agent';

const ROOT = join(import.meta.dirname, '..', '..');
const folder = useTempFolders('ap-mcp-drain-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Message = { jsonrpc?: string; id?: number; result?: Record<string, unknown>; error?: { code: number; message: string } };

/**
 * What a host writes in one go: the handshake, then a listing and a call of an agent. A
 * 2025-11-25 host holds no Tasks, so it is offered only agents that never wait for a person:
 * the data dir has one (tests/support/calm-agent.ts).
 */
const REQUESTS = [
  { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'one-shot-host', version: '1' } } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} },
  { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: CALM_AGENT, arguments: { text: 'written, then stdin closed at once' } } },
  { jsonrpc: '2.0', id: 4, method: 'ping' },
];

/** `agentplane mcp --stdio` with every request written and stdin closed at once; what it said until it exited. */
function mcpStdioAllAtOnce(dataDir: string): Promise<{ code: number | null; messages: Message[]; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src-main', 'cli', 'main.ts'), 'mcp', '--stdio', '--data-dir', dataDir], {
      cwd: ROOT,
      env: { ...process.env, AGENTPLANE_DEMO_PEERS: '0' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    child.stdin.end(REQUESTS.map((r) => `${JSON.stringify(r)}\n`).join(''));
    child.once('close', (code) => {
      const lines = stdout.split('\n').filter((l) => l !== '');
      resolve({ code, messages: lines.map((l) => JSON.parse(l) as Message), stdout, stderr });
    });
  });
}

/** Each request answered exactly once, with a result; the agent's run succeeded. */
function expectEveryRequestAnswered(run: { code: number | null; messages: Message[]; stderr: string }): string {
  const answers = run.messages.filter((m) => m.id !== undefined);
  expect(answers.map((m) => m.id).sort(), run.stderr).toEqual([1, 2, 3, 4]);
  for (const answer of answers) expect(answer.error, `id ${answer.id}: ${run.stderr}`).toBeUndefined();
  // Nothing but JSON-RPC on stdout.
  expect(run.messages.every((m) => m.jsonrpc === '2.0')).toBe(true);
  const tools = (answers.find((m) => m.id === 2)!.result as { tools: Array<{ name: string }> }).tools;
  expect(tools.map((t) => t.name)).toContain(CALM_AGENT);
  expect(tools.map((t) => t.name)).not.toContain('write-note');
  const called = answers.find((m) => m.id === 3)!.result as { structuredContent: { runId: string; outcome: string } };
  expect(called.structuredContent.outcome).toBe('succeeded');
  expect(run.code, run.stderr).toBe(0);
  return called.structuredContent.runId;
}

describe('agentplane mcp --stdio, stdin closed right after the requests', () => {
  it('relaying to a running plane: every request read before the EOF is answered, then it exits 0', { timeout: 60_000 }, async () => {
    const dataDir = writeCalmAgent(folder());
    const plane: Plane = await createPlane({ dataDir, version: 'test', host: 'headless' });
    cleanups.push(() => plane.close());
    const endpoint: PlaneMcpEndpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger });
    cleanups.push(() => endpoint.close());
    // What a running plane leaves for the CLI: its pid (alive: this process) and its MCP endpoint.
    writePlaneFile(dataDir, { pid: process.pid, url: 'http://127.0.0.1:9', port: 9, token: 'bridge-token', startedAt: new Date().toISOString(), mcpUrl: endpoint.url, mcpToken: endpoint.token });

    const run = await mcpStdioAllAtOnce(dataDir);
    const runId = expectEveryRequestAnswered(run);
    // The call was the running plane's, for its MCP token holder.
    expect(await call(plane, 'runs.get', { runId })).toMatchObject({ runId, chain: ['mcp:local'] });
  });

  it('with no plane running (it is the plane): every request is answered, then it closes the plane and exits 0', { timeout: 60_000 }, async () => {
    const dataDir = writeCalmAgent(folder());
    const run = await mcpStdioAllAtOnce(dataDir);
    expectEveryRequestAnswered(run);
    expect(existsSync(planeFilePath(dataDir))).toBe(false);
  });
});
