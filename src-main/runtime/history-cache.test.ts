/**
 * The runtime keeps folded run histories so listing runs does not re-read every record each
 * time, but a history holds its effects' requests and results: the cache is bounded by the
 * records it holds in all, not only by its count of runs (bench/memory.bench.ts measured
 * ~600 MB held after one look at a 1M-record journal when only the count was bounded). A run
 * longer than the bound is folded when asked for and answered, and not kept.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Journal } from '../journal/journal';
import { silentLogger } from '../base/logger';
import { loadPolicy } from '../plane/plane-config';
import { Runtime } from './runtime';
import { builtinTools, workspaceOf } from './tools';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { runtimeOverRuns } from '../../tests/support/runtime-support';
import { readRunHistory } from './run-history';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

/** A runtime over a fresh journal holding these runs (runDrafts), its history cache bounded as given. */
function runtimeOver(runs: Array<[string, number]>, historyCacheRecords: number): Promise<Runtime> {
  return runtimeOverRuns(runs, historyCacheRecords, open);
}

const id = (n: number) => `run-${String(n).padStart(20, '0')}`;

describe('the folded-history cache', () => {
  it('holds at most its bound in records, evicting the least recently folded runs', async () => {
    // Ten runs of 12 records (RunAdmitted, 5 × started + done, RunSealed) against a bound of 50.
    const runs = Array.from({ length: 10 }, (_, i): [string, number] => [id(i + 1), 5]);
    const runtime = await runtimeOver(runs, 50);
    for (const [runId] of runs) expect((await runtime.history(runId)).records).toBe(12);
    expect(runtime.historyCache).toEqual({ runs: 4, records: 48 });
    // Every history still answers, cached or not.
    for (const [runId] of runs) expect((await runtime.history(runId)).status).toBe('sealed');
    expect(runtime.historyCache.records).toBeLessThanOrEqual(50);
  });

  it('answers a run longer than the bound without keeping it', async () => {
    const runtime = await runtimeOver([[id(1), 40], [id(2), 5]], 50);
    expect((await runtime.history(id(2))).records).toBe(12);
    expect((await runtime.history(id(1))).records).toBe(82);
    expect(runtime.historyCache).toEqual({ runs: 1, records: 12 });
  });
});

describe('listing runs', () => {
  it('lists summaries: each run folded and reduced at once, none of its steps held by the list', async () => {
    const runs = Array.from({ length: 8 }, (_, i): [string, number] => [id(i + 1), 5]);
    const runtime = await runtimeOver(runs, 30);
    const summaries = await runtime.listRunSummaries(100);
    expect(summaries.map((s) => s.runId).sort()).toEqual(runs.map(([runId]) => runId).sort());
    for (const summary of summaries) {
      expect(summary).not.toHaveProperty('steps');
      expect(summary).not.toHaveProperty('decisions');
      expect(summary).not.toHaveProperty('waits');
      // The summary is the full history's, less the per-step detail.
      const { steps: _s, decisions: _d, waits: _w, ...full } = await runtime.history(summary.runId);
      expect(summary).toEqual(full);
    }
    // The cache stayed within its bound while the list was made.
    expect(runtime.historyCache.records).toBeLessThanOrEqual(30);
  });

  it('lists again without folding any run that has not grown, though the history cache let it go', async () => {
    const runs = Array.from({ length: 8 }, (_, i): [string, number] => [id(i + 1), 5]);
    const runtime = await runtimeOver(runs, 12);
    const journal = (runtime as unknown as { options: { journal: Journal } }).options.journal;
    const reads = vi.spyOn(journal, 'readRun');
    const first = await runtime.listRunSummaries(100);
    expect(reads).toHaveBeenCalledTimes(8);
    // A list folds summaries, which the history cache never holds; the summaries are all kept.
    expect(runtime.historyCache.runs).toBe(0);
    expect(runtime.summaryCache).toBe(8);
    reads.mockClear();
    expect(await runtime.listRunSummaries(100)).toEqual(first);
    expect(reads).not.toHaveBeenCalled();
    // A run that grew is folded again, and only that one.
    await journal.append({ runId: id(3), kind: 'Cancelled', body: { by: 'user:local', reason: 'after the seal' } });
    const again = await runtime.listRunSummaries(100);
    expect(reads.mock.calls.map((c) => c[0])).toEqual([id(3)]);
    expect(again.find((s) => s.runId === id(3))!.records).toBe(13);
  });
});

describe('folding a long run', () => {
  it('reads its records a page at a time, never all at once, and folds the same history', async () => {
    // 2,600 effects: 5,202 records. Reading them in one call held every record parsed at once
    // (about 170 MB for a run of 100,000 on runs.get, bench/memory.bench.ts).
    const runtime = await runtimeOver([[id(1), 2600]], 10);
    const journal = (runtime as unknown as { options: { journal: Journal } }).options.journal;
    const whole = await journal.readRun(id(1), 1, Number.MAX_SAFE_INTEGER);
    const reads = vi.spyOn(journal, 'readRun');
    const history = await runtime.history(id(1));
    expect(reads.mock.calls.length).toBeGreaterThanOrEqual(3);
    for (const [, , limit] of reads.mock.calls) expect(limit).toBeLessThanOrEqual(2000);
    expect(history).toEqual(readRunHistory(whole));
    expect(history.records).toBe(5202);
  });

  it('answers its summary without keeping its history or building its steps', async () => {
    const runtime = await runtimeOver([[id(1), 2600], [id(2), 5]], 100_000);
    const summary = await runtime.summary(id(1));
    expect(runtime.historyCache).toEqual({ runs: 0, records: 0 });
    expect(summary).not.toHaveProperty('steps');
    const { steps: _s, decisions: _d, waits: _w, ...full } = await runtime.history(id(1));
    expect(summary).toEqual(full);
    // Kept: asked again, nothing is read.
    const journal = (runtime as unknown as { options: { journal: Journal } }).options.journal;
    const reads = vi.spyOn(journal, 'readRun');
    expect(await runtime.summary(id(1))).toEqual(summary);
    expect(reads).not.toHaveBeenCalled();
    // Bad ids and unknown runs are refused as history() refuses them.
    await expect(runtime.summary('not-a-run')).rejects.toThrow(/is not a run id/);
    await expect(runtime.summary(id(9))).rejects.toThrow(/no run/);
  });
});

describe('a run that grew', () => {
  it('is folded on from where its kept summary fold stopped, reading only its new records, to the same summary', async () => {
    const runtime = await runtimeOver([[id(1), 2600]], 10);
    const journal = (runtime as unknown as { options: { journal: Journal } }).options.journal;
    const before = await runtime.summary(id(1));
    const held = { ...before };
    const reads = vi.spyOn(journal, 'readRun');
    await journal.append({ runId: id(1), kind: 'Cancelled', body: { by: 'user:local', reason: 'after the seal' } });
    const after = await runtime.summary(id(1));
    // One read, from the record after the last one folded: none of the 5,202 before it again.
    expect(reads.mock.calls.map(([runId, from]) => [runId, from])).toEqual([[id(1), before.lastSeq + 1]]);
    expect(after.records).toBe(5203);
    const { steps: _s, decisions: _d, waits: _w, ...fresh } = readRunHistory(await journal.readRun(id(1), 1, Number.MAX_SAFE_INTEGER));
    expect(after).toEqual(fresh);
    // What was handed out before is unchanged by the fold going on.
    expect(before).toEqual(held);
  });

  it('is folded on from its kept history when it grew by a few records, to the history a fresh fold gives', async () => {
    const runtime = await runtimeOver([[id(1), 40]], 1000);
    const journal = (runtime as unknown as { options: { journal: Journal } }).options.journal;
    const before = await runtime.history(id(1));
    const reads = vi.spyOn(journal, 'readRun');
    await journal.append({ runId: id(1), kind: 'Cancelled', body: { by: 'user:local', reason: 'after the seal' } });
    const after = await runtime.history(id(1));
    expect(reads.mock.calls.map(([runId, from]) => [runId, from])).toEqual([[id(1), before.lastSeq + 1]]);
    expect(after).toEqual(readRunHistory(await journal.readRun(id(1), 1, Number.MAX_SAFE_INTEGER)));
    expect(before.records).toBe(82);
  });
});

describe('lists read at once', () => {
  it('share one fold of each run: the Runs list, the inbox and the recovery list asked together read a run once', async () => {
    // 2,600 effects: 5,202 records, three pages of the fold.
    const runtime = await runtimeOver([[id(1), 2600], [id(2), 5]], 10);
    const journal = (runtime as unknown as { options: { journal: Journal } }).options.journal;
    const reads = vi.spyOn(journal, 'readRun');
    const [a, b, c] = await Promise.all([runtime.listRunSummaries(100), runtime.waiting(), runtime.listRunSummaries(100)]);
    expect(a).toEqual(c);
    expect(b).toEqual([]);
    const pagesOf = (runId: string) => reads.mock.calls.filter((call) => call[0] === runId).map((call) => call[1]);
    // Each page of each run read once: three pages from seq 1, never the same page twice.
    expect(pagesOf(id(1))).toHaveLength(3);
    expect(pagesOf(id(1))[0]).toBe(1);
    expect(new Set(pagesOf(id(1))).size).toBe(3);
    expect(pagesOf(id(2))).toEqual([1]);
    expect(a.find((s) => s.runId === id(1))!.records).toBe(5202);
    // Once folded, none is under way: a run that grew is folded again.
    await journal.append({ runId: id(2), kind: 'Cancelled', body: { by: 'user:local', reason: 'after the seal' } });
    reads.mockClear();
    expect((await runtime.summary(id(2))).records).toBe(13);
    expect(reads.mock.calls.map((call) => call[0])).toEqual([id(2)]);
  });

  it('each see a fold that failed, and the next asks again', async () => {
    const runtime = await runtimeOver([[id(1), 5]], 10);
    const journal = (runtime as unknown as { options: { journal: Journal } }).options.journal;
    const reads = vi.spyOn(journal, 'readRun').mockRejectedValueOnce(new Error('disk gone'));
    const both = await Promise.allSettled([runtime.summary(id(1)), runtime.summary(id(1))]);
    expect(both.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'ok'))).toEqual(['disk gone', 'disk gone']);
    expect(reads).toHaveBeenCalledTimes(1);
    expect((await runtime.summary(id(1))).records).toBe(12);
  });
});

describe('a long-running plane', () => {
  it('folds the newest runs’ summaries once its start-up check ends, so the first list reads none', async () => {
    const dataDir = tempDataDir('ap-warm-');
    const journal = await Journal.open({ dataDir });
    open.push(journal);
    for (const n of [1, 2, 3]) await journal.appendBatch(runDrafts(id(n), 5));
    const runtime = await Runtime.create({
      journal,
      agents: [],
      policy: loadPolicy(dataDir),
      providers: new Map(),
      tools: builtinTools,
      toolContext: { workspace: workspaceOf(dataDir) },
      logger: silentLogger,
      checkJournalInBackground: true,
      warmRunSummaries: 2,
    });
    open.push(runtime);
    await vi.waitFor(() => expect(runtime.summaryCache).toBe(2), { timeout: 10_000 });
    const reads = vi.spyOn(journal, 'readRun');
    const listed = await runtime.listRunSummaries(2);
    expect(listed.map((s) => s.runId).sort()).toEqual([id(2), id(3)]);
    expect(reads).not.toHaveBeenCalled();
  });
});

describe('runs read for one effect', () => {
  it('holds that effect’s attempts only, and keeps no history', async () => {
    // Every third step of run 1 is an a2a call; run 2 has none. a2a.remotes reads these, and
    // folding every run whole for it held every effect of the newest runs at once.
    const runtime = await runtimeOverRuns([[id(1), 30], [id(2), 10]], 100_000, open);
    const journal = (runtime as unknown as { options: { journal: Journal } }).options.journal;
    const drafts = runDrafts(id(3), 9).map((d) =>
      d.kind === 'EffectStarted' && d.body.step % 3 === 0 ? { ...d, body: { ...d.body, effect: 'a2a' as const, name: 'message/send', request: { card: 'https://agents.example/card', n: d.body.step } } } : d,
    );
    await journal.appendBatch(drafts);
    const runs = await runtime.listRunsWithEffect(100, 'a2a');
    expect(runs.map((r) => r.runId)).toEqual([id(3), id(2), id(1)]);
    const [called, ...others] = runs;
    expect([...called!.steps.keys()]).toEqual([0, 3, 6]);
    for (const attempts of called!.steps.values()) {
      expect(attempts).toHaveLength(1);
      expect(attempts[0]!.started.effect).toBe('a2a');
      expect(attempts[0]!.done?.result).toEqual({ echoed: attempts[0]!.started.step });
    }
    for (const run of others) expect(run.steps.size).toBe(0);
    // The same run folded whole agrees on everything but the other effects' steps.
    const { steps: _s, decisions: _d, ...whole } = await runtime.history(id(3));
    const { steps: _s2, decisions: _d2, ...filtered } = called!;
    expect(filtered).toEqual(whole);
    expect(runtime.historyCache.runs).toBe(1);
  });
});

describe('run links', () => {
  it('answers a run that no run called and that called none from its admission and the index, folding nothing', async () => {
    // The page asks for a run's links whenever it is opened; folding a long run for that read
    // all of its records at once.
    const runtime = await runtimeOver([[id(1), 40]], 1000);
    expect(await runtime.links(id(1))).toEqual({ calledBy: null, calls: [] });
    expect(runtime.historyCache).toEqual({ runs: 0, records: 0 });
    // A run the journal does not hold is refused as before.
    await expect(runtime.links(id(9))).rejects.toThrow(/no run/);
  });
});
