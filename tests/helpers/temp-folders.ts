/**
 * Shared by tests that make folders and files and check their modes: temporary folders removed
 * after each test, and a fixed process umask for the file (022, the common default, so a
 * test proves the code sets modes itself rather than inheriting a strict umask).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll } from 'vitest';

/** Returns a maker of temporary folders under `prefix`, each removed after its test. */
export function useTempFolders(prefix: string): () => string {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    made.push(dir);
    return dir;
  };
}

/** Runs the file's tests under `mask`, restoring the previous umask afterwards. */
export function useUmask(mask: number): void {
  let previous = 0;
  beforeAll(() => {
    previous = process.umask(mask);
  });
  afterAll(() => {
    process.umask(previous);
  });
}
