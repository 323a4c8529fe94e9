/**
 * A hosted plane: the plane with everything that serves it, built one way for both front ends
 * that host one (`agentplane serve`, cli/serve.ts, and the desktop app's plane host,
 * electron/plane-host-entry.ts). In order: the plane (createPlane), the UI and local API (the
 * web bridge), the MCP endpoint (mcp-endpoint.ts), the A2A endpoint (a2a-endpoint.ts), then
 * `plane.json` (plane-file.ts) naming where the local API and the MCP endpoint listen, written
 * only once all of them listen, so a CLI command never finds a plane.json naming a plane that is
 * not serving yet.
 *
 * Addresses: each listener comes back at the port (and token) it had last time when that port
 * is free (ui.json, mcp-address.json, a2a-address.json), and elsewhere when it is not, so an
 * open tab or an MCP host's config finds the plane again after a restart; a port asked for
 * explicitly always wins.
 *
 * One failure behaviour: a listener that cannot start stops the whole start. What had started
 * is closed (the plane last, its lock released) and the start rejects with a HostedPlaneError
 * naming the listener and the port ("the MCP endpoint could not listen on 127.0.0.1: port 4100
 * is already in use"); each front end says it its way and exits non-zero. A plane serving
 * without its MCP or A2A endpoint would leave a host's config pointing nowhere without a word.
 *
 * The web bridge sits above plane/ in the layer order (docs/ARCHITECTURE.md), so the front end
 * passes in the function that starts it (`startUi`); everything else is built here.
 */
import type { Plane, PlaneConfig } from './plane';
import { createPlane } from './plane';
import { removePlaneFile, writePlaneFile } from './plane-file';
import { readUiAddress, rememberUiAddress } from './ui-address';
import { startPlaneMcpEndpoint, type PlaneMcpEndpoint } from './mcp-endpoint';
import { startPlaneA2aEndpoint, type PlaneA2aEndpoint } from './a2a-endpoint';
import { errorFields, type Logger } from '../base/logger';
import { startupMark } from '../base/startup-trace';

/** The UI and local API server (the web bridge's WebBridge has this shape). */
export interface UiServer {
  /** The address to open, token included. */
  readonly url: string;
  readonly port: number;
  readonly token: string;
  close(): Promise<void>;
}

/** Starts the UI and local API for `plane` at `port` (0: any free one), with `token` when given (else a new one). */
export type StartUiServer = (plane: Plane, at: { port: number; token?: string }) => Promise<UiServer>;

/** A hosted plane's listeners, each with the name its errors use. */
const ENDPOINT_NAMES = { ui: 'UI and local API', mcp: 'MCP endpoint', a2a: 'A2A endpoint' } as const;

export type HostedEndpoint = keyof typeof ENDPOINT_NAMES;

/** A listener of a hosted plane that could not start; nothing of the plane is left running. */
export class HostedPlaneError extends Error {
  override readonly name = 'HostedPlaneError';
  constructor(
    readonly endpoint: HostedEndpoint,
    /** The port asked for (0: any free one). */
    readonly port: number,
    /** The listener's error code (`EADDRINUSE`, `EACCES`), when it had one. */
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface HostedPlaneOptions {
  /** The plane's config; a hosted plane answers before its journal's start-up check ends (checkJournalInBackground). */
  plane: Omit<PlaneConfig, 'checkJournalInBackground'>;
  startUi: StartUiServer;
  /** Undefined: the UI's port (and token) from last time, when free; else any. 0: any free port. */
  uiPort?: number;
  /** Undefined: the MCP endpoint's port from last time, when free; else any. 0: any free port. */
  mcpPort?: number;
  /** Undefined: the A2A endpoint's port from last time, when free; else any. 0: any free port. */
  a2aPort?: number;
}

export interface StartedPlane {
  plane: Plane;
  ui: UiServer;
  /** `http://127.0.0.1:<ui port>`, no token: what plane.json names and where "approve at" points. */
  uiOrigin: string;
  mcp: PlaneMcpEndpoint;
  a2a: PlaneA2aEndpoint;
  /** Closes the listeners (the last started first), then the plane; plane.json is removed either way. */
  close(): Promise<void>;
}

async function listening<T>(logger: Logger, endpoint: HostedEndpoint, port: number | undefined, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    logger.log('error', `the ${ENDPOINT_NAMES[endpoint]} did not start`, errorFields(error));
    const { code, syscall } = error as NodeJS.ErrnoException;
    const asked = port ?? 0;
    const said = error instanceof Error ? error.message : String(error);
    if (code === 'EADDRINUSE') throw new HostedPlaneError(endpoint, asked, code, `the ${ENDPOINT_NAMES[endpoint]} could not listen on 127.0.0.1: port ${asked} is already in use`);
    if (syscall === 'listen') throw new HostedPlaneError(endpoint, asked, code, `the ${ENDPOINT_NAMES[endpoint]} could not listen on 127.0.0.1 port ${asked}: ${said}`);
    throw new HostedPlaneError(endpoint, asked, code, `the ${ENDPOINT_NAMES[endpoint]} did not start: ${said}`);
  }
}

export async function startHostedPlane(options: HostedPlaneOptions): Promise<StartedPlane> {
  const plane = await createPlane({ ...options.plane, checkJournalInBackground: true });
  const dataDir = plane.dataDir;
  const logger = plane.logger;
  // What has started, to close in reverse when a later step fails.
  const started: Array<() => Promise<void>> = [() => plane.close()];
  const unwind = async () => {
    for (const close of started.reverse()) await close().catch((error: unknown) => logger.log('error', 'closing a half-started plane failed', errorFields(error)));
  };
  try {
    const ui = await listening(logger, 'ui', options.uiPort, async () => {
      // The last address first (an open tab reconnects by itself, ui-address.ts); an explicit port always wins.
      const last = options.uiPort === undefined ? readUiAddress(dataDir) : null;
      const reused = last ? await options.startUi(plane, { port: last.port, token: last.token }).catch(() => undefined) : undefined;
      return reused ?? options.startUi(plane, { port: options.uiPort ?? 0 });
    });
    started.push(() => ui.close());
    rememberUiAddress(dataDir, { port: ui.port, token: ui.token });
    startupMark('hosted.ui-listen');
    const uiOrigin = `http://127.0.0.1:${ui.port}`;
    const mcp = await listening(logger, 'mcp', options.mcpPort, () => startPlaneMcpEndpoint(plane, { ...(options.mcpPort !== undefined ? { port: options.mcpPort } : {}), uiOrigin, logger }));
    started.push(() => mcp.close());
    startupMark('hosted.mcp-listen');
    const a2a = await listening(logger, 'a2a', options.a2aPort, () => startPlaneA2aEndpoint(plane, { ...(options.a2aPort !== undefined ? { port: options.a2aPort } : {}), uiOrigin, logger }));
    started.push(() => a2a.close());
    startupMark('hosted.a2a-listen');
    writePlaneFile(dataDir, {
      pid: process.pid,
      url: uiOrigin,
      port: ui.port,
      token: ui.token,
      startedAt: plane.status().startedAt,
      mcpUrl: mcp.url,
      mcpToken: mcp.token,
    });
    let closing: Promise<void> | undefined;
    return {
      plane,
      ui,
      uiOrigin,
      mcp,
      a2a,
      close() {
        closing ??= (async () => {
          try {
            await a2a.close();
            await mcp.close();
            await ui.close();
            await plane.close();
          } finally {
            removePlaneFile(dataDir);
          }
        })();
        return closing;
      },
    };
  } catch (error) {
    await unwind();
    throw error;
  }
}
