/**
 * The runtime's reads: runs' histories and summaries (each kept while its run's last seq is its
 * own), listings, the links between runs, and the follower that reads what other processes
 * appended. Nothing here writes to the journal.
 */
import { ErrorCode } from '../../src-shared/ipc/errors';
import type { RecordBody, RecordKind } from '../../src-shared/journal/records';
import { isRunId } from '../../src-shared/vocabulary/ids';
import type { EffectKind } from '../../src-shared/vocabulary/effects';
import type { StoredRecord } from '../journal/journal-store';
import { PlaneError } from '../base/plane-error';
import { errorFields } from '../base/logger';
import { confirmsCall, linkOf, type RunLink, type RunLinks } from './run-links';
import { RunFold, summaryOf, type PendingWait, type RunHistory, type RunSummary } from './run-history';
import type { RuntimeState } from './runtime-state';

const HISTORY_CACHE = 2000;
/**
 * The most records the folded-history cache holds in all, besides its count of runs: a history
 * holds its effects' requests and results, so 2,000 runs of 1,000 records each held ~600 MB
 * after one look at a 1M-record journal (bench/memory.bench.ts). A run longer than this is
 * folded when asked for and not kept.
 */
const HISTORY_CACHE_RECORDS = 100_000;
/** Records read and folded at a time (foldRun): about 1 MB of parsed records per page. */
const FOLD_PAGE = 2000;
/**
 * Run summaries kept for listing (see listRunSummaries): a summary is a few hundred bytes
 * whatever its run's length, so this many cost a few MB, and a journal of this many runs is
 * listed again without folding any run that has not grown.
 */
const SUMMARY_CACHE = 20_000;
/**
 * Summary folds kept open (RunFold, detail off) so a run that grew is folded on from where it
 * was, not again from its first record: a summary fold holds the summary, its waits and its open
 * payments, a few KB whatever the run's length, while folding a 100,000-record run again took
 * 1.2 s on every look after each new record.
 */
const OPEN_FOLDS = 2000;
/** A kept history (detail) is folded on when its run grew by fewer records than this; more, and it is folded again page by page. */
const CONTINUE_MAX = FOLD_PAGE;
/** Calls listed on one run's page: a run that made more shows the first this many. */
export const MAX_LINKED_CALLS = 500;

/** Which of one owner's runs `listOwnedRuns` reads (generic filters; the journal's OwnedRunsQuery with a time for activity). */
export interface OwnedRunsFilter {
  owner: string;
  agent?: string;
  host?: string;
  context?: string;
  /** Only runs with a record at or after this ISO time (whenever they were admitted). */
  activeSince?: string;
  /** Only runs admitted before this journal seq: the previous page's `nextBeforeSeq`. */
  beforeSeq?: number;
}

export class RunReads {
  /** Folded histories by run, most recently used last (see history()). */
  private readonly histories = new Map<string, RunHistory>();
  /** The records the cached histories hold, in all (bounded by HISTORY_CACHE_RECORDS). */
  private historyRecords = 0;
  /** Run summaries by run, most recently used last, each true while its run's lastSeq is its own. */
  private readonly summaries = new Map<string, RunSummary>();
  /** Summary folds kept open by run, most recently used last (OPEN_FOLDS). */
  private readonly folds = new Map<string, RunFold>();
  /** Summary folds under way, by run and last seq (summary()). */
  private readonly summariesFolding = new Map<string, Promise<RunSummary>>();

  constructor(private readonly state: RuntimeState) {}

  /**
   * One run's history. A history is a pure function of the run's records, and records are
   * append-only, so a folded history stays true until the run's last seq moves: it is kept,
   * keyed by that seq, and re-folded only when the run has grown. (Listing runs of 100,000
   * records each otherwise re-reads every one of them on every list.)
   */
  async history(runId: string, knownLastSeq?: number): Promise<RunHistory> {
    const lastSeq = await this.lastSeqOf(runId, knownLastSeq);
    const cached = this.histories.get(runId);
    if (cached && cached.lastSeq === lastSeq) return cached;
    // Grown by a few records since it was kept: folded on from the kept history, not from the start.
    const added = cached && cached.lastSeq < lastSeq ? await this.state.journal.readRun(runId, cached.lastSeq + 1, CONTINUE_MAX) : null;
    const history = cached && added && added.length < CONTINUE_MAX ? RunFold.continuing(cached, added) : await this.foldRun(runId, true);
    this.keepHistory(history);
    return history;
  }

  /** The history kept for a run, as it was kept (no read of the journal); undefined when none is. */
  kept(runId: string): RunHistory | undefined {
    return this.histories.get(runId);
  }

  /**
   * One run's summary (its history less the per-step detail): what `runs.get`, the Runs list,
   * the inboxes and spend show. Kept like a history, keyed by the run's last seq, and folded
   * without the effects' attempts, so a look at a run of 100,000 records neither keeps nor
   * builds 50,000 of them.
   */
  async summary(runId: string, knownLastSeq?: number): Promise<RunSummary> {
    const lastSeq = await this.lastSeqOf(runId, knownLastSeq);
    const kept = this.summaries.get(runId);
    if (kept && kept.lastSeq === lastSeq) {
      this.summaries.delete(runId);
      this.summaries.set(runId, kept);
      return kept;
    }
    const cached = this.histories.get(runId);
    if (cached && cached.lastSeq === lastSeq) return this.keepSummary(summaryOf(cached));
    // Lists read at once (the Runs list, the inbox and the recovery list, all on connect) ask
    // for the same runs' summaries together: one fold of a run answers them all. Folding a run of
    // 1,000,000 records takes seconds, and three folds of it side by side took three times as
    // long (docs/PERFORMANCE.md, "At scale").
    const key = `${runId}@${lastSeq}`;
    const underway = this.summariesFolding.get(key);
    if (underway) return underway;
    const folding = this.foldSummary(runId, lastSeq).finally(() => this.summariesFolding.delete(key));
    this.summariesFolding.set(key, folding);
    return folding;
  }

  /** A summary folded on from the run's kept summary fold, or folded from its start and kept open. */
  private async foldSummary(runId: string, lastSeq: number): Promise<RunSummary> {
    // Taken out of the map while it is fed, so no other reader adds to it at the same time.
    let fold = this.folds.get(runId);
    this.folds.delete(runId);
    // (A fold already past `lastSeq`, which another reader moved on, is the history of a longer prefix: as true.)
    if (!fold) fold = await this.openFold(runId, false);
    else if (fold.lastSeq < lastSeq) await this.foldOn(fold, runId, fold.lastSeq + 1);
    this.folds.set(runId, fold);
    while (this.folds.size > OPEN_FOLDS) this.folds.delete(this.folds.keys().next().value!);
    return this.keepSummary(summaryOf(fold.snapshot()));
  }

  /** The run's last seq (what its kept history and summary are keyed by); refuses a bad or unknown id. */
  private async lastSeqOf(runId: string, knownLastSeq?: number): Promise<number> {
    if (!isRunId(runId)) throw new PlaneError(ErrorCode.BadRequest, `"${runId.slice(0, 40)}" is not a run id`);
    const lastSeq = knownLastSeq ?? (await this.state.journal.runLastSeq(runId));
    if (lastSeq === null) throw new PlaneError(ErrorCode.NotFound, `no run ${runId}`);
    return lastSeq;
  }

  /**
   * Folds a run from its records, FOLD_PAGE at a time: each page is parsed, folded and let go,
   * so what a fold holds at once is one page and the history (RunFold). Records are append-only,
   * so pages read across appends still fold to the history of a prefix of the run, named by its
   * lastSeq like any other.
   */
  private async foldRun(runId: string, detail: boolean | EffectKind): Promise<RunHistory> {
    return (await this.openFold(runId, detail)).finish();
  }

  /** A fold of the run's every record so far, still open for more (foldOn). */
  private async openFold(runId: string, detail: boolean | EffectKind): Promise<RunFold> {
    const page = await this.state.journal.readRun(runId, 1, FOLD_PAGE);
    if (page.length === 0) throw new PlaneError(ErrorCode.NotFound, `no run ${runId}`);
    // A session observed by `acp tap` is a run of the journal but not one this runtime admitted
    // (no RunAdmitted: nothing here authorized it); it is read as a session (acp.session), not a run.
    if (page[0]!.kind === 'Observation') throw new PlaneError(ErrorCode.NotFound, `${runId} is an observed ACP session, not a run the plane admitted (see acp.session)`);
    const fold = new RunFold(page[0]!, detail);
    for (const record of page) fold.add(record);
    if (page.length === FOLD_PAGE) await this.foldOn(fold, runId, page[page.length - 1]!.seq + 1);
    return fold;
  }

  /** Adds the run's records from seq `from` on to `fold`, a page at a time. */
  private async foldOn(fold: RunFold, runId: string, from: number): Promise<void> {
    for (;;) {
      const page = await this.state.journal.readRun(runId, from, FOLD_PAGE);
      for (const record of page) fold.add(record);
      if (page.length < FOLD_PAGE) return;
      from = page[page.length - 1]!.seq + 1;
    }
  }

  /** Keeps a folded history in the cache (in place of any older one), within the cache's bounds. */
  keepHistory(history: RunHistory): void {
    this.forgetHistory(history.runId);
    const bound = this.state.options.historyCacheRecords ?? HISTORY_CACHE_RECORDS;
    if (history.records <= bound) {
      this.histories.set(history.runId, history);
      this.historyRecords += history.records;
    }
    while (this.histories.size > HISTORY_CACHE || this.historyRecords > bound) this.forgetHistory(this.histories.keys().next().value!);
  }

  private forgetHistory(runId: string): void {
    const held = this.histories.get(runId);
    if (!held) return;
    this.histories.delete(runId);
    this.historyRecords -= held.records;
  }

  /**
   * Drops every folded history and summary: an erasure (docs/ERASURE.md) changed what a run's
   * records open to without moving its last seq, so a view folded before it would still show the
   * payloads it destroyed.
   */
  forgetAll(): void {
    this.histories.clear();
    this.historyRecords = 0;
    this.summaries.clear();
    this.folds.clear();
  }

  /** How many runs and records the folded-history cache holds now (for tests and diagnostics). */
  get historyCache(): { runs: number; records: number } {
    return { runs: this.histories.size, records: this.historyRecords };
  }

  /** The run that called this one and the runs it called (run-links.ts). */
  async links(runId: string): Promise<RunLinks> {
    const journal = this.state.journal;
    // Most runs were called by no run and called none: the admission (its first record) and the
    // journal's index of called runs say so without folding the run. The page asks for a run's
    // links each time it is opened, and folding a 100,000-record run for that read every record
    // and held them all at once (runs.get, which folds the same way, takes 1.4 s on one).
    if (isRunId(runId)) {
      const [first] = await journal.readRun(runId, 1, 1);
      if (first?.kind === 'RunAdmitted' && !(first.body as RecordBody<'RunAdmitted'>).parentRunId) {
        if ((await journal.childRuns(runId, 1)).length === 0) return { calledBy: null, calls: [] };
      }
    }
    const history = await this.history(runId);
    let calledBy: RunLink | null = null;
    if (history.parentRunId) {
      const step = history.parentStep ?? null;
      const parent = await this.history(history.parentRunId).catch(() => null);
      calledBy = parent
        ? linkOf(parent, step, confirmsCall(parent, step, { agent: history.agent, host: history.heldBy?.[0]?.host ?? history.host ?? 'plane' }, history.admittedSeq))
        : // Named, but not a run this journal holds: shown as stated, and unconfirmed.
          { runId: history.parentRunId, agent: '', host: '', step, confirmed: false, status: 'sealed', outcome: null };
    }
    const calls: RunLink[] = [];
    for (const row of await journal.childRuns(runId, MAX_LINKED_CALLS)) {
      const child = await this.history(row.runId, undefined).catch(() => null);
      if (child) calls.push(linkOf(child, row.parentStep, confirmsCall(history, row.parentStep, row, row.seq)));
    }
    return { calledBy, calls };
  }

  /** The newest `limit` runs, each folded in full (steps and decisions too). */
  listRuns(limit: number): Promise<RunHistory[]> {
    return this.listFolded(limit, (runId, lastSeq) => this.history(runId, lastSeq));
  }

  /**
   * The newest `limit` runs, each with the attempts of one effect only (`'a2a'`) in its steps and
   * no decisions: what a view of that effect across runs reads (a2a.remotes). Not kept; a run's
   * history already kept at the same last seq answers as it is. Folding every run whole for it
   * held every effect of the newest 1,000 runs at once (as spend.summary did: +600 MB).
   */
  listRunsWithEffect(limit: number, effect: EffectKind): Promise<RunHistory[]> {
    return this.listFolded(limit, async (runId, lastSeq) => {
      const cached = this.histories.get(runId);
      return cached && cached.lastSeq === lastSeq ? cached : this.foldRun(runId, effect);
    });
  }

  /**
   * The newest `limit` runs as summaries (summary()): each folded without its steps, or answered
   * from what is kept, so a list never holds or builds any run's whole history. What the Runs
   * list, the inboxes and spend read.
   */
  listRunSummaries(limit: number): Promise<RunSummary[]> {
    // A summary, like a history, is a function of the run's records: true while lastSeq is.
    return this.listFolded(limit, (runId, lastSeq) => this.summary(runId, lastSeq));
  }

  private keepSummary(summary: RunSummary): RunSummary {
    this.summaries.delete(summary.runId);
    this.summaries.set(summary.runId, summary);
    while (this.summaries.size > SUMMARY_CACHE) this.summaries.delete(this.summaries.keys().next().value!);
    return summary;
  }

  /** How many run summaries are kept for listing (for tests and diagnostics). */
  get summaryCache(): number {
    return this.summaries.size;
  }

  private async listFolded<T>(limit: number, read: (runId: string, lastSeq: number) => Promise<T>): Promise<T[]> {
    const rows = await this.state.journal.runs(limit);
    const out: T[] = [];
    for (const row of rows) {
      // Observed ACP sessions have no admission, budget or spend of their own: not runs here.
      if (row.firstKind === 'Observation') continue;
      try {
        out.push(await read(row.runId, row.lastSeq));
      } catch {
        // A run id the journal holds but cannot fold (written by a newer plane) is skipped here.
      }
    }
    return out;
  }

  /**
   * One owner's runs, newest admission first, at most `limit`, read through the journal's index
   * of each owner's admissions (migration 004): another owner's runs are never read, and only
   * the page is folded. `total` is the exact count of every match, counted from the index with
   * nothing folded; `nextBeforeSeq` continues after this page (null: this page is the last).
   * `activeSince` narrows from the index too: records are appended in time order, so "a record
   * at or after T" is "a record at seq >= the first seq at or after T", which a run admitted
   * before T but active since meets as well.
   */
  async listOwnedRuns(filter: OwnedRunsFilter, limit: number): Promise<{ runs: RunSummary[]; total: number; nextBeforeSeq: number | null }> {
    const journal = this.state.journal;
    const { activeSince, beforeSeq, ...rest } = filter;
    // The total is the count before paging: every filter but the cursor.
    const matching = { ...rest, ...(activeSince !== undefined ? { activeFromSeq: await journal.firstSeqAtOrAfter(activeSince) } : {}) };
    const [rows, total] = await Promise.all([journal.ownedRuns({ ...matching, ...(beforeSeq !== undefined ? { beforeSeq } : {}) }, limit + 1), journal.countOwnedRuns(matching)]);
    const page = rows.slice(0, limit);
    const runs: RunSummary[] = [];
    for (const row of page) {
      try {
        runs.push(await this.summary(row.runId, row.lastSeq));
      } catch {
        // A run the journal holds but cannot fold (written by a newer plane) is skipped, as listRuns does.
      }
    }
    return { runs, total, nextBeforeSeq: rows.length > limit ? page[page.length - 1]!.seq : null };
  }

  /** Every run waiting for a person, oldest wait first. */
  async waiting(limit = 1000): Promise<Array<{ history: RunSummary; wait: PendingWait }>> {
    const runs = await this.listRunSummaries(limit);
    return runs
      .filter((h) => h.pending !== null)
      .map((history) => ({ history, wait: history.pending! }))
      .sort((a, b) => a.wait.seq - b.wait.seq);
  }
}

/** The kinds the follower acts on (RunFollower.follow): halts and their lifts, decisions, cancels. */
const FOLLOWED_KINDS: readonly RecordKind[] = ['HaltApplied', 'Decision', 'Cancelled'];
/** Records of those kinds the follower reads at a time. */
const FOLLOW_PAGE = 1000;

/** What the follower does about what it read (the execution room, runtime-execution.ts). */
export interface FollowActions {
  /** Runs (or resumes) a run this runtime hosts. */
  schedule(runId: string): void;
  /** Cancels a cancelled run's open child runs. */
  cancelChildren(runId: string, by: string): Promise<void>;
}

/**
 * Reads what other processes appended since last time: a decision or cancel on a run this
 * runtime hosts resumes it here; a halt or its lift applies here too. The stream of changes is
 * the journal itself (no second channel between processes that could disagree with it).
 */
export class RunFollower {
  private followedSeq = 0;
  private follower: ReturnType<typeof setInterval> | null = null;

  constructor(
    private readonly state: RuntimeState,
    private readonly reads: RunReads,
    private readonly act: FollowActions,
  ) {}

  /** Follows from the journal's head as it is now, every `followMs`; nothing starts once the runtime is closing. */
  async start(followMs: number): Promise<void> {
    this.followedSeq = (await this.state.journal.head()).seq;
    if (this.state.closing) return;
    this.follower = setInterval(() => void this.follow().catch(() => undefined), followMs);
    this.follower.unref();
  }

  stop(): void {
    if (this.follower) clearInterval(this.follower);
  }

  /** One read of what was appended since the last (see the class). */
  private async follow(): Promise<void> {
    const journal = this.state.journal;
    const head = (await journal.head()).seq;
    while (this.followedSeq < head) {
      // Only the kinds acted on below are read: the records this runtime wrote itself lie in the
      // same range, and parsing every one of them back was a thirtieth of a busy peer's time.
      const records = await journal.readKinds(this.followedSeq + 1, head, FOLLOWED_KINDS, FOLLOW_PAGE);
      for (const record of records) {
        this.followedSeq = record.seq;
        await this.followed(record);
      }
      // A short page read the whole range: none of those kinds lies between its last record and the head.
      if (records.length < FOLLOW_PAGE) this.followedSeq = Math.max(this.followedSeq, head);
    }
  }

  /** What one record of a followed kind means here (see follow). */
  private async followed(record: StoredRecord): Promise<void> {
    const state = this.state;
    if (record.kind === 'HaltApplied') {
      const body = record.body as RecordBody<'HaltApplied'>;
      if (body.lifted && state.halts.delete(body.scope)) {
        for (const { history, wait } of await this.reads.waiting()) {
          if (wait.reason === 'halt' && !state.haltedByChain(history.chain, history.agent)) this.act.schedule(history.runId);
        }
      } else if (!body.lifted) state.halts.add(body.scope);
    } else if (record.runId && state.ownRuns.has(record.runId) && !state.executing.has(record.runId)) {
      if (record.kind === 'Decision' && (record.body as RecordBody<'Decision'>).decision !== 'snooze') this.act.schedule(record.runId);
      if (record.kind === 'Cancelled') {
        state.cancelRequests.add(record.runId);
        this.act.schedule(record.runId);
      }
    } else if (record.runId && record.kind === 'Cancelled' && state.executing.has(record.runId)) {
      state.cancelRequests.add(record.runId);
      // It may be waiting for a child run (an agent tool), which must end for it to.
      void this.act.cancelChildren(record.runId, (record.body as RecordBody<'Cancelled'>).by).catch((error) => state.logger.log('warn', `run ${record.runId}: cancelling its child runs failed`, errorFields(error)));
    }
  }
}
