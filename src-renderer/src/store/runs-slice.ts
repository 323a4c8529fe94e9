/**
 * Runs and agents as the runtime reports them. The list is read once (`runs.list`) and then
 * kept current run by run from the journal's notifications: each names the runs a commit
 * touched and the status it left them in. That status shows at once; the run itself is re-read
 * with `runs.get` once its burst of commits goes quiet (coalesced: a burst costs one read per
 * run touched, a run busy for long one read a second), never once per record.
 */
import type { AgentSummary, BrokenAgent, RunChange, RunLinks, RunView } from '../../../src-shared/ipc/contract';
import { ErrorCode } from '../../../src-shared/ipc/error-codes';
import type { Result } from '../../../src-shared/ipc/result';
import type { RunOutcome, RunStatus } from '../../../src-shared/vocabulary/runs';
import { coalesce, type SliceDeps } from './store-types';

/** The runtime's own window for the inbox (runtime.waiting) is the latest 1,000 runs too. */
export const RUN_LIST_LIMIT = 1000;

export interface RunFilter {
  agent: string;
  /** A peer id: runs it hosts, or that it owns or acts in (owner/chain `peer:<id>`). */
  peer: string;
  /** Any (''), a live status, one outcome, or `ended-other`: sealed neither succeeded nor failed. */
  status: '' | Exclude<RunStatus, 'sealed'> | RunOutcome | 'ended-other';
  /** Started within the last this-many milliseconds (0: any time). */
  sinceMs: number;
}

export const NO_FILTER: RunFilter = { agent: '', peer: '', status: '', sinceMs: 0 };

export interface RunsSlice {
  runs: Record<string, RunView>;
  runsLoaded: boolean;
  runsError: string | null;
  /** Run ids the plane answered it has no run for (or that are no run id): the address named them. */
  missingRuns: Record<string, true | undefined>;
  /** Which process hosts a run (from its view; also learned from the journal tail). */
  runHosts: Record<string, string | undefined>;
  agents: AgentSummary[];
  /** Agent files the plane could not load, with their problem (`agents.list`, `agents.changed`). */
  brokenAgents: BrokenAgent[];
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
  /** Re-reads one run soon (coalesced with others); the open timeline's new records first. */
  touchRun(runId: string): void;
  /** A commit touched a run: show the status it left, and re-read the run soon. */
  noteRunChange(change: RunChange): void;
  noteRunHost(runId: string, host: string): void;
  /** Per run: the run that called it and the runs its peer calls admitted (`runs.links`). */
  runLinks: Record<string, RunLinks | undefined>;
  loadRunLinks(runId: string): Promise<void>;
  startRun(agent: string, input: unknown): Promise<Result<RunView>>;
  cancelRun(runId: string, reason?: string): Promise<Result<RunView>>;
}

/** An editor session observed through the tap (`acp:<tap name>`): read as a run for the inbox, shown in Editor sessions. */
export const isObservedRun = (run: Pick<RunView, 'host'>) => run.host.startsWith('acp:');

export function matchesFilter(run: RunView, filter: RunFilter, host: string | undefined, now: number): boolean {
  if (filter.agent && run.agent !== filter.agent) return false;
  if (filter.peer) {
    const principal = `peer:${filter.peer}`;
    if (host !== principal && run.owner !== principal && !run.chain.includes(principal)) return false;
  }
  if (filter.status) {
    if (filter.status === 'ended-other') {
      if (!(run.status === 'sealed' && run.outcome !== 'succeeded' && run.outcome !== 'failed')) return false;
    } else if (filter.status === 'running' || filter.status === 'suspended') {
      if (run.status !== filter.status) return false;
    } else if (run.outcome !== filter.status) return false;
  }
  if (filter.sinceMs > 0 && now - Date.parse(run.admittedAt) > filter.sinceMs) return false;
  return true;
}

export function createRunsSlice({ set, get, client, env }: SliceDeps): RunsSlice {
  const upsert = (run: RunView) => set((s) => ({ runs: { ...s.runs, [run.runId]: run }, runHosts: { ...s.runHosts, [run.runId]: run.host }, ...(s.missingRuns[run.runId] ? { missingRuns: { ...s.missingRuns, [run.runId]: undefined } } : {}) }));


  const read = async (runId: string) => {
    const result = await client.tryCall('runs.get', { runId });
    if (!result.ok) {
      if (result.error.code === ErrorCode.NotFound) set((s) => ({ missingRuns: { ...s.missingRuns, [runId]: true } }));
      return;
    }
    upsert(result.value);
    get().reconcileTimeline(result.value);
  };

  const touch = coalesce(env, (runIds) => {
    const open = get().timeline.runId;
    for (const runId of runIds) {
      // The open run's new records are appended before its view is re-read, so the view's count
      // finds them there instead of sending the timeline to re-read its last page.
      if (runId === open) void get().followTimeline().then(() => read(runId));
      else void read(runId);
    }
  });

  return {
    runs: {},
    missingRuns: {},
    runLinks: {},
    runsLoaded: false,
    runsError: null,
    runHosts: {},
    agents: [],
    brokenAgents: [],
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
      if (result.ok) set({ agents: result.value.agents, brokenAgents: result.value.broken, agentsLoaded: true });
    },

    touchRun: touch,

    async loadRunLinks(runId) {
      const result = await client.tryCall('runs.links', { runId });
      // A run that cannot be read has no links to show; the run's own view says why.
      if (result.ok) set((s) => ({ runLinks: { ...s.runLinks, [runId]: result.value } }));
    },

    noteRunChange({ runId, status, outcome }) {
      const run = get().runs[runId];
      if (run && (run.status !== status || run.outcome !== outcome)) set((s) => ({ runs: { ...s.runs, [runId]: { ...run, status, outcome } } }));
      touch(runId);
    },

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
