/**
 * Both stdio ends of `agentplane mcp --stdio` treat the host closing stdin as "no more
 * requests", not "drop the ones in flight": what was read before the EOF is answered, then the
 * connection closes. The wait is bounded: a request that has not answered by the drain deadline
 * is answered with an error naming it, and the connection closes anyway. On in-memory pipes, with
 * a short deadline; the CLI-level test (cli/mcp-stdio-drain.test.ts) runs the real processes.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';
import * as z from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/server';
import { silentLogger } from '../../base/logger';
import { MCP_SERVED_VERSIONS, type McpServerFactory } from './mcp-factory';
import { serveMcpStdio } from './mcp-stdio';
import { relayStdioToHttp } from './stdio-relay';

type Message = { id?: number; result?: { content?: Array<{ text: string }> }; error?: { code: number; message: string } };

function pipes() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const messages: Message[] = [];
  let buffer = '';
  const waiters: Array<{ id: number; resolve: (m: Message) => void }> = [];
  stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const message = JSON.parse(buffer.slice(0, newline)) as Message;
      buffer = buffer.slice(newline + 1);
      messages.push(message);
      for (const w of waiters.filter((w) => w.id === message.id)) w.resolve(message);
    }
  });
  const send = (message: Record<string, unknown>) => stdin.write(`${JSON.stringify(message)}\n`);
  const reply = (id: number) =>
    new Promise<Message>((resolve) => {
      const found = messages.find((m) => m.id === id);
      if (found) resolve(found);
      else waiters.push({ id, resolve });
    });
  return { stdin, stdout, send, reply, messages };
}

const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'host', version: '1' } } };

/** A server with `slow` (answers once `release` is called) and `never` (never answers). */
function gatedFactory(): { factory: McpServerFactory; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const factory: McpServerFactory = () => {
    const server = new McpServer({ name: 'drain-test', version: '1.0.0' }, { supportedProtocolVersions: [...MCP_SERVED_VERSIONS] });
    server.registerTool('slow', { description: 'answers when released', inputSchema: z.object({}) }, async () => {
      await gate;
      return { content: [{ type: 'text', text: 'released' }] };
    });
    server.registerTool('never', { description: 'never answers', inputSchema: z.object({}) }, () => new Promise(() => undefined));
    return server;
  };
  return { factory, release };
}

describe('serveMcpStdio after the host closes stdin', () => {
  it('answers a call still running at the EOF before the connection closes', async () => {
    const io = pipes();
    const { factory, release } = gatedFactory();
    const served = await serveMcpStdio(factory, silentLogger, io);
    io.send(initialize);
    await io.reply(1);
    io.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: {} } });
    // The tool finishes only once the server has seen the EOF.
    io.stdin.once('end', release);
    io.stdin.end();
    await served.closed;
    expect(io.messages.find((m) => m.id === 2)).toMatchObject({ result: { content: [{ text: 'released' }] } });
  });

  it('answers a call that never finishes with an error at the drain deadline, then closes', async () => {
    const io = pipes();
    const { factory } = gatedFactory();
    const served = await serveMcpStdio(factory, silentLogger, io, { drainMs: 50 });
    io.send(initialize);
    await io.reply(1);
    io.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'never', arguments: {} } });
    io.stdin.end();
    await served.closed;
    const answer = io.messages.find((m) => m.id === 2);
    expect(answer?.error?.message).toMatch(/no answer within 50 ms of stdin closing/);
  });
});

const servers: Server[] = [];
const held: IncomingMessage[] = [];
afterEach(async () => {
  for (const request of held.splice(0)) request.socket.destroy();
  for (const server of servers.splice(0)) await new Promise((done) => server.close(done));
});

describe('the stdio relay after the host closes stdin', () => {
  it('answers a request the plane never answers with an error at the drain deadline, then closes', async () => {
    // A plane endpoint that takes requests and never answers them.
    const server = createServer((request) => void held.push(request));
    servers.push(server);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    const io = pipes();
    const relay = await relayStdioToHttp({ url, token: 't', logger: silentLogger, streams: io, drainMs: 50 });
    io.send(initialize);
    io.stdin.end();
    await relay.closed;
    const answer = io.messages.find((m) => m.id === 1);
    expect(answer?.error?.message).toMatch(/no answer within 50 ms of stdin closing/);
  });
});
