/**
 * Forgetting a subject (docs/ERASURE.md), as the Settings view shows it: whether the data dir
 * seals new payloads, its retention, the legal holds in force, and the erasure of a subject.
 * Like the other settings these are read when the view is shown and after each action (the CLI
 * may have changed them meanwhile); the plane's refusals (a held subject, a subject with nothing
 * sealed, bad days) come back in its words, shown beside the form that asked.
 *
 * A store of its own beside the app's, made the first time the Settings view asks for it
 * (erasureStoreFor): only that view reads it, so it stays out of the page's first load
 * (docs/PERFORMANCE.md, the renderer's initial JavaScript budget). It reaches the plane through
 * the app store's `tryCommand` and speaks through its `announce`.
 */
import type { ErasureView, HoldView } from '../../../src-shared/protocol/erasure';
import type { Result } from '../../../src-shared/ipc/result';
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { AppStore } from './app-store';

export interface ErasureSettingsView {
  sealPayloads: boolean;
  retentionDays: number | null;
}

export interface ErasureSlice {
  erasureSettings: ErasureSettingsView | null;
  holds: HoldView[] | null;
  /** Why the last read of the settings or holds failed. */
  erasureError: string | null;
  /** The plane's refusal of the last action, in its words. */
  erasureActionError: string | null;
  erasureBusy: boolean;
  /** The last erasure made from this view. */
  lastErasure: ErasureView | null;
  refreshErasure(): Promise<void>;
  setSealing(on: boolean): Promise<boolean>;
  setRetention(days: number | null): Promise<boolean>;
  addHold(target: { subject: string } | { caseId: string }, reason?: string): Promise<boolean>;
  removeHold(target: { subject: string } | { caseId: string }): Promise<boolean>;
  eraseSubject(subject: string, reason?: string): Promise<boolean>;
}

const stores = new WeakMap<AppStore, StoreApi<ErasureSlice>>();

/** The erasure store of this app store, made on first use. */
export function erasureStoreFor(app: AppStore): StoreApi<ErasureSlice> {
  let store = stores.get(app);
  if (!store) {
    store = createStore<ErasureSlice>((set, get) => createErasureSlice(set, get, app));
    stores.set(app, store);
  }
  return store;
}

function createErasureSlice(set: StoreApi<ErasureSlice>['setState'], get: StoreApi<ErasureSlice>['getState'], app: AppStore): ErasureSlice {
  const client = { tryCall: app.getState().tryCommand };
  /** One action: busy while it is sent, its refusal kept, the view read again after it. */
  async function act<T>(send: () => Promise<Result<T>>, announce: (value: T) => string): Promise<boolean> {
    if (get().erasureBusy) return false;
    set({ erasureBusy: true, erasureActionError: null });
    const result = await send();
    set({ erasureBusy: false });
    if (result.ok) app.getState().announce(announce(result.value));
    else set({ erasureActionError: result.error.message });
    await get().refreshErasure();
    return result.ok;
  }

  return {
    erasureSettings: null,
    holds: null,
    erasureError: null,
    erasureActionError: null,
    erasureBusy: false,
    lastErasure: null,

    async refreshErasure() {
      const [settings, holds] = await Promise.all([client.tryCall('erasure.settings', {}), client.tryCall('holds.list', {})]);
      if (settings.ok && holds.ok) set({ erasureSettings: settings.value, holds: holds.value.holds, erasureError: null });
      else set({ erasureError: (settings.ok ? null : settings.error.message) ?? (holds.ok ? '' : holds.error.message) });
    },

    setSealing(on) {
      return act(() => client.tryCall('erasure.settings', { sealPayloads: on }), (s) => (s.sealPayloads ? 'New payloads are sealed under their owner’s key.' : 'New payloads are written in the clear.'));
    },

    setRetention(days) {
      return act(() => client.tryCall('erasure.settings', { retentionDays: days }), (s) => (s.retentionDays === null ? 'Retention is off.' : `Payloads are erased ${s.retentionDays} days after their month ends, unless held.`));
    },

    addHold(target, reason) {
      return act(() => client.tryCall('holds.add', { ...target, ...(reason ? { reason } : {}) }), (hold) => `Hold ${hold.holdId} placed on ${hold.target.kind} ${hold.target.id}.`);
    },

    removeHold(target) {
      return act(() => client.tryCall('holds.remove', target), (r) => (r.removed.length === 0 ? 'No hold was in force there.' : `Lifted ${r.removed.length} hold${r.removed.length === 1 ? '' : 's'}.`));
    },

    eraseSubject(subject, reason) {
      return act(
        () => client.tryCall('erasure.erase', { subject, ...(reason ? { reason } : {}) }),
        (erased) => {
          set({ lastErasure: erased });
          return `Erased ${erased.subject}: ${erased.keys.length} key${erased.keys.length === 1 ? '' : 's'} destroyed.`;
        },
      );
    },
  };
}
