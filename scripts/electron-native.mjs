// postinstall: build better-sqlite3 for Electron's ABI beside the Node build, best effort.
//
// A native module built for Node (ABI 115 on Node 20) does not load in Electron 45 (ABI 150),
// and the two cannot share one build/Release folder. So, only when the Electron binary is
// installed: back up the Node build, rebuild against Electron's headers (with the machine's
// `nodedir` setting removed from the environment, or node-gyp silently builds against Node's
// headers again), copy the result to native/electron/better_sqlite3.node, and restore the Node
// build whatever happened. At run time the Electron main passes that file as `nativeBinding`.
//
// This script never fails `npm install`: offline, or without the binary, it explains and exits 0.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const electronDir = join(root, 'node_modules', 'electron');
const sqliteDir = join(root, 'node_modules', 'better-sqlite3');
const nodeBuild = join(sqliteDir, 'build', 'Release', 'better_sqlite3.node');
const target = join(root, 'native', 'electron', 'better_sqlite3.node');

function say(message) {
  console.log(`agentplane postinstall: ${message}`);
}

try {
  const pathFile = join(electronDir, 'path.txt');
  const binary = existsSync(pathFile) ? join(electronDir, 'dist', readFileSync(pathFile, 'utf8').trim()) : null;
  if (!binary || !existsSync(binary)) {
    say('Electron binary not installed; the headless plane uses the Node build of better-sqlite3.');
    process.exit(0);
  }
  if (!existsSync(nodeBuild)) {
    say('better-sqlite3 has no Node build to keep safe; skipping the Electron build.');
    process.exit(0);
  }
  const version = JSON.parse(readFileSync(join(electronDir, 'package.json'), 'utf8')).version;
  const backup = `${nodeBuild}.node-abi`;
  copyFileSync(nodeBuild, backup);
  try {
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.toLowerCase() !== 'npm_config_nodedir'));
    // npm tells lifecycle scripts where its own node-gyp is; a local one is the fallback.
    const gyp = process.env.npm_config_node_gyp ?? join(root, 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
    const args = existsSync(gyp)
      ? [gyp, 'rebuild', '--release', `--target=${version}`, '--runtime=electron', '--dist-url=https://electronjs.org/headers']
      : null;
    if (!args) {
      say('node-gyp is not available; skipping the Electron build.');
    } else {
      const result = spawnSync(process.execPath, args, { cwd: sqliteDir, env, stdio: 'inherit', timeout: 600_000 });
      if (result.status === 0 && existsSync(nodeBuild)) {
        mkdirSync(dirname(target), { recursive: true });
        copyFileSync(nodeBuild, target);
        say(`built better-sqlite3 for Electron ${version} at native/electron/better_sqlite3.node`);
      } else {
        say('could not build better-sqlite3 for Electron (offline?); the desktop app will not open its journal until `npm rebuild` succeeds with network.');
      }
    }
  } finally {
    mkdirSync(dirname(nodeBuild), { recursive: true });
    copyFileSync(backup, nodeBuild);
    rmSync(backup, { force: true });
  }
} catch (error) {
  say(`skipped (${error instanceof Error ? error.message : String(error)})`);
}
process.exit(0);
