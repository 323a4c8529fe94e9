/**
 * One process per peer. A peer process holds `peers/<id>/peer.lock` for its life: a small
 * JSON file (0600) naming its pid and, once bound, its port. A second start of the same peer,
 * by the plane, the CLI or the REPL, finds the lock held by a live process and refuses,
 * naming that process, instead of serving the same identity, file store and conversations
 * twice. A lock whose pid is gone (the process was killed) is stale and taken over.
 *
 * The plane reads the lock to find a peer it did not start in this life (one started by a
 * plane that died, or by `agentplane peer start` in a terminal) and adopts it after the peer
 * answers a health check with its own id: a pid alone can be reused by an unrelated process.
 *
 * Known limit: two processes taking over the same stale lock at the same instant can both
 * succeed (read-stale, unlink, create is not one step). The peer's strictly bound port is the
 * second guard: a fixed port cannot be bound twice.
 */
import { renameSync, rmSync } from 'node:fs';
import { readLiveLock, writeNewPrivateFile } from '../base/pid-lock-file';
import { join } from 'node:path';
import { z } from 'zod';

const LockSchema = z.object({
  pid: z.number().int().positive(),
  port: z.number().int().min(0).max(65535).nullable(),
  startedAt: z.string(),
});
export type PeerLockInfo = z.infer<typeof LockSchema>;

export class PeerLockHeld extends Error {
  override readonly name = 'PeerLockHeld';
  constructor(
    readonly peerId: string,
    readonly holder: PeerLockInfo,
  ) {
    super(`peer ${peerId} is already running as process ${holder.pid}${holder.port ? ` on port ${holder.port}` : ''}; stop it first (or let the plane adopt it)`);
  }
}

export function lockPath(peerDir: string): string {
  return join(peerDir, 'peer.lock');
}

/** The lock's holder when it is a live process; null for no lock, a malformed one or a dead pid. */
export function readPeerLock(peerDir: string): PeerLockInfo | null {
  return readLiveLock(lockPath(peerDir), LockSchema);
}

export interface PeerLock {
  /** Records the bound port, so the plane can find and health-check this process. */
  setPort(port: number): void;
  /** Removes the lock if it is still this process's. */
  release(): void;
}

export function acquirePeerLock(peerDir: string, peerId: string, pid = process.pid): PeerLock {
  const path = lockPath(peerDir);
  const info: PeerLockInfo = { pid, port: null, startedAt: new Date().toISOString() };
  for (let attempt = 0; ; attempt++) {
    try {
      writeNewPrivateFile(path, `${JSON.stringify(info)}\n`);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const holder = readPeerLock(peerDir);
      if (holder && holder.pid !== pid) throw new PeerLockHeld(peerId, holder);
      // Stale (its process is gone) or malformed: take it over.
      rmSync(path, { force: true });
    }
  }
  const ours = () => readPeerLock(peerDir)?.pid === pid;
  return {
    setPort(port) {
      if (!ours()) return;
      const temp = `${path}.${pid}.tmp`;
      rmSync(temp, { force: true });
      writeNewPrivateFile(temp, `${JSON.stringify({ ...info, port })}\n`);
      renameSync(temp, path);
    },
    release() {
      if (ours()) rmSync(path, { force: true });
    },
  };
}
