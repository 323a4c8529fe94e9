/**
 * Several processes on one data dir, as when a peer started from the CLI writes beside the
 * desktop app: writers serialise on SQLite's write lock and never fork or gap the chain;
 * readers see whole transactions only, and are never held up by a writer.
 *
 * Writers are real child processes (tests/helpers/journal-append-child.ts), so the locks are
 * SQLite's file locks between processes, not anything inside one Node process.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { GENESIS_PREV_HASH } from '../../src-shared/journal/records';
import { storeVerifyPlan } from './store-verify';
import { Journal } from './journal';
import { JournalWorkers } from './journal-worker-pool';
import { journalPath } from './sqlite-store';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { verifyJournalStore } from './journal-workers';

const CHILD = join(import.meta.dirname, '..', '..', 'tests', 'helpers', 'journal-append-child.ts');

/** A child process followed line by line: `next(word)` resolves with the next line starting with that word. */
interface Child {
  process: ChildProcessWithoutNullStreams;
  lines: string[];
  stderr: () => string;
  /** Resolves with the first line (seen so far or later) starting with `word`. */
  waitFor(word: string): Promise<string>;
  /** Whether a line starting with `word` has arrived. */
  seen(word: string): boolean;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: Child[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
});

function startChild(args: string[]): Child {
  const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (chunk: string) => (stderr += chunk));
  const lines: string[] = [];
  const waiters: Array<{ word: string; resolve: (line: string) => void; reject: (error: Error) => void }> = [];
  const rl = createInterface({ input: proc.stdout, crlfDelay: Infinity });
  rl.on('line', (line) => {
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (line.split(' ')[0] === waiter.word) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(line);
      }
    }
  });
  const closed = new Promise<void>((resolve) => rl.on('close', resolve));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.on('exit', (code, signal) => {
      // Drain stdout first, so every line the child printed is in `lines`.
      void closed.then(() => {
        for (const waiter of waiters.splice(0)) waiter.reject(new Error(`the child exited (${code ?? signal}) before printing ${waiter.word}; stderr: ${stderr}`));
        resolve({ code, signal });
      });
    });
  });
  const child: Child = {
    process: proc,
    lines,
    stderr: () => stderr,
    seen: (word) => lines.some((line) => line.split(' ')[0] === word),
    waitFor: (word) =>
      new Promise((resolve, reject) => {
        const line = lines.find((l) => l.split(' ')[0] === word);
        if (line !== undefined) resolve(line);
        else if (proc.exitCode !== null || proc.signalCode !== null) reject(new Error(`the child has exited without printing ${word}; stderr: ${stderr}`));
        else waiters.push({ word, resolve, reject });
      }),
    exited,
  };
  children.push(child);
  return child;
}

function acksOf(child: Child): Map<number, string> {
  const acks = new Map<number, string>();
  for (const line of child.lines) {
    const [word, seq, hash] = line.split(' ');
    if (word === 'ACK') acks.set(Number(seq), hash!);
  }
  return acks;
}

describe('journal concurrency across processes', () => {
  it('three processes appending at once to one data dir: 900 records, one chain, no gap, no fork', async () => {
    const dataDir = tempDataDir('ap-concurrent-');
    // No process creates the data dir first: all three open a new one at the same moment, which
    // is what the atomic key creation (link, not rename) and the WAL switch retry are for.
    const writers = [0, 1, 2].map((i) =>
      startChild([
        'append',
        '--data-dir', dataDir,
        '--run-prefix', `writer${i}`,
        '--seed', String(100 + i),
        '--limit', '300',
        '--checkpoint-every', '50',
        '--wait-go',
        // One writer appends back to back, two let their event loop turn (and sign checkpoints) between appends.
        ...(i === 1 ? [] : ['--yield']),
      ]),
    );
    // All three are loaded before any of them starts, so they open together and contend for the
    // write lock from their first append.
    await Promise.all(writers.map((w) => w.waitFor('READY')));
    for (const w of writers) w.process.stdin.write('GO\n');
    const exits = await Promise.all(writers.map((w) => w.exited));
    exits.forEach((exit, i) => expect(exit, `writer ${i} stderr: ${writers[i]!.stderr()}`).toEqual({ code: 0, signal: null }));
    for (const w of writers) expect(w.lines.at(-1)).toBe('DONE 300');

    const raw = new Database(journalPath(dataDir), { readonly: true });
    const stats = raw.prepare('SELECT COUNT(*) AS n, COUNT(DISTINCT prev_hash) AS prevs, COUNT(DISTINCT hash) AS hashes, MIN(seq) AS lo, MAX(seq) AS hi FROM records').get();
    raw.close();
    expect(stats).toEqual({ n: 900, prevs: 900, hashes: 900, lo: 1, hi: 900 });

    const journal = await Journal.open({ dataDir, readOnly: true });
    try {
      expect(await verifyJournalStore(journal)).toMatchObject({ ok: true, count: 900 });
      const rows = await journal.readRange(1, null, 10_000);
      expect(rows.map((r) => r.seq)).toEqual(Array.from({ length: 900 }, (_, i) => i + 1));
      for (let i = 0; i < rows.length; i++) expect(rows[i]!.prevHash).toBe(i === 0 ? GENESIS_PREV_HASH : rows[i - 1]!.hash);
      const byWriter = [0, 1, 2].map((i) => rows.filter((r) => r.runId?.startsWith(`writer${i}-`)).length);
      expect(byWriter).toEqual([300, 300, 300]);
      // Every acknowledgement names a record of that writer, with the acknowledged hash.
      writers.forEach((w, i) => {
        for (const [seq, hash] of acksOf(w)) {
          expect(rows[seq - 1]!.hash).toBe(hash);
          expect(rows[seq - 1]!.runId?.startsWith(`writer${i}-`)).toBe(true);
        }
      });
      // Checkpoints from all three processes, each over its own view of the shared tree, verified above.
      const switches = rows.filter((r, i) => i > 0 && r.runId!.split('-')[0] !== rows[i - 1]!.runId!.split('-')[0]).length;
      console.log(`three writers: ${switches} switches between writers along the chain, ${journal.checkpoints.readAll().length} checkpoints`);
    } finally {
      await journal.close();
    }
  }, 60_000);

  it('a reader never sees part of a batch: heads are whole multiples of the batch, ranges chain', async () => {
    const K = 50;
    const BATCHES = 100;
    const dataDir = tempDataDir('ap-reader-');
    const journal = await Journal.open({ dataDir, checkpointEvery: 1_000_000 });
    try {
      const writer = startChild(['append', '--data-dir', dataDir, '--run-prefix', 'batched', '--batch', String(K), '--limit', String(K * BATCHES), '--yield']);
      await writer.waitFor('OPEN');
      const heads = new Set<number>();
      let verified = 0;
      let verifiedHash = GENESIS_PREV_HASH;
      let reads = 0;
      while (verified < K * BATCHES) {
        const head = await journal.head();
        expect(head.seq % K, `head ${head.seq} ends inside a batch`).toBe(0);
        heads.add(head.seq);
        // One statement, one snapshot: whatever it returns is a whole number of batches.
        const fresh = await journal.readRange(verified + 1, null, Number.MAX_SAFE_INTEGER);
        expect((verified + fresh.length) % K, `a range read ending at ${verified + fresh.length} ends inside a batch`).toBe(0);
        for (const row of fresh) {
          expect(row.seq).toBe(verified + 1);
          expect(row.prevHash).toBe(verifiedHash);
          verified = row.seq;
          verifiedHash = row.hash;
        }
        expect(verified).toBeGreaterThanOrEqual(head.seq);
        if (reads % 25 === 0) {
          // The whole prefix up to a head, through the bounded range read the UI uses.
          const prefix = await journal.readRange(1, head.seq, head.seq + 1);
          expect(prefix).toHaveLength(head.seq);
          if (head.seq > 0) expect(prefix.at(-1)!.hash).toBe(head.hash);
        }
        reads++;
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(await writer.exited).toEqual({ code: 0, signal: null });
      // The reader really read while the writer wrote (not only before and after).
      const between = [...heads].filter((s) => s > 0 && s < K * BATCHES).length;
      console.log(`reader: ${reads} reads, ${between} distinct heads seen while the writer was mid-way`);
      expect(between).toBeGreaterThanOrEqual(3);
      expect(await verifyJournalStore(journal)).toMatchObject({ ok: true, count: K * BATCHES });
    } finally {
      await journal.close();
    }
  }, 60_000);

  it('a writer holding the write lock does not hold up readers; a second writer waits for it, then appends', async () => {
    const dataDir = tempDataDir('ap-lock-');
    const journal = await Journal.open({ dataDir });
    try {
      await journal.appendBatch(runDrafts('before', 3));
      const before = await journal.head();
      const holder = startChild(['hold-lock', '--data-dir', dataDir, '--hold-ms', '1000']);
      expect(await holder.waitFor('LOCKED')).toBe(`LOCKED ${before.seq}`);

      // Reads through the journal while the lock is held (and a record sits uncommitted in it).
      const head = await journal.head();
      const range = await journal.readRange(1, null, 1000);
      const run = await journal.readRun('before', 1, 1000);
      const runs = await journal.runs(10);
      const report = await verifyJournalStore(journal);

      // They returned while the child still held the lock: it has not said it released it, and
      // SQLite itself still refuses the write lock to anyone else right now.
      expect(holder.seen('RELEASED')).toBe(false);
      const probe = new Database(journalPath(dataDir));
      probe.pragma('busy_timeout = 0');
      expect(() => probe.exec('BEGIN IMMEDIATE')).toThrow(/database is locked/);
      probe.close();

      // And they saw the last committed state, not the holder's uncommitted record.
      expect(head).toEqual(before);
      expect(range).toHaveLength(before.seq);
      expect(run).toHaveLength(before.seq);
      expect(runs.map((r) => r.runId)).toEqual(['before']);
      // Nothing signed yet (no checkpoint is due): every record is chained and reported unsigned.
      expect(report).toMatchObject({ ok: true, count: 0, unsignedTail: { fromSeq: 1, toSeq: before.seq } });

      // A second writer waits for the lock (busy_timeout) and then appends after the head.
      const record = await journal.append({ runId: 'after', kind: 'Cancelled', body: { by: 'me' } });
      expect(record.seq).toBe(before.seq + 1);
      expect(record.prevHash).toBe(before.hash);
      expect(await holder.exited).toEqual({ code: 0, signal: null });
      expect(holder.seen('RELEASED')).toBe(true);
      expect(await verifyJournalStore(journal)).toMatchObject({ ok: true, count: 0, unsignedTail: { fromSeq: 1, toSeq: before.seq + 1 } });
    } finally {
      await journal.close();
    }
  }, 30_000);

  // Regression: two appends in flight on one Journal at once both commit; folding them into
  // the Merkle accumulator is serialised, so neither is reported failed after its commit.
  it('appends in flight together on one Journal all resolve, in seq order', async () => {
    const journal = await Journal.open({ dataDir: tempDataDir('ap-inflight-') });
    try {
      const drafts = runDrafts('together', 2);
      const results = await Promise.all([journal.appendBatch(drafts.slice(0, 2)), journal.appendBatch(drafts.slice(2, 4)), journal.append(drafts[4]!)]);
      expect(results.flat().map((r) => r.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(journal.size).toBe(5);
      expect(await verifyJournalStore(journal)).toMatchObject({ ok: true, count: 0, unsignedTail: { fromSeq: 1, toSeq: 5 } });
    } finally {
      await journal.close();
    }
  });

  // Regression: SQLite's locks are per process, and closing any descriptor of a file drops
  // them all. Code that opened and closed the -shm beside a live connection (to fix its mode)
  // dropped the lock marking the database in use here; a child closing its connection then
  // took itself for the last user and deleted the WAL, and this process, still reading the old
  // one, never saw another record appended elsewhere.
  it('a process keeps seeing records that other processes append after one of them closed', async () => {
    const dataDir = tempDataDir('ap-locks-kept-');
    const journal = await Journal.open({ dataDir });
    try {
      await journal.append(runDrafts('here', 0)[0]!);
      const first = startChild(['append', '--data-dir', dataDir, '--run-prefix', 'elsewhere1', '--limit', '5', '--batch', '1']);
      await first.waitFor('DONE');
      const beforeSecond = await journal.readRange(1, null, 100);
      expect(beforeSecond).toHaveLength(6);
      const other = startChild(['append', '--data-dir', dataDir, '--run-prefix', 'elsewhere2', '--limit', '5', '--batch', '1']);
      await other.waitFor('DONE');
      const seen = await journal.readRange(1, null, 100);
      expect(seen.map((r) => r.seq)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    } finally {
      await journal.close();
    }
  }, 30_000);

  // The same, with journal workers (journal-workers.ts) opening and closing read-only
  // connections of their own in this process meanwhile: one ended by the pool's close, one by
  // dying mid-job. A worker reaches the database only through better-sqlite3, whose SQLite keeps
  // the process's locks when one of its connections closes; a descriptor opened and closed by
  // hand would drop them, and this process would stop seeing the children's records.
  it('a process keeps seeing records other processes append after its journal workers closed their connections', async () => {
    const dataDir = tempDataDir('ap-locks-workers-');
    const journal = await Journal.open({ dataDir });
    try {
      await journal.append(runDrafts('here', 0)[0]!);
      const pool = new JournalWorkers({ databasePath: journalPath(dataDir), size: 1 });
      expect((await pool.run({ kind: 'verifyStore', plan: storeVerifyPlan(journal) })).result).toMatchObject({ ok: true });
      await expect(pool.run({ kind: 'crash', how: 'exit' })).rejects.toThrow(/died while running crash/);
      expect((await pool.run({ kind: 'verifyStore', plan: storeVerifyPlan(journal) })).result).toMatchObject({ ok: true });
      await pool.close();

      const first = startChild(['append', '--data-dir', dataDir, '--run-prefix', 'elsewhere1', '--limit', '5', '--batch', '1']);
      await first.waitFor('DONE');
      expect(await journal.readRange(1, null, 100)).toHaveLength(6);
      const other = startChild(['append', '--data-dir', dataDir, '--run-prefix', 'elsewhere2', '--limit', '5', '--batch', '1']);
      await other.waitFor('DONE');
      const seen = await journal.readRange(1, null, 100);
      expect(seen.map((r) => r.seq)).toEqual(Array.from({ length: 11 }, (_, i) => i + 1));
    } finally {
      await journal.close();
    }
  }, 60_000);
});
