/**
 * What erasing a subject costs (docs/ERASURE.md): it destroys keys and journals one
 * SubjectErased record, so its time does not grow with the records sealed under the keys.
 * Subject: `erasure.erase` of a subject with 100,000 sealed records. Baseline: `erasure.erase`
 * of a subject with one sealed record, in the same journal and run. The goal is also stated
 * absolutely: under 1 s for the 100,000-record subject (the note says the time).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyRecordDraft } from '../src-shared/journal/records';
import { Journal } from '../src-main/journal/journal';
import { erasureHandlers } from '../src-main/plane/erasure-handlers';
import { ZERO_SPEND } from '../tests/support/journal-support';
import type { Benchmark, BenchResult } from './bench-types';

const RECORDS = 100_000;
const BATCH = 1000;
const ROUNDS = 3;

/** One run of `owner` with `effects` effects: 2 + 2 × effects records, every payload sealed. */
function runOf(runId: string, owner: string, effects: number): AnyRecordDraft[] {
  const out: AnyRecordDraft[] = [
    { runId, kind: 'RunAdmitted', body: { agent: 'echo', owner, chain: [owner], input: { text: `input of ${runId}` }, inputProvenance: owner, budget: { maxEffects: effects + 1 }, trigger: { via: 'cli', by: owner } } },
  ];
  for (let step = 0; step < effects; step++) {
    const key = (step + 1).toString(16).padStart(64, '0');
    out.push({ runId, kind: 'EffectStarted', body: { step, effect: 'tool', name: 'echo', key, request: { n: step, text: 'a request' } } });
    out.push({ runId, kind: 'EffectDone', body: { step, key, result: { echoed: step }, spend: { ...ZERO_SPEND, effects: 1 }, provenance: 'plane' } });
  }
  out.push({ runId, kind: 'RunSealed', body: { outcome: 'succeeded', result: { done: true }, spend: { ...ZERO_SPEND, effects }, records: out.length } });
  return out;
}

async function run(): Promise<BenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-erasure-erase-'));
  const journal = await Journal.open({ dataDir: join(root, 'data'), sealPayloads: true, checkpointEvery: 1_000_000 });
  try {
    const handlers = erasureHandlers(journal, 'bench:dpo');
    const ctx = {} as never;
    let big = 0;
    let small = 0;
    for (let round = 0; round < ROUNDS; round++) {
      // One big subject: runs of 499 effects (1,000 records each), 100 of them.
      const bigOwner = `user:big-${round}`;
      for (let r = 0; r < RECORDS / BATCH; r++) await journal.appendBatch(runOf(`run-big-${round}-${r}`, bigOwner, (BATCH - 2) / 2));
      const smallOwner = `user:small-${round}`;
      await journal.appendBatch(runOf(`run-small-${round}`, smallOwner, 0).slice(0, 1));
      // Both erasures start from a checkpointed journal, so neither pays for the appends before them.
      await journal.checkpoint();
      const time = async (subject: string) => {
        const started = performance.now();
        await handlers['erasure.erase']({ subject, reason: 'benchmark' }, ctx);
        return performance.now() - started;
      };
      if (round % 2 === 0) {
        big += await time(bigOwner);
        small += await time(smallOwner);
      } else {
        small += await time(smallOwner);
        big += await time(bigOwner);
      }
    }
    return {
      subject: `erasure.erase of a subject with ${RECORDS.toLocaleString('en')} sealed records`,
      baseline: 'erasure.erase of a subject with one sealed record, same journal',
      measurements: [{ metric: 'erase', unit: 'ms', subject: big / ROUNDS, baseline: small / ROUNDS, better: 'lower', judged: true }],
      notes: [`goal under 1 s for ${RECORDS.toLocaleString('en')} records: ${(big / ROUNDS).toFixed(1)} ms (mean of ${ROUNDS}); the journal held ${(await journal.head()).seq.toLocaleString('en')} records at the end`],
    };
  } finally {
    await journal.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'erasure-erase',
  goal: { maxRatio: 10, text: 'erasing a subject of 100,000 records ≤ 10× erasing one of 1 record (only keys are destroyed: linear would be 100,000×), and under 1 s (the note)' },
  run,
};
export default benchmark;
