/**
 * `npm start` builds only when it must, and never under a running plane:
 * - with out/ built from the sources as they are (`npm test` builds first), it starts the plane
 *   at once: nothing of a build before the plane's own lines, out/ untouched;
 * - with a plane already running for the data dir, a second `npm start` refuses with the plane's
 *   own message (AP_PLANE_RUNNING, its URL and pid) before it builds, even when out/ is older
 *   than the sources: out/ is not rebuilt under the running plane.
 * Exactly as the README runs it (`npm start`), with no Electron binary here (the headless plane).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, makeTempDir, REPO_ROOT, requireBuild, startServe, type ServeProcess } from './support/serve-process';

const tempDirs: string[] = [];
let npm: ChildProcess | undefined;
const planes: ServeProcess[] = [];
const CLI_BUNDLE = join(REPO_ROOT, 'out', 'main', 'cli.js');

beforeAll(() => requireBuild());
afterEach(() => {
  if (npm && npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
  for (const plane of planes.splice(0)) plane.dispose();
});
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

function dataDirFor(name: string): string {
  const dir = makeTempDir(name);
  tempDirs.push(dir);
  return join(dir, 'data');
}

describe('npm start and the build', () => {
  it('with out/ up to date, starts the plane without building: no build output before the URL, out/ untouched', { timeout: 120_000 }, async () => {
    const builtAt = statSync(CLI_BUNDLE).mtimeMs;
    // BROWSER=true: xdg-open runs `true` instead of looking for a browser.
    npm = spawn('npm', ['start'], { cwd: REPO_ROOT, env: childEnv({ AGENTPLANE_DATA_DIR: dataDirFor('npm-start-quiet'), BROWSER: 'true' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const before = await new Promise<string[]>((resolveLines, reject) => {
      const lines: string[] = [];
      const timer = setTimeout(() => reject(new Error(`npm start printed no URL line within 100 s; stdout:\n${lines.join('\n')}\nstderr:\n${stderr}`)), 100_000);
      createInterface({ input: npm!.stdout! }).on('line', (line) => {
        if (line.startsWith('AGENTPLANE_UI_URL=')) {
          clearTimeout(timer);
          resolveLines([...lines]);
        } else lines.push(line);
      });
    });
    // npm's own header (`> agentplane@… start`, `> exec node scripts/start.mjs`) and the plane's lines; nothing else.
    const extra = before.filter((line) => line.trim() !== '' && !line.startsWith('> ') && !/^The Electron binary is not installed here/.test(line) && !/^AgentPlane \S+ \(headless\)/.test(line));
    expect(extra, 'npm start printed more than the plane (a build? run `npm run build` before this test if the sources changed since)').toEqual([]);
    expect(stderr).toBe('');
    expect(statSync(CLI_BUNDLE).mtimeMs).toBe(builtAt);
    const closed = new Promise((resolveClose) => npm!.once('close', resolveClose));
    npm.kill('SIGTERM');
    await closed;
  });

  it('a second npm start for a running plane’s data dir refuses with the plane’s message before building, even with out/ older than the sources', { timeout: 120_000 }, async () => {
    const dataDir = dataDirFor('npm-start-second');
    const plane = await startServe({ dataDir });
    planes.push(plane);
    const planePid = (JSON.parse(readFileSync(join(dataDir, 'plane.json'), 'utf8')) as { pid: number }).pid;
    // out/ made to look older than every source: a start would build now, were it not refused first.
    const { atime, mtime } = statSync(CLI_BUNDLE);
    const longAgo = new Date('2001-01-01T00:00:00Z');
    utimesSync(CLI_BUNDLE, longAgo, longAgo);
    try {
      npm = spawn('npm', ['start'], { cwd: REPO_ROOT, env: childEnv({ AGENTPLANE_DATA_DIR: dataDir, BROWSER: 'true' }), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      npm.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const code = await new Promise<number | null>((resolveCode) => npm!.once('close', (c) => resolveCode(c)));
      expect(stderr).toContain(`agentplane: AP_PLANE_RUNNING: a plane is already running for ${dataDir} at ${plane.origin} (pid ${planePid}); use it (the CLI acts through it), or stop it first`);
      expect(stdout).not.toMatch(/building|vite/i);
      expect(code).not.toBe(0);
      // Not rebuilt: the bundle still has the time it was given above.
      expect(statSync(CLI_BUNDLE).mtime.getTime()).toBe(longAgo.getTime());
    } finally {
      utimesSync(CLI_BUNDLE, atime, mtime);
    }
  });
});
