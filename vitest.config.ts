/**
 * Two projects: `unit` (fast, in-process: schemas, the dispatcher, the bridge through
 * app.inject and one real socket) and `e2e` (real processes and a real browser; needs the
 * build, which `npm test` runs first).
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src-*/**/*.test.ts', 'tests/**/*.test.ts'],
          environment: 'node',
          testTimeout: 20_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/**/*.e2e.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
