/**
 * `npm start`, exactly as the README runs it, stops cleanly whichever signal reaches the npm
 * process: SIGTERM or SIGINT sent to that one pid (not to its process group, as Ctrl-C in a
 * terminal would) ends the plane and the peer it started, and closes the UI port; so does npm
 * being killed outright (SIGKILL), which it cannot forward. No Electron
 * binary here, so `start` runs the headless plane.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { callCommand, childEnv, makeTempDir, portAcceptsConnections, REPO_ROOT, requireBuild } from './support/serve-process';

const tempDirs: string[] = [];
const leftovers: number[] = [];
let npm: ChildProcess | undefined;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitUntil(check: () => boolean | Promise<boolean>, withinMs: number): Promise<boolean> {
  const deadline = performance.now() + withinMs;
  while (performance.now() < deadline) {
    if (await check()) return true;
    await new Promise((done) => setTimeout(done, 100));
  }
  return check();
}

beforeAll(() => requireBuild());
afterEach(() => {
  // A failed test may leave the plane or its peer running: nothing may outlive the test.
  if (npm && npm.exitCode === null && npm.signalCode === null) npm.kill('SIGKILL');
  for (const pid of leftovers.splice(0)) if (alive(pid)) process.kill(pid, 'SIGKILL');
});
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('npm start', () => {
  // SIGKILL: npm cannot forward it; the plane sees the process that started it gone.
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGKILL'] as const) {
    it(`${signal} to the npm process alone stops the plane and its peers and closes the UI port`, async () => {
      const dataDir = join(makeTempDir(`npm-start-${signal}`), 'data');
      tempDirs.push(join(dataDir, '..'));
      // BROWSER=true: xdg-open runs `true` instead of looking for a browser.
      npm = spawn('npm', ['start'], { cwd: REPO_ROOT, env: childEnv({ AGENTPLANE_DATA_DIR: dataDir, AGENTPLANE_DEMO_PEERS: '1', BROWSER: 'true' }), stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      npm.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const url = await new Promise<string>((resolveUrl, reject) => {
        const timer = setTimeout(() => reject(new Error(`npm start printed no URL line within 120 s; stderr:\n${stderr}`)), 120_000);
        createInterface({ input: npm!.stdout! }).on('line', (line) => {
          if (line.startsWith('AGENTPLANE_UI_URL=')) {
            clearTimeout(timer);
            resolveUrl(line.slice('AGENTPLANE_UI_URL='.length));
          }
        });
      });
      const parsed = new URL(url);
      const plane = { origin: parsed.origin, token: parsed.searchParams.get('token')! };
      const port = Number(parsed.port);
      const planePid = (JSON.parse(readFileSync(join(dataDir, 'plane.json'), 'utf8')) as { pid: number }).pid;
      leftovers.push(planePid);
      expect(planePid).not.toBe(npm.pid);
      const started = await callCommand(plane, 'peers.start', { id: 'alpha' });
      expect(started.body).toMatchObject({ ok: true, value: { id: 'alpha' } });
      const peerPid = (started.body as { value: { pid: number } }).value.pid;
      leftovers.push(peerPid);
      expect(alive(peerPid)).toBe(true);

      process.kill(npm.pid!, signal);

      expect(await waitUntil(() => !alive(planePid), 15_000)).toBe(true);
      expect(await waitUntil(() => !alive(peerPid), 5_000)).toBe(true);
      expect(await portAcceptsConnections(port)).toBe(false);
    }, 180_000);
  }
});
