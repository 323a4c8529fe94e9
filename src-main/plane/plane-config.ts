/**
 * What a plane runs with, read from files: agent manifests (the bundled defaults in
 * resources/agents, plus the person's own in <data dir>/agents), the policy (<data dir>/policy.json
 * when present, else the bundled default), and model providers (the local deterministic one
 * always; Anthropic, OpenAI Responses, an OpenAI-compatible chat server and Gemini from their
 * AGENTPLANE_* variables and the settings stored in <data dir>/providers.json, see loadProviders
 * and provider-settings.ts), priced per model (resources/prices.json, overridden
 * by <data dir>/prices.json), and the sensitivity labels and ceilings (<data dir>/sensitivity.json).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { join } from 'node:path';
import { brokenAgentLine, loadAgentsFrom, ManifestError, readAgentFolder, type AgentFolder, type BrokenAgent, type LoadedAgent, type PreParsedManifests, type ReadFolderOptions } from '../runtime/manifest';
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
import { SETTABLE_PROVIDERS } from '../../src-shared/protocol/providers';
import { resolveProviderSettings, type OpenedSettings, type ResolvedProviderSettings } from './provider-settings';
import { Sensitivity } from '../../src-shared/vocabulary/sensitivity';

export function resourcesDir(): string {
  return join(appRoot(), 'resources');
}

/** Where the build writes the bundled agents' manifests, parsed (PreParsedManifests; electron.vite.config.ts). */
export const BUNDLED_AGENTS_FILE = 'bundled-agents.json';

/** The bundled manifests as the build parsed them; undefined from source, or if the file does not read (each is then parsed here). */
function preParsedBundledAgents(): PreParsedManifests | undefined {
  try {
    return JSON.parse(readFileSync(join(appRoot(), 'out', 'main', BUNDLED_AGENTS_FILE), 'utf8')) as PreParsedManifests;
  } catch {
    return undefined;
  }
}

/** The bundled agents (resources/agents): part of the build, so one that does not load is a build error and throws. */
export function loadBundledAgents(): LoadedAgent[] {
  const preParsed = preParsedBundledAgents();
  return loadAgentsFrom(join(resourcesDir(), 'agents'), { bundled: true, ...(preParsed ? { preParsed } : {}) });
}

/** Where the person's own agent files are: `<data dir>/agents`. */
export function ownAgentsDir(dataDir: string): string {
  return join(dataDir, 'agents');
}

/**
 * The person's own agents (<data dir>/agents) beside the bundled ones: those that load, and
 * those that do not (each with its file, field and fix), a name the bundled set already has
 * among the latter. Never throws for one of the person's files: the plane starts without it.
 */
export function readOwnAgents(dataDir: string, bundled: readonly LoadedAgent[], options: Pick<ReadFolderOptions, 'prefer' | 'trust'> = {}): AgentFolder {
  const folder = readAgentFolder(ownAgentsDir(dataDir), options);
  const names = new Map(bundled.map((a) => [a.manifest.name, a.source]));
  const agents: LoadedAgent[] = [];
  const broken: BrokenAgent[] = [...folder.broken];
  for (const agent of folder.agents) {
    const clash = names.get(agent.manifest.name);
    if (clash) broken.push({ name: agent.manifest.name, source: agent.source, field: 'name', line: null, problem: `an agent named ${agent.manifest.name} is already declared in ${clash}: give this one another \`name:\`` });
    else agents.push(agent);
  }
  broken.sort((a, b) => a.source.localeCompare(b.source));
  return { agents, broken, digests: folder.digests };
}

/** Every agent a plane on `dataDir` runs, refusing the lot when one file does not load (tests and embedders that want that). */
export function loadAgents(dataDir: string): LoadedAgent[] {
  const bundled = loadBundledAgents();
  const own = readOwnAgents(dataDir, bundled);
  const first = own.broken[0];
  if (first) throw new ManifestError(brokenAgentLine(first), { source: first.source, field: first.field, problem: first.problem, line: first.line });
  return [...bundled, ...own.agents];
}

export function loadPolicy(dataDir: string): PolicyEngine {
  const own = join(dataDir, 'policy.json');
  const source = existsSync(own) ? own : join(resourcesDir(), 'policy.json');
  return PolicyEngine.parse(readJsonFile(source), source);
}

/** An operator's settings file, parsed; one that is not JSON throws naming the file. */
function readJsonFile(source: string): unknown {
  try {
    return JSON.parse(readFileSync(source, 'utf8'));
  } catch (error) {
    throw new Error(`${source}: not valid JSON (${(error as Error).message})`);
  }
}

/**
 * The operator's sensitivity labels and egress ceilings, `<data dir>/sensitivity.json` when
 * present (docs/GOVERNED-RUNTIME.md, "Sensitivity"), else the defaults (which refuse nothing). A
 * file that does not parse or validate stops the plane with the file and the field named: a
 * plane that ignored a ceiling its operator wrote would send what they refused.
 */
export function loadSensitivity(dataDir: string): Sensitivity {
  const source = join(dataDir, SENSITIVITY_FILE);
  if (!existsSync(source)) return Sensitivity.defaults();
  return Sensitivity.parse(readJsonFile(source), source);
}

/** The file in the data dir holding the sensitivity labels and ceilings. */
export const SENSITIVITY_FILE = 'sensitivity.json';

export interface LoadProvidersOptions {
  /** Where the user's prices.json lives (overrides resources/prices.json); absent: bundled prices only. */
  dataDir?: string;
  /** The bundled resources directory (tests); default resourcesDir(). */
  resources?: string;
  /**
   * What Settings stored (keys opened; see provider-settings.ts), merged under the environment:
   * a variable wins over a stored value for the same field. Absent: the environment alone.
   */
  stored?: OpenedSettings;
  /**
   * The dispatcher every HTTP driver sends through: the plane passes netguard's (net/netguard.ts),
   * so a provider's base URL cannot reach a private address unless the person configured it
   * (which allows exactly that origin). Absent: each driver's own undici Agent (tests, peer host).
   */
  dispatcher?: Dispatcher;
}

/**
 * The configured providers, by id:
 * - `local` always (the keyless deterministic default);
 * - `anthropic` when it has a key: AGENTPLANE_ANTHROPIC_API_KEY or one stored in Settings
 *   (AGENTPLANE_ANTHROPIC_BASE_URL, _MODEL or their stored values optional);
 * - `openai` (Responses) when it has a key (AGENTPLANE_OPENAI_API_KEY or stored; _BASE_URL, _MODEL optional);
 * - `chat` (chat-completions) when it has a base URL (AGENTPLANE_OPENAI_BASE_URL or stored), key
 *   optional (self-hosted servers usually have none); `openai-compatible` is the same server
 *   under its former id, kept so manifests and the peer host that name it still work (its own
 *   instance, so its effects and grants say `openai-compatible`, as the manifest did);
 * - `gemini` when it has a key (AGENTPLANE_GEMINI_API_KEY or stored; _BASE_URL, _MODEL optional).
 * Which source wins for each field is resolveProviderSettings' rule (env first). Every provider is
 * priced per model from the price book (see providers/prices.ts).
 */
export function loadProviders(env: NodeJS.ProcessEnv = process.env, options: LoadProvidersOptions = {}): Map<string, ModelProvider> {
  const book = loadPrices(options.resources ?? resourcesDir(), options.dataDir);
  const providers = new Map<string, ModelProvider>();
  const add = (provider: ModelProvider) => providers.set(provider.id, withPrices(provider, book));
  const settings = resolveProviderSettings(env, options.stored);
  /** The optional fields, as driver options (absent ones left out: the driver's defaults apply). */
  const guarded = options.dispatcher ? { dispatcher: options.dispatcher } : {};
  const optional = ({ baseUrl, model }: ResolvedProviderSettings) => ({ ...(baseUrl ? { baseUrl } : {}), ...(model ? { model } : {}), ...guarded });
  add(createLocalProvider());

  const anthropic = settings.anthropic;
  if (anthropic.apiKey) add(createAnthropicProvider({ id: 'anthropic', apiKey: anthropic.apiKey, ...optional(anthropic) }));

  const openai = settings.openai;
  if (openai.apiKey) add(createOpenAiResponsesProvider({ id: 'openai', apiKey: openai.apiKey, ...optional(openai) }));

  const chat = settings.chat;
  if (chat.baseUrl) {
    for (const id of ['chat', 'openai-compatible']) {
      add(createOpenAiCompatibleProvider({ id, baseUrl: chat.baseUrl, ...(chat.apiKey ? { apiKey: chat.apiKey } : {}), ...(chat.model ? { model: chat.model } : {}), ...guarded }));
    }
  }

  const gemini = settings.gemini;
  if (gemini.apiKey) add(createGeminiProvider({ id: 'gemini', apiKey: gemini.apiKey, ...optional(gemini) }));
  return providers;
}

/** The ids loadProviders may add or leave out depending on configuration (`local` is always there). */
const CONFIGURABLE_IDS = [...SETTABLE_PROVIDERS, 'openai-compatible'];

/**
 * Rebuilds the configurable providers into `target`, in place: the runtime holds that very Map
 * and looks a provider up at admission and at each model step, so the next run sees the change
 * without a restart. A run already past admission keeps the driver it was handed for the call
 * in flight; its next step uses the new one (and a changed endpoint is then divergence on
 * replay, as it would be after a restart with other variables: the endpoint is effect identity).
 * Throws (a driver's TypeError) before touching `target` when a setting is unusable.
 */
export function reloadProviders(target: Map<string, ModelProvider>, env: NodeJS.ProcessEnv, options: LoadProvidersOptions): void {
  const fresh = loadProviders(env, options);
  for (const id of CONFIGURABLE_IDS) {
    const provider = fresh.get(id);
    if (provider) target.set(id, provider);
    else target.delete(id);
  }
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
