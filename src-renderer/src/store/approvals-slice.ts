/**
 * The approvals inbox: every run waiting for a person, whatever suspended it (approval grant,
 * payment, budget ceiling, input, oversight, halt; in-doubt effects awaiting recovery), in one
 * queue ordered by when it started waiting.
 *
 * The queue is the runs projection filtered to runs with a pending wait (`deriveWaiting`, run
 * by app-store whenever runs change). `approvals.list` and `recovery.list` answer from the
 * same fold (the runtime's latest 1,000 runs) with the same RunViews, so the inbox reads them
 * when it is opened, and otherwise keeps current through the runs the journal tail re-reads;
 * a reset then costs one fold of the journal (runs.list) rather than three.
 *
 * A decision names the wait and the hash of the subject that was shown, both taken from this
 * projection: if the plane's subject changed meanwhile, the plane refuses and the item shows
 * why. A new wait raises a system notification when the person has turned that on.
 */
import type { RunView } from '../../../src-shared/ipc/contract';
import type { Result } from '../../../src-shared/ipc/result';
import type { Decision, DecisionValue, RecoveryResolution } from '../../../src-shared/vocabulary/decisions';
import { approvableDirectly, describeWait, waitHeadline } from '../lib/wait-description';
import type { SliceDeps } from './store-types';

/** What a batch may decide for many waits at once: never a snooze (each is snoozed on its own). */
export type BatchDecision = Exclude<Decision, 'snooze'>;

export interface DecisionExtras {
  reason?: string;
  until?: string;
  value?: DecisionValue;
}

export interface ApprovalsSlice {
  waiting: RunView[];
  waitingLoaded: boolean;
  waitingError: string | null;
  /** Set once the first runs list has been folded in: waits seen after it are new. */
  notifyReady: boolean;
  /** runId → the action in progress. */
  decisionBusy: Record<string, string | undefined>;
  decisionErrors: Record<string, string | undefined>;
  selectedWaits: Record<string, true | undefined>;
  /** The item to bring into view (a link from Spend or a run's header). */
  focusWait: string | null;
  /** Reads the inbox from the plane (approvals.list and recovery.list) into the runs projection. */
  refreshWaiting(): Promise<void>;
  /** Recomputes the queue from the runs projection; notifies new waits once the first list is in. */
  deriveWaiting(): void;
  decide(runId: string, decision: Decision, extras?: DecisionExtras): Promise<boolean>;
  resolveRecovery(runId: string, resolution: RecoveryResolution, reason?: string): Promise<boolean>;
  toggleWaitSelected(runId: string, selected: boolean): void;
  selectAllWaits(selected: boolean): void;
  batchDecide(decision: BatchDecision, reason?: string): Promise<{ done: number; skipped: number; failed: number }>;
  setFocusWait(runId: string | null): void;
  /** A halt withholds a run until it is lifted (halts.lift); the inbox offers it where it waits. */
  liftHalt(runId: string, scope: string): Promise<boolean>;
}

const byWaitSeq = (a: RunView, b: RunView) => (a.pending?.seq ?? 0) - (b.pending?.seq ?? 0);

export function createApprovalsSlice({ set, get, client, env }: SliceDeps): ApprovalsSlice {
  /** waitIds seen so far: a wait not in here after the first list is in is new, and notified. */
  const seen = new Set<string>();

  const notifyNew = (fresh: RunView[]) => {
    for (const run of fresh) {
      const wait = run.pending!;
      const what = describeWait(wait);
      // The human question, for whom and which run, once ("Pay 12.50 USD to ACME Corp — for …, run …");
      // a budget's question (its numbers) is named as one.
      const line = `${wait.reason === 'budget' ? `${what.title}: ` : ''}${waitHeadline(run, what)}.`;
      get().announce(`New in Approvals. ${line}`);
      if (get().preferences.notifications && env.notifications.permission() === 'granted') env.notifications.show('AgentPlane: a run is waiting for you', line);
    }
  };

  const afterDecision = (runId: string, result: Result<RunView>, label: string): boolean => {
    set((s) => ({ decisionBusy: { ...s.decisionBusy, [runId]: undefined } }));
    if (!result.ok) {
      set((s) => ({ decisionErrors: { ...s.decisionErrors, [runId]: result.error.message } }));
      get().announce(`Could not ${label}: ${result.error.message}`);
      return false;
    }
    set((s) => {
      const selectedWaits = { ...s.selectedWaits };
      delete selectedWaits[runId];
      return { runs: { ...s.runs, [runId]: result.value }, selectedWaits };
    });
    get().announce(`${label[0]!.toUpperCase()}${label.slice(1)}: run ${runId}.`);
    return true;
  };

  return {
    waiting: [],
    waitingLoaded: false,
    waitingError: null,
    notifyReady: false,
    decisionBusy: {},
    decisionErrors: {},
    selectedWaits: {},
    focusWait: null,

    async refreshWaiting() {
      const [approvals, recovery] = await Promise.all([client.tryCall('approvals.list', {}), client.tryCall('recovery.list', {})]);
      if (!approvals.ok || !recovery.ok) {
        set({ waitingError: (approvals.ok ? null : approvals.error.message) ?? (recovery.ok ? null : recovery.error.message) });
        return;
      }
      set((s) => {
        const runs = { ...s.runs };
        for (const run of [...approvals.value.waiting, ...recovery.value.waiting]) runs[run.runId] = run;
        return { runs, waitingLoaded: true, waitingError: null };
      });
    },

    deriveWaiting() {
      const s = get();
      const waiting = Object.values(s.runs)
        .filter((r) => r.pending !== null && r.status === 'suspended')
        .sort(byWaitSeq);
      const fresh = waiting.filter((r) => !seen.has(r.pending!.waitId));
      for (const run of waiting) seen.add(run.pending!.waitId);
      // What was waiting when the first list arrived is not news; what appears after it is.
      const announceFresh = s.runsLoaded && s.notifyReady;
      const same = waiting.length === s.waiting.length && waiting.every((r, i) => r === s.waiting[i]);
      const live = new Set(waiting.map((r) => r.runId));
      set({
        ...(s.runsLoaded && !s.notifyReady ? { notifyReady: true } : {}),
        ...(same
          ? {}
          : {
              waiting,
              waitingLoaded: s.runsLoaded || s.waitingLoaded,
              selectedWaits: Object.fromEntries(Object.entries(s.selectedWaits).filter(([runId]) => live.has(runId))),
              decisionErrors: Object.fromEntries(Object.entries(s.decisionErrors).filter(([runId]) => live.has(runId))),
            }),
      });
      if (announceFresh) notifyNew(fresh);
    },

    async decide(runId, decision, extras = {}) {
      const run = get().waiting.find((r) => r.runId === runId);
      const wait = run?.pending;
      if (!wait) return false;
      set((s) => ({ decisionBusy: { ...s.decisionBusy, [runId]: decision }, decisionErrors: { ...s.decisionErrors, [runId]: undefined } }));
      const result = await client.tryCall('approvals.decide', {
        runId,
        waitId: wait.waitId,
        decision,
        subjectHash: wait.subjectHash,
        ...(extras.reason ? { reason: extras.reason } : {}),
        ...(extras.until ? { until: extras.until } : {}),
        ...(extras.value !== undefined ? { value: extras.value } : {}),
      });
      const label = decision === 'approve' ? 'approved' : decision === 'deny' ? 'denied' : 'snoozed';
      return afterDecision(runId, result, label);
    },

    async resolveRecovery(runId, resolution, reason) {
      const run = get().waiting.find((r) => r.runId === runId);
      const wait = run?.pending;
      if (!wait) return false;
      set((s) => ({ decisionBusy: { ...s.decisionBusy, [runId]: resolution }, decisionErrors: { ...s.decisionErrors, [runId]: undefined } }));
      const result = await client.tryCall('recovery.resolve', {
        runId,
        waitId: wait.waitId,
        subjectHash: wait.subjectHash,
        resolution,
        ...(reason ? { reason } : {}),
      });
      return afterDecision(runId, result, resolution === 'retry' ? 'retried' : resolution === 'landed' ? 'marked landed' : 'failed');
    },

    toggleWaitSelected(runId, selected) {
      set((s) => {
        const selectedWaits = { ...s.selectedWaits };
        if (selected) selectedWaits[runId] = true;
        else delete selectedWaits[runId];
        return { selectedWaits };
      });
    },

    selectAllWaits(selected) {
      set((s) => ({ selectedWaits: selected ? Object.fromEntries(s.waiting.map((r) => [r.runId, true as const])) : {} }));
    },

    async batchDecide(decision, reason) {
      const chosen = get().waiting.filter((r) => get().selectedWaits[r.runId]);
      // Approving a budget, an input or a recovery needs a value only the person can give.
      const eligible = chosen.filter((r) => decision === 'deny' ? r.pending!.reason !== 'recovery' && r.pending!.reason !== 'halt' : approvableDirectly(r.pending!));
      let failed = 0;
      for (const run of eligible) {
        const ok = await get().decide(run.runId, decision, reason ? { reason } : {});
        if (!ok) failed++;
      }
      return { done: eligible.length - failed, skipped: chosen.length - eligible.length, failed };
    },

    setFocusWait(runId) {
      set({ focusWait: runId });
    },

    async liftHalt(runId, scope) {
      set((s) => ({ decisionBusy: { ...s.decisionBusy, [runId]: 'lift' }, decisionErrors: { ...s.decisionErrors, [runId]: undefined } }));
      const result = await client.tryCall('halts.lift', { scope });
      set((s) => ({ decisionBusy: { ...s.decisionBusy, [runId]: undefined } }));
      if (!result.ok) {
        set((s) => ({ decisionErrors: { ...s.decisionErrors, [runId]: result.error.message } }));
        return false;
      }
      get().announce(`Halt on ${scope} lifted.`);
      get().touchRun(runId);
      return true;
    },
  };
}
