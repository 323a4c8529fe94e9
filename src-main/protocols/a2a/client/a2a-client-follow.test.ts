/**
 * Following a remote task for longer than one request may take (a2a-client.ts): the official
 * @a2a-js/sdk 1.3 server (DefaultRequestHandler + JsonRpcTransportHandler on node:http,
 * 127.0.0.1) with a slow executor, our client through netguard with the origin allowed. The
 * per-request deadline, the idle bound and the overall bound are injected small so the test is
 * fast; the shapes are the real ones (a task quiet for longer than the deadline, a subscription
 * cut by the far side, a task that never ends).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentCard } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { createNetguard, staticAllowList, type Netguard } from '../../../net/netguard';
import { EffectFailure } from '../../../runtime/run-signals';
import { useTempFolders } from '../../../../tests/helpers/temp-folders';
import { createA2aClient, type A2aClientOptions } from './a2a-client';

const tempDir = useTempFolders('agentplane-a2a-follow-');
const servers: Server[] = [];
const guards: Netguard[] = [];
afterEach(async () => {
  for (const g of guards.splice(0)) await g.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** A remote agent whose task works `workMs` in silence, then completes with one data artifact. */
async function slowRemote(options: { workMs: number; cutSubscriptionsAfterMs?: number }) {
  const methods: string[] = [];
  const executor: AgentExecutor = {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      bus.publish(AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId, status: { state: 2, message: undefined, timestamp: undefined }, artifacts: [], history: [], metadata: undefined }));
      await new Promise((r) => setTimeout(r, options.workMs));
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId: ctx.taskId,
          contextId: ctx.contextId,
          artifact: { artifactId: 'a1', name: 'answer', description: '', parts: [{ content: { $case: 'data', value: { done: true } }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [] },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );
      bus.publish(AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, status: { state: 3, message: undefined, timestamp: undefined }, metadata: undefined }));
      bus.finished();
    },
    async cancelTask(taskId: string, bus: ExecutionEventBus) {
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: 5, message: undefined, timestamp: undefined }, metadata: undefined }));
      bus.finished();
    },
  };
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const cardJson = {
    name: 'slow',
    description: 'works for a while',
    version: '1.0.0',
    supportedInterfaces: [{ url: `${origin}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true },
    defaultInputModes: ['application/json'],
    defaultOutputModes: ['application/json'],
    skills: [{ id: 'slow', name: 'slow', description: 'slow', tags: ['slow'] }],
  };
  const transport = new JsonRpcTransportHandler(new DefaultRequestHandler(AgentCard.fromJSON(cardJson), new InMemoryTaskStore(), executor));
  server.on('request', (req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(cardJson));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { method: string };
        methods.push(body.method);
        const answer = await transport.handle(body, new ServerCallContext({ requestedVersion: '1.0' }));
        if (answer && typeof (answer as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          // A proxy with an idle limit, or a restarting server: the socket is cut mid-stream.
          if (body.method === 'SubscribeToTask' && options.cutSubscriptionsAfterMs !== undefined) setTimeout(() => res.destroy(), options.cutSubscriptionsAfterMs);
          try {
            for await (const event of answer as AsyncGenerator) res.write(`data: ${JSON.stringify(event)}\n\n`);
          } finally {
            res.end();
          }
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      })();
    });
  });
  return { cardUrl: `${origin}/.well-known/agent-card.json`, origin, methods };
}

function client(origin: string, extra: Partial<A2aClientOptions>) {
  const netguard = createNetguard({ allow: staticAllowList([origin]) });
  guards.push(netguard);
  return createA2aClient({ dataDir: tempDir(), dispatcher: netguard.dispatcher, poll: { initialMs: 20, maxMs: 100 }, requestDeadlineMs: 200, ...extra });
}

const at = { runId: 'run-00000000000000000000', step: 1 };

describe('following a remote task longer than one request deadline', () => {
  it('a task silent for several request deadlines is followed by its subscription to the end', async () => {
    const remote = await slowRemote({ workMs: 1_200 });
    const a2a = client(remote.origin, {});
    const answer = await a2a.call({ card: remote.cardUrl, skill: 'slow', message: { go: true } }, at, new AbortController().signal);
    expect(answer.value).toEqual({ done: true });
    expect(remote.methods.filter((m) => m === 'SubscribeToTask')).toHaveLength(1);
    expect(remote.methods).not.toContain('CancelTask');
  });

  it('a subscription cut by the far side is opened again (it opens with the task as it stands) until the task ends', async () => {
    const remote = await slowRemote({ workMs: 1_500, cutSubscriptionsAfterMs: 300 });
    const a2a = client(remote.origin, {});
    const answer = await a2a.call({ card: remote.cardUrl, skill: 'slow', message: { go: true } }, at, new AbortController().signal);
    expect(answer.value).toEqual({ done: true });
    // Several cuts, each followed by a new subscription; never a fallback to polling needed.
    expect(remote.methods.filter((m) => m === 'SubscribeToTask').length).toBeGreaterThanOrEqual(3);
  });

  it('a quiet subscription is opened again after streamIdleMs (a half-open connection never errors)', async () => {
    const remote = await slowRemote({ workMs: 1_000 });
    const a2a = client(remote.origin, { streamIdleMs: 250 });
    const answer = await a2a.call({ card: remote.cardUrl, skill: 'slow', message: { go: true } }, at, new AbortController().signal);
    expect(answer.value).toEqual({ done: true });
    expect(remote.methods.filter((m) => m === 'SubscribeToTask').length).toBeGreaterThanOrEqual(3);
  });

  it('past the overall bound the effect is in doubt naming the task, and the remote task is not cancelled', async () => {
    const remote = await slowRemote({ workMs: 5_000, cutSubscriptionsAfterMs: 250 });
    const a2a = client(remote.origin, { followMaxMs: 900 });
    const failure = await a2a.call({ card: remote.cardUrl, skill: 'slow', message: { go: true } }, at, new AbortController().signal).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(EffectFailure);
    expect(failure).toMatchObject({ code: 'A2aFollowExpired', disposition: 'InDoubt' });
    expect((failure as Error).message).toMatch(/remote task .+ had not ended after 900 ms/);
    expect(remote.methods).not.toContain('CancelTask');
  });
});
