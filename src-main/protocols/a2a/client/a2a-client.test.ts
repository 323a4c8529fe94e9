/**
 * Our A2A client against the official @a2a-js/sdk 1.3 server (its DefaultRequestHandler and
 * JsonRpcTransportHandler with a trivial AgentExecutor, served by node:http on 127.0.0.1 since
 * express is not installed), through a real plane: an agent whose `a2a` step calls it completes
 * with the remote artifact; polled and streamed; a cancelled run cancels the remote task; bad
 * cards, a changed key, oversized answers and a redirect are refused, each naming why.
 *
 * Signatures: cards are signed with card-signature.ts signAgentCard (Ed25519, the key in the
 * protected header) under keys made here, and verified by the client's default verifier.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { generateKeyPairSync } from 'node:crypto';
import type { JWK } from 'jose';
import { AgentCard } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { agent, call, testPlane } from '../../../../tests/support/runtime-support';
import { tempDataDir } from '../../../../tests/support/journal-support';
import type { Plane } from '../../../plane/plane';
import { keyIdOf, type PlaneKey } from '../../../journal/plane-key';
import { signAgentCard } from '../card-signature';
import { createNetguard, staticAllowList, type Netguard } from '../../../net/netguard';
import { createA2aClient } from './a2a-client';

const planes: Plane[] = [];
const servers: Server[] = [];
const guards: Netguard[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
  for (const g of guards.splice(0)) await g.close();
  for (const s of servers.splice(0)) {
    // An SSE answer the client dropped is still open on this side: close it rather than wait.
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

interface Remote {
  origin: string;
  cardUrl: string;
  cancels: string[];
  methods: string[];
  /** Finishes a task the executor left working (for the cancel test, never). */
  release: () => void;
}

type Behaviour = 'echo' | 'slow' | 'forever' | 'fail' | 'message';

async function startRemote(options: { streaming: boolean; behaviour: Behaviour; sign?: PlaneKey; tamper?: boolean; cardPadding?: number; redirectCard?: boolean; port?: number; interfaceUrl?: string }): Promise<Remote> {
  const cancels: string[] = [];
  const methods: string[] = [];
  let release = () => undefined as void;
  const executor: AgentExecutor = {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const part = ctx.userMessage.parts[0]?.content;
      const input = part?.$case === 'data' ? part.value : part?.$case === 'text' ? { text: part.value } : null;
      if (options.behaviour === 'message') {
        // An answer without a task: one message, a text part.
        bus.publish(AgentEvent.message({ messageId: 'm-1', contextId: ctx.contextId, taskId: '', role: 2, parts: [{ content: { $case: 'text', value: `hello, ${JSON.stringify(input)}` }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] }));
        bus.finished();
        return;
      }
      bus.publish(AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId, status: { state: 2, message: undefined, timestamp: undefined }, artifacts: [], history: [], metadata: undefined }));
      const finish = () => {
        if (options.behaviour === 'fail') {
          bus.publish(AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, status: { state: 4, message: { messageId: 'm-fail', contextId: ctx.contextId, taskId: ctx.taskId, role: 2, parts: [{ content: { $case: 'text', value: 'the remote agent gave up' }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] }, timestamp: undefined }, metadata: undefined }));
        } else {
          bus.publish(
            AgentEvent.artifactUpdate({
              taskId: ctx.taskId,
              contextId: ctx.contextId,
              artifact: { artifactId: 'a1', name: 'answer', description: '', parts: [{ content: { $case: 'data', value: { echoed: input, skill: ctx.userMessage.metadata?.skill ?? null } }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [] },
              append: false,
              lastChunk: true,
              metadata: undefined,
            }),
          );
          bus.publish(AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, status: { state: 3, message: undefined, timestamp: undefined }, metadata: undefined }));
        }
        bus.finished();
      };
      // The SDK reads the bus while execute runs: a task still working is an execute not returned.
      if (options.behaviour === 'forever') await new Promise<void>((resolve) => (release = resolve));
      else if (options.behaviour === 'slow' || options.behaviour === 'fail') await new Promise((r) => setTimeout(r, 300)).then(finish);
      else finish();
    },
    async cancelTask(taskId: string, bus: ExecutionEventBus) {
      cancels.push(taskId);
      release();
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: 5, message: undefined, timestamp: undefined }, metadata: undefined }));
      bus.finished();
    },
  };
  const server = createServer();
  await new Promise<void>((r) => server.listen(options.port ?? 0, '127.0.0.1', r));
  servers.push(server);
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let cardJson: Record<string, unknown> = {
    name: 'echo',
    description: 'echoes its input',
    version: '1.0.0',
    supportedInterfaces: [{ url: options.interfaceUrl ?? `${origin}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: options.streaming },
    defaultInputModes: ['application/json', 'text/plain'],
    defaultOutputModes: ['application/json'],
    skills: [{ id: 'echo', name: 'echo', description: 'echo', tags: ['echo'] }],
  };
  if (options.sign) {
    cardJson = await signAgentCard(cardJson, options.sign);
    if (options.tamper) cardJson.description = 'a description the signer never saw';
  }
  if (options.cardPadding) cardJson.documentationUrl = `https://example.com/${'x'.repeat(options.cardPadding)}`;
  const handler = new DefaultRequestHandler(AgentCard.fromJSON(cardJson), new InMemoryTaskStore(), executor);
  const transport = new JsonRpcTransportHandler(handler);
  server.on('request', (req, res) => {
    if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') {
      methods.push('GET card');
      if (options.redirectCard) {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(cardJson));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { method: string; params: { id?: string } };
        methods.push(body.method);
        if (req.headers['a2a-version'] !== '1.0') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32009, message: 'A2A-Version 1.0 required' } }));
          return;
        }
        const answer = await transport.handle(body, new ServerCallContext({ requestedVersion: '1.0' }));
        if (answer && typeof (answer as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for await (const event of answer as AsyncGenerator) res.write(`data: ${JSON.stringify(event)}\n\n`);
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      })();
    });
  });
  return { origin, cardUrl: `${origin}/.well-known/agent-card.json`, cancels, methods, release: () => release() };
}

async function ed25519(): Promise<PlaneKey> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
  return { privateKey, publicKey, publicJwk, keyId: await keyIdOf(publicJwk) };
}

function caller(card: string) {
  return agent({
    name: 'caller',
    input: { type: 'object', properties: { text: { type: 'string' } } },
    steps: [{ as: 'remote', a2a: { card, skill: 'echo', message: { said: '{{input.text}}' } } }, { output: '{{steps.remote.value}}' }],
    grants: [{ kind: 'a2a', name: card }],
  });
}

async function plane(card: string, dataDir = tempDataDir('ap-a2a-client-'), extra: { cardMaxBytes?: number; answerMaxBytes?: number } = {}) {
  // netguard as the plane has it, with the test server's origin allowed explicitly.
  const netguard = createNetguard({ allow: staticAllowList([new URL(card).origin]) });
  guards.push(netguard);
  const client = createA2aClient({ dataDir, dispatcher: netguard.dispatcher, poll: { initialMs: 50, maxMs: 200 }, ...extra });
  const p = await testPlane({ dataDir, agents: [caller(card)], a2a: client });
  planes.push(p);
  return p;
}

async function a2aRecords(p: Plane, runId: string) {
  const records = await p.journal.readRun(runId, 1, 1_000);
  return records.filter((r) => (r.kind === 'EffectStarted' && (r.body as { effect: string }).effect === 'a2a') || r.kind === 'EffectDone' || r.kind === 'EffectFailed');
}

describe('an agent calling a remote A2A agent (the @a2a-js/sdk server)', () => {
  for (const streaming of [false, true]) {
    it(`completes with the remote artifact, the task ${streaming ? 'streamed (SubscribeToTask)' : 'polled (GetTask)'}`, async () => {
      const remote = await startRemote({ streaming, behaviour: 'slow' });
      const p = await plane(remote.cardUrl);
      const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
      expect(run.outcome).toBe('succeeded');
      expect(run.result).toEqual({ echoed: { said: 'hi' }, skill: 'echo' });
      const [started, done, ...rest] = await a2aRecords(p, run.runId);
      expect(rest).toEqual([]);
      expect(started).toMatchObject({ body: { effect: 'a2a', name: 'echo', destination: remote.origin, request: { card: remote.cardUrl, skill: 'echo', message: { said: 'hi' } } } });
      expect(done).toMatchObject({ kind: 'EffectDone', body: { provenance: `a2a:${remote.origin}`, result: { card: { verified: false }, artifacts: [{ artifactId: 'a1', name: 'answer' }] } } });
      expect(remote.methods.slice(0, 2)).toEqual(['GET card', 'SendMessage']);
      expect(remote.methods).toContain(streaming ? 'SubscribeToTask' : 'GetTask');
      if (!streaming) expect(remote.methods).not.toContain('SubscribeToTask');
    });
  }

  it('a peer answering with a message (no task): its text part is the value', async () => {
    const remote = await startRemote({ streaming: false, behaviour: 'message' });
    const p = await plane(remote.cardUrl);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
    expect(run).toMatchObject({ outcome: 'succeeded', result: 'hello, {"said":"hi"}' });
    expect(remote.methods).toEqual(['GET card', 'SendMessage']);
  });

  it('a remote task that failed is a Landed failure naming its state and message', async () => {
    const remote = await startRemote({ streaming: false, behaviour: 'fail' });
    const p = await plane(remote.cardUrl);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
    expect(run.outcome).toBe('failed');
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'Landed', error: { code: 'RemoteTaskFailed' } });
    expect(JSON.stringify(failed?.body)).toContain('TASK_STATE_FAILED: the remote agent gave up');
  });

  for (const streaming of [true, false]) {
  it(`a run cancelled while following the remote task (${streaming ? 'streamed' : 'polled'}) cancels it there (CancelTask observed), recorded`, async () => {
    const remote = await startRemote({ streaming, behaviour: 'forever' });
    const p = await plane(remote.cardUrl);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' } });
    const following = streaming ? 'SubscribeToTask' : 'GetTask';
    for (let i = 0; i < 100 && !remote.methods.includes(following); i++) await new Promise((r) => setTimeout(r, 20));
    expect(remote.methods).toContain(following);
    await call(p, 'runs.cancel', { runId: run.runId });
    await p.runtime.settled(run.runId);
    const finished = await call(p, 'runs.get', { runId: run.runId });
    expect(finished.outcome).toBe('cancelled');
    expect(remote.cancels).toHaveLength(1);
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'Landed', error: { code: 'RemoteTaskCancelled' } });
    expect(JSON.stringify(failed?.body)).toContain('CancelTask answered TASK_STATE_CANCELED');
  });
  }

  it('a signed card is verified and its key pinned; a changed key is refused until a2a.pins.accept, then works', async () => {
    const dataDir = tempDataDir('ap-a2a-pins-');
    const firstKey = await ed25519();
    const newKey = await ed25519();
    const first = await startRemote({ streaming: false, behaviour: 'echo', sign: firstKey });
    const p = await plane(first.cardUrl, dataDir);
    const ok = await call(p, 'runs.start', { agent: 'caller', input: { text: 'one' }, wait: true });
    expect(ok.outcome).toBe('succeeded');
    const done = (await a2aRecords(p, ok.runId)).find((r) => r.kind === 'EffectDone');
    expect(done?.body).toMatchObject({ result: { card: { verified: true, keyId: firstKey.keyId } } });
    expect((await call(p, 'a2a.pins.list', {})).pins).toEqual([expect.objectContaining({ origin: first.origin, keyId: firstKey.keyId })]);
    await p.close();
    planes.splice(0);

    // The same origin now signs with another key: a new server on the same port.
    const port = new URL(first.origin).port;
    const old = servers.splice(0)[0]!;
    old.closeAllConnections();
    await new Promise((r) => old.close(r));
    const rotated = await startRemote({ streaming: false, behaviour: 'echo', sign: newKey, port: Number(port) });
    const q = await plane(rotated.cardUrl, dataDir);
    const refused = await call(q, 'runs.start', { agent: 'caller', input: { text: 'two' }, wait: true });
    expect(refused.outcome).toBe('failed');
    const failed = (await a2aRecords(q, refused.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aPinnedKeyChanged' } });
    expect(rotated.methods).toEqual(['GET card']);
    expect((await call(q, 'a2a.pins.list', {})).pins[0]).toMatchObject({ keyId: firstKey.keyId, pending: { keyId: newKey.keyId } });
    expect(JSON.stringify(failed?.body)).toContain(`signed with key ${newKey.keyId}, but ${rotated.origin} is pinned to key ${firstKey.keyId}`);
    await call(q, 'a2a.pins.accept', { origin: rotated.origin });
    const again = await call(q, 'runs.start', { agent: 'caller', input: { text: 'three' }, wait: true });
    expect(again.outcome).toBe('succeeded');
    expect((await call(q, 'a2a.pins.list', {})).pins).toEqual([{ origin: rotated.origin, keyId: newKey.keyId, pinnedAt: expect.any(String) }]);
    await expect(call(q, 'a2a.pins.accept', { origin: rotated.origin })).rejects.toMatchObject({ code: 'AP_CONFLICT' });

    // The pinned origin now serves its card unsigned: a stripped signature is refused.
    const previous = servers.splice(0)[0]!;
    previous.closeAllConnections();
    await new Promise((r) => previous.close(r));
    const stripped = await startRemote({ streaming: false, behaviour: 'echo', port: Number(port) });
    const downgraded = await call(q, 'runs.start', { agent: 'caller', input: { text: 'four' }, wait: true });
    const refusal = (await a2aRecords(q, downgraded.runId)).find((r) => r.kind === 'EffectFailed');
    expect(refusal?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aCardUnsigned' } });
    expect(stripped.methods).toEqual(['GET card']);
  });

  it('a plane closing while a run follows a remote task leaves the effect InDoubt naming the task; a person resolves it on the next plane', async () => {
    const dataDir = tempDataDir('ap-a2a-close-');
    const remote = await startRemote({ streaming: false, behaviour: 'forever' });
    const first = await plane(remote.cardUrl, dataDir);
    const run = await call(first, 'runs.start', { agent: 'caller', input: { text: 'hi' } });
    for (let i = 0; i < 100 && !remote.methods.includes('GetTask'); i++) await new Promise((r) => setTimeout(r, 20));
    await first.close();
    planes.splice(0);

    const second = await plane(remote.cardUrl, dataDir);
    const waiting = await call(second, 'runs.get', { runId: run.runId });
    expect(waiting.pending).toMatchObject({ reason: 'recovery' });
    const failed = (await a2aRecords(second, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'InDoubt', error: { code: 'A2aFollowLost' } });
    expect(JSON.stringify(failed?.body)).toMatch(/remote task [0-9a-f-]{36} was created/);
    await call(second, 'approvals.decide', { runId: run.runId, waitId: waiting.pending!.waitId, decision: 'approve', subjectHash: waiting.pending!.subjectHash, value: { kind: 'recovery', resolution: 'landed', result: { value: 'checked by hand' } } });
    await second.runtime.settled(run.runId);
    const finished = await call(second, 'runs.get', { runId: run.runId });
    expect(finished).toMatchObject({ outcome: 'succeeded', result: 'checked by hand' });
    expect(remote.methods.filter((m) => m === 'SendMessage')).toHaveLength(1);
  });

  it('refuses, before sending, a wrongly signed card, an oversized card and a redirect, each naming why', async () => {
    const tampered = await startRemote({ streaming: false, behaviour: 'echo', sign: await ed25519(), tamper: true });
    const big = await startRemote({ streaming: false, behaviour: 'echo', cardPadding: 300_000 });
    const redirect = await startRemote({ streaming: false, behaviour: 'echo', redirectCard: true });
    const cases: [Remote, string, string][] = [
      [tampered, 'A2aCardSignatureInvalid', 'signature does not verify'],
      [big, 'A2aAnswerTooLarge', 'larger than 262144 bytes'],
      [redirect, 'A2aRedirectRefused', 'redirecting to http://169.254.169.254/latest/meta-data/'],
    ];
    for (const [remote, code, words] of cases) {
      const p = await plane(remote.cardUrl);
      const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
      const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
      expect(failed?.body, code).toMatchObject({ disposition: 'DidNotHappen', error: { code } });
      expect(JSON.stringify(failed?.body)).toContain(words);
      expect(remote.methods).toEqual(['GET card']);
    }
  });

  it('an oversized answer to SendMessage is refused and in doubt (the message had left)', async () => {
    const remote = await startRemote({ streaming: false, behaviour: 'echo' });
    const p = await plane(remote.cardUrl, undefined, { answerMaxBytes: 64 });
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
    expect(run.pending).toMatchObject({ reason: 'recovery' });
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'InDoubt', error: { code: 'A2aAnswerTooLarge' } });
  });

  it('netguard refuses a card on 127.0.0.1 without an allow entry, and an allowed card naming an interface on another loopback port: nothing is sent', async () => {
    const remote = await startRemote({ streaming: false, behaviour: 'echo' });
    // The plane's own client, through the plane's netguard: nothing is allowed.
    const p = await testPlane({ dataDir: tempDataDir('ap-a2a-netguard-'), agents: [caller(remote.cardUrl)] });
    planes.push(p);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
    expect(run.outcome).toBe('failed');
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aCardUnreachable' } });
    expect(JSON.stringify(failed?.body)).toContain(`netguard refused ${remote.origin}`);
    expect(remote.methods).toEqual([]);

    // The card's origin is allowed; the interface it names (the other server) is not.
    const inner = await startRemote({ streaming: false, behaviour: 'echo' });
    const outer = await startRemote({ streaming: false, behaviour: 'echo', interfaceUrl: `${inner.origin}/rpc` });
    const q = await plane(outer.cardUrl);
    const second = await call(q, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
    const refused = (await a2aRecords(q, second.runId)).find((r) => r.kind === 'EffectFailed');
    expect(refused?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aUnreachable' } });
    expect(JSON.stringify(refused?.body)).toContain(`netguard refused ${inner.origin}`);
    expect(outer.methods).toEqual(['GET card']);
    expect(inner.methods).toEqual([]);
  });

  it('a SendMessage whose connection was refused did not happen', async () => {
    const p = await plane('http://127.0.0.1:1/.well-known/agent-card.json');
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aCardUnreachable' } });
  });
});
