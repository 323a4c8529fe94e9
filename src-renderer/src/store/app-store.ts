/**
 * The renderer's one store: a projection of main-owned state, never a second source of truth.
 * Slices hold what the plane last told us; actions call the contract (components never do);
 * events keyed by seq keep the projection current, and a reset (first connect, plane restart,
 * missed window) re-reads everything through commands so a reconnect loses nothing.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ConnectionState, PlaneClient } from '../../../src-shared/ipc/client';
import type { EventEnvelope, PeerSummary, PlaneStatus } from '../../../src-shared/ipc/contract';
import { events as eventSchemas } from '../../../src-shared/ipc/contract';
import type { SectionId } from '../sections/sections';

export interface ConnectionSlice {
  connection: ConnectionState;
  lastSeq: number;
}

export interface PlaneSlice {
  status: PlaneStatus | null;
  error: string | null;
  refreshStatus(): Promise<void>;
}

export interface PeersSlice {
  peers: PeerSummary[];
  refreshPeers(): Promise<void>;
}

export interface NavigationSlice {
  section: SectionId;
  setSection(section: SectionId): void;
}

export type AppState = ConnectionSlice & PlaneSlice & PeersSlice & NavigationSlice & {
  start(): () => void;
};

export type AppStore = StoreApi<AppState>;

export function createAppStore(client: PlaneClient): AppStore {
  return createStore<AppState>()((set, get) => {
    const applyEvent = (event: EventEnvelope) => {
      set({ lastSeq: event.seq });
      if (event.name === 'plane.statusChanged') {
        const parsed = eventSchemas['plane.statusChanged'].safeParse(event.payload);
        if (parsed.success) set({ status: parsed.data });
      } else if (event.name === 'peers.changed') {
        const parsed = eventSchemas['peers.changed'].safeParse(event.payload);
        if (parsed.success) set({ peers: parsed.data.peers });
      }
    };

    return {
      connection: 'connecting',
      lastSeq: 0,
      status: null,
      error: null,
      peers: [],
      section: 'peers',

      async refreshStatus() {
        const result = await client.tryCall('plane.status', {});
        if (result.ok) set({ status: result.value, error: null });
        else set({ error: result.error.message });
      },
      async refreshPeers() {
        const result = await client.tryCall('peers.list', {});
        if (result.ok) set({ peers: result.value.peers });
        else set({ error: result.error.message });
      },
      setSection(section) {
        set({ section });
      },
      start() {
        return client.events({
          onEvent: applyEvent,
          onReset: (_epoch, latestSeq) => {
            set({ lastSeq: latestSeq });
            void get().refreshStatus();
            void get().refreshPeers();
          },
          onState: (connection) => set({ connection }),
        });
      },
    };
  });
}
