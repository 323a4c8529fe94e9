/**
 * The entry of the process that hosts the plane (built to out/main/plane-host.js): an Electron
 * `utilityProcess` in the desktop app, a Node child process elsewhere and in tests. It builds
 * the plane with the same composition root the CLI uses, starts the local API (the web bridge)
 * so the CLI and a browser reach the same plane, the MCP endpoint (plane/mcp-endpoint.ts) for MCP
 * hosts, and writes plane.json, all in this process.
 * It imports nothing from 'electron': it runs the same under plain Node.
 */
import { join } from 'node:path';
import { rendererDir } from '../base/app-paths';
import { createLogger, errorFields } from '../base/logger';
import { startWebBridge } from '../bridge/web-bridge';
import { createPlane } from '../plane/plane';
import { removePlaneFile, writePlaneFile } from '../plane/plane-file';
import { channelSealer, hostPlane } from '../plane/plane-host';
import { startPlaneMcpEndpoint } from '../plane/mcp-endpoint';
import { startPlaneA2aEndpoint } from '../plane/a2a-endpoint';
import { channelToParent } from '../plane/process-channel';

const channel = channelToParent();
if (!channel) {
  process.stderr.write('agentplane: the plane host is started by the desktop app (or a test) with a message channel, not by hand\n');
  process.exit(2);
}

hostPlane(channel, async (config) => {
  const logger = createLogger(join(config.dataDir, 'plane.log'));
  // Provider keys sealed by the desktop app's safeStorage when it offers it (a request over
  // this channel, answered in the Electron main); else kept in the 0600 providers.json alone.
  const keySealer = config.sealKeys ? channelSealer(channel) : undefined;
  const plane = await createPlane({ dataDir: config.dataDir, version: config.version, host: config.host, logger, demoPeers: config.demoPeers, checkJournalInBackground: true, ...(keySealer ? { keySealer } : {}) });
  let bridge;
  try {
    bridge = await startWebBridge({ plane, port: 0, rendererDir: rendererDir() });
  } catch (error) {
    await plane.close();
    throw error;
  }
  const uiOrigin = `http://127.0.0.1:${bridge.port}`;
  // The plane's agents for MCP hosts, as `serve` serves them (same port and token as last time
  // when free). The window works without it, so a failure to listen is logged, not fatal.
  const mcpPort = process.env.AGENTPLANE_MCP_PORT === undefined ? undefined : Number(process.env.AGENTPLANE_MCP_PORT);
  const mcp = await startPlaneMcpEndpoint(plane, { ...(mcpPort !== undefined && Number.isInteger(mcpPort) ? { port: mcpPort } : {}), uiOrigin, logger }).catch((error: unknown) => {
    logger.log('error', 'the MCP endpoint did not start', errorFields(error));
    return null;
  });
  // The plane's agents for A2A clients, likewise (last time's port when free; logged if not).
  const a2aPort = process.env.AGENTPLANE_A2A_PORT === undefined ? undefined : Number(process.env.AGENTPLANE_A2A_PORT);
  const a2a = await startPlaneA2aEndpoint(plane, { ...(a2aPort !== undefined && Number.isInteger(a2aPort) ? { port: a2aPort } : {}), uiOrigin, logger }).catch((error: unknown) => {
    logger.log('error', 'the A2A endpoint did not start', errorFields(error));
    return null;
  });
  const local = {
    pid: process.pid,
    url: uiOrigin,
    port: bridge.port,
    token: bridge.token,
    startedAt: plane.status().startedAt,
    ...(mcp ? { mcpUrl: mcp.url, mcpToken: mcp.token } : {}),
  };
  writePlaneFile(config.dataDir, local);
  return {
    plane,
    info: { url: local.url, pid: process.pid },
    async close() {
      try {
        await a2a?.close();
        await mcp?.close();
        await bridge.close();
        await plane.close();
      } finally {
        removePlaneFile(config.dataDir);
      }
    },
  };
});
