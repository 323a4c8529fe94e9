/**
 * `agentplane acp …`: the Agent Client Protocol side of the CLI. `acp tap -- <agent command>`
 * is what a person points their editor at instead of the agent (protocols/acp/acp-tap.ts does
 * the work). It never opens the data dir as a plane: observations go through the running
 * plane's API, or, when none runs (or it stops answering), straight into the data dir's journal
 * as a peer process writes it, said once on stderr. Its stdout belongs to the editor's protocol,
 * so everything the tap itself has to say goes to stderr.
 *
 * `addAcpCommands` returns the `acp` group so other subcommands (the demo agent) can be added
 * to it.
 */
import { basename } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { resolveDataDir } from '../base/app-paths';
import { startTap, type TapPolicy } from '../protocols/acp/acp-tap';
import { FallbackSink, JournalSink, PlaneSink, type ObservationSink } from '../protocols/acp/observation-sink';
import { PlaneInbox } from '../protocols/acp/plane-inbox';
import { runningPlaneClient } from './running-plane';

function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1) throw new InvalidArgumentError('a whole number of at least 1');
  return n;
}

interface TapFlags {
  name?: string;
  policy: TapPolicy;
  dataDir?: string;
  queueItems?: number;
  maxLineBytes?: number;
  killGraceMs?: number;
}

export function addAcpCommands(program: Command): Command {
  const acp = program.command('acp').description('Agent Client Protocol: observe the sessions between an editor and its agent');
  acp
    .command('tap')
    .description('run <agent command> as an ACP agent for an editor, forwarding its stdio unchanged and journaling every message')
    .argument('<command...>', 'the agent command and its arguments (after --)')
    .option('--name <name>', "a name for this tap in the sessions list (default: the agent command's name)")
    .addOption(new Option('--policy <policy>', 'observe: record only; inbox: also put permission requests in the approvals inbox').choices(['observe', 'inbox']).default('observe'))
    .option('--data-dir <dir>', 'data folder (default: $AGENTPLANE_DATA_DIR or the OS user-data folder)')
    .addOption(new Option('--queue-items <n>', 'observations waiting for the journal before a gap').argParser(positiveInt).hideHelp())
    .addOption(new Option('--max-line-bytes <n>', 'a longer line is journaled as digest and size').argParser(positiveInt).hideHelp())
    .addOption(new Option('--kill-grace-ms <n>', "between SIGTERM and SIGKILL of the agent's process group").argParser(positiveInt).hideHelp())
    .action(async (command: string[], flags: TapFlags) => {
      process.exitCode = await tap(command, flags);
    });
  return acp;
}

async function tap(command: string[], flags: TapFlags): Promise<number> {
  const say = (message: string) => process.stderr.write(`agentplane acp tap: ${message}\n`);
  const dataDir = resolveDataDir(flags.dataDir);
  const direct = new JournalSink(dataDir);
  let sink: ObservationSink = direct;
  let inbox: PlaneInbox | null = null;
  try {
    const client = runningPlaneClient(dataDir);
    if (client) {
      sink = new FallbackSink(new PlaneSink(client), direct, say);
      if (flags.policy === 'inbox') inbox = new PlaneInbox(client);
    } else say(`no plane is running for ${dataDir}; writing observations to its journal directly`);
  } catch (error) {
    say(`${(error as Error).message}; writing observations to the journal in ${dataDir} directly`);
  }
  // Answers from the plane need a plane: without one, the editor answers as it always would.
  if (flags.policy === 'inbox' && !inbox) say('--policy inbox needs a running plane: permission requests are observed only, and answered in the editor');

  const running = startTap({
    command,
    tapName: flags.name ?? basename(command[0] ?? 'agent'),
    policy: flags.policy,
    editorIn: process.stdin,
    editorOut: process.stdout,
    editorErr: process.stderr,
    sink,
    notice: say,
    ...(inbox ? { inbox } : {}),
    ...(flags.queueItems ? { queueItems: flags.queueItems } : {}),
    ...(flags.maxLineBytes ? { maxLineBytes: flags.maxLineBytes } : {}),
    ...(flags.killGraceMs ? { killGraceMs: flags.killGraceMs } : {}),
  });
  inbox?.attach(running);
  const stop = () => running.close();
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, stop);
  const result = await running.done;
  inbox?.stop();
  if (result.end.reason === 'agent-exit' && running.agent.pid === undefined) say(result.end.stderrTail);
  // The editor may still hold our stdin open after the agent has gone: the session is over.
  process.stdin.destroy();
  await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  setImmediate(() => process.exit(result.exitCode)).unref();
  return result.exitCode;
}
