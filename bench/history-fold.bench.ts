/**
 * What a look at a long run costs once it has grown (docs/PERFORMANCE.md). Subject: the
 * runtime's `summary` (what `runs.get`, the Runs list and the inboxes read) of a 100,002-record
 * run, asked again after one more record was appended to it: the kept summary fold goes on from
 * its last record. Baseline: the same run's summary folded from its first record, as every look
 * after each new record cost before (a fresh runtime over the same journal, so nothing is kept).
 * The ratio is what is left of a refold.
 */
import { rmSync } from 'node:fs';
import { Journal } from '../src-main/journal/journal';
import { silentLogger } from '../src-main/base/logger';
import { loadPolicy } from '../src-main/plane/plane-config';
import { createLocalProvider } from '../src-main/providers/local-provider';
import { Runtime } from '../src-main/runtime/runtime';
import { builtinTools, workspaceOf } from '../src-main/runtime/tools';
import { runDrafts, tempDataDir } from '../tests/support/journal-support';
import type { Benchmark, BenchResult } from './bench-types';

const EFFECTS = 50_000;
const ROUNDS = 7;
const RUN_ID = `run-${'1'.padStart(20, '0')}`;

const runtimeOver = (journal: Journal, dataDir: string) =>
  Runtime.create({ journal, agents: [], policy: loadPolicy(dataDir), providers: new Map([['local', createLocalProvider()]]), tools: builtinTools, toolContext: { workspace: workspaceOf(dataDir) }, logger: silentLogger });

async function run(): Promise<BenchResult> {
  const dataDir = tempDataDir('agentplane-bench-history-fold-');
  const journal = await Journal.open({ dataDir });
  try {
    const drafts = runDrafts(RUN_ID, EFFECTS);
    for (let at = 0; at < drafts.length; at += 1000) await journal.appendBatch(drafts.slice(at, at + 1000));
    const kept = await runtimeOver(journal, dataDir);
    await kept.summary(RUN_ID);
    const incremental: number[] = [];
    const full: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      await journal.append({ runId: RUN_ID, kind: 'Cancelled', body: { by: 'user:local', reason: `round ${round}` } });
      let started = performance.now();
      const grown = await kept.summary(RUN_ID);
      incremental.push(performance.now() - started);
      const fresh = await runtimeOver(journal, dataDir);
      started = performance.now();
      const folded = await fresh.summary(RUN_ID);
      full.push(performance.now() - started);
      await fresh.close();
      if (grown.records !== folded.records || grown.lastSeq !== folded.lastSeq) throw new Error(`the folded-on summary (${grown.records} records) is not the fresh fold's (${folded.records})`);
    }
    await kept.close();
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    return {
      subject: `runtime.summary of a ${(drafts.length + 1).toLocaleString('en')}-record run after one more record (the kept fold goes on)`,
      baseline: 'the same summary folded from the run’s first record (a fresh runtime over the same journal)',
      measurements: [{ metric: 'summary after the run grew (median)', unit: 'ms', subject: median(incremental), baseline: median(full), better: 'lower', judged: true }],
      notes: [`${ROUNDS} rounds, each appending one record and asking both; every round's two summaries agree on records and last seq`],
    };
  } finally {
    await journal.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'history-fold',
  goal: { maxRatio: 0.05, text: 'a grown long run’s summary ≤ 0.05× folding it again from its first record' },
  run,
};
export default benchmark;
