/**
 * The composition root. `createPlane` builds everything a plane is from its config and hands
 * back one object that the Electron main, the CLI and the web bridge all drive the same way.
 * No front end builds parts of a plane itself; if it needs something, it is added here.
 */
import type { PlaneStatus } from '../../src-shared/ipc/contract';
import { dispatchCommand, type CallContext, type CommandHandlers } from './dispatch';
import { EventHub } from './event-hub';
import { errorFields, silentLogger, type Logger } from './logger';
import type { Result } from '../../src-shared/ipc/result';

export interface PlaneConfig {
  dataDir: string;
  version: string;
  host: PlaneStatus['host'];
  logger?: Logger;
  /** The clock; tests pass a fixed one. */
  now?: () => number;
}

export interface Plane {
  readonly dataDir: string;
  readonly events: EventHub;
  readonly logger: Logger;
  status(): PlaneStatus;
  /** Runs one command exactly as every transport does. */
  dispatch(name: string, request: unknown, context: CallContext): Promise<Result<unknown>>;
  close(): Promise<void>;
}

export async function createPlane(config: PlaneConfig): Promise<Plane> {
  const now = config.now ?? Date.now;
  const logger = config.logger ?? silentLogger;
  const events = new EventHub();
  const startedAtMs = now();
  let state: PlaneStatus['state'] = 'running';
  let closing: Promise<void> | undefined;

  const status = (): PlaneStatus => ({
    version: config.version,
    dataDir: config.dataDir,
    startedAt: new Date(startedAtMs).toISOString(),
    uptimeMs: Math.max(0, Math.round(now() - startedAtMs)),
    host: config.host,
    state,
  });

  const handlers: CommandHandlers = {
    'plane.status': () => status(),
    // Peers are hosted from the peers issue on; until then the plane hosts none.
    'peers.list': () => ({ peers: [] }),
    'events.since': ({ epoch, afterSeq }) => events.since(epoch, afterSeq),
  };

  events.publish('plane.statusChanged', status());
  logger.log('info', 'plane started', { dataDir: config.dataDir, host: config.host, version: config.version });

  return {
    dataDir: config.dataDir,
    events,
    logger,
    status,
    dispatch: (name, request, context) =>
      dispatchCommand(handlers, name, request, context, (command, error) =>
        logger.log('error', `command ${command} failed`, errorFields(error)),
      ),
    close() {
      closing ??= (async () => {
        state = 'stopping';
        events.publish('plane.statusChanged', status());
        logger.log('info', 'plane stopped');
      })();
      return closing;
    },
  };
}
