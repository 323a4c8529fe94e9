/**
 * Editor sessions: the ACP sessions the plane observed through `agentplane acp tap`, as the
 * plane folds them (`acp.sessions` for the list, `acp.session` for one session's conversation,
 * plan, tool calls and permission requests), and the open session's raw wire: its journal
 * records, read with `journal.records` like the Runs timeline.
 *
 * Kept current by the journal's notifications, as the rest of the store is:
 * - the open session is re-read when a notification names its run, coalesced over a short
 *   window (OPEN_QUIET_MS quiet, at most OPEN_MAX_WAIT_MS), so an agent streaming message
 *   chunks every few milliseconds shows each new one within 200 ms at the cost of one
 *   `acp.session` (and, with the wire tab loaded, one `journal.records`) per window;
 * - the list is re-read when a notification names a session it lists, or a run it has not seen
 *   that could be a new session (its first record is an Observation, never a RunAdmitted; it
 *   is sealed as `observed`), coalesced the usual way; and only while the list is shown:
 *   otherwise it is marked stale and re-read when it is shown again (as Spend is);
 * - the open session is also re-read, the same way, when its transcript grows (`acp.transcript`:
 *   a session recorded as evidence keeps its chunks, thoughts and plans beside the journal, so
 *   they move no seq), and so is the list while it is shown;
 * - one read of each is in flight at a time: the plane folds a session's records to answer,
 *   which takes a while for a long one, so reads never pile up behind a fast stream.
 *
 * The wire is read in chunks from the run's first record and kept in memory up to
 * MAX_WIRE_RECORDS (10,000 messages are about 5 MB of views); past that the view says so and
 * points to the exported bundle, which has all of them.
 */
import type { CommandResponse, RecordView, RunChange } from '../../../src-shared/ipc/contract';
import type { Result } from '../../../src-shared/ipc/result';
import type { PermissionView, SessionSummary, SessionView } from '../../../src-shared/protocol/acp/session-view';
import { coalesce, type SliceDeps } from './store-types';

export const ACP_LIST_LIMIT = 200;
const OPEN_QUIET_MS = 40;
const OPEN_MAX_WAIT_MS = 150;
const LIST_QUIET_MS = 80;
const LIST_MAX_WAIT_MS = 500;
/** The most records one `journal.records` call asks for (the contract's cap). */
const WIRE_CHUNK = 5000;
export const MAX_WIRE_RECORDS = 50_000;

export interface AcpOpenState {
  runId: string | null;
  view: SessionView | null;
  error: string | null;
  /**
   * The session run's last journal seq, for the verification badge: from the journal's run list
   * when opened, then the seq of each commit that touched it (an upper bound, exact when the
   * commit's last record is the session's) or the wire's last record, whichever is known.
   */
  lastSeq: number | null;
  /** Bumped on every open: late answers for an earlier session are dropped. */
  generation: number;
}

export interface AcpWireState {
  /** The run whose wire is loaded (null until the wire tab asks for it). */
  runId: string | null;
  records: RecordView[];
  lastSeq: number;
  /** The first read reached the run's last record. */
  complete: boolean;
  /** More records than MAX_WIRE_RECORDS: the rest are in the exported bundle. */
  truncated: boolean;
  error: string | null;
}

export interface AcpSlice {
  acpSessions: SessionSummary[];
  acpLoaded: boolean;
  acpError: string | null;
  /** The list missed changes while the section was not shown: re-read it when it is. */
  acpStale: boolean;
  acpOpen: AcpOpenState;
  acpWire: AcpWireState;
  acpWireQuery: string;
  /** requestKey → the optionId being sent. */
  acpPermissionBusy: Record<string, string | undefined>;
  acpPermissionErrors: Record<string, string | undefined>;
  refreshAcpSessions(): Promise<void>;
  /** The section is shown: reads the list if it has not been, or missed changes meanwhile. */
  touchAcpSessions(): void;
  openAcpSession(runId: string): void;
  closeAcpSession(): void;
  /** Re-reads the open session (and its wire, when loaded) now. */
  refreshAcpSession(): Promise<void>;
  /** Reads the open session's wire records (the wire tab is shown). */
  loadAcpWire(): Promise<void>;
  /** A journal notification: which of these runs are sessions this slice shows. */
  noteAcpChanges(changes: RunChange[]): void;
  /** A session's transcript grew (`acp.transcript`): re-read it if it is open, the list if it is shown. */
  noteAcpTranscript(runId: string): void;
  setAcpWireQuery(query: string): void;
  /**
   * Erases a session's transcript (`acp.transcriptErase`): the conversation people read goes,
   * the journal's evidence and its count of what it left out stay. The open session is re-read.
   */
  eraseAcpTranscript(sessionId: string): Promise<boolean>;
  /** Chooses one of the agent's options for an open permission request of a session tapped with `--policy inbox` (`acp.answer`). */
  answerPermission(runId: string, permission: PermissionView, optionId: string): Promise<boolean>;
}

const EMPTY_OPEN: AcpOpenState = { runId: null, view: null, error: null, lastSeq: null, generation: 0 };
const EMPTY_WIRE: AcpWireState = { runId: null, records: [], lastSeq: 0, complete: false, truncated: false, error: null };

/**
 * A change that may be a session this slice has not listed yet: an observed run starts with an
 * Observation (tap/started; it is never admitted) and is sealed as `observed`.
 */
export const isObservedChange = (change: RunChange) => change.kind === 'Observation' || change.outcome === 'observed';

export function createAcpSlice({ set, get, client, env }: SliceDeps): AcpSlice {
  /** The wire read in flight, and whether another was asked for meanwhile. */
  let wireReading: Promise<void> | null = null;
  let wireAgain = false;
  /** The same for the list (acp.sessions) and the open session's view (acp.session). */
  let listReading: Promise<void> | null = null;
  let listAgain = false;
  let sessionReading: Promise<void> | null = null;
  let sessionAgain = false;

  const touchList = coalesce(env, () => void get().refreshAcpSessions(), LIST_QUIET_MS, LIST_MAX_WAIT_MS);
  const touchOpen = coalesce(env, () => void get().refreshAcpSession(), OPEN_QUIET_MS, OPEN_MAX_WAIT_MS);

  /** Reads the wire's records after the last one held, chunk by chunk, up to the cap. */
  const readWire = async () => {
    // `continue` and `break` below end this pass; another runs when one was asked for meanwhile
    // (a newer record, or another session's wire opened while this one was being read).
    do {
      wireAgain = false;
      const { runId, generation } = get().acpOpen;
      const wire = get().acpWire;
      if (!runId || wire.runId !== runId) continue;
      let fromSeq: number | null = wire.lastSeq + 1;
      while (fromSeq !== null) {
        const room = MAX_WIRE_RECORDS - get().acpWire.records.length;
        if (room <= 0) {
          set((s) => ({ acpWire: { ...s.acpWire, truncated: true, complete: true } }));
          break;
        }
        const result: Result<CommandResponse<'journal.records'>> = await client.tryCall('journal.records', { runId, fromSeq, limit: Math.min(WIRE_CHUNK, room) });
        if (get().acpOpen.generation !== generation || get().acpWire.runId !== runId) break;
        if (!result.ok) {
          set((s) => ({ acpWire: { ...s.acpWire, error: result.error.message } }));
          break;
        }
        const last = get().acpWire.lastSeq;
        // Merge by seq: a record already held (an answer overlapping a follow) is never added twice.
        const fresh = result.value.records.filter((r) => r.runId === runId && r.seq > last);
        const nextSeq: number | null = result.value.nextSeq;
        set((s) => ({
          acpOpen: fresh.length > 0 ? { ...s.acpOpen, lastSeq: Math.max(s.acpOpen.lastSeq ?? 0, fresh[fresh.length - 1]!.seq) } : s.acpOpen,
          acpWire: {
            ...s.acpWire,
            records: fresh.length > 0 ? [...s.acpWire.records, ...fresh] : s.acpWire.records,
            lastSeq: fresh.length > 0 ? fresh[fresh.length - 1]!.seq : s.acpWire.lastSeq,
            complete: nextSeq === null ? true : s.acpWire.complete,
            error: null,
          },
        }));
        fromSeq = nextSeq;
      }
    } while (wireAgain);
  };

  const followWire = (): Promise<void> => {
    if (wireReading) {
      wireAgain = true;
      return wireReading;
    }
    wireReading = readWire().finally(() => (wireReading = null));
    return wireReading;
  };

  return {
    acpSessions: [],
    acpLoaded: false,
    acpError: null,
    acpStale: false,
    acpOpen: EMPTY_OPEN,
    acpWire: EMPTY_WIRE,
    acpWireQuery: '',
    acpPermissionBusy: {},
    acpPermissionErrors: {},

    refreshAcpSessions() {
      // One read in flight at a time, as for the open session: a touch meanwhile costs one more.
      if (listReading) {
        listAgain = true;
        return listReading;
      }
      const readList = async () => {
        do {
          listAgain = false;
          set({ acpStale: false });
          const result = await client.tryCall('acp.sessions', { limit: ACP_LIST_LIMIT });
          if (result.ok) set({ acpSessions: result.value.sessions, acpLoaded: true, acpError: null });
          else set({ acpError: result.error.message });
        } while (listAgain);
      };
      listReading = readList().finally(() => (listReading = null));
      return listReading;
    },

    touchAcpSessions() {
      const s = get();
      if (!s.acpLoaded || s.acpStale) void s.refreshAcpSessions();
    },

    openAcpSession(runId) {
      const current = get().acpOpen;
      if (current.runId === runId) return;
      wireAgain = false;
      set({
        // The list's summary shows meanwhile (the page finds it by runId); the view replaces it.
        acpOpen: { runId, view: null, error: null, lastSeq: null, generation: current.generation + 1 },
        acpWire: EMPTY_WIRE,
        acpWireQuery: '',
        acpPermissionErrors: {},
      });
      void get().refreshAcpSession();
      // As a run's timeline does: the session is evidence, so its page says at once whether the journal holds.
      void get().runVerify();
      const generation = get().acpOpen.generation;
      void client.tryCall('journal.runs', { limit: 1000 }).then((result) => {
        const row = result.ok ? result.value.runs.find((r) => r.runId === runId) : undefined;
        if (!row || get().acpOpen.generation !== generation) return;
        set((s) => ({ acpOpen: { ...s.acpOpen, lastSeq: Math.max(s.acpOpen.lastSeq ?? 0, row.lastSeq) } }));
      });
    },

    closeAcpSession() {
      set((s) => ({ acpOpen: { ...EMPTY_OPEN, generation: s.acpOpen.generation + 1 }, acpWire: EMPTY_WIRE, acpWireQuery: '' }));
    },

    refreshAcpSession() {
      // One read in flight at a time: the plane folds the session's records to answer, which
      // takes a while for a long session, so touches meanwhile cost one more read after it,
      // not one each (a fast stream would otherwise pile reads up on the plane).
      if (sessionReading) {
        sessionAgain = true;
        return sessionReading;
      }
      const readSession = async () => {
        do {
          sessionAgain = false;
          const { runId, generation } = get().acpOpen;
          if (!runId) continue;
          // The wire's new records are read alongside: the row and the conversation arrive together.
          const wire = get().acpWire.runId === runId ? followWire() : Promise.resolve();
          const result = await client.tryCall('acp.session', { runId });
          // Another session opened meanwhile: its read is the next pass (it asked for one).
          if (get().acpOpen.generation !== generation) continue;
          if (result.ok) set((s) => ({ acpOpen: { ...s.acpOpen, view: result.value, error: null } }));
          else set((s) => ({ acpOpen: { ...s.acpOpen, error: result.error.message } }));
          await wire;
        } while (sessionAgain);
      };
      sessionReading = readSession().finally(() => (sessionReading = null));
      return sessionReading;
    },

    loadAcpWire() {
      const runId = get().acpOpen.runId;
      if (!runId) return Promise.resolve();
      if (get().acpWire.runId === runId) return wireReading ?? Promise.resolve();
      set({ acpWire: { ...EMPTY_WIRE, runId } });
      return followWire();
    },

    noteAcpChanges(changes) {
      const s = get();
      const listed = new Set(s.acpSessions.map((x) => x.runId));
      let listChanged = false;
      for (const change of changes) {
        if (change.runId === s.acpOpen.runId) {
          const lastSeq = Math.max(s.acpOpen.lastSeq ?? 0, s.journalHead);
          if (lastSeq !== s.acpOpen.lastSeq) set((x) => ({ acpOpen: { ...x.acpOpen, lastSeq } }));
          touchOpen(change.runId);
        }
        if (listed.has(change.runId) || isObservedChange(change)) listChanged = true;
      }
      if (!listChanged) return;
      // The list is read while it is on screen; behind a session page (whose view is read
      // anyway) or another section it waits, marked stale, so a streaming session is not
      // folded twice per window.
      if (s.section === 'acp' && !s.acpOpen.runId) touchList('list');
      else if (s.acpLoaded) set({ acpStale: true });
    },

    noteAcpTranscript(runId) {
      const s = get();
      if (s.acpOpen.runId === runId) touchOpen(runId);
      else if (s.section === 'acp' && !s.acpOpen.runId) touchList('list');
      else if (s.acpLoaded) set({ acpStale: true });
    },

    setAcpWireQuery(query) {
      set({ acpWireQuery: query });
    },

    async eraseAcpTranscript(sessionId) {
      const result = await client.tryCall('acp.transcriptErase', { sessionId });
      if (!result.ok) {
        get().announce(`Could not erase the transcript: ${result.error.message}`);
        return false;
      }
      get().announce(`Erased the transcript of session ${sessionId}: ${result.value.lines} lines. The journal's evidence is unchanged.`);
      const open = get().acpOpen.runId;
      if (open && result.value.runIds.includes(open)) await get().refreshAcpSession();
      return true;
    },

    async answerPermission(runId, permission, optionId) {
      const key = permission.requestKey;
      if (get().acpPermissionBusy[key]) return false;
      set((s) => ({ acpPermissionBusy: { ...s.acpPermissionBusy, [key]: optionId }, acpPermissionErrors: { ...s.acpPermissionErrors, [key]: undefined } }));
      // The plane journals the answer only while the request is open in its fold (first answer
      // wins: an editor's answer already on the wire stays the one the agent got).
      const result = await client.tryCall('acp.answer', { runId, requestKey: key, outcome: 'selected', optionId });
      set((s) => ({
        acpPermissionBusy: { ...s.acpPermissionBusy, [key]: undefined },
        acpPermissionErrors: { ...s.acpPermissionErrors, [key]: result.ok ? undefined : result.error.message },
      }));
      if (!result.ok) {
        get().announce(`Could not answer the permission request: ${result.error.message}`);
        return false;
      }
      const option = permission.options.find((o) => o.optionId === optionId);
      get().announce(`Answered the permission request: ${option?.name ?? optionId}.`);
      if (get().acpOpen.runId === runId) touchOpen(runId);
      return true;
    },
  };
}
