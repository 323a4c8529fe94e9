/**
 * MCP over stdio through `serveMcpStdio`, on in-memory pipes: the caller is `mcp:stdio`, both
 * revisions are served, stdout carries only protocol lines, and the connection ends when the
 * host closes our stdin.
 */
import { PassThrough } from 'node:stream';
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/server';
import type { Logger } from '../../base/logger';
import { MCP_SERVED_VERSIONS, type McpCaller, type McpServerFactory } from './mcp-factory';
import { serveMcpStdio } from './mcp-stdio';

const factory: McpServerFactory = (caller: McpCaller) => {
  const server = new McpServer({ name: 'stdio-test', version: '1.0.0' }, { supportedProtocolVersions: [...MCP_SERVED_VERSIONS] });
  server.registerTool('whoami', { description: 'the caller', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: JSON.stringify(caller) }] }));
  return server;
};

function pipes() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  const rawLines: string[] = [];
  let buffer = '';
  const waiters: { id: number; resolve: (m: Record<string, unknown>) => void }[] = [];
  stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline);
      buffer = buffer.slice(newline + 1);
      rawLines.push(line);
      const message = JSON.parse(line) as Record<string, unknown>;
      lines.push(message);
      for (const w of waiters.filter((w) => w.id === message.id)) w.resolve(message);
    }
  });
  const send = (message: Record<string, unknown>) => stdin.write(`${JSON.stringify(message)}\n`);
  const reply = (id: number) => new Promise<Record<string, unknown>>((resolve) => {
    const found = lines.find((m) => m.id === id);
    if (found) resolve(found);
    else waiters.push({ id, resolve });
  });
  return { stdin, stdout, send, reply, rawLines };
}

describe('serveMcpStdio', () => {
  it('serves a 2025-11-25 host as mcp:stdio, logs through the logger only, and ends when stdin closes', async () => {
    const logged: string[] = [];
    const logger: Logger = { log: (level, message, fields) => logged.push(`${level} ${message} ${JSON.stringify(fields)}`) };
    const io = pipes();
    const served = await serveMcpStdio(factory, logger, io);
    io.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'stdio-host', version: '1' } } });
    const init = await io.reply(1);
    expect((init.result as { protocolVersion: string }).protocolVersion).toBe('2025-11-25');
    io.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    io.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'whoami', arguments: {} } });
    const call = await io.reply(2);
    const text = (call.result as { content: { text: string }[] }).content[0]!.text;
    expect(JSON.parse(text)).toEqual({ principal: 'mcp:stdio', era: 'legacy' });
    // Every line on stdout is a JSON-RPC message: nothing else may share the protocol's stream.
    expect(io.rawLines.every((line) => (JSON.parse(line) as { jsonrpc?: string }).jsonrpc === '2.0')).toBe(true);
    expect(logged.some((l) => l.includes('mcp stdio connection') && l.includes('mcp:stdio'))).toBe(true);
    io.stdin.end();
    await served.closed;
  });

  it('answers an older revision at the handshake with the counter-offer', async () => {
    const io = pipes();
    const served = await serveMcpStdio(factory, { log() {} }, io);
    io.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'old-host', version: '1' } } });
    const init = await io.reply(1);
    expect((init.result as { protocolVersion: string }).protocolVersion).toBe('2025-11-25');
    io.stdin.end();
    await served.closed;
  });
});
