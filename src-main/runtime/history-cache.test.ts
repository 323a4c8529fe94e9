/**
 * The runtime keeps folded run histories so listing runs does not re-read every record each
 * time, but a history holds its effects' requests and results: the cache is bounded by the
 * records it holds in all, not only by its count of runs (bench/memory.bench.ts measured
 * ~600 MB held after one look at a 1M-record journal when only the count was bounded). A run
 * longer than the bound is folded when asked for and answered, and not kept.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../base/logger';
import { Journal } from '../journal/journal';
import { loadPolicy } from '../plane/plane-config';
import { createLocalProvider } from '../providers/local-provider';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { Runtime } from './runtime';
import { builtinTools, workspaceOf } from './tools';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close();
});

async function runtimeOver(runs: Array<[string, number]>, historyCacheRecords: number): Promise<Runtime> {
  const dataDir = tempDataDir('ap-history-cache-');
  const journal = await Journal.open({ dataDir });
  open.push(journal);
  for (const [runId, effects] of runs) await journal.appendBatch(runDrafts(runId, effects));
  const runtime = await Runtime.create({
    journal,
    agents: [],
    policy: loadPolicy(dataDir),
    providers: new Map([['local', createLocalProvider()]]),
    tools: builtinTools,
    toolContext: { workspace: workspaceOf(dataDir) },
    logger: silentLogger,
    historyCacheRecords,
  });
  open.push(runtime);
  return runtime;
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
    // The history cache holds one run of 12 records; the summaries are all kept.
    expect(runtime.historyCache.runs).toBe(1);
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
