/**
 * The renderer's one store: a projection of main-owned state, never a second source of truth.
 * Slices hold what the plane last told us; actions call the contract (components never do);
 * events keyed by seq keep the projection current, and a reset (first connect, plane restart,
 * missed window) re-reads everything through commands so a reconnect loses nothing.
 *
 * The journal is followed by seq: `journal.appended` says the head moved, and the store reads
 * the records after the last seq it has seen (`journal.records`, runId null). Each record names
 * its run and kind, which says what to re-read: the run, the inbox, spend, the open timeline.
 * This covers appends made by other processes sharing the data dir (a peer hosting a skill
 * run), which the plane only announces as `journal.appended`.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import type { ConnectionState, PlaneClient } from '../../../src-shared/ipc/client';
import type { EventEnvelope, PlaneStatus, RecordView } from '../../../src-shared/ipc/contract';
import { events as eventSchemas } from '../../../src-shared/ipc/contract';
import { DEFAULT_ROUTE, type Route } from '../lib/route';
import { createApprovalsSlice, type ApprovalsSlice } from './approvals-slice';
import { createPeersSlice, type PeersSlice } from './peers-slice';
import { createRunsSlice, type RunsSlice } from './runs-slice';
import { createSpendSlice, type SpendSlice } from './spend-slice';
import type { SliceDeps, StoreEnv } from './store-types';
import { createTimelineSlice, type TimelineSlice } from './timeline-slice';
import { createUiSlice, type UiSlice } from './ui-slice';

export interface ConnectionSlice {
  connection: ConnectionState;
  /** The last event seq applied (events, not journal records). */
  lastSeq: number;
  /** The last journal seq read by the follower. */
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
  UiSlice & {
    start(): () => void;
  };

export type AppStore = StoreApi<AppState>;

/** Past this many unread records, re-reading the lists is cheaper than reading the records. */
const FOLLOW_MAX = 5000;
const FOLLOW_PAGE = 1000;
const SPEND_KINDS = new Set(['RunAdmitted', 'EffectDone', 'EffectFailed', 'BudgetVerdict', 'RunSealed']);

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

    // ---- the journal follower ----
    let ready = false;
    let target = 0;
    let following: Promise<void> | null = null;

    const dispatchRecords = (records: RecordView[]) => {
      let spend = false;
      for (const record of records) {
        if (record.runId) get().touchRun(record.runId);
        if (record.runId && record.kind === 'RunAdmitted') get().noteRunHost(record.runId, typeof record.body.host === 'string' ? record.body.host : 'plane');
        if (SPEND_KINDS.has(record.kind)) spend = true;
      }
      const open = get().timeline.runId;
      if (open) get().appendLive(records.filter((r) => r.runId === open));
      if (spend) get().touchSpend();
    };

    const follow = async (): Promise<void> => {
      while (ready && get().journalHead < target) {
        const head = get().journalHead;
        if (target - head > FOLLOW_MAX) {
          set({ journalHead: target });
          void refreshLists();
          return;
        }
        const result = await client.tryCall('journal.records', { runId: null, fromSeq: head + 1, limit: FOLLOW_PAGE });
        if (!result.ok) return; // the next event (or a reset) tries again
        const records = result.value.records;
        if (records.length === 0) {
          set({ journalHead: Math.max(head, Math.min(target, result.value.headSeq)) });
          return;
        }
        set({ journalHead: records[records.length - 1]!.seq });
        dispatchRecords(records);
      }
    };

    const onJournalAppended = (seq: number) => {
      target = Math.max(target, seq);
      if (following || !ready) return;
      following = follow().finally(() => {
        following = null;
        if (ready && get().journalHead < target) onJournalAppended(target);
      });
    };

    const refreshLists = () => {
      // Spend is the costliest summary to fold; it is read when a view shows it (touchSpend).
      get().touchSpend();
      // The inbox is derived from the runs (approvals-slice); the Approvals view re-reads it when opened.
      return Promise.all([get().refreshRuns(), get().refreshPeers(), get().refreshAgents()]);
    };

    const reset = async () => {
      ready = false;
      // Where the journal is now; everything after it arrives through the follower.
      const head = await client.tryCall('journal.records', { runId: null, fromSeq: 1, limit: 1 });
      const headSeq = head.ok ? head.value.headSeq : 0;
      set({ journalHead: headSeq });
      target = Math.max(target, headSeq);
      ready = true;
      await Promise.all([get().refreshStatus(), refreshLists()]);
      if (get().section === 'sessions' || get().section === 'peers') void get().refreshSessions();
      const open = get().timeline.runId;
      if (open) get().touchRun(open);
      onJournalAppended(target);
    };

    const applyEvent = (event: EventEnvelope) => {
      set({ lastSeq: event.seq });
      if (event.name === 'plane.statusChanged') {
        const parsed = eventSchemas['plane.statusChanged'].safeParse(event.payload);
        if (parsed.success) set({ status: parsed.data });
      } else if (event.name === 'peers.changed') {
        const parsed = eventSchemas['peers.changed'].safeParse(event.payload);
        if (parsed.success) set({ peers: parsed.data.peers, peersLoaded: true });
      } else if (event.name === 'journal.appended') {
        const parsed = eventSchemas['journal.appended'].safeParse(event.payload);
        if (parsed.success) onJournalAppended(parsed.data.seq);
      } else if (event.name === 'runs.changed') {
        const parsed = eventSchemas['runs.changed'].safeParse(event.payload);
        if (parsed.success) onJournalAppended(parsed.data.seq);
      }
    };

    return {
      connection: 'connecting',
      lastSeq: 0,
      journalHead: 0,
      status: null,
      error: null,

      ...createPeersSlice(deps),
      ...createRunsSlice(deps),
      ...createTimelineSlice(deps),
      ...createApprovalsSlice(deps),
      ...createSpendSlice(deps),
      ...createUiSlice(deps, initialRoute),

      async refreshStatus() {
        const result = await client.tryCall('plane.status', {});
        if (result.ok) set({ status: result.value, error: null });
        else set({ error: result.error.message });
      },

      start() {
        const route = get().route;
        if (route.section === 'runs' && route.runId) get().openTimeline(route.runId, route.seq);
        return client.events({
          onEvent: applyEvent,
          onReset: (_epoch, latestSeq) => {
            set({ lastSeq: latestSeq });
            void reset();
          },
          onState: (connection) => set({ connection }),
        });
      },
    };
  });
}
