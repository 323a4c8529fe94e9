/**
 * Borderline verdicts, run again. On these machines one run of a bench moves by more than
 * several goals' margins (measured: acp-tap's pipe baseline 68k–111k msg/s in one morning,
 * timeline's longest frame 1.09–2.98× of its baseline across three runs, journal-append's
 * single-record ratio 1.27–1.28 against a goal of 1.25), so a verdict from one run near its
 * goal says little: the next run may flip it. The runner (run.ts) therefore runs a bench
 * whose worst judged ratio lands within BORDERLINE_MARGIN of its goal again, up to
 * BENCH_BORDERLINE_RUNS runs in all, and judges the median run: the run whose worst judged
 * ratio is the median of them all, printed whole, with every run's ratio beside it. A bench
 * far from its goal either way runs once, as before.
 */
import { costRatio, type BenchResult, type Measurement } from './bench-types';

/** How near its goal (as a share of it, either side) a worst judged ratio must be to be run again. */
export const BORDERLINE_MARGIN = 0.15;
/** Runs in all for a borderline bench, unless BENCH_BORDERLINE_RUNS says otherwise (1: never again). */
export const DEFAULT_BORDERLINE_RUNS = 3;

/** The judged measurement that costs the most relative to its baseline; it decides the verdict. */
export function worstJudged(result: BenchResult): Measurement | undefined {
  return result.measurements.filter((m) => m.judged).sort((a, b) => costRatio(b) - costRatio(a))[0];
}

/** The worst judged ratio of a run, or undefined when nothing in it is judged. */
export function worstRatio(result: BenchResult): number | undefined {
  const worst = worstJudged(result);
  return worst ? costRatio(worst) : undefined;
}

/** Whether a run's worst judged ratio is near enough its goal that one run cannot settle it. */
export function isBorderline(ratio: number | undefined, maxRatio: number, margin: number = BORDERLINE_MARGIN): boolean {
  if (ratio === undefined || !Number.isFinite(ratio)) return false;
  return Math.abs(ratio - maxRatio) <= margin * maxRatio;
}

/** BENCH_BORDERLINE_RUNS as a whole number of runs ≥ 1; throws, naming the value, on anything else. */
export function borderlineRuns(raw: string | undefined): number {
  if (raw === undefined || raw === '') return DEFAULT_BORDERLINE_RUNS;
  const runs = Number(raw);
  if (!Number.isInteger(runs) || runs < 1 || runs > 15) throw new Error(`BENCH_BORDERLINE_RUNS must be a whole number of runs from 1 to 15, got ${JSON.stringify(raw)}`);
  return runs;
}

/**
 * The run to judge among several of one bench: the one whose worst judged ratio is the median
 * (of an even count, the better of the two middle runs). Runs with nothing judged sort last.
 */
export function medianRun<T extends { result: BenchResult }>(runs: readonly T[]): T {
  if (runs.length === 0) throw new Error('medianRun needs at least one run');
  const ranked = [...runs].sort((a, b) => (worstRatio(a.result) ?? Infinity) - (worstRatio(b.result) ?? Infinity));
  return ranked[Math.floor((ranked.length - 1) / 2)]!;
}
