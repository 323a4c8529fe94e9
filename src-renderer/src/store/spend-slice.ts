/**
 * Spend as the runtime folds it from the journal (`spend.summary`): per run, agent and peer,
 * against ceilings, and cumulative over time. It is re-read when a record that moves spend is
 * appended, at most about once a second, and only while someone is looking (a view that shows
 * spend marks it wanted); otherwise it is marked stale and read when next shown.
 */
import type { SpendSummary } from '../../../src-shared/ipc/contract';
import type { SliceDeps } from './store-types';

const MIN_INTERVAL_MS = 1000;

export interface SpendSlice {
  spend: SpendSummary | null;
  spendError: string | null;
  spendStale: boolean;
  /** How many mounted views show spend. */
  spendWatchers: number;
  refreshSpend(): Promise<void>;
  /** Spend moved: re-read soon if watched, else remember it is stale. */
  touchSpend(): void;
  watchSpend(): () => void;
}

export function createSpendSlice({ set, get, client, env }: SliceDeps): SpendSlice {
  let timer: unknown = null;
  let lastRead = 0;
  let reading: Promise<void> | null = null;

  const read = async () => {
    lastRead = env.now();
    const result = await client.tryCall('spend.summary', { limit: 1000 });
    if (result.ok) set({ spend: result.value, spendError: null, spendStale: false });
    else set({ spendError: result.error.message });
  };

  return {
    spend: null,
    spendError: null,
    spendStale: true,
    spendWatchers: 0,

    refreshSpend() {
      reading ??= read().finally(() => (reading = null));
      return reading;
    },

    touchSpend() {
      if (get().spendWatchers === 0) {
        set({ spendStale: true });
        return;
      }
      if (timer !== null) return;
      const wait = Math.max(50, MIN_INTERVAL_MS - (env.now() - lastRead));
      timer = env.setTimer(() => {
        timer = null;
        void get().refreshSpend();
      }, wait);
    },

    watchSpend() {
      set((s) => ({ spendWatchers: s.spendWatchers + 1 }));
      if (get().spendStale || !get().spend) void get().refreshSpend();
      return () => set((s) => ({ spendWatchers: Math.max(0, s.spendWatchers - 1) }));
    },
  };
}
