/**
 * The peer's file store, behind the MCPv2 skills `upload_file`, `list_files`,
 * `process_instructions` and `delete_file`: a flat directory of plain-named regular files.
 *
 * What is true, and why:
 *
 * - The root is an absolute, real path, fixed at construction (docs/PEER-PROTOCOL.md,
 *   "The file store"). The original bug: the store
 *   defaulted to a relative `./mcpv2_files`, every tool call ran inside a sandbox that
 *   `chdir`ed into a throwaway temp directory, so the relative path resolved inside it and
 *   `upload_file` reported success for a file deleted microseconds later. Resolving once,
 *   before anything can change the working directory, makes the store the same place for the
 *   life of the process. The root is created if missing and `realpath`ed, so a symlinked temp
 *   dir (`/tmp` on macOS) compares equal to itself later; every operation re-checks that the
 *   root still resolves there.
 * - A filename is a plain name, never a path. The protocol's traversal guard (`basename` plus
 *   "resolve and check it stays inside the store") is kept as the second line; the first is
 *   refusing, with a reason, anything that is not plainly a name: `/` and `\` (so `../x`,
 *   `..\x`, `/etc/x`, `C:\x`), `:` (drive letters, NTFS streams), `%` (percent-encoded
 *   traversal such as `%2e%2e%2f`: we never decode, and a name that would change when decoded
 *   is someone's attempt to smuggle a path), NUL, Unicode control characters (Cc: U+0000-U+001F,
 *   U+007F-U+009F), format characters (Cf: U+202E RIGHT-TO-LEFT OVERRIDE makes
 *   `invoice<U+202E>txt.exe` display as `invoiceexe.txt`; U+200B and U+FEFF are invisible, so
 *   two names that look identical are different files), line and paragraph separators, and
 *   lone surrogates (not characters at all: UTF-8 turns them into U+FFFD, so the file written
 *   would not have the name given), empty, `.` and `..`,
 *   a leading dot (hidden names; our own temp files use one, so no upload can collide with
 *   them), Windows device names, and names over 255 bytes (the usual file-system limit). We
 *   refuse rather than strip: stripping `../../etc/passwd` to `passwd` silently writes a
 *   different file than the caller named.
 * - Symlinks are never followed. Reads open with `O_NOFOLLOW` and then check the handle is a
 *   regular file; writes refuse when the name exists as anything but a regular file; deletes
 *   `lstat` first and refuse links and directories. A link planted in the store pointing
 *   outside it is therefore neither read through, written through nor deleted through.
 * - Hard links are refused too: a name whose inode has more than one link (`nlink > 1`) is
 *   not read, not replaced, not deleted and not listed. `lstat` sees a hard link as an
 *   ordinary regular file, so without this a second name planted in the store for a file
 *   elsewhere on the same file system (a key, another peer's secret) would be served to any
 *   caller by `process_instructions`. Every file the store writes has exactly one name (a
 *   fresh temp file renamed into place), so the check never refuses the store's own files; a
 *   file that gained a second name later is refused from then on, and the operator removes
 *   the extra name.
 * - Writes are atomic: content goes to a fresh temp file in the root (`wx`: created new, never
 *   an existing file or link), is flushed, and is renamed over the name. A reader sees the old
 *   file or the new one, never half of one, and a failed write leaves no partial file.
 * - Size is capped on the way in and on the way out: nothing over `maxFileBytes` is stored or
 *   read back into memory.
 * - Failures are a `FileStoreError` with a stable `code`, so the skill layer maps them to
 *   MCPv2 codes (`not-found` to -32007 File not found, the rest to -32602 Invalid params)
 *   without parsing messages.
 */
import { mkdirSync, realpathSync, constants as fsConstants, type Stats } from 'node:fs';
import { lstat, open, readdir, realpath, rename, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';

export type FileStoreErrorCode = 'invalid-filename' | 'not-found' | 'too-large' | 'not-a-file' | 'root-moved';

export class FileStoreError extends Error {
  override readonly name = 'FileStoreError';
  constructor(
    readonly code: FileStoreErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface FileStoreOptions {
  /** Directory of the store; a relative path is resolved against the cwd once, here. */
  root: string;
  maxFileBytes: number;
}

export interface StoredFile {
  filename: string;
  bytes: number;
  /** Milliseconds since the epoch. */
  modifiedAt: number;
}

export const MAX_FILENAME_BYTES = 255;
const TEMP_PREFIX = '.partial-';
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$/i;
/**
 * Characters a filename may not hold: control (Cc), format (Cf), line and paragraph separators
 * (Zl, Zp) and lone surrogates (Cs). With the `u` flag a lone surrogate is one code point,
 * so it matches Cs rather than slipping through as half of a pair.
 */
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const UNPRINTABLE_KINDS: Array<[RegExp, string]> = [
  [/^\p{Cc}$/u, 'a control character'],
  [/^\p{Cf}$/u, 'a Unicode format character (invisible, or reorders how the name is displayed)'],
  [/^\p{Zl}$/u, 'a line separator'],
  [/^\p{Zp}$/u, 'a paragraph separator'],
  [/^\p{Cs}$/u, 'a lone surrogate, which is not a character'],
];

/** Why the character `ch` is refused: its code point and its Unicode category in words. */
function unprintableProblem(ch: string): string {
  const code = ch.codePointAt(0) ?? 0;
  const kind = UNPRINTABLE_KINDS.find(([category]) => category.test(ch))?.[1] ?? 'a control character';
  return `the filename contains U+${code.toString(16).toUpperCase().padStart(4, '0')}, ${kind}`;
}
/** O_NOFOLLOW and O_NONBLOCK are POSIX; on Windows they are absent and the lstat check stands alone. */
const O_NOFOLLOW = fsConstants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = fsConstants.O_NONBLOCK ?? 0;

/** Why `name` is not a plain filename, or null when it is one. */
export function filenameProblem(name: unknown): string | null {
  if (typeof name !== 'string') return 'a filename is a string';
  if (name.length === 0) return 'the filename is empty';
  if (name.includes('\u0000')) return 'the filename contains a NUL byte';
  const unprintable = UNPRINTABLE.exec(name);
  if (unprintable) return unprintableProblem(unprintable[0]);
  if (name === '.' || name === '..') return `'${name}' is a directory reference, not a filename`;
  if (name.includes('%')) {
    let decoded: string | null = null;
    try {
      decoded = decodeURIComponent(name);
    } catch {
      decoded = null;
    }
    return decoded !== null && decoded !== name
      ? `the filename is percent-encoded (it decodes to ${JSON.stringify(decoded)}); send the plain name`
      : "the filename contains '%', which is refused so that no encoded path can pass as a name";
  }
  if (name.includes('/') || name.includes('\\')) return 'the filename contains a path separator; it must be a plain name, not a path';
  if (name.includes(':')) return "the filename contains ':' (a drive letter or stream name), which is refused";
  if (name.startsWith('.')) return 'the filename starts with a dot; hidden names are refused';
  if (WINDOWS_DEVICE.test(name)) return `'${name}' is a reserved device name on Windows`;
  if (Buffer.byteLength(name, 'utf8') > MAX_FILENAME_BYTES) return `the filename is longer than ${MAX_FILENAME_BYTES} bytes`;
  return null;
}

function isErrno(error: unknown, ...codes: string[]): boolean {
  return error instanceof Error && codes.includes((error as NodeJS.ErrnoException).code ?? '');
}

export class FileStore {
  /** Absolute and real (symlinks in it resolved), fixed for the life of the store. */
  readonly root: string;
  readonly maxFileBytes: number;

  constructor(options: FileStoreOptions) {
    const { maxFileBytes } = options;
    if (typeof options.root !== 'string' || options.root.length === 0) throw new TypeError('a file store needs a root directory');
    if (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 1) throw new RangeError(`maxFileBytes must be a positive integer, got ${maxFileBytes}`);
    const absolute = resolve(options.root);
    mkdirSync(absolute, { recursive: true, mode: 0o700 });
    this.root = realpathSync(absolute);
    this.maxFileBytes = maxFileBytes;
  }

  /** Store `content` under `filename`, replacing a regular file of that name atomically. */
  async save(filename: string, content: Uint8Array): Promise<StoredFile> {
    const target = await this.#pathFor(filename);
    if (!(content instanceof Uint8Array)) throw new TypeError('file content is bytes');
    if (content.byteLength > this.maxFileBytes) {
      throw new FileStoreError('too-large', `'${filename}' is ${content.byteLength} bytes; the store takes at most ${this.maxFileBytes}`);
    }
    await this.#refuseUnlessAbsentOrRegular(filename, target);
    const temp = join(this.root, `${TEMP_PREFIX}${randomBytes(12).toString('hex')}`);
    let renamed = false;
    try {
      const handle = await open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(content);
        await handle.sync();
      } finally {
        await handle.close();
      }
      // Checked again just before the rename: a link planted meanwhile is refused, not replaced.
      await this.#refuseUnlessAbsentOrRegular(filename, target);
      await rename(temp, target);
      renamed = true;
      const stats = await lstat(target);
      return { filename, bytes: stats.size, modifiedAt: Math.floor(stats.mtimeMs) };
    } finally {
      if (!renamed) await unlink(temp).catch(() => undefined);
    }
  }

  /** The regular files in the store, by name. Links, directories and temp files are not listed. */
  async list(): Promise<StoredFile[]> {
    await this.#checkRoot();
    const files: StoredFile[] = [];
    for (const entry of await readdir(this.root, { withFileTypes: true })) {
      if (!entry.isFile() || filenameProblem(entry.name) !== null) continue;
      let stats: Stats;
      try {
        stats = await lstat(join(this.root, entry.name));
      } catch (error) {
        if (isErrno(error, 'ENOENT')) continue; // deleted while listing
        throw error;
      }
      if (stats.isFile() && stats.nlink === 1) files.push({ filename: entry.name, bytes: stats.size, modifiedAt: Math.floor(stats.mtimeMs) });
    }
    return files.sort((a, b) => (a.filename < b.filename ? -1 : a.filename > b.filename ? 1 : 0));
  }

  /** The content of a regular file in the store. */
  async read(filename: string): Promise<Buffer> {
    const target = await this.#pathFor(filename);
    const before = await this.#lstatOrNull(target);
    if (!before) throw new FileStoreError('not-found', `no file named '${filename}' in the store`);
    if (!before.isFile() || before.nlink > 1) throw this.#notAFile(filename, before);
    let handle;
    try {
      handle = await open(target, fsConstants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) throw new FileStoreError('not-found', `no file named '${filename}' in the store`);
      if (isErrno(error, 'ELOOP', 'EMLINK')) throw new FileStoreError('not-a-file', `'${filename}' is a symbolic link; the store never follows links`);
      throw error;
    }
    try {
      // Checked again on the handle: a second name added between the lstat and the open.
      const stats = await handle.stat();
      if (!stats.isFile() || stats.nlink > 1) throw this.#notAFile(filename, stats);
      if (stats.size > this.maxFileBytes) {
        throw new FileStoreError('too-large', `'${filename}' is ${stats.size} bytes; the store reads at most ${this.maxFileBytes}`);
      }
      const content = await handle.readFile();
      if (content.byteLength > this.maxFileBytes) {
        throw new FileStoreError('too-large', `'${filename}' grew past ${this.maxFileBytes} bytes while being read`);
      }
      return content;
    } finally {
      await handle.close();
    }
  }

  /** Remove a regular file from the store. */
  async delete(filename: string): Promise<void> {
    const target = await this.#pathFor(filename);
    const stats = await this.#lstatOrNull(target);
    if (!stats) throw new FileStoreError('not-found', `no file named '${filename}' in the store`);
    if (!stats.isFile() || stats.nlink > 1) throw this.#notAFile(filename, stats);
    try {
      await unlink(target); // unlink removes a name; it never follows a link
    } catch (error) {
      if (isErrno(error, 'ENOENT')) throw new FileStoreError('not-found', `no file named '${filename}' in the store`);
      throw error;
    }
  }

  /** The absolute path for a plain filename, checked to sit directly inside the (real) root. */
  async #pathFor(filename: string): Promise<string> {
    const problem = filenameProblem(filename);
    if (problem !== null) throw new FileStoreError('invalid-filename', `refused filename ${JSON.stringify(filename)}: ${problem}`);
    await this.#checkRoot();
    const target = resolve(this.root, filename);
    // The second line of the traversal guard: whatever the name check missed, the resolved
    // path's parent is the root itself, not a directory above, beside or below it.
    if (dirname(target) !== this.root) {
      throw new FileStoreError('invalid-filename', `refused filename ${JSON.stringify(filename)}: it resolves outside the store`);
    }
    return target;
  }

  /** The root must still be the directory it was at construction (not since swapped for a link). */
  async #checkRoot(): Promise<void> {
    let real: string;
    try {
      real = await realpath(this.root);
    } catch (error) {
      if (isErrno(error, 'ENOENT', 'ENOTDIR')) throw new FileStoreError('root-moved', `the store directory ${this.root} no longer exists`);
      throw error;
    }
    if (real !== this.root) throw new FileStoreError('root-moved', `the store directory ${this.root} now resolves to ${real}; refusing to follow it`);
  }

  async #refuseUnlessAbsentOrRegular(filename: string, target: string): Promise<void> {
    const stats = await this.#lstatOrNull(target);
    if (stats && (!stats.isFile() || stats.nlink > 1)) throw this.#notAFile(filename, stats);
  }

  async #lstatOrNull(target: string): Promise<Stats | null> {
    try {
      return await lstat(target);
    } catch (error) {
      if (isErrno(error, 'ENOENT')) return null;
      throw error;
    }
  }

  #notAFile(filename: string, stats: Stats): FileStoreError {
    const what = stats.isSymbolicLink()
      ? 'a symbolic link; the store never follows links'
      : stats.isDirectory()
        ? 'a directory'
        : stats.isFile() && stats.nlink > 1
          ? `a file with another hard link (${stats.nlink} names for one file); the store never touches a file that also lives elsewhere`
          : 'not a regular file';
    return new FileStoreError('not-a-file', `'${filename}' is ${what}`);
  }
}
