/**
 * A peer stops with the plane that started it and starts again only when a person asks (README,
 * Peers): so a plane started again says which peers were running when it last stopped and are
 * stopped now, and how to start them, rather than leaving them to be found stopped. Said once:
 * the start after that speaks of what ran in between. The built CLI (`agentplane serve`) as real
 * processes, stopped with SIGINT as Ctrl-C stops it.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PeerSummary } from '../src-shared/ipc/contract';
import { callCommand, makeTempDir, requireBuild, startServe, stopWith, type ServeProcess } from './support/serve-process';

const disposers: Array<() => void> = [];
const dirs: string[] = [];
beforeAll(() => requireBuild());
afterAll(() => {
  for (const dispose of disposers) dispose();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function serve(dataDir: string): Promise<ServeProcess> {
  const plane = await startServe({ dataDir, env: { AGENTPLANE_DEMO_PEERS: '1' } });
  disposers.push(() => plane.dispose());
  return plane;
}

const notices = (plane: ServeProcess) => plane.stdoutLines.filter((line) => /running when this plane last stopped/.test(line));

const notice = (ids: string, dataDir: string) =>
  `Peer ${ids} was running when this plane last stopped and is stopped now (a peer stops with its plane and starts only when asked): agentplane peer up ${ids} --data-dir ${dataDir}, or click Start in the Peers view.`;

async function start(plane: ServeProcess, id: string): Promise<void> {
  const started = await callCommand(plane, 'peers.start', { id });
  expect((started.body as { value: PeerSummary }).value.status).toBe('running');
}

describe('peers after the plane restarts', () => {
  it('the next start names the peers that ran when the plane stopped and how to start them, once; not one a person stopped', { timeout: 150_000 }, async () => {
    const dataDir = makeTempDir('peers-after-restart');
    dirs.push(dataDir);
    const first = await serve(dataDir);
    expect(notices(first)).toEqual([]);
    await start(first, 'alpha');
    expect((await stopWith(first, 'SIGINT', 15_000)).code).toBe(0);

    const second = await serve(dataDir);
    expect(notices(second)).toEqual([notice('alpha', dataDir)]);
    const listed = await callCommand(second, 'peers.list');
    expect((listed.body as { value: { peers: PeerSummary[] } }).value.peers.find((p) => p.id === 'alpha')?.status).toBe('stopped');
    await start(second, 'beta');
    expect((await stopWith(second, 'SIGINT', 15_000)).code).toBe(0);

    // alpha was said once and did not run under the second plane; beta did.
    const third = await serve(dataDir);
    expect(notices(third)).toEqual([notice('beta', dataDir)]);
    await start(third, 'alpha');
    expect((await callCommand(third, 'peers.stop', { id: 'alpha' })).status).toBe(200);
    expect((await stopWith(third, 'SIGINT', 15_000)).code).toBe(0);

    // alpha was stopped by a person, not by the plane's end: nothing to say.
    const fourth = await serve(dataDir);
    expect(notices(fourth)).toEqual([]);
    expect((await stopWith(fourth, 'SIGINT', 15_000)).code).toBe(0);
  });
});
