/**
 * What sealing payloads costs an append (docs/ERASURE.md). Subject: `Journal.append` and
 * `Journal.appendBatch` (100 per commit) on a journal that seals payloads (the run's input, each
 * effect's request and result, the seal's result encrypted as slices of the owner's AES-256-CTR
 * stream for the month, the sealed body's text written around them). Baseline: the same appends of
 * the same drafts on a journal that does not seal, in the same process and run, rounds
 * alternating which goes first. The ratio is what sealing adds to a durable append.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyRecordDraft } from '../src-shared/journal/records';
import { Journal } from '../src-main/journal/journal';
import { runDrafts } from '../tests/support/journal-support';
import type { Benchmark, BenchResult } from './bench-types';

const ROUNDS = 6;
const SINGLES_PER_ROUND = 300;
const GROUP_SIZE = 100;
const GROUPS_PER_ROUND = 30;

const yieldOnce = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Drafts of whole runs (admitted, 5 effects, sealed: 12 records each), made before anything is timed. */
function drafts(count: number, prefix: string): AnyRecordDraft[] {
  const out: AnyRecordDraft[] = [];
  for (let run = 0; out.length < count; run++) out.push(...runDrafts(`${prefix}-${run}`, 5));
  return out.slice(0, count);
}

async function run(): Promise<BenchResult> {
  const root = mkdtempSync(join(tmpdir(), 'agentplane-bench-erasure-append-'));
  const sealed = await Journal.open({ dataDir: join(root, 'sealed'), sealPayloads: true });
  const clear = await Journal.open({ dataDir: join(root, 'clear'), sealPayloads: false });
  try {
    const perSide = (ROUNDS + 1) * (SINGLES_PER_ROUND + GROUPS_PER_ROUND * GROUP_SIZE);
    const source = { sealed: drafts(perSide, 'sealed'), clear: drafts(perSide, 'clear') };
    const at = { sealed: 0, clear: 0 };
    const singles = async (side: 'sealed' | 'clear', n: number) => {
      const journal = side === 'sealed' ? sealed : clear;
      for (let i = 0; i < n; i++) {
        await journal.append(source[side][at[side]++]!);
        await yieldOnce();
      }
    };
    const groups = async (side: 'sealed' | 'clear', n: number) => {
      const journal = side === 'sealed' ? sealed : clear;
      for (let i = 0; i < n; i++) {
        await journal.appendBatch(source[side].slice(at[side], at[side] + GROUP_SIZE));
        at[side] += GROUP_SIZE;
        await yieldOnce();
      }
    };
    // Warm-up: one round each, untimed.
    for (const side of ['sealed', 'clear'] as const) {
      await singles(side, SINGLES_PER_ROUND);
      await groups(side, GROUPS_PER_ROUND);
    }
    const ms = { sealedSingle: 0, clearSingle: 0, sealedGroup: 0, clearGroup: 0 };
    const timed = async (work: () => Promise<void>) => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (['sealed', 'clear'] as const) : (['clear', 'sealed'] as const);
      for (const side of order) ms[`${side}Single`] += await timed(() => singles(side, SINGLES_PER_ROUND));
      for (const side of order) ms[`${side}Group`] += await timed(() => groups(side, GROUPS_PER_ROUND));
    }
    const us = (total: number, count: number) => (total * 1000) / count;
    const singleCount = ROUNDS * SINGLES_PER_ROUND;
    const groupCount = ROUNDS * GROUPS_PER_ROUND * GROUP_SIZE;
    return {
      subject: 'Journal.append / appendBatch with payload sealing (slices of the owner’s AES-256-CTR stream)',
      baseline: 'the same appends of the same kind of drafts on a journal that does not seal',
      measurements: [
        { metric: 'per record, one per commit', unit: 'µs', subject: us(ms.sealedSingle, singleCount), baseline: us(ms.clearSingle, singleCount), better: 'lower', judged: true },
        { metric: `per record, ${GROUP_SIZE} per commit`, unit: 'µs', subject: us(ms.sealedGroup, groupCount), baseline: us(ms.clearGroup, groupCount), better: 'lower', judged: true },
      ],
      notes: [`${ROUNDS} rounds of ${SINGLES_PER_ROUND} single appends and ${GROUPS_PER_ROUND} group commits of ${GROUP_SIZE} per side, alternating which side goes first; drafts from runDrafts (12 records a run, 8 of them sealed)`],
    };
  } finally {
    await sealed.close();
    await clear.close();
    rmSync(root, { recursive: true, force: true });
  }
}

const benchmark: Benchmark = {
  name: 'erasure-append',
  goal: { maxRatio: 1.2, text: 'an append with payload sealing ≤ 1.2× the same append without' },
  run,
};
export default benchmark;
