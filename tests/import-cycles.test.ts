/**
 * No module of src-main or src-shared imports itself back, through any chain of imports. A cycle
 * means two modules cannot be understood, tested or loaded one before the other, and which one
 * finishes loading first depends on who imported first. Type-only imports count: a cycle of
 * types is still a cycle in the design, even though the compiler erases it.
 *
 * The graph is read from the source text: every `import … from './x'`, `import './x'`,
 * `export … from './x'` and `import('./x')` with a relative specifier, resolved as the compiler
 * resolves it (x.ts, x.tsx, x/index.ts, x/index.tsx). Test files are left out: a test may import
 * whatever it tests from wherever.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const ROOTS = ['src-main', 'src-shared'];

/** Every relative specifier a module's text imports or re-exports, static or dynamic. */
export function relativeSpecifiers(text: string): string[] {
  // Comments could hold example imports; strings could too, but a specifier is always one.
  const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
  const found: string[] = [];
  const patterns = [
    // import x from './a'; import { a, b } from './a'; import type { A } from './a'; export { a } from './a'; export * from './a'
    /\b(?:import|export)\s[^;'"`]*?\bfrom\s*['"]([^'"]+)['"]/g,
    // import './a'
    /\bimport\s*['"]([^'"]+)['"]/g,
    // import('./a')
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  for (const pattern of patterns) for (const m of code.matchAll(pattern)) if (m[1]!.startsWith('.')) found.push(m[1]!);
  return found;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The file a relative specifier names, as the compiler finds it; null for anything else (a .json, an .mjs). */
function resolveSpecifier(from: string, specifier: string): string | null {
  const base = resolve(dirname(from), specifier);
  const candidates = /\.(ts|tsx)$/.test(base) ? [base] : [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts'), join(base, 'index.tsx'), base.replace(/\.js$/, '.ts')];
  return candidates.find(isFile) ?? null;
}

function sourceFiles(): string[] {
  return ROOTS.flatMap((top) =>
    (readdirSync(join(root, top), { recursive: true, encoding: 'utf8' }) as string[])
      .filter((f) => /\.(ts|tsx)$/.test(f) && !/\.test\.tsx?$/.test(f) && !f.endsWith('.d.ts'))
      .map((f) => join(root, top, f)),
  );
}

/** The import graph of src-main and src-shared: repo-relative file -> the files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles()) {
    const targets = relativeSpecifiers(readFileSync(file, 'utf8'))
      .map((s) => resolveSpecifier(file, s))
      .filter((t): t is string => t !== null)
      .map((t) => relative(root, t));
    graph.set(relative(root, file), [...new Set(targets)]);
  }
  return graph;
}

/**
 * The cycles of a graph: its strongly connected components (Tarjan) of more than one node, and
 * any node that imports itself. Each cycle is its files, sorted; the cycles sorted by their first.
 */
export function findCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  // Iterative, so a long chain of imports cannot overflow the call stack.
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; edge: number }> = [{ node: start, edge: 0 }];
    index.set(start, next);
    low.set(start, next++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const edges = graph.get(frame.node) ?? [];
      if (frame.edge < edges.length) {
        const to = edges[frame.edge++]!;
        if (!index.has(to)) {
          index.set(to, next);
          low.set(to, next++);
          stack.push(to);
          onStack.add(to);
          work.push({ node: to, edge: 0 });
        } else if (onStack.has(to)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(to)!));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(frame.node)!));
      if (low.get(frame.node) !== index.get(frame.node)) continue;
      const component: string[] = [];
      for (;;) {
        const member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
        if (member === frame.node) break;
      }
      if (component.length > 1 || edges.includes(frame.node)) cycles.push(component.sort());
    }
  }
  return cycles.sort((a, b) => a[0]!.localeCompare(b[0]!));
}

const key = (cycle: readonly string[]) => cycle.join(' -> ');

describe('the cycle finder', () => {
  it('finds no cycle in a graph without one', () => {
    const graph = new Map([
      ['a', ['b', 'c']],
      ['b', ['c']],
      ['c', []],
    ]);
    expect(findCycles(graph)).toEqual([]);
  });

  it('finds a cycle added to that graph, and only its files', () => {
    const graph = new Map([
      ['a', ['b', 'c']],
      ['b', ['c']],
      ['c', ['d']],
      ['d', ['b']],
      ['e', ['a']],
    ]);
    expect(findCycles(graph)).toEqual([['b', 'c', 'd']]);
  });

  it('finds a module that imports itself, and separate cycles apart', () => {
    const graph = new Map([
      ['a', ['a']],
      ['b', ['c']],
      ['c', ['b', 'd']],
      ['d', ['e']],
      ['e', ['d']],
    ]);
    expect(findCycles(graph)).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
  });

  it('reads every form of relative import, and no other', () => {
    const text = [
      "import { a } from './a';",
      "import type { B } from '../b';",
      'import {\n  c,\n  type C,\n} from "./c";',
      "import './d';",
      "export * from './e';",
      "export { f } from './f';",
      "export type { G } from './g';",
      "const h = await import('./h');",
      "import { z } from 'zod';",
      "// import { x } from './commented';",
      "/* import { y } from './also-commented'; */",
      "const s = 'from ./not-an-import';",
    ].join('\n');
    expect(relativeSpecifiers(text).sort()).toEqual(['../b', './a', './c', './d', './e', './f', './g', './h']);
  });
});

describe('import cycles in src-main and src-shared', () => {
  const graph = importGraph();
  const cycles = findCycles(graph);

  it('reads the whole tree', () => {
    expect(graph.size).toBeGreaterThan(200);
    // A resolver that found nothing would find no cycle either.
    expect([...graph.values()].filter((targets) => targets.length > 0).length).toBeGreaterThan(150);
  });

  it('has none', () => {
    expect(cycles.map(key), 'import cycles (each: its files)').toEqual([]);
  });
});
