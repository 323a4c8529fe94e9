/**
 * The plane's own MCP endpoint: the plane's agents served to MCP hosts (Claude Desktop, Cursor,
 * VS Code, the Inspector) over Streamable HTTP at `http://127.0.0.1:<port>/mcp`, behind a
 * bearer token. The front ends (`agentplane serve`, the desktop app's plane host) start it
 * after createPlane with `startPlaneMcpEndpoint`; `mcp.endpoint` tells the UI and the CLI where
 * it is, for a host's config.
 *
 * Port and token persist in `<dataDir>/mcp-address.json` (0600, like ui.json): a host's config
 * names both, and a restarted plane must not break it. The plane comes back at the same port
 * when it is free (elsewhere, with the same token, when it is not); `--mcp-port` always wins.
 * The token is the data dir's one MCP credential: every peer of this data dir serves its skills
 * at its own port's `/mcp` behind the same token (plane/peer-mcp.ts), so whichever starts first,
 * the plane or a peer, creates it (`loadOrCreateMcpToken`, plane/mcp-address.ts) and every other one reads it.
 *
 * Every MCP call reaches the plane through its one door (`plane.dispatch`) naming the caller
 * (`{principal, via: 'mcp'}`): `mcp:local` for a holder of the token. The token is the plane's
 * credential for MCP hosts: it is never logged and never put in an answer or the journal.
 */
import type { PlaneStatus } from '../../src-shared/ipc/contract';
import type { Result } from '../../src-shared/ipc/result';
import type { CallContext, CommandHandlers } from './dispatch';
import type { EventHub } from './event-hub';
import type { Runtime } from '../runtime/runtime';
import type { Logger } from '../base/logger';
import { approveWithOf, loadOrCreateMcpToken, readMcpAddress, rememberMcpAddress } from './mcp-address';
import { MCP_SERVED_VERSIONS } from '../protocols/mcp/mcp-factory';
import { startMcpHttpServer } from '../protocols/mcp/mcp-http';
import { createPlaneSurface } from '../protocols/mcp/plane-surface';
import type { McpPlaneDoor } from '../protocols/mcp/plane-door';

/** The endpoint each data dir's plane serves now (one plane per data dir), for `mcp.endpoint`. */
const live = new Map<string, { url: string; token: string }>();

/** The command a host launches for stdio (it finds the running plane through plane.json). */
export function stdioCommandFor(dataDir: string): string[] {
  return ['agentplane', 'mcp', '--stdio', '--data-dir', dataDir];
}

export function mcpEndpointHandlers(dataDir: string, runtime: Runtime): Pick<CommandHandlers, 'mcp.endpoint'> {
  return {
    'mcp.endpoint': () => {
      const serving = live.get(dataDir) ?? null;
      return {
        url: serving?.url ?? null,
        token: serving?.token ?? null,
        stdioCommand: stdioCommandFor(dataDir),
        versions: [...MCP_SERVED_VERSIONS],
        tools: runtime
          .listAgents()
          .filter((a) => (a.manifest.input as { type?: unknown } | undefined)?.type === 'object')
          .map((a) => a.manifest.name),
      };
    },
  };
}

/**
 * What the endpoint uses of a plane: plane.ts's Plane has all of it. Declared here rather than
 * taken from plane.ts, which registers this file's mcpEndpointHandlers: so the two do not import
 * each other.
 */
export interface McpEndpointPlane {
  readonly dataDir: string;
  readonly events: Pick<EventHub, 'subscribe'>;
  status(): Pick<PlaneStatus, 'version'>;
  /** Runs one command exactly as every transport does (Plane.dispatch). */
  dispatch(name: string, request: unknown, context: CallContext): Promise<Result<unknown>>;
  /** Its runtime's labels and ceilings (a run resource read is checked against its caller's). */
  readonly runtime?: Pick<Runtime, 'sensitivity'>;
}

/** The plane as the MCP surface's door: its dispatch, its journal notifications. */
export function planeDoor(plane: Pick<McpEndpointPlane, 'dispatch' | 'events' | 'runtime'>, approveWith: (runId: string) => string): McpPlaneDoor {
  return {
    ...(plane.runtime ? { sensitivity: plane.runtime.sensitivity } : {}),
    // In this process, through the same dispatch as every transport; the run acts for the MCP caller.
    dispatch: (name, request, context) => plane.dispatch(name, request, { transport: 'local', caller: { principal: context.principal, via: 'mcp' } }),
    onJournal: (listener) =>
      plane.events.subscribe((event) => {
        if (event.name === 'journal.appended') listener(event.payload.runs);
      }),
    approveWith,
  };
}

export interface PlaneMcpEndpointOptions {
  /** Undefined: the port this data dir's endpoint had last time, when free; else any. 0: any free port. */
  port?: number;
  /** The UI's origin (`http://127.0.0.1:<port>`, no token) for "approve at"; null when no UI is served. */
  uiOrigin: string | null;
  logger: Logger;
  /** How long a tools/call waits for its run (ms); tests shorten it. */
  settleMs?: number;
}

export interface PlaneMcpEndpoint {
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

export async function startPlaneMcpEndpoint(plane: McpEndpointPlane, options: PlaneMcpEndpointOptions): Promise<PlaneMcpEndpoint> {
  const token = loadOrCreateMcpToken(plane.dataDir);
  const last = readMcpAddress(plane.dataDir);
  const door = planeDoor(plane, approveWithOf(options.uiOrigin, plane.dataDir));
  const factory = createPlaneSurface(door, { version: plane.status().version, logger: options.logger, ...(options.settleMs ? { settleMs: options.settleMs } : {}) });
  const start = (port: number) => startMcpHttpServer({ factory, token, logger: options.logger, port, host: '127.0.0.1' });
  let server: Awaited<ReturnType<typeof start>> | undefined;
  if (options.port === undefined && last?.port !== undefined) server = await start(last.port).catch(() => undefined);
  server ??= await start(options.port ?? 0);
  rememberMcpAddress(plane.dataDir, { port: server.port, token });
  live.set(plane.dataDir, { url: server.url, token });
  options.logger.log('info', 'mcp endpoint listening', { url: server.url });
  let closing: Promise<void> | undefined;
  const running = server;
  return {
    url: running.url,
    port: running.port,
    token,
    close() {
      closing ??= (async () => {
        live.delete(plane.dataDir);
        await running.close();
      })();
      return closing;
    },
  };
}
