/**
 * One run's journal as a timeline, read on demand. A run may hold 100,000 records or more, so
 * nothing here fetches a run up front: the list asks for the pages it is showing, a page is one
 * `journal.records` call (runId, fromSeq, limit), and pages far from the view are dropped again.
 *
 * Finding page p's `fromSeq`: when the run's records are contiguous in the journal (its record
 * count equals lastSeq - firstSeq + 1, which is the case for a run that had the journal to
 * itself, and always checked against what comes back) page p starts at firstSeq + p * PAGE_SIZE,
 * so any page is one call away, wherever the scrollbar is dragged. Otherwise another run's
 * records are interleaved: a page next to a known page start (the seq after the previous page's
 * last record) is read from there, and a page farther on by its place in the run
 * (`journal.records`' `position`), one call either way. Reading forward to the end of a
 * 1,000,000-record run instead took 200 calls of 5,000 records and 18 s (docs/PERFORMANCE.md,
 * "At scale").
 *
 * Live tail: when a journal notification names the open run, its records after the last one
 * shown are read (`followTimeline`: one `journal.records` from lastSeq + 1, for this run only)
 * and appended here; `reconcileTimeline` re-checks the count whenever the run's view is re-read,
 * so a reset or a missed record only ever means a page is read again.
 */
import type { CommandResponse, RecordView, RunView, VerifyReportView } from '../../../src-shared/ipc/contract';
import type { Result } from '../../../src-shared/ipc/result';
import type { WitnessStatusView } from '../../../src-shared/protocol/witness';
import { isRunId } from '../../../src-shared/vocabulary/ids';
import { applyModelText, NO_LIVE_ANSWERS, pruneByRecords, type LiveAnswers, type ModelTextUpdate } from '../lib/live-answer';
import { messageOf, type SliceDeps } from './store-types';

export const PAGE_SIZE = 200;
/** Pages kept in memory at most (12,000 records); the farthest from the view go first. */
const MAX_PAGES_KEPT = 60;
/** The most records one catch-up or scan request asks for (the contract's cap). */
const CHUNK = 5000;
const MAX_IN_FLIGHT = 2;
/**
 * While the view jumps more than a couple of pages at a time (a fling, a dragged scrollbar),
 * pages are not requested until it has held still this long: reading and parsing pages the
 * person has already scrolled past would only cost frames.
 */
const SETTLE_MS = 80;
const MAX_MATCHES = 5000;
/** A run this small is searched in full at once; a larger one on request, with progress. */
const AUTO_SCAN_LIMIT = 5000;
/**
 * Opening a timeline verifies the journal by itself while the journal is at most this long
 * (about a fifth of a second of the plane's time); beyond it the badge offers the check instead,
 * because journal.verify reads every record and holds the plane meanwhile (about 1.3 s for
 * 100,000 records), which would stall the pages being read for the rows on screen.
 */
const AUTO_VERIFY_MAX_RECORDS = 20_000;

export interface TimelineState {
  runId: string | null;
  /** Records in the run as far as we know (grows live). */
  count: number;
  /** Whether `count` is the run's (from its view or the journal's run list), not just what a page showed. */
  countKnown: boolean;
  firstSeq: number | null;
  lastSeq: number;
  contiguous: boolean;
  pages: Record<number, RecordView[]>;
  /** page → the fromSeq that starts it, where known. */
  anchors: Record<number, number>;
  loading: Record<number, true | undefined>;
  error: string | null;
  selectedIndex: number | null;
  selectedSeq: number | null;
  /** The seq a route asked for, selected once its record is loaded. */
  pendingSeq: number | null;
  /** Asks the list to scroll to an index (the nonce makes a repeat request visible). */
  scrollTo: { index: number; nonce: number } | null;
  /** Bumped on every open: late answers for an earlier run are dropped. */
  generation: number;
  /**
   * Model answers of this run still streaming (`runs.streaming`), by step: shown under the
   * timeline as live and not yet journaled, dropped once the step's sealed effect is loaded.
   */
  live: LiveAnswers;
}

export interface SearchState {
  kind: string;
  text: string;
  /** `loaded`: matches among loaded pages; `run`: the whole run was scanned. */
  scope: 'loaded' | 'run';
  scanning: boolean;
  scanned: number;
  matches: RecordView[];
  truncated: boolean;
  error: string | null;
}

export interface VerifyState {
  state: 'idle' | 'busy' | 'done' | 'error';
  report: VerifyReportView | null;
  error: string | null;
  /** The outside witness's state, read with each verification (docs/WITNESS.md); null until read. */
  witness?: WitnessStatusView | null;
}

export interface ExportState {
  busy: boolean;
  error: string | null;
  done: { fileName: string; records: number; rootHash: string } | null;
}

export interface TimelineSlice {
  timeline: TimelineState;
  search: SearchState;
  verify: VerifyState;
  exports: Record<string, ExportState | undefined>;
  openTimeline(runId: string, seq?: number | null): void;
  closeTimeline(): void;
  reconcileTimeline(run: RunView): void;
  /** The list shows indexes first..last: load what is missing there. */
  wantRange(first: number, last: number): void;
  selectRecordAt(index: number): void;
  selectSeq(seq: number): void;
  appendLive(records: RecordView[]): void;
  /** A model answer streaming in the open run (other runs' are ignored: nobody is looking). */
  noteModelText(update: ModelTextUpdate): void;
  /** Reads the open run's records after the last one shown and appends them. */
  followTimeline(): Promise<void>;
  setSearch(search: Partial<Pick<SearchState, 'kind' | 'text'>>): void;
  scanRun(): Promise<void>;
  cancelScan(): void;
  /** Verifies the whole journal; `announce` when a person asked for it (not on a timeline's auto-check). */
  runVerify(announce?: boolean): Promise<void>;
  exportRun(runId: string): Promise<void>;
}

const EMPTY_TIMELINE: TimelineState = {
  runId: null,
  count: 0,
  countKnown: false,
  firstSeq: null,
  lastSeq: 0,
  contiguous: false,
  pages: {},
  anchors: { 0: 1 },
  loading: {},
  error: null,
  selectedIndex: null,
  selectedSeq: null,
  pendingSeq: null,
  scrollTo: null,
  generation: 0,
  live: NO_LIVE_ANSWERS,
};

const EMPTY_SEARCH: SearchState = { kind: '', text: '', scope: 'loaded', scanning: false, scanned: 0, matches: [], truncated: false, error: null };

export const searchActive = (search: Pick<SearchState, 'kind' | 'text'>) => search.kind !== '' || search.text.trim() !== '';

/**
 * What a search matches a record against (record-summary.ts's searchableText), loaded with the
 * first search rather than with the page: the timeline's own chunk carries record-summary.ts, so
 * by the time a person types it is usually there already (docs/PERFORMANCE.md, the renderer's
 * initial JavaScript budget).
 */
let searchable: ((record: RecordView) => string) | null = null;
let searchableLoading: Promise<void> | null = null;
function loadSearchable(): Promise<void> {
  searchableLoading ??= import('../lib/record-summary').then((m) => {
    searchable = m.searchableText;
  });
  return searchableLoading;
}

/** Call only once loadSearchable has settled (searchable is set). */
function matcher(search: Pick<SearchState, 'kind' | 'text'>): (record: RecordView) => boolean {
  const words = search.text.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const text = searchable!;
  return (record) => (!search.kind || record.kind === search.kind) && (words.length === 0 || words.every((w) => text(record).includes(w)));
}

export function recordAt(timeline: TimelineState, index: number): RecordView | undefined {
  return timeline.pages[Math.floor(index / PAGE_SIZE)]?.[index % PAGE_SIZE];
}

export function createTimelineSlice({ set, get, client, env }: SliceDeps): TimelineSlice {
  let wanted: number[] = [];
  let inFlight = 0;
  let scanGeneration = 0;
  let nonce = 0;
  /** Verification waits for the first page: the rows a person opened the run for come first. */
  let verifyAfterFirstPage = false;
  let lastFirstPage = 0;
  let settleTimer: unknown = null;
  /** The live-tail read in flight, and whether another was asked for meanwhile. */
  let following: Promise<void> | null = null;
  let followAgain = false;
  /**
   * Pages whose last read failed: not asked for again until the list asks anew (a scroll) or
   * the timeline is reopened. Retrying at once would repeat the failing request in a loop.
   */
  let failed = new Set<number>();

  const patch = (fn: (t: TimelineState) => Partial<TimelineState>) => set((s) => ({ timeline: { ...s.timeline, ...fn(s.timeline) } }));

  const expectedLength = (t: TimelineState, page: number) => Math.max(0, Math.min(PAGE_SIZE, t.count - page * PAGE_SIZE));

  /** Where page p starts, or null when it cannot be known without reading the pages before it. */
  const fromSeqOf = (t: TimelineState, page: number): number | null => {
    if (t.contiguous && t.firstSeq !== null) return t.firstSeq + page * PAGE_SIZE;
    return t.anchors[page] ?? null;
  };

  /** The nearest page at or before p whose start is known. */
  const nearestAnchor = (t: TimelineState, page: number): number => {
    for (let q = page; q > 0; q--) if (t.anchors[q] !== undefined) return q;
    return 0;
  };

  const trySelectPending = () => {
    const t = get().timeline;
    if (t.pendingSeq === null) return;
    const seq = t.pendingSeq;
    let index: number | null = null;
    if (t.contiguous && t.firstSeq !== null && seq >= t.firstSeq && seq < t.firstSeq + t.count) index = seq - t.firstSeq;
    else {
      for (const [page, records] of Object.entries(t.pages)) {
        const at = records.findIndex((r) => r.seq === seq);
        if (at >= 0) index = Number(page) * PAGE_SIZE + at;
      }
    }
    if (index === null) return;
    patch(() => ({ pendingSeq: null, selectedIndex: index, selectedSeq: seq, scrollTo: { index: index!, nonce: ++nonce } }));
  };

  /** Stores fetched records as pages starting at `page`, with the anchors they reveal. */
  const storePages = (generation: number, page: number, records: RecordView[], nextSeq: number | null) => {
    const t = get().timeline;
    if (t.generation !== generation) return;
    const pages = { ...t.pages };
    const anchors = { ...t.anchors };
    let firstSeq = t.firstSeq;
    let contiguous = t.contiguous;
    for (let i = 0; i * PAGE_SIZE < records.length; i++) {
      const chunk = records.slice(i * PAGE_SIZE, (i + 1) * PAGE_SIZE);
      const p = page + i;
      pages[p] = chunk;
      anchors[p] = chunk[0]!.seq;
      if (chunk.length === PAGE_SIZE) anchors[p + 1] = chunk[chunk.length - 1]!.seq + 1;
    }
    // Nothing there (a run the journal does not hold): the page is read, empty, not asked for again and again.
    if (records.length === 0) pages[page] ??= [];
    if (nextSeq !== null && records.length % PAGE_SIZE === 0) anchors[page + records.length / PAGE_SIZE] = nextSeq;
    let count = t.count;
    // A page read while the run grows can end past the last seq the run's view knew: record
    // that, or the live tail would read (and append) the same records again.
    let lastSeq = t.lastSeq;
    const last = records[records.length - 1];
    if (last) {
      lastSeq = Math.max(lastSeq, last.seq);
      count = Math.max(count, page * PAGE_SIZE + records.length);
    }
    if (page === 0 && records[0]) {
      firstSeq = records[0].seq;
      const admitted = records[0];
      if (admitted.kind === 'RunAdmitted' && typeof admitted.body.host === 'string' && t.runId) get().noteRunHost(t.runId, admitted.body.host);
      // Without the run's view yet (a reload straight onto a timeline), this page is what we know.
      count = Math.max(count, records.length);
    }
    if (contiguous && firstSeq !== null) {
      // Trust, but check: a page that does not start where arithmetic says means interleaving.
      const expectedStart = firstSeq + page * PAGE_SIZE;
      if (records[0] && records[0].seq !== expectedStart) contiguous = false;
      if (records.some((r, i) => i > 0 && r.seq !== records[i - 1]!.seq + 1)) contiguous = false;
    } else if (page === 0 && firstSeq !== null) contiguous = lastSeq - firstSeq + 1 === count && count > 0;
    // Drop the pages farthest from what is on screen.
    const keys = Object.keys(pages).map(Number);
    if (keys.length > MAX_PAGES_KEPT) {
      const centre = wanted.length > 0 ? wanted[Math.floor(wanted.length / 2)]! : page;
      keys.sort((a, b) => Math.abs(b - centre) - Math.abs(a - centre));
      for (const key of keys.slice(0, keys.length - MAX_PAGES_KEPT)) delete pages[key];
    }
    // A record selected before it was loaded (End, Page Down) now has its seq, for the address.
    let selectedSeq = t.selectedSeq;
    if (t.selectedIndex !== null && selectedSeq === null) selectedSeq = pages[Math.floor(t.selectedIndex / PAGE_SIZE)]?.[t.selectedIndex % PAGE_SIZE]?.seq ?? null;
    patch(() => ({ pages, anchors, firstSeq, contiguous, count, lastSeq, selectedSeq, error: null, live: pruneByRecords(t.live, records) }));
    if (page === 0 && verifyAfterFirstPage) {
      verifyAfterFirstPage = false;
      void get().runVerify();
    }
    const search = get().search;
    if (searchActive(search) && search.scope === 'loaded') recomputeLoadedMatches();
    trySelectPending();
  };

  const loadPage = async (page: number): Promise<void> => {
    const t = get().timeline;
    const { runId, generation } = t;
    if (!runId) return;
    let request: { runId: string; fromSeq: number; limit: number } | { runId: string; position: number; limit: number } = { runId, fromSeq: fromSeqOf(t, page) ?? 1, limit: PAGE_SIZE };
    let startPage = page;
    if (fromSeqOf(t, page) === null) {
      const anchor = nearestAnchor(t, page);
      const upTo = (page - anchor + 1) * PAGE_SIZE;
      // Near a known start: read forward from it, up to this page, in one request.
      if (upTo <= CHUNK) [startPage, request] = [anchor, { runId, fromSeq: t.anchors[anchor] ?? 1, limit: upTo }];
      // Far from any: this page alone, by its place in the run.
      else request = { runId, position: page * PAGE_SIZE, limit: PAGE_SIZE };
    }
    const marks: number[] = [];
    for (let p = startPage; p * PAGE_SIZE < startPage * PAGE_SIZE + request.limit; p++) marks.push(p);
    patch((s) => ({ loading: { ...s.loading, ...Object.fromEntries(marks.map((p) => [p, true])) } }));
    const result = await client.tryCall('journal.records', request);
    patch((s) => {
      if (s.generation !== generation) return {};
      const loading = { ...s.loading };
      for (const p of marks) delete loading[p];
      return { loading };
    });
    if (get().timeline.generation !== generation) return;
    if (!result.ok) {
      for (const p of marks) failed.add(p);
      patch(() => ({ error: result.error.message }));
      return;
    }
    storePages(generation, startPage, result.value.records, result.value.nextSeq);
  };

  const pump = () => {
    const t = get().timeline;
    if (!t.runId) return;
    for (const page of wanted) {
      if (inFlight >= MAX_IN_FLIGHT) return;
      const have = t.pages[page];
      if (t.loading[page] || failed.has(page)) continue;
      if (have && have.length >= expectedLength(t, page)) continue;
      inFlight++;
      void loadPage(page).finally(() => {
        inFlight--;
        pump();
      });
      // One catch-up request may cover several wanted pages; let it finish before asking again.
      if (fromSeqOf(t, page) === null) return;
    }
  };

  const recomputeLoadedMatches = () => {
    const { timeline, search } = get();
    if (!searchActive(search)) return;
    if (!searchable) {
      void loadSearchable().then(recomputeLoadedMatches);
      return;
    }
    const match = matcher(search);
    const matches: RecordView[] = [];
    const pageKeys = Object.keys(timeline.pages)
      .map(Number)
      .sort((a, b) => a - b);
    for (const key of pageKeys) for (const record of timeline.pages[key]!) if (match(record) && matches.length < MAX_MATCHES) matches.push(record);
    set((s) => ({ search: { ...s.search, scope: 'loaded', matches, truncated: matches.length >= MAX_MATCHES, scanned: pageKeys.reduce((n, k) => n + timeline.pages[k]!.length, 0) } }));
  };

  return {
    timeline: EMPTY_TIMELINE,
    search: EMPTY_SEARCH,
    verify: { state: 'idle', report: null, error: null },
    exports: {},

    openTimeline(runId, seq = null) {
      lastFirstPage = 0;
      const current = get().timeline;
      if (current.runId === runId) {
        if (seq !== null && seq !== current.selectedSeq) {
          patch(() => ({ pendingSeq: seq }));
          trySelectPending();
        }
        return;
      }
      if (!isRunId(runId)) {
        // An address naming no run id: nothing to read, and the view says there is no such run.
        get().closeTimeline();
        set((s) => ({ missingRuns: { ...s.missingRuns, [runId]: true } }));
        return;
      }
      wanted = [0];
      failed = new Set();
      scanGeneration++;
      const run = get().runs[runId];
      const generation = current.generation + 1;
      set({
        timeline: {
          ...EMPTY_TIMELINE,
          runId,
          count: run?.records ?? 0,
          countKnown: run !== undefined,
          lastSeq: run?.lastSeq ?? 0,
          pendingSeq: seq,
          generation,
        },
        search: EMPTY_SEARCH,
      });
      if (!run) {
        get().touchRun(runId);
        // The journal's run list says where the run starts and ends at the cost of one grouped
        // read, long before the run's full view (which folds every record) arrives.
        void client.tryCall('journal.runs', { limit: 1000 }).then((result) => {
          const row = result.ok ? result.value.runs.find((r) => r.runId === runId) : undefined;
          const t = get().timeline;
          if (!row || t.generation !== generation || t.countKnown) return;
          const count = Math.max(t.count, row.records);
          patch(() => ({ count, countKnown: true, lastSeq: row.lastSeq, firstSeq: row.firstSeq, contiguous: row.lastSeq - row.firstSeq + 1 === count }));
          trySelectPending();
          pump();
        });
      }
      // The badge covers this run once the journal has been verified past its last record.
      const verify = get().verify;
      const covered = verify.report?.ok === true && verify.report.count >= (run?.lastSeq ?? Infinity);
      verifyAfterFirstPage = verify.state !== 'busy' && !covered && get().journalHead <= AUTO_VERIFY_MAX_RECORDS;
      pump();
    },

    closeTimeline() {
      wanted = [];
      scanGeneration++;
      set((s) => ({ timeline: { ...EMPTY_TIMELINE, generation: s.timeline.generation + 1 }, search: EMPTY_SEARCH }));
    },

    reconcileTimeline(run) {
      const t = get().timeline;
      if (t.runId !== run.runId || (run.records <= t.count && run.lastSeq <= t.lastSeq)) return;
      const count = Math.max(t.count, run.records);
      const lastSeq = Math.max(t.lastSeq, run.lastSeq);
      const contiguous = t.firstSeq !== null ? lastSeq - t.firstSeq + 1 === count : false;
      // A page that is shorter than the run now says it should be is read again when shown.
      const pages = { ...t.pages };
      for (const key of Object.keys(pages).map(Number)) {
        if (pages[key]!.length < Math.min(PAGE_SIZE, count - key * PAGE_SIZE)) delete pages[key];
      }
      patch(() => ({ count, countKnown: true, lastSeq, contiguous, pages }));
      trySelectPending();
      pump();
    },

    wantRange(first, last) {
      failed = new Set();
      const t = get().timeline;
      if (!t.runId || t.count === 0) {
        wanted = [0];
      } else {
        const from = Math.max(0, Math.floor(first / PAGE_SIZE));
        const to = Math.min(Math.floor(Math.max(0, t.count - 1) / PAGE_SIZE), Math.floor(last / PAGE_SIZE));
        wanted = [];
        for (let p = from; p <= to; p++) wanted.push(p);
        const jumped = Math.abs(from - lastFirstPage) > 2;
        lastFirstPage = from;
        if (jumped || settleTimer !== null) {
          if (settleTimer !== null) env.clearTimer(settleTimer);
          settleTimer = env.setTimer(() => {
            settleTimer = null;
            pump();
          }, SETTLE_MS);
          return;
        }
      }
      pump();
    },

    selectRecordAt(index) {
      const t = get().timeline;
      if (index < 0 || index >= t.count) return;
      const record = recordAt(t, index);
      patch(() => ({ selectedIndex: index, selectedSeq: record?.seq ?? null, pendingSeq: null }));
    },

    selectSeq(seq) {
      patch(() => ({ pendingSeq: seq }));
      trySelectPending();
      const t = get().timeline;
      if (t.pendingSeq === seq) {
        // Not loaded yet: a search match from a scan. Reach it the way the list would.
        if (t.contiguous && t.firstSeq !== null) {
          const index = seq - t.firstSeq;
          patch(() => ({ scrollTo: { index, nonce: ++nonce } }));
          get().wantRange(index, index);
        }
      }
    },

    appendLive(records) {
      const t = get().timeline;
      if (!t.runId) return;
      // Merge by seq: a record already on a loaded page is never appended a second time.
      const loaded = new Set<number>();
      for (const page of Object.values(t.pages)) for (const r of page) loaded.add(r.seq);
      const bySeq = new Map<number, RecordView>();
      for (const r of records) if (r.runId === t.runId && r.seq > t.lastSeq && !loaded.has(r.seq)) bySeq.set(r.seq, r);
      const fresh = [...bySeq.values()].sort((a, b) => a.seq - b.seq);
      if (fresh.length === 0) return;
      const pages = { ...t.pages };
      const anchors = { ...t.anchors };
      let { count, lastSeq, contiguous } = t;
      for (const record of fresh) {
        const page = Math.floor(count / PAGE_SIZE);
        const offset = count % PAGE_SIZE;
        const existing = pages[page];
        if (existing && existing.length === offset) pages[page] = [...existing, record];
        else if (offset === 0) pages[page] = [record];
        if (offset === 0) anchors[page] = record.seq;
        if (lastSeq !== 0 && record.seq !== lastSeq + 1) contiguous = false;
        count++;
        lastSeq = record.seq;
      }
      // A step's sealed effect ends its live text: the record is the answer now.
      patch(() => ({ pages, anchors, count, lastSeq, contiguous, firstSeq: t.firstSeq ?? fresh[0]!.seq, live: pruneByRecords(t.live, fresh) }));
      const search = get().search;
      // Not loaded yet: the recompute the search is waiting on reads these pages too.
      if (searchActive(search) && searchable) {
        const match = matcher(search);
        const more = fresh.filter(match);
        if (more.length > 0) set((s) => ({ search: { ...s.search, matches: [...s.search.matches, ...more].slice(0, MAX_MATCHES) } }));
      }
    },

    noteModelText(update) {
      const t = get().timeline;
      if (t.runId !== update.runId || get().runs[update.runId]?.status === 'sealed') return;
      const live = applyModelText(t.live, update, t.pages);
      if (live !== t.live) patch(() => ({ live }));
    },

    followTimeline() {
      if (following) {
        followAgain = true;
        return following;
      }
      const run = async () => {
        do {
          followAgain = false;
          const t = get().timeline;
          // Before the run's place in the journal is known, the pages read it; nothing to follow.
          if (!t.runId || t.lastSeq === 0) return;
          const { runId, generation } = t;
          let fromSeq: number | null = t.lastSeq + 1;
          while (fromSeq !== null) {
            const result: Result<CommandResponse<'journal.records'>> = await client.tryCall('journal.records', { runId, fromSeq, limit: CHUNK });
            if (!result.ok || get().timeline.generation !== generation) return;
            get().appendLive(result.value.records);
            fromSeq = result.value.nextSeq;
          }
        } while (followAgain);
      };
      following = run().finally(() => (following = null));
      return following;
    },

    setSearch(partial) {
      scanGeneration++;
      set((s) => ({ search: { ...s.search, ...partial, scanning: false, error: null, scope: 'loaded' } }));
      const { search, timeline } = get();
      if (!searchActive(search)) {
        set({ search: { ...EMPTY_SEARCH, kind: search.kind, text: search.text } });
        return;
      }
      recomputeLoadedMatches();
      if (timeline.countKnown && timeline.count > 0 && timeline.count <= AUTO_SCAN_LIMIT) void get().scanRun();
    },

    async scanRun() {
      const { runId, count } = get().timeline;
      if (!runId) return;
      const generation = ++scanGeneration;
      await loadSearchable();
      if (generation !== scanGeneration) return;
      const match = matcher(get().search);
      set((s) => ({ search: { ...s.search, scanning: true, scanned: 0, error: null } }));
      const matches: RecordView[] = [];
      let fromSeq: number | null = 1;
      let scanned = 0;
      try {
        while (fromSeq !== null) {
          const result: Result<CommandResponse<'journal.records'>> = await client.tryCall('journal.records', { runId, fromSeq, limit: CHUNK });
          if (generation !== scanGeneration) return;
          if (!result.ok) throw new Error(result.error.message);
          for (const record of result.value.records) if (match(record) && matches.length < MAX_MATCHES) matches.push(record);
          scanned += result.value.records.length;
          fromSeq = matches.length >= MAX_MATCHES ? null : result.value.nextSeq;
          set((s) => ({ search: { ...s.search, scanned: Math.min(scanned, Math.max(count, scanned)) } }));
        }
        set((s) => ({ search: { ...s.search, scope: 'run', scanning: false, matches, scanned, truncated: matches.length >= MAX_MATCHES } }));
      } catch (error) {
        if (generation === scanGeneration) set((s) => ({ search: { ...s.search, scanning: false, error: messageOf(error) } }));
      }
    },

    cancelScan() {
      scanGeneration++;
      set((s) => ({ search: { ...s.search, scanning: false } }));
    },

    async runVerify(announce = false) {
      if (get().verify.state === 'busy') return;
      set((s) => ({ verify: { ...s.verify, state: 'busy', error: null } }));
      const [result, witness] = await Promise.all([client.tryCall('journal.verify', {}), client.tryCall('witness.status', {})]);
      if (result.ok) set({ verify: { state: 'done', report: result.value, error: null, witness: witness.ok ? witness.value : null } });
      else set((s) => ({ verify: { ...s.verify, state: 'error', error: result.error.message } }));
      const report = get().verify.report;
      if (announce && result.ok && report) {
        get().announce(report.ok ? `Journal verified: ${report.count} records.` : `Journal verification failed at seq ${report.seq ?? '?'}: ${report.reason}`);
      }
    },

    async exportRun(runId) {
      if (get().exports[runId]?.busy) return;
      set((s) => ({ exports: { ...s.exports, [runId]: { busy: true, error: null, done: null } } }));
      const result = await client.tryCall('journal.exportRun', { runId });
      if (!result.ok) {
        set((s) => ({ exports: { ...s.exports, [runId]: { busy: false, error: result.error.message, done: null } } }));
        return;
      }
      const { fileName, content, records, rootHash } = result.value;
      try {
        env.saveFile(fileName, content);
        set((s) => ({ exports: { ...s.exports, [runId]: { busy: false, error: null, done: { fileName, records, rootHash } } } }));
        get().announce(`Exported ${records} records to ${fileName}.`);
      } catch (error) {
        set((s) => ({ exports: { ...s.exports, [runId]: { busy: false, error: messageOf(error), done: null } } }));
      }
    },
  };
}
