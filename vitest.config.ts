/**
 * Two projects: `unit` (fast, in-process: schemas, the dispatcher, the bridge through
 * app.inject and one real socket) and `e2e` (real processes and a real browser; needs the
 * build, which `npm test` runs first).
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // Two files at a time on a 2-core machine (vitest's default is cores - 1, i.e. one): most unit
    // files spend their time waiting on child processes, sockets and fsync rather than on a core,
    // and the unit stage went from 482 s to 354 s with both passing. The e2e project stays one
    // file at a time (fileParallelism below): side by side, its browser tests time out.
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src-*/**/*.test.ts', 'tests/**/*.test.ts'],
          environment: 'node',
          testTimeout: 20_000,
          // One throwaway PostgreSQL cluster for the run (the journal's second store).
          globalSetup: ['tests/support/postgres-setup.ts'],
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['e2e/**/*.e2e.ts'],
          environment: 'node',
          testTimeout: 60_000,
          globalSetup: ['tests/support/postgres-setup.ts'],
          hookTimeout: 60_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
