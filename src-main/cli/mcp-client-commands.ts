/**
 * `agentplane mcp servers list|add|remove` and `agentplane mcp tools <server>`: the MCP servers
 * the plane's agents call, declared in `<data dir>/mcp-servers.json`. Like every command they go
 * through the running plane, or open the data dir in-process when none runs
 * (plane-connection.ts). Env and header values are sent to the plane once, in `add`, and never
 * printed: views carry their names only.
 */
import type { Command } from 'commander';
import type { McpServerConfig, McpServerView } from '../../src-shared/protocol/mcp';
import { runAndPrint, type OutputOptions } from './plane-connection';
import { CliError, jsonFailure } from './cli-error';
import { ErrorCode } from '../../src-shared/ipc/errors';

const out = (line: string) => process.stdout.write(`${line}\n`);
const collect = (value: string, previous: string[]) => [...previous, value];

function envPair(value: string): [string, string] {
  const at = value.indexOf('=');
  if (at < 1) throw new CliError(`--env ${value.split('=')[0] ?? ''}: expected NAME=VALUE`);
  return [value.slice(0, at), value.slice(at + 1)];
}

function headerPair(value: string): [string, string] {
  const at = value.indexOf(':');
  if (at < 1) throw new CliError(`--header ${value.split(':')[0] ?? ''}: expected 'Name: value'`);
  return [value.slice(0, at).trim(), value.slice(at + 1).trim()];
}

interface AddFlags extends OutputOptions {
  command?: string;
  arg: string[];
  env: string[];
  cwd?: string;
  url?: string;
  header: string[];
}

/** The config `add` sends, from the flags; a usage mistake is a CliError naming the flag. */
export function configFromFlags(flags: AddFlags): McpServerConfig {
  if (Boolean(flags.command) === Boolean(flags.url)) throw new CliError('give exactly one of --command <cmd> (a stdio server) or --url <url> (a Streamable HTTP server)');
  if (flags.command) {
    if (flags.header.length > 0) throw new CliError('--header applies to --url servers only');
    return { transport: 'stdio', command: flags.command, args: flags.arg, env: Object.fromEntries(flags.env.map(envPair)), ...(flags.cwd ? { cwd: flags.cwd } : {}) };
  }
  if (flags.arg.length > 0 || flags.env.length > 0 || flags.cwd) throw new CliError('--arg, --env and --cwd apply to --command servers only');
  return { transport: 'http', url: flags.url!, headers: Object.fromEntries(flags.header.map(headerPair)) };
}

function where(view: McpServerView): string {
  if (view.transport === 'http') return `${view.url ?? ''}${view.headerNames?.length ? ` (headers: ${view.headerNames.join(', ')})` : ''}`;
  return `${[view.command, ...(view.args ?? [])].join(' ')}${view.envNames?.length ? ` (env: ${view.envNames.join(', ')})` : ''}`;
}

function printServer(view: McpServerView): void {
  const version = view.negotiatedVersion ? `  MCP ${view.negotiatedVersion}` : '';
  const server = view.serverInfo ? `  ${view.serverInfo.name}${view.serverInfo.version ? ` ${view.serverInfo.version}` : ''}` : '';
  out(`${view.name}  ${view.transport}  ${view.state}${version}${server}  ${where(view)}`);
  if (view.error) out(`  error: ${view.error}`);
}

function printOffer(view: McpServerView): void {
  printServer(view);
  for (const tool of view.tools ?? []) out(`  tool ${tool.name}${tool.description ? `: ${tool.description.split('\n')[0]}` : ''}`);
  for (const prompt of view.prompts ?? []) out(`  prompt ${prompt.name}${prompt.arguments.length ? `(${prompt.arguments.map((a) => `${a.name}${a.required ? '' : '?'}`).join(', ')})` : ''}${prompt.description ? `: ${prompt.description.split('\n')[0]}` : ''}`);
  for (const resource of view.resources ?? []) out(`  resource ${resource.uri}${resource.mimeType ? ` (${resource.mimeType})` : ''}  ${resource.name}`);
  if (view.state === 'failed' && view.stderrTail?.length) {
    out('  its stderr, last lines:');
    for (const line of view.stderrTail.slice(-10)) out(`    ${line}`);
  }
}

export function addMcpClientCommands(mcp: Command): void {
  const servers = mcp.command('servers').description('the MCP servers the plane\'s agents may call (a manifest still grants each tool: mcp:<server>/<tool>)');
  servers
    .command('list')
    .description('the declared MCP servers and their connection state (does not connect)')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions) =>
      runAndPrint(options, out, (p) => p.call('mcp.servers.list', {}), ({ servers: list }) => {
        if (list.length === 0) out('no MCP servers declared: add one with `agentplane mcp servers add <name> --command <cmd>` or `--url <url>`');
        for (const view of list) printServer(view);
      }),
    );
  servers
    .command('add')
    .argument('<name>', 'a lowercase name: how steps and grants name it (mcp:<name>/<tool>)')
    .description('declare an MCP server: a command the plane starts (stdio) or a Streamable HTTP URL')
    .option('--command <cmd>', 'the server\'s command (stdio)')
    .option('--arg <arg>', 'an argument of the command, repeatable (use --arg=--flag for one starting with a dash)', collect, [])
    .option('--env <NAME=VALUE>', 'an environment variable for the server, repeatable (the value is kept in the data dir, never shown)', collect, [])
    .option('--cwd <dir>', 'the server\'s working folder (default: the data dir\'s workspace)')
    .option('--url <url>', 'the server\'s Streamable HTTP endpoint')
    .option('--header <\'Name: value\'>', 'an HTTP header sent to the server, repeatable (the value is kept in the data dir, never shown)', collect, [])
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((name: string, flags: AddFlags) => {
      // A usage mistake is said before any plane is reached or opened.
      let config: McpServerConfig;
      try {
        config = configFromFlags(flags);
      } catch (error) {
        if (!(flags.json && error instanceof CliError)) throw error;
        out(jsonFailure(ErrorCode.BadRequest, error.message));
        process.exitCode = 1;
        return;
      }
      return runAndPrint(flags, out, (p) => p.call('mcp.servers.add', { name, config }), (view) => {
        printServer(view);
        out(`declared; see its tools with \`agentplane mcp tools ${view.name}\``);
      });
    });
  servers
    .command('remove')
    .argument('<name>', 'the server\'s name')
    .description('disconnect and forget an MCP server')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((name: string, options: OutputOptions) =>
      runAndPrint(options, out, (p) => p.call('mcp.servers.remove', { name }), ({ removed }) => out(removed ? `removed ${name}` : `no MCP server named ${name} was declared`), {
        failureOf: ({ removed }) => (removed ? null : { code: ErrorCode.NotFound, message: `no MCP server named ${name} is declared` }),
      }),
    );
  mcp
    .command('tools')
    .argument('<server>', 'a declared server\'s name')
    .description('connect to a declared MCP server and show the negotiated version, its tools, prompts and resources')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((server: string, options: OutputOptions) =>
      runAndPrint(options, out, (p) => p.call('mcp.servers.connect', { name: server }), printOffer, {
        failureOf: (view) => (view.state === 'failed' ? { code: ErrorCode.Unavailable, message: view.error ?? `cannot connect to ${server}` } : null),
      }),
    );
}
