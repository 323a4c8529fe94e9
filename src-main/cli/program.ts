/**
 * The `agentplane` command. Every action the UI offers is (or will be) a subcommand here, so
 * everything a person can click a script can run. Parsed with commander; errors are one line
 * on stderr and a non-zero exit, never a stack trace.
 */
import { spawn } from 'node:child_process';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { appRoot, appVersion } from '../base/app-paths';
import { UnsafeDataDirError } from '../base/data-dir-guard';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { CliError } from './cli-error';
import { CommandFailed, jsonFailure } from './plane-connection';
import { electronBinaryPath } from './electron-binary';
import { serve } from './serve';
import { addJournalCommands } from './journal-commands';
import { addRuntimeCommands } from './runtime-commands';
import { addPeerCommands } from './peer-commands';
import { addReplCommand } from './repl';
import { addAcpCommands } from './acp-commands';
import { addMcpCommands } from './mcp-commands';
import { addProviderCommands } from './provider-commands';
import { addNetCommands } from './net-commands';
import { addA2aCommands } from './a2a-commands';

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 0 || port > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535');
  return port;
}

/**
 * The program. With `json`, commander's own usage errors (an unknown option, a missing
 * argument) are thrown rather than printed, so runCli can answer them as the one JSON shape
 * every `--json` failure has; subcommands inherit both settings from the program.
 */
export function buildProgram(options: { json?: boolean } = {}): Command {
  const program = new Command('agentplane')
    .description('AgentPlane: run AI-agent peers on your own machine and see exactly what they did.')
    .version(appVersion(), '-V, --version', 'print the version');
  if (options.json) program.exitOverride().configureOutput({ outputError: () => undefined });
  else program.showHelpAfterError().configureOutput({ outputError: (text, write) => write(text) });

  program
    .command('serve')
    .description('start the headless plane and serve the UI to a browser on loopback')
    .option('--data-dir <dir>', 'data folder (default: $AGENTPLANE_DATA_DIR or the OS user-data folder)')
    .option('--ui-port <port>', 'port for the UI and local API (default: the one this data dir had last time, when free; 0 picks any free one)', parsePort)
    .option('--mcp-port <port>', 'port for the MCP endpoint at /mcp (default: the one this data dir had last time, when free; 0 picks any free one)', parsePort)
    .option('--a2a-port <port>', 'port for the A2A endpoint (default: the one this data dir had last time, when free; 0 picks any free one)', parsePort)
    .option('--no-open', 'do not try to open a browser')
    .action(async (options: { dataDir?: string; uiPort: number; mcpPort?: number; a2aPort?: number; open: boolean }) => {
      await serve(options);
    });

  program
    .command('start')
    .description('open the desktop app where the Electron binary is installed; otherwise `serve` with a browser')
    .option('--data-dir <dir>', 'data folder')
    .option('--ui-port <port>', 'port for the UI when headless (default: the last one, when free)', parsePort)
    .option('--mcp-port <port>', 'port for the MCP endpoint at /mcp (default: the last one, when free)', parsePort)
    .option('--a2a-port <port>', 'port for the A2A endpoint (default: the last one, when free)', parsePort)
    .option('--no-open', 'do not try to open a browser when headless')
    .action(async (options: { dataDir?: string; uiPort: number; mcpPort?: number; a2aPort?: number; open: boolean }) => {
      const electron = electronBinaryPath();
      if (electron) {
        const env = {
          ...process.env,
          ...(options.dataDir ? { AGENTPLANE_DATA_DIR: options.dataDir } : {}),
          ...(options.mcpPort !== undefined ? { AGENTPLANE_MCP_PORT: String(options.mcpPort) } : {}),
          ...(options.a2aPort !== undefined ? { AGENTPLANE_A2A_PORT: String(options.a2aPort) } : {}),
        };
        const child = spawn(electron, [appRoot()], { stdio: 'inherit', env });
        await new Promise<void>((resolveExit) => child.on('exit', (code) => ((process.exitCode = code ?? 0), resolveExit())));
        return;
      }
      process.stdout.write('The Electron binary is not installed here (`npx install-electron` fetches it); starting the headless plane.\n');
      await serve(options);
    });

  addJournalCommands(program);
  addRuntimeCommands(program);
  addPeerCommands(program);
  addReplCommand(program);
  addAcpCommands(program);
  addMcpCommands(program);
  addProviderCommands(program);
  addNetCommands(program);
  addA2aCommands(program);
  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  const json = argv.slice(2).includes('--json');
  try {
    await buildProgram({ json }).parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and the version are answers, not failures; the rest are usage errors.
      if (error.exitCode === 0) return;
      const message = error.code === 'commander.help' ? 'a subcommand is needed (see --help)' : error.message.replace(/^error: /, '');
      process.stdout.write(`${jsonFailure(ErrorCode.BadRequest, message)}\n`);
      process.exitCode = 1;
      return;
    }
    if (json && error instanceof CliError) {
      // A refusal thrown before a command reached the plane (a flag out of range, two flags
      // that exclude each other) has the same JSON shape as the plane's own refusals.
      process.stdout.write(`${jsonFailure(error instanceof CommandFailed ? error.code : ErrorCode.BadRequest, error.message)}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    if (error instanceof CliError) {
      process.stderr.write(`agentplane: ${error.message}\n`);
      process.exitCode = error.exitCode;
      return;
    }
    // A data dir others can write is the person's to fix (the message says how), not a bug.
    if (error instanceof UnsafeDataDirError) {
      process.stderr.write(`agentplane: ${error.message}\n`);
      process.exitCode = 1;
      return;
    }
    // A file-system or network failure (ENOTDIR, EACCES, ENOSPC, …) is the person's to fix,
    // not a bug: one line naming it, no stack. Anything else is a bug and keeps its stack.
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
      process.stderr.write(`agentplane: ${(error as Error).message}\n`);
      process.exitCode = 1;
      return;
    }
    throw error;
  }
}

