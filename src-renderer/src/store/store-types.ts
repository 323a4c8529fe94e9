/**
 * What every slice is built from: the store's set/get, the contract client (the only way to the
 * plane), and the few window services a slice needs (a clock, timers, saving a file, system
 * notifications, localStorage for UI preferences), passed in so the store stays testable.
 */
import type { StoreApi } from 'zustand/vanilla';
import type { PlaneClient } from '../../../src-shared/ipc/client';
import type { AppState } from './app-store';

export interface StoreEnv {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  saveFile(fileName: string, content: string): void;
  notifications: {
    permission(): NotificationPermission | 'unsupported';
    request(): Promise<NotificationPermission | 'unsupported'>;
    show(title: string, body: string): void;
  };
  /** UI preferences only: the one thing the renderer keeps (STYLE.md 12). */
  storage: Pick<Storage, 'getItem' | 'setItem'> | null;
}

export interface SliceDeps {
  set: StoreApi<AppState>['setState'];
  get: StoreApi<AppState>['getState'];
  client: PlaneClient;
  env: StoreEnv;
}

/** Collects keys for `delayMs` and hands them over once, so a burst of events costs one refresh. */
export function coalesce(env: StoreEnv, delayMs: number, flush: (keys: Set<string>) => void): (key: string) => void {
  let pending = new Set<string>();
  let timer: unknown = null;
  return (key) => {
    pending.add(key);
    if (timer !== null) return;
    timer = env.setTimer(() => {
      timer = null;
      const keys = pending;
      pending = new Set();
      flush(keys);
    }, delayMs);
  };
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
