/**
 * What a plane runs with, read from files: agent manifests (the bundled defaults in
 * resources/agents, plus the person's own in <data dir>/agents), the policy (<data dir>/policy.json
 * when present, else the bundled default), and model providers (the local deterministic one
 * always; Anthropic, OpenAI Responses, an OpenAI-compatible chat server and Gemini from their
 * AGENTPLANE_* variables, see loadProviders), priced per model (resources/prices.json, overridden
 * by <data dir>/prices.json).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAgentsFrom, ManifestError, type LoadedAgent } from '../runtime/manifest';
import { PolicyEngine } from '../runtime/policy';
import type { ModelProvider } from '../runtime/model-provider';
export { PROVIDER_SETUP, unconfiguredProviderMessage } from '../runtime/model-provider';
import { createLocalProvider } from '../providers/local-provider';
import { createOpenAiCompatibleProvider } from '../providers/openai-compatible';
import { createOpenAiResponsesProvider } from '../providers/openai-responses';
import { createAnthropicProvider } from '../providers/anthropic-messages';
import { createGeminiProvider } from '../providers/gemini';
import { loadPrices, type PriceBook } from '../providers/prices';
import { appRoot } from '../base/app-paths';

export function resourcesDir(): string {
  return join(appRoot(), 'resources');
}

export function loadAgents(dataDir: string): LoadedAgent[] {
  const bundled = loadAgentsFrom(join(resourcesDir(), 'agents'));
  const ownDir = join(dataDir, 'agents');
  const own = existsSync(ownDir) ? loadAgentsFrom(ownDir) : [];
  const names = new Map(bundled.map((a) => [a.manifest.name, a.source]));
  for (const agent of own) {
    const clash = names.get(agent.manifest.name);
    if (clash) throw new ManifestError(`${agent.source}: an agent named ${agent.manifest.name} is already declared in ${clash}`);
  }
  return [...bundled, ...own];
}

export function loadPolicy(dataDir: string): PolicyEngine {
  const own = join(dataDir, 'policy.json');
  const source = existsSync(own) ? own : join(resourcesDir(), 'policy.json');
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(source, 'utf8'));
  } catch (error) {
    throw new Error(`${source}: not valid JSON (${(error as Error).message})`);
  }
  return PolicyEngine.parse(raw, source);
}

export interface LoadProvidersOptions {
  /** Where the user's prices.json lives (overrides resources/prices.json); absent: bundled prices only. */
  dataDir?: string;
  /** The bundled resources directory (tests); default resourcesDir(). */
  resources?: string;
}

/**
 * The configured providers, by id:
 * - `local` always (the keyless deterministic default);
 * - `anthropic` when AGENTPLANE_ANTHROPIC_API_KEY is set (AGENTPLANE_ANTHROPIC_BASE_URL, _MODEL optional);
 * - `openai` (Responses) when AGENTPLANE_OPENAI_API_KEY is set (AGENTPLANE_OPENAI_BASE_URL, _MODEL optional);
 * - `chat` (chat-completions) when AGENTPLANE_OPENAI_BASE_URL is set, key optional (self-hosted
 *   servers usually have none); `openai-compatible` is the same server under its former id, kept
 *   so manifests and the peer host that name it still work (its own instance, so its effects
 *   and grants say `openai-compatible`, as the manifest did);
 * - `gemini` when AGENTPLANE_GEMINI_API_KEY is set (AGENTPLANE_GEMINI_BASE_URL, _MODEL optional).
 * Every provider is priced per model from the price book (see providers/prices.ts).
 */
export function loadProviders(env: NodeJS.ProcessEnv = process.env, options: LoadProvidersOptions = {}): Map<string, ModelProvider> {
  const book = loadPrices(options.resources ?? resourcesDir(), options.dataDir);
  const providers = new Map<string, ModelProvider>();
  const add = (provider: ModelProvider) => providers.set(provider.id, withPrices(provider, book));
  const set = (name: string) => (env[name] ? env[name] : undefined);
  add(createLocalProvider());

  const anthropicKey = set('AGENTPLANE_ANTHROPIC_API_KEY');
  if (anthropicKey) {
    const baseUrl = set('AGENTPLANE_ANTHROPIC_BASE_URL');
    const model = set('AGENTPLANE_ANTHROPIC_MODEL');
    add(createAnthropicProvider({ id: 'anthropic', apiKey: anthropicKey, ...(baseUrl ? { baseUrl } : {}), ...(model ? { model } : {}) }));
  }

  const openAiKey = set('AGENTPLANE_OPENAI_API_KEY');
  const openAiBase = set('AGENTPLANE_OPENAI_BASE_URL');
  const openAiModel = set('AGENTPLANE_OPENAI_MODEL');
  if (openAiKey) {
    add(createOpenAiResponsesProvider({ id: 'openai', apiKey: openAiKey, ...(openAiBase ? { baseUrl: openAiBase } : {}), ...(openAiModel ? { model: openAiModel } : {}) }));
  }
  if (openAiBase) {
    for (const id of ['chat', 'openai-compatible']) {
      add(createOpenAiCompatibleProvider({ id, baseUrl: openAiBase, ...(openAiKey ? { apiKey: openAiKey } : {}), ...(openAiModel ? { model: openAiModel } : {}) }));
    }
  }

  const geminiKey = set('AGENTPLANE_GEMINI_API_KEY');
  if (geminiKey) {
    const baseUrl = set('AGENTPLANE_GEMINI_BASE_URL');
    const model = set('AGENTPLANE_GEMINI_MODEL');
    add(createGeminiProvider({ id: 'gemini', apiKey: geminiKey, ...(baseUrl ? { baseUrl } : {}), ...(model ? { model } : {}) }));
  }
  return providers;
}

/**
 * The provider, priced per model from the book. The price table is keyed by the provider's id,
 * except `openai-compatible`, priced as `chat` (one server, two names). A derived object (the
 * driver is its prototype), so whatever else a driver exposes is still there.
 */
export function withPrices(provider: ModelProvider, book: PriceBook): ModelProvider {
  const table = provider.id === 'openai-compatible' ? 'chat' : provider.id;
  const priced = Object.create(provider) as ModelProvider;
  Object.defineProperty(priced, 'pricingFor', { value: (model: string) => book.pricingFor(table, model), enumerable: true });
  return priced;
}
