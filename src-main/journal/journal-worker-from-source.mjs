// Starts a worker thread from the TypeScript sources (under vitest or tsx): registers tsx's
// loader in this thread (a worker does not inherit the loader of the thread that started it on
// Node 20), then loads the worker entry named in workerData. The journal's worker pool and the
// ACP tap's journaling worker start this way. Built code never comes here: from out/main the
// workers are out/main/journal-worker.js and out/main/acp-tap-worker.js (see workerEntry in
// journal-workers.ts and observation-worker.ts).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
