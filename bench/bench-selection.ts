/**
 * Which benchmarks a run of bench/run.ts takes, from its command line: the default run skips the
 * scale probes (`scale: true`, bench/scale-*.bench.ts), which take minutes on a journal of
 * millions of records; `--scale` runs them and only them. Name filters apply either way.
 */
import type { Benchmark } from './bench-types';

/** The flag that runs the scale probes (and only them). */
export const SCALE_FLAG = '--scale';

/** The command line read: whether to run the scale probes, and the name filters; an unknown flag is refused. */
export function parseBenchArgs(argv: readonly string[]): { scale: boolean; filters: string[] } {
  const unknown = argv.find((arg) => arg.startsWith('-') && arg !== SCALE_FLAG);
  if (unknown !== undefined) throw new Error(`unknown option ${unknown}: the runner takes ${SCALE_FLAG} and benchmark names`);
  return { scale: argv.includes(SCALE_FLAG), filters: argv.filter((arg) => arg !== SCALE_FLAG) };
}

/** The benchmarks a run takes: the scale probes with `scale`, the others without; then those a filter names (all when none does). */
export function selectBenchmarks(all: readonly Benchmark[], scale: boolean, filters: readonly string[]): Benchmark[] {
  const kind = all.filter((b) => (b.scale === true) === scale);
  return filters.length === 0 ? kind : kind.filter((b) => filters.some((f) => b.name.includes(f)));
}
