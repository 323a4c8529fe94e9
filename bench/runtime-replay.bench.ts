/**
 * What replay buys and what journaling costs, on a 10,000-effect run.
 *
 * Subject: resuming that run by replay (read its 20,001 records, fold them, run its code again
 * with every effect answered from the record). Baseline: performing it the first time (each
 * effect journaled as EffectStarted and EffectDone, each a durable commit under
 * synchronous=FULL). The goal is replay at least 20 times faster: a resumed run must not
 * re-pay its history. The first run is performed once (it writes the history); the replay,
 * which writes nothing, is run REPLAYS times and its median judged: one replay alone swung from
 * 278 ms to 538 ms between two runs of the bench on one machine, across the goal.
 *
 * The second line is the per-effect journaling overhead: the same effect (a small file write
 * into the workspace) performed bare versus through cx.effect. No goal is set by the issue;
 * it is reported so that a change to the effect path shows up as a number.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal } from '../src-main/journal/journal';
import { RunContext, type RunGovernance } from '../src-main/runtime/run-context';
import { readRunHistory } from '../src-main/runtime/run-history';
import { NO_SPEND } from '../src-shared/vocabulary/spend';
import type { Benchmark, BenchResult } from './bench-types';

const EFFECTS = 10_000;
const OVERHEAD_SAMPLES = 2_000;
const REPLAYS = 5;
const governance: RunGovernance = { grants: new Map([['tool:note', { approve: false }]]), approveEveryEffect: false, haltedBy: () => null, cancelRequested: () => false };

async function runProgram(cx: RunContext, workspace: string, effects: number): Promise<void> {
  for (let i = 0; i < effects; i++) {
    await cx.effect({
      effect: 'tool',
      name: 'note',
      request: { i },
      grant: 'tool:note',
      estimate: NO_SPEND,
      perform: async () => {
        writeFileSync(join(workspace, 'note.txt'), String(i));
        return { result: { i }, spend: { ...NO_SPEND, effects: 1 }, provenance: 'plane' };
      },
    });
  }
}

const benchmark: Benchmark = {
  name: 'runtime-replay',
  goal: { maxRatio: 0.05, text: 'replay of a 10,000-effect run at least 20× faster than performing it' },
  async run(): Promise<BenchResult> {
    const dir = mkdtempSync(join(tmpdir(), 'ap-bench-replay-'));
    try {
      const journal = await Journal.open({ dataDir: dir });
      const runId = 'run-0000000000000000beef';
      await journal.append({ runId, kind: 'RunAdmitted', body: { agent: 'bench', owner: 'user:local', chain: ['user:local'], input: {}, inputProvenance: 'user:local', budget: {}, trigger: { via: 'cli', by: 'user:local' } } });

      let t0 = performance.now();
      await runProgram(new RunContext(readRunHistory(await journal.readRun(runId, 1, 1e9)), journal, governance), dir, EFFECTS);
      const firstMs = performance.now() - t0;

      const head = (await journal.head()).seq;
      const replays: number[] = [];
      for (let i = 0; i < REPLAYS; i++) {
        t0 = performance.now();
        await runProgram(new RunContext(readRunHistory(await journal.readRun(runId, 1, 1e9)), journal, governance), dir, EFFECTS);
        replays.push(performance.now() - t0);
        if ((await journal.head()).seq !== head) throw new Error('replay wrote records: it performed something again');
      }
      replays.sort((a, b) => a - b);
      const replayMs = replays[Math.floor(REPLAYS / 2)]!;

      // Per-effect overhead: the same file write, bare and journaled, interleaved in blocks.
      const runId2 = 'run-0000000000000000cafe';
      await journal.append({ runId: runId2, kind: 'RunAdmitted', body: { agent: 'bench', owner: 'user:local', chain: ['user:local'], input: {}, inputProvenance: 'user:local', budget: {}, trigger: { via: 'cli', by: 'user:local' } } });
      const cx = new RunContext(readRunHistory(await journal.readRun(runId2, 1, 10)), journal, governance);
      let bareMs = 0;
      let journaledMs = 0;
      for (let block = 0; block < 10; block++) {
        t0 = performance.now();
        for (let i = 0; i < OVERHEAD_SAMPLES / 10; i++) writeFileSync(join(dir, 'note.txt'), String(i));
        bareMs += performance.now() - t0;
        t0 = performance.now();
        await runProgram(cx, dir, OVERHEAD_SAMPLES / 10);
        journaledMs += performance.now() - t0;
      }
      await journal.close();
      return {
        subject: 'replaying the run (records read, folded, every effect answered from the record)',
        baseline: 'performing it the first time (2 durable commits per effect, synchronous=FULL)',
        measurements: [
          { metric: `time for ${EFFECTS.toLocaleString('en-US')} effects`, unit: 'ms', subject: replayMs, baseline: firstMs, better: 'lower', judged: true },
          { metric: 'per-effect cost: journaled vs bare file write', unit: 'µs', subject: (journaledMs * 1000) / OVERHEAD_SAMPLES, baseline: (bareMs * 1000) / OVERHEAD_SAMPLES, better: 'lower', judged: false },
        ],
        notes: [
          `first run ${firstMs.toFixed(0)} ms (${((firstMs * 1000) / EFFECTS).toFixed(0)} µs/effect), replay ${replayMs.toFixed(0)} ms (median of ${REPLAYS}, ${replays[0]!.toFixed(0)}–${replays[REPLAYS - 1]!.toFixed(0)} ms): ${(firstMs / replayMs).toFixed(1)}× faster`,
        ],
      };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};

export default benchmark;
