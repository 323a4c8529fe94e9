/**
 * Prints where a saved CPU profile's time went: the functions with the most self time, then the
 * call tree (bench/cpu-profile.ts, callTree). For the profiles a bench or a person takes with
 * `node --cpu-prof` (one file per thread: a worker's profile is its own), so the next look at a
 * hot path starts from data rather than from a script rewritten for the occasion.
 *
 *   npm run profile -- <file.cpuprofile> [--root <regex>] [--min-ms <ms>] [--depth <n>] [--per <count>] [--top <n>]
 *
 * --root narrows the tree to the calls of the functions whose name matches (e.g. `^appendBatch$`);
 * --per divides every time by a count (the calls or records the profile covered) and prints µs
 * each, so trees of runs of different lengths compare directly.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { callTree, summariseProfile, type CpuProfile } from './cpu-profile';

function main(argv: string[]): void {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      root: { type: 'string' },
      'min-ms': { type: 'string', default: '1' },
      depth: { type: 'string' },
      per: { type: 'string' },
      top: { type: 'string', default: '15' },
    },
  });
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new Error('usage: npm run profile -- <file.cpuprofile> [--root <regex>] [--min-ms <ms>] [--depth <n>] [--per <count>] [--top <n>]');
  const number = (name: string, text: string | undefined, integer: boolean): number | undefined => {
    if (text === undefined) return undefined;
    const value = Number(text);
    if (!Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value)) || (name === 'per' && value === 0)) {
      throw new Error(`--${name} must be a ${integer ? 'whole ' : ''}number${name === 'per' ? ' above 0' : ' of 0 or more'}, not ${JSON.stringify(text)}`);
    }
    return value;
  };
  const minMs = number('min-ms', values['min-ms'], false) ?? 1;
  const maxDepth = number('depth', values.depth, true);
  const per = number('per', values.per, false);
  const top = number('top', values.top, true) ?? 15;
  let root: RegExp | undefined;
  if (values.root !== undefined) {
    try {
      root = new RegExp(values.root);
    } catch (error) {
      throw new Error(`--root is not a regular expression: ${(error as Error).message}`);
    }
  }
  let profile: CpuProfile;
  try {
    profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  } catch (error) {
    throw new Error(`${file} could not be read as a CPU profile: ${(error as Error).message}`);
  }
  if (!Array.isArray(profile.nodes)) throw new Error(`${file} is not a CPU profile (no "nodes" array)`);

  const time = (ms: number) => (per === undefined ? `${ms.toFixed(1).padStart(9)} ms` : `${((ms * 1000) / per).toFixed(2).padStart(9)} µs`);
  const summary = summariseProfile(profile, top);
  console.log(`${(summary.busyMs / 1000).toFixed(2)} s busy, ${(summary.idleMs / 1000).toFixed(2)} s idle${per === undefined ? '' : `; times below are per one of ${per}`}`);
  console.log('top functions by self time:');
  for (const f of summary.top) console.log(`${f.percent.toFixed(1).padStart(6)}% ${time(f.selfMs)}  ${f.where}`);
  const lines = callTree(profile, { root, minMs, ...(maxDepth === undefined ? {} : { maxDepth }) });
  console.log(root ? `call tree under ${root} (total, self):` : 'call tree (total, self):');
  if (lines.length === 0) console.log(root ? `  no call of a function matching ${root} took ${minMs} ms or more` : '  empty');
  for (const line of lines) console.log(`${'  '.repeat(line.depth)}${time(line.totalMs)} ${time(line.selfMs).trim().padStart(12)}  ${line.where}`);
}

try {
  main(process.argv.slice(2));
} catch (error) {
  console.error(`profile: ${(error as Error).message}`);
  process.exitCode = 2;
}
