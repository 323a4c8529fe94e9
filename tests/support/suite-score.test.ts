import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { reportSuiteScore, SUITE_SCORES_ENV } from './suite-score';

const saved = process.env[SUITE_SCORES_ENV];
afterEach(() => {
  if (saved === undefined) delete process.env[SUITE_SCORES_ENV];
  else process.env[SUITE_SCORES_ENV] = saved;
  vi.restoreAllMocks();
});

describe('a protocol suite score', () => {
  it('is appended, one line each, to the file npm test names, and printed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ap-scores-'));
    try {
      const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
      process.env[SUITE_SCORES_ENV] = join(dir, 'scores.txt');
      reportSuiteScore('suite A: 3/4 passed');
      reportSuiteScore('suite B:\n  9/9 passed');
      expect(readFileSync(join(dir, 'scores.txt'), 'utf8')).toBe('suite A: 3/4 passed\nsuite B: 9/9 passed\n');
      expect(log).toHaveBeenCalledWith('suite A: 3/4 passed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
