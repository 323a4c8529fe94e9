/**
 * The journal's worker pool (journal-workers.ts): verify, export and the start-up scan answer
 * exactly what the in-thread functions answer on the same journal; the event loop keeps
 * turning while a large verify runs; a worker that dies fails its job and is replaced; closing
 * the journal (and with it the plane) ends the pool.
 *
 * Workers here are real threads running journal-worker.ts (from source, through tsx).
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { threadId } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyRecordDraft } from '../../src-shared/journal/records';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { call } from '../../tests/support/runtime-support';
import { createPlane } from '../plane/plane';
import { BundleError } from './bundle-error';
import { exportBundle } from './bundle-export';
import { verifyBundleFile } from './bundle-verify';
import { storeVerifyPlan, type StoreVerifyPlan } from './store-verify';
import { journalStoreOf, Journal } from './journal';
import { JournalError } from './journal-error';
import { scanStoreRecords } from './journal-scan';
import { JournalWorkers } from './journal-worker-pool';
import { exportBundleInWorker, SCAN_IN_WORKER_FROM_RECORDS, scanInWorkers, scanWholeJournal, verifyJournalStore, verifyJournalStoreInWorker } from './journal-workers';
import { journalPath } from './sqlite-store';

const RESPONSIVE_RECORDS = 50_000;
const journals: Journal[] = [];
afterEach(async () => {
  // The data dirs go too: the larger journals here are tens of megabytes each.
  for (const j of journals.splice(0)) {
    await j.close().catch(() => undefined);
    rmSync(j.dataDir, { recursive: true, force: true });
  }
});

async function openJournal(options: { checkpointEvery?: number } = {}): Promise<Journal> {
  const journal = await Journal.open({ dataDir: tempDataDir('ap-workers-'), ...options });
  journals.push(journal);
  return journal;
}

/** `records` records of whole runs (5 effects each), appended in large batches. */
async function fill(journal: Journal, records: number, prefix = 'run'): Promise<void> {
  let pending: AnyRecordDraft[] = [];
  let run = 0;
  for (let written = 0; written < records; written += 5000) {
    while (pending.length < 5000) pending = pending.concat(runDrafts(`${prefix}-${++run}`, 5));
    await journal.appendBatch(pending.splice(0, Math.min(5000, records - written)));
  }
}

/** A bundle's text without its createdAt, the one thing two exports of the same records differ in. */
const bundleText = (file: string) => readFileSync(file, 'utf8').replace(/"createdAt":"[^"]*"/, '"createdAt":"-"');

/** Changes seq `seq`'s body in the database, as someone with the file could (triggers dropped). */
function forgeBody(journal: Journal, seq: number): void {
  const db = new Database(journalPath(journal.dataDir));
  db.exec('DROP TRIGGER records_append_only_update');
  db.prepare("UPDATE records SET body = replace(body, '\"echo\"', '\"evil\"') WHERE seq = ?").run(seq);
  db.close();
}

/** The longest wait between turns of the event loop while `work` runs, from a 10 ms timer. */
async function maxLoopGap<T>(work: () => Promise<T>): Promise<{ value: T; maxGapMs: number; ticks: number; elapsedMs: number }> {
  let last = performance.now();
  let maxGapMs = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    last = now;
    ticks += 1;
  }, 10);
  const started = performance.now();
  try {
    const value = await work();
    const now = performance.now();
    maxGapMs = Math.max(maxGapMs, now - last);
    return { value, maxGapMs, ticks, elapsedMs: now - started };
  } finally {
    clearInterval(timer);
  }
}

describe('the journal worker pool answers what the in-thread path answers', () => {
  it('verify: a clean journal, an unsigned tail, a forged record, an unexpected key', async () => {
    const journal = await openJournal({ checkpointEvery: 500 });
    await fill(journal, 3000);
    // Records after the last checkpoint: reported unsigned, not counted.
    await journal.appendBatch(runDrafts('tail', 3));
    const inThread = await verifyJournalStore(journal);
    expect(inThread).toMatchObject({ ok: true, count: 3000, unsignedTail: { fromSeq: 3001, toSeq: 3008 } });
    expect(await verifyJournalStoreInWorker(journal)).toEqual(inThread);

    const refusedHere = await verifyJournalStore(journal, { expectKeyId: 'someone-else' });
    expect(refusedHere.ok).toBe(false);
    expect(await verifyJournalStoreInWorker(journal, { expectKeyId: 'someone-else' })).toEqual(refusedHere);

    forgeBody(journal, 1234);
    const forged = await verifyJournalStore(journal);
    expect(forged).toMatchObject({ ok: false, seq: 1234 });
    expect(await verifyJournalStoreInWorker(journal)).toEqual(forged);
  }, 60_000);

  it('export: the same bundle for a run, a range and the whole journal, and the same refusals', async () => {
    const journal = await openJournal({ checkpointEvery: 500 });
    await fill(journal, 2000);
    const dir = journal.dataDir;
    for (const [name, scope] of [
      ['run', { kind: 'run', runId: 'run-7' }],
      ['range', { kind: 'range', fromSeq: 100, toSeq: 1500 }],
      ['full', { kind: 'full' }],
    ] as const) {
      const here = await exportBundle(journal, scope, join(dir, `${name}-here.jsonl`));
      const there = await exportBundleInWorker(journal, scope, join(dir, `${name}-worker.jsonl`));
      expect({ ...there, file: null }).toEqual({ ...here, file: null });
      // Each export signs its own anchor over the same head; a full bundle carries the log's
      // earlier checkpoints too, so the worker's holds one more than the in-thread one did.
      const lines = (file: string) => bundleText(file).split('\n').filter((l) => !l.startsWith('{"checkpoint":'));
      expect(lines(there.file)).toEqual(lines(here.file));
      expect(await verifyBundleFile(there.file)).toMatchObject({ ok: true, count: here.records });
    }
    const ghost = exportBundleInWorker(journal, { kind: 'run', runId: 'ghost' }, join(dir, 'ghost.jsonl'));
    await expect(ghost).rejects.toBeInstanceOf(BundleError);
    await expect(ghost).rejects.toThrow(/no run ghost in this journal/);
    await expect(exportBundleInWorker(journal, { kind: 'range', fromSeq: 1, toSeq: 99_999 }, join(dir, 'far.jsonl'))).rejects.toThrow(/beyond the journal's last record/);
  }, 60_000);

  it('scan: the same report and the same unsealed runs and halts', async () => {
    const journal = await openJournal({ checkpointEvery: 100 });
    await fill(journal, 84 * 12); // 84 whole runs, all sealed
    const unsealed = (runId: string, host?: string): AnyRecordDraft[] => {
      const drafts = runDrafts(runId, 2).slice(0, -1);
      if (host) (drafts[0]!.body as { host?: string }).host = host;
      return drafts;
    };
    const halt = (scope: string, lifted: boolean): AnyRecordDraft => ({ runId: null, kind: 'HaltApplied', body: { scope, lifted, by: 'user:local' } });
    await journal.appendBatch([...unsealed('open-1'), halt('agent:echo', false), ...unsealed('open-2', 'peer:beta'), halt('agent:echo', true), halt('subject:x', false)]);
    await journal.checkpoint();
    const plan: StoreVerifyPlan = { checkpoints: journal.checkpoints.readAll(), publicKey: journal.key.publicJwk as Record<string, unknown>, journalId: journal.journalId };
    const here = await scanStoreRecords(journalStoreOf(journal), plan, { publicKey: journal.key.publicKey });
    expect(here.report).toMatchObject({ ok: true, count: 84 * 12 + 5 + 1 + 5 + 2 });
    expect(here.index.unsealed).toEqual([
      { runId: 'open-1', host: null },
      { runId: 'open-2', host: 'peer:beta' },
    ]);
    expect(here.index.halts.map((h) => [h.scope, h.lifted])).toEqual([
      ['agent:echo', false],
      ['agent:echo', true],
      ['subject:x', false],
    ]);
    const timesBefore = journal.workers.jobTimes();
    const there = await journal.workers.run({ kind: 'scan', plan });
    expect(there.result).toEqual(here);
    expect(there.threadId).not.toBe(threadId);
    // The pool adds up what its workers measured of each job (bench journal-verify prints it).
    const timesAfter = journal.workers.jobTimes();
    expect(timesAfter.jobs).toBe(timesBefore.jobs + 1);
    expect(timesAfter.totalMs - timesBefore.totalMs).toBeCloseTo(there.timing.totalMs, 6);
    expect(timesAfter.readMs - timesBefore.readMs).toBeCloseTo(there.timing.readMs, 6);
    expect(there.timing.readMs).toBeGreaterThan(0);
    expect(there.timing.readMs).toBeLessThanOrEqual(there.timing.totalMs);
  }, 60_000);

  it('the start-up scan split across the workers gives the one-pass index, with runs admitted in one range and sealed in another', async () => {
    const journal = await openJournal({ checkpointEvery: 997 });
    const admitted = (runId: string, host?: string): AnyRecordDraft => {
      const draft = runDrafts(runId, 0)[0]!;
      if (host) (draft.body as { host?: string }).host = host;
      return draft;
    };
    const sealed = (runId: string): AnyRecordDraft => runDrafts(runId, 0).at(-1)!;
    const halt = (scope: string, lifted: boolean): AnyRecordDraft => ({ runId: null, kind: 'HaltApplied', body: { scope, lifted, by: 'user:local' } });
    // Runs admitted early and sealed (or not) much later, halts spread over the whole journal,
    // so every range border falls between some run's admission and its seal.
    await journal.appendBatch([admitted('long-1'), admitted('long-2', 'peer:beta'), admitted('long-3'), halt('agent:echo', false)]);
    await fill(journal, 6000, 'a');
    await journal.appendBatch([sealed('long-1'), admitted('mid-1', 'peer:gamma'), halt('agent:echo', true)]);
    await fill(journal, 6000, 'b');
    await journal.appendBatch([sealed('long-3'), halt('subject:x', false), admitted('late-1')]);
    await fill(journal, 3000, 'c');
    await journal.appendBatch([sealed('mid-1'), admitted('last-1', 'peer:beta')]);
    await journal.checkpoint();
    const plan: StoreVerifyPlan = { checkpoints: journal.checkpoints.readAll(), publicKey: journal.key.publicJwk as Record<string, unknown>, journalId: journal.journalId };
    const onePass = await scanStoreRecords(journalStoreOf(journal), plan, { publicKey: journal.key.publicKey });
    expect(onePass.index.unsealed).toEqual([
      { runId: 'long-2', host: 'peer:beta' },
      { runId: 'late-1', host: null },
      { runId: 'last-1', host: 'peer:beta' },
    ]);
    const split = await scanInWorkers(journal, plan);
    expect(journal.workers.size).toBeGreaterThan(1);
    expect(journal.workers.stats().started).toBe(journal.workers.size);
    expect(split).toEqual(onePass);

    // A journal that does not verify is scanned in one pass (one worker), whose index stops
    // where the pass stopped: the same answer as in-thread.
    const forged = (await journal.readRange(9000, 9100, 100)).find((r) => r.kind === 'RunAdmitted')!;
    forgeBody(journal, forged.seq);
    const forgedHere = await scanStoreRecords(journalStoreOf(journal), plan, { publicKey: journal.key.publicKey });
    expect(forgedHere.report.ok).toBe(false);
    expect(await scanInWorkers(journal, plan)).toEqual(forgedHere);
  }, 120_000);

  it("the runtime's start-up scan runs in-thread on a small journal and in a worker from SCAN_IN_WORKER_FROM_RECORDS on", async () => {
    const journal = await openJournal();
    await fill(journal, SCAN_IN_WORKER_FROM_RECORDS - 1);
    const plan = (): StoreVerifyPlan => ({ checkpoints: journal.checkpoints.readAll(), publicKey: journal.key.publicJwk as Record<string, unknown>, journalId: journal.journalId });
    const small = await scanWholeJournal(journal, plan());
    expect(journal.workers.stats().started).toBe(0);
    expect(small).toEqual(await scanStoreRecords(journalStoreOf(journal), plan(), { publicKey: journal.key.publicKey }));
    await journal.appendBatch(runDrafts('one-more', 0).slice(0, 1));
    const large = await scanWholeJournal(journal, plan());
    expect(journal.workers.stats().started).toBeGreaterThanOrEqual(1);
    expect(large).toEqual(await scanStoreRecords(journalStoreOf(journal), plan(), { publicKey: journal.key.publicKey }));
    expect(large.index.unsealed.map((r) => r.runId)).toContain('one-more');
  }, 60_000);
});

describe('the event loop during a large verify', () => {
  it('keeps turning while the pool verifies, and while the same verify runs in-thread, between its pages', async () => {
    // Large enough that the in-thread verify takes hundreds of milliseconds, so a busy machine's
    // scheduling hiccups in the worker run stay far below a quarter of it.
    const journal = await openJournal();
    await fill(journal, RESPONSIVE_RECORDS);
    // The pool's first job starts its worker; the timed runs below compare the verify alone.
    const expected = await verifyJournalStoreInWorker(journal);
    expect(expected).toMatchObject({ ok: true, count: RESPONSIVE_RECORDS });

    const inThread = await maxLoopGap(() => verifyJournalStore(journal));
    const pooled = await maxLoopGap(() => journal.workers.run({ kind: 'verifyStore', plan: storeVerifyPlan(journal) }));
    console.log(
      `${RESPONSIVE_RECORDS} records: in-thread ${inThread.elapsedMs.toFixed(0)} ms with the loop held up to ${inThread.maxGapMs.toFixed(0)} ms (${inThread.ticks} ticks); ` +
        `in a worker ${pooled.elapsedMs.toFixed(0)} ms with the loop held up to ${pooled.maxGapMs.toFixed(0)} ms (${pooled.ticks} ticks)`,
    );
    expect(inThread.value).toEqual(expected);
    expect(pooled.value.result).toEqual(expected);
    // It ran on another thread...
    expect(pooled.value.threadId).not.toBe(threadId);
    // ...and the loop was never held for anything like the verify's length, in a worker or
    // in-thread: the store's reads answer at once, so the in-thread pass gives the loop a turn
    // after each page (store-verify.ts nextTurn), where it once held it for its whole length.
    expect(pooled.maxGapMs).toBeLessThan(inThread.elapsedMs / 4);
    expect(pooled.ticks).toBeGreaterThan(pooled.elapsedMs / 10 / 4);
    expect(inThread.maxGapMs).toBeLessThan(inThread.elapsedMs / 4);
    expect(inThread.ticks).toBeGreaterThan(inThread.elapsedMs / 10 / 4);
  }, 120_000);
});

describe('a worker that dies', () => {
  it('fails the job it held with a clear error, and the next job runs on a new worker', async () => {
    const journal = await openJournal();
    await fill(journal, 200);
    const pool = new JournalWorkers({ databasePath: journalPath(journal.dataDir), size: 1 });
    try {
      const plan = storeVerifyPlan(journal);
      const first = await pool.run({ kind: 'verifyStore', plan });
      expect(first.result).toMatchObject({ ok: true });

      // An uncaught exception in the worker, with a job queued behind it on the one-worker pool.
      const crashed = pool.run({ kind: 'crash', how: 'throw' });
      const queued = pool.run({ kind: 'verifyStore', plan });
      await expect(crashed).rejects.toSatisfy((error: unknown) => error instanceof JournalError && error.code === 'WorkerCrashed');
      await expect(crashed).rejects.toThrow(new RegExp(`journal worker \\(thread ${first.threadId}\\) died while running crash \\(Error: a deliberate crash of the journal worker\\)`));
      const replaced = await queued;
      expect(replaced.result).toEqual(first.result);
      expect(replaced.threadId).not.toBe(first.threadId);

      // process.exit in the worker: no error event, only an exit code.
      await expect(pool.run({ kind: 'crash', how: 'exit' })).rejects.toThrow(/died while running crash \(it exited with code 70\)/);
      const again = await pool.run({ kind: 'verifyStore', plan });
      expect(again.result).toEqual(first.result);
      expect(new Set([first.threadId, replaced.threadId, again.threadId]).size).toBe(3);
      expect(pool.stats()).toEqual({ started: 3, alive: 1, crashed: 2, retired: 0 });
    } finally {
      await pool.close();
    }
  }, 60_000);
});

describe('closing', () => {
  it('a pool is sized to the cores, starts no worker before its first job, and fails what runs when it closes', async () => {
    const journal = await openJournal();
    await fill(journal, 200);
    const pool = new JournalWorkers({ databasePath: journalPath(journal.dataDir) });
    expect(pool.size).toBeGreaterThanOrEqual(1);
    expect(pool.stats()).toEqual({ started: 0, alive: 0, crashed: 0, retired: 0 });
    const running = pool.run({ kind: 'verifyStore', plan: storeVerifyPlan(journal) });
    expect(pool.stats().started).toBe(1);
    await pool.close();
    await expect(running).rejects.toSatisfy((error: unknown) => error instanceof JournalError && error.code === 'Closed');
    expect(pool.stats().alive).toBe(0);
    await expect(pool.run({ kind: 'verifyStore', plan: storeVerifyPlan(journal) })).rejects.toThrow(/closed/);
  }, 60_000);

  it('ends a worker that has been idle for idleMs, and the next job starts a new one', async () => {
    const journal = await openJournal();
    await fill(journal, 200);
    const pool = new JournalWorkers({ databasePath: journalPath(journal.dataDir), size: 1, idleMs: 100 });
    try {
      const plan = storeVerifyPlan(journal);
      const first = await pool.run({ kind: 'verifyStore', plan });
      expect(first.result.ok).toBe(true);
      // Jobs back to back reuse the worker: it was never idle for long.
      await pool.run({ kind: 'verifyStore', plan });
      expect(pool.stats()).toMatchObject({ started: 1, alive: 1, retired: 0 });
      const deadline = Date.now() + 10_000;
      while (pool.stats().alive > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(pool.stats()).toMatchObject({ started: 1, alive: 0, retired: 1, crashed: 0 });
      const again = await pool.run({ kind: 'verifyStore', plan });
      expect(again.result.ok).toBe(true);
      expect(again.threadId).not.toBe(first.threadId);
      expect(pool.stats()).toMatchObject({ started: 2, alive: 1, crashed: 0 });
    } finally {
      await pool.close();
    }
  }, 60_000);

  it("the plane's journal.verify signs the head here, verifies in a worker, and the plane's close ends the pool", async () => {
    const dataDir = tempDataDir('ap-workers-plane-');
    // Whole runs with run ids the runtime accepts (it reads every run when the plane starts).
    const runId = (n: number) => `run-${n.toString(16).padStart(20, '0')}`;
    const journal = await Journal.open({ dataDir, checkpointEvery: 1_000_000 });
    for (let n = 1; n <= 40; n++) await journal.appendBatch(runDrafts(runId(n), 5));
    await journal.close();
    const plane = await createPlane({ dataDir, version: '0.0.0', host: 'headless', checkpointEvery: 1_000_000 });
    try {
      // Appended after the last checkpoint: the handler signs them before verifying.
      await plane.journal.appendBatch(runDrafts(runId(41), 2));
      const answer = await call(plane, 'journal.verify', {});
      expect(answer).toEqual({ ok: true, count: 486, root: plane.journal.rootHex(), checkpointSize: 486, unsigned: 0, unknownKinds: 0 });
      expect(plane.journal.workers.stats()).toMatchObject({ started: 1, alive: 1 });
      const pool = plane.journal.workers;
      await plane.close();
      expect(pool.stats().alive).toBe(0);
      expect(() => plane.journal.workers).toThrow(/closed/);
    } finally {
      await plane.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
