/**
 * The benchmark runner: `node --import tsx bench/run.ts [--scale] [name …]` (or `npm run bench`,
 * which builds first). It runs every `bench/*.bench.ts` (or those whose name contains one of the
 * arguments), one after another so they do not compete for the CPU, prints each one's
 * measurements side by side with its baseline, and ends with a table of ratios and a PASS or
 * MISS against each goal.
 *
 * A MISS does not fail the process: benchmarks are measurements, not tests, and a noisy machine
 * must not turn a build red. A benchmark that throws does (exit 1): that is a broken benchmark,
 * not a slow subject.
 *
 * Every benchmark's run is wrapped in a CPU profile of this process (cpu-profile.ts), and the
 * functions with the most self time are printed under its results, so the next person starts
 * from data. The whole measured run is profiled rather than an extra pass after it: subject and
 * baseline are interleaved in the same run, so both are measured under the same sampling
 * profiler (V8 samples the stack about once a millisecond and costs both sides alike), and the
 * ratio stays a like-for-like comparison; an extra unprofiled-vs-profiled pass would double the
 * long benches (timeline, memory) for a number the ratio does not need. BENCH_PROFILE=0 turns
 * the profile off, to check that a ratio does not move without it.
 *
 * Scale probes (`scale: true`, bench/scale-*.bench.ts: a journal of millions of records) take
 * minutes and are skipped unless `--scale` is given; with it, only they run (the name filters
 * still apply among them).
 *
 * A bench whose worst judged ratio lands near its goal is run again and judged by its median
 * run (borderline.ts); BENCH_BORDERLINE_RUNS sets how many runs in all (default 3, 1: once).
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { costRatio, type Benchmark, type BenchResult } from './bench-types';
import { parseBenchArgs, SCALE_FLAG, selectBenchmarks } from './bench-selection';
import { borderlineRuns, isBorderline, medianRun, worstJudged, worstRatio } from './borderline';
import { profileNotes, summariseProfile, withCpuProfile, type ProfileSummary } from './cpu-profile';

const BENCH_DIR = import.meta.dirname;
const SUFFIX = '.bench.ts';

interface Outcome {
  benchmark: Benchmark;
  result?: BenchResult;
  error?: unknown;
  seconds: number;
  profile?: ProfileSummary;
  /** Every run's worst judged ratio, when a borderline verdict made the bench run more than once. */
  ratios?: number[];
}

function isBenchmark(value: unknown): value is Benchmark {
  const b = value as Partial<Benchmark> | undefined;
  return (
    typeof b?.name === 'string' &&
    typeof b.run === 'function' &&
    typeof b.goal?.maxRatio === 'number' &&
    typeof b.goal.text === 'string' &&
    (b.scale === undefined || typeof b.scale === 'boolean')
  );
}

async function loadBenchmarks(): Promise<Benchmark[]> {
  const files = readdirSync(BENCH_DIR)
    .filter((file) => file.endsWith(SUFFIX))
    .sort();
  const loaded: Benchmark[] = [];
  for (const file of files) {
    const module = (await import(pathToFileURL(join(BENCH_DIR, file)).href)) as { default?: unknown };
    if (!isBenchmark(module.default)) throw new Error(`${file} must default-export { name, goal: { maxRatio, text }, scale?, run() }`);
    loaded.push(module.default);
  }
  return loaded;
}

function format(value: number): string {
  if (value >= 1000) return Math.round(value).toLocaleString('en-US');
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

const ratioText = (ratio: number) => `${ratio.toFixed(2)}×`;

function table(headers: string[], rows: string[][], alignRight: boolean[] = []): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (alignRight[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const spread = (ratios: readonly number[]) => `${ratioText(Math.min(...ratios))}–${ratioText(Math.max(...ratios))}`;

function printOutcome({ benchmark, result, error, seconds, profile, ratios }: Outcome): void {
  console.log(`\n== ${benchmark.name} (${seconds.toFixed(1)} s)`);
  if (!result) {
    console.log(`   failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    return;
  }
  console.log(`   subject:  ${result.subject}`);
  console.log(`   baseline: ${result.baseline}`);
  console.log(`   goal:     ${benchmark.goal.text}\n`);
  const rows = result.measurements.map((m) => [
    m.metric,
    `${format(m.subject)} ${m.unit}`,
    `${format(m.baseline)} ${m.unit}`,
    ratioText(costRatio(m)),
    m.judged ? (costRatio(m) <= benchmark.goal.maxRatio ? 'within goal' : 'over goal') : 'shown only',
  ]);
  console.log(
    table(['metric', 'subject', 'baseline', 'cost ratio', 'judged'], rows, [false, true, true, true, false])
      .split('\n')
      .map((l) => `   ${l}`)
      .join('\n'),
  );
  // A note starting with spaces continues the one before it (a list under a heading).
  for (const note of result.notes ?? []) console.log(note.startsWith(' ') ? `     ${note.trimStart()}` : `   · ${note}`);
  if (ratios) {
    console.log(`   · borderline: run ${ratios.length} times, worst judged ratios ${ratios.map(ratioText).join(', ')} in run order; shown and judged: the median run (${ratioText(worstRatio(result)!)})`);
  }
  if (profile) {
    const [head, ...top] = profileNotes(profile);
    console.log(`   · ${head}`);
    for (const line of top) console.log(`     ${line}`);
  }
}

async function main(argv: readonly string[]): Promise<number> {
  let args: { scale: boolean; filters: string[] };
  try {
    args = parseBenchArgs(argv);
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  const benchmarks = selectBenchmarks(await loadBenchmarks(), args.scale, args.filters);
  if (benchmarks.length === 0) {
    const which = args.scale ? 'scale probe' : `benchmark (scale probes run only with ${SCALE_FLAG})`;
    console.error(args.filters.length > 0 ? `no ${which} matches ${args.filters.join(', ')}` : `no ${which} found`);
    return 1;
  }
  const outcomes: Outcome[] = [];
  const profiling = process.env.BENCH_PROFILE !== '0';
  let maxRuns: number;
  try {
    maxRuns = borderlineRuns(process.env.BENCH_BORDERLINE_RUNS);
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  for (const benchmark of benchmarks) {
    const started = performance.now();
    const runOnce = async (): Promise<Outcome> => {
      try {
        if (profiling) {
          const { value: result, profile } = await withCpuProfile(() => benchmark.run());
          return { benchmark, result, profile: summariseProfile(profile), seconds: 0 };
        }
        return { benchmark, result: await benchmark.run(), seconds: 0 };
      } catch (error) {
        return { benchmark, error, seconds: 0 };
      }
    };
    const runs = [await runOnce()];
    // Near its goal, one run cannot settle the verdict: run it again (borderline.ts).
    if (runs[0]!.result && isBorderline(worstRatio(runs[0]!.result), benchmark.goal.maxRatio)) {
      while (runs.length < maxRuns) {
        const again = await runOnce();
        runs.push(again);
        if (!again.result) break;
      }
    }
    const failed = runs.find((r) => !r.result);
    const chosen = failed ?? (runs.length === 1 ? runs[0]! : medianRun(runs as Array<Outcome & { result: BenchResult }>));
    const ratios = !failed && runs.length > 1 ? runs.map((r) => worstRatio(r.result!)!) : undefined;
    outcomes.push({ ...chosen, seconds: (performance.now() - started) / 1000, ...(ratios ? { ratios } : {}) });
    printOutcome(outcomes.at(-1)!);
  }

  console.log('\n== summary (cost ratio: subject ÷ baseline cost; 1.00× is as fast as the baseline)\n');
  const rows = outcomes.map(({ benchmark, result, ratios }) => {
    const worst = result ? worstJudged(result) : undefined;
    const ratio = worst ? costRatio(worst) : undefined;
    const verdict = !result ? 'ERROR' : ratio === undefined ? 'n/a' : ratio <= benchmark.goal.maxRatio ? 'PASS' : 'MISS';
    const runs = ratios ? `; median of ${ratios.length} runs, ${spread(ratios)}` : '';
    return [benchmark.name, worst ? `${ratioText(ratio!)} (${worst.metric}${runs})` : '—', `≤ ${ratioText(benchmark.goal.maxRatio)}`, verdict];
  });
  console.log(table(['benchmark', 'worst judged ratio', 'goal', 'verdict'], rows));
  return outcomes.some((o) => o.error !== undefined) ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  },
);
