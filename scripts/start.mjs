// `npm start` (package.json: `exec node scripts/start.mjs`): build, then run `agentplane start`
// in this very process.
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
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

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

const build = spawnSync(process.execPath, [fileURLToPath(new URL('../node_modules/electron-vite/bin/electron-vite.js', import.meta.url)), 'build'], {
  cwd: root,
  stdio: ['ignore', 'inherit', 'inherit'],
});
if (build.status !== 0) {
  process.stderr.write(`npm start: the build failed (${build.status ?? build.signal}); run \`npm run build\` to see why\n`);
  process.exit(1);
}
process.argv = [process.argv[0], fileURLToPath(new URL('../bin/agentplane.js', import.meta.url)), 'start', ...process.argv.slice(2)];
await import(pathToFileURL(process.argv[1]).href);
