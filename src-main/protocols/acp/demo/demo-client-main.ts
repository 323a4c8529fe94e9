/**
 * The demo client as its own process, for trying an agent (or the tap) by hand without the
 * CLI: `node --import tsx demo-client-main.ts [--permission allow|reject|wait] [--workspace DIR]
 * [--prompt TEXT] [-- <agent argv>]`. Without an agent command it starts the demo agent
 * (demo-agent-command.ts). The transcript goes to stderr; stdout gets one line, the stop reason,
 * so a script can read the outcome. Ctrl-C cancels the turn (`session/cancel`); a second one
 * exits at once.
 *
 * It is a separate file from demo-client.ts so that importing runDemoClient (as the CLI does)
 * never runs anything.
 */
import { appVersion } from '../../../base/app-paths';
import { demoAgentCommand } from './demo-agent-command';
import { runDemoClient, type DemoPermissionAnswer } from './demo-client';

const USAGE = 'usage: demo-client-main [--permission allow|reject|wait] [--workspace DIR] [--prompt TEXT] [-- <agent argv>]';

function fail(message: string): never {
  process.stderr.write(`${message}\n${USAGE}\n`);
  process.exit(2);
}

const argv = process.argv.slice(2);
const separator = argv.indexOf('--');
const flags = separator === -1 ? argv : argv.slice(0, separator);
const command = separator === -1 ? demoAgentCommand() : argv.slice(separator + 1);
let permission: DemoPermissionAnswer = 'allow';
let workspace: string | undefined;
let prompt: string | undefined;
for (let i = 0; i < flags.length; i += 2) {
  const value = flags[i + 1];
  if (value === undefined) fail(`${flags[i] ?? ''} needs a value`);
  switch (flags[i]) {
    case '--permission':
      if (value !== 'allow' && value !== 'reject' && value !== 'wait') fail(`--permission is allow, reject or wait, not ${value}`);
      permission = value;
      break;
    case '--workspace':
      workspace = value;
      break;
    case '--prompt':
      prompt = value;
      break;
    default:
      fail(`unknown flag ${flags[i] ?? ''}`);
  }
}
if (command.length === 0) fail('the agent command after -- is empty');

const cancel = new AbortController();
process.on('SIGINT', () => {
  if (cancel.signal.aborted) process.exit(130);
  cancel.abort();
});

try {
  const result = await runDemoClient({ command, cwd: workspace, permission, prompt, signal: cancel.signal, version: appVersion() });
  process.stdout.write(`${result.stopReason}\n`);
} catch (error) {
  process.stderr.write(`demo client: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
}
