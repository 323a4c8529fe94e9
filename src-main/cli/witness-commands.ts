/**
 * `agentplane witness serve|log-key|status` (docs/WITNESS.md).
 *
 * `serve` runs an outside witness: a C2SP tlog-witness on loopback with its own Ed25519 key in
 * its own data dir (never the plane's: a witness whose key the plane holds vouches for nothing).
 * It prints exactly two lines, `AGENTPLANE_WITNESS_URL=<url>` and
 * `AGENTPLANE_WITNESS_KEY_FILE=<its verifier key file>`, and serves until SIGINT or SIGTERM.
 * `log-key` prints a plane data dir's log verifier key, for the witness's `--log-key`.
 * `status` asks the running plane (or opens the data dir) what the witness last cosigned.
 */
import { dirname, join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { InvalidArgumentError, type Command } from 'commander';
import { defaultDataDir, resolveDataDir } from '../base/app-paths';
import { planeLogKey } from '../journal/witness/witness-client';
import { startWitness } from '../journal/witness/witness-server';
import type { WitnessStatusView } from '../../src-shared/protocol/witness';
import { CliError } from './cli-error';
import { runAndPrint, type OutputOptions } from './plane-connection';
import { withJournal } from './with-journal';

const out = (line: string) => process.stdout.write(`${line}\n`);

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 0 || port > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535');
  return port;
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The witness's data dir by default: beside the plane's default one, never inside it. */
function defaultWitnessDir(): string {
  const plane = resolve(process.env.AGENTPLANE_DATA_DIR || defaultDataDir());
  return join(dirname(plane), `${plane.split(/[\\/]/).pop() ?? 'AgentPlane'}-witness`);
}

export function printWitnessStatus(view: WitnessStatusView): void {
  if (!view.configured) {
    out('no witness: this plane signs its own checkpoints only (start it with --witness <url> or AGENTPLANE_WITNESS_URL)');
    return;
  }
  out(`witness ${view.url ?? ''}`);
  out(view.cosigned ? `cosigned tree size ${view.cosigned.size} at ${view.cosigned.time} by ${view.cosigned.witness}` : 'nothing cosigned yet');
  out(`newest checkpoint: tree size ${view.checkpointSize}`);
  if (view.lastError) out(`last error: ${view.lastError}`);
}

export function addWitnessCommands(program: Command): void {
  const witness = program.command('witness').description('an outside witness that cosigns the journal\'s checkpoints (C2SP tlog-witness)');
  witness
    .command('serve')
    .description('run a witness on loopback with its own key; prints its URL and key file')
    .option('--port <port>', 'port to listen on (default: any free one)', parsePort)
    .option('--data-dir <dir>', "the witness's own folder: its key and what it cosigned (default: beside the plane's data folder)")
    .option('--log-key <vkey>', 'a log verifier key to accept checkpoints from (`agentplane witness log-key`); kept once given; repeatable', collect)
    .option('--known-logs-only', 'cosign only logs whose key was given with --log-key (by default a new log introduces its key with its first checkpoint)')
    .action(async (options: { port?: number; dataDir?: string; logKey?: string[]; knownLogsOnly?: boolean }) => {
      const dataDir = resolve(options.dataDir ?? defaultWitnessDir());
      let running;
      try {
        running = await startWitness({ dataDir, ...(options.port !== undefined ? { port: options.port } : {}), logKeys: options.logKey ?? [], firstUse: !options.knownLogsOnly });
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') throw new CliError(`port ${options.port} is in use`);
        throw new CliError((error as Error).message);
      }
      const stop = new Promise<void>((resolveStop) => {
        process.once('SIGINT', () => resolveStop());
        process.once('SIGTERM', () => resolveStop());
      });
      out(`AGENTPLANE_WITNESS_URL=${running.url}`);
      out(`AGENTPLANE_WITNESS_KEY_FILE=${running.vkeyFile}`);
      await stop;
      await running.close();
    });
  witness
    .command('log-key')
    .description("print this data dir's log verifier key, to give a witness with --log-key")
    .option('--data-dir <dir>', 'data folder')
    .action(async (options: { dataDir?: string }) => {
      const dataDir = resolveDataDir(options.dataDir);
      if (!existsSync(dataDir)) throw new CliError(`${dataDir} does not exist`);
      await withJournal(dataDir, true, async (journal) => out(planeLogKey(journal)));
    });
  witness
    .command('status')
    .description('the witness this plane submits to, and the newest tree size it cosigned')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions) => runAndPrint(options, out, (p) => p.call('witness.status', {}), printWitnessStatus));
}
