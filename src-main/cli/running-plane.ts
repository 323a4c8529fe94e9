/**
 * The running plane's contract client for a data dir, or null when none runs. For commands that
 * must never become the plane themselves (`acp tap` sits between an editor and its agent for as
 * long as the session lasts; taking plane.lock for that long would keep the person's real plane
 * from starting): where plane-connection.ts opens the data dir when no plane runs, this only
 * looks. A plane.json that no plane wrote (untrusted) is an error, said by the caller.
 */
import { createPlaneClient, type PlaneClient } from '../../src-shared/ipc/client';
import { readTrustedPlaneFile } from '../plane/plane-file';
import { createHttpTransport } from './http-transport';

export function runningPlaneClient(dataDir: string, timeoutMs = 30_000): PlaneClient | null {
  const running = readTrustedPlaneFile(dataDir);
  if (!running) return null;
  return createPlaneClient(createHttpTransport({ url: running.url, token: running.token, name: `the plane for ${dataDir} (pid ${running.pid})`, timeoutMs }));
}
