/**
 * Rate limits and overload, through every HTTP driver against its wire-faithful fake: a 429 or
 * 529 (or Anthropic's overloaded_error event before any token) is refused before generation,
 * so the driver sends the call again after the window the provider named, inside one
 * complete() (one effect, one Completion); it never waits past the whole-request deadline or
 * its cap, a cancel interrupts the wait, and the key never reaches a message. The fakes serve
 * queued refusals first (tests/doubles/fake-busy.ts), then the request's behaviour.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeRefusal } from '../../tests/doubles/fake-busy';
import { startFakeAnthropicServer } from '../../tests/doubles/fake-anthropic-server';
import { startFakeChatServer } from '../../tests/doubles/fake-chat-server';
import { startFakeGeminiServer } from '../../tests/doubles/fake-gemini-server';
import { startFakeResponsesServer } from '../../tests/doubles/fake-responses-server';
import { type ModelErrorKind, type ModelProvider, type ModelRequest, ModelError } from '../runtime/model-provider';
import { createAnthropicProvider } from './anthropic-messages';
import { createGeminiProvider } from './gemini';
import { createOpenAiCompatibleProvider } from './openai-compatible';
import { createOpenAiResponsesProvider } from './openai-responses';
import { type HttpDriverOptions } from './wire';

const API_KEY = 'sk-rate-limit-test-0123456789abcdef';

interface Fake {
  baseUrl: string;
  busy: FakeRefusal[];
  requests: unknown[];
  close(): Promise<void>;
}

interface Wire {
  name: string;
  start(): Promise<Fake>;
  provider(baseUrl: string, options: Partial<HttpDriverOptions>): ModelProvider;
  /** A short provider-named window, as this wire names it. */
  shortWindow: Pick<FakeRefusal, 'headers' | 'retryDelay'>;
}

const wires: Wire[] = [
  {
    name: 'anthropic',
    start: startFakeAnthropicServer,
    provider: (baseUrl, options) => createAnthropicProvider({ baseUrl, apiKey: API_KEY, ...options }),
    // Anthropic names whole seconds; the parser takes a fraction too, which keeps the test fast.
    shortWindow: { headers: { 'retry-after': '0.05' } },
  },
  {
    name: 'openai-responses',
    start: startFakeResponsesServer,
    provider: (baseUrl, options) => createOpenAiResponsesProvider({ baseUrl, apiKey: API_KEY, ...options }),
    shortWindow: { headers: { 'retry-after-ms': '50', 'retry-after': '1' } },
  },
  {
    name: 'gemini',
    start: startFakeGeminiServer,
    provider: (baseUrl, options) => createGeminiProvider({ baseUrl, apiKey: API_KEY, ...options }),
    // Google names the window in the body (RetryInfo), usually without a header.
    shortWindow: { retryDelay: '0.05s' },
  },
  {
    name: 'chat-completions',
    start: startFakeChatServer,
    provider: (baseUrl, options) => createOpenAiCompatibleProvider({ id: 'chat', baseUrl, apiKey: API_KEY, ...options }),
    shortWindow: { headers: { 'retry-after-ms': '50' } },
  },
];

function ask(model = 'ok'): ModelRequest {
  return { model, maxTokens: 64, messages: [{ role: 'user', content: 'Say hello.' }] };
}

/** The call's refusal: a ModelError of `kind`, free (DidNotHappen, no usage), never carrying the key. */
async function failure(call: Promise<unknown>, kind: ModelErrorKind): Promise<ModelError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof ModelError)) throw new Error(`expected a ModelError, got ${String(error)}`);
  expect({ kind: error.kind, disposition: error.disposition, usage: error.usage }).toEqual({ kind, disposition: 'DidNotHappen', usage: null });
  // Never the key, whole or in part (an echoing provider's words were scrubbed).
  expect([error.message.includes(API_KEY), error.message.includes(API_KEY.slice(10, 18))]).toEqual([false, false]);
  return error;
}

for (const wire of wires) {
  describe(`${wire.name}: a rate-limited call`, () => {
    let fake: Fake;
    let expected: string;
    beforeAll(async () => {
      fake = await wire.start();
      expected = (await wire.provider(fake.baseUrl, {}).complete(ask())).text;
      fake.requests.length = 0;
    });
    afterAll(() => fake.close());
    // A test that failed part way must not leave its refusals to the next one.
    beforeEach(() => {
      fake.requests.length = 0;
      fake.busy.length = 0;
    });

    it('429 with a named window: waits it out, sends again, and answers once', async () => {
      fake.busy.push({ status: 429, ...wire.shortWindow }, { status: 429, ...wire.shortWindow });
      const started = Date.now();
      const completion = await wire.provider(fake.baseUrl, {}).complete(ask());
      expect(completion.text).toBe(expected);
      expect(expected.length).toBeGreaterThan(0);
      expect(fake.requests).toHaveLength(3);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2 * 45);
    });

    it('a window that ends after the deadline: refused at once, saying when to come back', async () => {
      fake.busy.push({ status: 429, echoKey: true, headers: { 'retry-after': '30' } });
      const started = Date.now();
      const error = await failure(wire.provider(fake.baseUrl, { timeoutMs: 2_000 }).complete(ask()), 'refused');
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(fake.requests).toHaveLength(1);
      expect(error.retryAfterMs).toBe(30_000);
      expect(error.message).toContain('HTTP 429');
      expect(error.message).toMatch(/the provider said to come back in 30 s \(at \d{4}-\d\d-\d\dT[\d:.]+Z\), after this call's deadline; not retried \(1 attempt\)/);
      expect(error.message).toContain('[key]');
    });

    it('the retry cap reached: refused, naming the attempts, the key scrubbed', async () => {
      for (let i = 0; i < 3; i++) fake.busy.push({ status: 429, echoKey: true, ...wire.shortWindow });
      const error = await failure(wire.provider(fake.baseUrl, { rateLimitRetries: 2 }).complete(ask()), 'refused');
      expect(fake.requests).toHaveLength(3);
      expect(error.message).toContain('gave up after 3 attempts (2 retries, the cap)');
      expect(error.message).toContain('[key]');
      expect(error.retryAfterMs).toBe(50);
    });

    it('a cancel during the wait ends it at once: unavailable, nothing generated', async () => {
      fake.busy.push({ status: 429, headers: { 'retry-after': '20' } });
      const controller = new AbortController();
      const started = Date.now();
      setTimeout(() => controller.abort(), 100);
      const error = await failure(wire.provider(fake.baseUrl, {}).complete(ask(), controller.signal), 'unavailable');
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(error.message).toContain('cancelled by the caller while waiting 20 s to retry a rate-limited call');
      expect(error.retryAfterMs).toBe(20_000);
      expect(fake.requests).toHaveLength(1);
    });

    it('429 without a window: refused at once (the provider did not say when)', async () => {
      fake.busy.push({ status: 429 });
      const error = await failure(wire.provider(fake.baseUrl, {}).complete(ask()), 'refused');
      expect(error.retryAfterMs).toBeNull();
      expect(fake.requests).toHaveLength(1);
    });

    it('a window longer than one wait may take: refused at once with the window', async () => {
      fake.busy.push({ status: 429, headers: { 'retry-after': '5' } });
      const error = await failure(wire.provider(fake.baseUrl, { maxRetryWaitMs: 1_000 }).complete(ask()), 'refused');
      expect(error.message).toContain('longer than the 1 s one wait may take');
      expect(error.retryAfterMs).toBe(5_000);
      expect(fake.requests).toHaveLength(1);
    });

    it('rateLimitRetries 0: the first refusal is the answer, unchanged', async () => {
      fake.busy.push({ status: 429, ...wire.shortWindow });
      const error = await failure(wire.provider(fake.baseUrl, { rateLimitRetries: 0 }).complete(ask()), 'refused');
      expect(error.message).not.toContain('attempt');
      expect(fake.requests).toHaveLength(1);
    });

    it('a bad retry policy is a TypeError naming the option', () => {
      for (const rateLimitRetries of [-1, 1.5, 11]) expect(() => wire.provider(fake.baseUrl, { rateLimitRetries })).toThrow(/rateLimitRetries must be a whole number from 0 to 10/);
      expect(() => wire.provider(fake.baseUrl, { maxRetryWaitMs: 0 })).toThrow(/maxRetryWaitMs must be a positive number/);
    });
  });
}

describe('overload and what is never sent again', () => {
  let anthropic: Fake;
  let gemini: Fake;
  const claude = (options: Partial<HttpDriverOptions> = {}) => createAnthropicProvider({ baseUrl: anthropic.baseUrl, apiKey: API_KEY, ...options });
  beforeAll(async () => {
    [anthropic, gemini] = await Promise.all([startFakeAnthropicServer(), startFakeGeminiServer()]);
  });
  afterAll(() => Promise.all([anthropic.close(), gemini.close()]));
  beforeEach(() => {
    for (const fake of [anthropic, gemini]) {
      fake.requests.length = 0;
      fake.busy.length = 0;
    }
  });

  it('anthropic 529 without a window: a short jittered backoff, then the answer', async () => {
    anthropic.busy.push({ status: 529 });
    const started = Date.now();
    expect((await claude().complete(ask())).text.length).toBeGreaterThan(0);
    expect(anthropic.requests).toHaveLength(2);
    // The first step is 0.5 s, drawn between half and all of it.
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(240);
    expect(waited).toBeLessThan(3_000);
  });

  it('anthropic overloaded_error event before any token: sent again (529 with a window honours it)', async () => {
    anthropic.busy.push({ status: 200, asEvent: true }, { status: 529, headers: { 'retry-after': '0' } });
    expect((await claude().complete(ask())).text.length).toBeGreaterThan(0);
    expect(anthropic.requests).toHaveLength(3);
  });

  it('Retry-After as an HTTP-date already past: sent again at once', async () => {
    anthropic.busy.push({ status: 429, headers: { 'retry-after': new Date(Date.now() - 5_000).toUTCString() } });
    expect((await claude().complete(ask())).text.length).toBeGreaterThan(0);
    expect(anthropic.requests).toHaveLength(2);
  });

  it('anthropic overloaded to the cap: unavailable (the 5xx rung), naming the attempts', async () => {
    anthropic.busy.push({ status: 529, headers: { 'retry-after': '0' } }, { status: 529, headers: { 'retry-after': '0' } });
    const error = await failure(claude({ rateLimitRetries: 1 }).complete(ask()), 'unavailable');
    expect(error.message).toContain('HTTP 529');
    expect(error.message).toContain('gave up after 2 attempts (1 retry, the cap)');
  });

  it('an error after tokens, a 500 and a 503 are never sent again from the driver', async () => {
    // Mid-stream overload after text: generation happened and was billed; one call, one bill.
    await expect(claude().complete(ask('error-mid-stream'))).rejects.toMatchObject({ kind: 'interrupted' });
    await expect(claude().complete(ask('server-error'))).rejects.toMatchObject({ kind: 'unavailable' });
    expect(anthropic.requests).toHaveLength(2);
    // 503 with Retry-After: unavailable, the window carried for the runtime; not retried here.
    await expect(createGeminiProvider({ baseUrl: gemini.baseUrl, apiKey: API_KEY }).complete(ask('overloaded'))).rejects.toMatchObject({ kind: 'unavailable', retryAfterMs: 1000 });
    expect(gemini.requests).toHaveLength(1);
  });
});
