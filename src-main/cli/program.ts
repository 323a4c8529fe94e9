/**
 * The `agentplane` command. Every action the UI offers is (or will be) a subcommand here, so
 * everything a person can click a script can run. Parsed with commander; errors are one line
 * on stderr and a non-zero exit, never a stack trace.
 */
import { spawn } from 'node:child_process';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { appRoot, appVersion } from '../base/app-paths';
import { UnsafeDataDirError } from '../base/data-dir-guard';
import { ErrorCode } from '../../src-shared/ipc/error-codes';
import { CliError, CommandFailed, jsonFailure } from './cli-error';
import { electronBinaryPath } from './electron-binary';

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 0 || port > 65535) throw new InvalidArgumentError('a port is a whole number from 0 to 65535');
  return port;
}

/** The subcommands that need only `serve` (and what it imports) to run. */
const SERVE_ONLY = new Set(['serve', 'start']);

type AddCommands = (program: Command) => void;

/** Each module of subcommands, loaded when needed, in the order `--help` lists them. */
export const COMMAND_MODULES = {
  journal: () => import('./journal-commands').then((m): AddCommands => m.addJournalCommands),
  // `runs fork|replay|diff` (time-travel-commands.ts) join the runtime's `runs`.
  runtime: () =>
    Promise.all([import('./runtime-commands'), import('./time-travel-commands')]).then(([m, t]): AddCommands => (program) => {
      m.addRuntimeCommands(program);
      t.addTimeTravelCommands(program);
    }),
  peer: () => import('./peer-commands').then((m): AddCommands => m.addPeerCommands),
  repl: () => import('./repl').then((m): AddCommands => m.addReplCommand),
  acp: () => import('./acp-commands').then((m): AddCommands => m.addAcpCommands),
  mcp: () => import('./mcp-commands').then((m): AddCommands => m.addMcpCommands),
  provider: () => import('./provider-commands').then((m): AddCommands => m.addProviderCommands),
  net: () => import('./net-commands').then((m): AddCommands => m.addNetCommands),
  a2a: () => import('./a2a-commands').then((m): AddCommands => m.addA2aCommands),
  cases: () => import('./case-commands').then((m): AddCommands => m.addCaseCommands),
  witness: () => import('./witness-commands').then((m): AddCommands => m.addWitnessCommands),
  erasure: () => import('./erasure-commands').then((m): AddCommands => m.addErasureCommands),
} as const;

/**
 * Which module defines each top-level subcommand. A CLI call is a process, and most are one
 * command against a running plane: loading only that command's module (and not the plane, which
 * only `serve` needs) is most of the call's start-up. program.test.ts holds this map to what the
 * modules really register.
 */
export const COMMAND_MODULE_OF: Readonly<Record<string, keyof typeof COMMAND_MODULES>> = {
  journal: 'journal',
  agents: 'runtime',
  runs: 'runtime',
  run: 'runtime',
  approvals: 'runtime',
  recovery: 'runtime',
  halt: 'runtime',
  peer: 'peer',
  repl: 'repl',
  acp: 'acp',
  mcp: 'mcp',
  providers: 'provider',
  net: 'net',
  a2a: 'a2a',
  cases: 'cases',
  audit: 'cases',
  witness: 'witness',
  erase: 'erasure',
  holds: 'erasure',
  retention: 'erasure',
  sealing: 'erasure',
};

/** The first word of the command line that is not an option: the subcommand asked for. */
function subcommandOf(argv: readonly string[]): string | undefined {
  return argv.slice(2).find((arg) => !arg.startsWith('-'));
}

/**
 * The program. With `json`, commander's own usage errors (an unknown option, a missing
 * argument) are thrown rather than printed, so runCli can answer them as the one JSON shape
 * every `--json` failure has; subcommands inherit both settings from the program.
 *
 * The other commands' modules are imported only when the command line asks for something
 * other than `serve` or `start`: they bring the ACP SDK, the MCP client's stdio transport, the
 * REPL and more, none of which a plane needs before its URL line, and loading them was a
 * quarter of `serve`'s start-up (bench/serve-startup.bench.ts). `--version` alone (no
 * subcommand, no help asked for) needs none of them. `agentplane --help`, a typo and every other
 * subcommand get the whole program, so help and suggestions are unchanged.
 */
export async function buildProgram(options: { json?: boolean; subcommand?: string; versionOnly?: boolean } = {}): Promise<Command> {
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
    .option('--database <url>', 'keep the journal in this PostgreSQL database, shared with other plane instances (default: $AGENTPLANE_DATABASE_URL, else SQLite in the data folder)')
    .option('--no-open', 'do not try to open a browser')
    .option('--witness <url>', 'submit each journal checkpoint to this outside witness (default: $AGENTPLANE_WITNESS_URL; docs/WITNESS.md)')
    .action(async (options: { dataDir?: string; uiPort: number; mcpPort?: number; a2aPort?: number; database?: string; open: boolean; witness?: string }) => {
      await (await import('./serve')).serve(options);
    });

  program
    .command('start')
    .description('open the desktop app where the Electron binary is installed; otherwise `serve` with a browser')
    .option('--data-dir <dir>', 'data folder')
    .option('--ui-port <port>', 'port for the UI when headless (default: the last one, when free)', parsePort)
    .option('--mcp-port <port>', 'port for the MCP endpoint at /mcp (default: the last one, when free)', parsePort)
    .option('--a2a-port <port>', 'port for the A2A endpoint (default: the last one, when free)', parsePort)
    .option('--database <url>', 'keep the journal in this PostgreSQL database, shared with other plane instances (default: $AGENTPLANE_DATABASE_URL, else SQLite in the data folder)')
    .option('--no-open', 'do not try to open a browser when headless')
    .option('--witness <url>', 'submit each journal checkpoint to this outside witness (default: $AGENTPLANE_WITNESS_URL)')
    .action(async (options: { dataDir?: string; uiPort: number; mcpPort?: number; a2aPort?: number; database?: string; open: boolean; witness?: string }) => {
      const electron = electronBinaryPath();
      if (electron) {
        const env = {
          ...process.env,
          ...(options.dataDir ? { AGENTPLANE_DATA_DIR: options.dataDir } : {}),
          ...(options.mcpPort !== undefined ? { AGENTPLANE_MCP_PORT: String(options.mcpPort) } : {}),
          ...(options.a2aPort !== undefined ? { AGENTPLANE_A2A_PORT: String(options.a2aPort) } : {}),
          // The desktop app's plane host reads the same variable serve does.
          ...(options.database ? { AGENTPLANE_DATABASE_URL: options.database } : {}),
          ...(options.witness ? { AGENTPLANE_WITNESS_URL: options.witness } : {}),
        };
        const child = spawn(electron, [appRoot()], { stdio: 'inherit', env });
        await new Promise<void>((resolveExit) => child.on('exit', (code) => ((process.exitCode = code ?? 0), resolveExit())));
        return;
      }
      process.stdout.write('The Electron binary is not installed here (`npx install-electron` fetches it); starting the headless plane.\n');
      await (await import('./serve')).serve(options);
    });

  // `agentplane --version` answers from the program alone.
  if (options.versionOnly || (options.subcommand !== undefined && SERVE_ONLY.has(options.subcommand))) return program;
  // The module that defines the subcommand asked for, alone; the whole program for anything else
  // (no subcommand: `--help`, `--version`; a name not listed here: a typo, for commander's suggestion).
  const only = options.subcommand === undefined ? undefined : COMMAND_MODULE_OF[options.subcommand];
  const modules = only ? [COMMAND_MODULES[only]] : Object.values(COMMAND_MODULES);
  for (const add of await Promise.all(modules.map((load) => load()))) add(program);
  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  const args = argv.slice(2);
  const json = args.includes('--json');
  const subcommand = subcommandOf(argv);
  const versionOnly = subcommand === undefined && args.some((arg) => arg === '-V' || arg === '--version') && !args.some((arg) => arg === '-h' || arg === '--help');
  try {
    await (await buildProgram({ json, subcommand, versionOnly })).parseAsync(argv);
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

