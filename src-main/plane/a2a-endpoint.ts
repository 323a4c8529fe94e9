/**
 * The plane's own A2A 1.0 endpoint: the plane's agents served to A2A clients at
 * `http://127.0.0.1:<port>/` (cards under `/.well-known/` and `/a2a/<agent>/.well-known/`, the
 * JSON-RPC interface at `/a2a/<agent>`), started by the front ends after createPlane, like the
 * MCP endpoint (plane/mcp-endpoint.ts).
 *
 * A separate listener, not routes on the operator API: that surface's invariant is that every
 * route authenticates, and an Agent Card is public by definition (docs/GOVERNED-RUNTIME.md,
 * "A2A, being called").
 *
 * Port and token persist in `<dataDir>/a2a-address.json` (0600): a caller's config names both,
 * and a restarted plane must not break it; `--a2a-port` always wins. The token is never logged
 * and never put in an answer or the journal. Cards are signed with the data dir's plane key.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { Plane } from './plane';
import type { Logger } from '../base/logger';
import { loadOrCreatePlaneKey } from '../journal/plane-key';
import { loopbackGuard } from '../net/loopback-guard';
import { createA2aHandler, type A2aPlaneDoor } from '../protocols/a2a/a2a-server';
import { startA2aPush } from './a2a-push-wiring';
import { addressFile, PortAndTokenSchema } from './address-file';
import { approveWithOf } from './mcp-address';

const a2aAddress = addressFile('a2a-address.json', PortAndTokenSchema);
export const a2aAddressPath = a2aAddress.path;
export const readA2aAddress = a2aAddress.read;

export interface PlaneA2aEndpointOptions {
  /** Undefined: last time's port when free, else any. 0: any free port. */
  port?: number;
  uiOrigin: string | null;
  logger: Logger;
  /** How long a blocking SendMessage waits for its run (ms); tests shorten it. */
  blockMs?: number;
  /** The most open tasks one A2A caller may hold (a2a-server.ts maxOpenTasks); default 32. */
  maxOpenTasks?: number;
}

export interface PlaneA2aEndpoint {
  /** `http://127.0.0.1:<port>/` */
  url: string;
  port: number;
  token: string;
  close(): Promise<void>;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve((server.address() as { port: number }).port);
    });
  });
}

export async function startPlaneA2aEndpoint(plane: Plane, options: PlaneA2aEndpointOptions): Promise<PlaneA2aEndpoint> {
  const last = readA2aAddress(plane.dataDir);
  const token = last?.token ?? randomBytes(32).toString('hex');
  const key = await loadOrCreatePlaneKey(plane.dataDir);
  let port = 0;
  const approveWith = approveWithOf(options.uiOrigin, plane.dataDir);
  // The plane's one door, acting for the A2A caller (trigger via `a2a`).
  const door: A2aPlaneDoor = {
    // Its labels and ceilings: a push receiver's ceiling bounds what its task's events may carry.
    sensitivity: plane.runtime.sensitivity,
    dispatch: (name, request, context) => plane.dispatch(name, request, { transport: 'local', caller: { principal: context.principal, via: 'a2a' } }),
    onJournal: (listener) =>
      plane.events.subscribe((event) => {
        if (event.name === 'journal.appended') listener(event.payload.runs);
      }),
    approveWith,
  };
  // Push notifications: configs and cursors in <dataDir>/a2a-push.json, delivered by a worker
  // through the plane's netguard; it resumes every config from its cursor when the plane restarts.
  // The same wiring as every peer's port (a2a-push-wiring.ts), each process with its own file.
  const pushWiring = startA2aPush({ dir: plane.dataDir, door, netguard: plane.netguard, logger: options.logger });
  const handler = createA2aHandler({
    host: 'plane',
    door,
    push: pushWiring.push,
    token,
    key,
    guard: loopbackGuard(() => port),
    origin: () => `http://127.0.0.1:${port}`,
    version: plane.status().version,
    logger: options.logger,
    ...(options.blockMs !== undefined ? { blockMs: options.blockMs } : {}),
    ...(options.maxOpenTasks !== undefined ? { maxOpenTasks: options.maxOpenTasks } : {}),
  });
  const make = () => createServer(handler);
  let server = make();
  if (options.port === undefined && last) {
    port = await listen(server, last.port).catch(() => 0);
    if (port === 0) server = make();
  }
  if (port === 0) {
    // A port that cannot be had leaves no worker behind following the journal.
    port = await listen(server, options.port ?? 0).catch(async (error: unknown) => {
      await pushWiring.close();
      throw error;
    });
  }
  a2aAddress.remember(plane.dataDir, { port, token });
  const url = `http://127.0.0.1:${port}/`;
  options.logger.log('info', 'a2a endpoint listening', { url });
  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    token,
    close() {
      closing ??= Promise.all([
        pushWiring.close(),
        new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
      ]).then(() => undefined);
      return closing;
    },
  };
}
