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
 *
 * The plane and what serves it (the UI, the MCP and A2A endpoints, plane.json, each listener
 * back at last time's address when free) are built by plane/hosted-plane.ts, exactly as for the
 * desktop app's plane host; what is serve's own is the command line, the lines it prints, the
 * browser it opens and the signals it stops on. A listener that cannot start (a port asked for
 * that is busy) is one line naming it and the flag that picks a free port, exit code 1, with
 * nothing left running.
 */
import { join } from 'node:path';
import { appVersion, rendererDir, resolveDataDir } from '../base/app-paths';
import { createLogger } from '../base/logger';
import { HostedPlaneError, startHostedPlane, type HostedEndpoint } from '../plane/hosted-plane';
import { PlaneRunningError } from '../plane/plane-lock';
import { JournalError } from '../journal/journal-error';
import { checkDatabaseUrl, chooseDatabase } from '../journal/postgres-url';
import { startWebBridge } from '../bridge/web-bridge';
import { openBrowser } from './open-browser';
import { CliError } from './cli-error';
import { startupMark } from '../base/startup-trace';

/** The flag that chose each listener's port, named in the remedy for a busy one. */
const PORT_FLAGS: Record<HostedEndpoint, string> = { ui: '--ui-port', mcp: '--mcp-port', a2a: '--a2a-port' };

export interface ServeOptions {
  dataDir?: string;
  /** Undefined: the port (and token) this data dir's UI had last time, when free; else any. */
  uiPort?: number;
  /** Undefined: the MCP endpoint's port (and token) from last time, when free; else any. */
  mcpPort?: number;
  /** Undefined: the A2A endpoint's port (and token) from last time, when free; else any. */
  a2aPort?: number;
  /** A PostgreSQL URL for the journal (else AGENTPLANE_DATABASE_URL, else the data dir's SQLite). */
  database?: string;
  /** The outside witness checkpoints are submitted to (else AGENTPLANE_WITNESS_URL; docs/WITNESS.md). */
  witness?: string;
  open: boolean;
}

/** The line `serve` prints when peers that ran before the plane last stopped are stopped now. */
export function stoppedPeersNotice(ids: readonly string[], dataDirFlag: string | undefined): string {
  const dd = dataDirFlag !== undefined ? ` --data-dir ${dataDirFlag}` : '';
  const were = ids.length === 1 ? `Peer ${ids[0]} was` : `Peers ${ids.join(', ')} were`;
  return `${were} running when this plane last stopped and ${ids.length === 1 ? 'is' : 'are'} stopped now (a peer stops with its plane and starts only when asked): ${ids.map((id) => `agentplane peer up ${id}${dd}`).join('; ')}, or click Start in the Peers view.`;
}

/**
 * Serves until `stop` resolves: by default at SIGINT or SIGTERM (a test passes its own promise,
 * and then no signal handler is installed).
 */
export async function serve(options: ServeOptions, out: (line: string) => void = (l) => process.stdout.write(`${l}\n`), stop?: Promise<unknown>): Promise<void> {
  // Signal handlers first, before anything is printed: a script that reads the URL line and
  // sends SIGINT at once must find the handler there (until a listener exists, SIGINT's default
  // action kills the process). A stop asked for during start-up is honoured once it is done.
  const stopRequested =
    stop ??
    new Promise<NodeJS.Signals>((resolveStop) => {
      process.once('SIGINT', () => resolveStop('SIGINT'));
      process.once('SIGTERM', () => resolveStop('SIGTERM'));
    });
  startupMark('serve.begin');
  const dataDir = resolveDataDir(options.dataDir);
  const logger = createLogger(join(dataDir, 'plane.log'));
  // Checked (its form, not yet the server) before anything starts; a wrong URL is one line.
  let database;
  try {
    database = chooseDatabase(options.database, process.env);
    if (database) checkDatabaseUrl(database.url, database.source);
  } catch (error) {
    throw new CliError((error as Error).message);
  }
  // A start waiting for its lease on a shared journal (held while another instance takes this one's runs over) ends at a stop.
  const waiting = new AbortController();
  void stopRequested.then(() => waiting.abort());
  const shared = database
    ? {
        database,
        signal: waiting.signal,
        onLeaseWaiting: (holder: string) => out(`Waiting: this instance's lease on the journal is held by ${holder} (taking over the runs it left); it starts once that ends.`),
        onLeaseLost: (reason: string) => {
          process.stderr.write(`agentplane: ${reason}; stopping now, so no effect runs twice (another instance takes the runs over)\n`);
          process.exit(75);
        },
      }
    : {};
  let hosted;
  try {
    hosted = await startHostedPlane({
      plane: { dataDir, version: appVersion(), host: 'headless', logger, demoPeers: process.env.AGENTPLANE_DEMO_PEERS !== '0', ...shared, ...(options.witness ? { witnessUrl: options.witness } : {}) },
      startUi: (plane, at) => startWebBridge({ plane, ...at, rendererDir: rendererDir() }),
      ...(options.uiPort !== undefined ? { uiPort: options.uiPort } : {}),
      ...(options.mcpPort !== undefined ? { mcpPort: options.mcpPort } : {}),
      ...(options.a2aPort !== undefined ? { a2aPort: options.a2aPort } : {}),
    });
  } catch (error) {
    // Another live plane holds this data dir: one line naming its URL and pid, exit code 1.
    if (error instanceof PlaneRunningError) throw new CliError(error.message);
    // The journal's database could not be used (unreachable, refused, not a journal, newer): one
    // line naming it, its URL masked, before anything was written.
    if (error instanceof JournalError) {
      // Stopped while it waited for the lease: nothing had started, nothing to say.
      if (error.code === 'Closed' && waiting.signal.aborted) return;
      throw new CliError(error.message);
    }
    // A listener that could not start (nothing is left running): one line naming it, exit code 1.
    if (error instanceof HostedPlaneError) {
      throw new CliError(error.code === 'EADDRINUSE' ? `${error.message}; pass ${PORT_FLAGS[error.endpoint]} 0 to pick a free one` : error.message);
    }
    throw error;
  }
  const { plane, ui, mcp, a2a } = hosted;
  out(`AgentPlane ${plane.status().version} (headless) — data in ${dataDir}`);
  if (database) out(`Journal shared in PostgreSQL at ${plane.status().journal}${plane.status().instance ? `; this instance is ${plane.status().instance}` : ''}`);
  // A peer stops with its plane and starts again only when asked: said, not left to be found.
  const stoppedPeers = plane.peers.stoppedSinceLastRun();
  if (stoppedPeers.length > 0) out(stoppedPeersNotice(stoppedPeers, options.dataDir));
  plane.peers.acknowledgeStoppedSinceLastRun();
  out(`AGENTPLANE_UI_URL=${ui.url}`);
  out(`AGENTPLANE_MCP_URL=${mcp.url}`);
  out(`AGENTPLANE_MCP_TOKEN=${mcp.token}`);
  out(`AGENTPLANE_A2A_URL=${a2a.url}`);
  out(`AGENTPLANE_A2A_TOKEN=${a2a.token}`);
  startupMark('serve.url-printed');
  if (options.open) openBrowser(ui.url);

  const reason = await stopRequested;
  logger.log('info', `received ${typeof reason === 'string' ? reason : 'a stop'}, shutting down`);
  await hosted.close();
}
