/**
 * Timing loops shared by benchmarks. Subject and baseline are always interleaved: the
 * sequential pass alternates them request by request (swapping which goes first each time),
 * and the throughput pass alternates whole rounds. Drift during the run (a CPU that warms up
 * and throttles, a GC that comes due, another process waking) then lands on both sides instead
 * of on whichever was measured second.
 */

export type Operation = () => Promise<void>;

/** Nearest-rank percentile of already sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error('percentile of no values');
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1]!;
}

export interface LatencySummary {
  p50: number;
  p99: number;
  mean: number;
  samples: number;
}

export function summarise(latenciesUs: readonly number[]): LatencySummary {
  const sorted = [...latenciesUs].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((sum, v) => sum + v, 0) / sorted.length,
    samples: sorted.length,
  };
}

/** Runs each operation `iterations` times, one call at a time, interleaved; latencies in µs. */
export async function interleavedLatencies(operations: readonly Operation[], iterations: number): Promise<number[][]> {
  const latencies = operations.map(() => [] as number[]);
  for (let i = 0; i < iterations; i += 1) {
    // Rotate the order so no operation always runs right after the same neighbour.
    for (let k = 0; k < operations.length; k += 1) {
      const index = (i + k) % operations.length;
      const started = process.hrtime.bigint();
      await operations[index]!();
      latencies[index]!.push(Number(process.hrtime.bigint() - started) / 1000);
    }
  }
  return latencies;
}

/** `count` calls of `operation` with `concurrency` in flight at once; resolves with the elapsed ms. */
export async function timedConcurrent(operation: Operation, count: number, concurrency: number): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      await operation();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return performance.now() - started;
}

/** Requests per second for each operation, measured in alternating rounds. */
export async function interleavedThroughput(
  operations: readonly Operation[],
  options: { concurrency: number; requestsPerRound: number; rounds: number },
): Promise<number[]> {
  const elapsedMs = operations.map(() => 0);
  for (let round = 0; round < options.rounds; round += 1) {
    for (let k = 0; k < operations.length; k += 1) {
      const index = (round + k) % operations.length;
      elapsedMs[index]! += await timedConcurrent(operations[index]!, options.requestsPerRound, options.concurrency);
    }
  }
  return elapsedMs.map((ms) => (options.requestsPerRound * options.rounds) / (ms / 1000));
}
