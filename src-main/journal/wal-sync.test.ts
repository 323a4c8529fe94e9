import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { journalStoreOf, Journal } from './journal';
import { JournalError } from './journal-error';
import { journalPath, SqliteJournalStore } from './sqlite-store';
import { fdatasyncOnPool, type SyncFile } from './wal-sync';
import { verifyJournalStore } from './journal-workers';

/** A WAL sync that a test holds open and releases, counting the syncs it was asked for. */
function heldSync(): { sync: SyncFile; hold(): void; release(): void; calls: () => number; failNext(code: string): void } {
  let gate: Promise<void> | null = null;
  let open: (() => void) | null = null;
  let calls = 0;
  let failure: string | null = null;
  return {
    sync: async (fd) => {
      calls += 1;
      if (gate) await gate;
      if (failure) {
        const code = failure;
        failure = null;
        throw Object.assign(new Error(`${code}: i/o error, fdatasync`), { code });
      }
      await fdatasyncOnPool(fd);
    },
    hold() {
      gate = new Promise((resolve) => (open = resolve));
    },
    release() {
      gate = null;
      open?.();
    },
    calls: () => calls,
    failNext(code) {
      failure = code;
    },
  };
}

const journals: Journal[] = [];
const releases: Array<() => void> = [];
afterEach(async () => {
  for (const release of releases.splice(0)) release();
  for (const j of journals.splice(0)) await j.close().catch(() => undefined);
});

async function openHeld(dataDir = tempDataDir('ap-walsync-')) {
  const held = heldSync();
  releases.push(held.release);
  const store = SqliteJournalStore.open(journalPath(dataDir), { walSync: { syncFile: held.sync, slowMs: 0 } });
  let t = Date.parse('2026-01-01T00:00:00Z');
  const journal = await Journal.open({ dataDir, store, now: () => (t += 1) });
  journals.push(journal);
  return { journal, store, held, dataDir };
}

/** Lets the event loop turn a few times (timers and I/O included), so a pending promise could settle. */
async function turns(n = 5): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setTimeout(resolve, 2));
}

function settledFlag(promise: Promise<unknown>): { settled: () => boolean } {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  return { settled: () => settled };
}

describe('the WAL is synced before an append is acknowledged', () => {
  it('acknowledges and streams an append only after its WAL sync ends, though it is committed before', async () => {
    const { journal, store, held } = await openHeld();
    const streamed: number[] = [];
    journal.onAppend((records) => streamed.push(...records.map((r) => r.seq)));
    held.hold();
    const append = journal.appendBatch(runDrafts('run-held', 1));
    const ack = settledFlag(append);
    await turns();
    // Committed (another connection can read it) but neither acknowledged nor streamed.
    expect((await store.head()).seq).toBe(4);
    expect(ack.settled()).toBe(false);
    expect(streamed).toEqual([]);
    held.release();
    const records = await append;
    expect(records.map((r) => r.seq)).toEqual([1, 2, 3, 4]);
    expect(streamed).toEqual([1, 2, 3, 4]);
  });

  it('keeps the event loop free while a sync is in flight, and commits made meanwhile share the next sync', async () => {
    const { journal, held } = await openHeld();
    held.hold();
    const before = held.calls();
    const first = journal.append(runDrafts('run-first', 0)[0]!);
    await turns(1);
    // Twenty appends on twenty later turns: each commits while the first sync is held.
    const later: Array<Promise<unknown>> = [];
    for (let i = 0; i < 20; i++) {
      later.push(journal.append(runDrafts(`run-later-${i}`, 0)[0]!));
      await turns(1);
    }
    expect(held.calls() - before).toBe(1);
    held.release();
    await first;
    const acknowledged = await Promise.all(later);
    expect(acknowledged).toHaveLength(20);
    // The held sync, and one more for all twenty.
    expect(held.calls() - before).toBe(2);
  });

  it('a checkpoint waits for the records it covers to be synced', async () => {
    const { journal, held } = await openHeld();
    held.hold();
    const append = journal.appendBatch(runDrafts('run-cp', 2));
    await turns(1);
    const checkpoint = journal.checkpoint();
    const signed = settledFlag(checkpoint);
    await turns();
    expect(signed.settled()).toBe(false);
    held.release();
    await append;
    expect((await checkpoint).checkpoint.treeSize).toBe(6);
  });

  it('a failed sync refuses that append and every later one, and a reopened journal holds what was committed', async () => {
    const { journal, store, held, dataDir } = await openHeld();
    await journal.appendBatch(runDrafts('run-ok', 1));
    held.failNext('EIO');
    const failed = journal.appendBatch(runDrafts('run-in-doubt', 1));
    await expect(failed).rejects.toThrow(JournalError);
    await expect(failed).rejects.toThrow(/could not be synced to disk \(EIO/);
    const headAfterFailure = (await store.head()).seq;
    expect(headAfterFailure).toBe(8);
    // Nothing more is written, let alone acknowledged: a later sync could succeed without the
    // pages the failed one lost.
    await expect(journal.append(runDrafts('run-after', 0)[0]!)).rejects.toThrow(/could not be synced/);
    expect((await store.head()).seq).toBe(headAfterFailure);
    await journal.close().catch(() => undefined);
    journals.splice(journals.indexOf(journal), 1);

    // Reopened: the records committed before the failure are there and the chain verifies.
    const reopened = await Journal.open({ dataDir });
    journals.push(reopened);
    const report = await verifyJournalStore(reopened);
    expect(report.ok).toBe(true);
    expect((await reopened.head()).seq).toBe(8);
    await reopened.append(runDrafts('run-again', 0)[0]!);
  });

  it('syncs inline while syncs are fast, on the thread pool once they are slow, and back', async () => {
    const dataDir = tempDataDir('ap-walsync-');
    const pause = new Int32Array(new SharedArrayBuffer(4));
    let inlineMs = 0;
    let offThread = 0;
    const store = SqliteJournalStore.open(journalPath(dataDir), {
      walSync: {
        // A disk whose fdatasync takes inlineMs (the thread really is blocked that long).
        syncFileInline: () => void Atomics.wait(pause, 0, 0, inlineMs),
        syncFile: async () => void (offThread += 1),
      },
    });
    const journal = await Journal.open({ dataDir, store });
    journals.push(journal);
    await journal.append(runDrafts('run-fast', 0)[0]!);
    expect(store.settings().walSyncMode).toBe('inline');
    expect(offThread).toBe(0);
    inlineMs = 6;
    for (let i = 0; i < 4; i++) await journal.append(runDrafts(`run-slow-${i}`, 0)[0]!);
    expect(store.settings().walSyncMode).toBe('thread-pool');
    const before = offThread;
    inlineMs = 0;
    for (let i = 0; i < 10; i++) await journal.append(runDrafts(`run-pool-${i}`, 0)[0]!);
    expect(offThread).toBeGreaterThan(before);
    // The pool's syncs answered at once: the average fell, and syncs came back inline.
    expect(store.settings().walSyncMode).toBe('inline');
  });

  it('syncs a commit that answers several callers on the thread pool, and a lone caller inline, whatever the disk', async () => {
    const dataDir = tempDataDir('ap-walsync-');
    let inline = 0;
    let offThread = 0;
    const store = SqliteJournalStore.open(journalPath(dataDir), {
      walSync: { syncFileInline: () => void (inline += 1), syncFile: async () => void (offThread += 1) },
    });
    const journal = await Journal.open({ dataDir, store });
    journals.push(journal);
    const before = { inline, offThread };
    // One caller: synced on the calling thread, as long as syncs are fast (they are here).
    await journal.append(runDrafts('run-lone', 0)[0]!);
    expect({ inline: inline - before.inline, offThread: offThread - before.offThread }).toEqual({ inline: 1, offThread: 0 });
    // Three callers in one turn: one commit, one sync, on the pool.
    const commits = store.writeStats().commits;
    await Promise.all(['a', 'b', 'c'].map((name) => journal.append(runDrafts(`run-${name}`, 0)[0]!)));
    expect(store.writeStats().commits - commits).toBe(1);
    expect({ inline: inline - before.inline, offThread: offThread - before.offThread }).toEqual({ inline: 1, offThread: 1 });
    expect(store.settings().walSyncMode).toBe('inline');
    // One caller's batch of many records is still one caller.
    await journal.appendBatch(runDrafts('run-batch', 3));
    expect({ inline: inline - before.inline, offThread: offThread - before.offThread }).toEqual({ inline: 2, offThread: 1 });
  });

  it('syncs the -wal file itself, under synchronous=NORMAL', async () => {
    const dataDir = tempDataDir('ap-walsync-');
    const journal = await Journal.open({ dataDir });
    journals.push(journal);
    const store = journalStoreOf(journal) as SqliteJournalStore;
    const before = store.settings().walSyncs;
    await journal.appendBatch(runDrafts('run-real', 1));
    expect(store.settings()).toMatchObject({ journalMode: 'wal', synchronous: 1, walSyncedBeforeAck: true });
    expect(store.settings().walSyncs).toBeGreaterThan(before);
    if (process.platform === 'linux') {
      const targets = readdirSync('/proc/self/fd').map((fd) => {
        try {
          return readlinkSync(join('/proc/self/fd', fd));
        } catch {
          return '';
        }
      });
      expect(targets).toContain(`${journalPath(dataDir)}-wal`);
    }
  });
});
