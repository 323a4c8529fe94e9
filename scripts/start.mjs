// `npm start` (package.json: `exec node scripts/start.mjs`): build when the sources changed since
// out/ was built, then run `agentplane start` in this very process.
//
// The build is skipped, without a word, when every file out/ is built from (src-*, resources/,
// the build config, package.json and the lock, the tsconfigs; tests excluded) is older than the
// oldest of out/'s entry files: a second start is then as quick as the plane. When it is needed,
// it runs quietly (one line; its output only when it fails). Before building, a plane already
// running for the same data dir is refused with the plane's own message (AP_PLANE_RUNNING), so a
// second `npm start` never rebuilds out/ under the plane that runs from it. `npm run build`
// builds whatever the times say.
//
// npm runs a script through a shell (npm -> sh -> node) and forwards SIGINT and SIGTERM only to
// that shell, which does not pass them on: with dash, SIGTERM kills the shell and leaves node
// running, SIGINT leaves both running. Hence, together:
// - the script `exec`s node, so node is npm's own child and gets the signal npm forwards;
// - the plane runs here, in the script's process, with its own SIGINT/SIGTERM handlers
//   (src-main/cli/serve.ts), not in one more child;
// - this process watches the processes that started it: when its parent, or under npm the
//   parent's parent (npm, should a shell still sit between), is gone (killed with SIGKILL, say),
//   it stops the plane the way SIGTERM does.
// The plane's peers stop with the plane (and each peer stops when the process that started it
// ends). `exec` is POSIX sh; npm on Windows runs scripts with cmd.exe, which has no `exec`.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** What out/ is built from (electron.vite.config.ts): folders walked whole, and single files. */
const SOURCE_FOLDERS = ['src-main', 'src-shared', 'src-preload', 'src-renderer', 'resources'];
const SOURCE_FILES = ['electron.vite.config.ts', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.base.json', 'tsconfig.node.json', 'tsconfig.web.json'];
/** One file per bundle the build writes; the oldest of them is when out/ was last built whole. */
const BUILT = ['out/main/cli.js', 'out/main/index.js', 'out/main/bundled-agents.json', 'out/preload/index.cjs', 'out/renderer/index.html'];
/** Tests are no input of the build: editing one needs no rebuild. */
const NOT_BUILT_FROM = /\.test\.tsx?$/;

/** The newest modification time under `path` (a folder's own time counts: a file removed or renamed changes it). */
function newestIn(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || (entry.isFile() && NOT_BUILT_FROM.test(entry.name))) continue;
    newest = Math.max(newest, newestIn(join(path, entry.name)));
  }
  return newest;
}

/** Whether out/ is missing a bundle or older than any file it is built from. */
function buildNeeded() {
  let built = Infinity;
  for (const file of BUILT) {
    const path = join(root, file);
    if (!existsSync(path)) return true;
    built = Math.min(built, statSync(path).mtimeMs);
  }
  const sources = Math.max(...SOURCE_FOLDERS.map((folder) => newestIn(join(root, folder))), ...SOURCE_FILES.map((file) => newestIn(join(root, file))));
  return sources >= built;
}

/** `--data-dir DIR` or `--data-dir=DIR` among the arguments `agentplane start` will get. */
function dataDirFlag(args) {
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--data-dir') return args[i + 1];
    if (args[i].startsWith('--data-dir=')) return args[i].slice('--data-dir='.length);
  }
  return undefined;
}

/**
 * The plane's own refusal when a live plane holds the data dir `agentplane start` would use, or
 * null. Read with the plane's code from source (tsx, a dev dependency, as the build is), since
 * out/ is about to be rebuilt; when that cannot be done, null: the started plane refuses anyway.
 */
async function runningPlaneRefusal(args) {
  try {
    const { tsImport } = await import('tsx/esm/api');
    const [{ resolveDataDir }, { planeRunningError }] = await Promise.all([
      tsImport(pathToFileURL(join(root, 'src-main/base/app-paths.ts')).href, import.meta.url),
      tsImport(pathToFileURL(join(root, 'src-main/plane/plane-lock.ts')).href, import.meta.url),
    ]);
    return planeRunningError(resolveDataDir(dataDirFlag(args)))?.message ?? null;
  } catch {
    return null;
  }
}

/** The parent pid of `pid` on Linux (from /proc), else null. */
function parentOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    return Number.isInteger(ppid) && ppid > 1 ? ppid : null;
  } catch {
    return null;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

// Watched from the start, before the build: a stop asked for during the build is honoured too.
// Under npm the grandparent is npm itself when a shell sits between; when the shell exec'd node
// it is whatever started npm, whose end is as good a reason to stop.
const watched = [process.ppid];
if (process.env.npm_lifecycle_event) {
  const grandparent = parentOf(process.ppid);
  if (grandparent) watched.push(grandparent);
}
let stopping = false;
const watch = setInterval(() => {
  if (stopping || watched.every(alive)) return;
  stopping = true;
  clearInterval(watch);
  // The plane's own SIGTERM handler does the clean shutdown; before it exists, this ends us.
  process.kill(process.pid, 'SIGTERM');
}, 250);
watch.unref();

const args = process.argv.slice(2);
if (buildNeeded()) {
  const refusal = await runningPlaneRefusal(args);
  if (refusal) {
    process.stderr.write(`agentplane: ${refusal}\n`);
    process.exit(1);
  }
  process.stdout.write('npm start: building out/ (the sources changed since it was built)…\n');
  const build = spawnSync(process.execPath, [fileURLToPath(new URL('../node_modules/electron-vite/bin/electron-vite.js', import.meta.url)), 'build'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (build.status !== 0) {
    process.stderr.write(`${build.stdout ?? ''}${build.stderr ?? ''}`);
    process.stderr.write(`npm start: the build failed (${build.status ?? build.signal ?? build.error?.message}); \`npm run build\` runs it alone\n`);
    process.exit(1);
  }
}
process.argv = [process.argv[0], fileURLToPath(new URL('../bin/agentplane.js', import.meta.url)), 'start', ...args];
await import(pathToFileURL(process.argv[1]).href);
