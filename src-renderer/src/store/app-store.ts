/**
 * The renderer's one store: a projection of main-owned state, never a second source of truth.
 * Slices hold what the plane last told us; actions call the contract (components never do);
 * notifications keyed by journal seq keep the projection current, and a reset (first connect,
 * too much missed, another journal) re-reads everything through commands, so a reconnect
 * loses nothing.
 *
 * The journal is followed by seq, as a view of it: each `journal.appended` names the runs a
 * commit touched (appends by other processes sharing the data dir included), and only those
 * are re-read (`runs.get`, coalesced: a burst costs one read per run), plus the new records of
 * the open timeline. No record is read to find out what changed. On every reconnect the client
 * delivers what changed meanwhile (or asks for a full re-read), and the snapshots (plane
 * status, peers) are read again, since a snapshot missed while away is not replayed.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ConnectionState, PlaneClient, SyncInfo } from '../../../src-shared/ipc/client';
import type { EventPayload, PeerSummary, PlaneEvent, PlaneStatus } from '../../../src-shared/ipc/contract';
import { DEFAULT_ROUTE, type Route } from '../lib/route';
import { createAcpSlice, isObservedChange, type AcpSlice } from './acp-slice';
import { createApprovalsSlice, type ApprovalsSlice } from './approvals-slice';
import { createMcpSlice, type McpSlice } from './mcp-slice';
import { createPeersSlice, type PeersSlice } from './peers-slice';
import { createRunsSlice, type RunsSlice } from './runs-slice';
import { createRemoteAgentsSlice, type RemoteAgentsSlice } from './remote-agents-slice';
import { createSettingsSlice, type SettingsSlice } from './settings-slice';
import { createSpendSlice, type SpendSlice } from './spend-slice';
import type { SliceDeps, StoreEnv } from './store-types';
import { createTimelineSlice, type TimelineSlice } from './timeline-slice';
import { createTimeTravelSlice, type TimeTravelSlice } from './time-travel-slice';
import { createUiSlice, type UiSlice } from './ui-slice';

/** How long a burst of peers.changed is gathered before the newest is shown (about a frame). */
const PEERS_FRAME_MS = 16;

export interface ConnectionSlice {
  connection: ConnectionState;
  /** The journal seq this projection is current to (from `journal.appended` and each sync). */
  journalHead: number;
}

export interface PlaneSlice {
  status: PlaneStatus | null;
  error: string | null;
  refreshStatus(): Promise<void>;
}

export type AppState = ConnectionSlice &
  PlaneSlice &
  PeersSlice &
  RunsSlice &
  TimelineSlice &
  ApprovalsSlice &
  SpendSlice &
  AcpSlice &
  McpSlice &
  SettingsSlice &
  RemoteAgentsSlice &
  TimeTravelSlice &
  UiSlice & {
    /** Reads the first look and opens the event stream; returns the stream's stop. */
    start(options?: StartOptions): () => void;
    /** One command to the plane, for a view that keeps its own state (erasure-slice.ts). */
    tryCommand: PlaneClient['tryCall'];
  };

export interface StartOptions {
  /**
   * When the view on screen is one the first look fills (the Peers view), the event stream
   * opens once this settles instead of at once: the page passes its first commit. See `start`.
   */
  connectAfter?: Promise<unknown>;
}

export type AppStore = StoreApi<AppState>;

export function createAppStore(client: PlaneClient, env: StoreEnv, initialRoute: Route = DEFAULT_ROUTE): AppStore {
  const store = createAppState(client, env, initialRoute);
  // The inbox is a view of the runs: recomputed whenever they change.
  store.subscribe((state, previous) => {
    if (state.runs !== previous.runs || state.runsLoaded !== previous.runsLoaded) state.deriveWaiting();
  });
  return store;
}

function createAppState(client: PlaneClient, env: StoreEnv, initialRoute: Route): AppStore {
  return createStore<AppState>()((set, get) => {
    const deps: SliceDeps = { set, get, client, env };

    // ---- the journal, followed by seq ----

    const onAppended = ({ seq, runs }: EventPayload<'journal.appended'>) => {
      set({ journalHead: seq });
      if (runs.length === 0) return;
      // An observed editor session is a run of the journal, not of the runtime: the Editor
      // sessions slice follows it. It is re-read as a run too (runs.get answers for it), since a
      // permission request in it may be waiting in the inbox; its records say nothing of that
      // alone, so no status is guessed from the change.
      for (const change of runs) {
        if (isObservedChange(change)) get().touchRun(change.runId);
        else get().noteRunChange(change);
      }
      get().noteAcpChanges(runs);
      // A commit may move spend (an effect billed, a run sealed); read only while it is shown.
      get().touchSpend();
      // A commit may hold a call to a remote A2A agent; the list is re-read while it is shown.
      if (get().section === 'remotes') void get().refreshRemotes();
    };

    const refreshLists = () => {
      // Spend is the costliest summary to fold; it is read when a view shows it (touchSpend).
      get().touchSpend();
      // The inbox is derived from the runs (approvals-slice); the Approvals view re-reads it when opened.
      return Promise.all([get().refreshRuns(), get().refreshPeers(), get().refreshAgents()]);
    };

    const onSync = async ({ head, reset }: SyncInfo) => {
      set({ journalHead: head });
      if (!reset) {
        // The journal's changes arrived as a notification; snapshots are re-read, not replayed.
        await Promise.all([get().refreshStatus(), get().refreshPeers()]);
        return;
      }
      await Promise.all([get().refreshStatus(), refreshLists()]);
      if (get().section === 'sessions' || get().section === 'peers') void get().refreshSessions();
      const open = get().timeline.runId;
      if (open) get().touchRun(open);
      // Editor sessions: the list is re-read when shown (now, or when next opened), the open one now.
      if (get().section === 'acp' && !get().acpOpen.runId) void get().refreshAcpSessions();
      else if (get().acpLoaded) set({ acpStale: true });
      if (get().acpOpen.runId) void get().refreshAcpSession();
      // MCP: a snapshot of the plane's state, not of the journal; re-read while it is shown.
      if (get().section === 'mcp') void get().refreshMcp();
      // Provider settings: likewise the plane's state; re-read while Settings is shown.
      if (get().section === 'settings') void Promise.all([get().refreshProviders(), get().refreshNetAllow()]);
      if (get().section === 'remotes') void get().refreshRemotes();
    };

    // Each peers.changed holds the whole list, so only the newest of a burst is shown: one render
    // a frame rather than one an event (fifty peers stopping at once sent about a hundred, and
    // rendering each held the page's frame to 117 ms; bench fifty-peers).
    let newestPeers: PeerSummary[] | null = null;
    const showPeers = (peers: PeerSummary[]) => {
      if (newestPeers === null) {
        env.setTimer(() => {
          const shown = newestPeers!;
          newestPeers = null;
          set({ peers: shown, peersLoaded: true });
        }, PEERS_FRAME_MS);
      }
      newestPeers = peers;
    };

    const applyEvent = (event: PlaneEvent) => {
      if (event.name === 'plane.statusChanged') set({ status: event.payload });
      else if (event.name === 'peers.changed') showPeers(event.payload.peers);
      // Agent files added, changed or removed while the plane runs: the whole list.
      else if (event.name === 'agents.changed') set({ agents: event.payload.agents, brokenAgents: event.payload.broken, agentsLoaded: true });
      // Live text, not the journal: it moves no seq and never triggers a re-read.
      else if (event.name === 'runs.streaming') get().noteModelText(event.payload);
      // An observed session's transcript grew (beside the journal: no seq moves).
      else if (event.name === 'acp.transcript') get().noteAcpTranscript(event.payload.runId);
      else onAppended(event.payload);
    };

    return {
      connection: 'connecting',
      journalHead: 0,
      status: null,
      error: null,

      ...createPeersSlice(deps),
      ...createRunsSlice(deps),
      ...createTimelineSlice(deps),
      ...createApprovalsSlice(deps),
      ...createSpendSlice(deps),
      ...createAcpSlice(deps),
      ...createMcpSlice(deps),
      ...createSettingsSlice(deps),
      ...createRemoteAgentsSlice(deps),
      ...createTimeTravelSlice(deps),
      ...createUiSlice(deps, initialRoute),

      tryCommand: (command, request) => client.tryCall(command, request),

      async refreshStatus() {
        const result = await client.tryCall('plane.status', {});
        if (result.ok) set({ status: result.value, error: null });
        else set({ error: result.error.message });
      },

      start(options = {}) {
        const route = get().route;
        if (route.section === 'runs' && route.runId && route.compareWith) void get().loadDiff(route.runId, route.compareWith);
        else if (route.section === 'runs' && route.runId) get().openTimeline(route.runId, route.seq);
        if (route.section === 'acp' && route.runId) get().openAcpSession(route.runId);
        // First look: the Peers view (the page's default) asks for its rows now, beside the event
        // stream's connect and first sync, instead of after them: the socket, journal.changes and
        // the lists behind it were a chain of round trips before the first row (bench
        // renderer-load). The sync still re-reads every list, and its answer or any event is
        // newer, so this one only fills a list that is still empty. Only the peers: their read
        // is a registry snapshot; runs.list folds the journal and is not worth asking twice.
        if (route.section === 'peers' || route.section === 'sessions') void get().refreshPeers({ firstLook: true });
        // Reconnects wait on the window's timers, like everything else the store schedules.
        const timing = { setTimer: env.setTimer, clearTimer: env.clearTimer };
        const connect = () =>
          client.events(
            {
              onEvent: applyEvent,
              onSync: (sync) => void onSync(sync),
              onState: (connection) => set({ connection }),
            },
            timing,
          );
        // On the Peers view the first look is all its rows need, and the stream's first sync
        // re-reads every list (status, runs, agents, sessions): answers the page parses (and
        // whose schemas it builds, deferred-schema.ts) on the one main thread while the view's
        // chunk is evaluated and its first frame drawn. Opened after that frame, the same work
        // no longer stands before the rows (bench renderer-load, four alternating runs: the
        // page's script time before the rows 150 → 128 ms, the rows 523 → 468 ms). Every other
        // view's rows come from the sync, so there the stream opens at once.
        if (!options.connectAfter || route.section !== 'peers') return connect();
        let stop: (() => void) | null = null;
        let stopped = false;
        const open = () => {
          if (!stopped) stop = connect();
        };
        options.connectAfter.then(open, open);
        return () => {
          stopped = true;
          stop?.();
        };
      },
    };
  });
}
