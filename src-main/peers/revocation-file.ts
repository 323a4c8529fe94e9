/**
 * A peer's revoked sessions on disk (`<dataDir>/peers/<id>/revoked.jsonl`), so that a session
 * revoked before a restart is still refused after it, until the token expires (docs/SECURITY.md).
 * `SessionBook` reads it once when the peer starts and rewrites it on every revocation.
 *
 * What is true, and why:
 *
 * - One line per revocation: `{"sha256":"<64 hex>","expiresAt":<ms since the epoch>}`. The key
 *   is the SHA-256 of the token's one spelling, never the token: the file says which tokens are
 *   refused without holding anything that could be presented as one.
 * - Written durably before the revocation is acknowledged: the whole list goes to a fresh temp
 *   file beside it (`O_CREAT|O_EXCL|O_NOFOLLOW`, 0600: never an existing file or a planted
 *   link), is fsynced, renamed over the file, and the folder is fsynced so the rename itself
 *   survives a power cut. A reader (the next start) therefore sees the old list or the new one,
 *   never half of one, and nothing that tears is ever read back as "fewer revocations". Every
 *   write is the whole list, which costs O(live revocations); revocation is an operator's
 *   action, rare, and the list is bounded by `SessionBook`'s `maxRevoked`.
 * - Entries past their expiry are dropped on load and on every write: an expired token is
 *   refused by the expiry rule anyway, so keeping it would only grow the file.
 * - A file that cannot be read as exactly this is an error naming the file and the line, and
 *   the peer does not start: treating it as an empty list would silently un-revoke every
 *   session in it. So is a file others may write (they could un-revoke), and a symlink.
 */
import { closeSync, constants as fsConstants, fstatSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { z } from 'zod';

export interface Revocation {
  /** SHA-256 (hex) of the token's one spelling. */
  sha256: string;
  /** Milliseconds since the epoch; the token is refused by expiry after this anyway. */
  expiresAt: number;
}

export class RevocationFileError extends Error {
  override readonly name = 'RevocationFileError';
}

const EntrySchema = z.object({ sha256: z.string().regex(/^[0-9a-f]{64}$/), expiresAt: z.number().int().nonnegative() }).strict();
/** O_NOFOLLOW is POSIX; on Windows it is absent and a link there is refused by nothing but the folder's ownership. */
const O_NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;

function isErrno(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === code;
}

/**
 * The live revocations in `path` at `now` (an absent file is none: nothing was ever revoked).
 * Expired entries are dropped, and the file is rewritten without them when there were any.
 * Throws `RevocationFileError`, naming the file, for anything else than a well-formed list.
 */
export function loadRevocations(path: string, now: number = Date.now()): Revocation[] {
  let text: string;
  let fd: number;
  try {
    fd = openSync(path, fsConstants.O_RDONLY | O_NOFOLLOW);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return [];
    if (isErrno(error, 'ELOOP')) throw new RevocationFileError(`revocation file ${path} is a symbolic link; refusing to follow it (remove the link)`);
    throw new RevocationFileError(`revocation file ${path} cannot be read: ${(error as Error).message}`);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new RevocationFileError(`revocation file ${path} is not a regular file`);
    if (process.platform !== 'win32' && (stats.mode & 0o022) !== 0) {
      throw new RevocationFileError(`revocation file ${path} is writable by other users (mode ${(stats.mode & 0o777).toString(8)}), who could un-revoke sessions; chmod 600 it`);
    }
    text = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  const byDigest = new Map<string, number>();
  let expired = 0;
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const [index, line] of lines.entries()) {
    let entry: Revocation;
    try {
      const parsed = EntrySchema.safeParse(JSON.parse(line));
      if (!parsed.success) throw new Error('wrong shape');
      entry = parsed.data;
    } catch {
      throw new RevocationFileError(
        `revocation file ${path}, line ${index + 1}: not a revocation ({"sha256": 64 hex digits, "expiresAt": milliseconds}). The peer does not start without the revocations it holds: restore the file, or delete it to forget every revocation in it.`,
      );
    }
    if (now > entry.expiresAt) {
      expired++;
      continue;
    }
    byDigest.set(entry.sha256, Math.max(byDigest.get(entry.sha256) ?? 0, entry.expiresAt));
  }
  const live = [...byDigest].map(([sha256, expiresAt]) => ({ sha256, expiresAt }));
  if (expired > 0 || live.length !== lines.length) writeRevocations(path, live);
  return live;
}

/** Replaces the file with `entries`, durably (temp file, fsync, rename, fsync of the folder). */
export function writeRevocations(path: string, entries: readonly Revocation[]): void {
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}`);
  const text = entries.map((e) => `${JSON.stringify({ sha256: e.sha256, expiresAt: e.expiresAt })}\n`).join('');
  let renamed = false;
  try {
    const fd = openSync(temp, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | O_NOFOLLOW, 0o600);
    try {
      const bytes = Buffer.from(text, 'utf8');
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
    renamed = true;
    syncFolder(dir);
  } catch (error) {
    if (!renamed) {
      try {
        unlinkSync(temp);
      } catch {
        // never created, or already gone
      }
    }
    throw new RevocationFileError(`revocation file ${path} could not be written: ${(error as Error).message}`);
  }
}

/** fsync of a folder makes a rename in it durable; Windows cannot open a folder for it. */
function syncFolder(dir: string): void {
  if (process.platform === 'win32') return;
  const fd = openSync(dir, fsConstants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
