/**
 * Settings: the model providers as the plane last told us (`providers.list`), and the actions
 * on them (`providers.set`, `.remove`, `.test`).
 *
 * A key typed in the Settings view goes to the plane once, in `saveProvider`, and is never held
 * here: the store keeps views, which carry at most a key's last four characters
 * (src-shared/protocol/providers.ts). Provider settings are the plane's state, not the
 * journal's, and no event announces them: the list is read when the view is shown and after
 * each action (another client, the CLI, may have changed it meanwhile).
 *
 * A connection test's answer is a result, not a refusal: `{ok: false, error}` carries the
 * provider's own words (a wrong key's 401), kept per provider to show beside its button.
 *
 * Outbound connections: netguard's allow list (`net.allow.*`), read like the providers; an
 * origin the plane refuses to add comes back in its words, shown beside the field.
 */
import type { CommandRequest } from '../../../src-shared/ipc/contract';
import type { NetAllowList } from '../../../src-shared/protocol/net-allow';
import type { ProviderTestResult, ProvidersList, ProviderView, SettableProvider } from '../../../src-shared/protocol/providers';
import type { SliceDeps } from './store-types';

export type ProviderAction = 'save' | 'remove' | 'test';

export interface SettingsSlice {
  providersList: ProvidersList | null;
  /** Why the last read of the list failed. */
  providersError: string | null;
  /** provider → the action being sent for it. */
  providerBusy: Partial<Record<SettableProvider, ProviderAction>>;
  /** provider → the plane's refusal of the last save or remove, in its words. */
  providerErrors: Partial<Record<SettableProvider, string>>;
  /** provider → the last connection test's answer (or the plane's refusal to make one). */
  providerTests: Partial<Record<SettableProvider, ProviderTestResult>>;
  refreshProviders(): Promise<void>;
  /** Sends the change (the key, once); true when the plane took it. */
  saveProvider(request: CommandRequest<'providers.set'>): Promise<boolean>;
  removeProvider(provider: SettableProvider): Promise<boolean>;
  testProvider(provider: SettableProvider, model?: string): Promise<void>;
  netAllow: NetAllowList | null;
  /** Why the last read of the allow list failed. */
  netAllowError: string | null;
  /** The plane's refusal of the last add or remove, in its words. */
  netAllowActionError: string | null;
  netAllowBusy: boolean;
  refreshNetAllow(): Promise<void>;
  /** Adds an origin to the person's list; true when the plane took it. */
  addNetAllow(origin: string): Promise<boolean>;
  removeNetAllow(origin: string): Promise<boolean>;
}

function withView(list: ProvidersList | null, view: ProviderView): ProvidersList | null {
  return list ? { ...list, providers: list.providers.map((p) => (p.id === view.id ? view : p)) } : list;
}

export function createSettingsSlice({ set, get, client }: SliceDeps): SettingsSlice {
  const busy = (provider: SettableProvider, action: ProviderAction | undefined) => set((s) => ({ providerBusy: { ...s.providerBusy, [provider]: action } }));
  const refusal = (provider: SettableProvider, message: string | undefined) => set((s) => ({ providerErrors: { ...s.providerErrors, [provider]: message } }));

  return {
    providersList: null,
    providersError: null,
    providerBusy: {},
    providerErrors: {},
    providerTests: {},
    netAllow: null,
    netAllowError: null,
    netAllowActionError: null,
    netAllowBusy: false,

    async refreshNetAllow() {
      const result = await client.tryCall('net.allow.list', {});
      if (result.ok) set({ netAllow: result.value, netAllowError: null });
      else set({ netAllowError: result.error.message });
    },

    async addNetAllow(origin) {
      if (get().netAllowBusy) return false;
      set({ netAllowBusy: true, netAllowActionError: null });
      const result = await client.tryCall('net.allow.add', { origin });
      set({ netAllowBusy: false });
      if (result.ok) get().announce(`Outbound connections to ${result.value.origin} are allowed.`);
      else set({ netAllowActionError: result.error.message });
      await get().refreshNetAllow();
      return result.ok;
    },

    async removeNetAllow(origin) {
      if (get().netAllowBusy) return false;
      set({ netAllowBusy: true, netAllowActionError: null });
      const result = await client.tryCall('net.allow.remove', { origin });
      set({ netAllowBusy: false });
      if (result.ok) get().announce(result.value.removed ? `Removed ${origin} from the allow list.` : `${origin} was not on the allow list.`);
      else set({ netAllowActionError: result.error.message });
      await get().refreshNetAllow();
      return result.ok;
    },

    async refreshProviders() {
      const result = await client.tryCall('providers.list', {});
      if (result.ok) set({ providersList: result.value, providersError: null });
      else set({ providersError: result.error.message });
    },

    async saveProvider(request) {
      const { provider } = request;
      if (get().providerBusy[provider]) return false;
      busy(provider, 'save');
      refusal(provider, undefined);
      const result = await client.tryCall('providers.set', request);
      busy(provider, undefined);
      if (result.ok) {
        // A test answered for the old settings says nothing about the new ones.
        set((s) => ({ providersList: withView(s.providersList, result.value), providerTests: { ...s.providerTests, [provider]: undefined } }));
        get().announce(`Saved the settings of ${provider}.`);
      } else {
        refusal(provider, result.error.message);
        get().announce(`Could not save the settings of ${provider}: ${result.error.message}`);
      }
      void get().refreshProviders();
      return result.ok;
    },

    async removeProvider(provider) {
      if (get().providerBusy[provider]) return false;
      busy(provider, 'remove');
      refusal(provider, undefined);
      const result = await client.tryCall('providers.remove', { provider });
      busy(provider, undefined);
      if (result.ok) {
        set((s) => ({ providersList: withView(s.providersList, result.value.provider), providerTests: { ...s.providerTests, [provider]: undefined } }));
        get().announce(result.value.removed ? `Removed the stored settings of ${provider}.` : `Nothing was stored for ${provider}.`);
      } else refusal(provider, result.error.message);
      void get().refreshProviders();
      return result.ok;
    },

    async testProvider(provider, model) {
      if (get().providerBusy[provider]) return;
      busy(provider, 'test');
      set((s) => ({ providerTests: { ...s.providerTests, [provider]: undefined } }));
      const result = await client.tryCall('providers.test', { provider, ...(model ? { model } : {}) });
      busy(provider, undefined);
      // The plane's refusal to test (not configured, no model) reads like a failed test: it is
      // shown in the same place, in the plane's words.
      const answer: ProviderTestResult = result.ok ? result.value : { ok: false, error: result.error.message, latencyMs: 0 };
      set((s) => ({ providerTests: { ...s.providerTests, [provider]: answer } }));
      get().announce(answer.ok ? `${provider}: the connection works (${answer.model}, ${answer.latencyMs} ms).` : `${provider}: the connection test failed: ${answer.error}`);
    },
  };
}
