/**
 * The contract between bench/run.ts and every benchmark. A benchmark measures a subject against
 * a baseline in the same process and the same run (so machine load, CPU frequency and Node
 * version cancel out of the ratio), and states its goal as a ratio the subject may cost.
 *
 * A bench file is `bench/<name>.bench.ts` with a default export satisfying `Benchmark`; the
 * runner finds it by that name, so adding a benchmark touches no other file.
 */

/** One measured quantity, for the subject and the baseline. */
export interface Measurement {
  /** e.g. "p50 latency", "throughput". */
  metric: string;
  /** e.g. "µs", "req/s". */
  unit: string;
  subject: number;
  baseline: number;
  /** Which direction is better; it decides how the ratio is taken (see `costRatio`). */
  better: 'lower' | 'higher';
  /**
   * Whether the goal judges this line. Tail latencies are shown but not judged: one GC pause
   * or scheduler hiccup moves a p99 more than any code change does.
   */
  judged: boolean;
}

export interface BenchResult {
  /** What was measured, in words: "plane.status through startWebBridge". */
  subject: string;
  /** What it was compared with, in words. */
  baseline: string;
  measurements: Measurement[];
  /** Iteration counts, concurrency, anything a reader needs to trust or repeat the numbers. */
  notes?: string[];
}

export interface BenchGoal {
  /** The most the subject may cost relative to the baseline on every judged measurement. */
  maxRatio: number;
  /** The goal in words, printed beside the verdict. */
  text: string;
}

export interface Benchmark {
  name: string;
  goal: BenchGoal;
  /**
   * A scale probe (bench/scale-*.bench.ts): minutes of work on a journal of millions of records,
   * too slow for the default run. bench/run.ts runs these only given `--scale`, and only these then.
   */
  scale?: boolean;
  run(): Promise<BenchResult>;
}

/**
 * The subject's cost in multiples of the baseline's: above 1 means the subject is slower,
 * whichever way the metric points (a latency twice as long and a throughput half as high are
 * both 2×).
 */
export function costRatio(m: Measurement): number {
  return m.better === 'lower' ? m.subject / m.baseline : m.baseline / m.subject;
}
