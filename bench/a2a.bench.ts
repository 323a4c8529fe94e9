/**
 * What an A2A client pays to call one of the plane's agents, against the SDK's own server.
 * Subject: `SendMessage` (blocking) of a trivial agent (one `output` step: no effect) through the
 * plane's A2A endpoint (startPlaneA2aEndpoint: Host/Origin, bearer token, A2A-Version, the door),
 * which admits a run (policy asked, RunAdmitted journaled), runs it, seals it (RunSealed
 * journaled) and answers the completed task with its artifact. Baseline: @a2a-js/sdk's server —
 * DefaultRequestHandler over an InMemoryTaskStore with a trivial executor (task, artifact,
 * completed), behind its JsonRpcTransportHandler. The SDK's sample server mounts that handler on
 * express (`@a2a-js/sdk/server/express`), and express is not installed here, so the baseline
 * mounts the same JsonRpcTransportHandler on a bare node:http server instead (the work express
 * would add is body parsing and routing, which makes the baseline a little faster, not slower).
 * Both called by the same SDK client (JSON-RPC transport), interleaved, in the same process and run.
 *
 * The subject makes every call durable (two journal commits with fsync); the baseline keeps tasks
 * in memory. Goal (docs/PERFORMANCE.md): throughput ≥ 0.5× the SDK server's.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentCard, SendMessageRequest, TaskState } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext, type AgentExecutor } from '@a2a-js/sdk/server';
import { silentLogger } from '../src-main/base/logger';
import { createPlane } from '../src-main/plane/plane';
import { startPlaneA2aEndpoint } from '../src-main/plane/a2a-endpoint';
import { compileAgent } from '../src-main/runtime/manifest';
import { sdkA2aClientAt } from '../tests/doubles/sdk-a2a-client';
import type { Benchmark, BenchResult } from './bench-types';
import { interleavedLatencies, interleavedThroughput, summarise, type Operation } from './measure';

const settings = { warmUp: 100, sequential: 300, concurrency: 16, requestsPerRound: 200, rounds: 6 };

const trivialAgent = compileAgent(
  {
    name: 'echo-text',
    description: 'Answers its input text: a run with no effect.',
    input: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string' } } },
    steps: [{ output: { text: '{{input.text}}' } }],
  },
  'bench:echo-text',
);

const executor: AgentExecutor = {
  async execute(context, bus) {
    const text = context.userMessage.parts[0]?.content;
    const value = text?.$case === 'text' ? text.value : '';
    const ids = { taskId: context.taskId, contextId: context.contextId };
    bus.publish(AgentEvent.task({ id: context.taskId, contextId: context.contextId, status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: undefined }, artifacts: [], history: [], metadata: undefined }));
    bus.publish(
      AgentEvent.artifactUpdate({
        ...ids,
        artifact: { artifactId: 'output', name: 'output', description: '', parts: [{ content: { $case: 'data', value: { text: value } }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [] },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(AgentEvent.statusUpdate({ ...ids, status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: undefined }, metadata: undefined }));
    bus.finished();
  },
  async cancelTask() {},
};

function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>));
    req.on('error', reject);
  });
}

async function startSdkServer(): Promise<{ url: string; close(): Promise<void> }> {
  let port = 0;
  const card = () =>
    AgentCard.fromJSON({
      name: 'echo-text',
      description: 'echoes',
      version: '1.0.0',
      supportedInterfaces: [{ url: `http://127.0.0.1:${port}/a2a/echo-text`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['application/json'],
      skills: [{ id: 'echo-text', name: 'echo-text', description: 'echoes', tags: ['echo'] }],
    });
  // Made once the port is known: the card the handler holds names its own URL.
  const made: { handler?: JsonRpcTransportHandler } = {};
  const server = createServer((req, res) => {
    void (async () => {
      if (req.method === 'GET') {
        const text = JSON.stringify(AgentCard.toJSON(card()));
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(text);
        return;
      }
      const body = await readJson(req);
      const version = req.headers['a2a-version'];
      const context = new ServerCallContext({ ...(typeof version === 'string' ? { requestedVersion: version } : {}) });
      const answer = await made.handler!.handle(body, context);
      const text = JSON.stringify(answer);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(text);
    })().catch((error: unknown) => res.writeHead(500).end(String(error)));
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  port = (server.address() as AddressInfo).port;
  made.handler = new JsonRpcTransportHandler(new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor));
  return { url: `http://127.0.0.1:${port}/`, close: () => new Promise<void>((closed) => server.close(() => closed())) };
}

async function callerFor(baseUrl: string, cardPath: string, token?: string): Promise<Operation> {
  const client = await sdkA2aClientAt(baseUrl, cardPath, token);
  let n = 0;
  return async () => {
    const request = SendMessageRequest.fromJSON({ message: { messageId: `m-${++n}`, role: 'ROLE_USER', parts: [{ text: 'hi' }] } });
    const task = (await client.sendMessage(request)) as { status?: { state: number }; artifacts?: unknown[] };
    if (task.status?.state !== TaskState.TASK_STATE_COMPLETED || task.artifacts?.length !== 1) throw new Error(`${baseUrl} answered ${JSON.stringify(task).slice(0, 300)}`);
  };
}

async function run(): Promise<BenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-a2a-'));
  const plane = await createPlane({ dataDir: join(root, 'plane'), version: 'bench', host: 'headless', logger: silentLogger, agents: [trivialAgent] });
  const endpoint = await startPlaneA2aEndpoint(plane, { uiOrigin: 'http://127.0.0.1:1', logger: silentLogger, port: 0 });
  const sdk = await startSdkServer();
  try {
    const subject = await callerFor(endpoint.url, 'a2a/echo-text/.well-known/agent-card.json', endpoint.token);
    const baseline = await callerFor(sdk.url, '.well-known/agent-card.json');
    const operations = [subject, baseline];
    await interleavedLatencies(operations, settings.warmUp);
    const [subjectUs, baselineUs] = (await interleavedLatencies(operations, settings.sequential)).map(summarise);
    const [subjectRps, baselineRps] = await interleavedThroughput(operations, { concurrency: settings.concurrency, requestsPerRound: settings.requestsPerRound, rounds: settings.rounds });
    return {
      subject: "SendMessage (blocking) of a trivial agent through the plane's A2A endpoint (run admitted, journaled, sealed)",
      baseline: "@a2a-js/sdk DefaultRequestHandler + InMemoryTaskStore + JsonRpcTransportHandler on bare node:http (express, the sample server's framework, is not installed)",
      measurements: [
        { metric: `throughput (c=${settings.concurrency})`, unit: 'req/s', subject: subjectRps!, baseline: baselineRps!, better: 'higher', judged: true },
        { metric: 'p50 latency', unit: 'µs', subject: subjectUs!.p50, baseline: baselineUs!.p50, better: 'lower', judged: false },
        { metric: 'p99 latency', unit: 'µs', subject: subjectUs!.p99, baseline: baselineUs!.p99, better: 'lower', judged: false },
      ],
      notes: [
        `warm-up ${settings.warmUp} calls each, then ${settings.sequential} sequential calls each, interleaved call by call`,
        `throughput: ${settings.rounds} alternating rounds of ${settings.requestsPerRound} calls each at concurrency ${settings.concurrency}`,
        'client: @a2a-js/sdk 1.3 ClientFactory, JSON-RPC transport, the same for both',
        `node ${process.version}, ${process.platform}/${process.arch}`,
      ],
    };
  } finally {
    await endpoint.close();
    await plane.close();
    await sdk.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'a2a',
  goal: { maxRatio: 2, text: 'throughput ≥ 0.5× the SDK server' },
  run,
};
export default benchmark;
