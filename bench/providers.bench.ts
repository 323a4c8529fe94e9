/**
 * What a model driver costs per streamed token over the least any client must do with the same
 * stream. Subject: the driver's `complete()` (Anthropic Messages, OpenAI Responses, Gemini,
 * chat-completions) against its wire-faithful fake answering `long-stream`: one long answer of
 * FAKE_LONG_DELTAS.length text deltas, streamed. The driver runs everything a real call runs:
 * the request built from a ModelRequest, the whole-request deadline, redirects refused, the
 * bounded SSE read, each event parsed and folded (text, usage, stop reason, continuation),
 * error trimming armed. Baseline: `undici.request` of the same URL with the same headers and
 * the same body (as the fake recorded them from the driver's own call), reading the SSE body
 * raw: decode, split lines, JSON.parse each `data:` line, nothing else: the minimum any client
 * must do to see the tokens at all.
 *
 * Both sides: the same fake, in this process, on 127.0.0.1; a private undici Agent each
 * (keep-alive, as the drivers use by default); interleaved call by call, the order rotating
 * (measure.ts), after a warm-up; time per streamed token is the call's latency ÷ the number of
 * deltas. The fake's own frame generation is on both sides' clock (it runs in this process), so
 * it dilutes the ratio towards 1; the "above raw transfer" line subtracts a third, interleaved
 * operation (the same request, body bytes read and dropped) from both, so a reader sees the
 * client-side work alone. It is shown, not judged: a difference of two noisy medians.
 *
 * Goal (docs/PERFORMANCE.md): driver overhead per streamed token ≤ 1.5× the raw read, per provider.
 *
 * A trap when reading the numbers: the runner executes under tsx, whose esbuild transform keeps
 * function names (`keepNames`), so a closure created per delta (an arrow function defined
 * inside a per-event function) costs an `Object.defineProperty` each time it is created. The
 * production build (electron-vite) does not add that wrapper; hoisting such helpers to module
 * level removes the cost in both.
 */
import { createRequire } from 'node:module';
import { Agent, request } from 'undici';
import { createAnthropicProvider } from '../src-main/providers/anthropic-messages';
import { createGeminiProvider } from '../src-main/providers/gemini';
import { createOpenAiCompatibleProvider } from '../src-main/providers/openai-compatible';
import { createOpenAiResponsesProvider } from '../src-main/providers/openai-responses';
import type { ModelProvider, ModelRequest } from '../src-main/runtime/model-provider';
import { FAKE_LONG_DELTAS, startFakeAnthropicServer } from '../tests/doubles/fake-anthropic-server';
import { startFakeChatServer } from '../tests/doubles/fake-chat-server';
import { startFakeGeminiServer } from '../tests/doubles/fake-gemini-server';
import { startFakeResponsesServer } from '../tests/doubles/fake-responses-server';
import type { Benchmark, BenchResult, Measurement } from './bench-types';
import { interleavedLatencies, percentile, summarise, type Operation } from './measure';

const UNDICI_VERSION = (createRequire(import.meta.url)('undici/package.json') as { version: string }).version;
const settings = { warmUp: 20, calls: 250 };
/** Never a real key: the fakes accept anything, and nothing here leaves 127.0.0.1. */
const BENCH_KEY = 'bench-not-a-key';
const BEHAVIOUR = 'long-stream';
const TOKENS = FAKE_LONG_DELTAS.length;
const EXPECTED_TEXT = FAKE_LONG_DELTAS.join('');

/** What the fake recorded of the driver's call: enough to send the same bytes again. */
interface RecordedCall {
  /** Path and query, e.g. `/v1beta/models/long-stream:streamGenerateContent?alt=sse`. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

interface Wire {
  name: string;
  start(): Promise<{ origin: string; baseUrl: string; lastCall(): RecordedCall; close(): Promise<void> }>;
  provider(baseUrl: string): ModelProvider;
}

const wires: Wire[] = [
  {
    name: 'anthropic',
    async start() {
      const fake = await startFakeAnthropicServer();
      return { origin: new URL(fake.baseUrl).origin, baseUrl: fake.baseUrl, lastCall: () => lastOf(fake.requests, (r) => r.path), close: () => fake.close() };
    },
    provider: (baseUrl) => createAnthropicProvider({ baseUrl, apiKey: BENCH_KEY, model: BEHAVIOUR }),
  },
  {
    name: 'openai-responses',
    async start() {
      const fake = await startFakeResponsesServer();
      return { origin: new URL(fake.baseUrl).origin, baseUrl: fake.baseUrl, lastCall: () => lastOf(fake.requests, (r) => r.path), close: () => fake.close() };
    },
    provider: (baseUrl) => createOpenAiResponsesProvider({ baseUrl, apiKey: BENCH_KEY, model: BEHAVIOUR }),
  },
  {
    name: 'gemini',
    async start() {
      const fake = await startFakeGeminiServer();
      return { origin: new URL(fake.baseUrl).origin, baseUrl: fake.baseUrl, lastCall: () => lastOf(fake.requests, (r) => r.url), close: () => fake.close() };
    },
    provider: (baseUrl) => createGeminiProvider({ baseUrl, apiKey: BENCH_KEY, model: BEHAVIOUR }),
  },
  {
    name: 'chat-completions',
    async start() {
      const fake = await startFakeChatServer();
      return { origin: new URL(fake.baseUrl).origin, baseUrl: fake.baseUrl, lastCall: () => lastOf(fake.requests, (r) => r.path), close: () => fake.close() };
    },
    provider: (baseUrl) => createOpenAiCompatibleProvider({ id: 'chat', baseUrl, apiKey: BENCH_KEY, model: BEHAVIOUR }),
  },
];

/**
 * The fake's last recorded request, then the record emptied: every call is recorded, and a few
 * hundred calls' worth would otherwise grow the heap (and the GC work) on one side's clock.
 */
function lastOf<R extends { headers: RecordedCall['headers']; body: unknown }>(requests: R[], pathOf: (r: R) => string): RecordedCall {
  const last = requests.at(-1);
  if (!last) throw new Error('the fake recorded no request');
  requests.length = 0;
  return { path: pathOf(last), headers: last.headers, body: last.body };
}

/** Hop-by-hop and length headers are the transport's to set, not copied from the recording. */
const NOT_COPIED = new Set(['host', 'content-length', 'connection', 'transfer-encoding', 'keep-alive']);

function sameHeaders(recorded: RecordedCall['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(recorded)) {
    if (NOT_COPIED.has(name) || value === undefined) continue;
    out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

const modelRequest: ModelRequest = {
  model: BEHAVIOUR,
  messages: [
    { role: 'system', content: 'You are a benchmark.' },
    { role: 'user', content: 'Write a long answer.' },
  ],
  maxTokens: 8192,
};

/**
 * The raw read: bytes decoded as they arrive, split into lines (LF or CRLF: Gemini frames with
 * CRLF), each `data:` payload JSON.parsed. Returns how many events parsed, so the caller can
 * check it saw the whole stream (a baseline that silently read less would flatter the subject).
 */
async function rawSseRead(dispatcher: Agent, url: string, headers: Record<string, string>, body: string): Promise<number> {
  const response = await request(url, { method: 'POST', headers, body, dispatcher });
  if (response.statusCode !== 200) throw new Error(`baseline: ${url} answered ${response.statusCode}: ${(await response.body.text()).slice(0, 200)}`);
  const decoder = new TextDecoder();
  let pending = '';
  let events = 0;
  const line = (text: string) => {
    const trimmed = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (!trimmed.startsWith('data:')) return;
    const payload = trimmed.slice(5).trim();
    if (payload === '[DONE]') return;
    JSON.parse(payload);
    events += 1;
  };
  for await (const chunk of response.body) {
    pending += decoder.decode(chunk as Uint8Array, { stream: true });
    let newline = pending.indexOf('\n');
    let start = 0;
    while (newline >= 0) {
      line(pending.slice(start, newline));
      start = newline + 1;
      newline = pending.indexOf('\n', start);
    }
    pending = pending.slice(start);
  }
  pending += decoder.decode();
  if (pending) line(pending);
  return events;
}

/** The transport floor: the same request, the body's bytes read and dropped. */
async function rawDrain(dispatcher: Agent, url: string, headers: Record<string, string>, body: string): Promise<void> {
  const response = await request(url, { method: 'POST', headers, body, dispatcher });
  if (response.statusCode !== 200) throw new Error(`floor: ${url} answered ${response.statusCode}`);
  for await (const chunk of response.body) void chunk;
}

async function measureWire(wire: Wire): Promise<{ measurements: Measurement[]; note: string }> {
  const fake = await wire.start();
  const agent = new Agent();
  try {
    const provider = wire.provider(fake.baseUrl);
    const subject: Operation = async () => {
      const completion = await provider.complete(modelRequest);
      // A driver that dropped or mangled deltas would look fast; check every call's answer.
      if (completion.text !== EXPECTED_TEXT) throw new Error(`${wire.name}: the driver answered ${completion.text.length} chars, expected ${EXPECTED_TEXT.length}`);
    };
    await subject();
    const call = fake.lastCall();
    const url = `${fake.origin}${call.path}`;
    const headers = sameHeaders(call.headers);
    const body = JSON.stringify(call.body);
    const baseline: Operation = async () => {
      const events = await rawSseRead(agent, url, headers, body);
      if (events < TOKENS) throw new Error(`${wire.name}: the raw read parsed ${events} events, fewer than the ${TOKENS} deltas`);
      fake.lastCall();
    };
    const floor: Operation = async () => {
      await rawDrain(agent, url, headers, body);
      fake.lastCall();
    };
    const record: Operation = async () => {
      await subject();
      fake.lastCall();
    };
    const operations = [record, baseline, floor];
    await interleavedLatencies(operations, settings.warmUp);
    const latencies = await interleavedLatencies(operations, settings.calls);
    const [s, b, f] = latencies.map(summarise);
    // Each iteration runs the three back to back, so driver ÷ raw read within one iteration
    // shares its moment's load; the median of those is a second view, steadier on a busy machine.
    const paired = latencies[0]!.map((us, i) => us / latencies[1]![i]!).sort((x, y) => x - y);
    const perToken = (us: number) => us / TOKENS;
    return {
      measurements: [
        { metric: `${wire.name}: per streamed token (p50)`, unit: 'µs', subject: perToken(s!.p50), baseline: perToken(b!.p50), better: 'lower', judged: true },
        { metric: `${wire.name}: per streamed token (mean)`, unit: 'µs', subject: perToken(s!.mean), baseline: perToken(b!.mean), better: 'lower', judged: false },
        { metric: `${wire.name}: above raw transfer (p50)`, unit: 'µs', subject: perToken(s!.p50 - f!.p50), baseline: perToken(b!.p50 - f!.p50), better: 'lower', judged: false },
      ],
      note: `${wire.name}: ${call.path}, ${body.length} B request, whole call p50 ${(s!.p50 / 1000).toFixed(2)} ms driver, ${(b!.p50 / 1000).toFixed(2)} ms raw read, ${(f!.p50 / 1000).toFixed(2)} ms raw transfer (bytes dropped); median of per-iteration driver ÷ raw read ${percentile(paired, 50).toFixed(2)}×`,
    };
  } finally {
    await agent.close();
    await fake.close();
  }
}

async function run(): Promise<BenchResult> {
  const measurements: Measurement[] = [];
  const notes: string[] = [];
  // One provider at a time: each measured alone on the CPU, its fake closed before the next.
  for (const wire of wires) {
    const result = await measureWire(wire);
    measurements.push(...result.measurements);
    notes.push(result.note);
  }
  return {
    subject: "each driver's complete() streaming a long answer from its wire-faithful fake (anthropic, openai-responses, gemini, chat-completions)",
    baseline: 'undici.request of the same URL, headers and body, the SSE read raw: lines split, each data line JSON.parsed',
    measurements,
    notes: [
      `${TOKENS} text deltas per answer (the fakes' long-stream behaviour), time per token = call latency ÷ ${TOKENS}`,
      `warm-up ${settings.warmUp} calls each, then ${settings.calls} calls each of driver, raw read and raw transfer, interleaved call by call, order rotating`,
      `client: undici ${UNDICI_VERSION}, a private keep-alive Agent per side; the fake runs in this process, so its frame generation is on both clocks`,
      ...notes,
      `node ${process.version}, ${process.platform}/${process.arch}`,
    ],
  };
}

const benchmark: Benchmark = {
  name: 'providers',
  goal: { maxRatio: 1.5, text: 'per streamed token, each driver ≤ 1.5× a raw undici SSE read of the same stream' },
  run,
};
export default benchmark;
