/**
 * What `agentplane mcp --stdio` does (mcp-serve-commands.ts registers it and says how): relay
 * the host's connection to the plane running on the data dir, or become that plane and serve
 * its agents over stdio. Loaded only when the command runs: it brings the plane, the web bridge
 * and the MCP server SDK, which no other `mcp` subcommand needs.
 */
import { join } from 'node:path';
import { appVersion, rendererDir, resolveDataDir } from '../base/app-paths';
import { createLogger } from '../base/logger';
import { createPlane } from '../plane/plane';
import { PlaneRunningError } from '../plane/plane-lock';
import { readTrustedPlaneFile, removePlaneFile, UntrustedPlaneFileError, writePlaneFile } from '../plane/plane-file';
import { approveWithOf } from '../plane/mcp-address';
import { planeDoor, startPlaneMcpEndpoint } from '../plane/mcp-endpoint';
import { startWebBridge } from '../bridge/web-bridge';
import { createPlaneSurface } from '../protocols/mcp/plane-surface';
import { serveMcpStdio } from '../protocols/mcp/mcp-stdio';
import { relayStdioToHttp } from '../protocols/mcp/stdio-relay';
import { CliError } from './cli-error';

export async function serveStdio(dataDirFlag: string | undefined): Promise<void> {
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
