/**
 * docs/ARCHITECTURE.md is kept true to the tree: every folder of src-main is described in its
 * layout, and the layer order it states is the one eslint.config.js enforces.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');
const doc = readFileSync(join(root, 'docs', 'ARCHITECTURE.md'), 'utf8');

describe('docs/ARCHITECTURE.md', () => {
  it('describes every folder of src-main', () => {
    const folders = readdirSync(join(root, 'src-main'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name);
    expect(folders.length).toBeGreaterThan(5);
    for (const folder of folders) expect(doc, `src-main/${folder} is missing from the layout`).toMatch(new RegExp(`^  ${folder}/ `, 'm'));
  });

  it('states the layer order lint enforces', () => {
    const config = readFileSync(join(root, 'eslint.config.js'), 'utf8');
    const enforced = /const MAIN_LAYERS = \[([^\]]+)\]/.exec(config)?.[1]?.match(/'([a-z]+)'/g)?.map((s) => s.slice(1, -1));
    const stated = /layer order: (.+)$/m.exec(doc)?.[1]?.split(',').map((s) => s.trim());
    expect(enforced).toBeDefined();
    expect(stated).toEqual(enforced);
  });
});

describe('docs/SECURITY.md', () => {
  const security = readFileSync(join(root, 'docs', 'SECURITY.md'), 'utf8');
  // Every source or test file it names (`path/file.ts`) exists, so a rule never cites a test that is gone.
  const cited = [...security.matchAll(/`([a-z0-9/.-]+\.ts)`/g)].map((m) => m[1]!);
  const files = [...['src-main', 'src-shared', 'tests'].flatMap((top) => readdirSync(join(root, top), { recursive: true, encoding: 'utf8' }).map((f) => `${top}/${f}`))];

  it('cites source and test files', () => {
    expect(cited.length).toBeGreaterThan(10);
  });

  it('cites only files that exist', () => {
    for (const name of cited) expect(files.some((f) => f === name || f.endsWith(`/${name}`)), `${name} is cited but not in the tree`).toBe(true);
  });
});
