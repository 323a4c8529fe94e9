/**
 * What the plane's MCP HTTP module costs over the SDK's bare server. Subject: a `tools/call` of a
 * trivial tool through `startMcpHttpServer` (fastify, the scoped Host and Origin hooks, the bearer
 * token compared in constant time, our body parser, era classification, the once-per-caller
 * version log, then the SDK's `createMcpHandler`). Baseline: `createMcpHandler` with the same
 * factory behind a plain `node:http` server, as the SDK's own examples serve it. Both on
 * 127.0.0.1, both called by the official SDK client pinned to 2026-07-28 (one stateless request
 * per call, a fresh server instance per request on both sides), in the same process and run,
 * interleaved (round-trip-comparison.ts).
 *
 * Goal: p50 latency ≤ 1.5× the bare SDK server and throughput ≥ 1/1.5 of it: the governance in
 * front of the SDK must stay small next to the SDK's own per-request work.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as z from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { silentLogger } from '../src-main/base/logger';
import { MCP_SERVED_VERSIONS, type McpServerFactory } from '../src-main/protocols/mcp/mcp-factory';
import { startMcpHttpServer } from '../src-main/protocols/mcp/mcp-http';
import type { Benchmark, BenchResult } from './bench-types';
import type { Operation } from './measure';
import { compareRoundTrips } from './round-trip-comparison';

const TOKEN = 'bench-token';
const settings = { warmUp: 200, sequential: 800, concurrency: 16, requestsPerRound: 300, rounds: 8 };

const factory: McpServerFactory = () => {
  const server = new McpServer({ name: 'bench', version: '1.0.0' }, { supportedProtocolVersions: [...MCP_SERVED_VERSIONS] });
  server.registerTool('echo', { description: 'echoes', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
};

async function clientFor(url: string, token?: string): Promise<{ client: Client; call: Operation }> {
  const client = new Client({ name: 'bench-client', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}));
  const call = async () => {
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    if ((result.content as { text?: string }[])[0]?.text !== 'hi') throw new Error(`${url} answered ${JSON.stringify(result).slice(0, 200)}`);
  };
  return { client, call };
}

async function run(): Promise<BenchResult> {
  const ours = await startMcpHttpServer({ factory, token: TOKEN, logger: silentLogger, port: 0 });
  const bareHandler = createMcpHandler(() => factory({ principal: 'bench', era: 'modern' }), { keepAliveMs: 0 });
  const bareNode = toNodeHandler(bareHandler);
  const bare = createServer((req, res) => void bareNode(req, res));
  await new Promise<void>((listening) => bare.listen(0, '127.0.0.1', listening));
  const clients: Client[] = [];
  try {
    const subject = await clientFor(ours.url, TOKEN);
    const baseline = await clientFor(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/mcp`);
    clients.push(subject.client, baseline.client);
    const comparison = await compareRoundTrips(subject.call, baseline.call, settings);
    return {
      subject: 'tools/call through startMcpHttpServer (fastify, Host/Origin hooks, bearer token, era routing, createMcpHandler)',
      baseline: "the SDK's createMcpHandler behind a plain node:http server, same factory",
      measurements: comparison.measurements,
      // compareRoundTrips describes its own undici client; these calls go through the SDK client instead.
      notes: [...comparison.notes.filter((note) => !note.startsWith('client:')), 'client: @modelcontextprotocol/client pinned to 2026-07-28 (stateless: one factory call per request on both sides)', `node ${process.version}, ${process.platform}/${process.arch}`],
    };
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await ours.close();
    await bareHandler.close();
    await new Promise<void>((closed) => bare.close(() => closed()));
  }
}

const benchmark: Benchmark = {
  name: 'mcp-server',
  goal: { maxRatio: 1.5, text: 'p50 ≤ 1.5× and throughput ≥ 0.67× the bare SDK server' },
  run,
};
export default benchmark;
