/**
 * The storage seam of the journal. SQLite (better-sqlite3, sqlite-store.ts) is the embedded
 * default; PostgreSQL (postgres-store.ts) is the store several plane instances share. That is
 * why every method is async even though SQLite answers synchronously. Callers (the Journal,
 * verify, export) never touch SQL.
 *
 * Contract every backend keeps:
 * - `append` assigns gapless seqs after the current head and links prevHash inside the
 *   database's own serialisation (a write lock or a unique constraint), so concurrent writers
 *   from any number of processes never fork the chain; it resolves only after the commit is
 *   durable, and a failure leaves nothing written;
 * - reads see only committed records and never block the writer.
 */
import type { JournalRecord, RecordKind } from '../../src-shared/journal/records';
import type { MerkleAccumulatorState } from './merkle';

/** A draft ready to be chained: the body already in canonical text. */
export interface PreparedDraft {
  runId: string | null;
  kind: RecordKind;
  v: number;
  bodyText: string;
  body: Record<string, unknown>;
}

/** A stored record with its body as canonical text, for verification and export without re-canonicalising. */
export interface StoredRecord extends JournalRecord {
  bodyText: string;
}

export interface RunSummaryRow {
  runId: string;
  firstSeq: number;
  lastSeq: number;
  records: number;
  firstTime: string;
  lastTime: string;
  lastKind: string;
  agent: string | null;
  /** The kind of the run's first record: RunAdmitted for a run the plane admitted, Observation for an observed ACP session. */
  firstKind: string;
}

/** A run whose first record is an ACP Observation (a session `acp tap` observed). */
export interface ObservedRunRow {
  runId: string;
  sessionId: string;
  firstSeq: number;
  lastSeq: number;
  records: number;
  lastKind: string;
}

export interface JournalHead {
  seq: number;
  hash: string;
}

export interface JournalStore {
  readonly journalId: string;
  /** Where the journal is, as it may be shown: a file path, or a database URL with its password masked. */
  readonly location: string;
  /**
   * A database file the journal's workers (journal-worker-pool.ts) can open read-only for
   * themselves; absent for a server database, whose verification, exports and start-up scan
   * then run on the calling thread (each a page at a time, so the loop still turns between).
   */
  readonly workerDatabasePath?: string;
  /**
   * Commits the drafts chained onto the head; resolves only once they are on disk. `shared`: the
   * commit answers more than one caller (a group commit, Journal.flush), so more work is likely
   * on its way, and a store that could make it durable on the calling thread does it off it.
   */
  append(drafts: readonly PreparedDraft[], time: () => string, options?: { shared?: boolean }): Promise<JournalRecord[]>;
  /**
   * Resolves once every record committed so far is on disk (a checkpoint must vouch for
   * nothing less). Absent where commits are durable when they return.
   */
  durable?(): Promise<void>;
  /**
   * Keeps the Merkle tree's state (its size and frontier) as of the checkpoint just signed, so
   * the next open folds only the records after it instead of every record (Journal.open). A
   * cache: losing it costs one full catch-up, never a wrong tree, since it is used only when
   * its root is the one a checkpoint signed at its size.
   */
  saveTreeState?(state: MerkleAccumulatorState): void;
  /** The tree state saveTreeState kept, unchecked (null: none). */
  loadTreeState?(): unknown;
  /**
   * Shares a checkpoint this instance signed with every instance of the journal (a team plane's
   * PostgreSQL table; docs/SECURITY.md, "The keyring of a team plane"). Present only on a store
   * several instances, each with its own key, share: its presence is what makes a Journal admit
   * its key to the keyring at open (journal.ts). Idempotent.
   */
  publishCheckpoint?(signed: PublishedCheckpoint): Promise<void>;
  /** Every published checkpoint (compact JWS), ordered by tree size, then key id. */
  readCheckpoints?(): Promise<string[]>;
  head(): Promise<JournalHead>;
  /** Records with from <= seq <= to (to null: the head), at most `limit`. */
  readRange(fromSeq: number, toSeq: number | null, limit: number): Promise<StoredRecord[]>;
  readRun(runId: string, fromSeq: number, limit: number): Promise<StoredRecord[]>;
  /**
   * Records of the given kinds with from <= seq <= to, at most `limit`: a reader that acts on a
   * few kinds (the runtime's follower) reads and parses those alone, not every record between.
   */
  readKinds(fromSeq: number, toSeq: number, kinds: readonly string[], limit: number): Promise<StoredRecord[]>;
  /** Record hashes for from <= seq <= to, in seq order (for the Merkle log). */
  readHashes(fromSeq: number, toSeq: number): Promise<string[]>;
  /** Streams records in seq order without holding the writer. */
  iterate(fromSeq: number, toSeq: number | null): AsyncIterable<StoredRecord>;
  runs(limit: number): Promise<RunSummaryRow[]>;
  /** Observed ACP session runs (first record an acp Observation), the most recently appended first. */
  observedRuns(limit: number): Promise<ObservedRunRow[]>;
  /**
   * The observed runs of one ACP session, by its session id, oldest first: one read of the index
   * of tap/started by session id (migration 006; PostgreSQL 003), never a scan.
   */
  sessionRuns(sessionId: string): Promise<ObservedRunRow[]>;
  /** CaseBound records, of one case (through the index by case id) or of all (null), newest first, at most `limit`. */
  caseRecords(caseId: string | null, limit: number): Promise<StoredRecord[]>;
  /** The seq of a run's latest record, or null when the journal holds no such run. */
  runLastSeq(runId: string): Promise<number | null>;
  /** Seqs of a run's records (for exporting a run with proofs). */
  runSeqs(runId: string): Promise<number[]>;
  /**
   * The seq of a run's record at `position` in it (0: its first), or null past its last: one
   * read of the run's index, so a timeline reaches any place in a run whose records are
   * interleaved with others' without reading the ones before it.
   */
  runSeqAt(runId: string, position: number): Promise<number | null>;
  /**
   * Succeeded runs of `agent` whose admitted input has `value` at `inputPath` (a JSON path
   * under the input, e.g. `$.context.conversation`), oldest first, with their sealed result.
   * What LLM-mode `ask` reads to carry a conversation across turns and restarts.
   */
  sealedRunResults(agent: string, inputPath: string, value: string, limit: number, host?: string): Promise<Array<{ runId: string; input: unknown; result: unknown }>>;
  /** Runs admitted with `parentRunId` = this run, in admission order, with what their admission stated. */
  childRuns(parentRunId: string, limit: number): Promise<ChildRunRow[]>;
  /**
   * The runs `query.owner` admitted, newest admission first, at most `limit`, read through the
   * index of each owner's admissions (migration 004): another owner's runs are never read.
   */
  ownedRuns(query: OwnedRunsQuery, limit: number): Promise<OwnedRunRow[]>;
  /** How many runs `ownedRuns` would list given no limit: the exact count, from the same index, nothing folded. */
  countOwnedRuns(query: OwnedRunsQuery): Promise<number>;
  /**
   * The first seq whose record time is at or after `time` (an ISO time as the journal writes
   * it), or head + 1 when none is: records are appended in time order, so this is a binary
   * search over seq, never a scan.
   */
  firstSeqAtOrAfter(time: string): Promise<number>;
  integrityCheck(): Promise<string>;
  /**
   * Takes this instance's lease on a shared journal (InstanceLease), waiting while its own
   * lease is still held (an instance that took over a dead one's runs finishing that). Absent
   * where the data dir's plane lock already makes a plane the only writer of its runs (SQLite).
   */
  holdInstanceLease?(holder: InstanceHolder, hooks: InstanceLeaseHooks): Promise<InstanceLease>;
  /**
   * Whether this process signs the periodic checkpoints (every `checkpointEvery` records). On a
   * team plane the instance holding the checkpoint signer's role does (InstanceLease.signer): one
   * signature per interval however many instances serve, not one each. Every instance still
   * signs at open, close and export, over what it verified. Absent: always.
   */
  signsPeriodicCheckpoints?(): boolean;
  close(): Promise<void>;
}

/** A signed checkpoint as the shared table keeps it: its signer, its tree size and the JWS itself. */
export interface PublishedCheckpoint {
  keyId: string;
  treeSize: number;
  jws: string;
}

/**
 * One instance of a team plane (several plane processes on one shared journal,
 * docs/TEAM-PLANE.md): the runtime host its runs are admitted under, and who it is, for the
 * people and for the instance that takes its runs over if it dies.
 */
export interface InstanceHolder {
  /** The runtime host of its runs: `plane@<instance id>`. */
  host: string;
  pid: number;
  hostname: string;
  dataDir: string;
  since: string;
}

export interface InstanceLeaseHooks {
  /** This instance's own lease is held (another instance is taking its runs over): it waits. */
  onWaiting(current: InstanceHolder | null): void;
  /** The lease was lost while held (the database dropped its session): stop performing effects now. */
  onLost(reason: string): void;
  /** Aborts the wait (the person stopped this instance while it waited). */
  signal?: AbortSignal;
}

/**
 * An instance's lease on a shared journal. Held as long as its database session lives: a
 * process killed outright closes its socket and loses it at once, one gone silent loses it
 * when the session's keepalives give up. While held, this instance's appends are fenced by it:
 * once lost, every append is refused, so nothing it does after another instance may have
 * taken its runs over reaches the journal.
 */
export interface InstanceLease {
  readonly host: string;
  /** Every instance that said it serves the journal (this one too), and whether its lease is alive. */
  instances(): Promise<Array<InstanceHolder & { alive: boolean }>>;
  /**
   * Takes the lease of instance `host` if it is no longer held (the instance died), and returns
   * once every append that instance began under its lease has ended: what it left is then all
   * in the journal, and nothing more of it can arrive. False while `host` is alive, or another
   * instance claimed it first.
   */
  tryClaim(host: string): Promise<boolean>;
  /**
   * Lets a claimed lease go, and with `forget` marks the instance released (nothing of it is
   * left open, so nobody looks at it again until its own process returns and writes itself in).
   */
  release(host: string, forget: boolean): Promise<void>;
  /**
   * Whether this instance holds the checkpoint signer's role (a lease of its own: one instance
   * at a time, taken over by another within a look when its holder dies). Tried at every look
   * (instances()).
   */
  readonly signer: boolean;
}

export interface ChildRunRow {
  runId: string;
  /** The RunAdmitted's seq. */
  seq: number;
  agent: string;
  host: string;
  /** The parent's step the admission names (null: it named none). */
  parentStep: number | null;
}

/** Which of one owner's runs to read; every field given narrows (ownedRuns, countOwnedRuns). */
export interface OwnedRunsQuery {
  /** RunAdmitted's owner: the principal at the root of the chain. */
  owner: string;
  agent?: string;
  /** `plane` (a RunAdmitted naming no host too) or `peer:<id>`. */
  host?: string;
  /** The runs of one context: the run that opened it (its id is the context's) and the runs admitted into it. */
  context?: string;
  /** Only runs with a record at seq >= this, whenever they were admitted (see firstSeqAtOrAfter). */
  activeFromSeq?: number;
  /** Only runs admitted before this seq: the cursor of the next page. */
  beforeSeq?: number;
}

export interface OwnedRunRow {
  runId: string;
  /** The RunAdmitted's seq (the listing's order and its cursor). */
  seq: number;
  /** The run's latest record. */
  lastSeq: number;
}

/** A row of the records table as either store's database returns it (both have the same columns). */
export interface RecordRow {
  seq: number;
  run_id: string | null;
  kind: string;
  v: number;
  time: string;
  body: string;
  prev_hash: string;
  hash: string;
}

/** A records-table row as a stored record: the body parsed, and kept as the canonical text that was hashed. */
export function storedFromRow(row: RecordRow): StoredRecord {
  return {
    seq: row.seq,
    runId: row.run_id,
    kind: row.kind,
    v: row.v,
    time: row.time,
    body: JSON.parse(row.body) as Record<string, unknown>,
    bodyText: row.body,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/** How many records one page of `pagedRecords` reads. */
const ITERATE_PAGE = 2000;

/**
 * Records from `fromSeq` to `toSeq` (null: the head) in seq order, read through `readRange` a
 * page at a time: each page is its own statement, so no read transaction or cursor is held open
 * across the caller's awaits. Every store's `iterate` is this over its own readRange.
 */
export async function* pagedRecords(readRange: JournalStore['readRange'], fromSeq: number, toSeq: number | null): AsyncIterable<StoredRecord> {
  let next = fromSeq;
  for (;;) {
    const rows = await readRange(next, toSeq, ITERATE_PAGE);
    for (const row of rows) yield row;
    if (rows.length < ITERATE_PAGE) return;
    next = rows[rows.length - 1]!.seq + 1;
  }
}

/**
 * The reading half of a store: what export and verification read through, whether from the
 * journal's own store or from a journal worker's read-only connection (journal-workers.ts).
 */
export type JournalReads = Pick<JournalStore, 'head' | 'readRange' | 'readRun' | 'readHashes' | 'iterate' | 'runs' | 'runLastSeq' | 'runSeqs'>;

/**
 * A journal_meta value read back as JSON, or null when there is none or it does not parse: the
 * values kept there (the saved tree, who an instance is) are caches and labels, never records,
 * so a damaged one is read as absent rather than failing the read.
 */
export function metaValueOf(text: string | undefined): unknown {
  if (text === undefined) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
