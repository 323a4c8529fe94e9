/**
 * What a Journal does besides on a store several plane instances share (a team plane's
 * PostgreSQL journal; docs/SECURITY.md, "The keyring of a team plane"): it admits its own key
 * to the journal's keyring when it first serves the journal, and publishes every checkpoint it
 * signs to the store's shared table, so an export from any instance carries them all. The
 * checkpoint log in the data dir stays what it was, written synchronously first (checkpoints.ts):
 * publishing follows in the background, and what failed is tried again with the next checkpoint.
 *
 * A SQLite journal has none of this: its single key is its keyring, and no record is written
 * for it (journal.ts opens a TeamJournal only on a store that publishes checkpoints).
 */
import { hostname } from 'node:os';
import type { RecordBody } from '../../src-shared/journal/records';
import { peekCheckpoint, type SignedCheckpoint } from './checkpoints';
import type { JournalStore, PublishedCheckpoint, StoredRecord } from './journal-store';
import { KEY_ADMITTED } from './keyring';
import type { PlaneKey } from './plane-key';

/** What admitting a key needs of its Journal. */
export interface AdmittingJournal {
  readonly dataDir: string;
  readonly journalId: string;
  readonly checkpoints: { readAll(): string[] };
  head(): Promise<{ seq: number }>;
  readKinds(fromSeq: number, toSeq: number, kinds: readonly string[], limit: number): Promise<StoredRecord[]>;
  append(draft: { runId: null; kind: typeof KEY_ADMITTED; body: RecordBody<'KeyAdmitted'> }): Promise<unknown>;
}

type SharedStore = JournalStore & Required<Pick<JournalStore, 'publishCheckpoint' | 'readCheckpoints'>>;

const ADMISSIONS_PAGE = 1000;

export class TeamJournal {
  /** Publishing is serialised: one chain of work, which close() awaits. */
  private publishing: Promise<void> = Promise.resolve();
  /** Signed here, not yet in the shared table (the last attempt failed, or it has not run yet). */
  private readonly unpublished: PublishedCheckpoint[] = [];

  private constructor(
    private readonly store: SharedStore,
    private readonly key: PlaneKey,
  ) {}

  /** The team side of a journal on `store`, or null for a store no other instance shares (SQLite). */
  static of(store: JournalStore, key: PlaneKey): TeamJournal | null {
    return store.publishCheckpoint && store.readCheckpoints ? new TeamJournal(store as SharedStore, key) : null;
  }

  /** At open: admits the key (admitKey) and publishes what the data dir's log holds and the table does not (publishMissing). */
  async start(journal: AdmittingJournal): Promise<void> {
    await this.admitKey(journal);
    this.publishMissing(journal.checkpoints.readAll(), journal.journalId);
  }

  /**
   * Appends KeyAdmitted for this instance's key unless the journal holds one for it already.
   * Two instances opening at once may each append theirs; the same key admitted twice is one
   * key to every reader (keyring.ts). The instance is named by host and data dir only: nothing
   * secret, never the database's URL.
   */
  async admitKey(journal: AdmittingJournal): Promise<void> {
    const head = (await journal.head()).seq;
    for (let from = 1; from <= head; ) {
      const page = await journal.readKinds(from, head, [KEY_ADMITTED], ADMISSIONS_PAGE);
      if (page.some((r) => r.body.keyId === this.key.keyId)) return;
      if (page.length < ADMISSIONS_PAGE) break;
      from = page[page.length - 1]!.seq + 1;
    }
    await journal.append({
      runId: null,
      kind: KEY_ADMITTED,
      body: { keyId: this.key.keyId, publicJwk: this.key.publicJwk as Record<string, unknown>, instance: `${hostname()}:${journal.dataDir}` },
    });
  }

  /**
   * Publishes, in the background, the checkpoints of this journal and key in the data dir's log
   * that the shared table does not hold yet (signed before this instance served the journal, or
   * by a process that stopped before it published them).
   */
  publishMissing(local: readonly string[], journalId: string): void {
    this.publishing = this.publishing
      .then(async () => {
        const there = new Set(await this.store.readCheckpoints());
        for (const jws of local) {
          const checkpoint = peekCheckpoint(jws);
          if (!there.has(jws) && checkpoint && checkpoint.journalId === journalId && checkpoint.keyId === this.key.keyId) {
            this.unpublished.push({ keyId: checkpoint.keyId, treeSize: checkpoint.treeSize, jws });
          }
        }
      })
      .catch(() => undefined)
      .then(() => this.flush());
  }

  /** Publishes a checkpoint just signed (and any earlier one whose publishing failed), in the background. */
  publish(signed: SignedCheckpoint): void {
    this.unpublished.push({ keyId: signed.checkpoint.keyId, treeSize: signed.checkpoint.treeSize, jws: signed.jws });
    this.publishing = this.publishing.then(() => this.flush());
  }

  /** Resolves once every publish asked for so far has been tried (close awaits it before the store closes). */
  settled(): Promise<void> {
    return this.publishing;
  }

  private async flush(): Promise<void> {
    while (this.unpublished.length > 0) {
      try {
        await this.store.publishCheckpoint(this.unpublished[0]!);
      } catch {
        // Kept for the next checkpoint's publish: the data dir's log has it meanwhile, and what
        // the database said (which may name it) is not repeated anywhere.
        return;
      }
      this.unpublished.shift();
    }
  }
}
