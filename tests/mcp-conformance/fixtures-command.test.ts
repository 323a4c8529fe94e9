/**
 * `agentplane mcp fixtures`, as a real process run from source: over HTTP it prints its URL on
 * its own line, serves both revisions to the SDK client, and stops cleanly on SIGTERM; over
 * `--stdio` it serves the SDK client on stdin/stdout. It opens no data dir: it is given none, and
 * AGENTPLANE_DATA_DIR points at a folder that must stay empty.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const REPO_ROOT = resolve(__dirname, '..', '..');
const CLI_SOURCE = join(REPO_ROOT, 'src-main', 'cli', 'main.ts');
const untouched = mkdtempSync(join(tmpdir(), 'agentplane-mcp-fixtures-datadir-'));
const env = { ...process.env, AGENTPLANE_DATA_DIR: untouched };

afterAll(() => rmSync(untouched, { recursive: true, force: true }));

const firstText = (result: { content?: unknown }) => (result.content as { type: string; text: string }[])[0]!.text;

describe('agentplane mcp fixtures', () => {
  it('prints AGENTPLANE_MCP_URL, serves both revisions over HTTP and exits 0 on SIGTERM', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CLI_SOURCE, 'mcp', 'fixtures', '--port', '0'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
    try {
      const url = await new Promise<string>((found, failed) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          const match = /^AGENTPLANE_MCP_URL=(http:\/\/127\.0\.0\.1:\d+\/mcp)$/m.exec(stdout);
          if (match) found(match[1]!);
        });
        void exited.then((code) => failed(new Error(`exited ${code} before printing its URL; stderr:\n${stderr}`)));
      });
      for (const negotiation of [undefined, { mode: { pin: '2026-07-28' } } as const]) {
        const client = new Client({ name: 'fixtures-cli-test', version: '1' }, negotiation ? { versionNegotiation: negotiation } : {});
        await client.connect(new StreamableHTTPClientTransport(new URL(url)));
        expect(client.getNegotiatedProtocolVersion()).toBe(negotiation ? '2026-07-28' : '2025-11-25');
        expect(firstText(await client.callTool({ name: 'test_simple_text', arguments: {} }))).toBe('This is a simple text response for testing.');
        await client.close();
      }
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(stdout.trim().split('\n')).toHaveLength(1);
      expect(readdirSync(untouched)).toEqual([]);
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('serves the SDK client over --stdio, both revisions', { timeout: 60_000 }, async () => {
    for (const negotiation of [undefined, { mode: { pin: '2026-07-28' } } as const]) {
      const transport = new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', CLI_SOURCE, 'mcp', 'fixtures', '--stdio'], cwd: REPO_ROOT, env: env as Record<string, string>, stderr: 'pipe' });
      const client = new Client({ name: 'fixtures-stdio-test', version: '1' }, negotiation ? { versionNegotiation: negotiation } : {});
      await client.connect(transport);
      expect(client.getNegotiatedProtocolVersion()).toBe(negotiation ? '2026-07-28' : '2025-11-25');
      const tools = await client.listTools();
      expect(tools.tools.map((t) => t.name)).toContain('test_tool_with_progress');
      const read = await client.readResource({ uri: 'test://static-text' });
      expect(read.contents[0]).toMatchObject({ text: 'This is the content of the static text resource.' });
      await client.close();
    }
    expect(readdirSync(untouched)).toEqual([]);
  });
});
