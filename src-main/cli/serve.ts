/**
 * `agentplane serve`: the headless plane. The same runtime as the desktop app, with the UI
 * served to a browser on loopback and the plane's agents served to MCP hosts. Prints
 * `AGENTPLANE_UI_URL=<url>`, then `AGENTPLANE_MCP_URL=<url>` and `AGENTPLANE_MCP_TOKEN=<token>`,
 * each on its own line (scripts, tests and a host's config read them; the token is the MCP
 * hosts' credential, printed to the person who started the plane, never logged); before them,
 * when peers that were running when the plane last stopped are stopped now, one line naming
 * them and the `agentplane peer up` that starts each (a plane never starts one itself); writes
 * plane.json for other CLI commands, refuses (AP_PLANE_RUNNING) when
 * another live plane holds the data dir's lock (plane/plane-lock.ts), and shuts down cleanly on
 * SIGINT/SIGTERM: every server closed, exit code 0.
 */
import { join } from 'node:path';
import { appVersion, rendererDir, resolveDataDir } from '../base/app-paths';
import { createLogger } from '../base/logger';
import { createPlane } from '../plane/plane';
import { removePlaneFile, writePlaneFile } from '../plane/plane-file';
import { readUiAddress, rememberUiAddress } from '../plane/ui-address';
import { PlaneRunningError } from '../plane/plane-lock';
import { startWebBridge } from '../bridge/web-bridge';
import { startPlaneMcpEndpoint, type PlaneMcpEndpoint } from '../plane/mcp-endpoint';
import { startPlaneA2aEndpoint, type PlaneA2aEndpoint } from '../plane/a2a-endpoint';
import { openBrowser } from './open-browser';
import { CliError } from './cli-error';
import { startupMark } from '../base/startup-trace';

export interface ServeOptions {
  dataDir?: string;
  /** Undefined: the port (and token) this data dir's UI had last time, when free; else any. */
  uiPort?: number;
  /** Undefined: the MCP endpoint's port (and token) from last time, when free; else any. */
  mcpPort?: number;
  /** Undefined: the A2A endpoint's port (and token) from last time, when free; else any. */
  a2aPort?: number;
  open: boolean;
}

/** The line `serve` prints when peers that ran before the plane last stopped are stopped now. */
export function stoppedPeersNotice(ids: readonly string[], dataDirFlag: string | undefined): string {
  const dd = dataDirFlag !== undefined ? ` --data-dir ${dataDirFlag}` : '';
  const were = ids.length === 1 ? `Peer ${ids[0]} was` : `Peers ${ids.join(', ')} were`;
  return `${were} running when this plane last stopped and ${ids.length === 1 ? 'is' : 'are'} stopped now (a peer stops with its plane and starts only when asked): ${ids.map((id) => `agentplane peer up ${id}${dd}`).join('; ')}, or click Start in the Peers view.`;
}

export async function serve(options: ServeOptions, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`)): Promise<void> {
  // Signal handlers first, before anything is printed: a script that reads the URL line and
  // sends SIGINT at once must find the handler there (until a listener exists, SIGINT's default
  // action kills the process). A stop asked for during start-up is honoured once it is done.
  let requestStop!: (signal: NodeJS.Signals) => void;
  const stopRequested = new Promise<NodeJS.Signals>((resolveStop) => (requestStop = resolveStop));
  process.once('SIGINT', () => requestStop('SIGINT'));
  process.once('SIGTERM', () => requestStop('SIGTERM'));
  startupMark('serve.begin');
  const dataDir = resolveDataDir(options.dataDir);
  const logger = createLogger(join(dataDir, 'plane.log'));
  let plane;
  try {
    plane = await createPlane({ dataDir, version: appVersion(), host: 'headless', logger, demoPeers: process.env.AGENTPLANE_DEMO_PEERS !== '0', checkJournalInBackground: true });
  } catch (error) {
    // Another live plane holds this data dir: one line naming its URL and pid, exit code 1.
    if (error instanceof PlaneRunningError) throw new CliError(error.message);
    throw error;
  }
  let bridge;
  try {
    // A restarted plane comes back at its last address when it can, so an open tab finds it
    // again by itself (ui-address.ts); an explicit --ui-port always wins.
    const last = options.uiPort === undefined ? readUiAddress(dataDir) : null;
    if (last) bridge = await startWebBridge({ plane, port: last.port, token: last.token, rendererDir: rendererDir() }).catch(() => undefined);
    bridge ??= await startWebBridge({ plane, port: options.uiPort ?? 0, rendererDir: rendererDir() });
  } catch (error) {
    await plane.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CliError(`port ${options.uiPort} is already in use; pass --ui-port 0 to pick a free one`);
    throw error;
  }
  startupMark('serve.bridge-listen');
  rememberUiAddress(dataDir, { port: bridge.port, token: bridge.token });
  const uiOrigin = `http://127.0.0.1:${bridge.port}`;
  let mcp: PlaneMcpEndpoint;
  try {
    mcp = await startPlaneMcpEndpoint(plane, { ...(options.mcpPort !== undefined ? { port: options.mcpPort } : {}), uiOrigin, logger });
  } catch (error) {
    await bridge.close();
    await plane.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CliError(`port ${options.mcpPort} is already in use; pass --mcp-port 0 to pick a free one`);
    throw error;
  }
  startupMark('serve.mcp-listen');
  let a2a: PlaneA2aEndpoint;
  try {
    a2a = await startPlaneA2aEndpoint(plane, { ...(options.a2aPort !== undefined ? { port: options.a2aPort } : {}), uiOrigin, logger });
  } catch (error) {
    await mcp.close();
    await bridge.close();
    await plane.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new CliError(`port ${options.a2aPort} is already in use; pass --a2a-port 0 to pick a free one`);
    throw error;
  }
  startupMark('serve.a2a-listen');
  writePlaneFile(dataDir, {
    pid: process.pid,
    url: uiOrigin,
    port: bridge.port,
    token: bridge.token,
    startedAt: plane.status().startedAt,
    mcpUrl: mcp.url,
    mcpToken: mcp.token,
  });
  out(`AgentPlane ${plane.status().version} (headless) — data in ${dataDir}`);
  // A peer stops with its plane and starts again only when asked: said, not left to be found.
  const stoppedPeers = plane.peers.stoppedSinceLastRun();
  if (stoppedPeers.length > 0) out(stoppedPeersNotice(stoppedPeers, options.dataDir));
  plane.peers.acknowledgeStoppedSinceLastRun();
  out(`AGENTPLANE_UI_URL=${bridge.url}`);
  out(`AGENTPLANE_MCP_URL=${mcp.url}`);
  out(`AGENTPLANE_MCP_TOKEN=${mcp.token}`);
  out(`AGENTPLANE_A2A_URL=${a2a.url}`);
  out(`AGENTPLANE_A2A_TOKEN=${a2a.token}`);
  startupMark('serve.url-printed');
  if (options.open) openBrowser(bridge.url);

  const signal = await stopRequested;
  logger.log('info', `received ${signal}, shutting down`);
  try {
    await a2a.close();
    await mcp.close();
    await bridge.close();
    await plane.close();
  } finally {
    removePlaneFile(dataDir);
  }
}
