/**
 * The data dir is the user's alone (docs/DESIGN.md, "Security baseline"). It holds the plane's signing
 * key, the peers' secrets, the bridge token (plane.json) and every run's inputs, and the plane
 * trusts what it reads there: a folder owned by someone else, or one group or others can write,
 * lets another local user read those, plant a symlink where the plane will write, or swap a
 * file the plane will trust. Such a data dir is refused before anything in it is read or
 * written, with the command that fixes it.
 *
 * One function, `ensurePrivateDataDir`, does it for every way in: `resolveDataDir` (the CLI,
 * `serve`, Electron, `peer start`) and `Journal.open` (every plane and peer process, embedders
 * and tests, which pass a folder directly). What it checks (checking the top folder alone once
 * let keys/ at 0777, or a world-writable parent, through):
 *
 * 1. The data dir itself: a folder, owned by the current user, not writable by group or others.
 * 2. Every folder above it, up to `/`, along the path as given and along the path it resolves
 *    to (a link on the way is replaced through the folder holding it): owned by root or by the
 *    user, and, when group or others may write it, sticky. Whoever can write a folder without the
 *    sticky bit can rename any entry in it, so they could move the data dir (or a folder above
 *    it) aside and put one of theirs in its place between two starts; with the sticky bit (/tmp,
 *    1777) only an entry's owner may rename it. A folder owned by another user is refused
 *    whatever its mode: its owner can change the mode at will. A group-writable folder is refused
 *    even when the group looks like the user's own: which users a group holds is not a stat
 *    away, and the refusal names a one-line fix. (The same rule OpenSSH applies to the folders
 *    above authorized_keys, with the sticky bit allowed.)
 * 3. What the plane trusts inside it, as listed in TRUSTED below (each name owned by the module
 *    named beside it; a test walks a data dir a plane and a peer have used and checks that every
 *    entry there is covered): owned by the user, not writable by group or others. Secrets (keys,
 *    tokens, the peers' shared secrets) must not be readable by group or others either: the plane
 *    has only ever created them 0600, so a group or other read bit means someone changed it, and
 *    another user may have read the secret, which a silent chmod would hide. The journal (and its
 *    -wal and -shm) and the logs are the exception on reading only: SQLite created the journal
 *    0644 before sqlite-store.ts took care of its mode, and the store (like the log appender)
 *    makes a readable one 0600 when it opens it, so a data dir made by an older build still opens.
 *    What does not exist yet is fine: the plane creates it private.
 *
 * Content folders (the tools' workspace, a peer's file store, staging and input blobs) are
 * checked as folders; what is in them is content, not configuration, and is not walked. A link
 * inside the data dir is followed and what it leads to is checked: only the user could have
 * made it there, the folders holding it being theirs alone.
 *
 * The cost is one stat per folder above the data dir and per entry of TRUSTED that exists, and
 * one readdir of each folder holding them: well under a millisecond on a data dir with a few peers.
 *
 * A folder of ours that others can read but not write (0755, as a hand-made folder often is) is
 * accepted as it is: what is in it is created 0600 (private-files.ts), and changing the mode of
 * a folder the person made is theirs to decide. Folders the plane makes are 0700.
 */
import { mkdirSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { dirname, extname, join, resolve } from 'node:path';
import { ErrorCode } from '../../src-shared/ipc/errors';

const GROUP_OR_OTHER_WRITE = 0o022;
const GROUP_OR_OTHER_ANY = 0o077;
const STICKY = 0o1000;

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
 * when it is not a folder, not owned by this user, or writable by group or others; when a folder
 * above it would let another user swap it; or when anything in it the plane trusts (TRUSTED)
 * is not this user's alone (see the header). Changes nothing it finds: each refusal says the fix.
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
    throw new UnsafeDataDirError(
      dir,
      `data folder ${dir} is writable by group or others (mode ${modeOf(stat)}): another local user could plant or replace files the plane trusts. ` +
        `Make it yours alone: chmod 700 ${quoted(dir)}`,
    );
  }
  checkFoldersAbove(dir, uid);
  checkTrustedEntries(dir, uid);
}

function modeOf(stat: Stats): string {
  return (stat.mode & 0o7777).toString(8).padStart(4, '0');
}

/** `command`, with sudo in front when the path is neither ours nor are we root (only its owner or root may change it). */
function asOwner(command: string, ownerUid: number, uid: number): string {
  return uid === 0 || ownerUid === uid ? command : `sudo ${command}`;
}

/** Every folder above `path`, nearest first, up to the root. */
function foldersAbove(path: string): string[] {
  const above: string[] = [];
  for (let at = dirname(path); ; at = dirname(at)) {
    above.push(at);
    if (dirname(at) === at) return above;
  }
}

/**
 * No folder above the data dir lets another user swap it: owned by root or by us, and sticky
 * when group or others may write it (see the header). Both the path as given (each folder stat'ed
 * through links: the folder that actually holds the next name) and the path it resolves to.
 */
function checkFoldersAbove(dir: string, uid: number): void {
  const seen = new Set<string>();
  const given = resolve(dir);
  let real = given;
  try {
    real = realpathSync.native(dir);
  } catch {
    // Stat'ed a moment ago; gone since is the caller's ENOENT at its next step.
  }
  for (const folder of [...foldersAbove(given), ...foldersAbove(real)]) {
    const stat = statSync(folder);
    const key = `${stat.dev}:${stat.ino}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const elsewhere = 'or use a data folder elsewhere (--data-dir or AGENTPLANE_DATA_DIR)';
    if (stat.uid !== 0 && stat.uid !== uid) {
      throw new UnsafeDataDirError(
        dir,
        `folder ${folder} above the data folder ${dir} is owned by uid ${stat.uid}, neither you (uid ${uid}) nor root: its owner can replace anything under it, the data folder included. ` +
          `Fix: ${asOwner(`chown ${uid} ${quoted(folder)}`, stat.uid, uid)} if it is yours, ${elsewhere}`,
      );
    }
    if ((stat.mode & GROUP_OR_OTHER_WRITE) !== 0 && (stat.mode & STICKY) === 0) {
      throw new UnsafeDataDirError(
        dir,
        `folder ${folder} above the data folder ${dir} is writable by group or others (mode ${modeOf(stat)}) and has no sticky bit: another local user could rename the data folder's path away and put a folder of theirs in its place. ` +
          `Fix: ${asOwner(`chmod go-w ${quoted(folder)}`, stat.uid, uid)} (or ${asOwner(`chmod +t ${quoted(folder)}`, stat.uid, uid)} if others must keep writing there), ${elsewhere}`,
      );
    }
  }
}

/**
 * What the plane keeps in a data dir and trusts: `folder`s (no group/other write), `state` files
 * (the same), `secret` files (no group/other access at all), and `tightened` files (no
 * group/other write; a read bit is removed by their own writer when it opens them). Relative to
 * the data dir, or to a peer's folder for PEER. Each name is the one the module beside it uses.
 */
type Kind = 'folder' | 'state' | 'secret' | 'tightened';
type Trusted = ReadonlyArray<readonly [name: string, kind: Kind]>;

const TRUSTED: Record<string, Trusted> = {
  '.': [
    ['keys', 'folder'], // journal/plane-key.ts
    ['checkpoints', 'folder'], // journal/checkpoints.ts
    ['journal.sqlite', 'tightened'], // journal/sqlite-store.ts (the journal, its -wal and -shm)
    ['journal.sqlite-wal', 'tightened'],
    ['journal.sqlite-shm', 'tightened'],
    ['transcripts.sqlite', 'tightened'], // journal/transcript-store.ts (ACP transcripts beside the journal, its -wal and -shm)
    ['transcripts.sqlite-wal', 'tightened'],
    ['transcripts.sqlite-shm', 'tightened'],
    ['peers', 'folder'], // peers/peer-registry.ts
    ['plane.json', 'secret'], // plane/plane-file.ts: the bridge token
    ['ui.json', 'secret'], // plane/ui-address.ts: the bridge token
    ['mcp-address.json', 'secret'], // plane/mcp-endpoint.ts: the MCP token
    ['a2a-address.json', 'secret'], // plane/a2a-endpoint.ts: the A2A token
    ['providers.json', 'secret'], // plane/provider-settings.ts: provider keys
    ['mcp-servers.json', 'secret'], // protocols/mcp/client/mcp-servers-file.ts: servers' env and headers
    ['a2a-push.json', 'secret'], // protocols/a2a/push-store.ts: push tokens and credentials
    ['a2a-pins.json', 'state'], // protocols/a2a/client/a2a-pins.ts
    ['net-allow.json', 'state'], // plane/net-allow.ts
    ['policy.json', 'state'], // plane/plane-config.ts
    ['prices.json', 'state'], // providers/prices.ts
    ['plane.lock', 'state'], // plane/plane-lock.ts
    ['plane.log', 'tightened'], // base/logger.ts (cli/serve.ts, electron/plane-host-entry.ts)
    ['agents', 'folder'], // plane/plane-config.ts: the user's own agent manifests
    ['workspace', 'folder'], // runtime/tools.ts: content
  ],
  keys: [
    ['plane-ed25519.private.jwk', 'secret'],
    ['plane-ed25519.public.jwk', 'state'],
  ],
  checkpoints: [['checkpoints.jsonl', 'state']],
  peers: [
    ['registry.json', 'state'],
    ['running.json', 'state'], // peers/peer-supervisor.ts: the peers running when the plane last stopped
  ],
};

/** In each peers/<id>/ (peers/peer-registry.ts, plane/peer-host.ts, peers/peer-lock.ts, cli/peer-run.ts). */
const PEER: Trusted = [
  ['identity.jwk', 'secret'],
  ['secret', 'secret'],
  ['a2a-push.json', 'secret'],
  ['revoked.jsonl', 'state'], // peers/revocation-file.ts
  ['peer.lock', 'state'],
  ['port', 'state'],
  ['peer.log', 'tightened'],
  ['peer.jsonl', 'tightened'],
  ['files', 'folder'], // content
  ['staging', 'folder'], // content
  ['inputs', 'folder'], // content
];

/** The manifests of agents/ the plane loads (runtime/manifest.ts loadAgentsFrom). */
const MANIFEST_EXTENSIONS = new Set(['.json', '.yaml', '.yml']);

/** The names in `folder`, or none when it is absent (or not a folder: its own check says so). */
function namesIn(folder: string): Set<string> {
  try {
    return new Set(readdirSync(folder));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return new Set();
    throw error;
  }
}

function checkTrustedEntries(dir: string, uid: number): void {
  const check = (folder: string, entries: Trusted, present = namesIn(folder)) => {
    for (const [name, kind] of entries) if (present.has(name)) checkEntry(dir, join(folder, name), kind, uid);
  };
  check(dir, TRUSTED['.']!);
  for (const sub of ['keys', 'checkpoints']) check(join(dir, sub), TRUSTED[sub]!);
  const agents = join(dir, 'agents');
  check(agents, [...namesIn(agents)].filter((name) => MANIFEST_EXTENSIONS.has(extname(name))).map((name) => [name, 'state'] as const));
  const peers = join(dir, 'peers');
  const inPeers = namesIn(peers);
  check(peers, TRUSTED.peers!, inPeers);
  // Each peer's folder (peers/<id>/): every folder in peers/, whatever the registry says, since
  // a peer made again under an old id reuses its folder. Files beside registry.json (a crashed
  // write's temporary) are not read by anyone.
  for (const id of inPeers) {
    if (id === 'registry.json') continue;
    const peerDir = join(peers, id);
    const stat = statOf(peerDir);
    if (!stat?.isDirectory()) continue;
    judge(dir, peerDir, 'folder', stat, uid);
    check(peerDir, PEER);
  }
}

/** stat, not lstat: what the plane reads is what a link leads to (see the header). Null when absent. */
function statOf(path: string): Stats | null {
  try {
    return statSync(path);
  } catch (error) {
    // Gone since the readdir, or a link leading nowhere: nothing there to trust yet.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * One folder or file the plane trusts, checked as ensurePrivateDataDir checks it at open: for
 * what appears or changes while the plane runs (agents/ and the manifests in it, read again when
 * they change). Absent is fine; anything else wrong throws UnsafeDataDirError, naming the fix.
 */
export function ensureTrustedEntry(dataDir: string, path: string, kind: 'folder' | 'state'): void {
  if (process.platform === 'win32' || typeof process.getuid !== 'function') return;
  checkEntry(dataDir, path, kind, process.getuid());
}

/** One entry the plane trusts: the right type, ours, and not open to group or others as its kind says. */
function checkEntry(dir: string, path: string, kind: Kind, uid: number): void {
  const stat = statOf(path);
  if (stat) judge(dir, path, kind, stat, uid);
}

function judge(dir: string, path: string, kind: Kind, stat: Stats, uid: number): void {
  const folder = kind === 'folder';
  const what = folder ? 'folder' : kind === 'secret' ? 'secret file' : 'file';
  if (folder ? !stat.isDirectory() : !stat.isFile()) {
    throw new UnsafeDataDirError(
      dir,
      `${path} in the data folder is not a ${folder ? 'folder' : 'regular file'}, where the plane keeps one: move it away (mv ${quoted(path)} ${quoted(`${path}.moved`)})`,
    );
  }
  if (stat.uid !== uid) {
    throw new UnsafeDataDirError(
      dir,
      `${what} ${path} in the data folder is owned by uid ${stat.uid}, not by you (uid ${uid}): its owner can change what the plane trusts${kind === 'secret' ? ' and read the secret' : ''}. ` +
        `Check what it holds (it may not be the plane's), then take it back: ${asOwner(`chown ${folder ? '-R ' : ''}${uid} ${quoted(path)}`, stat.uid, uid)}`,
    );
  }
  const fix = folder ? `chmod 700 ${quoted(path)}` : `chmod 600 ${quoted(path)}`;
  if ((stat.mode & GROUP_OR_OTHER_WRITE) !== 0) {
    throw new UnsafeDataDirError(
      dir,
      `${what} ${path} in the data folder is writable by group or others (mode ${modeOf(stat)}): another local user could ${folder ? 'plant or replace files in it' : 'change it'}, and the plane would trust it. ` +
        `Check it, then make it yours alone: ${fix}`,
    );
  }
  if (kind === 'secret' && (stat.mode & GROUP_OR_OTHER_ANY) !== 0) {
    throw new UnsafeDataDirError(
      dir,
      `${what} ${path} in the data folder is readable by group or others (mode ${modeOf(stat)}); the plane writes it 0600, so something else changed it, and another local user may have read the secret. ` +
        `Make it yours alone: ${fix}; then treat the secret as exposed and replace it`,
    );
  }
}
