/**
 * Peers do not outlive the plane, and a peer never runs twice. A plane killed with SIGKILL
 * sends no signal to anyone; its peers must still stop (the watchdog pipe), and a plane
 * started later on the same data dir must find a live peer and adopt it rather than start a
 * second process with the same identity, file store and conversations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PeerSummary } from '../src-shared/ipc/contract';
import { startPeerExpectingFailure, startPeerProcess, type PeerProcess } from './support/peers';
import { callCommand, makeTempDir, portAcceptsConnections, requireBuild, startServe, type ServeProcess } from './support/serve-process';

const disposers: Array<() => void> = [];
afterAll(() => disposers.forEach((d) => d()));
beforeAll(() => requireBuild());

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(what: string, check: () => boolean | Promise<boolean>, withinMs = 10_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function serve(dataDir: string): Promise<ServeProcess> {
  const plane = await startServe({ dataDir, env: { AGENTPLANE_DEMO_PEERS: '1' } });
  disposers.push(() => plane.dispose());
  return plane;
}

async function peers(plane: ServeProcess): Promise<Map<string, PeerSummary>> {
  const { body } = await callCommand(plane, 'peers.list');
  return new Map((body as { value: { peers: PeerSummary[] } }).value.peers.map((p) => [p.id, p]));
}

describe('peer processes and the plane that started them', () => {
  it('a plane killed with SIGKILL takes its peers with it; the next plane starts them once', { timeout: 90_000 }, async () => {
    const dataDir = makeTempDir('peer-lifetime');
    const first = await serve(dataDir);
    const started = await callCommand(first, 'peers.start', { id: 'alpha' });
    expect(started.status).toBe(200);
    const alpha = (started.body as { value: PeerSummary }).value;
    expect(alpha.status).toBe('running');
    expect(alive(alpha.pid!)).toBe(true);

    first.child.kill('SIGKILL');
    await first.exited;
    await until(`peer alpha (pid ${alpha.pid}) exiting after its plane was killed`, () => !alive(alpha.pid!));
    expect(await portAcceptsConnections(alpha.port)).toBe(false);

    const second = await serve(dataDir);
    expect((await peers(second)).get('alpha')!.status).toBe('stopped');
    const again = await callCommand(second, 'peers.start', { id: 'alpha' });
    expect((again.body as { value: PeerSummary }).value.status).toBe('running');
    await callCommand(second, 'peers.stop', { id: 'alpha' });
    second.child.kill('SIGTERM');
    await second.exited;
  });

  it('a peer already running is refused a second process and adopted by a new plane', { timeout: 90_000 }, async () => {
    const dataDir = makeTempDir('peer-adopt');
    // A plane registers the demo peers, then goes away cleanly.
    const registering = await serve(dataDir);
    registering.child.kill('SIGTERM');
    await registering.exited;

    const inTerminal: PeerProcess = await startPeerProcess({ dataDir, peerId: 'alpha' });
    disposers.push(() => inTerminal.dispose());
    const twice = await startPeerExpectingFailure({ dataDir, peerId: 'alpha' });
    expect(twice.code).not.toBe(0);
    expect(twice.output).toMatch(new RegExp(`peer alpha is already running as process ${inTerminal.pid}`));

    const plane = await serve(dataDir);
    const listed = (await peers(plane)).get('alpha')!;
    expect(listed).toMatchObject({ status: 'running', pid: inTerminal.pid, port: inTerminal.port });
    const start = await callCommand(plane, 'peers.start', { id: 'alpha' });
    expect(start.status).toBe(409);
    expect(JSON.stringify(start.body)).toMatch(/already running/);

    const stopped = await callCommand(plane, 'peers.stop', { id: 'alpha' });
    expect((stopped.body as { value: PeerSummary }).value.status).toBe('stopped');
    await until('the adopted peer exiting', () => !alive(inTerminal.pid));
    plane.child.kill('SIGTERM');
    await plane.exited;
  });
});
