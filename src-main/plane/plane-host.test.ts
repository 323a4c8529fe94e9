/**
 * The plane hosted in a child process over a message channel: the split the desktop app makes
 * with a `utilityProcess`, exercised here with a Node child process and the same entry
 * (out/main/plane-host.js, built by `npm test` before the unit tests). The parent reaches the
 * plane only through the contract client over the channel.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { appRoot } from '../base/app-paths';
import { planeFilePath, readPlaneFile } from './plane-file';
import { startPlaneHost } from './plane-host';

const entry = join(appRoot(), 'out', 'main', 'plane-host.js');
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
beforeAll(() => {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`npm run build\` first`);
});

function host(): ChildProcess {
  const child = fork(entry, [], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'], env: { ...process.env, AGENTPLANE_DEMO_PEERS: '0' } });
  children.push(child);
  return child;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

describe('the plane in a child process', () => {
  it('serves the contract over the channel, runs an agent, and stops cleanly', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-host-');
    const child = host();
    const handle = await startPlaneHost(child, { dataDir, version: 'test', host: 'electron', demoPeers: false });
    expect(handle.status).toMatchObject({ host: 'electron', state: 'running', dataDir });
    expect(child.pid).not.toBe(process.pid);
    // The local API lives in the host too, so the CLI reaches this plane through plane.json.
    expect(readPlaneFile(dataDir)).toMatchObject({ pid: child.pid });

    expect(await handle.client.call('plane.status', {})).toMatchObject({ state: 'running', version: 'test' });
    const run = await handle.client.call('runs.start', { agent: 'summarize', input: { text: 'A fox jumped over the lazy dog. Then it slept.' }, wait: true });
    expect(run).toMatchObject({ outcome: 'succeeded' });
    const refused = await handle.client.tryCall('runs.get', { runId: 'run-0000000000000000000f' });
    expect(refused).toMatchObject({ ok: false, error: { code: 'AP_NOT_FOUND' } });

    await handle.stop();
    expect(await exitOf(child)).toBe(0);
    expect(existsSync(planeFilePath(dataDir))).toBe(false);
  });

  it('closes its plane and exits when its parent goes away', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-host-orphan-');
    const child = host();
    await startPlaneHost(child, { dataDir, version: 'test', host: 'headless', demoPeers: false });
    child.disconnect();
    expect(await exitOf(child)).toBe(0);
    expect(existsSync(planeFilePath(dataDir))).toBe(false);
  });

  it('reports a plane that cannot start, and exits', { timeout: 60_000 }, async () => {
    const notAFolder = join(tempDataDir('ap-host-bad-'), 'a-file');
    writeFileSync(notAFolder, 'not a data dir');
    const child = host();
    await expect(startPlaneHost(child, { dataDir: notAFolder, version: 'test', host: 'headless', demoPeers: false })).rejects.toThrow(/a-file/);
    expect(await exitOf(child)).toBe(1);
  });

  it('refuses a data dir whose plane is alive, naming its URL and pid, and leaves its plane.json alone', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-host-second-');
    const first = host();
    const handle = await startPlaneHost(first, { dataDir, version: 'test', host: 'electron', demoPeers: false });
    const running = readPlaneFile(dataDir)!;
    const second = host();
    const refusal = startPlaneHost(second, { dataDir, version: 'test', host: 'electron', demoPeers: false });
    await expect(refusal).rejects.toThrow(`AP_PLANE_RUNNING: a plane is already running for ${dataDir} at ${running.url} (pid ${first.pid})`);
    expect(await exitOf(second)).toBe(1);
    expect(readPlaneFile(dataDir)).toEqual(running);
    expect(await handle.client.call('plane.status', {})).toMatchObject({ state: 'running' });
    await handle.stop();
    expect(await exitOf(first)).toBe(0);
  });
});
