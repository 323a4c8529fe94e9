/**
 * `agentplane net allow <origin> | net list | net remove <origin>`: the origins netguard lets the
 * plane connect to whatever they resolve to (plane/net-allow.ts keeps them in
 * `<data dir>/net-allow.json`). `list` also shows the entries derived from the provider base
 * URLs and MCP server URLs the person configured; those go with their provider or server.
 * Like every command they go through the running plane, or open the data dir in-process when
 * none runs (plane-connection.ts); a change is in force at the next connection, no restart.
 */
import type { Command } from 'commander';
import type { NetAllowEntry, NetAllowList } from '../../src-shared/protocol/net-allow';
import { runAndPrint, type OutputOptions } from './plane-connection';

const out = (line: string) => process.stdout.write(`${line}\n`);

function describe(entry: NetAllowEntry): string {
  if (entry.source === 'provider') return `${entry.origin}  (provider ${entry.from ?? ''}: its configured base URL)`;
  if (entry.source === 'mcp-server') return `${entry.origin}  (MCP server ${entry.from ?? ''}: its configured URL)`;
  return entry.origin;
}

function printList(list: NetAllowList): void {
  if (list.entries.length === 0) out('no origins are allowed past netguard (loopback, private and metadata addresses are refused)');
  for (const entry of list.entries) out(describe(entry));
  out(`the person's list is ${list.file}`);
}

export function addNetCommands(program: Command): void {
  const net = program.command('net').description('outbound connections: the origins allowed past netguard (which refuses loopback, private, link-local and metadata addresses)');
  net
    .command('allow')
    .argument('<origin>', 'scheme://host:port, e.g. http://127.0.0.1:8080')
    .description('allow exactly this origin, whatever it resolves to (another port or scheme is another origin)')
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((origin: string, options: OutputOptions) => runAndPrint(options, out, (p) => p.call('net.allow.add', { origin }), (entry) => out(`allowed ${entry.origin}`)));
  net
    .command('list')
    .description("the allowed origins: the person's list, and those of configured providers and MCP servers")
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((options: OutputOptions) => runAndPrint(options, out, (p) => p.call('net.allow.list', {}), printList));
  net
    .command('remove')
    .argument('<origin>', 'an origin on the list')
    .description("take an origin off the person's list")
    .option('--data-dir <dir>', 'data folder')
    .option('--json', 'print JSON for scripts')
    .action((origin: string, options: OutputOptions) =>
      runAndPrint(options, out, (p) => p.call('net.allow.remove', { origin }), ({ removed }) => out(removed ? `removed ${origin}` : `${origin} was not on the list`)),
    );
}
