/**
 * `agentplane mcp …`: the Model Context Protocol side of the CLI, both ways.
 *
 * - served (the plane's agents as tools for MCP hosts): `mcp --stdio` for hosts that launch a
 *   command (mcp-serve-commands.ts);
 * - the conformance fixtures, the same server module with the suite's fixture tools registered
 *   (`mcp fixtures --port N`, mcp-fixtures-command.ts);
 * - called (MCP servers the plane's agents use): `mcp servers list|add|remove` and
 *   `mcp tools <server>` (mcp-client-commands.ts).
 */
import type { Command } from 'commander';
import { addMcpServeCommands } from './mcp-serve-commands';
import { addMcpFixturesCommand } from './mcp-fixtures-command';
import { addMcpClientCommands } from './mcp-client-commands';

export function addMcpCommands(program: Command): void {
  const mcp = program.command('mcp').description('MCP: serve the plane\'s agents to MCP hosts, and manage the MCP servers its agents call');
  addMcpServeCommands(mcp);
  addMcpFixturesCommand(mcp);
  addMcpClientCommands(mcp);
}
