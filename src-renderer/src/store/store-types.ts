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
  /** UI preferences only: the one thing the renderer keeps (docs/STYLE.md 12). */
  storage: Pick<Storage, 'getItem' | 'setItem'> | null;
}

export interface SliceDeps {
  set: StoreApi<AppState>['setState'];
  get: StoreApi<AppState>['getState'];
  client: PlaneClient;
  env: StoreEnv;
}

/** How long keys keep arriving unflushed: quiet for this long, or at most this long in all (ms). */
export const COALESCE_QUIET_MS = 80;
export const COALESCE_MAX_WAIT_MS = 1000;

/**
 * Collects keys and hands them over once they stop coming: `quietMs` after the last one, or
 * `maxWaitMs` after the first when they keep coming. A burst of events then costs one refresh
 * per key, and a key that is busy for long one refresh per `maxWaitMs`, never one per event.
 */
export function coalesce(
  env: StoreEnv,
  flush: (keys: Set<string>) => void,
  quietMs = COALESCE_QUIET_MS,
  maxWaitMs = COALESCE_MAX_WAIT_MS,
): (key: string) => void {
  let pending = new Set<string>();
  let timer: unknown = null;
  let firstAt = 0;
  const fire = () => {
    timer = null;
    const keys = pending;
    pending = new Set();
    flush(keys);
  };
  return (key) => {
    pending.add(key);
    const now = env.now();
    if (timer === null) firstAt = now;
    else env.clearTimer(timer);
    timer = env.setTimer(fire, Math.max(0, Math.min(quietMs, firstAt + maxWaitMs - now)));
  };
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
