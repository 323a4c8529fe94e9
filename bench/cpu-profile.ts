/**
 * Where a benchmark's time goes (docs/PERFORMANCE.md): a CPU profile of the bench process taken
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

/** One line of callTree: a function at a place in the tree, every node there merged. */
export interface TreeLine {
  depth: number;
  where: string;
  /** Time in this function and everything it called, at this place in the tree. */
  totalMs: number;
  selfMs: number;
}

export interface CallTreeOptions {
  /** Start from the outermost calls of functions whose name matches (all of them merged); the whole tree if absent. */
  root?: RegExp;
  /** Leave out places (and what is under them) below this total. */
  minMs?: number;
  /** Stop this many levels below the roots. */
  maxDepth?: number;
  /** The repository root that file names are made relative to. */
  repoRoot?: string;
}

/**
 * Where a profile's time went, as a call tree: each function's total and self time at each
 * place it was called from, the children of every node that is the same function at the same
 * place merged (V8 keeps one node per distinct stack, so a loop's callees otherwise appear many
 * times), children largest first. What the flat summary cannot say: which caller a hot
 * function's time belongs to, e.g. how much of a commit is the chain's hashing and how much
 * SQLite. `root` narrows it to the calls of one function, wherever they happen.
 */
export function callTree(profile: CpuProfile, options: CallTreeOptions = {}): TreeLine[] {
  const { root, minMs = 0, maxDepth = Number.POSITIVE_INFINITY, repoRoot = REPO_ROOT } = options;
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  if (samples.length !== deltas.length) throw new Error(`a CPU profile with ${samples.length} samples and ${deltas.length} time deltas is malformed`);
  const nodeById = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < samples.length; i += 1) {
    if (!nodeById.has(samples[i]!)) throw new Error(`a CPU profile sample names node ${samples[i]}, which the profile does not hold`);
    selfUs.set(samples[i]!, (selfUs.get(samples[i]!) ?? 0) + Math.max(0, deltas[i + 1] ?? 0));
  }
  const totalUs = new Map<number, number>();
  const total = (id: number): number => {
    const known = totalUs.get(id);
    if (known !== undefined) return known;
    let us = selfUs.get(id) ?? 0;
    for (const child of nodeById.get(id)?.children ?? []) us += total(child);
    totalUs.set(id, us);
    return us;
  };
  const nameOf = (id: number) => frameName(nodeById.get(id)!.callFrame, repoRoot);

  let roots: number[];
  if (root) {
    const parent = new Map<number, number>();
    for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
    const matches = new Set(profile.nodes.filter((node) => root.test(node.callFrame.functionName)).map((node) => node.id));
    // Only the outermost: a recursive function's inner calls are already inside its outer ones.
    roots = [...matches].filter((id) => {
      for (let up = parent.get(id); up !== undefined; up = parent.get(up)) if (matches.has(up)) return false;
      return true;
    });
  } else {
    const children = new Set(profile.nodes.flatMap((node) => node.children ?? []));
    roots = profile.nodes.filter((node) => !children.has(node.id)).map((node) => node.id);
  }

  const lines: TreeLine[] = [];
  const walk = (ids: number[], depth: number) => {
    const merged = new Map<string, { totalUs: number; selfUs: number; children: number[] }>();
    for (const id of ids) {
      const key = nameOf(id);
      const entry = merged.get(key) ?? { totalUs: 0, selfUs: 0, children: [] };
      entry.totalUs += total(id);
      entry.selfUs += selfUs.get(id) ?? 0;
      entry.children.push(...(nodeById.get(id)?.children ?? []));
      merged.set(key, entry);
    }
    for (const [where, entry] of [...merged].sort((a, b) => b[1].totalUs - a[1].totalUs)) {
      if (entry.totalUs / 1000 < minMs) continue;
      lines.push({ depth, where, totalMs: entry.totalUs / 1000, selfMs: entry.selfUs / 1000 });
      if (depth < maxDepth) walk(entry.children, depth + 1);
    }
  };
  walk(roots, 0);
  return lines;
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
