/**
 * Lock files held by a process for its life (one plane per data dir, one process per peer): a
 * small JSON file naming the holder's pid, created O_CREAT|O_EXCL|O_NOFOLLOW and 0600, so two
 * creators cannot both win and nobody can plant a link in its place. A lock is live while its
 * pid is; one whose process is gone (killed) is stale, and its next taker removes it.
 *
 * Known limit: two processes taking over the same stale lock at the same instant can both
 * succeed (read-stale, unlink, create is not one step); each caller names its second guard.
 */
import { closeSync, constants, openSync, readFileSync, writeSync } from 'node:fs';
import type { z } from 'zod';

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else, so it is alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The lock's content when it parses and its pid is alive; null for none, malformed or stale. */
export function readLiveLock<T extends { pid: number }>(path: string, schema: z.ZodType<T>): T | null {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch {
    return null;
  }
  let parsed;
  try {
    parsed = schema.safeParse(JSON.parse(raw));
  } catch {
    return null;
  }
  return parsed.success && processAlive(parsed.data.pid) ? parsed.data : null;
}

const CREATE_EXCLUSIVE = constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | (constants.O_NOFOLLOW ?? 0);

/** Creates `path` with `text`, failing with EEXIST when it exists (a link included). */
export function writeNewPrivateFile(path: string, text: string): void {
  const fd = openSync(path, CREATE_EXCLUSIVE, 0o600);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
