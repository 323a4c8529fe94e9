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
