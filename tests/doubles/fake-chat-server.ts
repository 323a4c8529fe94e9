/**
 * A wire-faithful fake Chat Completions server for tests (never imported by production code).
 * It listens on 127.0.0.1, port 0, and answers `POST /v1/chat/completions` the way OpenAI's
 * wire does (same JSON shapes, same SSE framing, `stream_options.include_usage` honoured, the
 * usage chunk with empty `choices` before `data: [DONE]`), with a scripted behaviour chosen per
 * request: the `x-fake-behaviour` header if present, else the request's `model` when it names
 * a behaviour, else `ok`. Streaming or not follows the request's `stream` field.
 *
 * Every request is recorded (method, path, headers, parsed body) so tests can assert what the
 * driver put on the wire. Usage numbers are constants so tests can assert them exactly.
 */
import { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { type FakeRefusal, openAiRefusalBody } from './fake-busy';

export const FAKE_BEHAVIOURS = [
  /** A whole answer: FAKE_ANSWER, finish `stop`, FAKE_USAGE. */
  'ok',
  /** Cut by the length limit: FAKE_LENGTH_ANSWER, finish `length`. */
  'length',
  /** A reasoning model: completion_tokens includes completion_tokens_details.reasoning_tokens. */
  'reasoning',
  /** 400 invalid_request_error. */
  'bad-request',
  /** 401 whose message echoes the presented Authorization header, as careless servers do. */
  'unauthorized',
  /** 404 model_not_found. */
  'not-found',
  /** 429 with `Retry-After: 2`. */
  'rate-limited',
  /** 500. */
  'server-error',
  /** 503 with `Retry-After: 1`. */
  'overloaded',
  /** 307 to /v1/elsewhere (which answers `ok` if anyone follows). */
  'redirect',
  /** 400 whose error message echoes every message content verbatim. */
  'echo-prompt',
  /** Streaming: content, finish and the usage chunk, then the socket is destroyed before [DONE]. Non-streaming: the JSON cut before its last byte. */
  'cut-after-usage',
  /** Some content, then the socket is destroyed (no finish, no usage). Non-streaming: half the JSON. */
  'cut-after-content',
  /** Status line and headers (streaming: the role chunk with empty content), then the socket is destroyed. */
  'cut-before-content',
  /** Streaming: content, then an `error` event, then [DONE] (vLLM, OpenRouter style). */
  'error-mid-stream',
  /** Streaming: content then silence, connection held open (for the deadline). */
  'stall-after-content',
  /** Never answers at all. */
  'hang',
  /** A whole answer without usage: ignores include_usage (streaming) and omits usage (not). */
  'no-usage',
  /** Answers one JSON document even when asked to stream. */
  'ignores-stream',
  /** A body of FAKE_OVERSIZE_BYTES sent chunked, without Content-Length. */
  'oversized',
  /** A body of FAKE_OVERSIZE_BYTES with Content-Length declared. */
  'oversized-declared',
  /** Like `ok`, with FAKE_LONG_DELTAS.length content chunks (bench/providers.bench.ts). */
  'long-stream',
  /** Streaming: FAKE_SLOW_DELTAS, one chunk every FAKE_SLOW_DELTA_MS, as a model typing (live streaming in the UI); not streaming: like `ok` with that text. */
  'slow-stream',
  /** Calls the first offered tool with FAKE_TOOL_ARGS (streamed: id and name once, arguments in fragments), finish `tool_calls`. */
  'tool-call',
  /** Like `tool-call` until the last message is a `tool` result; then answers FAKE_TOOL_ANSWER_PREFIX + that result's content. */
  'tool-then-answer',
  /** Two calls to the first offered tool in one answer (indexes 0 and 1, interleaved when streamed). */
  'two-tool-calls',
  /** Calls a tool nobody offered: `no_such_tool`. */
  'unknown-tool',
  /** A tool call whose arguments are not JSON, then finish and usage. */
  'bad-tool-args',
  /** Streaming: a tool call whose argument fragments stop half way, then the socket is destroyed (no usage). */
  'cut-mid-tool-args',
] as const;
export type FakeBehaviour = (typeof FAKE_BEHAVIOURS)[number];

export const FAKE_MODEL = 'fake-model-2025-01-01';
export const FAKE_ANSWER_DELTAS = ['Hello', ' from', ' the', ' fake', ' chat', ' server', '.'];
export const FAKE_ANSWER = FAKE_ANSWER_DELTAS.join('');
export const FAKE_LENGTH_ANSWER = FAKE_ANSWER_DELTAS.slice(0, 3).join('');
export const FAKE_USAGE = { prompt_tokens: 21, completion_tokens: 7, total_tokens: 28 } as const;
export const FAKE_LENGTH_USAGE = { prompt_tokens: 21, completion_tokens: 3, total_tokens: 24 } as const;
export const FAKE_REASONING_USAGE = { prompt_tokens: 21, completion_tokens: 30, total_tokens: 51, completion_tokens_details: { reasoning_tokens: 23 } } as const;
export const FAKE_OVERSIZE_BYTES = 64 * 1024;
export const FAKE_TOOL_ARGS = { text: 'ping from the model', count: 2 } as const;
export const FAKE_TOOL_USAGE = { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 } as const;
export const FAKE_TOOL_ANSWER_PREFIX = 'The tool said: ';
/** `long-stream`'s deltas: a long answer of short text deltas, as a model streams token by token (the driver benchmark). */
export const FAKE_LONG_DELTAS: readonly string[] = Array.from({ length: 2000 }, (_, i) => (i === 0 ? 'Token' : ` t${i % 100}`));
/** `slow-stream`'s deltas: forty words, numbered so a test can tell how far the answer had got. */
export const FAKE_SLOW_DELTAS: readonly string[] = Array.from({ length: 40 }, (_, i) => `${i === 0 ? '' : ' '}word${i + 1}`);
export const FAKE_SLOW_DELTA_MS = 75;

export interface RecordedChatRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeChatServer {
  /** Base URL including `/v1`, as a driver's baseUrl. */
  baseUrl: string;
  /** `127.0.0.1:port`, for tests that need the bare address. */
  address: string;
  requests: RecordedChatRequest[];
  /** Refusals served one per request, in order, before the behaviour answers (see fake-busy.ts). */
  busy: FakeRefusal[];
  close(): Promise<void>;
}

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  tools?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown };
}

export async function startFakeChatServer(): Promise<FakeChatServer> {
  // forceCloseConnections: hung and stalled answers must not hold close() open.
  const app = Fastify({ forceCloseConnections: true, logger: false });
  const requests: RecordedChatRequest[] = [];
  const busy: FakeRefusal[] = [];
  let sequence = 0;

  const record = (request: FastifyRequest) => {
    requests.push({ method: request.method, path: request.url, headers: { ...request.headers }, body: request.body });
  };

  app.post('/v1/chat/completions', async (request, reply) => {
    record(request);
    const refusal = busy.shift();
    if (refusal) return reply.code(refusal.status).headers(refusal.headers ?? {}).send(openAiRefusalBody(refusal, request.headers));
    const body = (request.body ?? {}) as ChatBody;
    const id = `chatcmpl-fake-${++sequence}`;
    const behaviour = behaviourOf(request.headers['x-fake-behaviour'], body.model);
    const streaming = body.stream === true;
    const withUsage = streaming && body.stream_options?.include_usage === true;
    return answer(behaviour, { id, request, reply, body, streaming, withUsage });
  });
  app.post('/v1/elsewhere', async (request) => {
    record(request);
    return completionDocument('chatcmpl-fake-elsewhere', FAKE_ANSWER, 'stop', FAKE_USAGE);
  });

  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    baseUrl: `${url}/v1`,
    address: url.replace(/^http:\/\//, ''),
    requests,
    busy,
    close: () => app.close(),
  };
}

function behaviourOf(header: string | string[] | undefined, model: unknown): FakeBehaviour {
  const named = Array.isArray(header) ? header[0] : (header ?? model);
  return (FAKE_BEHAVIOURS as readonly unknown[]).includes(named) ? (named as FakeBehaviour) : 'ok';
}

interface Exchange {
  id: string;
  request: FastifyRequest;
  reply: FastifyReply;
  body: ChatBody;
  streaming: boolean;
  withUsage: boolean;
}

async function answer(behaviour: FakeBehaviour, x: Exchange): Promise<unknown> {
  const { reply } = x;
  switch (behaviour) {
    case 'ok':
    case 'length':
    case 'reasoning':
    case 'no-usage':
    case 'long-stream': {
      const deltas = behaviour === 'length' ? FAKE_ANSWER_DELTAS.slice(0, 3) : behaviour === 'long-stream' ? FAKE_LONG_DELTAS : FAKE_ANSWER_DELTAS;
      const finish = behaviour === 'length' ? 'length' : 'stop';
      const usage = behaviour === 'no-usage' ? null : behaviour === 'length' ? FAKE_LENGTH_USAGE : behaviour === 'reasoning' ? FAKE_REASONING_USAGE : FAKE_USAGE;
      if (!x.streaming) return completionDocument(x.id, deltas.join(''), finish, usage);
      const raw = hijackStream(reply);
      writeFrames(raw, [roleChunk(x.id), ...deltas.map((d) => contentChunk(x.id, d)), finishChunk(x.id, finish), ...(x.withUsage && usage ? [usageChunk(x.id, usage)] : [])]);
      raw.end('data: [DONE]\n\n');
      return reply;
    }
    case 'ignores-stream':
      return completionDocument(x.id, FAKE_ANSWER, 'stop', FAKE_USAGE);
    case 'bad-request':
      return reply.code(400).send(errorDocument("Invalid value for 'temperature': must be between 0 and 2.", 'invalid_request_error', 'invalid_value'));
    case 'unauthorized':
      return reply.code(401).send(errorDocument(`Incorrect API key provided: ${String(x.request.headers.authorization ?? '').replace(/^Bearer /, '')}.`, 'invalid_request_error', 'invalid_api_key'));
    case 'not-found':
      return reply.code(404).send(errorDocument(`The model \`${String(x.body.model)}\` does not exist or you do not have access to it.`, 'invalid_request_error', 'model_not_found'));
    case 'rate-limited':
      return reply.code(429).header('retry-after', '2').send(errorDocument('Rate limit reached for requests. Please try again in 2s.', 'requests', 'rate_limit_exceeded'));
    case 'server-error':
      return reply.code(500).send(errorDocument('The server had an error while processing your request. Sorry about that!', 'server_error', null));
    case 'overloaded':
      return reply.code(503).header('retry-after', '1').send(errorDocument('The engine is currently overloaded, please try again later.', 'server_error', null));
    case 'redirect':
      return reply.code(307).header('location', '/v1/elsewhere').send();
    case 'echo-prompt': {
      const contents = Array.isArray(x.body.messages) ? x.body.messages.map((m) => String((m as { content?: unknown }).content)) : [];
      return reply.code(400).send(errorDocument(`This model's maximum context length is 8 tokens. However, your messages resulted in 21 tokens. Messages: ${contents.join('\n')}`, 'invalid_request_error', 'context_length_exceeded'));
    }
    case 'cut-after-usage': {
      if (!x.streaming) return cutDocument(x, FAKE_USAGE, (json) => json.slice(0, -1));
      const raw = hijackStream(reply);
      writeFrames(raw, [roleChunk(x.id), ...FAKE_ANSWER_DELTAS.map((d) => contentChunk(x.id, d)), finishChunk(x.id, 'stop'), ...(x.withUsage ? [usageChunk(x.id, FAKE_USAGE)] : [])], () => raw.socket?.destroy());
      return reply;
    }
    case 'cut-after-content': {
      if (!x.streaming) return cutDocument(x, FAKE_USAGE, (json) => json.slice(0, Math.floor(json.length / 2)));
      const raw = hijackStream(reply);
      writeFrames(raw, [roleChunk(x.id), ...FAKE_ANSWER_DELTAS.slice(0, 3).map((d) => contentChunk(x.id, d))], () => raw.socket?.destroy());
      return reply;
    }
    case 'cut-before-content': {
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, { 'content-type': x.streaming ? 'text/event-stream' : 'application/json' });
      raw.flushHeaders();
      if (x.streaming) writeFrames(raw, [roleChunk(x.id)], () => raw.socket?.destroy());
      else setImmediate(() => raw.socket?.destroy());
      return reply;
    }
    case 'error-mid-stream': {
      if (!x.streaming) return reply.code(500).send(errorDocument('overloaded', 'server_error', null));
      const raw = hijackStream(reply);
      writeFrames(raw, [roleChunk(x.id), ...FAKE_ANSWER_DELTAS.slice(0, 2).map((d) => contentChunk(x.id, d)), { error: { message: 'The model is overloaded; generation stopped.', type: 'server_error', code: 503 } }]);
      raw.end('data: [DONE]\n\n');
      return reply;
    }
    case 'slow-stream': {
      if (!x.streaming) return completionDocument(x.id, FAKE_SLOW_DELTAS.join(''), 'stop', FAKE_USAGE);
      const raw = hijackStream(reply);
      writeFrames(raw, [roleChunk(x.id)]);
      const frames = [...FAKE_SLOW_DELTAS.map((d) => contentChunk(x.id, d)), finishChunk(x.id, 'stop'), ...(x.withUsage ? [usageChunk(x.id, FAKE_USAGE)] : [])];
      const next = () => {
        if (raw.destroyed) return;
        const frame = frames.shift();
        if (!frame) return void raw.end('data: [DONE]\n\n');
        writeFrames(raw, [frame]);
        setTimeout(next, FAKE_SLOW_DELTA_MS);
      };
      setTimeout(next, FAKE_SLOW_DELTA_MS);
      return reply;
    }
    case 'stall-after-content': {
      const raw = hijackStream(reply);
      writeFrames(raw, [roleChunk(x.id), ...FAKE_ANSWER_DELTAS.slice(0, 2).map((d) => contentChunk(x.id, d))]);
      return reply;
    }
    case 'hang':
      reply.hijack();
      return reply;
    case 'tool-then-answer': {
      const messages = Array.isArray(x.body.messages) ? (x.body.messages as Record<string, unknown>[]) : [];
      const last = messages[messages.length - 1];
      if (last?.role === 'tool') {
        const text = FAKE_TOOL_ANSWER_PREFIX + String(last.content);
        if (!x.streaming) return completionDocument(x.id, text, 'stop', FAKE_USAGE);
        const raw = hijackStream(reply);
        writeFrames(raw, [roleChunk(x.id), contentChunk(x.id, text), finishChunk(x.id, 'stop'), ...(x.withUsage ? [usageChunk(x.id, FAKE_USAGE)] : [])]);
        raw.end('data: [DONE]\n\n');
        return reply;
      }
      return toolAnswer(x, [{ name: firstToolName(x.body), args: argsFor(x.body) }]);
    }
    case 'tool-call':
      return toolAnswer(x, [{ name: firstToolName(x.body), args: argsFor(x.body) }]);
    case 'two-tool-calls':
      return toolAnswer(x, [
        { name: firstToolName(x.body), args: argsFor(x.body) },
        { name: firstToolName(x.body), args: JSON.stringify({ text: 'second' }) },
      ]);
    case 'unknown-tool':
      return toolAnswer(x, [{ name: 'no_such_tool', args: '{}' }]);
    case 'bad-tool-args':
      return toolAnswer(x, [{ name: firstToolName(x.body), args: '{"text": "unterminated' }]);
    case 'cut-mid-tool-args': {
      if (!x.streaming) return cutDocument(x, FAKE_TOOL_USAGE, (json) => json.slice(0, Math.floor(json.length / 2)));
      const raw = hijackStream(reply);
      const args = JSON.stringify(FAKE_TOOL_ARGS);
      writeFrames(raw, [roleChunk(x.id), toolChunk(x.id, 0, 'call_fake_0', firstToolName(x.body), ''), toolChunk(x.id, 0, undefined, undefined, args.slice(0, 8))], () => raw.socket?.destroy());
      return reply;
    }
    case 'oversized':
    case 'oversized-declared': {
      const filler = 'x'.repeat(1024);
      if (behaviour === 'oversized-declared') {
        return reply.header('content-type', 'application/json').send(JSON.stringify(completionDocument(x.id, filler.repeat(FAKE_OVERSIZE_BYTES / 1024), 'stop', FAKE_USAGE)));
      }
      if (x.streaming) {
        const raw = hijackStream(reply);
        const frames: object[] = [roleChunk(x.id)];
        for (let sent = 0; sent < FAKE_OVERSIZE_BYTES; sent += filler.length) frames.push(contentChunk(x.id, filler));
        writeFrames(raw, [...frames, finishChunk(x.id, 'stop'), ...(x.withUsage ? [usageChunk(x.id, FAKE_USAGE)] : [])]);
        raw.end('data: [DONE]\n\n');
        return reply;
      }
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, { 'content-type': 'application/json' });
      raw.write(`{"id":"${x.id}","object":"chat.completion","created":1735689600,"model":"${FAKE_MODEL}","choices":[{"index":0,"message":{"role":"assistant","content":"`);
      for (let sent = 0; sent < FAKE_OVERSIZE_BYTES; sent += filler.length) raw.write(filler);
      raw.end(`"},"finish_reason":"stop"}],"usage":${JSON.stringify(FAKE_USAGE)}}`);
      return reply;
    }
  }
}

/**
 * Arguments for the first offered tool: FAKE_TOOL_ARGS, unless its schema requires properties,
 * then each required property set to FAKE_TOOL_ARGS.text (so an MCP tool such as `echo`, which
 * requires `message`, accepts the call).
 */
function argsFor(body: ChatBody): string {
  const tools = Array.isArray(body.tools) ? (body.tools as { function?: { parameters?: { required?: unknown } } }[]) : [];
  const required = tools[0]?.function?.parameters?.required;
  if (!Array.isArray(required) || required.length === 0) return JSON.stringify(FAKE_TOOL_ARGS);
  return JSON.stringify(Object.fromEntries(required.map((name) => [String(name), FAKE_TOOL_ARGS.text])));
}

/** The name of the first tool the request offered (`no_tools_offered` when none). */
function firstToolName(body: ChatBody): string {
  const tools = Array.isArray(body.tools) ? (body.tools as { function?: { name?: unknown } }[]) : [];
  const name = tools[0]?.function?.name;
  return typeof name === 'string' ? name : 'no_tools_offered';
}

/**
 * An answer that calls tools, finish `tool_calls`, content null. Non-streaming: `message.tool_calls`
 * with whole argument strings. Streaming, as OpenAI sends it: the first delta of each call has its
 * index, id, type and name with empty arguments, then argument fragments keyed by index only;
 * calls interleave when there are several.
 */
function toolAnswer(x: Exchange, calls: { name: string; args: string }[]): unknown {
  const ids = calls.map((_, i) => `call_fake_${x.id.replace(/\D/g, '')}_${i}`);
  if (!x.streaming) {
    const document = completionDocument(x.id, '', 'tool_calls', FAKE_TOOL_USAGE);
    (document.choices as Record<string, unknown>[])[0]!.message = {
      role: 'assistant',
      content: null,
      tool_calls: calls.map((call, i) => ({ id: ids[i], type: 'function', function: { name: call.name, arguments: call.args } })),
    };
    return document;
  }
  const frames: object[] = [roleChunk(x.id)];
  calls.forEach((call, i) => frames.push(toolChunk(x.id, i, ids[i], call.name, '')));
  for (let at = 0; calls.some((call) => at < call.args.length); at += 5) {
    calls.forEach((call, i) => {
      if (at < call.args.length) frames.push(toolChunk(x.id, i, undefined, undefined, call.args.slice(at, at + 5)));
    });
  }
  const raw = hijackStream(x.reply);
  writeFrames(raw, [...frames, finishChunk(x.id, 'tool_calls'), ...(x.withUsage ? [usageChunk(x.id, FAKE_TOOL_USAGE)] : [])]);
  raw.end('data: [DONE]\n\n');
  return x.reply;
}

// ---- wire shapes ----

function completionDocument(id: string, content: string, finish: string, usage: object | null): Record<string, unknown> {
  return {
    id,
    object: 'chat.completion',
    created: 1735689600,
    model: FAKE_MODEL,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: finish }],
    ...(usage ? { usage } : {}),
    system_fingerprint: 'fp_fake',
  };
}

function errorDocument(message: string, type: string, code: string | null): Record<string, unknown> {
  return { error: { message, type, param: null, code } };
}

function chunk(id: string, choices: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { id, object: 'chat.completion.chunk', created: 1735689600, model: FAKE_MODEL, system_fingerprint: 'fp_fake', choices, ...extra };
}

const roleChunk = (id: string) => chunk(id, [{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]);
const contentChunk = (id: string, content: string) => chunk(id, [{ index: 0, delta: { content }, logprobs: null, finish_reason: null }]);
const toolChunk = (id: string, index: number, callId: string | undefined, name: string | undefined, args: string) =>
  chunk(id, [{ index: 0, delta: { tool_calls: [{ index, ...(callId ? { id: callId, type: 'function' } : {}), function: { ...(name ? { name } : {}), arguments: args } }] }, logprobs: null, finish_reason: null }]);
const finishChunk = (id: string, finish: string) => chunk(id, [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }]);
/** With include_usage, the last chunk before [DONE] has empty choices and the usage. */
const usageChunk = (id: string, usage: object) => chunk(id, [], { usage });

function hijackStream(reply: FastifyReply): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return raw;
}

/** SSE frames, each `data: <json>\n\n`; `then` runs once they are flushed to the socket. */
function writeFrames(raw: ServerResponse, frames: object[], then?: () => void): void {
  const text = frames.map((frame) => `data: ${JSON.stringify(frame)}\n\n`).join('');
  if (then) raw.write(text, () => then());
  else raw.write(text);
}

/** A non-streaming answer whose JSON is sent chunked and cut, then the socket destroyed. */
function cutDocument(x: Exchange, usage: object, cut: (json: string) => string): FastifyReply {
  x.reply.hijack();
  const raw = x.reply.raw;
  raw.writeHead(200, { 'content-type': 'application/json' });
  raw.write(cut(JSON.stringify(completionDocument(x.id, FAKE_ANSWER, 'stop', usage))), () => raw.socket?.destroy());
  return x.reply;
}
