/**
 * A wire-faithful fake OpenAI Responses server for tests (never imported by production code).
 * It listens on 127.0.0.1, port 0, and answers `POST /v1/responses` the way OpenAI's wire does:
 * the same response object, the same SSE framing (`event: <type>` then `data: <json with the
 * same type and a sequence_number>`, no `[DONE]` sentinel: the stream ends after its terminal
 * `response.completed` / `response.incomplete` / `response.failed` event), usage only in that
 * terminal event's response, errors as `{error: {message, type, param, code}}`.
 *
 * The behaviour is scripted per request: the `x-fake-behaviour` header if present, else the
 * request's `model` when it names a behaviour, else `ok`. Streaming or not follows the
 * request's `stream` field. Every request is recorded (method, path, headers, parsed body) so
 * tests can assert what the driver put on the wire (store: false, include, tools, the
 * continuation items sent back verbatim, function_call_output). Usage numbers are constants so
 * tests can assert them exactly.
 *
 * Written from OpenAI's published Responses API reference and streaming-event list as known
 * to the author (the reference itself was not reachable from here); shapes not needed by the
 * driver (annotations, logprobs, the full echo of request parameters) are abbreviated.
 */
import { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { type FakeRefusal, openAiRefusalBody } from './fake-busy';

export const FAKE_RESPONSES_BEHAVIOURS = [
  /** A whole text answer: FAKE_TEXT, status completed, FAKE_TEXT_USAGE (with cached tokens). */
  'ok',
  /** `response.incomplete` with incomplete_details.reason max_output_tokens: a cut answer. */
  'length',
  /** A reasoning item (encrypted_content, a summary) then a function call streamed as argument deltas. */
  'tool-call',
  /**
   * A tool loop in two turns. While the input does not end with a function_call_output: a
   * reasoning item (encrypted_content) and a function call of the first offered tool (each
   * property its schema requires set to FAKE_TOOL_ARGUMENT). Once it does: text
   * FAKE_TOOL_ANSWER_PREFIX + that output; but a 400 (OpenAI's words) when the output answers
   * no function_call in the input, or that call came back without its reasoning item and
   * encrypted_content as sent (store: false keeps nothing server-side: the continuation must
   * be carried back verbatim).
   */
  'tool-then-answer',
  /** A function call whose arguments are not JSON (the model's fault, billed all the same). */
  'bad-arguments',
  /** The model refuses: a message whose content is a `refusal` part. */
  'refusal',
  /** `response.completed` whose response carries no usage. */
  'no-usage',
  /** 400 invalid_request_error. */
  'bad-request',
  /** 401 whose message echoes the presented key, as careless servers do. */
  'unauthorized',
  /** 429 with `Retry-After: 2`. */
  'rate-limited',
  /** 500 server_error. */
  'server-error',
  /** 400 whose message echoes every input text verbatim. */
  'echo-prompt',
  /** 307 to /v1/elsewhere (which answers `ok` if anyone follows). */
  'redirect',
  /** Streaming: created, text deltas, then `response.failed` (usage null). Non-streaming: a 200 document with status failed. */
  'failed-after-output',
  /** Streaming: created, then `response.failed` before any output. */
  'failed-before-output',
  /** Streaming: text deltas, then `response.failed` whose response reports usage (FAKE_LENGTH_USAGE). */
  'failed-with-usage',
  /** Streaming: text deltas, then the stream ends cleanly without any terminal event. */
  'ends-early',
  /** Streaming: text deltas, then an `error` event, then the stream ends. */
  'error-after-output',
  /** Streaming: created and in_progress, then the socket is destroyed. Non-streaming: headers, then destroyed. */
  'cut-before-output',
  /** Streaming: some text deltas, then the socket is destroyed. Non-streaming: half the JSON. */
  'cut-mid-text',
  /** Streaming: the function call item and part of its argument deltas, then the socket is destroyed. */
  'cut-mid-arguments',
  /** Streaming: text deltas, then silence with the connection held open (for the deadline). */
  'stall-after-output',
  /** Never answers at all. */
  'hang',
  /** Answers one JSON document even when asked to stream. */
  'ignores-stream',
  /** Like `ok`, with FAKE_LONG_DELTAS.length output_text deltas (bench/providers.bench.ts). */
  'long-stream',
] as const;
export type FakeResponsesBehaviour = (typeof FAKE_RESPONSES_BEHAVIOURS)[number];

export const FAKE_RESPONSES_MODEL = 'gpt-fake-2025-08-07';
export const FAKE_TEXT_DELTAS = ['Invoice', ' looks', ' in', ' order', '.'];
export const FAKE_TEXT = FAKE_TEXT_DELTAS.join('');
export const FAKE_LENGTH_TEXT = FAKE_TEXT_DELTAS.slice(0, 2).join('');
export const FAKE_REFUSAL = 'I can’t help with that request.';
/** input_tokens includes cached_tokens; output_tokens includes reasoning_tokens (OpenAI's counting). */
export const FAKE_TEXT_USAGE = {
  input_tokens: 40,
  input_tokens_details: { cached_tokens: 16 },
  output_tokens: 5,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 45,
} as const;
export const FAKE_LENGTH_USAGE = {
  input_tokens: 40,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 2,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 42,
} as const;
export const FAKE_TOOL_USAGE = {
  input_tokens: 60,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 45,
  output_tokens_details: { reasoning_tokens: 30 },
  total_tokens: 105,
} as const;
export const FAKE_ENCRYPTED = 'gAAAAABo-fake-encrypted-reasoning-0f9e8d7c6b5a';
export const FAKE_CALL_ID = 'call_fake_7Hq2';
export const FAKE_TOOL_NAME = 'lookup_supplier';
export const FAKE_ARGUMENT_DELTAS = ['{"sup', 'plier":', ' "Kestrel', ' Foundry", ', '"year": 2025}'];
export const FAKE_ARGUMENTS = FAKE_ARGUMENT_DELTAS.join('');
/** `tool-then-answer`: the value of every required property of the call's arguments. */
export const FAKE_TOOL_ARGUMENT = 'ping from the model';
/** `tool-then-answer`: the second turn's text is this, then the function_call_output. */
export const FAKE_TOOL_ANSWER_PREFIX = 'The tool said: ';
/** `long-stream`'s deltas: a long answer of short text deltas, as a model streams token by token (the driver benchmark). */
export const FAKE_LONG_DELTAS: readonly string[] = Array.from({ length: 2000 }, (_, i) => (i === 0 ? 'Token' : ` t${i % 100}`));

export interface RecordedResponsesRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface FakeResponsesServer {
  /** Base URL including `/v1`, as a driver's baseUrl. */
  baseUrl: string;
  requests: RecordedResponsesRequest[];
  /** Refusals served one per request, in order, before the behaviour answers (see fake-busy.ts). */
  busy: FakeRefusal[];
  close(): Promise<void>;
}

interface ResponsesBody {
  model?: unknown;
  input?: unknown;
  instructions?: unknown;
  tools?: unknown;
  stream?: unknown;
}

export async function startFakeResponsesServer(): Promise<FakeResponsesServer> {
  // forceCloseConnections: hung and stalled answers must not hold close() open.
  const app = Fastify({ forceCloseConnections: true, logger: false });
  const requests: RecordedResponsesRequest[] = [];
  const busy: FakeRefusal[] = [];
  let sequence = 0;

  const record = (request: FastifyRequest) => {
    requests.push({ method: request.method, path: request.url, headers: { ...request.headers }, body: request.body });
  };

  app.post('/v1/responses', async (request, reply) => {
    record(request);
    const refusal = busy.shift();
    if (refusal) return reply.code(refusal.status).headers(refusal.headers ?? {}).send(openAiRefusalBody(refusal, request.headers));
    const body = (request.body ?? {}) as ResponsesBody;
    const behaviour = behaviourOf(request.headers['x-fake-behaviour'], body.model);
    return answer(behaviour, { id: `resp_fake_${++sequence}`, request, reply, body, streaming: body.stream === true });
  });
  app.post('/v1/elsewhere', async (request) => {
    record(request);
    return responseObject('resp_fake_elsewhere', 'completed', textItems(FAKE_TEXT), FAKE_TEXT_USAGE);
  });

  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { baseUrl: `${url}/v1`, requests, busy, close: () => app.close() };
}

function behaviourOf(header: string | string[] | undefined, model: unknown): FakeResponsesBehaviour {
  const named = Array.isArray(header) ? header[0] : (header ?? model);
  return (FAKE_RESPONSES_BEHAVIOURS as readonly unknown[]).includes(named) ? (named as FakeResponsesBehaviour) : 'ok';
}

interface Exchange {
  id: string;
  request: FastifyRequest;
  reply: FastifyReply;
  body: ResponsesBody;
  streaming: boolean;
}

async function answer(behaviour: FakeResponsesBehaviour, x: Exchange): Promise<unknown> {
  const { reply, id } = x;
  switch (behaviour) {
    case 'ok':
    case 'no-usage':
    case 'long-stream': {
      const usage = behaviour === 'no-usage' ? null : FAKE_TEXT_USAGE;
      const deltas = behaviour === 'long-stream' ? FAKE_LONG_DELTAS : FAKE_TEXT_DELTAS;
      const items = textItems(deltas.join(''));
      if (!x.streaming) return responseObject(id, 'completed', items, usage);
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.textItem(0, deltas);
      stream.send('response.completed', { response: responseObject(id, 'completed', items, usage) });
      stream.end();
      return reply;
    }
    case 'ignores-stream':
      return responseObject(id, 'completed', textItems(FAKE_TEXT), FAKE_TEXT_USAGE);
    case 'length': {
      const items = textItems(FAKE_LENGTH_TEXT, 'incomplete');
      const doc = responseObject(id, 'incomplete', items, FAKE_LENGTH_USAGE, { incomplete_details: { reason: 'max_output_tokens' } });
      if (!x.streaming) return doc;
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.textItem(0, FAKE_TEXT_DELTAS.slice(0, 2), 'incomplete');
      stream.send('response.incomplete', { response: doc });
      stream.end();
      return reply;
    }
    case 'tool-call':
    case 'bad-arguments': {
      const args = behaviour === 'bad-arguments' ? ['{"supplier": "Kes', 'trel'] : FAKE_ARGUMENT_DELTAS;
      const items = [reasoningItem(), functionCallItem(args.join(''))];
      const doc = responseObject(id, 'completed', items, FAKE_TOOL_USAGE);
      if (!x.streaming) return doc;
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.reasoning(0);
      stream.functionCall(1, args);
      stream.send('response.completed', { response: doc });
      stream.end();
      return reply;
    }
    case 'tool-then-answer': {
      const input = Array.isArray(x.body.input) ? (x.body.input as Record<string, unknown>[]) : [];
      const last = input[input.length - 1];
      if (last?.type === 'function_call_output') {
        const problem = continuationProblem(input, last.call_id);
        if (problem) return reply.code(400).send(errorDocument(problem, 'invalid_request_error', null));
        const deltas = [FAKE_TOOL_ANSWER_PREFIX, String(last.output)];
        const items = textItems(deltas.join(''));
        if (!x.streaming) return responseObject(id, 'completed', items, FAKE_TEXT_USAGE);
        const stream = new EventStream(hijackStream(reply));
        stream.opening(id);
        stream.textItem(0, deltas);
        stream.send('response.completed', { response: responseObject(id, 'completed', items, FAKE_TEXT_USAGE) });
        stream.end();
        return reply;
      }
      const offered = (Array.isArray(x.body.tools) ? x.body.tools : []) as { name?: unknown; parameters?: { required?: unknown } }[];
      const required = offered[0]?.parameters?.required;
      const args = JSON.stringify(Object.fromEntries((Array.isArray(required) ? required : []).map((name) => [String(name), FAKE_TOOL_ARGUMENT])));
      const name = String(offered[0]?.name ?? 'no_tools_offered');
      const doc = responseObject(id, 'completed', [reasoningItem(), functionCallItem(args, name)], FAKE_TOOL_USAGE);
      if (!x.streaming) return doc;
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.reasoning(0);
      stream.functionCall(1, [args.slice(0, 5), args.slice(5)], name);
      stream.send('response.completed', { response: doc });
      stream.end();
      return reply;
    }
    case 'refusal': {
      const items = [{ id: 'msg_fake_refusal', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: FAKE_REFUSAL }] }];
      const doc = responseObject(id, 'completed', items, FAKE_LENGTH_USAGE);
      if (!x.streaming) return doc;
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.send('response.output_item.added', { output_index: 0, item: { ...items[0], status: 'in_progress', content: [] } });
      stream.send('response.refusal.delta', { item_id: 'msg_fake_refusal', output_index: 0, content_index: 0, delta: FAKE_REFUSAL });
      stream.send('response.refusal.done', { item_id: 'msg_fake_refusal', output_index: 0, content_index: 0, refusal: FAKE_REFUSAL });
      stream.send('response.output_item.done', { output_index: 0, item: items[0] });
      stream.send('response.completed', { response: doc });
      stream.end();
      return reply;
    }
    case 'bad-request':
      return reply.code(400).send(errorDocument("Invalid value for 'max_output_tokens': integer below minimum value.", 'invalid_request_error', 'integer_below_min_value'));
    case 'unauthorized':
      return reply.code(401).send(errorDocument(`Incorrect API key provided: ${String(x.request.headers.authorization ?? '').replace(/^Bearer /, '')}.`, 'invalid_request_error', 'invalid_api_key'));
    case 'rate-limited':
      return reply.code(429).header('retry-after', '2').send(errorDocument('Rate limit reached for requests per min. Please try again in 2s.', 'requests', 'rate_limit_exceeded'));
    case 'server-error':
      return reply.code(500).send(errorDocument('The server had an error while processing your request. Sorry about that!', 'server_error', null));
    case 'echo-prompt': {
      const texts = JSON.stringify([x.body.instructions, x.body.input]);
      return reply.code(400).send(errorDocument(`Your input exceeds the context window of this model. Input: ${texts}`, 'invalid_request_error', 'context_length_exceeded'));
    }
    case 'redirect':
      return reply.code(307).header('location', '/v1/elsewhere').send();
    case 'failed-after-output':
    case 'failed-before-output': {
      const error = { code: 'server_error', message: 'The model failed to generate a response; please retry.' };
      const partial = behaviour === 'failed-after-output' ? textItems(FAKE_LENGTH_TEXT, 'incomplete') : [];
      const doc = responseObject(id, 'failed', partial, null, { error });
      if (!x.streaming) return doc;
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      if (behaviour === 'failed-after-output') stream.textDeltas(0, FAKE_TEXT_DELTAS.slice(0, 2));
      stream.send('response.failed', { response: doc });
      stream.end();
      return reply;
    }
    case 'failed-with-usage': {
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.textDeltas(0, FAKE_TEXT_DELTAS.slice(0, 2));
      stream.send('response.failed', { response: responseObject(id, 'failed', textItems(FAKE_LENGTH_TEXT, 'incomplete'), FAKE_LENGTH_USAGE, { error: { code: 'server_error', message: 'Generation stopped after a server fault.' } }) });
      stream.end();
      return reply;
    }
    case 'ends-early': {
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.textDeltas(0, FAKE_TEXT_DELTAS.slice(0, 2));
      stream.end();
      return reply;
    }
    case 'error-after-output': {
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.textDeltas(0, FAKE_TEXT_DELTAS.slice(0, 2));
      stream.send('error', { code: 'server_error', message: 'The server had an error while streaming.', param: null });
      stream.end();
      return reply;
    }
    case 'cut-before-output': {
      if (!x.streaming) {
        reply.hijack();
        reply.raw.writeHead(200, { 'content-type': 'application/json' });
        reply.raw.flushHeaders();
        setImmediate(() => reply.raw.socket?.destroy());
        return reply;
      }
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.sever();
      return reply;
    }
    case 'cut-mid-text': {
      if (!x.streaming) {
        reply.hijack();
        const raw = reply.raw;
        const json = JSON.stringify(responseObject(id, 'completed', textItems(FAKE_TEXT), FAKE_TEXT_USAGE));
        raw.writeHead(200, { 'content-type': 'application/json' });
        raw.write(json.slice(0, Math.floor(json.length / 2)), () => raw.socket?.destroy());
        return reply;
      }
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.textDeltas(0, FAKE_TEXT_DELTAS.slice(0, 3));
      stream.sever();
      return reply;
    }
    case 'cut-mid-arguments': {
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.send('response.output_item.added', { output_index: 0, item: { ...functionCallItem(''), status: 'in_progress' } });
      for (const delta of FAKE_ARGUMENT_DELTAS.slice(0, 2)) stream.send('response.function_call_arguments.delta', { item_id: 'fc_fake_1', output_index: 0, delta });
      stream.sever();
      return reply;
    }
    case 'stall-after-output': {
      const stream = new EventStream(hijackStream(reply));
      stream.opening(id);
      stream.textDeltas(0, FAKE_TEXT_DELTAS.slice(0, 2));
      stream.flush();
      return reply;
    }
    case 'hang':
      reply.hijack();
      return reply;
  }
}

// ---- wire shapes ----

function responseObject(id: string, status: string, output: unknown[], usage: object | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    object: 'response',
    created_at: 1754524800,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: FAKE_RESPONSES_MODEL,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    usage,
    ...extra,
  };
}

function textItems(text: string, status = 'completed'): Record<string, unknown>[] {
  return [{ id: 'msg_fake_1', type: 'message', status, role: 'assistant', content: [{ type: 'output_text', annotations: [], logprobs: [], text }] }];
}

function reasoningItem(): Record<string, unknown> {
  return { id: 'rs_fake_1', type: 'reasoning', summary: [{ type: 'summary_text', text: '**Looking up the supplier**' }], encrypted_content: FAKE_ENCRYPTED };
}

function functionCallItem(args: string, name = FAKE_TOOL_NAME): Record<string, unknown> {
  return { id: 'fc_fake_1', type: 'function_call', status: 'completed', arguments: args, call_id: FAKE_CALL_ID, name };
}

/**
 * What OpenAI refuses in an input ending with a function_call_output: an output whose call is
 * not in the input, and (a reasoning model, store: false) a call sent back without the
 * reasoning item that preceded it, encrypted_content intact. Null when the input is acceptable.
 */
function continuationProblem(input: Record<string, unknown>[], callId: unknown): string | null {
  const at = input.findIndex((item) => item.type === 'function_call' && item.call_id === callId);
  if (at < 0) return `No tool call found for function call output with call_id ${String(callId)}.`;
  const call = input[at]!;
  const reasoning = input.slice(0, at).find((item) => item.type === 'reasoning' && item.id === 'rs_fake_1');
  if (!reasoning) return `Item '${String(call.id)}' of type 'function_call' was provided without its required 'reasoning' item: 'rs_fake_1'.`;
  if (reasoning.encrypted_content !== FAKE_ENCRYPTED) return "The encrypted content for item rs_fake_1 could not be verified.";
  return null;
}

function errorDocument(message: string, type: string, code: string | null): Record<string, unknown> {
  return { error: { message, type, param: null, code } };
}

function hijackStream(reply: FastifyReply): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return raw;
}

/** Frames buffered then written in one go (so a sever comes after everything before it). */
class EventStream {
  private sequence = 0;
  private frames: string[] = [];

  constructor(private readonly raw: ServerResponse) {}

  send(type: string, fields: Record<string, unknown>): void {
    this.frames.push(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...fields })}\n\n`);
  }

  /** response.created and response.in_progress: the response exists, nothing generated yet. */
  opening(id: string): void {
    this.send('response.created', { response: responseObject(id, 'in_progress', [], null) });
    this.send('response.in_progress', { response: responseObject(id, 'in_progress', [], null) });
  }

  textDeltas(index: number, deltas: readonly string[]): void {
    this.send('response.output_item.added', { output_index: index, item: { id: 'msg_fake_1', type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
    this.send('response.content_part.added', { item_id: 'msg_fake_1', output_index: index, content_index: 0, part: { type: 'output_text', annotations: [], text: '' } });
    for (const delta of deltas) this.send('response.output_text.delta', { item_id: 'msg_fake_1', output_index: index, content_index: 0, delta, logprobs: [] });
  }

  textItem(index: number, deltas: readonly string[], status = 'completed'): void {
    this.textDeltas(index, deltas);
    const text = deltas.join('');
    this.send('response.output_text.done', { item_id: 'msg_fake_1', output_index: index, content_index: 0, text, logprobs: [] });
    this.send('response.content_part.done', { item_id: 'msg_fake_1', output_index: index, content_index: 0, part: { type: 'output_text', annotations: [], text } });
    this.send('response.output_item.done', { output_index: index, item: textItems(text, status)[0] });
  }

  reasoning(index: number): void {
    this.send('response.output_item.added', { output_index: index, item: { id: 'rs_fake_1', type: 'reasoning', summary: [] } });
    this.send('response.reasoning_summary_part.added', { item_id: 'rs_fake_1', output_index: index, summary_index: 0, part: { type: 'summary_text', text: '' } });
    this.send('response.reasoning_summary_text.delta', { item_id: 'rs_fake_1', output_index: index, summary_index: 0, delta: '**Looking up the supplier**' });
    this.send('response.reasoning_summary_text.done', { item_id: 'rs_fake_1', output_index: index, summary_index: 0, text: '**Looking up the supplier**' });
    this.send('response.output_item.done', { output_index: index, item: reasoningItem() });
  }

  functionCall(index: number, deltas: readonly string[], name = FAKE_TOOL_NAME): void {
    this.send('response.output_item.added', { output_index: index, item: { ...functionCallItem('', name), status: 'in_progress' } });
    for (const delta of deltas) this.send('response.function_call_arguments.delta', { item_id: 'fc_fake_1', output_index: index, delta });
    this.send('response.function_call_arguments.done', { item_id: 'fc_fake_1', output_index: index, arguments: deltas.join('') });
    this.send('response.output_item.done', { output_index: index, item: functionCallItem(deltas.join(''), name) });
  }

  flush(then?: () => void): void {
    const text = this.frames.join('');
    this.frames = [];
    if (then) this.raw.write(text, () => then());
    else this.raw.write(text);
  }

  end(): void {
    this.raw.end(this.frames.join(''));
    this.frames = [];
  }

  /** Everything so far, then the socket destroyed: a cut connection, not a clean end. */
  sever(): void {
    this.flush(() => this.raw.socket?.destroy());
  }
}
