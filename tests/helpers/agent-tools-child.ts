/**
 * A plane in a child process, for the agent-tool test that kills it with SIGKILL:
 *   agent-tools-child.ts <dataDir> <counter>
 * starts `boss`, whose model calls `agent:guarded`; the child run waits for a person's approval
 * of its model call. Once it does, prints `CHILD-WAITING <parentRunId> <childRunId>` and waits
 * to be killed. Model calls are counted in <counter> (one line each).
 */
import { call, testPlane } from '../support/runtime-support';
import { agentToolProviders, delegator, helper } from '../support/agent-tools-support';

const [dataDir, counter] = process.argv.slice(2) as [string, string];
const plane = await testPlane({ dataDir, agents: [delegator('boss', 'call agent__guarded {"text":"survive"}', ['agent:guarded']), helper('guarded', { approve: true })], providers: agentToolProviders(counter) });

const parent = await call(plane, 'runs.start', { agent: 'boss', input: {} });
for (;;) {
  const { calls } = await call(plane, 'runs.links', { runId: parent.runId });
  const child = calls[0] ? await call(plane, 'runs.get', { runId: calls[0].runId }) : null;
  if (child?.pending) {
    process.stdout.write(`CHILD-WAITING ${parent.runId} ${child.runId}\n`);
    break;
  }
  await new Promise((r) => setTimeout(r, 5));
}
setInterval(() => undefined, 1 << 30);
