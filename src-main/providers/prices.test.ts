/**
 * Money: the pricing math (cache tokens at their own rates, reasoning as output, rounding up),
 * the bundled price book and the user's override file (a bad one names the file and the field),
 * the model that answered is the one priced, an unpriced model is never free, the providers the
 * environment configures (keys never in a profile), and a dollar ceiling in a manifest.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { costOf, type Completion, type ModelProvider, type ModelUsage } from '../runtime/model-provider';
import { spendOf } from '../runtime/model-effect';
import { compileAgent } from '../runtime/manifest';
import { loadProviders, resourcesDir, unconfiguredProviderMessage, withPrices } from '../plane/plane-config';
import { createLocalProvider } from './local-provider';
import { loadPrices, parsePriceFile, PriceBook, PriceFileError } from './prices';
import { tempDataDir } from '../../tests/support/journal-support';

const usage = (u: Partial<ModelUsage>): ModelUsage => ({ inputTokens: 0, outputTokens: 0, reasoningTokens: 0, ...u });
const SONNET = { inputPerMTokMicros: 3_000_000, outputPerMTokMicros: 15_000_000, cacheReadPerMTokMicros: 300_000, cacheWritePerMTokMicros: 3_750_000 };

describe('costOf', () => {
  it('prices cache reads and writes at their own rates and reasoning as output', () => {
    // 1000 x 3 + 200 x 15 + 100 x 15 + 10000 x 0.3 + 2000 x 3.75 = 3000 + 3000 + 1500 + 3000 + 7500
    expect(costOf(usage({ inputTokens: 1000, outputTokens: 200, reasoningTokens: 100, cacheReadTokens: 10_000, cacheWriteTokens: 2000 }), SONNET)).toBe(18_000);
    expect(costOf(usage({ reasoningTokens: 1000 }), SONNET)).toBe(costOf(usage({ outputTokens: 1000 }), SONNET));
    expect(costOf(usage({ cacheReadTokens: 1000 }), SONNET)).toBe(300);
  });

  it('rounds up, once, over the sum: never bills less than consumed', () => {
    expect(costOf(usage({ inputTokens: 1 }), SONNET)).toBe(3);
    expect(costOf(usage({ cacheReadTokens: 1 }), SONNET)).toBe(1);
    expect(costOf(usage({ cacheReadTokens: 1, inputTokens: 1 }), { inputPerMTokMicros: 400_000, outputPerMTokMicros: 0, cacheReadPerMTokMicros: 400_000 })).toBe(1);
    expect(costOf(usage({}), SONNET)).toBe(0);
  });

  it('a pricing without cache rates bills cache tokens at the input rate, never free', () => {
    expect(costOf(usage({ cacheReadTokens: 1000, cacheWriteTokens: 1000 }), { inputPerMTokMicros: 2_000_000, outputPerMTokMicros: 0 })).toBe(4000);
  });
});

describe('the price book', () => {
  const book = loadPrices(resourcesDir());

  it('the bundled resources/prices.json is valid and prices the providers per model', () => {
    expect(book.pricingFor('anthropic', 'claude-sonnet-4-5')).toEqual(SONNET);
    expect(book.pricingFor('openai', 'gpt-5')).toMatchObject({ inputPerMTokMicros: 1_250_000, outputPerMTokMicros: 10_000_000 });
    expect(book.pricingFor('gemini', 'gemini-2.5-flash')).toMatchObject({ inputPerMTokMicros: 300_000 });
    expect(book.pricingFor('local', 'anything-at-all')).toEqual({ inputPerMTokMicros: 0, outputPerMTokMicros: 0, cacheReadPerMTokMicros: 0, cacheWritePerMTokMicros: 0 });
  });

  it('a dated or versioned answer is priced as its alias; an unknown model or provider has no price', () => {
    expect(book.pricingFor('anthropic', 'claude-sonnet-4-5-20250929')).toEqual(SONNET);
    expect(book.pricingFor('openai', 'gpt-4o-2024-08-06')).toEqual(book.pricingFor('openai', 'gpt-4o'));
    expect(book.pricingFor('gemini', 'models/gemini-2.5-pro')).toEqual(book.pricingFor('gemini', 'gemini-2.5-pro'));
    // A longer name is another model, not a version: gpt-5-mini is not gpt-5.
    expect(book.pricingFor('openai', 'gpt-5-mini')).not.toEqual(book.pricingFor('openai', 'gpt-5'));
    expect(book.pricingFor('openai', 'gpt-5-turbo-ultra')).toBeNull();
    expect(book.pricingFor('anthropic', 'claude-unknown')).toBeNull();
    expect(book.pricingFor('chat', 'llama3')).toBeNull();
  });

  it('<data dir>/prices.json overrides entries model by model and adds new ones', () => {
    const dir = tempDataDir('ap-prices-');
    writeFileSync(join(dir, 'prices.json'), JSON.stringify({ anthropic: { 'claude-sonnet-4-5': { input: 1, output: 2 } }, chat: { '*': { input: 0, output: 0 } } }));
    const own = loadPrices(resourcesDir(), dir);
    expect(own.pricingFor('anthropic', 'claude-sonnet-4-5')).toEqual({ inputPerMTokMicros: 1_000_000, outputPerMTokMicros: 2_000_000 });
    expect(own.pricingFor('anthropic', 'claude-haiku-4-5')).toEqual(book.pricingFor('anthropic', 'claude-haiku-4-5'));
    expect(own.pricingFor('chat', 'llama3')).toEqual({ inputPerMTokMicros: 0, outputPerMTokMicros: 0 });
  });

  it('a bad file is a clear error naming the file and the field', () => {
    const bad = (value: unknown) => () => parsePriceFile(JSON.stringify(value), '/d/prices.json');
    expect(() => parsePriceFile('{', '/d/prices.json')).toThrow(/^\/d\/prices\.json: not valid JSON/);
    expect(bad({ anthropic: { 'claude-x': { input: -1, output: 1 } } })).toThrow(PriceFileError);
    expect(bad({ anthropic: { 'claude-x': { input: -1, output: 1 } } })).toThrow(/\/d\/prices\.json: anthropic\.claude-x\.input: /);
    expect(bad({ anthropic: { 'claude-x': { input: 1 } } })).toThrow(/anthropic\.claude-x\.output/);
    expect(bad({ anthropic: { 'claude-x': { input: 1, output: 1, cached: 1 } } })).toThrow(/anthropic\.claude-x/);
    expect(bad({ anthropic: { 'claude-x': { input: '3', output: 1 } } })).toThrow(/anthropic\.claude-x\.input/);
    expect(bad({ Anthropic: {} })).toThrow(/prices\.json: Anthropic: a provider id/);
    expect(bad([1])).toThrow(/\/d\/prices\.json: \(top level\)/);
    const dir = tempDataDir('ap-prices-bad-');
    writeFileSync(join(dir, 'prices.json'), JSON.stringify({ openai: { 'gpt-5': { input: 1e9, output: 1 } } }));
    expect(() => loadPrices(resourcesDir(), dir)).toThrow(new RegExp(`${join(dir, 'prices.json').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: openai\\.gpt-5\\.input`));
  });
});

describe('the model effect prices the model that answered', () => {
  const book = new PriceBook({ anthropic: { cheap: { input: 1, output: 1 }, dear: { input: 10, output: 10 } } });
  const base = { ...createLocalProvider() } as ModelProvider;
  const provider = withPrices(Object.assign(Object.create(createLocalProvider()) as ModelProvider, { id: 'anthropic' }), book);

  it('Completion.model when the wire names it, else the model requested', () => {
    const u = usage({ inputTokens: 1000, outputTokens: 1000 });
    expect(spendOf(u, provider, false, 'dear').costMicros).toBe(20_000);
    expect(spendOf(u, provider, false, 'cheap').costMicros).toBe(2_000);
  });

  it('an unpriced model is never free: its tokens are counted and its spend marked unaccounted', () => {
    const spend = spendOf(usage({ inputTokens: 10, outputTokens: 5 }), provider, false, 'mystery');
    expect(spend).toMatchObject({ effects: 1, inputTokens: 10, outputTokens: 5, costMicros: 0, unaccounted: true });
    expect(spendOf(usage({ inputTokens: 10 }), provider, false, 'cheap').unaccounted).toBeUndefined();
  });

  it('cache tokens count against a token ceiling as input and are priced at their own rate', () => {
    const spend = spendOf(usage({ inputTokens: 10, cacheReadTokens: 1000, cacheWriteTokens: 100 }), withPrices(Object.assign(Object.create(base) as ModelProvider, { id: 'anthropic' }), new PriceBook({ anthropic: { m: { input: 1, output: 1, cacheRead: 0.1, cacheWrite: 2 } } })), false, 'm');
    expect(spend.inputTokens).toBe(1110);
    expect(spend.costMicros).toBe(Math.ceil((10 * 1_000_000 + 1000 * 100_000 + 100 * 2_000_000) / 1_000_000));
  });

  it('a provider without a price book is priced provider-wide, as before', () => {
    const plain = createLocalProvider();
    expect(spendOf(usage({ inputTokens: 5 }), plain, false, 'x')).toMatchObject({ costMicros: 0 });
    expect(spendOf(usage({ inputTokens: 5 }), plain, false, 'x').unaccounted).toBeUndefined();
  });
});

describe('providers from the environment', () => {
  const KEY_A = 'sk-ant-test-key-0123456789abcdef';
  const KEY_O = 'sk-openai-test-key-0123456789abcdef';
  const KEY_G = 'AIza-gemini-test-key-0123456789abcdef';

  it('local always; nothing else without its variable', () => {
    expect([...loadProviders({}).keys()]).toEqual(['local']);
    expect([...loadProviders({ AGENTPLANE_ANTHROPIC_API_KEY: '' }).keys()]).toEqual(['local']);
  });

  it('each key turns on its provider; a base URL alone turns on chat (and its former id)', () => {
    const all = loadProviders({
      AGENTPLANE_ANTHROPIC_API_KEY: KEY_A,
      AGENTPLANE_ANTHROPIC_MODEL: 'claude-sonnet-4-5',
      AGENTPLANE_OPENAI_API_KEY: KEY_O,
      AGENTPLANE_GEMINI_API_KEY: KEY_G,
      AGENTPLANE_GEMINI_BASE_URL: 'http://127.0.0.1:9/v1beta',
    });
    expect([...all.keys()].sort()).toEqual(['anthropic', 'gemini', 'local', 'openai']);
    expect(all.get('anthropic')!.profile).toMatchObject({ provider: 'anthropic', driver: 'anthropic-messages/1', defaultModel: 'claude-sonnet-4-5' });
    expect(all.get('openai')!.profile).toMatchObject({ driver: 'openai-responses/1', endpoint: 'https://api.openai.com/v1' });
    expect(all.get('gemini')!.profile).toMatchObject({ driver: 'gemini-generate-content/1', endpoint: 'http://127.0.0.1:9/v1beta' });
    expect(all.get('anthropic')!.pricingFor!('claude-sonnet-4-5')).toEqual(SONNET);
    for (const provider of all.values()) {
      const shown = JSON.stringify({ profile: provider.profile, pricing: provider.pricing, id: provider.id });
      for (const key of [KEY_A, KEY_O, KEY_G]) expect(shown).not.toContain(key);
    }

    const selfHosted = loadProviders({ AGENTPLANE_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', AGENTPLANE_OPENAI_MODEL: 'llama3' });
    expect([...selfHosted.keys()].sort()).toEqual(['chat', 'local', 'openai-compatible']);
    expect(selfHosted.get('chat')!.profile).toMatchObject({ provider: 'chat', driver: 'openai-chat-completions/1', defaultModel: 'llama3' });
    expect(selfHosted.get('openai-compatible')!.id).toBe('openai-compatible');
    // Unpriced unless the user prices it: a compatible server may be a paid one.
    expect(selfHosted.get('chat')!.pricingFor!('llama3')).toBeNull();

    const both = loadProviders({ AGENTPLANE_OPENAI_API_KEY: KEY_O, AGENTPLANE_OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1' });
    expect([...both.keys()].sort()).toEqual(['chat', 'local', 'openai', 'openai-compatible']);
    expect(both.get('openai')!.profile.endpoint).toBe('http://127.0.0.1:8000/v1');
  });

  it('reads the user price file from the data dir', () => {
    const dir = tempDataDir('ap-prices-env-');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'prices.json'), JSON.stringify({ chat: { llama3: { input: 0.5, output: 0.5 } } }));
    const providers = loadProviders({ AGENTPLANE_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' }, { dataDir: dir });
    expect(providers.get('chat')!.pricingFor!('llama3')).toEqual({ inputPerMTokMicros: 500_000, outputPerMTokMicros: 500_000 });
    expect(providers.get('openai-compatible')!.pricingFor!('llama3')).toEqual({ inputPerMTokMicros: 500_000, outputPerMTokMicros: 500_000 });
  });

  it('a priced provider still answers as its driver does', async () => {
    const local = loadProviders({}).get('local')!;
    const completion: Completion = await local.complete({ model: 'local', messages: [{ role: 'user', content: 'hello' }], maxTokens: 16 });
    expect(completion.text).toContain('[local model]');
    expect(local.profile.driver).toBe('local-deterministic/1');
  });

  it('names the variable to set for a provider that is not configured', () => {
    expect(unconfiguredProviderMessage('x', 'anthropic')).toBe('agent x uses provider anthropic, which is not configured: set AGENTPLANE_ANTHROPIC_API_KEY, or save it in Settings (agentplane providers set anthropic --key-stdin)');
    expect(unconfiguredProviderMessage('x', 'chat')).toContain('set AGENTPLANE_OPENAI_BASE_URL');
    expect(unconfiguredProviderMessage('x', 'gemini')).toContain('set AGENTPLANE_GEMINI_API_KEY');
    expect(unconfiguredProviderMessage('x', 'openai')).toContain('set AGENTPLANE_OPENAI_API_KEY');
    expect(unconfiguredProviderMessage('x', 'bedrock')).toContain('not a known provider');
  });
});

describe('a dollar ceiling in a manifest', () => {
  const manifest = (budget: Record<string, unknown>) => ({ name: 'priced', description: 'd', input: { type: 'object' }, steps: [{ output: 1 }], budget });

  it('maxCostUsd becomes maxCostMicros, rounded down', () => {
    expect(compileAgent(manifest({ maxCostUsd: 0.25 }), 't').manifest.budget).toEqual({ maxCostMicros: 250_000 });
    expect(compileAgent(manifest({ maxCostUsd: 0.1, maxTokens: 5 }), 't').manifest.budget).toEqual({ maxCostMicros: 100_000, maxTokens: 5 });
    expect(compileAgent(manifest({ maxCostUsd: 0.0000019 }), 't').manifest.budget).toEqual({ maxCostMicros: 1 });
    expect(compileAgent(manifest({ maxCostMicros: 7 }), 't').manifest.budget).toEqual({ maxCostMicros: 7 });
  });

  it('both at once, or a negative amount, is refused', () => {
    expect(() => compileAgent(manifest({ maxCostUsd: 1, maxCostMicros: 1_000_000 }), 't')).toThrow(/maxCostUsd or maxCostMicros, not both/);
    expect(() => compileAgent(manifest({ maxCostUsd: -1 }), 't')).toThrow(/maxCostUsd/);
  });
});
