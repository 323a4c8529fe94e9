/**
 * What an MCP host pays to call one of the plane's agents, against an MCP tool that does nothing
 * governed. Subject: `tools/call` of a trivial agent (one `output` step: no effect) through the
 * plane's own endpoint (startPlaneMcpEndpoint: Host/Origin, bearer token, the plane surface),
 * which admits a run through the plane's dispatch (policy asked, RunAdmitted journaled), runs it,
 * seals it (RunSealed journaled) and answers when the journal says it settled. Baseline: the
 * SDK's `createMcpHandler` behind a plain `node:http` server with one trivial tool. Both called
 * by the same official SDK client pinned to 2026-07-28, interleaved, in the same process and run.
 *
 * The subject does what the baseline cannot: it makes the call durable. Each call commits to the
 * journal (synchronous=FULL: an fsync per commit), so the goal allows for one durable commit,
 * measured here in the same run (`Journal.append` of one record, sequential): p50 ≤ 2× the bare
 * server's p50 plus one commit's p50, and throughput ≥ 0.5× the bare server's. The judged p50 line
 * therefore compares the subject with `bare p50 + ½ commit p50` at a ratio of 2 (2 × (bare + ½
 * commit) = 2 × bare + commit); the raw p50s are shown beside it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as z from 'zod';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { silentLogger } from '../src-main/base/logger';
import { Journal } from '../src-main/journal/journal';
import { createPlane } from '../src-main/plane/plane';
import { startPlaneMcpEndpoint } from '../src-main/plane/mcp-endpoint';
import { compileAgent } from '../src-main/runtime/manifest';
import { MCP_SERVED_VERSIONS } from '../src-main/protocols/mcp/mcp-factory';
import type { Benchmark, BenchResult } from './bench-types';
import { interleavedLatencies, interleavedThroughput, summarise, type Operation } from './measure';

const settings = { warmUp: 100, sequential: 400, concurrency: 16, requestsPerRound: 200, rounds: 6, commits: 400 };

const trivialAgent = compileAgent(
  {
    name: 'echo-text',
    description: 'Answers its input text: a run with no effect.',
    input: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string' } } },
    steps: [{ output: { text: '{{input.text}}' } }],
  },
  'bench:echo-text',
);

function bareFactory(): McpServer {
  const server = new McpServer({ name: 'bench-bare', version: '1.0.0' }, { supportedProtocolVersions: [...MCP_SERVED_VERSIONS] });
  server.registerTool('echo-text', { description: 'echoes', inputSchema: z.object({ text: z.string() }) }, async ({ text }) => ({ content: [{ type: 'text', text: JSON.stringify({ text }) }] }));
  return server;
}

async function clientFor(url: string, token?: string): Promise<{ client: Client; call: Operation }> {
  const client = new Client({ name: 'bench-client', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}));
  const call = async () => {
    const result = await client.callTool({ name: 'echo-text', arguments: { text: 'hi' } });
    const text = (result.content as { text?: string }[])[0]?.text ?? '';
    if (result.isError || !text.includes('hi')) throw new Error(`${url} answered ${JSON.stringify(result).slice(0, 300)}`);
  };
  return { client, call };
}

/** p50 of one durable commit (one record, one transaction, fsync), in µs, on a journal of its own. */
async function durableCommitP50(dir: string, count: number): Promise<number> {
  const journal = await Journal.open({ dataDir: dir, now: Date.now });
  try {
    const latencies: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = process.hrtime.bigint();
      await journal.append({ runId: null, kind: 'AdmissionRefused', body: { agent: 'bench', principal: 'bench', action: 'bench', resource: 'bench', reason: `commit ${i}` } });
      latencies.push(Number(process.hrtime.bigint() - started) / 1000);
    }
    return summarise(latencies).p50;
  } finally {
    await journal.close();
  }
}

async function run(): Promise<BenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-mcp-agent-'));
  const plane = await createPlane({ dataDir: join(root, 'plane'), version: 'bench', host: 'headless', logger: silentLogger, agents: [trivialAgent] });
  const endpoint = await startPlaneMcpEndpoint(plane, { uiOrigin: 'http://127.0.0.1:1', logger: silentLogger, port: 0 });
  const bareHandler = createMcpHandler(() => bareFactory(), { keepAliveMs: 0 });
  const bareNode = toNodeHandler(bareHandler);
  const bare = createServer((req, res) => void bareNode(req, res));
  await new Promise<void>((listening) => bare.listen(0, '127.0.0.1', listening));
  const clients: Client[] = [];
  try {
    const subject = await clientFor(endpoint.url, endpoint.token);
    const baseline = await clientFor(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/mcp`);
    clients.push(subject.client, baseline.client);
    const operations = [subject.call, baseline.call];
    await interleavedLatencies(operations, settings.warmUp);
    const [subjectUs, baselineUs] = (await interleavedLatencies(operations, settings.sequential)).map(summarise);
    const [subjectRps, baselineRps] = await interleavedThroughput(operations, { concurrency: settings.concurrency, requestsPerRound: settings.requestsPerRound, rounds: settings.rounds });
    const commitUs = await durableCommitP50(join(root, 'commits'), settings.commits);
    return {
      subject: "tools/call of a trivial agent through the plane's MCP endpoint (run admitted, journaled, sealed)",
      baseline: "the SDK's createMcpHandler behind a plain node:http server, one trivial tool",
      measurements: [
        { metric: 'p50 latency vs bare + ½ durable commit', unit: 'µs', subject: subjectUs!.p50, baseline: baselineUs!.p50 + commitUs / 2, better: 'lower', judged: true },
        { metric: 'p50 latency (raw)', unit: 'µs', subject: subjectUs!.p50, baseline: baselineUs!.p50, better: 'lower', judged: false },
        { metric: 'p99 latency', unit: 'µs', subject: subjectUs!.p99, baseline: baselineUs!.p99, better: 'lower', judged: false },
        { metric: `throughput (c=${settings.concurrency})`, unit: 'req/s', subject: subjectRps!, baseline: baselineRps!, better: 'higher', judged: true },
      ],
      notes: [
        `one durable commit (Journal.append, one record, sequential): p50 ${Math.round(commitUs)} µs over ${settings.commits} commits, measured in this run`,
        `warm-up ${settings.warmUp} calls each, then ${settings.sequential} sequential calls each, interleaved call by call`,
        `throughput: ${settings.rounds} alternating rounds of ${settings.requestsPerRound} calls each at concurrency ${settings.concurrency}`,
        'client: @modelcontextprotocol/client pinned to 2026-07-28 (stateless: one server instance per request on both sides)',
        `node ${process.version}, ${process.platform}/${process.arch}`,
      ],
    };
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await endpoint.close();
    await plane.close();
    await bareHandler.close();
    await new Promise<void>((closed) => bare.close(() => closed()));
    rmSync(root, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'mcp-agent',
  goal: { maxRatio: 2, text: 'p50 ≤ 2× the bare SDK server + one durable commit, throughput ≥ 0.5×' },
  run,
};
export default benchmark;
