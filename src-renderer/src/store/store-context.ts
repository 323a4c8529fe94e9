/** The store reaches components through context; components select narrowly from it. */
import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { AppState, AppStore } from './app-store';

export const StoreContext = createContext<AppStore | null>(null);

export function useAppStore(): AppStore {
  const store = useContext(StoreContext);
  if (!store) throw new Error('useApp outside StoreContext');
  return store;
}

export function useApp<T>(selector: (state: AppState) => T): T {
  return useStore(useAppStore(), selector);
}
