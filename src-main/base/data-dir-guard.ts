/**
 * The data dir is the user's alone (DESIGN.md, security baseline). It holds the plane's signing
 * key, the peers' secrets, the bridge token (plane.json) and every run's inputs, and the plane
 * trusts what it reads there: a folder owned by someone else, or one group or others can write,
 * lets another local user read those, plant a symlink where the plane will write, or swap a
 * file the plane will trust. Such a folder is refused before anything in it is read or written,
 * with the command that fixes it.
 *
 * One function, `ensurePrivateDataDir`, does it for every way in: `resolveDataDir` (the CLI,
 * `serve`, Electron, `peer start`) and `Journal.open` (every plane and peer process, embedders
 * and tests, which pass a folder directly). It is a stat of one folder, so a second call on
 * the same open costs nothing worth saving.
 *
 * A folder of ours that others can read but not write (0755, as a hand-made folder often is) is
 * accepted as it is: what is in it is created 0600 (private-files.ts), and changing the mode of
 * a folder the person made is theirs to decide. Folders the plane makes are 0700.
 */
import { mkdirSync, statSync } from 'node:fs';
import { ErrorCode } from '../../src-shared/ipc/errors';

const GROUP_OR_OTHER_WRITE = 0o022;

/** A data dir the plane will not use; the message names the folder, the reason and the fix. */
export class UnsafeDataDirError extends Error {
  readonly code = ErrorCode.Forbidden;

  constructor(
    readonly dataDir: string,
    message: string,
  ) {
    super(message);
    this.name = 'UnsafeDataDirError';
  }
}

function quoted(path: string): string {
  return `'${path.replace(/'/g, `'\\''`)}'`;
}

/**
 * Makes sure `dir` is a folder only the current user can write: created 0700 when absent
 * (unless `create` is false, as for a read-only open that must change nothing), then refused
 * when it is not a folder, not owned by this user, or writable by group or others.
 */
export function ensurePrivateDataDir(dir: string, options: { create?: boolean } = {}): void {
  if (options.create ?? true) {
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      // A file where the folder should be is reported below, as not a folder.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  let stat;
  try {
    // stat, not lstat: a data dir reached through a link of the user's own (a dotfiles setup)
    // is fine; what must be private is the folder the link leads to, and that is what is checked.
    stat = statSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw Object.assign(new Error(`data folder ${dir} does not exist`), { code: 'ENOENT' });
    }
    throw error;
  }
  if (!stat.isDirectory()) throw new UnsafeDataDirError(dir, `data folder ${dir} is not a folder`);
  // Windows has neither uids nor Unix mode bits (process.getuid does not exist there, and the
  // mode Node reports is synthesised from the read-only attribute); the user's profile folder
  // ACL is what keeps the default data dir private. The owner and mode checks are POSIX only.
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return;
  const uid = process.getuid();
  if (stat.uid !== uid) {
    throw new UnsafeDataDirError(
      dir,
      `data folder ${dir} is owned by uid ${stat.uid}, not by you (uid ${uid}): its owner could read your keys and tokens and change what the plane trusts. ` +
        `Use a folder of your own (--data-dir or AGENTPLANE_DATA_DIR), or, if it is yours, take it back: chown -R ${uid} ${quoted(dir)} && chmod 700 ${quoted(dir)}`,
    );
  }
  if ((stat.mode & GROUP_OR_OTHER_WRITE) !== 0) {
    const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
    throw new UnsafeDataDirError(
      dir,
      `data folder ${dir} is writable by group or others (mode ${mode}): another local user could plant or replace files the plane trusts. ` +
        `Make it yours alone: chmod 700 ${quoted(dir)}`,
    );
  }
}
