/**
 * The `providers.*` commands: model provider settings from the Settings view and
 * `agentplane providers …` (provider-settings.ts keeps them), applied live.
 *
 * - A change rebuilds the providers into the Map the runtime holds (reloadProviders), so the
 *   next admission and the next model step see it; no restart. A setting a driver would refuse
 *   is refused before anything is written.
 * - `providers.test` makes one tiny real call through the driver the runs would use (a
 *   one-word prompt, a handful of tokens, a short deadline) and answers the provider's own error
 *   as the driver reports it: trimmed, prompt echoes and the key scrubbed (providers/wire.ts).
 *   It is configuration, not a run's effect: nothing is journaled and no budget is charged.
 * - These are a person's commands. A protocol caller (an MCP host through the plane's door)
 *   may neither read nor change the plane's credentials, nor spend on its keys: refused.
 * - Nothing here puts a key in a log, an error or an answer: a view carries at most the last
 *   four characters, and the log says which fields changed, never their values.
 */
import type { CommandsOf } from '../../src-shared/ipc/contract';
import type { CommandHandlers, CallContext } from './dispatch';
import { PlaneError } from '../base/plane-error';
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { Logger } from '../base/logger';
import type { Dispatcher } from 'undici';
import { ModelError, type ModelProvider } from '../runtime/model-provider';
import type { ProviderView, ProviderTestResult, SettableProvider } from '../../src-shared/protocol/providers';
import { loadProviders, reloadProviders } from './plane-config';
import { PROVIDER_VARIABLES, ProviderSettingsError, providerViews, type KeySealer, type OpenedSettings, ProviderSettingsStore, type SettingsRead } from './provider-settings';

type ProviderCommands = CommandsOf<'providers'>;

/** How long a connection test may take, all in: it answers a person waiting at a button. */
export const PROVIDER_TEST_TIMEOUT_MS = 15_000;
/** The prompt of a connection test: one word, so the call costs next to nothing. */
export const PROVIDER_TEST_PROMPT = 'Hi';
/**
 * Tokens a connection test may generate: a handful. OpenAI's Responses API refuses a
 * max_output_tokens below 16 (a 400 that would read as a failed connection), so it gets 16.
 */
const TEST_MAX_TOKENS: Readonly<Record<SettableProvider, number>> = { anthropic: 8, openai: 16, gemini: 8, chat: 8 };

/** The stored settings the plane runs with, read once at start (and again after each change). */
export interface ProviderSettingsState {
  store: ProviderSettingsStore;
  settings: OpenedSettings;
  /** Why stored settings are (partly) not in force; null when they all are. */
  error: string | null;
}

/**
 * Reads the stored settings for a plane about to start. A file that cannot be used is not fatal:
 * the plane starts on the environment alone, the log and `providers.list` say why, and the file
 * is left as it is for the person to repair (a change is refused until then).
 */
export async function openProviderSettings(dataDir: string, sealer: KeySealer | null, logger: Logger): Promise<ProviderSettingsState> {
  const store = new ProviderSettingsStore(dataDir, sealer);
  try {
    const read = await store.read();
    const error = read.problems.length > 0 ? read.problems.join('; ') : null;
    if (error) logger.log('warn', 'some stored provider settings are not in force', { reason: error });
    return { store, settings: read.settings, error };
  } catch (error) {
    if (!(error instanceof ProviderSettingsError)) throw error;
    logger.log('warn', 'stored provider settings are not in force', { reason: error.message });
    return { store, settings: {}, error: error.message };
  }
}

export interface ProviderHandlersOptions {
  state: ProviderSettingsState;
  /** The Map the runtime holds: changed in place. */
  providers: Map<string, ModelProvider>;
  env: NodeJS.ProcessEnv;
  dataDir: string;
  logger: Logger;
  testTimeoutMs?: number;
  /** Netguard's dispatcher, kept by the rebuilt drivers (see plane-config.ts loadProviders). */
  dispatcher?: Dispatcher;
}

function personOnly(context: CallContext): void {
  if (context.caller) throw new PlaneError(ErrorCode.Forbidden, "only a person at this plane can see or change its model providers' settings");
}

/** The store's refusals as the contract's errors (a malformed or exposed file is the request's problem to fix). */
async function refusals<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProviderSettingsError) throw new PlaneError(ErrorCode.BadRequest, error.message);
    throw error;
  }
}

export function providerHandlers(options: ProviderHandlersOptions): Pick<CommandHandlers, ProviderCommands> {
  const { state, providers, env, dataDir, logger } = options;
  const testTimeoutMs = options.testTimeoutMs ?? PROVIDER_TEST_TIMEOUT_MS;
  const viewOf = (id: SettableProvider): ProviderView => providerViews(env, state.settings).find((view) => view.id === id)!;

  const apply = (read: SettingsRead) => {
    reloadProviders(providers, env, { dataDir, stored: read.settings, ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}) });
    state.settings = read.settings;
    state.error = read.problems.length > 0 ? read.problems.join('; ') : null;
  };

  return {
    'providers.list': (_request, context) => {
      personOnly(context);
      return { providers: providerViews(env, state.settings), file: state.store.file, sealed: state.store.sealed, error: state.error };
    },

    'providers.set': ({ provider, apiKey, baseUrl, model }, context) =>
      refusals(async () => {
        personOnly(context);
        if (apiKey === undefined && baseUrl === undefined && model === undefined) throw new PlaneError(ErrorCode.BadRequest, 'providers.set: nothing to set (give a key, a base URL or a model)');
        // The drivers are built from the would-be settings first: a value a driver refuses (its
        // TypeError names the field, never a key) is refused before the file is touched.
        const candidate: OpenedSettings = { ...state.settings, [provider]: { ...state.settings[provider] } };
        const own = candidate[provider]!;
        if (apiKey !== undefined) own.apiKey = apiKey;
        if (baseUrl === null) delete own.baseUrl;
        else if (baseUrl !== undefined) own.baseUrl = baseUrl;
        if (model === null) delete own.model;
        else if (model !== undefined) own.model = model;
        try {
          loadProviders(env, { dataDir, stored: candidate });
        } catch (error) {
          if (error instanceof TypeError) throw new PlaneError(ErrorCode.BadRequest, `providers.set: ${error.message}`);
          throw error;
        }
        apply(await state.store.set(provider, { ...(apiKey !== undefined ? { apiKey } : {}), ...(baseUrl !== undefined ? { baseUrl } : {}), ...(model !== undefined ? { model } : {}) }));
        const fields = [apiKey !== undefined ? 'apiKey' : null, baseUrl !== undefined ? 'baseUrl' : null, model !== undefined ? 'model' : null].filter(Boolean);
        logger.log('info', 'provider settings changed', { provider, fields });
        return viewOf(provider);
      }),

    'providers.remove': ({ provider }, context) =>
      refusals(async () => {
        personOnly(context);
        const { removed, ...read } = await state.store.remove(provider);
        apply(read);
        if (removed) logger.log('info', 'provider settings removed', { provider });
        return { removed, provider: viewOf(provider) };
      }),

    async 'providers.test'({ provider: id, model: requested }, context): Promise<ProviderTestResult> {
      personOnly(context);
      const provider = providers.get(id);
      if (!provider) {
        const needs = id === 'chat' ? `a base URL (${PROVIDER_VARIABLES.chat.baseUrl})` : `a key (${PROVIDER_VARIABLES[id].apiKey})`;
        throw new PlaneError(ErrorCode.Conflict, `${id} is not configured: set ${needs} in Settings or with agentplane providers set ${id}`);
      }
      const model = requested ?? provider.profile.defaultModel;
      if (!model) throw new PlaneError(ErrorCode.BadRequest, `${id} has no default model: name one to test with (or set a default model)`);
      const deadline = AbortSignal.timeout(testTimeoutMs);
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      try {
        const completion = await provider.complete({ model, messages: [{ role: 'user', content: PROVIDER_TEST_PROMPT }], maxTokens: TEST_MAX_TOKENS[id] }, deadline);
        return { ok: true, model: completion.model ?? model, latencyMs: elapsed() };
      } catch (error) {
        if (deadline.aborted) return { ok: false, error: `${id}: no answer within ${testTimeoutMs / 1000} s`, latencyMs: elapsed() };
        // The driver's message: the provider's own words, trimmed, without the prompt or the key.
        if (error instanceof ModelError) return { ok: false, error: error.message, latencyMs: elapsed() };
        throw error;
      }
    },
  };
}
