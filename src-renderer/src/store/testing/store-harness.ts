/**
 * The renderer's store, by itself, beside a real plane: the store is built exactly as the app
 * builds it (createAppStore with the contract client), over the in-memory linked transport to
 * a plane on a temporary data dir (tests/support/contract-support.ts), with the window's
 * services replaced by a clock and timers the test moves by hand. Requests are counted where
 * they leave the client, so a test can say how many a burst of notifications costs.
 *
 * Test support only: nothing in the app imports this folder, so it never reaches the bundle.
 */
import { afterEach } from 'vitest';
import { createPlaneClient } from '../../../../src-shared/ipc/client';
import { testTransport, type TestTransport } from '../../../../tests/support/contract-support';
import { testPlane } from '../../../../tests/support/runtime-support';
import { createAppStore, type AppStore } from '../app-store';
import type { StoreEnv } from '../store-types';

type Plane = Awaited<ReturnType<typeof testPlane>>;

/** Timers that fire only when the test advances the clock. */
export interface ManualClock {
  now(): number;
  /** Moves the clock and runs every timer that falls due, in order (timers they set included). */
  advance(ms: number): void;
  pending(): number;
}

export function manualEnv(): StoreEnv & { clock: ManualClock; saved: Array<{ fileName: string; content: string }> } {
  let now = 1_700_000_000_000;
  let nextId = 0;
  const timers = new Map<number, { at: number; fn: () => void }>();
  const saved: Array<{ fileName: string; content: string }> = [];
  const clock: ManualClock = {
    now: () => now,
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
        if (!due) break;
        timers.delete(due[0]);
        now = Math.max(now, due[1].at);
        due[1].fn();
      }
      now = until;
    },
    pending: () => timers.size,
  };
  return {
    clock,
    saved,
    now: () => now,
    setTimer(fn, ms) {
      const id = nextId++;
      timers.set(id, { at: now + ms, fn });
      return id;
    },
    clearTimer(handle) {
      timers.delete(handle as number);
    },
    saveFile: (fileName, content) => void saved.push({ fileName, content }),
    notifications: { permission: () => 'unsupported', request: async () => 'unsupported', show: () => undefined },
    storage: null,
  };
}

export interface StoreHarness {
  plane: Plane;
  store: AppStore;
  env: ReturnType<typeof manualEnv>;
  wire: TestTransport;
  /** Waits (in real time, for the plane and the pair) until `condition` holds. */
  until(condition: () => boolean, what?: string): Promise<void>;
  /** Lets every message in flight arrive and every answer be applied. */
  settle(): Promise<void>;
  close(): Promise<void>;
}

export async function storeHarness(options: { plane?: Plane; scriptedEvents?: boolean; start?: boolean } = {}): Promise<StoreHarness> {
  const plane = options.plane ?? (await testPlane());
  const wire = testTransport(plane, { scriptedEvents: options.scriptedEvents ?? false });
  const env = manualEnv();
  const store = createAppStore(createPlaneClient(wire.transport), env);
  const stop = options.start === false ? () => undefined : store.getState().start();
  const settle = async () => {
    // The pair delivers on microtasks and the plane answers after its own I/O: a few turns of
    // the event loop with nothing new sent means everything in flight has landed.
    let seen = -1;
    while (seen !== wire.requests.length || wire.inFlight > 0) {
      seen = wire.requests.length;
      for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 2));
    }
  };
  return {
    plane,
    store,
    env,
    wire,
    async until(condition, what = 'the condition') {
      const deadline = Date.now() + 10_000;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 5));
      }
    },
    settle,
    async close() {
      stop();
      wire.drop();
      await plane.close();
    },
  };
}

/**
 * For a test file: returns a maker of harnesses, each closed after its test and returned once
 * the store's first sync is done (the runs list loaded over a live connection, everything in
 * flight applied). `makePlane` builds the plane each one watches (no agents by default).
 */
export function useSyncedHarnesses(makePlane: () => Promise<Plane> = () => testPlane({ agents: [] })): (options?: { scriptedEvents?: boolean }) => Promise<StoreHarness> {
  const open: StoreHarness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });
  return async (options = {}) => {
    const h = await storeHarness({ plane: await makePlane(), ...options });
    open.push(h);
    await h.until(() => h.store.getState().runsLoaded && h.store.getState().connection === 'connected', 'the first sync');
    await h.settle();
    return h;
  };
}


/** Moves the store's clock in small steps until `condition` holds (the plane works in real time meanwhile). */
export async function follow(h: StoreHarness, condition: () => boolean, what: string) {
  await h.until(() => {
    h.env.clock.advance(100);
    return condition();
  }, what);
  await h.settle();
}
