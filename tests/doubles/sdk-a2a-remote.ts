/**
 * A remote A2A 1.0 agent made of the official @a2a-js/sdk 1.3 server: its DefaultRequestHandler
 * over an InMemoryTaskStore and its JsonRpcTransportHandler, with a scripted AgentExecutor,
 * mounted on node:http on 127.0.0.1 (the SDK's sample server mounts the handler on express,
 * which is not installed; express would add only body parsing and routing). The one test remote
 * of the A2A client's tests, so the wire they are judged against is the SDK's, written once.
 *
 * - The card is served at `/.well-known/agent-card.json` (signed with `sign`, and then tampered
 *   with if asked, or padded, or answered with a redirect to the metadata address); the JSON-RPC
 *   interface at `/rpc` (or wherever `interfaceUrl` says). A stream answer is written as SSE.
 * - A request without `A2A-Version: 1.0` is refused with the spec's -32009, as a 1.0 server must.
 * - What arrives is recorded: `methods` (in order, `GET card` for a card fetch), `received` (each
 *   SendMessage's first part: a data part its object, a text part `{text}`), `cancels`.
 * - The task: `complete` publishes the answer as one data artifact after `workMs` (default at
 *   once), `fail` a failed status with a text message, `forever` works until `release()` or a
 *   CancelTask, `message` answers with a message and makes no task.
 * - `refuseSend` answers every SendMessage with that JSON-RPC error instead (a plane's admission
 *   refusal, or a foreign server's look-alike); with `refuseSendTimes`, only the first that many. `sends` records each SendMessage as it arrived:
 *   its HTTP headers, and the message's `extensions` and `metadata` as the SDK parsed them.
 * - `holdCards()` keeps every later card answer until `releaseCards()`; `cardRequested()`
 *   resolves when the next card fetch has arrived (and is held, if holding), so a test can act
 *   while a caller's card fetch is in flight.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AgentCard } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, JsonRpcTransportHandler, ServerCallContext, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import type { PlaneKey } from '../../src-main/journal/plane-key';
import { signAgentCard } from '../../src-main/protocols/a2a/card-signature';

export type SdkRemoteBehaviour = 'complete' | 'fail' | 'forever' | 'message';

export interface SdkRemoteOptions {
  behaviour?: SdkRemoteBehaviour;
  /** Per input: a behaviour other than the default (e.g. fail when the input says so). */
  behaviourFor?: (input: unknown) => SdkRemoteBehaviour | undefined;
  /** How long `complete` and `fail` work before they end; default 0. */
  workMs?: number;
  /** The artifact's data value; default `{echoed: <input>, skill: <metadata.skill or null>}`. */
  answer?: (input: unknown, skill: unknown) => unknown;
  streaming?: boolean;
  name?: string;
  description?: string;
  skill?: string;
  sign?: PlaneKey;
  /** Changes the card after signing it: a signature that no longer verifies. */
  tamper?: boolean;
  /** Makes the card this many bytes larger (a documentationUrl of `x`s). */
  cardPadding?: number;
  /** Answers the card fetch with a 302 to the metadata address. */
  redirectCard?: boolean;
  port?: number;
  interfaceUrl?: string;
  /** Cuts every SubscribeToTask stream this long after it opened (a proxy with an idle limit). */
  cutSubscriptionsAfterMs?: number;
  /** Answers every SendMessage with this JSON-RPC error object ({code, message, data?}). */
  refuseSend?: Record<string, unknown>;
  /** Refuses only this many SendMessages, then serves the rest. */
  refuseSendTimes?: number;
}

/** One SendMessage as the remote received it. */
export interface SdkRemoteSend {
  messageId: string;
  headers: IncomingHttpHeaders;
  extensions: string[];
  metadata: unknown;
}

export interface SdkRemote {
  server: Server;
  origin: string;
  cardUrl: string;
  methods: string[];
  received: unknown[];
  cancels: string[];
  sends: SdkRemoteSend[];
  /** The messageId of each SendMessage refused by `refuseSend`, in order. */
  refusedIds: string[];
  /** Ends a `forever` task's work (it then completes). */
  release(): void;
  /** Holds every later card answer until releaseCards(). */
  holdCards(): void;
  releaseCards(): void;
  /** Resolves when the next card fetch arrives. */
  cardRequested(): Promise<void>;
  /** Serves the card signed by `key` from now on, or unsigned with null. */
  sign(key: PlaneKey | null): Promise<void>;
  close(): Promise<void>;
}

type Part = RequestContext['userMessage']['parts'][number];
const textPart = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: '' });

export async function startSdkRemote(options: SdkRemoteOptions = {}): Promise<SdkRemote> {
  const methods: string[] = [];
  const received: unknown[] = [];
  const cancels: string[] = [];
  const sends: SdkRemoteSend[] = [];
  const refusedIds: string[] = [];
  let refused = 0;
  const headersOf = new Map<string, IncomingHttpHeaders>();
  const releases = new Set<() => void>();
  let heldCards: Array<() => void> | null = null;
  let cardWaiters: Array<() => void> = [];
  const answer = options.answer ?? ((input, skill) => ({ echoed: input, skill }));
  const executor: AgentExecutor = {
    async execute(ctx: RequestContext, bus: ExecutionEventBus) {
      const part = ctx.userMessage.parts[0]?.content;
      const input = part?.$case === 'data' ? part.value : part?.$case === 'text' ? { text: part.value } : null;
      received.push(input);
      sends.push({ messageId: ctx.userMessage.messageId, headers: headersOf.get(ctx.userMessage.messageId) ?? {}, extensions: [...ctx.userMessage.extensions], metadata: ctx.userMessage.metadata });
      const behaviour = options.behaviourFor?.(input) ?? options.behaviour ?? 'complete';
      if (behaviour === 'message') {
        bus.publish(AgentEvent.message({ messageId: 'm-1', contextId: ctx.contextId, taskId: '', role: 2, parts: [textPart(`hello, ${JSON.stringify(input)}`)], metadata: undefined, extensions: [], referenceTaskIds: [] }));
        bus.finished();
        return;
      }
      bus.publish(AgentEvent.task({ id: ctx.taskId, contextId: ctx.contextId, status: { state: 2, message: undefined, timestamp: undefined }, artifacts: [], history: [], metadata: undefined }));
      // The SDK reads the bus while execute runs: a task still working is an execute not returned.
      if (behaviour === 'forever') await new Promise<void>((resolve) => releases.add(resolve));
      else if (options.workMs) await new Promise((r) => setTimeout(r, options.workMs));
      // Cancelled meanwhile: cancelTask published the task's end.
      if (cancels.includes(ctx.taskId)) return;
      if (behaviour === 'fail') {
        const said = { messageId: 'm-fail', contextId: ctx.contextId, taskId: ctx.taskId, role: 2, parts: [textPart('the remote agent gave up')], metadata: undefined, extensions: [], referenceTaskIds: [] };
        bus.publish(AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, status: { state: 4, message: said, timestamp: undefined }, metadata: undefined }));
      } else {
        bus.publish(
          AgentEvent.artifactUpdate({
            taskId: ctx.taskId,
            contextId: ctx.contextId,
            artifact: { artifactId: 'a1', name: 'answer', description: '', parts: [{ content: { $case: 'data', value: answer(input, ctx.userMessage.metadata?.skill ?? null) as never }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [] },
            append: false,
            lastChunk: true,
            metadata: undefined,
          }),
        );
        bus.publish(AgentEvent.statusUpdate({ taskId: ctx.taskId, contextId: ctx.contextId, status: { state: 3, message: undefined, timestamp: undefined }, metadata: undefined }));
      }
      bus.finished();
    },
    async cancelTask(taskId: string, bus: ExecutionEventBus) {
      cancels.push(taskId);
      for (const release of releases) release();
      releases.clear();
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: 5, message: undefined, timestamp: undefined }, metadata: undefined }));
      bus.finished();
    },
  };

  const server = createServer();
  await new Promise<void>((r) => server.listen(options.port ?? 0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const skill = options.skill ?? 'echo';
  const plain: Record<string, unknown> = {
    name: options.name ?? 'echo',
    description: options.description ?? 'echoes its input',
    version: '1.0.0',
    supportedInterfaces: [{ url: options.interfaceUrl ?? `${origin}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: options.streaming ?? false },
    defaultInputModes: ['application/json', 'text/plain'],
    defaultOutputModes: ['application/json'],
    skills: [{ id: skill, name: skill, description: skill, tags: [skill] }],
  };
  const served = async (key: PlaneKey | undefined): Promise<Record<string, unknown>> => {
    let card = key ? await signAgentCard(plain, key) : { ...plain };
    if (key && options.tamper) card = { ...card, description: 'a description the signer never saw' };
    if (options.cardPadding) card = { ...card, documentationUrl: `https://example.com/${'x'.repeat(options.cardPadding)}` };
    return card;
  };
  let cardJson = await served(options.sign);
  const transport = new JsonRpcTransportHandler(new DefaultRequestHandler(AgentCard.fromJSON(plain), new InMemoryTaskStore(), executor));

  server.on('request', (req, res) => {
    if (req.method === 'GET') {
      if (req.url !== '/.well-known/agent-card.json') {
        res.writeHead(404).end();
        return;
      }
      methods.push('GET card');
      for (const wake of cardWaiters.splice(0)) wake();
      void (async () => {
        if (heldCards) await new Promise<void>((resolve) => heldCards!.push(resolve));
        if (options.redirectCard) {
          res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(cardJson));
      })();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; method: string; params?: { message?: { messageId?: string } } };
        methods.push(body.method);
        if (body.method === 'SendMessage' && options.refuseSend && refused++ < (options.refuseSendTimes ?? Infinity)) {
          refusedIds.push(body.params?.message?.messageId ?? '');
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id ?? null, error: options.refuseSend }));
          return;
        }
        const messageId = body.params?.message?.messageId;
        if (typeof messageId === 'string') headersOf.set(messageId, req.headers);
        if (req.headers['a2a-version'] !== '1.0') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32009, message: 'A2A-Version 1.0 required' } }));
          return;
        }
        const result = await transport.handle(body, new ServerCallContext({ requestedVersion: '1.0' }));
        if (result && typeof (result as AsyncGenerator)[Symbol.asyncIterator] === 'function') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          if (body.method === 'SubscribeToTask' && options.cutSubscriptionsAfterMs !== undefined) setTimeout(() => res.destroy(), options.cutSubscriptionsAfterMs);
          try {
            for await (const event of result as AsyncGenerator) res.write(`data: ${JSON.stringify(event)}\n\n`);
          } finally {
            res.end();
          }
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
      })();
    });
  });

  const remote: SdkRemote = {
    server,
    origin,
    cardUrl: `${origin}/.well-known/agent-card.json`,
    methods,
    received,
    cancels,
    sends,
    refusedIds,
    release() {
      for (const release of releases) release();
      releases.clear();
    },
    holdCards() {
      heldCards = [];
    },
    releaseCards() {
      const waiting = heldCards ?? [];
      heldCards = null;
      for (const go of waiting) go();
    },
    cardRequested() {
      return new Promise((resolve) => cardWaiters.push(resolve));
    },
    async sign(key) {
      cardJson = await served(key ?? undefined);
    },
    async close() {
      remote.releaseCards();
      cardWaiters = [];
      // An SSE answer the client dropped is still open on this side: close it rather than wait.
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  return remote;
}
