/**
 * How the plane opens and writes files in its data dir so that they are the user's alone:
 * created 0600 whatever the process umask, tightened to 0600 when an older version left them
 * looser, and never reached through a symbolic link (O_NOFOLLOW) or opened when they are not
 * a regular file (a FIFO planted at a log's path would otherwise block the plane on open; with
 * O_NONBLOCK the open fails instead).
 *
 * O_NOFOLLOW guards the last component only. The folders above are guarded by the data dir
 * check (data-dir-guard.ts): in a folder only its owner can write, nobody else can plant a link.
 *
 * Windows has no O_NOFOLLOW and no Unix modes: the flag is 0 there and fchmod is skipped; the
 * data dir's ACL (the user's profile) is what keeps it private.
 *
 * Not for files SQLite has open in this process (the journal, its -wal and -shm): its locks are
 * POSIX advisory locks, owned by the process, and closing any descriptor of the file drops them
 * all. sqlite-store.ts keeps those three private without opening an existing one.
 */
import { closeSync, constants, fchmodSync, fstatSync, lstatSync, openSync, readFileSync, renameSync, rmSync, writeSync, type Stats } from 'node:fs';

const PRIVATE_FILE_MODE = 0o600;
const windows = process.platform === 'win32';
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;

/** What an open is for; each maps to fixed flags, so no caller can forget O_NOFOLLOW. */
export type PrivateOpenPurpose =
  /** Append (logs, the checkpoint log): created when absent, never truncated. */
  | 'append'
  /** A new file that must not exist yet (the temporary half of an atomic write). */
  | 'create-new'
  /** Replace the contents in place. */
  | 'truncate';

const FLAGS: Record<PrivateOpenPurpose, number> = {
  append: constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT,
  'create-new': constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL,
  truncate: constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC,
};

function refusal(path: string, why: string, code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`refusing to open ${path}: ${why}`), { code, path });
}

/**
 * Opens `path` with `flags` never through a symbolic link and never blocking on a FIFO, and
 * holds it only if it is a regular file: a link or a FIFO/socket is refused naming the file and
 * why. Returns the descriptor (the caller closes it) and its stat. Other errors (ENOENT) as thrown.
 */
function openRegularFile(path: string, flags: number, mode?: number): { fd: number; stat: Stats } {
  let fd: number;
  try {
    fd = openSync(path, flags | NOFOLLOW | NONBLOCK, mode);
  } catch (error) {
    // Linux answers ELOOP for a link at the last component under O_NOFOLLOW; some BSDs EMLINK.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK') throw refusal(path, 'it is a symbolic link, which could point anywhere', code);
    if (code === 'ENXIO') throw refusal(path, 'it is a FIFO or socket, not a file', code);
    throw error;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refusal(path, 'it is not a regular file', 'EINVAL');
    return { fd, stat };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * Opens `path` for `purpose` without following a symlink; returns the descriptor (the caller
 * closes it). The file is a regular file and 0600 when this returns.
 */
export function openPrivateFile(path: string, purpose: PrivateOpenPurpose): number {
  const { fd, stat } = openRegularFile(path, FLAGS[purpose], PRIVATE_FILE_MODE);
  try {
    // An open with O_CREAT applies the umask; a file an older version made is as it left it.
    // fchmod on the descriptor we hold, never chmod on the name, which could be swapped.
    if (!windows && (stat.mode & 0o777) !== PRIVATE_FILE_MODE) fchmodSync(fd, PRIVATE_FILE_MODE);
    return fd;
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/**
 * The text of a file the plane keeps (a settings or allow-list file), or null when there is
 * none. Never through a symbolic link and only a regular file (a FIFO would block the plane on
 * open): either is refused with an error naming the file and why. `check` sees the file's stat
 * before it is read (an owner or mode rule of the caller's), and may throw.
 */
export function readRegularFile(path: string, check?: (stat: Stats) => void): string | null {
  let opened: { fd: number; stat: Stats };
  try {
    opened = openRegularFile(path, constants.O_RDONLY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    check?.(opened.stat);
    return readFileSync(opened.fd, 'utf8');
  } finally {
    closeSync(opened.fd);
  }
}

function writeAll(fd: number, text: string | Uint8Array): void {
  const data = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let offset = 0;
  while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
}

/** Appends one chunk with O_APPEND (one write: lines from several processes do not interleave). */
export function appendPrivateFile(path: string, text: string): void {
  const fd = openPrivateFile(path, 'append');
  try {
    writeAll(fd, text);
  } finally {
    closeSync(fd);
  }
}

/**
 * Appends to one file through a descriptor held open between writes, for a file written often
 * (the operator log gets a line per request: opening, fstat-ing and closing it for each line
 * was about a sixth of a peer's work per ping). Every write is still one O_APPEND write, so
 * lines from several processes do not interleave. The name is looked at again (lstat) at most
 * once per `recheckMs`, and when it no longer names the file held (rotated away, deleted, or
 * replaced, by a link even) the descriptor is dropped and the name opened afresh, with the
 * same refusals as openPrivateFile: a link planted at the path is refused, never written
 * through, and at worst the lines of that interval went to the file that was there before.
 */
export class PrivateAppender {
  private fd: number | null = null;
  private ino = 0;
  private dev = 0;
  private checkedAt = 0;

  constructor(
    readonly path: string,
    private readonly recheckMs = 1000,
    private readonly now: () => number = Date.now,
  ) {}

  append(text: string): void {
    const at = this.now();
    if (this.fd !== null && at - this.checkedAt >= this.recheckMs) {
      this.checkedAt = at;
      if (!this.stillNamed()) this.close();
    }
    if (this.fd === null) {
      const fd = openPrivateFile(this.path, 'append');
      const stat = fstatSync(fd);
      this.fd = fd;
      this.ino = stat.ino;
      this.dev = stat.dev;
      this.checkedAt = at;
    }
    try {
      writeAll(this.fd, text);
    } catch (error) {
      // A failed write (a full disk) leaves nothing held that a later line could trip on.
      this.close();
      throw error;
    }
  }

  close(): void {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    try {
      closeSync(fd);
    } catch {
      // Already gone: nothing more to release.
    }
  }

  private stillNamed(): boolean {
    try {
      const named = lstatSync(this.path);
      return named.isFile() && named.ino === this.ino && named.dev === this.dev;
    } catch {
      return false;
    }
  }
}

/** Writes the whole file in place (for files only this process writes and nobody reads mid-write). */
export function writePrivateFile(path: string, content: string | Uint8Array): void {
  const fd = openPrivateFile(path, 'truncate');
  try {
    writeAll(fd, content);
  } finally {
    closeSync(fd);
  }
}

/** The temporary name an atomic write of `path` uses in this process. */
export function temporaryNameFor(path: string): string {
  return `${path}.${process.pid}.tmp`;
}

/**
 * Replaces `path` whole: the content goes to a temporary file opened O_CREAT|O_EXCL|O_NOFOLLOW
 * (so it is a new file of ours, never one someone planted or linked), which is then renamed
 * over `path`. A reader sees the old file or the new one, never half of one; a link at `path`
 * itself is replaced by the rename, not written through.
 */
export function writePrivateFileAtomically(path: string, content: string): void {
  const temporary = temporaryNameFor(path);
  let fd: number;
  try {
    fd = openPrivateFile(temporary, 'create-new');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Left by a crash of a process that had our pid, or planted: unlink removes the name (a
    // link itself, never its target), and the retry is O_EXCL again, so it fails rather than
    // reuse anything that reappears in between.
    rmSync(temporary, { force: true });
    fd = openPrivateFile(temporary, 'create-new');
  }
  try {
    try {
      writeAll(fd, content);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
