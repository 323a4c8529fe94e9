/**
 * package.json's dependencies match their use. The main process and the CLI are built with their
 * npm packages left external (electron.vite.config.ts), so what they import at run time must be
 * installed by `npm install --omit=dev`: every package a production file of src-main, src-shared
 * or bin/ imports (not only as a type) is a dependency, and every dependency is imported by one.
 * A package only tests, benches, scripts or the bundled renderer and preload import is a
 * devDependency.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

const PRODUCTION_ROOTS = ['src-main', 'src-shared', 'bin'];
const NOT_PRODUCTION = /\.(test|e2e|bench)\.tsx?$|\.d\.ts$/;

/**
 * Imported by production folders, yet rightly devDependencies: `electron` is the desktop host the
 * app runs inside (its binary provides the module; packagers require it in devDependencies), and
 * `tsx` is loaded only by the entry that starts a worker from the TypeScript sources under vitest
 * (journal-worker-from-source.mjs, and the ACP demo agent's from-source path); built code
 * starts the bundled workers instead.
 */
const HOST_OR_SOURCE_ONLY = new Set(['electron', 'tsx']);

/** The package a bare specifier names: `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
export function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return builtinModules.includes(name) ? null : name;
}

/** Packages a source text imports at run time: static imports and re-exports not marked `type`, dynamic `import()`, `require()`. */
export function runtimeImports(source: string): string[] {
  const found = new Set<string>();
  const statements = /(?:^|[\s;])(?:import|export)\s+(type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/g;
  for (const m of source.matchAll(statements)) {
    if (m[1]) continue;
    const name = packageOf(m[2]!);
    if (name) found.add(name);
  }
  for (const m of source.matchAll(/(?:\bimport|\brequire|createRequire\([^)]*\))\(\s*['"]([^'"]+)['"]\s*\)/g)) {
    const name = packageOf(m[1]!);
    if (name) found.add(name);
  }
  return [...found];
}

function productionFiles(): string[] {
  return PRODUCTION_ROOTS.flatMap((top) =>
    readdirSync(join(root, top), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(m?[jt]sx?)$/.test(f) && !NOT_PRODUCTION.test(f))
      .map((f) => join(root, top, f)),
  );
}

describe('runtimeImports', () => {
  it('sees value imports and skips type-only ones and relative paths', () => {
    const source = [
      "import { z } from 'zod';",
      "import type { Client } from '@a2a-js/sdk/client';",
      "import { x } from './local';",
      "import fs from 'node:fs';",
      "export { y } from '@modelcontextprotocol/server/validators';",
      "const m = await import('yaml');",
      "const u = createRequire(import.meta.url)('undici');",
      "import 'ws';",
    ].join('\n');
    expect(runtimeImports(source).sort()).toEqual(['@modelcontextprotocol/server', 'undici', 'ws', 'yaml', 'zod']);
  });
});

describe('package.json dependencies', () => {
  const used = new Map<string, string>();
  for (const file of productionFiles()) {
    for (const name of runtimeImports(readFileSync(file, 'utf8'))) if (!used.has(name)) used.set(name, relative(root, file));
  }

  it('keeps the host and source-only packages out of dependencies', () => {
    for (const name of HOST_OR_SOURCE_ONLY) expect(manifest.dependencies, name).not.toHaveProperty(name);
  });

  it('finds the production imports', () => {
    expect(used.size).toBeGreaterThan(5);
  });

  it('lists every package production code imports as a dependency', () => {
    const missing = [...used].filter(([name]) => !(name in manifest.dependencies) && !HOST_OR_SOURCE_ONLY.has(name)).map(([name, file]) => `${name} (imported by ${file})`);
    expect(missing, 'imported at run time but not in dependencies').toEqual([]);
  });

  it('lists as dependencies only packages production code imports', () => {
    const unused = Object.keys(manifest.dependencies).filter((name) => !used.has(name));
    expect(unused, 'in dependencies but imported only by tests, benches, scripts or bundled code: make them devDependencies').toEqual([]);
  });
});
