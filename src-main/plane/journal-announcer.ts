/**
 * `journal.appended`, one per commit: the journal's own seqs, never a count of our own. Each
 * notification names the first seq it covers (`fromSeq`, the previous one's `seq` + 1) and the
 * head after it, so together they cover every seq exactly once and a client can tell a gap
 * from a duplicate.
 *
 * This process's commits announce themselves as they land (a group commit is one notification).
 * Records other processes sharing the data dir commit (a peer hosting a skill run) are found by
 * a cheap poll of the head and read back in pages, in order, before any later commit of ours
 * is announced, so the chain never skips them.
 */
import type { EventPayload } from '../../src-shared/ipc/contract';
import type { JournalRecord } from '../../src-shared/journal/records';
import type { Journal } from '../journal/journal';
import { runChangesOf } from './journal-changes';

/** Records read per page when announcing other processes' appends (one notification a page). */
const CATCH_UP_PAGE = 1000;

export interface JournalAnnouncer {
  stop(): void;
}

export async function startJournalAnnouncer(
  journal: Journal,
  publish: (payload: EventPayload<'journal.appended'>) => void,
  pollMs: number,
): Promise<JournalAnnouncer> {
  let announced = (await journal.head()).seq;
  /** The head we know of: announced once every record up to it is. */
  let target = announced;
  let catchingUp: Promise<void> | null = null;
  let stopped = false;

  const announce = (records: readonly JournalRecord[]) => {
    const seq = records[records.length - 1]!.seq;
    publish({ fromSeq: announced + 1, seq, runs: runChangesOf(records) });
    announced = seq;
  };

  const catchUp = () => {
    catchingUp ??= (async () => {
      try {
        while (!stopped && announced < target) {
          const records = await journal.readRange(announced + 1, target, CATCH_UP_PAGE);
          const fresh = records.filter((r) => r.seq > announced);
          if (stopped || fresh.length === 0) return;
          announce(fresh);
        }
      } catch {
        // A read failed (the journal is closing): the next poll or commit tries again.
      } finally {
        catchingUp = null;
      }
    })();
  };

  const unsubscribe = journal.onAppend((records) => {
    const fresh = records.filter((r) => r.seq > announced);
    if (fresh.length === 0) return;
    target = Math.max(target, fresh[fresh.length - 1]!.seq);
    if (catchingUp === null && fresh[0]!.seq === announced + 1) announce(fresh);
    else catchUp(); // someone else's records came first, or are being read: keep the order
  });

  const poll = setInterval(() => {
    journal
      .head()
      .then((head) => {
        if (stopped || head.seq <= target) return;
        target = head.seq;
        catchUp();
      })
      .catch(() => undefined);
  }, pollMs);
  poll.unref();

  return {
    stop() {
      stopped = true;
      clearInterval(poll);
      unsubscribe();
    },
  };
}
