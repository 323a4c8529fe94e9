/**
 * A plane in a child process, for tests that kill it with SIGKILL:
 *   suspend <dataDir> <counter>  starts write-note, prints `SUSPENDED <runId>` once it waits for approval
 *   hang <dataDir> <counter>     starts summarize with a model call that never returns, prints
 *                                `IN-FLIGHT <runId>` once EffectStarted is journaled
 * Then it waits to be killed. Model calls are counted in <counter> (one line each). With
 * AGENTPLANE_DATABASE_URL set, the plane is an instance of a team plane on that database
 * (checking for instances to take over every 50 ms).
 */
import { testPlane, call, callsIn, countingProvider } from '../support/runtime-support';

const [mode, dataDir, counter] = process.argv.slice(2) as [string, string, string];
const hang = mode === 'hang' ? () => new Promise<void>(() => undefined) : undefined;
const url = process.env.AGENTPLANE_DATABASE_URL;
const plane = await testPlane({ dataDir, providers: new Map([['local', countingProvider(counter, hang)]]), ...(url ? { database: { url, source: 'AGENTPLANE_DATABASE_URL' }, leaseCheckMs: 50 } : {}) });

if (mode === 'suspend') {
  const run = await call(plane, 'runs.start', { agent: 'write-note', input: { title: 'survivor', topic: 'restarts' }, wait: true });
  process.stdout.write(`SUSPENDED ${run.runId}\n`);
} else {
  const run = await call(plane, 'runs.start', { agent: 'summarize', input: { text: 'never answered' } });
  for (;;) {
    const records = await plane.journal.readRun(run.runId, 1, 10);
    // Journaled as started, and the provider really called: the far side has the request.
    if (records.some((r) => r.kind === 'EffectStarted') && callsIn(counter) > 0) break;
    await new Promise((r) => setTimeout(r, 5));
  }
  process.stdout.write(`IN-FLIGHT ${run.runId}\n`);
}
setInterval(() => undefined, 1 << 30);
