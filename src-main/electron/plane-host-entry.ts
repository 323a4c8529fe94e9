/**
 * The entry of the process that hosts the plane (built to out/main/plane-host.js): an Electron
 * `utilityProcess` in the desktop app, a Node child process elsewhere and in tests. The plane
 * and what serves it (the local API, the web bridge, so the CLI and a browser reach the same
 * plane; the MCP and A2A endpoints; plane.json) are built by plane/hosted-plane.ts, exactly as
 * `agentplane serve` builds them, all in this process. What is this entry's own: the channel to
 * the Electron main (plane/plane-host.ts), the keychain sealer over it, and the ports the
 * environment asks for (AGENTPLANE_MCP_PORT, AGENTPLANE_A2A_PORT, set by `agentplane start`).
 * A listener that cannot start fails the start: the main process is told why (host.failed),
 * says it in a dialog and exits non-zero.
 * It imports nothing from 'electron': it runs the same under plain Node.
 */
import { join } from 'node:path';
import { rendererDir } from '../base/app-paths';
import { createLogger } from '../base/logger';
import { startWebBridge } from '../bridge/web-bridge';
import { chooseDatabase } from '../journal/postgres-url';
import { HostedPlaneError, startHostedPlane, type HostedEndpoint } from '../plane/hosted-plane';
import { channelSealer, hostPlane } from '../plane/plane-host';
import { channelToParent } from '../plane/process-channel';

const channel = channelToParent();
if (!channel) {
  process.stderr.write('agentplane: the plane host is started by the desktop app (or a test) with a message channel, not by hand\n');
  process.exit(2);
}

/** The variable that chose each listener's port, named in the remedy for a busy one (the UI's is never chosen here). */
const PORT_VARIABLES: Partial<Record<HostedEndpoint, string>> = { mcp: 'AGENTPLANE_MCP_PORT', a2a: 'AGENTPLANE_A2A_PORT' };

/** A port the environment asks for; undefined (last time's, when free) when unset or not a port. */
function portFromEnv(name: string): number | undefined {
  const value = process.env[name];
  if (value === undefined) return undefined;
  const port = Number(value);
  return Number.isInteger(port) && port >= 0 && port <= 65535 ? port : undefined;
}

hostPlane(channel, async (config) => {
  const logger = createLogger(join(config.dataDir, 'plane.log'));
  // Provider keys sealed by the desktop app's safeStorage when it offers it (a request over
  // this channel, answered in the Electron main); else kept in the 0600 providers.json alone.
  const keySealer = config.sealKeys ? channelSealer(channel) : undefined;
  const mcpPort = portFromEnv('AGENTPLANE_MCP_PORT');
  const a2aPort = portFromEnv('AGENTPLANE_A2A_PORT');
  // A shared PostgreSQL journal, named as for `serve` (AGENTPLANE_DATABASE_URL); else SQLite.
  const database = chooseDatabase(undefined, process.env);
  let hosted;
  try {
    hosted = await startHostedPlane({
      plane: { dataDir: config.dataDir, version: config.version, host: config.host, logger, demoPeers: config.demoPeers, ...(keySealer ? { keySealer } : {}), ...(database ? { database } : {}) },
      startUi: (plane, at) => startWebBridge({ plane, ...at, rendererDir: rendererDir() }),
      ...(mcpPort !== undefined ? { mcpPort } : {}),
      ...(a2aPort !== undefined ? { a2aPort } : {}),
    });
  } catch (error) {
    const variable = error instanceof HostedPlaneError && error.code === 'EADDRINUSE' ? PORT_VARIABLES[error.endpoint] : undefined;
    if (variable) throw new Error(`${(error as Error).message}; set ${variable}=0 (or leave it unset) to pick a free one`);
    throw error;
  }
  return { plane: hosted.plane, info: { url: hosted.uiOrigin, pid: process.pid }, close: () => hosted.close() };
});
