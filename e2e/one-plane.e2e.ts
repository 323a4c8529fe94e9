/**
 * One plane per data dir, against two real `agentplane serve` processes: a second plane on a
 * data dir whose plane is alive refuses, naming the running plane's URL and pid, and leaves the
 * first plane's plane.json and CLI access alone; after the first is killed (`kill -9`, so it
 * cleans up nothing) its stale lock is taken over by the next plane.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, requireBuild, runCli, startServe, stopWith, type ServeProcess } from './support/serve-process';

const started: ServeProcess[] = [];
const tempDirs: string[] = [];

beforeAll(() => requireBuild());
afterEach(() => {
  for (const plane of started.splice(0)) plane.dispose();
});
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

async function serve(dataDir: string): Promise<ServeProcess> {
  const plane = await startServe({ dataDir });
  started.push(plane);
  return plane;
}

describe('one plane per data dir', () => {
  it('a second serve refuses with the first plane URL and pid; the first keeps plane.json and CLI access', async () => {
    const root = makeTempDir('one-plane');
    tempDirs.push(root);
    const dataDir = join(root, 'data');
    const first = await serve(dataDir);
    const planeFileBefore = readFileSync(join(dataDir, 'plane.json'), 'utf8');

    const second = await runCli(['serve', '--ui-port', '0', '--no-open', '--data-dir', dataDir], { timeoutMs: 10_000 });
    expect(second.code).toBe(1);
    expect(second.stdout).not.toContain('AGENTPLANE_UI_URL=');
    const lines = second.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('AP_PLANE_RUNNING');
    expect(lines[0]).toContain(first.origin);
    expect(lines[0]).toContain(`pid ${first.pid}`);

    expect(readFileSync(join(dataDir, 'plane.json'), 'utf8')).toBe(planeFileBefore);
    // Through the first plane: with its lock held, opening the data dir in-process would be refused.
    const runs = await runCli(['runs', 'list', '--data-dir', dataDir, '--json']);
    expect(runs.stderr).toBe('');
    expect(runs.code).toBe(0);
    expect((await stopWith(first, 'SIGTERM')).code).toBe(0);
  });

  it('after kill -9 of the plane, a new serve takes over its stale lock', async () => {
    const root = makeTempDir('stale-plane');
    tempDirs.push(root);
    const dataDir = join(root, 'data');
    const first = await serve(dataDir);
    first.child.kill('SIGKILL');
    await first.exited;
    // The killed plane cleaned up nothing: its lock is still there, naming a dead pid.
    expect(JSON.parse(readFileSync(join(dataDir, 'plane.lock'), 'utf8'))).toMatchObject({ pid: first.pid });
    const next = await serve(dataDir);
    expect(next.pid).not.toBe(first.pid);
    const planeFile = JSON.parse(readFileSync(join(dataDir, 'plane.json'), 'utf8')) as { pid: number };
    expect(planeFile.pid).toBe(next.pid);
    expect((await stopWith(next, 'SIGTERM')).code).toBe(0);
  });
});
