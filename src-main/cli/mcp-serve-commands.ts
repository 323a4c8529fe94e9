/**
 * `agentplane mcp --stdio [--data-dir D]`: the plane's agents for an MCP host that launches a
 * command (Claude Desktop, Cursor, VS Code, the Inspector). stdout is the protocol: every log
 * line goes to stderr (and, with a plane of our own, to plane.log), never to stdout.
 *
 * One data dir has one plane, and the CLI never opens a data dir beside a running one:
 * - a plane runs on the data dir (plane.json): the connection is relayed to that plane's own
 *   MCP endpoint with its token (protocols/mcp/stdio-relay.ts), so its policy, journal and
 *   approvals govern the calls, exactly as for a host configured with the URL;
 * - none runs: this process becomes the plane (createPlane, holding the data dir's lock) and
 *   serves the surface over stdio as `mcp:stdio`. It also serves the local API and the UI on a
 *   free loopback port and writes plane.json, because a run that waits for a person must be
 *   decidable while the host holds the session (`agentplane approvals approve <runId>` then
 *   acts through this process), and the MCP endpoint, so a second host reaches the same plane.
 *   The plane closes when the host closes our stdin.
 *
 * Either way, the host closing our stdin means "no more requests": every request read before it
 * is answered, then the command exits (protocols/mcp/stdio-drain.ts); a request with no answer
 * STDIO_DRAIN_MS (35 s) after the EOF is answered with an error, and the command exits anyway.
 *
 * This file only registers the command; mcp-stdio-serve.ts does the work, loaded when it runs.
 */
import type { Command } from 'commander';

export function addMcpServeCommands(mcp: Command): void {
  // `mcp --data-dir` must not take the `--data-dir` of `mcp servers list --data-dir X`: with
  // positional options (on the program and on `mcp`), options after a subcommand's name are
  // the subcommand's. The program has no options of its own beyond --version and --help.
  mcp.parent?.enablePositionalOptions();
  mcp
    .enablePositionalOptions()
    .option('--stdio', "serve the plane's agents as MCP tools over stdin/stdout (for a host that launches a command)")
    .option('--data-dir <dir>', 'data folder (with --stdio)')
    .action(async (flags: { stdio?: boolean; dataDir?: string }) => {
      if (!flags.stdio) {
        mcp.outputHelp();
        return;
      }
      // Relaying to a running plane, or becoming one: loaded only when `mcp --stdio` runs (program.ts).
      await (await import('./mcp-stdio-serve')).serveStdio(flags.dataDir);
    });
}
