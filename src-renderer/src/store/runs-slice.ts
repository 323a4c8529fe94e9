/**
 * Runs and agents as the runtime reports them. The list is read once (`runs.list`) and then
 * kept current run by run: every journal record names its run, and a changed run is re-read
 * with `runs.get` (coalesced, so a burst of records costs one read per run).
 */
import type { AgentSummary, RunView } from '../../../src-shared/ipc/contract';
import type { Result } from '../../../src-shared/ipc/result';
import { coalesce, type SliceDeps } from './store-types';

/** The runtime's own window for the inbox (runtime.waiting) is the latest 1,000 runs too. */
export const RUN_LIST_LIMIT = 1000;

export interface RunFilter {
  agent: string;
  /** A peer id: runs it hosts, or that it owns or acts in (owner/chain `peer:<id>`). */
  peer: string;
  status: '' | 'running' | 'suspended' | 'succeeded' | 'failed' | 'ended-other';
  /** Started within the last this-many milliseconds (0: any time). */
  sinceMs: number;
}

export const NO_FILTER: RunFilter = { agent: '', peer: '', status: '', sinceMs: 0 };

export interface RunsSlice {
  runs: Record<string, RunView>;
  runsLoaded: boolean;
  runsError: string | null;
  /** Which process hosts a run (from its view; also learned from the journal tail). */
  runHosts: Record<string, string | undefined>;
  agents: AgentSummary[];
  agentsLoaded: boolean;
  runFilter: RunFilter;
  /** The agent preselected in the start form (the palette sets it). */
  startAgent: string | null;
  /** Bumped to ask the start form to take focus. */
  startFormRequest: number;
  setRunFilter(filter: Partial<RunFilter>): void;
  requestStartForm(agent: string | null): void;
  refreshRuns(): Promise<void>;
  refreshAgents(): Promise<void>;
  /** Re-reads one run soon (coalesced with others). */
  touchRun(runId: string): void;
  noteRunHost(runId: string, host: string): void;
  startRun(agent: string, input: unknown): Promise<Result<RunView>>;
  cancelRun(runId: string, reason?: string): Promise<Result<RunView>>;
}

export function matchesFilter(run: RunView, filter: RunFilter, host: string | undefined, now: number): boolean {
  if (filter.agent && run.agent !== filter.agent) return false;
  if (filter.peer) {
    const principal = `peer:${filter.peer}`;
    if (host !== principal && run.owner !== principal && !run.chain.includes(principal)) return false;
  }
  if (filter.status) {
    if (filter.status === 'running' || filter.status === 'suspended') {
      if (run.status !== filter.status) return false;
    } else if (filter.status === 'succeeded' || filter.status === 'failed') {
      if (run.outcome !== filter.status) return false;
    } else if (!(run.status === 'sealed' && run.outcome !== 'succeeded' && run.outcome !== 'failed')) return false;
  }
  if (filter.sinceMs > 0 && now - Date.parse(run.admittedAt) > filter.sinceMs) return false;
  return true;
}

export function createRunsSlice({ set, get, client, env }: SliceDeps): RunsSlice {
  const upsert = (run: RunView) => set((s) => ({ runs: { ...s.runs, [run.runId]: run }, runHosts: { ...s.runHosts, [run.runId]: run.host } }));


  const touch = coalesce(env, 80, (runIds) => {
    for (const runId of runIds) {
      void client.tryCall('runs.get', { runId }).then((result) => {
        if (!result.ok) return;
        upsert(result.value);
        get().reconcileTimeline(result.value);
      });
    }
  });

  return {
    runs: {},
    runsLoaded: false,
    runsError: null,
    runHosts: {},
    agents: [],
    agentsLoaded: false,
    runFilter: NO_FILTER,
    startAgent: null,
    startFormRequest: 0,

    setRunFilter(filter) {
      set((s) => ({ runFilter: { ...s.runFilter, ...filter } }));
    },
    requestStartForm(agent) {
      set((s) => ({ startAgent: agent, startFormRequest: s.startFormRequest + 1 }));
    },

    async refreshRuns() {
      const result = await client.tryCall('runs.list', { limit: RUN_LIST_LIMIT });
      if (!result.ok) {
        set({ runsError: result.error.message });
        return;
      }
      set({
        runs: Object.fromEntries(result.value.runs.map((r) => [r.runId, r])),
        // Which process hosts each run comes with its view (`plane`, or `peer:<id>`).
        runHosts: Object.fromEntries(result.value.runs.map((r) => [r.runId, r.host])),
        runsLoaded: true,
        runsError: null,
      });
      const open = get().timeline.runId;
      const openRun = open ? get().runs[open] : undefined;
      if (openRun) get().reconcileTimeline(openRun);
    },

    async refreshAgents() {
      const result = await client.tryCall('agents.list', {});
      if (result.ok) set({ agents: result.value.agents, agentsLoaded: true });
    },

    touchRun: touch,

    noteRunHost(runId, host) {
      if (get().runHosts[runId] === host) return;
      set((s) => ({ runHosts: { ...s.runHosts, [runId]: host } }));
    },

    async startRun(agent, input) {
      const result = await client.tryCall('runs.start', { agent, input });
      if (result.ok) {
        upsert(result.value);
        get().announce(`Run of ${agent} started: ${result.value.runId}.`);
      }
      return result;
    },

    async cancelRun(runId, reason) {
      const result = await client.tryCall('runs.cancel', { runId, ...(reason ? { reason } : {}) });
      if (result.ok) {
        upsert(result.value);
        get().announce(`Run ${runId} cancelled.`);
      }
      return result;
    },
  };
}
