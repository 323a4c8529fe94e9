/**
 * One data dir, one plane. Every plane (`agentplane serve`, the desktop app's plane host, and a
 * CLI command that opens the data dir itself because no plane runs) holds `<dataDir>/plane.lock`
 * for its life: a small JSON file (0600) naming its pid (base/pid-lock-file.ts, as the per-peer
 * lock in peers/peer-lock.ts). A second plane on the same data dir
 * finds the lock held by a live process and refuses with `AP_PLANE_RUNNING`, naming the running
 * plane's URL (from its plane.json) and pid, instead of overwriting that plane.json and resuming
 * the same runs twice. A lock whose pid is gone (the plane was killed) is stale and taken over.
 *
 * The lock says who owns the data dir; plane.json says where that owner listens. They are two
 * files because a plane holds the lock from before it opens anything until after it has closed
 * everything, while plane.json exists only while its local API is up (a CLI command's in-process
 * plane has none).
 *
 * Re-entrant within one process: a lock held by this very pid is taken over (tests open one
 * data dir more than once in a process), and release removes the file only while it is still
 * the one this acquisition wrote.
 *
 * Known limit, as for peer locks: two processes taking over the same stale lock at the same
 * instant can both succeed (read-stale, unlink, create is not one step).
 */
import { readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { PlaneError } from '../base/plane-error';
import { readLiveLock, writeNewPrivateFile } from '../base/pid-lock-file';
import { readPlaneFile } from './plane-file';

const LockSchema = z.object({
  pid: z.number().int().positive(),
  startedAt: z.string(),
});
type PlaneLockInfo = z.infer<typeof LockSchema>;

export function planeLockPath(dataDir: string): string {
  return join(dataDir, 'plane.lock');
}

/** The lock's holder when it is a live process; null for no lock, a malformed one or a dead pid. */
export function readPlaneLock(dataDir: string): PlaneLockInfo | null {
  return readLiveLock(planeLockPath(dataDir), LockSchema);
}

/** Another live plane holds the data dir; the message names its URL (when it serves one) and pid. */
export class PlaneRunningError extends PlaneError {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
    readonly url: string | null,
  ) {
    super(
      ErrorCode.PlaneRunning,
      url
        ? `${ErrorCode.PlaneRunning}: a plane is already running for ${dataDir} at ${url} (pid ${pid}); use it (the CLI acts through it), or stop it first`
        : `${ErrorCode.PlaneRunning}: a plane is already running for ${dataDir} (pid ${pid}, no local API yet: starting, or a CLI command holding the data dir); wait for it, or stop it first`,
    );
    this.name = 'PlaneRunningError';
  }
}

export interface PlaneLock {
  /** Removes the lock if it is still the one this acquisition wrote. */
  release(): void;
}

/**
 * The refusal a plane starting now in this process would meet, or null when none would: another
 * live process holds the lock. For `npm start` (scripts/start.mjs), which asks before it builds,
 * so that a second start refuses without rebuilding out/ under the running plane.
 */
export function planeRunningError(dataDir: string, pid = process.pid): PlaneRunningError | null {
  const holder = readPlaneLock(dataDir);
  if (!holder || holder.pid === pid) return null;
  const planeFile = readPlaneFile(dataDir);
  return new PlaneRunningError(dataDir, holder.pid, planeFile?.pid === holder.pid ? planeFile.url : null);
}

/** Takes the data dir's plane lock, or throws PlaneRunningError when a live plane holds it. */
export function acquirePlaneLock(dataDir: string, pid = process.pid): PlaneLock {
  const path = planeLockPath(dataDir);
  const info: PlaneLockInfo = { pid, startedAt: new Date().toISOString() };
  // The acquisition's own id makes the text unique, so release can tell its lock from a later one.
  const text = `${JSON.stringify({ ...info, acquisition: randomUUID() })}\n`;
  for (let attempt = 0; ; attempt++) {
    try {
      writeNewPrivateFile(path, text);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw error;
      const running = planeRunningError(dataDir, pid);
      if (running) throw running;
      // Stale (its process is gone), malformed, or this process's own: take it over.
      rmSync(path, { force: true });
    }
  }
  return {
    release() {
      let current: string | null = null;
      try {
        current = readFileSync(path, 'utf8');
      } catch {
        return;
      }
      if (current === text) rmSync(path, { force: true });
    },
  };
}
