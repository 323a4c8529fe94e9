/**
 * A plane in a child process configured the way a person configures one: agents from
 * `<dataDir>/agents`, MCP servers from the data dir's servers file, model providers from the
 * AGENTPLANE_* variables of its environment (loadProviders), and its log in
 * `<dataDir>/plane.log`. For tests that kill it with SIGKILL mid-run and start another on the
 * same data dir.
 *   start <dataDir> <agent>...  starts every agent at once (input {}), prints one
 *                               `RUN <run view as JSON>` line per run once it has stopped
 *                               (suspended for an approval, or ended), then `READY`, then waits
 *                               to be killed
 *   resume <dataDir>            approves every run waiting for approval, waits for each to
 *                               settle, prints one `RUN <run view as JSON>` line per run, closes
 *                               the plane (its shutdown checkpoint) and exits 0
 * What it prints, logs and throws is read by the test, which looks for the keys in all of it.
 */
import { join } from 'node:path';
import { createLogger } from '../../src-main/base/logger';
import { call, testPlane } from '../support/runtime-support';

const [mode, dataDir, ...agents] = process.argv.slice(2) as [string, string, ...string[]];
const plane = await testPlane({ dataDir, logger: createLogger(join(dataDir, 'plane.log')) });
const say = (word: string, value?: unknown) => process.stdout.write(`${word}${value === undefined ? '' : ` ${JSON.stringify(value)}`}\n`);

if (mode === 'start') {
  const runs = await Promise.all(agents.map((agent) => call(plane, 'runs.start', { agent, input: {}, wait: true })));
  for (const run of runs) say('RUN', run);
  say('READY');
  setInterval(() => undefined, 1 << 30);
} else if (mode === 'resume') {
  const { waiting } = await call(plane, 'approvals.list', {});
  const runs = await Promise.all(
    waiting.map(async ({ runId, pending }) => {
      await call(plane, 'approvals.decide', { runId, waitId: pending!.waitId, decision: 'approve', subjectHash: pending!.subjectHash });
      await plane.runtime.settled(runId);
      return call(plane, 'runs.get', { runId });
    }),
  );
  for (const run of runs) say('RUN', run);
  await plane.close();
  process.exit(0);
} else {
  process.stderr.write(`provider-plane-child: unknown mode ${mode} (start or resume)\n`);
  process.exit(2);
}
