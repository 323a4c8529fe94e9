// Starts a journal worker from the TypeScript sources (under vitest or tsx): registers tsx's
// loader in this thread (a worker does not inherit the loader of the thread that started it on
// Node 20), then loads the worker entry. Built code never comes here: from out/main the worker
// is out/main/journal-worker.js (see workerEntry in journal-workers.ts).
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.entry);
