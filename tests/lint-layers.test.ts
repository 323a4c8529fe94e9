/**
 * Proves the layer rules in eslint.config.js bite: every fixture in tests/lint-fixtures is
 * linted as if it stood at its `lint-as` path, and must fail with the rule's message (or, for
 * the `good-` fixtures, pass). A rule that is deleted or mistyped makes its fixture pass and
 * this test fail.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const dir = join(import.meta.dirname, 'lint-fixtures');
const fixtures = readdirSync(dir).filter((f) => f.endsWith('.ts'));

describe('layer rules', () => {
  const eslint = new ESLint({ cwd: join(import.meta.dirname, '..') });

  it('has a fixture for each rule', () => {
    expect(fixtures.length).toBeGreaterThanOrEqual(15);
  });

  for (const file of fixtures) {
    it(`${file}`, async () => {
      const text = readFileSync(join(dir, file), 'utf8');
      const lintAs = /^\/\/ lint-as: (.+)$/m.exec(text)?.[1];
      const expected = /^\/\/ expect: (.+)$/m.exec(text)?.[1];
      expect(lintAs, 'fixture names its lint-as path').toBeTruthy();
      expect(expected, 'fixture names what it expects').toBeTruthy();
      const [result] = await eslint.lintText(text, { filePath: lintAs! });
      const messages = (result?.messages ?? []).map((m) => m.message);
      if (expected === 'nothing') {
        expect(messages).toEqual([]);
      } else {
        expect(messages.some((m) => m.includes(expected!)), `got: ${messages.join(' | ')}`).toBe(true);
      }
    });
  }
});

describe('files lint never reads', () => {
  const eslint = new ESLint({ cwd: join(import.meta.dirname, '..') });

  // `npm test` lints beside the build (scripts/check.mjs). electron-vite bundles its config to
  // a temporary `electron.vite.config.ts.<time>-<random>.mjs` in the project root and deletes
  // it when the build ends; lint that listed it a moment before then failed to open it (ENOENT)
  // and the whole check failed. The build's temporary files are never lint's to read.
  it('ignores the build tool’s temporary config bundle', async () => {
    expect(await eslint.isPathIgnored('electron.vite.config.ts.1796193615845-a759bb48890e7.mjs')).toBe(true);
    expect(await eslint.isPathIgnored('vite.config.ts.timestamp-1796193615845-a759bb48890e7.mjs')).toBe(true);
    // The config itself is still linted.
    expect(await eslint.isPathIgnored('electron.vite.config.ts')).toBe(false);
  });
});
