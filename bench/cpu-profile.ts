/**
 * Where a benchmark's time goes (issue 16, item 6): a CPU profile of the bench process taken
 * with the inspector (V8's sampling profiler, the one `--cpu-prof` writes), summarised as the
 * functions with the most self time. bench/run.ts wraps every benchmark's run in one, so every
 * bench prints a summary without editing it.
 *
 * What the profile sees is this process's main thread: the subject and the baseline where a
 * bench runs them in-process, and only the driving side where it runs them in a child process,
 * a worker thread or a browser (those benches add notes of their own, e.g. serve-startup's
 * phases). Idle time (the thread waiting on I/O, a child or a timer) is reported apart and left
 * out of the percentages, which are shares of the time the thread was busy.
 */
import { relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Session } from 'node:inspector/promises';

/** The parts of a V8 `Profiler.Profile` this summary reads. */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples?: number[];
  timeDeltas?: number[];
}

export interface HotFunction {
  /** `name (file:line)`; a V8 pseudo-frame (GC, program, native) by its own name. */
  where: string;
  selfMs: number;
  /** Share of busy (non-idle) time, 0–100. */
  percent: number;
}

export interface ProfileSummary {
  busyMs: number;
  idleMs: number;
  top: HotFunction[];
}

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A frame's file as a reader finds it: repo-relative, or `<package>/<path>` under node_modules. */
export function displayFile(url: string, root: string = REPO_ROOT): string {
  if (url === '') return '';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const inModules = path.lastIndexOf(`${sep}node_modules${sep}`);
  if (inModules >= 0) return path.slice(inModules + '/node_modules/'.length);
  return path.startsWith(root) ? relative(root, path) : path;
}

type CallFrame = CpuProfile['nodes'][number]['callFrame'];

/**
 * A script's file name from its URL (a page's chunk, say). Not every frame's URL is one: a
 * script injected by the browser's driver is named by its sourceURL alone
 * (`__playwright_evaluation_script__`), and such a name is returned as it is.
 */
export function scriptName(url: string): string {
  const path = URL.canParse(url) ? new URL(url).pathname : url;
  return path.split('/').pop() || url;
}

function frameName(frame: CallFrame, root: string): string {
  const name = frame.functionName || '(anonymous)';
  const file = displayFile(frame.url, root);
  // V8's lineNumber is 0-based; editors and stack traces count from 1.
  return file ? `${name} (${file}:${frame.lineNumber + 1})` : name;
}

/**
 * Self time per function, aggregated over every node of the call tree that is the same
 * function (same name, file and line), largest first; `(idle)` reported apart. `keyOf` groups
 * differently (by package, say); frames with the same key are added up.
 */
export function summariseProfile(
  profile: CpuProfile,
  limit = 8,
  root: string = REPO_ROOT,
  keyOf: (frame: CallFrame) => string = (frame) => frameName(frame, root),
): ProfileSummary {
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  if (samples.length !== deltas.length) throw new Error(`a CPU profile with ${samples.length} samples and ${deltas.length} time deltas is malformed`);
  const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  for (let i = 0; i < samples.length; i += 1) {
    const node = nodeById.get(samples[i]!);
    if (!node) throw new Error(`a CPU profile sample names node ${samples[i]}, which the profile does not hold`);
    // A sample's time is the gap to the next one (V8 records the gap before each sample).
    const us = Math.max(0, deltas[i + 1] ?? 0);
    if (node.callFrame.functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const key = keyOf(node.callFrame);
    selfUs.set(key, (selfUs.get(key) ?? 0) + us);
  }
  const top = [...selfUs]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([where, us]) => ({ where, selfMs: us / 1000, percent: busyUs === 0 ? 0 : (100 * us) / busyUs }));
  return { busyMs: busyUs / 1000, idleMs: idleUs / 1000, top };
}

/** The summary as note lines for a bench's output. */
export function profileNotes(summary: ProfileSummary): string[] {
  const head = `CPU profile of the bench process's main thread: ${(summary.busyMs / 1000).toFixed(1)} s busy, ${(summary.idleMs / 1000).toFixed(1)} s idle (waiting on I/O, children, timers); top functions by self time:`;
  return [head, ...summary.top.map((f) => `${f.percent.toFixed(1).padStart(5)}%  ${f.selfMs.toFixed(0).padStart(6)} ms  ${f.where}`)];
}

/**
 * Runs `work` under the sampling profiler and returns its result with the profile. The session
 * is disconnected whatever happens, so a failing bench leaves no profiler running into the next.
 */
export async function withCpuProfile<T>(work: () => Promise<T>): Promise<{ value: T; profile: CpuProfile }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
    let value: T;
    try {
      value = await work();
    } catch (error) {
      // Stopped on failure too; the caller reports the failure, the profile is dropped.
      await session.post('Profiler.stop');
      throw error;
    }
    const { profile } = (await session.post('Profiler.stop')) as { profile: CpuProfile };
    return { value, profile };
  } finally {
    session.disconnect();
  }
}
