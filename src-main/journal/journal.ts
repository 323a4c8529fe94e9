/**
 * The journal: append-only, hash-chained records, a Merkle log over them and signed
 * checkpoints. Every run, effect, decision and observation is appended here exactly once, and
 * the UI's timelines and every stream read it back by seq.
 *
 * A record is acknowledged (the append promise resolves) only after its commit is durable.
 * Group commit is `appendBatch`: one transaction, one fsync, every record in it acknowledged
 * together after that commit and none before.
 *
 * The Merkle accumulator follows the store's head: records appended by another process
 * sharing the data dir (a peer started from the CLI beside the desktop app) are folded in
 * before our own, so the tree always covers seqs 1..head in order.
 */
import { SEALED_VERSION, type JournalRecord, type AnyRecordDraft, type RecordDraft, type RecordKind } from '../../src-shared/journal/records';
import { prepareOnce } from './prepare-draft';
export { prepare } from './prepare-draft';
import { CheckpointLog, peekCheckpoint, signCheckpoint, verifyCheckpoint, type SignedCheckpoint } from './checkpoints';
import { fromHex, toHex } from './hex';
import { JournalError } from './journal-error';
export type { InstanceHolder, InstanceLease } from './journal-store';
import type { ChildRunRow, InstanceHolder, InstanceLease, InstanceLeaseHooks, JournalHead, JournalStore, ObservedRunRow, OwnedRunRow, OwnedRunsQuery, PreparedDraft, RunSummaryRow, StoredRecord } from './journal-store';
import { leafHash, leafHashOfHex, MerkleAccumulator } from './merkle';
import { existsSync } from 'node:fs';
import { ensurePrivateDataDir } from '../base/data-dir-guard';
import { loadOrCreatePlaneKey, loadPlaneKey, type PlaneKey } from './plane-key';
import { JournalWorkers } from './journal-worker-pool';
import { journalPath, SqliteJournalStore } from './sqlite-store';
import { postgresLimitsFrom } from './postgres-url';
import { TeamJournal } from './team-journal';
import { PayloadSealer } from './payload-sealer';

export const DEFAULT_CHECKPOINT_EVERY = 1000;
export interface JournalOptions {
  dataDir: string;
  /** The plane's clock (ms since epoch); every record's time comes from it. */
  now?: () => number;
  /** Issue a signed checkpoint at least every this many records. */
  checkpointEvery?: number;
  store?: JournalStore;
  /**
   * A PostgreSQL URL (postgres-store.ts): the journal lives in that database and the data dir
   * keeps this instance's own files (its key, its checkpoint log). Absent: the data dir's SQLite file.
   */
  databaseUrl?: string;
  /** Where databaseUrl came from, for its errors (`--database`, AGENTPLANE_DATABASE_URL). */
  databaseUrlSource?: string;
  key?: PlaneKey;
  /**
   * For verification: sign nothing (no checkpoint at open or close) and create nothing (no
   * key, no database). A verifier must not change what it verifies.
   */
  readOnly?: boolean;
  /** Hears what a slow migration says before it runs (a first start after an upgrade), for the operator. */
  onMigrationNotice?: (message: string) => void;
  /** Seal new payloads (docs/ERASURE.md) or not, whatever the data dir's setting says; absent: the setting. */
  sealPayloads?: boolean;
}

export type AppendListener = (records: readonly JournalRecord[]) => void;

/** Set by Journal's static block: the one way to a Journal's store (journalStoreOf). */
let storeOfJournal: (journal: Journal) => JournalStore;

export class Journal {
  static {
    storeOfJournal = (journal) => journal.#store;
  }

  /**
   * The storage engine behind this journal. A true private field: no other layer can reach it,
   * not even through a cast or a computed name; they ask the Journal, whose reads below are the
   * seam a second backend plugs into (docs/ARCHITECTURE.md, "the journal's door"). The journal's
   * own files reach it through journalStoreOf.
   */
  readonly #store: JournalStore;
  /** Replaced once, at open, by the tree saved with the last checkpoint (restoreTree). */
  private accumulator = new MerkleAccumulator();
  private readonly listeners = new Set<AppendListener>();
  private lastCheckpointSize: number;
  /** Folding into the Merkle accumulator is serialised: concurrent appends on one Journal fold in seq order. */
  private folding: Promise<void> = Promise.resolve();
  /** How many fold() works are queued or running; 0 lets a commit fold its own records at once (see commit). */
  private foldsInFlight = 0;
  /** The last clock reading a record time was made from, and that time (see recordTime). */
  private lastTimeMs = Number.NaN;
  private lastTimeText = '';
  private readonly pending: Array<{ prepared: PreparedDraft[]; resolve: (records: JournalRecord[]) => void; reject: (error: unknown) => void }> = [];
  private flushScheduled = false;
  private closed = false;
  private pool: JournalWorkers | null = null;
  /** On a store other instances share: the keyring admission and checkpoint publishing (team-journal.ts). */
  private team: TeamJournal | null = null;
  /** Seals payloads as they are written and opens them as they are read (payload-sealer.ts); null on PostgreSQL. */
  private sealer: PayloadSealer | null = null;

  private constructor(
    readonly dataDir: string,
    store: JournalStore,
    readonly key: PlaneKey,
    readonly checkpoints: CheckpointLog,
    private readonly now: () => number,
    private readonly checkpointEvery: number,
    readonly readOnly: boolean,
  ) {
    this.#store = store;
    const latest = this.latestCheckpointSize();
    this.lastCheckpointSize = latest;
  }

  static async open(options: JournalOptions): Promise<Journal> {
    if (options.readOnly && !options.store && options.databaseUrl === undefined && !existsSync(journalPath(options.dataDir))) {
      throw new JournalError('NotAJournal', `${options.dataDir} holds no journal (no ${journalPath(options.dataDir)})`);
    }
    // Refused before anything in it is read or created: a data dir others can write is one
    // whose key, checkpoints and database they could have replaced (data-dir-guard.ts).
    ensurePrivateDataDir(options.dataDir, { create: !options.readOnly });
    const store = options.store ?? (await openStore(options));
    try {
      const key = options.key ?? (options.readOnly ? await loadPlaneKey(options.dataDir) : await loadOrCreatePlaneKey(options.dataDir));
      const journal = new Journal(
        options.dataDir,
        store,
        key,
        new CheckpointLog(options.dataDir),
        options.now ?? Date.now,
        options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY,
        options.readOnly ?? false,
      );
      if (options.databaseUrl !== undefined) journal.refuseAnotherJournalsDataDir();
      else {
        const lookups = { headSeq: async () => (await store.head()).seq, erasures: (head: number) => store.readKinds(1, head, ['SubjectErased'], Number.MAX_SAFE_INTEGER) };
        journal.sealer = PayloadSealer.forDataDir(options.dataDir, options, async (runId) => ownerOfAdmission((await store.readRun(runId, 1, 1))[0]), lookups);
      }
      const head = (await store.head()).seq;
      const restored = await journal.restoreTree(head);
      await journal.fold(() => journal.catchUp(head));
      // A shared store: the key joins the keyring, covered by the checkpoint below (team-journal.ts).
      journal.team = journal.readOnly ? null : TeamJournal.of(store, key);
      await journal.team?.start(journal);
      // Records a previous process committed after its last checkpoint (it crashed, or was
      // killed) are covered now, so nothing acknowledged stays unsigned for long.
      if (!journal.readOnly && journal.accumulator.size > journal.lastCheckpointSize) await journal.checkpoint();
      // A journal whose last checkpoint covers every record, folded in full (no state saved by
      // an older build): its tree is that checkpoint's, kept now for the next open.
      else if (!journal.readOnly && !restored && journal.accumulator.size === journal.lastCheckpointSize) journal.saveTree();
      return journal;
    } catch (error) {
      await store.close();
      throw error;
    }
  }

  get journalId(): string {
    return this.#store.journalId;
  }

  get size(): number {
    return this.accumulator.size;
  }

  /** Current Merkle root over seqs 1..size, hex. */
  rootHex(): string {
    return toHex(this.accumulator.root());
  }

  /**
   * The journal's worker pool (journal-worker-pool.ts): whole-journal verification, exports and the
   * runtime's start-up scan run there, off this thread. Created here but started by its first
   * job; closed with the journal.
   */
  get workers(): JournalWorkers {
    if (this.closed) throw new JournalError('Closed', 'the journal is closed');
    const databasePath = this.#store.workerDatabasePath;
    if (databasePath === undefined) throw new JournalError('Refused', `the journal at ${this.#store.location} has no worker pool: its work runs on this thread (hasWorkers)`);
    this.pool ??= new JournalWorkers({ databasePath });
    return this.pool;
  }

  /** Whether the journal's workers can read its store (a SQLite file); if not, their jobs run on this thread. */
  get hasWorkers(): boolean {
    return this.#store.workerDatabasePath !== undefined;
  }

  /** Where the journal is, as it may be shown: a file path, or a database URL with its password masked. */
  get location(): string {
    return this.#store.location;
  }

  onAppend(listener: AppendListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async append<K extends RecordKind>(draft: RecordDraft<K>): Promise<JournalRecord> {
    const [record] = await this.appendBatch([draft as unknown as AnyRecordDraft]);
    return record!;
  }

  /**
   * Group commit: all drafts in one transaction; all acknowledged after that one commit. A draft
   * may come already prepared (`prepare` below, by a caller that had to check it before it
   * could go on): it is written as it was prepared, not checked and canonicalised again.
   */
  async appendBatch(drafts: readonly (AnyRecordDraft | PreparedDraft)[]): Promise<JournalRecord[]> {
    if (this.closed) throw new JournalError('Closed', 'the journal is closed');
    if (this.readOnly) throw new JournalError('Refused', 'this journal was opened read-only');
    // Validated and canonicalised here, so a bad draft fails alone, before any group forms.
    const sealer = this.sealer?.sealing === true ? this.sealer : null;
    // A draft whose payload will be sealed is written as the sealer's text, not its own: its own is not made.
    let prepared = drafts.map((draft) => prepareOnce(draft, { textLater: sealer !== null && draft.runId !== null && Object.hasOwn(SEALED_VERSION, draft.kind) }));
    if (prepared.length === 0) return [];
    if (sealer !== null) {
      prepared = await sealer.sealAll(prepared, this.now());
      // Each text made now (a draft the sealer left clear), so a body without one is refused before any group forms.
      for (const draft of prepared) void draft.bodyText;
    }
    return new Promise<JournalRecord[]>((resolve, reject) => {
      this.pending.push({ prepared, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /**
   * Group commit: every batch asked for during one turn of the event loop is written in one
   * transaction (one fsync), and each caller's promise resolves only after that commit. Many
   * requests in flight at once (a peer under load) then share their durability cost instead of
   * each paying an fsync of its own. A failed commit rejects every batch in the group, and
   * none of them was written: the transaction is all or nothing.
   */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const group = this.pending.splice(0);
    if (group.length === 0) return;
    let records: JournalRecord[];
    try {
      records = await this.commit(group.flatMap((g) => g.prepared), group.length > 1);
    } catch (error) {
      for (const g of group) g.reject(error);
      return;
    }
    let offset = 0;
    for (const g of group) {
      g.resolve(records.slice(offset, offset + g.prepared.length));
      offset += g.prepared.length;
    }
  }

  private async commit(prepared: readonly PreparedDraft[], shared = false): Promise<JournalRecord[]> {
    const records = await this.#store.append(prepared, this.recordTime, { shared });
    const first = records[0];
    if (!first) return records;
    if (this.foldsInFlight === 0 && first.seq === this.accumulator.size + 1) {
      // Nothing else is folding and these follow the tree directly (no other writer's records
      // in between): exactly what the fold below would do, without its promise hops. This is
      // the common case, and a single-record append pays those hops on every call.
      this.foldOwn(records);
    } else {
      await this.fold(async () => {
        await this.catchUp(first.seq - 1);
        this.foldOwn(records);
      });
    }
    for (const listener of this.listeners) {
      try {
        listener(records);
      } catch {
        // A listener (a UI stream) failing must not un-acknowledge a committed record.
      }
    }
    if (this.accumulator.size - this.lastCheckpointSize >= this.checkpointEvery && (this.#store.signsPeriodicCheckpoints?.() ?? true)) {
      // A failed signature or log write must not fail an append whose records are already
      // durable; the next checkpoint (or the one at close) covers them.
      try {
        this.signHead();
      } catch {
        // see above
      }
    }
    return records;
  }

  /**
   * Signs the current tree head (after folding in other writers' records) and appends it to
   * the checkpoint log.
   */
  async checkpoint(): Promise<SignedCheckpoint> {
    if (this.readOnly) throw new JournalError('Refused', 'this journal was opened read-only');
    const head = (await this.#store.head()).seq;
    // Records can be committed and not yet synced (wal-sync.ts); a signed checkpoint over a
    // record a power loss then took would read as the journal cut short, so it waits for them.
    await this.#store.durable?.();
    await this.fold(() => this.catchUp(head));
    return this.signHead();
  }

  /** Signs (size, root, time) as they are now and appends the checkpoint to the log, synchronously. */
  private signHead(): SignedCheckpoint {
    const signed = signCheckpoint(this.key, {
      journalId: this.journalId,
      treeSize: this.accumulator.size,
      rootHash: this.rootHex(),
      time: new Date(this.now()).toISOString(),
    });
    this.checkpoints.append(signed);
    this.team?.publish(signed);
    this.lastCheckpointSize = Math.max(this.lastCheckpointSize, signed.checkpoint.treeSize);
    this.saveTree();
    return signed;
  }

  /** Keeps the tree's state for the next open (restoreTree); only ever at a signed checkpoint's size. */
  private saveTree(): void {
    try {
      this.#store.saveTreeState?.(this.accumulator.serialize());
    } catch {
      // A cache (see restoreTree): without it the next open folds every record, as it always did.
    }
  }

  /**
   * Starts the tree from the state saved with the last checkpoint, so opening folds only the
   * records after it: folding every record's hash took 2.5 s of a 2.8 s open on a 1M-record
   * journal. The state is taken only when its root is the root a checkpoint of this journal,
   * signed by this key and checked here, names at the same size: then it is that tree (SHA-256
   * does not let two trees share a root), and if the records under it were altered since, the
   * runtime's start-up verification says so as it would have. Anything else (no state, a
   * malformed one, one past the head, one no checkpoint vouches for) is ignored, and every
   * record is folded.
   */
  private async restoreTree(head: number): Promise<boolean> {
    const saved = this.#store.loadTreeState?.();
    if (saved === null || saved === undefined) return false;
    let tree: MerkleAccumulator;
    try {
      tree = MerkleAccumulator.deserialize(saved);
    } catch {
      return false;
    }
    if (tree.size === 0 || tree.size > head) return false;
    const root = toHex(tree.root());
    // Newest first: the state is the last checkpoint's, unless a later write of it failed.
    for (const jws of this.checkpoints.readAll().reverse()) {
      const claimed = peekCheckpoint(jws);
      if (!claimed || claimed.treeSize !== tree.size || claimed.rootHash !== root || claimed.journalId !== this.journalId || claimed.keyId !== this.key.keyId) continue;
      const check = await verifyCheckpoint(jws, this.key.publicKey);
      if (check.ok && check.checkpoint.treeSize === tree.size && check.checkpoint.rootHash === root) {
        this.accumulator = tree;
        return true;
      }
    }
    return false;
  }

  private fold(work: () => Promise<void>): Promise<void> {
    this.foldsInFlight += 1;
    const next = this.folding.then(work).finally(() => {
      this.foldsInFlight -= 1;
    });
    this.folding = next.catch(() => undefined);
    return next;
  }

  /** Appends committed records to the tree, in seq order. Runs inside fold(), or where no fold is in flight. */
  private foldOwn(records: readonly JournalRecord[]): void {
    for (const record of records) {
      // Another append's catch-up may already have folded these in (they were committed).
      if (record.seq !== this.accumulator.size + 1) continue;
      // The store's own SHA-256 output, decoded straight into the leaf's hashing input (no
      // intermediate bytes); fromHex's strictness is for hashes read back from files and exports.
      this.accumulator.append(leafHashOfHex(record.hash));
    }
  }

  /**
   * The time a record is stamped with: the plane's clock as an ISO 8601 string. Consecutive
   * records of a commit usually read the same millisecond, and the text is made once per
   * reading rather than once per record (an arrow, so the store can call it unbound).
   */
  private readonly recordTime = (): string => {
    const ms = this.now();
    if (ms !== this.lastTimeMs) {
      // A clock that reads NaN never equals the last reading, so toISOString refuses it here
      // every time, as it did before.
      this.lastTimeText = new Date(ms).toISOString();
      this.lastTimeMs = ms;
    }
    return this.lastTimeText;
  };

  head(): Promise<JournalHead> {
    return this.#store.head();
  }

  // Records read through the journal come with sealed payloads opened (or marked erased);
  // `bodyText` stays the stored text, so what is hashed and exported is what was written.
  readRange(fromSeq: number, toSeq: number | null, limit: number): Promise<StoredRecord[]> {
    return this.#store.readRange(fromSeq, toSeq, limit).then(this.opened);
  }

  readRun(runId: string, fromSeq: number, limit: number): Promise<StoredRecord[]> {
    return this.#store.readRun(runId, fromSeq, limit).then(this.opened);
  }

  readKinds(fromSeq: number, toSeq: number, kinds: readonly string[], limit: number): Promise<StoredRecord[]> {
    return this.#store.readKinds(fromSeq, toSeq, kinds, limit).then(this.opened);
  }

  private readonly opened = (records: StoredRecord[]): StoredRecord[] | Promise<StoredRecord[]> => (this.sealer ? this.sealer.openAll(records) : records);

  /** The payload sealer (docs/ERASURE.md), its key store opened or made now; refused on PostgreSQL, where the keys are not shared yet. */
  erasure(): PayloadSealer {
    if (this.sealer === null) throw new JournalError('Refused', `the journal at ${this.location} does not seal payloads: crypto-erasure needs a SQLite data dir (docs/ERASURE.md)`);
    return this.sealer.ensureKeys(this.readOnly);
  }

  runs(limit: number): Promise<RunSummaryRow[]> {
    return this.#store.runs(limit);
  }

  // ---- Reads for the layers above (the runtime, the plane, peers, protocols) ----
  // What they need of the store, asked of the Journal: nothing outside src-main/journal reaches
  // the store itself (eslint.config.js, "the journal's door"), so a second backend plugs in
  // beneath these methods alone. Each returns plain data, never a backend's own types.

  /** The seq of a run's latest record, or null when the journal holds no such run. */
  runLastSeq(runId: string): Promise<number | null> {
    return this.#store.runLastSeq(runId);
  }

  /** The seq of a run's record at `position` in it (0: its first), or null past its last. */
  async runSeqAt(runId: string, position: number): Promise<number | null> {
    if (!Number.isSafeInteger(position) || position < 0) throw new JournalError('Refused', `a position in a run is a whole number from 0, not ${position}`);
    return this.#store.runSeqAt(runId, position);
  }

  /** How many records a run holds (0: no such run). */
  async runRecordCount(runId: string): Promise<number> {
    return (await this.#store.runSeqs(runId)).length;
  }

  /** Observed ACP session runs (first record an acp Observation), the most recently appended first. */
  observedRuns(limit: number): Promise<ObservedRunRow[]> {
    return this.#store.observedRuns(limit);
  }

  /** One ACP session's observed runs, by its session id (one indexed read), oldest first; and CaseBound records of one case (or all: null), newest first. */
  sessionRuns(sessionId: string): Promise<ObservedRunRow[]> {
    return this.#store.sessionRuns(sessionId);
  }
  caseRecords(caseId: string | null, limit: number): Promise<StoredRecord[]> {
    return this.#store.caseRecords(caseId, limit);
  }

  /** Runs admitted with `parentRunId` = this run, in admission order, with what their admission stated. */
  childRuns(parentRunId: string, limit: number): Promise<ChildRunRow[]> {
    return this.#store.childRuns(parentRunId, limit);
  }

  /**
   * Succeeded runs of `agent` whose admitted input has `value` at `inputPath` (a JSON path under
   * the input), oldest first, with their sealed result (JournalStore.sealedRunResults).
   */
  sealedRunResults(agent: string, inputPath: string, value: string, limit: number, host?: string): Promise<Array<{ runId: string; input: unknown; result: unknown }>> {
    return this.#store.sealedRunResults(agent, inputPath, value, limit, host);
  }

  /** One owner's runs, newest admission first, at most `limit`, through the index of each owner's admissions. */
  ownedRuns(query: OwnedRunsQuery, limit: number): Promise<OwnedRunRow[]> {
    return this.#store.ownedRuns(query, limit);
  }

  /** How many runs `ownedRuns` would list given no limit. */
  countOwnedRuns(query: OwnedRunsQuery): Promise<number> {
    return this.#store.countOwnedRuns(query);
  }

  /** The first seq whose record time is at or after `time` (an ISO time), or head + 1 when none is. */
  firstSeqAtOrAfter(time: string): Promise<number> {
    return this.#store.firstSeqAtOrAfter(time);
  }

  // ---- end of the reads for the layers above ----

  /**
   * On a journal instances share (docs/TEAM-PLANE.md), this data dir's instance id, naming its hosts
   * `plane@<id>`, `peer:<peer>@<id>`: its key id's first 12 characters (stable, public); else null.
   */
  get instanceId(): string | null {
    return this.#store.holdInstanceLease !== undefined ? this.key.keyId.slice(0, 12) : null;
  }

  /** Takes this instance's lease on a shared journal (InstanceLease); null on SQLite, whose plane lock makes the plane one. */
  async holdInstanceLease(holder: InstanceHolder, hooks: InstanceLeaseHooks): Promise<InstanceLease | null> {
    return (await this.#store.holdInstanceLease?.(holder, hooks)) ?? null;
  }

  /** Closes the journal after a final checkpoint over everything written (the shutdown checkpoint). */
  async close(): Promise<void> {
    if (this.closed) return;
    // Work still in the worker pool fails (JournalError 'Closed') rather than holding the close.
    await this.pool?.close();
    // Appends already asked for are committed before the journal closes.
    while (this.pending.length > 0 || this.flushScheduled) await new Promise((r) => setImmediate(r));
    try {
      if (this.readOnly) return;
      await this.folding;
      if (this.accumulator.size > this.lastCheckpointSize || (await this.#store.head()).seq > this.lastCheckpointSize) {
        await this.checkpoint();
      }
      await this.team?.settled();
    } finally {
      this.closed = true;
      this.sealer?.close();
      await this.#store.close();
    }
  }

  /** Folds records up to `seq` that are committed but not yet in the tree (other writers). Runs inside fold(). */
  private async catchUp(seq: number): Promise<void> {
    const from = this.accumulator.size + 1;
    if (from > seq) return;
    const hashes = await this.#store.readHashes(from, seq);
    if (hashes.length !== seq - from + 1) {
      throw new JournalError('Io', `the journal has a gap below seq ${seq}: expected ${seq - from + 1} records, read ${hashes.length}`);
    }
    hashes.forEach((hash, i) => {
      if (from + i === this.accumulator.size + 1) this.accumulator.append(leafHash(fromHex(hash)));
    });
  }

  /**
   * A data dir whose key signed checkpoints of another journal, and none of this one, belongs to
   * that journal (its SQLite file, or another database): serving this one from it would hide
   * every run it holds. Refused, naming the way to move that journal here.
   */
  private refuseAnotherJournalsDataDir(): void {
    const signed = this.checkpoints
      .readAll()
      .map((jws) => peekCheckpoint(jws))
      .filter((checkpoint) => checkpoint !== null && checkpoint.keyId === this.key.keyId);
    if (signed.length === 0 || signed.some((checkpoint) => checkpoint!.journalId === this.journalId)) return;
    throw new JournalError(
      'NotAJournal',
      `${this.dataDir} keeps the checkpoints of another journal (${signed[signed.length - 1]!.journalId}), not of the one at ${this.#store.location} (${this.journalId}): ` +
        `move its journal there first (agentplane journal copy --to <url> --data-dir ${this.dataDir}), or give this instance a data dir of its own`,
    );
  }

  private latestCheckpointSize(): number {
    let size = 0;
    for (const jws of this.checkpoints.readAll()) {
      const checkpoint = peekCheckpoint(jws);
      if (checkpoint && checkpoint.journalId === this.journalId && checkpoint.keyId === this.key.keyId) size = Math.max(size, checkpoint.treeSize);
    }
    return size;
  }
}

/** The owner a run's first record names, when it is its admission. */
function ownerOfAdmission(first: JournalRecord | undefined): string | null {
  return first?.kind === 'RunAdmitted' && typeof first.body.owner === 'string' ? first.body.owner : null;
}

/** The store `options` name: PostgreSQL at databaseUrl, or the data dir's SQLite file. */
async function openStore(options: JournalOptions): Promise<JournalStore> {
  if (options.databaseUrl !== undefined) {
    // Loaded only for a PostgreSQL journal: the driver is about 15 MB of every process's memory
    // and 23 ms of its start, and a plane or a peer on the embedded journal (most of them) never uses it.
    const { PostgresJournalStore } = await import('./postgres-store');
    return PostgresJournalStore.open(options.databaseUrl, { limits: postgresLimitsFrom(process.env), ...(options.databaseUrlSource ? { source: options.databaseUrlSource } : {}) });
  }
  return SqliteJournalStore.open(journalPath(options.dataDir), options.onMigrationNotice ? { onMigrationNotice: options.onMigrationNotice } : {});
}

/**
 * The store behind a journal, for src-main/journal's own files (export, store verification, the
 * workers' scans) and their tests. Lint refuses this import anywhere else (eslint.config.js).
 */
export function journalStoreOf(journal: Journal): JournalStore {
  return storeOfJournal(journal);
}
