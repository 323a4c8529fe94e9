/**
 * Scale probe: does a durable append cost more on a journal of 10,000,000 records than on one of
 * 100,000? Subject: `Journal.append` (one record a commit) and `Journal.appendBatch` (100 a
 * commit) on a copy of the large generated journal (BENCH_SCALE_RECORDS, default 10,000,000;
 * tests/support/scale-journal-generator.ts); baseline: the same on a copy of the 100,000-record
 * one. Both are open in this process at once, the same realistic drafts go to each, and the two
 * alternate within every round (the order swapping each round), so load and the disk's mood fall
 * on both alike. What could grow with the journal: the B-tree depth of the records table and its
 * indexes (each insert walks them), the chain's prevHash lookup, the Merkle accumulator (log n
 * frontier) and the checkpoints every 1,000 records. Goal: ≤ 1.1×.
 */
import type { AnyRecordDraft } from '../src-shared/journal/records';
import { Journal } from '../src-main/journal/journal';
import { scaleDrafts } from '../tests/support/scale-journal-generator';
import type { Benchmark, BenchResult } from './bench-types';
import { summarise } from './measure';
import { copyOfDataDir, count, originNote, scaleJournal, scaleRecords, SMALL_RECORDS } from './scale-support';

/**
 * Many short rounds, judged by the median round: a commit's fdatasync dominates a single append,
 * and on a shared machine one burst of another process's writes moves a whole long round.
 */
const ROUNDS = 24;
const SINGLES_PER_ROUND = 60;
const GROUP_SIZE = 100;
const GROUPS_PER_ROUND = 6;
const WARM_UP = 100;
/** Past the run count of any generated journal (10,000,000 records hold about 600,000 runs). */
const NEW_RUNS_FROM = 0x1000_0000;

const yieldOnce = () => new Promise<void>((resolve) => setImmediate(resolve));

interface Side {
  journal: Journal;
  next: () => AnyRecordDraft;
  /** µs a record, one entry a round. */
  singles: number[];
  groups: number[];
  /** CPU µs (this process, every thread) a record over the groups: against their wall time, what was work and what was waiting on the disk. */
  groupsCpu: number[];
}

function draftsFrom(seed: number): () => AnyRecordDraft {
  // New runs, admitted after every run the journals hold (their ids rise past them, as a plane's do).
  const drafts = scaleDrafts(10_000_000, seed, NEW_RUNS_FROM);
  return () => {
    const next = drafts.next();
    if (next.done) throw new Error('the draft source ran dry');
    return next.value;
  };
}

async function singles(side: Side, n: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    await side.journal.append(side.next());
    // As a real caller doing I/O between appends: the periodic checkpoint is signed in the timing.
    await yieldOnce();
  }
  return performance.now() - started;
}

async function groups(side: Side, n: number): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < n; i++) {
    await side.journal.appendBatch(Array.from({ length: GROUP_SIZE }, side.next));
    await yieldOnce();
  }
  return performance.now() - started;
}

async function run(): Promise<BenchResult> {
  const records = scaleRecords();
  const large = await scaleJournal(records);
  const small = await scaleJournal(SMALL_RECORDS);
  const largeCopy = copyOfDataDir(large.dataDir, 'append-large');
  const smallCopy = copyOfDataDir(small.dataDir, 'append-small');
  try {
    const openStarted = performance.now();
    const largeJournal = await Journal.open({ dataDir: largeCopy.dataDir, sealPayloads: false });
    const largeOpenMs = performance.now() - openStarted;
    const smallJournal = await Journal.open({ dataDir: smallCopy.dataDir, sealPayloads: false });
    // The same drafts to both, so each side writes the same bytes.
    const sides: Side[] = [
      { journal: largeJournal, next: draftsFrom(7), singles: [], groups: [], groupsCpu: [] },
      { journal: smallJournal, next: draftsFrom(7), singles: [], groups: [], groupsCpu: [] },
    ];
    try {
      for (const side of sides) {
        await singles(side, WARM_UP);
        await groups(side, WARM_UP / 10);
      }
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? sides : [...sides].reverse();
        for (const side of order) side.singles.push(((await singles(side, SINGLES_PER_ROUND)) * 1000) / SINGLES_PER_ROUND);
        for (const side of order) {
          const cpu = process.cpuUsage();
          side.groups.push(((await groups(side, GROUPS_PER_ROUND)) * 1000) / (GROUPS_PER_ROUND * GROUP_SIZE));
          const used = process.cpuUsage(cpu);
          side.groupsCpu.push((used.user + used.system) / (GROUPS_PER_ROUND * GROUP_SIZE));
        }
      }
      const [big, base] = sides as [Side, Side];
      const p50 = (values: number[]) => summarise(values).p50;
      const mean = (values: number[]) => summarise(values).mean;
      return {
        subject: `durable append on a ${count(records)}-record journal (a copy of the generated one)`,
        baseline: `the same appends on a ${count(SMALL_RECORDS)}-record journal generated the same way`,
        measurements: [
          { metric: 'one record a commit, per record (median round)', unit: 'µs', subject: p50(big.singles), baseline: p50(base.singles), better: 'lower', judged: true },
          { metric: `${GROUP_SIZE} records a commit, per record (median round)`, unit: 'µs', subject: p50(big.groups), baseline: p50(base.groups), better: 'lower', judged: true },
          { metric: `${GROUP_SIZE} records a commit, CPU per record (median round)`, unit: 'µs', subject: p50(big.groupsCpu), baseline: p50(base.groupsCpu), better: 'lower', judged: false },
          { metric: 'one record a commit, per record (mean)', unit: 'µs', subject: mean(big.singles), baseline: mean(base.singles), better: 'lower', judged: false },
          { metric: `${GROUP_SIZE} records a commit, per record (mean)`, unit: 'µs', subject: mean(big.groups), baseline: mean(base.groups), better: 'lower', judged: false },
        ],
        notes: [
          `large: ${originNote(large)}`,
          `small: ${originNote(small)}`,
          `copies made for this run (the cache is never written): large ${largeCopy.seconds.toFixed(0)} s, small ${smallCopy.seconds.toFixed(1)} s; Journal.open of the large copy ${largeOpenMs.toFixed(0)} ms`,
          `${ROUNDS} rounds of ${SINGLES_PER_ROUND} single appends and ${GROUPS_PER_ROUND} groups of ${GROUP_SIZE} on each side, alternating (order swapped each round), after ${WARM_UP} singles and ${WARM_UP / 10} groups each; drafts from the generator (seed 7), the same to both`,
        ],
      };
    } finally {
      await largeJournal.close();
      await smallJournal.close();
    }
  } finally {
    largeCopy.remove();
    smallCopy.remove();
  }
}

const benchmark: Benchmark = {
  name: 'scale-append',
  scale: true,
  goal: { maxRatio: 1.1, text: 'a durable append on the 10M-record journal ≤ 1.1× the same append on a 100k-record one, one a commit and 100 a commit' },
  run,
};

export default benchmark;
