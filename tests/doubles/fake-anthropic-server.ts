/**
 * A wire-faithful fake Anthropic Messages server for tests (never imported by production code).
 * It listens on 127.0.0.1, port 0, and answers `POST /v1/messages` the way Anthropic's wire
 * does: the same JSON message document, the same SSE framing (`event: <type>` + `data: <json>`,
 * message_start with usage incl. the cache fields, content_block_start/delta/stop with
 * text_delta, thinking_delta, signature_delta and input_json_delta, ping, message_delta with
 * stop_reason and cumulative output_tokens, message_stop), and errors in Anthropic's shape
 * {type:'error', error:{type, message}}.
 *
 * The behaviour is chosen per request by its `model` when that names a behaviour (else `ok`);
 * streaming or not follows the request's `stream` field. Every request is recorded (method,
 * path, headers, parsed body) so tests can assert what the driver put on the wire.
 */
import { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { type FakeRefusal, presented } from './fake-busy';

export const FAKE_ANTHROPIC_BEHAVIOURS = [
  /** Text answer, end_turn, FAKE_ANTHROPIC_USAGE (with cache fields). */
  'ok',
  /** A thinking block (thinking + signature deltas), then text. */
  'thinking',
  /** Some text, then a tool_use (get_weather) whose JSON arrives in several input_json_delta fragments; stop tool_use. */
  'tool-use',
  /**
   * A tool loop in two turns. While the last user turn holds no tool_result: a thinking block
   * (signed), then a tool_use of the first offered tool (each property its schema requires set
   * to FAKE_TOOL_ARGUMENT), stop tool_use. Once it does: text FAKE_TOOL_ANSWER_PREFIX + that
   * result's content, end_turn; but a 400 (Anthropic's words) when the result answers no
   * tool_use of the previous assistant turn, or that turn does not start with the thinking
   * block and its signature exactly as sent (the continuation was not carried back verbatim).
   */
  'tool-then-answer',
  /** A tool_use of the tool named in tool_choice (the forced structured-output tool), input FAKE_STRUCTURED. */
  'structured',
  /** Text only although a forced tool was asked for (a model ignoring the forced call). */
  'ignores-forced-tool',
  /** stop_reason max_tokens. */
  'max-tokens',
  /** Streaming: the forced/any tool's JSON cut by the length limit (stop_reason max_tokens), a clean end. */
  'max-tokens-in-tool',
  /** stop_reason refusal. */
  'refusal',
  /** A tool_use whose assembled JSON is malformed, then a clean end. */
  'malformed-tool-json',
  'bad-request',
  /** 401 whose message echoes the presented x-api-key, as careless servers do. */
  'unauthorized',
  /** 401s echoing the presented x-api-key in another form: ECHOED_KEY_FORMS says which (the key scrubber's tests). */
  'unauthorized-base64',
  'unauthorized-base64url',
  'unauthorized-hex',
  'unauthorized-reversed',
  'unauthorized-spaced',
  'unauthorized-run',
  'unauthorized-embedded-base64',
  'forbidden',
  'not-found',
  'too-large',
  /** 429 rate_limit_error with `retry-after: 2`. */
  'rate-limited',
  'server-error',
  /** 529 overloaded_error. */
  'overloaded',
  /** 307 to /v1/elsewhere. */
  'redirect',
  /** 400 whose message echoes every user message verbatim. */
  'echo-prompt',
  /** message_start, some text deltas, then an `error` event (overloaded_error). */
  'error-mid-stream',
  /** message_start, then an `error` event before any content block. */
  'error-before-content',
  /** message_start, text, then an `error` event whose message echoes the x-api-key and the last user message. */
  'error-echo-mid-stream',
  /** Content blocks without any message_start (a non-compliant server: no usage ever), then the socket is destroyed. */
  'cut-without-start',
  /** message_start, then a `data:` line that is not JSON. */
  'malformed-event',
  /** message_start and some text deltas, then the socket is destroyed. Non-streaming: half the JSON. */
  'cut-mid-text',
  /** message_start, a tool_use block and part of its JSON, then the socket is destroyed. */
  'cut-mid-tool',
  /** message_start and a ping, then the socket is destroyed. */
  'cut-after-start',
  /** Status line and headers only, then the socket is destroyed. */
  'cut-before-content',
  /** Everything up to message_delta, then a clean end without message_stop. */
  'no-message-stop',
  /** message_start and text deltas, then silence with the connection held (for the deadline). */
  'stall-after-content',
  /** Never answers. */
  'hang',
  /** A streamed answer of FAKE_ANTHROPIC_OVERSIZE_BYTES of text. */
  'oversized',
  /** One text block of FAKE_LONG_DELTAS.length text_delta events, end_turn (bench/providers.bench.ts). */
  'long-stream',
] as const;
export type FakeAnthropicBehaviour = (typeof FAKE_ANTHROPIC_BEHAVIOURS)[number];

const b64 = (text: string, alphabet: 'base64' | 'base64url' = 'base64') => Buffer.from(text, 'utf8').toString(alphabet);
/**
 * How each `unauthorized-*` behaviour writes the presented key into its 401 message, as servers
 * that decode, log or mangle a credential and then echo it do.
 */
export const ECHOED_KEY_FORMS = {
  'unauthorized-base64': (key: string) => b64(key),
  'unauthorized-base64url': (key: string) => b64(key, 'base64url'),
  'unauthorized-hex': (key: string) => Buffer.from(key, 'utf8').toString('hex'),
  'unauthorized-reversed': (key: string) => [...key].reverse().join(''),
  'unauthorized-spaced': (key: string) => [...key].join(' '),
  /** 23 characters from inside the key, in other text. */
  'unauthorized-run': (key: string) => `token fragment <${key.slice(5, 28)}> was seen`,
  /** The key inside longer encoded text, at byte offsets 1 (4 + key) and 2 (11 + key) mod 3. */
  'unauthorized-embedded-base64': (key: string) => `${b64(`key=${key}`)} ${b64(`{"apiKey":"${key}"}`, 'base64url')}`,
} as const satisfies Partial<Record<FakeAnthropicBehaviour, (key: string) => string>>;

export const FAKE_ANTHROPIC_MODEL = 'claude-fake-4-5-20250929';
export const FAKE_TEXT_DELTAS = ['Hello', ' from', ' the', ' fake', ' Claude', '.'];
export const FAKE_TEXT = FAKE_TEXT_DELTAS.join('');
export const FAKE_THINKING_DELTAS = ['Let me', ' think', ' about it.'];
export const FAKE_SIGNATURE = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds';
export const FAKE_TOOL_ID = 'toolu_01A09q90qw90lq917835lq9';
export const FAKE_TOOL_JSON_DELTAS = ['{"loca', 'tion": "San Fra', 'ncisco, CA", "unit":', ' "celsius"}'];
export const FAKE_TOOL_INPUT = { location: 'San Francisco, CA', unit: 'celsius' };
export const FAKE_STRUCTURED = { answer: 42, reason: 'the question' };
/** `tool-then-answer`: the value of every required property of the tool's input. */
export const FAKE_TOOL_ARGUMENT = 'ping from the model';
/** `tool-then-answer`: the second turn's text is this, then the tool result's content. */
export const FAKE_TOOL_ANSWER_PREFIX = 'The tool said: ';
/** message_start usage: input excludes the cache, as Anthropic reports it. */
export const FAKE_START_USAGE = { input_tokens: 25, cache_creation_input_tokens: 100, cache_read_input_tokens: 400, output_tokens: 1 } as const;
/** message_delta's cumulative output_tokens. */
export const FAKE_OUTPUT_TOKENS = 15;
export const FAKE_ANTHROPIC_OVERSIZE_BYTES = 64 * 1024;
/** `long-stream`'s deltas: a long answer of short text deltas, as a model streams token by token (the driver benchmark). */
export const FAKE_LONG_DELTAS: readonly string[] = Array.from({ length: 2000 }, (_, i) => (i === 0 ? 'Token' : ` t${i % 100}`));

export interface RecordedAnthropicRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface FakeAnthropicServer {
  /** As a driver's baseUrl (no /v1: the driver appends /v1/messages). */
  baseUrl: string;
  requests: RecordedAnthropicRequest[];
  /** Refusals served one per request, in order, before the behaviour answers (see fake-busy.ts). */
  busy: FakeRefusal[];
  close(): Promise<void>;
}

type Block =
  | { type: 'text'; deltas: string[] }
  | { type: 'thinking'; deltas: string[]; signature: string }
  | { type: 'tool_use'; id: string; name: string; json: string[] };

interface Script {
  blocks: Block[];
  stop: string;
  outputTokens: number;
}

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

export async function startFakeAnthropicServer(): Promise<FakeAnthropicServer> {
  const app = Fastify({ forceCloseConnections: true, logger: false, bodyLimit: 16 * 1024 * 1024 });
  const requests: RecordedAnthropicRequest[] = [];
  const busy: FakeRefusal[] = [];
  let sequence = 0;

  app.post('/v1/messages', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    requests.push({ method: request.method, path: request.url, headers: { ...request.headers }, body });
    const refusal = busy.shift();
    if (refusal) return refuse(refusal, `msg_fake_${++sequence}`, request, reply);
    const behaviour = (FAKE_ANTHROPIC_BEHAVIOURS as readonly unknown[]).includes(body.model) ? (body.model as FakeAnthropicBehaviour) : 'ok';
    return answer(behaviour, { id: `msg_fake_${++sequence}`, request, reply, body, streaming: body.stream === true });
  });
  app.post('/v1/elsewhere', async () => messageDocument('msg_elsewhere', { blocks: [{ type: 'text', deltas: ['moved'] }], stop: 'end_turn', outputTokens: 1 }));

  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { baseUrl: url, requests, busy, close: () => app.close() };
}

interface Exchange {
  id: string;
  request: FastifyRequest;
  reply: FastifyReply;
  body: Record<string, unknown>;
  streaming: boolean;
}

const text = (deltas: string[] = FAKE_TEXT_DELTAS): Block => ({ type: 'text', deltas });
const tool = (name = 'get_weather', json = FAKE_TOOL_JSON_DELTAS): Block => ({ type: 'tool_use', id: FAKE_TOOL_ID, name, json });

function scriptOf(behaviour: FakeAnthropicBehaviour, body: Record<string, unknown>): Script | null {
  switch (behaviour) {
    case 'ok':
    case 'ignores-forced-tool':
      return { blocks: [text()], stop: 'end_turn', outputTokens: FAKE_OUTPUT_TOKENS };
    case 'thinking':
      return { blocks: [{ type: 'thinking', deltas: FAKE_THINKING_DELTAS, signature: FAKE_SIGNATURE }, text()], stop: 'end_turn', outputTokens: FAKE_OUTPUT_TOKENS };
    case 'tool-use':
      return { blocks: [text(['Let me check.']), tool()], stop: 'tool_use', outputTokens: FAKE_OUTPUT_TOKENS };
    case 'tool-then-answer': {
      const result = lastToolResults(body)[0];
      if (result) return { blocks: [text([FAKE_TOOL_ANSWER_PREFIX, result.content])], stop: 'end_turn', outputTokens: FAKE_OUTPUT_TOKENS };
      const offered = (Array.isArray(body.tools) ? body.tools : []) as { name?: unknown; input_schema?: { required?: unknown } }[];
      const required = Array.isArray(offered[0]?.input_schema?.required) ? (offered[0].input_schema.required as unknown[]) : [];
      const json = JSON.stringify(Object.fromEntries(required.map((name) => [String(name), FAKE_TOOL_ARGUMENT])));
      const thinking: Block = { type: 'thinking', deltas: FAKE_THINKING_DELTAS, signature: FAKE_SIGNATURE };
      return { blocks: [thinking, tool(String(offered[0]?.name ?? 'no_tools_offered'), [json.slice(0, 6), json.slice(6)])], stop: 'tool_use', outputTokens: FAKE_OUTPUT_TOKENS };
    }
    case 'structured': {
      const choice = body.tool_choice as { name?: string } | undefined;
      const json = JSON.stringify(FAKE_STRUCTURED);
      return { blocks: [tool(choice?.name ?? 'structured_answer', [json.slice(0, 7), json.slice(7)])], stop: 'tool_use', outputTokens: FAKE_OUTPUT_TOKENS };
    }
    case 'max-tokens':
      return { blocks: [text(FAKE_TEXT_DELTAS.slice(0, 2))], stop: 'max_tokens', outputTokens: 2 };
    case 'max-tokens-in-tool': {
      const choice = body.tool_choice as { name?: string } | undefined;
      return { blocks: [tool(choice?.name ?? 'get_weather', ['{"answer": ', '4'])], stop: 'max_tokens', outputTokens: 64 };
    }
    case 'refusal':
      return { blocks: [text(['I cannot help with that.'])], stop: 'refusal', outputTokens: 6 };
    case 'long-stream':
      return { blocks: [text([...FAKE_LONG_DELTAS])], stop: 'end_turn', outputTokens: FAKE_LONG_DELTAS.length };
    case 'malformed-tool-json':
      return { blocks: [tool('get_weather', ['{"location": ', '"San Fra'])], stop: 'tool_use', outputTokens: FAKE_OUTPUT_TOKENS };
    default:
      return null;
  }
}

async function answer(behaviour: FakeAnthropicBehaviour, x: Exchange): Promise<unknown> {
  const { reply } = x;
  const problem = behaviour === 'tool-then-answer' ? toolTurnProblem(x.body) : null;
  if (problem) return reply.code(400).send(errorDocument('invalid_request_error', problem));
  const script = scriptOf(behaviour, x.body);
  if (script) {
    if (!x.streaming) return messageDocument(x.id, script);
    const raw = hijackStream(reply);
    raw.end(sse(frames(x.id, script)));
    return reply;
  }
  switch (behaviour) {
    case 'bad-request':
      return reply.code(400).send(errorDocument('invalid_request_error', 'messages: roles must alternate between "user" and "assistant"'));
    case 'unauthorized':
      return reply.code(401).send(errorDocument('authentication_error', `invalid x-api-key: ${String(x.request.headers['x-api-key'] ?? '')}`));
    case 'unauthorized-base64':
    case 'unauthorized-base64url':
    case 'unauthorized-hex':
    case 'unauthorized-reversed':
    case 'unauthorized-spaced':
    case 'unauthorized-run':
    case 'unauthorized-embedded-base64':
      return reply.code(401).send(errorDocument('authentication_error', `invalid x-api-key: ${ECHOED_KEY_FORMS[behaviour](String(x.request.headers['x-api-key'] ?? ''))}`));
    case 'forbidden':
      return reply.code(403).send(errorDocument('permission_error', 'Your API key does not have permission to use the specified resource.'));
    case 'not-found':
      return reply.code(404).send(errorDocument('not_found_error', `model: ${String(x.body.model)}`));
    case 'too-large':
      return reply.code(413).send(errorDocument('request_too_large', 'Request exceeds the maximum allowed number of bytes.'));
    case 'rate-limited':
      return reply.code(429).header('retry-after', '2').send(errorDocument('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'));
    case 'server-error':
      return reply.code(500).send(errorDocument('api_error', 'Internal server error'));
    case 'overloaded':
      return reply.code(529).send(errorDocument('overloaded_error', 'Overloaded'));
    case 'redirect':
      return reply.code(307).header('location', '/v1/elsewhere').send();
    case 'echo-prompt': {
      const messages = Array.isArray(x.body.messages) ? (x.body.messages as { content?: unknown }[]) : [];
      const contents = messages.map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
      return reply.code(400).send(errorDocument('invalid_request_error', `prompt is too long: 210000 tokens > 200000 maximum. Prompt: ${contents.join('\n')}`));
    }
    case 'error-mid-stream':
    case 'error-before-content': {
      if (!x.streaming) return reply.code(529).send(errorDocument('overloaded_error', 'Overloaded'));
      const all = frames(x.id, { blocks: [text()], stop: 'end_turn', outputTokens: FAKE_OUTPUT_TOKENS });
      const upTo = behaviour === 'error-mid-stream' ? 5 : 1; // message_start, block start, ping, two text deltas
      const raw = hijackStream(reply);
      raw.end(sse([...all.slice(0, upTo), { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }]));
      return reply;
    }
    case 'error-echo-mid-stream': {
      const messages = Array.isArray(x.body.messages) ? (x.body.messages as { content?: unknown }[]) : [];
      const last = messages.length ? messages[messages.length - 1]!.content : '';
      const echoed = `bad request from key ${String(x.request.headers['x-api-key'] ?? '')} about ${typeof last === 'string' ? last : JSON.stringify(last)}`;
      const all = frames(x.id, { blocks: [text()], stop: 'end_turn', outputTokens: FAKE_OUTPUT_TOKENS });
      const raw = hijackStream(reply);
      raw.end(sse([...all.slice(0, 5), { event: 'error', data: { type: 'error', error: { type: 'api_error', message: echoed } } }]));
      return reply;
    }
    case 'cut-without-start': {
      const all = frames(x.id, { blocks: [text()], stop: 'end_turn', outputTokens: FAKE_OUTPUT_TOKENS });
      const raw = hijackStream(reply);
      raw.write(sse(all.slice(1, 5)), () => raw.socket?.destroy());
      return reply;
    }
    case 'malformed-event': {
      const raw = hijackStream(reply);
      raw.end(`${sse([messageStart(x.id)])}event: content_block_start\ndata: {"type":"content_block_start",\n\n`);
      return reply;
    }
    case 'cut-mid-text':
    case 'cut-mid-tool': {
      const script: Script = behaviour === 'cut-mid-text' ? { blocks: [text()], stop: 'end_turn', outputTokens: FAKE_OUTPUT_TOKENS } : { blocks: [tool()], stop: 'tool_use', outputTokens: FAKE_OUTPUT_TOKENS };
      if (!x.streaming) {
        reply.hijack();
        const raw = reply.raw;
        raw.writeHead(200, { 'content-type': 'application/json' });
        const json = JSON.stringify(messageDocument(x.id, script));
        raw.write(json.slice(0, Math.floor(json.length / 2)), () => raw.socket?.destroy());
        return reply;
      }
      const raw = hijackStream(reply);
      // message_start, content_block_start, ping, then two deltas (text, or JSON fragments).
      raw.write(sse(frames(x.id, script).slice(0, 5)), () => raw.socket?.destroy());
      return reply;
    }
    case 'cut-after-start': {
      const raw = hijackStream(reply);
      raw.write(sse([messageStart(x.id), { event: 'ping', data: { type: 'ping' } }]), () => raw.socket?.destroy());
      return reply;
    }
    case 'cut-before-content': {
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, { 'content-type': x.streaming ? 'text/event-stream' : 'application/json' });
      raw.flushHeaders();
      setImmediate(() => raw.socket?.destroy());
      return reply;
    }
    case 'no-message-stop': {
      const all = frames(x.id, { blocks: [text()], stop: 'end_turn', outputTokens: FAKE_OUTPUT_TOKENS });
      const raw = hijackStream(reply);
      raw.end(sse(all.slice(0, -1)));
      return reply;
    }
    case 'stall-after-content': {
      const raw = hijackStream(reply);
      raw.write(sse(frames(x.id, { blocks: [text()], stop: 'end_turn', outputTokens: FAKE_OUTPUT_TOKENS }).slice(0, 5)));
      return reply;
    }
    case 'hang':
      reply.hijack();
      return reply;
    case 'oversized': {
      const filler = 'x'.repeat(1024);
      const deltas: string[] = [];
      for (let sent = 0; sent < FAKE_ANTHROPIC_OVERSIZE_BYTES; sent += filler.length) deltas.push(filler);
      const script: Script = { blocks: [text(deltas)], stop: 'end_turn', outputTokens: 20_000 };
      if (!x.streaming) return messageDocument(x.id, script);
      const raw = hijackStream(reply);
      raw.end(sse(frames(x.id, script)));
      return reply;
    }
    default:
      return reply.code(500).send(errorDocument('api_error', `fake: no script for ${behaviour}`));
  }
}

/** The tool_result blocks of the conversation's last turn, when it is a user turn holding any. */
function lastToolResults(body: Record<string, unknown>): { id: unknown; content: string }[] {
  const messages = Array.isArray(body.messages) ? (body.messages as { role?: unknown; content?: unknown }[]) : [];
  const last = messages[messages.length - 1];
  if (last?.role !== 'user' || !Array.isArray(last.content)) return [];
  return (last.content as Record<string, unknown>[])
    .filter((block) => block.type === 'tool_result')
    .map((block) => ({ id: block.tool_use_id, content: typeof block.content === 'string' ? block.content : JSON.stringify(block.content) }));
}

/**
 * What Anthropic refuses in a conversation ending with tool results: a result whose tool_use is
 * not in the previous assistant turn, and (thinking on) an assistant turn that does not start
 * with its thinking block, signature intact. Null when the conversation is acceptable.
 */
function toolTurnProblem(body: Record<string, unknown>): string | null {
  const results = lastToolResults(body);
  if (results.length === 0) return null;
  const messages = body.messages as { role?: unknown; content?: unknown }[];
  const at = messages.length - 2;
  const previous = messages[at];
  const blocks = previous?.role === 'assistant' && Array.isArray(previous.content) ? (previous.content as Record<string, unknown>[]) : [];
  for (const result of results) {
    if (!blocks.some((block) => block.type === 'tool_use' && block.id === result.id)) {
      return `messages.${at + 1}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(result.id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
    }
  }
  const first = blocks[0];
  if (first?.type !== 'thinking') {
    return `messages.${at}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
  }
  if (first.signature !== FAKE_SIGNATURE || first.thinking !== FAKE_THINKING_DELTAS.join('')) return `messages.${at}.content.0: Invalid \`signature\` in \`thinking\` block`;
  return null;
}

/** A queued refusal in Anthropic's words: 429 rate_limit_error, 529 overloaded_error, or that error as an event before any content. */
function refuse(refusal: FakeRefusal, id: string, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const key = refusal.echoKey ? ` (key ${presented(request.headers['x-api-key'])})` : '';
  if (refusal.asEvent) {
    const raw = hijackStream(reply);
    raw.end(sse([messageStart(id), { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: `Overloaded${key}` } } }]));
    return reply;
  }
  const [type, message] = refusal.status === 429 ? ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'] : ['overloaded_error', 'Overloaded'];
  return reply.code(refusal.status).headers(refusal.headers ?? {}).send(errorDocument(type, `${message}${key}`));
}

// ---- wire shapes ----

function errorDocument(type: string, message: string): Record<string, unknown> {
  return { type: 'error', error: { type, message } };
}

function messageStart(id: string): Frame {
  return {
    event: 'message_start',
    data: { type: 'message_start', message: { id, type: 'message', role: 'assistant', content: [], model: FAKE_ANTHROPIC_MODEL, stop_reason: null, stop_sequence: null, usage: { ...FAKE_START_USAGE } } },
  };
}

/** The whole stream of a script, in Anthropic's order (a ping after the first block starts). */
function frames(id: string, script: Script): Frame[] {
  const out: Frame[] = [messageStart(id)];
  script.blocks.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : block.type === 'thinking' ? { type: 'thinking', thinking: '' } : { type: 'tool_use', id: block.id, name: block.name, input: {} };
    out.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } });
    if (index === 0) out.push({ event: 'ping', data: { type: 'ping' } });
    const delta = (d: Record<string, unknown>): Frame => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } });
    if (block.type === 'text') for (const t of block.deltas) out.push(delta({ type: 'text_delta', text: t }));
    if (block.type === 'thinking') {
      for (const t of block.deltas) out.push(delta({ type: 'thinking_delta', thinking: t }));
      out.push(delta({ type: 'signature_delta', signature: block.signature }));
    }
    if (block.type === 'tool_use') for (const j of block.json) out.push(delta({ type: 'input_json_delta', partial_json: j }));
    out.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  out.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: script.stop, stop_sequence: null }, usage: { output_tokens: script.outputTokens } } });
  out.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return out;
}

/** The same script as one non-streaming message document. */
function messageDocument(id: string, script: Script): Record<string, unknown> {
  const content = script.blocks.map((block) => {
    if (block.type === 'text') return { type: 'text', text: block.deltas.join('') };
    if (block.type === 'thinking') return { type: 'thinking', thinking: block.deltas.join(''), signature: block.signature };
    const json = block.json.join('');
    let input: unknown;
    try {
      input = JSON.parse(json);
    } catch {
      input = {};
    }
    return { type: 'tool_use', id: block.id, name: block.name, input };
  });
  return {
    id,
    type: 'message',
    role: 'assistant',
    model: FAKE_ANTHROPIC_MODEL,
    content,
    stop_reason: script.stop,
    stop_sequence: null,
    usage: { ...FAKE_START_USAGE, output_tokens: script.outputTokens },
  };
}

function sse(list: Frame[]): string {
  return list.map((f) => `event: ${f.event}\ndata: ${JSON.stringify(f.data)}\n\n`).join('');
}

function hijackStream(reply: FastifyReply): ServerResponse {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return raw;
}
