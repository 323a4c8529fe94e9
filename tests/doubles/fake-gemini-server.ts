/**
 * A wire-faithful fake Gemini API server for tests (never imported by production code). It
 * listens on 127.0.0.1, port 0, and answers `POST /v1beta/models/{model}:generateContent` and
 * `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` the way the Generative Language
 * API does: GenerateContentResponse documents (candidates[].content.parts, finishReason,
 * promptFeedback, usageMetadata, modelVersion, responseId), and for the stream one partial
 * GenerateContentResponse per SSE `data:` frame, CRLF-framed, with usageMetadata on every chunk
 * (running totals) and no terminal sentinel: the stream simply ends after the chunk carrying
 * finishReason. Errors use Google's shape {error: {code, message, status, details}}.
 *
 * The behaviour is the model named in the path (e.g. `models/tool-call:generateContent`), or the
 * `x-fake-behaviour` header, else `ok`. Every request is recorded (method, url with its query,
 * headers, parsed body) so tests can assert what the driver put on the wire: the key in the
 * `x-goog-api-key` header and never `?key=` in the URL, the tools shape, continuation parts
 * sent back verbatim, functionResponse turns.
 */
import { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { type FakeRefusal, presented } from './fake-busy';

export const FAKE_GEMINI_BEHAVIOURS = [
  /** A whole answer in three chunks, usage on each (running), finish STOP. */
  'ok',
  /** A thinking model: a thought part (excluded from text), a signed text part, thoughtsTokenCount. */
  'thinking',
  /** Two parallel function calls without ids (the first carrying a thoughtSignature), finish STOP. */
  'tool-call',
  /** One function call with Gemini's own id. */
  'tool-call-ids',
  /**
   * A tool loop in two turns. While the last turn holds no functionResponse: one call (no id)
   * of the first declared function, carrying a thoughtSignature, each property its schema
   * requires set to FAKE_TOOL_ARGUMENT. Once it does: text FAKE_TOOL_ANSWER_PREFIX + that
   * response's `content`; but a 400 (Gemini 3's words) when the model turn before it does not
   * carry the call with its thoughtSignature exactly as sent (the continuation was lost).
   */
  'tool-then-answer',
  /** Prompt-cache hit: cachedContentTokenCount inside promptTokenCount. */
  'cached',
  /** Cut by the length limit: finish MAX_TOKENS. */
  'length',
  /** Some text, then finish SAFETY. */
  'safety',
  /** promptFeedback.blockReason: refused before generation, no candidates. */
  'blocked',
  /** finish MALFORMED_FUNCTION_CALL with a finishMessage, usage reported. */
  'malformed-call',
  /** 400 INVALID_ARGUMENT. */
  'bad-request',
  /** 400 INVALID_ARGUMENT "API key not valid" (what Google answers a bad key). */
  'bad-key',
  /** 401 UNAUTHENTICATED whose message echoes the presented key, as careless proxies do. */
  'unauthorized',
  /** 403 PERMISSION_DENIED. */
  'forbidden',
  /** 404 NOT_FOUND for the model. */
  'not-found',
  /** 429 RESOURCE_EXHAUSTED with a google.rpc.RetryInfo retryDelay of 7s and no Retry-After header. */
  'rate-limited',
  /** 429 RESOURCE_EXHAUSTED with `Retry-After: 2`. */
  'rate-limited-header',
  /** 500 INTERNAL. */
  'server-error',
  /** 503 UNAVAILABLE (overloaded) with `Retry-After: 1`. */
  'overloaded',
  /** 307 elsewhere. */
  'redirect',
  /** 400 whose message echoes every text part of the request verbatim. */
  'echo-prompt',
  /** Streaming: two text chunks with usage, then the socket destroyed (no finish). Non-streaming: JSON cut one byte short. */
  'cut-after-usage',
  /** Streaming: text chunks WITHOUT usageMetadata, then the socket destroyed. Non-streaming: half the JSON. */
  'cut-no-usage',
  /** Streaming: a text chunk with usage, then half of a functionCall chunk's frame, then the socket destroyed. */
  'cut-mid-function-call',
  /** Status line and headers, then the socket destroyed. */
  'cut-before-content',
  /** Streaming: a text chunk with usage, then an `error` object as a data frame, then the end. */
  'error-mid-stream',
  /** Streaming: chunks with usage, then a clean end of stream without any finishReason. */
  'end-without-finish',
  /** Streaming: a text chunk with usage, then silence, connection held open. */
  'stall-after-content',
  /** Never answers at all. */
  'hang',
  /** A body of FAKE_GEMINI_OVERSIZE_BYTES. */
  'oversized',
  /** FAKE_LONG_DELTAS.length chunks of one text part each, running usage, finish STOP on the last (bench/providers.bench.ts). */
  'long-stream',
] as const;
export type FakeGeminiBehaviour = (typeof FAKE_GEMINI_BEHAVIOURS)[number];

export const FAKE_GEMINI_MODEL_VERSION = 'gemini-fake-2.5-flash-001';
export const FAKE_GEMINI_DELTAS = ['Hello', ' from the', ' fake Gemini.'];
export const FAKE_GEMINI_ANSWER = FAKE_GEMINI_DELTAS.join('');
export const FAKE_THOUGHT_SIGNATURE = 'CiQB0e2Kb7fake+thought/signature==';
export const FAKE_GEMINI_OVERSIZE_BYTES = 64 * 1024;
/** `tool-then-answer`: the value of every required property of the call's args. */
export const FAKE_TOOL_ARGUMENT = 'ping from the model';
/** `tool-then-answer`: the second turn's text is this, then the functionResponse's content. */
export const FAKE_TOOL_ANSWER_PREFIX = 'The tool said: ';
/** `long-stream`'s deltas: a long answer of short text deltas, as a model streams token by token (the driver benchmark). */
export const FAKE_LONG_DELTAS: readonly string[] = Array.from({ length: 2000 }, (_, i) => (i === 0 ? 'Token' : ` t${i % 100}`));
/** Final usage of `ok` (and of every whole answer unless stated). */
export const FAKE_GEMINI_USAGE = { promptTokenCount: 31, candidatesTokenCount: 9, totalTokenCount: 40 } as const;

export interface RecordedGeminiRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  /** The model segment of the path. */
  model: string;
  action: 'generateContent' | 'streamGenerateContent' | string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeGeminiServer {
  /** Base URL including `/v1beta`, as a driver's baseUrl. */
  baseUrl: string;
  requests: RecordedGeminiRequest[];
  /** Refusals served one per request, in order, before the behaviour answers (see fake-busy.ts). */
  busy: FakeRefusal[];
  close(): Promise<void>;
}

interface Exchange {
  request: FastifyRequest;
  reply: FastifyReply;
  body: Record<string, unknown>;
  streaming: boolean;
}

export async function startFakeGeminiServer(): Promise<FakeGeminiServer> {
  const app = Fastify({ forceCloseConnections: true, logger: false });
  const requests: RecordedGeminiRequest[] = [];
  const busy: FakeRefusal[] = [];
  let sequence = 0;

  app.post('/v1beta/models/*', async (request, reply) => {
    const tail = (request.params as { '*': string })['*'];
    const colon = tail.lastIndexOf(':');
    const model = decodeURIComponent(colon < 0 ? tail : tail.slice(0, colon));
    const action = colon < 0 ? '' : tail.slice(colon + 1);
    requests.push({ method: request.method, url: request.url, model, action, headers: { ...request.headers }, body: request.body });
    const query = request.query as Record<string, unknown>;
    if (action !== 'generateContent' && action !== 'streamGenerateContent') {
      return reply.code(404).send(googleError(404, `Method not found: ${action}`, 'NOT_FOUND'));
    }
    const refusal = busy.shift();
    if (refusal) return refuse(refusal, request, reply);
    const streaming = action === 'streamGenerateContent';
    if (streaming && query.alt !== 'sse') {
      // Without alt=sse the real API streams one JSON array; this fake only speaks SSE.
      return reply.code(400).send(googleError(400, 'This fake only streams with alt=sse.', 'INVALID_ARGUMENT'));
    }
    if (!request.headers['x-goog-api-key']) {
      return reply.code(403).send(googleError(403, 'Method doesn\'t allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.', 'PERMISSION_DENIED'));
    }
    const header = request.headers['x-fake-behaviour'];
    const named = Array.isArray(header) ? header[0] : (header ?? model);
    const behaviour = (FAKE_GEMINI_BEHAVIOURS as readonly unknown[]).includes(named) ? (named as FakeGeminiBehaviour) : 'ok';
    sequence += 1;
    return answer(behaviour, { request, reply, body: (request.body ?? {}) as Record<string, unknown>, streaming }, `fake-response-${sequence}`);
  });
  app.post('/v1beta/elsewhere', async () => ({ candidates: [] }));

  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { baseUrl: `${url}/v1beta`, requests, busy, close: () => app.close() };
}

// ---- scripted answers ----

type Part = Record<string, unknown>;
interface Chunk {
  parts?: Part[];
  finishReason?: string;
  finishMessage?: string;
  usage?: Record<string, number> | null;
}

const running = (candidates: number, extra: Record<string, number> = {}) => ({
  promptTokenCount: 31,
  candidatesTokenCount: candidates,
  totalTokenCount: 31 + candidates + (extra.thoughtsTokenCount ?? 0),
  ...extra,
});

function script(behaviour: FakeGeminiBehaviour): Chunk[] {
  switch (behaviour) {
    case 'thinking':
      return [
        { parts: [{ text: 'Weighing the invoice first.', thought: true }], usage: running(0, { thoughtsTokenCount: 120 }) },
        { parts: [{ text: FAKE_GEMINI_DELTAS[0], thoughtSignature: FAKE_THOUGHT_SIGNATURE }], usage: running(2, { thoughtsTokenCount: 120 }) },
        { parts: [{ text: FAKE_GEMINI_DELTAS.slice(1).join('') }], finishReason: 'STOP', usage: running(9, { thoughtsTokenCount: 120 }) },
      ];
    case 'tool-call':
      return [
        {
          parts: [
            { functionCall: { name: 'lookup_invoice', args: { number: 'INV-1', strict: true } }, thoughtSignature: FAKE_THOUGHT_SIGNATURE },
            { functionCall: { name: 'fx_rate', args: { from: 'EUR', to: 'USD' } } },
          ],
          finishReason: 'STOP',
          usage: running(18),
        },
      ];
    case 'tool-call-ids':
      return [{ parts: [{ functionCall: { id: 'gfc-abc123', name: 'lookup_invoice', args: { number: 'INV-2' } } }], finishReason: 'STOP', usage: running(11) }];
    case 'cached':
      return [{ parts: [{ text: FAKE_GEMINI_ANSWER }], finishReason: 'STOP', usage: { ...running(9), cachedContentTokenCount: 24 } }];
    case 'length':
      return [
        { parts: [{ text: FAKE_GEMINI_DELTAS[0] }], usage: running(2) },
        { parts: [{ text: FAKE_GEMINI_DELTAS[1] }], finishReason: 'MAX_TOKENS', usage: running(4) },
      ];
    case 'safety':
      return [
        { parts: [{ text: FAKE_GEMINI_DELTAS[0] }], usage: running(2) },
        { finishReason: 'SAFETY', usage: running(2) },
      ];
    case 'malformed-call':
      return [{ finishReason: 'MALFORMED_FUNCTION_CALL', finishMessage: 'Malformed function call: call:lookup_invoice{number:', usage: running(14) }];
    case 'long-stream':
      return FAKE_LONG_DELTAS.map((text, i) => ({ parts: [{ text }], usage: running(i + 1), ...(i === FAKE_LONG_DELTAS.length - 1 ? { finishReason: 'STOP' } : {}) }));
    case 'end-without-finish':
      return FAKE_GEMINI_DELTAS.slice(0, 2).map((text, i) => ({ parts: [{ text }], usage: running(2 * (i + 1)) }));
    default:
      return [
        { parts: [{ text: FAKE_GEMINI_DELTAS[0] }], usage: running(2) },
        { parts: [{ text: FAKE_GEMINI_DELTAS[1] }], usage: running(5) },
        { parts: [{ text: FAKE_GEMINI_DELTAS[2] }], finishReason: 'STOP', usage: running(9) },
      ];
  }
}

type Content = { role?: unknown; parts?: unknown };
const partsOf = (content: Content | undefined): Part[] => (Array.isArray(content?.parts) ? (content.parts as Part[]) : []);
const contentsOf = (body: Record<string, unknown>): Content[] => (Array.isArray(body.contents) ? (body.contents as Content[]) : []);

/** The functionResponse parts of the request's last turn (none unless it answers calls). */
function lastFunctionResponses(body: Record<string, unknown>): Record<string, unknown>[] {
  const contents = contentsOf(body);
  return partsOf(contents[contents.length - 1]).flatMap((part) => (part.functionResponse && typeof part.functionResponse === 'object' ? [part.functionResponse as Record<string, unknown>] : []));
}

/** `tool-then-answer`'s chunks: the call while no functionResponse came back, then the answer. */
function toolThenAnswer(body: Record<string, unknown>): Chunk[] {
  const response = lastFunctionResponses(body)[0];
  if (response) {
    const content = (response.response as { content?: unknown } | undefined)?.content;
    return [
      { parts: [{ text: FAKE_TOOL_ANSWER_PREFIX }], usage: running(4) },
      { parts: [{ text: typeof content === 'string' ? content : JSON.stringify(response.response) }], finishReason: 'STOP', usage: running(12) },
    ];
  }
  const tools = Array.isArray(body.tools) ? (body.tools as { functionDeclarations?: { name?: unknown; parameters?: { required?: unknown } }[] }[]) : [];
  const declared = tools[0]?.functionDeclarations?.[0];
  const required = Array.isArray(declared?.parameters?.required) ? (declared.parameters.required as unknown[]) : [];
  const args = Object.fromEntries(required.map((name) => [String(name), FAKE_TOOL_ARGUMENT]));
  return [{ parts: [{ functionCall: { name: String(declared?.name ?? 'no_tools_offered'), args }, thoughtSignature: FAKE_THOUGHT_SIGNATURE }], finishReason: 'STOP', usage: running(14) }];
}

/**
 * What Gemini 3 refuses in a conversation ending with function responses: a model turn before
 * them whose functionCall parts lost the thoughtSignature they came with. Null when acceptable.
 */
function signatureProblem(body: Record<string, unknown>): string | null {
  if (lastFunctionResponses(body).length === 0) return null;
  const contents = contentsOf(body);
  const previous = contents[contents.length - 2];
  const calls = previous?.role === 'model' ? partsOf(previous).filter((part) => part.functionCall) : [];
  const signed = calls.find((part) => part.thoughtSignature === FAKE_THOUGHT_SIGNATURE);
  if (signed) return null;
  const name = (calls[0]?.functionCall as { name?: unknown } | undefined)?.name;
  return `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${String(name)}\` , position ${contents.length - 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`;
}

function frameOf(chunk: Chunk, responseId: string): Record<string, unknown> {
  const candidate: Record<string, unknown> = { content: { parts: chunk.parts ?? [], role: 'model' }, index: 0 };
  if (!chunk.parts) delete candidate.content;
  if (chunk.finishReason) candidate.finishReason = chunk.finishReason;
  if (chunk.finishMessage) candidate.finishMessage = chunk.finishMessage;
  return {
    candidates: [candidate],
    ...(chunk.usage ? { usageMetadata: chunk.usage } : {}),
    modelVersion: FAKE_GEMINI_MODEL_VERSION,
    responseId,
  };
}

/** What generateContent answers for a whole script: the parts merged in order, the last finish and usage. */
function documentOf(chunks: Chunk[], responseId: string): Record<string, unknown> {
  const parts = chunks.flatMap((chunk) => chunk.parts ?? []);
  const last = chunks[chunks.length - 1] ?? {};
  return frameOf({ parts, finishReason: last.finishReason, finishMessage: last.finishMessage, usage: last.usage }, responseId);
}

async function answer(behaviour: FakeGeminiBehaviour, x: Exchange, responseId: string): Promise<unknown> {
  const { reply } = x;
  switch (behaviour) {
    case 'ok':
    case 'thinking':
    case 'tool-call':
    case 'tool-call-ids':
    case 'cached':
    case 'length':
    case 'safety':
    case 'malformed-call':
    case 'end-without-finish':
    case 'long-stream':
    case 'tool-then-answer': {
      const problem = behaviour === 'tool-then-answer' ? signatureProblem(x.body) : null;
      if (problem) return reply.code(400).send(googleError(400, problem, 'INVALID_ARGUMENT'));
      const chunks = behaviour === 'tool-then-answer' ? toolThenAnswer(x.body) : script(behaviour);
      if (!x.streaming) return documentOf(chunks, responseId);
      const raw = hijackStream(reply);
      writeFrames(raw, chunks.map((chunk) => frameOf(chunk, responseId)));
      raw.end();
      return reply;
    }
    case 'blocked': {
      const document = { promptFeedback: { blockReason: 'SAFETY', safetyRatings: [{ category: 'HARM_CATEGORY_DANGEROUS_CONTENT', probability: 'HIGH' }] }, usageMetadata: { promptTokenCount: 31, totalTokenCount: 31 }, modelVersion: FAKE_GEMINI_MODEL_VERSION, responseId };
      if (!x.streaming) return document;
      const raw = hijackStream(reply);
      writeFrames(raw, [document]);
      raw.end();
      return reply;
    }
    case 'bad-request':
      return reply.code(400).send(googleError(400, 'Invalid JSON payload received. Unknown name "additionalProperties" at \'tools[0].function_declarations[0].parameters\': Cannot find field.', 'INVALID_ARGUMENT'));
    case 'bad-key':
      return reply.code(400).send(googleError(400, 'API key not valid. Please pass a valid API key.', 'INVALID_ARGUMENT', [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID', domain: 'googleapis.com' }]));
    case 'unauthorized':
      return reply.code(401).send(googleError(401, `Request had invalid authentication credentials: ${String(x.request.headers['x-goog-api-key'])}.`, 'UNAUTHENTICATED'));
    case 'forbidden':
      return reply.code(403).send(googleError(403, 'Generative Language API has not been used in project 1234 before or it is disabled.', 'PERMISSION_DENIED'));
    case 'not-found':
      return reply.code(404).send(googleError(404, 'models/not-found is not found for API version v1beta, or is not supported for generateContent.', 'NOT_FOUND'));
    case 'rate-limited':
      return reply.code(429).send(
        googleError(429, 'You exceeded your current quota, please check your plan and billing details.', 'RESOURCE_EXHAUSTED', [
          { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests' }] },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' },
        ]),
      );
    case 'rate-limited-header':
      return reply.code(429).header('retry-after', '2').send(googleError(429, 'Resource has been exhausted (e.g. check quota).', 'RESOURCE_EXHAUSTED'));
    case 'server-error':
      return reply.code(500).send(googleError(500, 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting', 'INTERNAL'));
    case 'overloaded':
      return reply.code(503).header('retry-after', '1').send(googleError(503, 'The model is overloaded. Please try again later.', 'UNAVAILABLE'));
    case 'redirect':
      return reply.code(307).header('location', '/v1beta/elsewhere').send();
    case 'echo-prompt':
      return reply.code(400).send(googleError(400, `The input token count exceeds the maximum number of tokens allowed. Input: ${textsOf(x.body).join('\n')}`, 'INVALID_ARGUMENT'));
    case 'cut-after-usage': {
      const chunks = script('ok');
      if (!x.streaming) return cutDocument(x, JSON.stringify(documentOf(chunks, responseId)).slice(0, -1));
      const raw = hijackStream(reply);
      writeFrames(raw, chunks.slice(0, 2).map((chunk) => frameOf(chunk, responseId)), () => raw.socket?.destroy());
      return reply;
    }
    case 'cut-no-usage': {
      const chunks = script('ok').map((chunk) => ({ ...chunk, usage: null, finishReason: undefined }));
      if (!x.streaming) {
        const json = JSON.stringify(documentOf(script('ok'), responseId));
        return cutDocument(x, json.slice(0, Math.floor(json.length / 2)));
      }
      const raw = hijackStream(reply);
      writeFrames(raw, chunks.slice(0, 2).map((chunk) => frameOf(chunk, responseId)), () => raw.socket?.destroy());
      return reply;
    }
    case 'cut-mid-function-call': {
      const raw = hijackStream(reply);
      const first = `data: ${JSON.stringify(frameOf({ parts: [{ text: 'Looking it up.' }], usage: running(4) }, responseId))}\r\n\r\n`;
      const call = `data: ${JSON.stringify(frameOf({ parts: [{ functionCall: { name: 'lookup_invoice', args: { number: 'INV-3' } } }], finishReason: 'STOP', usage: running(15) }, responseId))}\r\n\r\n`;
      raw.write(first + call.slice(0, Math.floor(call.length / 2)), () => raw.socket?.destroy());
      return reply;
    }
    case 'cut-before-content': {
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, { 'content-type': x.streaming ? 'text/event-stream' : 'application/json; charset=UTF-8' });
      raw.flushHeaders();
      setImmediate(() => raw.socket?.destroy());
      return reply;
    }
    case 'error-mid-stream': {
      if (!x.streaming) return reply.code(503).send(googleError(503, 'The model is overloaded. Please try again later.', 'UNAVAILABLE'));
      const raw = hijackStream(reply);
      writeFrames(raw, [frameOf(script('ok')[0]!, responseId), googleError(503, 'The model is overloaded; generation stopped.', 'UNAVAILABLE')]);
      raw.end();
      return reply;
    }
    case 'stall-after-content': {
      if (!x.streaming) {
        reply.hijack();
        return reply;
      }
      const raw = hijackStream(reply);
      writeFrames(raw, [frameOf(script('ok')[0]!, responseId)]);
      return reply;
    }
    case 'hang':
      reply.hijack();
      return reply;
    case 'oversized': {
      const filler = 'x'.repeat(1024);
      const pieces: Chunk[] = [];
      for (let sent = 0; sent < FAKE_GEMINI_OVERSIZE_BYTES; sent += filler.length) pieces.push({ parts: [{ text: filler }], usage: running(pieces.length + 1) });
      pieces.push({ finishReason: 'STOP', usage: running(pieces.length) });
      if (!x.streaming) return documentOf(pieces, responseId);
      const raw = hijackStream(reply);
      // The first chunk alone, then the rest: a reader sees usage before the cap is crossed.
      const frames = pieces.map((chunk) => frameOf(chunk, responseId));
      writeFrames(raw, frames.slice(0, 1));
      setTimeout(() => {
        writeFrames(raw, frames.slice(1));
        raw.end();
      }, 50);
      return reply;
    }
  }
}

// ---- wire shapes ----

/** A queued refusal in Google's words: 429 RESOURCE_EXHAUSTED (with RetryInfo when given a retryDelay) or 503 UNAVAILABLE. */
function refuse(refusal: FakeRefusal, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const key = refusal.echoKey ? ` (key ${presented(request.headers['x-goog-api-key'])})` : '';
  const details = refusal.retryDelay ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: refusal.retryDelay }] : undefined;
  const error = refusal.status === 429 ? googleError(429, `Resource has been exhausted (e.g. check quota).${key}`, 'RESOURCE_EXHAUSTED', details) : googleError(refusal.status, `The model is overloaded. Please try again later.${key}`, 'UNAVAILABLE', details);
  return reply.code(refusal.status).headers(refusal.headers ?? {}).send(error);
}

function googleError(code: number, message: string, status: string, details?: unknown[]): Record<string, unknown> {
  return { error: { code, message, status, ...(details ? { details } : {}) } };
}

function textsOf(body: Record<string, unknown>): string[] {
  const out: string[] = [];
  const collect = (content: unknown) => {
    const parts = (content as { parts?: unknown } | undefined)?.parts;
    if (Array.isArray(parts)) for (const part of parts) if (typeof (part as { text?: unknown }).text === 'string') out.push((part as { text: string }).text);
  };
  collect(body.systemInstruction);
  if (Array.isArray(body.contents)) body.contents.forEach(collect);
  return out;
}

function hijackStream(reply: FastifyReply): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' });
  return raw;
}

/** SSE frames as Google writes them, `data: <json>\r\n\r\n`; `then` runs once they are flushed. */
function writeFrames(raw: ServerResponse, frames: object[], then?: () => void): void {
  const text = frames.map((frame) => `data: ${JSON.stringify(frame)}\r\n\r\n`).join('');
  if (then) raw.write(text, () => then());
  else raw.write(text);
}

function cutDocument(x: Exchange, text: string): FastifyReply {
  x.reply.hijack();
  const raw = x.reply.raw;
  raw.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
  raw.write(text, () => raw.socket?.destroy());
  return x.reply;
}
