/**
 * One data dir, one plane. The running plane writes `plane.json` in its data dir saying where
 * its local API listens (and with which token, which is why the file is 0600 in a 0700 folder);
 * CLI commands read it to act through the running plane instead of opening the data dir a
 * second time. A file left by a plane that died is detected by its pid and ignored.
 *
 * Written whole or not at all: to a temporary file opened O_CREAT|O_EXCL|O_NOFOLLOW, renamed
 * over plane.json (private-files.ts). So a plane.json that is a link, is not ours, has group or
 * other bits, or names anything but a loopback http URL was not written by a plane:
 * `readTrustedPlaneFile` refuses it, naming why.
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { isLoopbackHttpUrl } from '../net/loopback-url';
import { writePrivateFileAtomically } from '../base/private-files';

export const PlaneFileSchema = z.object({
  pid: z.number().int().positive(),
  url: z.string(),
  port: z.number().int().positive(),
  token: z.string(),
  startedAt: z.string(),
  /**
   * The plane's MCP endpoint (`http://127.0.0.1:<port>/mcp`) and its bearer token, when it
   * serves one: `agentplane mcp --stdio` relays a host to it rather than opening the data dir.
   */
  mcpUrl: z.string().optional(),
  mcpToken: z.string().optional(),
});
export type PlaneFile = z.infer<typeof PlaneFileSchema>;

export function planeFilePath(dataDir: string): string {
  return join(dataDir, 'plane.json');
}

export function writePlaneFile(dataDir: string, info: PlaneFile): void {
  writePrivateFileAtomically(planeFilePath(dataDir), `${JSON.stringify(info, null, 2)}\n`);
}

export function removePlaneFile(dataDir: string, pid = process.pid): void {
  const current = readPlaneFile(dataDir);
  if (current && current.pid === pid) rmSync(planeFilePath(dataDir), { force: true });
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The parsed file when it is well formed, else null (no file, not JSON, not the schema). */
function parsePlaneFile(raw: string): PlaneFile | null {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return null;
  }
  const parsed = PlaneFileSchema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

/**
 * The running plane for this data dir, or null (no file, a malformed one, or a dead pid). For
 * the plane's own bookkeeping (removing its file at exit); a client uses `readTrustedPlaneFile`.
 */
export function readPlaneFile(dataDir: string): PlaneFile | null {
  let raw: string;
  try {
    raw = readFileSync(planeFilePath(dataDir), 'utf8');
  } catch {
    return null;
  }
  const parsed = parsePlaneFile(raw);
  return parsed && processAlive(parsed.pid) ? parsed : null;
}

/** A plane.json no plane wrote; the message names the file, why, and what to do. */
export class UntrustedPlaneFileError extends Error {
  readonly code = ErrorCode.Forbidden;

  constructor(
    readonly file: string,
    why: string,
  ) {
    super(
      `not using ${file}: ${why}. A plane writes it 0600 and owned by you, naming a loopback http URL, so this one was put there by something else; ` +
        `it would get your commands and the bridge token. Check who wrote it, then remove it (rm '${file.replace(/'/g, `'\\''`)}').`,
    );
    this.name = 'UntrustedPlaneFileError';
  }
}

/**
 * What a client (the CLI) may act on: the running plane for this data dir, or null when none is
 * running (no file, or one left by a plane that died: its pid is gone, or a crash left it
 * unparseable). Throws `UntrustedPlaneFileError` for a file that is a link, not a regular file,
 * not owned by this user, readable or writable by group or others, or naming anything but a
 * loopback http URL: the CLI would send that URL the bridge token and believe its answers.
 * Owner and mode are not checked on Windows (no uids or Unix modes there; see data-dir-guard.ts).
 */
export function readTrustedPlaneFile(dataDir: string): PlaneFile | null {
  const file = planeFilePath(dataDir);
  let fd: number;
  try {
    // O_NOFOLLOW: the plane's rename never leaves a link here, so a link is someone else's.
    fd = openSync(file, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP' || code === 'EMLINK') throw new UntrustedPlaneFileError(file, 'it is a symbolic link');
    throw error;
  }
  let raw: string;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new UntrustedPlaneFileError(file, 'it is not a regular file');
    if (process.platform !== 'win32' && typeof process.getuid === 'function') {
      const uid = process.getuid();
      if (stat.uid !== uid) throw new UntrustedPlaneFileError(file, `it is owned by uid ${stat.uid}, not by you (uid ${uid})`);
      if ((stat.mode & 0o077) !== 0) {
        throw new UntrustedPlaneFileError(file, `it has mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}, not 0600 (group or others may read or write it)`);
      }
    }
    raw = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  const parsed = parsePlaneFile(raw);
  if (!parsed) return null;
  // Checked before the pid: a forged URL is reported even when the pid it names is gone.
  if (!isLoopbackHttpUrl(parsed.url)) throw new UntrustedPlaneFileError(file, `it names ${JSON.stringify(parsed.url)}, which is not a loopback http URL`);
  // The MCP relay would send that URL the MCP token: the same rule.
  if (parsed.mcpUrl !== undefined && !isLoopbackHttpUrl(parsed.mcpUrl)) {
    throw new UntrustedPlaneFileError(file, `it names ${JSON.stringify(parsed.mcpUrl)} as its MCP endpoint, which is not a loopback http URL`);
  }
  return processAlive(parsed.pid) ? parsed : null;
}
