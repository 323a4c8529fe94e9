/**
 * `agentplane peer up <id>…` and `peer down <id>…` as real processes against a running plane
 * (a hosted plane in this process, its peers real processes from the build): several peers
 * start together and each is reported and healthy; an unknown id refuses the whole command,
 * naming it, before any peer starts; a peer that exits at once (its port is taken) is reported
 * by name while the others start, and the command exits non-zero.
 */
import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { useTempFolders } from '../../tests/helpers/temp-folders';
import { runCliFromSource } from '../../tests/support/cli-from-source';
import { silentLogger } from '../base/logger';
import { startWebBridge } from '../bridge/web-bridge';
import { startHostedPlane, type StartedPlane } from '../plane/hosted-plane';
import type { PeerSummary } from '../../src-shared/ipc/contract';

const tempDir = useTempFolders('ap-cli-peer-up-');
const hosted: StartedPlane[] = [];
const blockers: Server[] = [];
afterEach(async () => {
  for (const plane of hosted.splice(0)) await plane.close();
  for (const blocker of blockers.splice(0)) await new Promise<void>((done) => blocker.close(() => done()));
});

async function runningPlane(ids: readonly string[]): Promise<{ dataDir: string; plane: StartedPlane }> {
  const dataDir = tempDir();
  const plane = await startHostedPlane({
    plane: { dataDir, version: 'test', host: 'headless', logger: silentLogger, demoPeers: false },
    startUi: (p, at) => startWebBridge({ plane: p, ...at, rendererDir: null }),
    uiPort: 0,
    mcpPort: 0,
    a2aPort: 0,
  });
  hosted.push(plane);
  for (const id of ids) plane.plane.peers.create({ id, port: 0 });
  return { dataDir, plane };
}

async function busyPort(): Promise<number> {
  const blocker = createServer();
  blockers.push(blocker);
  await new Promise<void>((done) => blocker.listen(0, '127.0.0.1', done));
  return (blocker.address() as { port: number }).port;
}

async function healthOf(address: string): Promise<{ peerId?: string }> {
  const response = await fetch(`${address.replace(/^mcpv2:/, 'http:')}/health`);
  expect(response.status).toBe(200);
  return (await response.json()) as { peerId?: string };
}

function statuses(plane: StartedPlane): Record<string, string> {
  return Object.fromEntries(plane.plane.peers.list().map((p) => [p.id, p.status]));
}

describe('agentplane peer up and down with several ids', () => {
  it('starts three real peers together, each reported and healthy, and stops them together', { timeout: 120_000 }, async () => {
    const { dataDir, plane } = await runningPlane(['a', 'b', 'c']);
    const up = await runCliFromSource(['peer', 'up', 'a', 'b', 'c', '--json', '--data-dir', dataDir]);
    expect(up.code, up.stderr).toBe(0);
    const reports = up.stdout.trim().split('\n').map((line) => JSON.parse(line) as { ok: boolean; id: string; result: PeerSummary });
    expect(reports.map((r) => r.id).sort()).toEqual(['a', 'b', 'c']);
    for (const report of reports) {
      expect(report).toMatchObject({ ok: true, result: { id: report.id, status: 'running' } });
      expect(await healthOf(report.result.address!)).toMatchObject({ peerId: report.id });
    }
    // Three processes, not one serving three names.
    expect(new Set(reports.map((r) => r.result.pid)).size).toBe(3);

    const down = await runCliFromSource(['peer', 'down', 'a', 'b', 'c', '--data-dir', dataDir]);
    expect(down.code, down.stderr).toBe(0);
    expect(down.stdout).toMatch(/^a +stopped/m);
    expect(down.stdout).toMatch(/^c +stopped/m);
    expect(statuses(plane)).toEqual({ a: 'stopped', b: 'stopped', c: 'stopped' });
  });

  it('refuses the whole command when one id is unknown, naming it, and starts none', { timeout: 60_000 }, async () => {
    const { dataDir, plane } = await runningPlane(['a', 'c']);
    const refused = await runCliFromSource(['peer', 'up', 'a', 'ghost', 'c', 'phantom', '--data-dir', dataDir]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('no peer named ghost, phantom');
    expect(refused.stdout).toBe('');
    expect(statuses(plane)).toEqual({ a: 'stopped', c: 'stopped' });

    const json = await runCliFromSource(['peer', 'up', 'a', 'ghost', '--json', '--data-dir', dataDir]);
    expect(json.code).not.toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ ok: false, error: { code: 'AP_NOT_FOUND', message: expect.stringContaining('no peer named ghost') } });

    const twice = await runCliFromSource(['peer', 'up', 'a', 'a', '--data-dir', dataDir]);
    expect(twice.code).not.toBe(0);
    expect(twice.stderr).toContain('a named more than once');
    expect(statuses(plane)).toEqual({ a: 'stopped', c: 'stopped' });
  });

  it('reports a peer that exits at once by name while the others start, and exits non-zero', { timeout: 120_000 }, async () => {
    const { dataDir, plane } = await runningPlane(['a', 'c']);
    const port = await busyPort();
    plane.plane.peers.create({ id: 'busy', port });
    const up = await runCliFromSource(['peer', 'up', 'a', 'busy', 'c', '--data-dir', dataDir]);
    expect(up.code).toBe(1);
    expect(up.stderr).toContain(`agentplane: peer busy could not start: port ${port} on 127.0.0.1 is already in use`);
    expect(up.stdout).toMatch(/^a +running +mcpv2:\/\/127\.0\.0\.1:\d+\/mcpv2/m);
    expect(up.stdout).toMatch(/^c +running +mcpv2:\/\/127\.0\.0\.1:\d+\/mcpv2/m);
    expect(statuses(plane)).toEqual({ a: 'running', busy: 'failed', c: 'running' });

    const json = await runCliFromSource(['peer', 'down', 'a', 'busy', '--json', '--data-dir', dataDir]);
    expect(json.code).toBe(1);
    const lines = json.stdout.trim().split('\n').map((line) => JSON.parse(line) as { ok: boolean; id: string });
    expect(lines).toContainEqual({ ok: true, id: 'a', result: expect.objectContaining({ status: 'stopped' }) });
    expect(lines).toContainEqual({ ok: false, id: 'busy', error: { code: 'AP_CONFLICT', message: 'peer busy is not running' } });
  });
});
