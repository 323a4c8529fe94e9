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
 */
import { join } from 'node:path';
import type { Command } from 'commander';
import { appVersion, rendererDir, resolveDataDir } from '../base/app-paths';
import { createLogger } from '../base/logger';
import { createPlane } from '../plane/plane';
import { PlaneRunningError } from '../plane/plane-lock';
import { readTrustedPlaneFile, removePlaneFile, UntrustedPlaneFileError, writePlaneFile } from '../plane/plane-file';
import { approveWithOf, planeDoor, startPlaneMcpEndpoint } from '../plane/mcp-endpoint';
import { startWebBridge } from '../bridge/web-bridge';
import { createPlaneSurface } from '../protocols/mcp/plane-surface';
import { serveMcpStdio } from '../protocols/mcp/mcp-stdio';
import { relayStdioToHttp } from '../protocols/mcp/stdio-relay';
import { CliError } from './cli-error';

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
      await serveStdio(flags.dataDir);
    });
}

async function serveStdio(dataDirFlag: string | undefined): Promise<void> {
  const dataDir = resolveDataDir(dataDirFlag);
  let running;
  try {
    running = readTrustedPlaneFile(dataDir);
  } catch (error) {
    if (error instanceof UntrustedPlaneFileError) throw new CliError(error.message);
    throw error;
  }
  if (running) {
    if (!running.mcpUrl || !running.mcpToken) {
      throw new CliError(`the plane running on ${dataDir} (pid ${running.pid}) serves no MCP endpoint; restart it (agentplane serve) to serve one`);
    }
    const logger = createLogger(null);
    const relay = await relayStdioToHttp({ url: running.mcpUrl, token: running.mcpToken, logger });
    await relay.closed;
    return;
  }
  await servePlaneOverStdio(dataDir);
}

async function servePlaneOverStdio(dataDir: string): Promise<void> {
  // createLogger echoes warnings and errors to stderr, never stdout.
  const logger = createLogger(join(dataDir, 'plane.log'));
  let plane;
  try {
    plane = await createPlane({ dataDir, version: appVersion(), host: 'headless', logger, checkJournalInBackground: true });
  } catch (error) {
    // A plane started between our look at plane.json and the lock: say so, as serve does.
    if (error instanceof PlaneRunningError) throw new CliError(error.message);
    throw error;
  }
  const bridge = await startWebBridge({ plane, port: 0, rendererDir: rendererDir() }).catch(async (error: unknown) => {
    await plane.close();
    throw error;
  });
  const uiOrigin = `http://127.0.0.1:${bridge.port}`;
  const endpoint = await startPlaneMcpEndpoint(plane, { uiOrigin, logger }).catch(() => null);
  writePlaneFile(dataDir, {
    pid: process.pid,
    url: uiOrigin,
    port: bridge.port,
    token: bridge.token,
    startedAt: plane.status().startedAt,
    ...(endpoint ? { mcpUrl: endpoint.url, mcpToken: endpoint.token } : {}),
  });
  const factory = createPlaneSurface(planeDoor(plane, approveWithOf(uiOrigin, dataDir)), { version: plane.status().version, logger });
  try {
    const served = await serveMcpStdio(factory, logger);
    await served.closed;
  } finally {
    try {
      await endpoint?.close();
      await bridge.close();
      await plane.close();
    } finally {
      removePlaneFile(dataDir);
    }
  }
}
