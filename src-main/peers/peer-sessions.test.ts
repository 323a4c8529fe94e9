/**
 * What a peer's Sessions lists: shared-secret sessions with their last use and calls (counted
 * where a request is authenticated), identity credentials in use keyed by the calling peer, and
 * the plane's quick ping (peers.ping) that opens a session and uses it once.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Plane } from '../plane/plane';
import { call, failure, testPlane } from '../../tests/support/runtime-support';
import { Mcpv2Client } from './peer-client';
import { mintSession, SessionBook } from './session-token';

const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

describe('SessionBook use counts', () => {
  it('counts calls and last use per issued session, and identities per caller, never per credential', () => {
    const book = new SessionBook();
    const secret = Buffer.alloc(32, 7);
    const session = mintSession({ secret, clientIp: '127.0.0.1', ttlSeconds: 600, now: 1_000_000 });
    book.record(session, '127.0.0.1:5000', 1_000_000);
    expect(book.live(1_000_000)[0]).toMatchObject({ lastUsedAt: null, calls: 0 });
    book.used(session.sessionId, 1_000_500);
    book.used(session.sessionId, 1_000_900);
    expect(book.live(1_000_900)[0]).toMatchObject({ lastUsedAt: 1_000_900, calls: 2 });

    book.identityUsed('alpha', '127.0.0.1', 2_000);
    book.identityUsed('beta', '127.0.0.1', 2_500);
    book.identityUsed('alpha', '127.0.0.2', 3_000);
    expect(book.identities()).toEqual([
      { caller: 'beta', clientIp: '127.0.0.1', firstSeenAt: 2_500, lastUsedAt: 2_500, calls: 1 },
      { caller: 'alpha', clientIp: '127.0.0.2', firstSeenAt: 2_000, lastUsedAt: 3_000, calls: 2 },
    ]);
  });
});

describe('peers.sessions and peers.ping', () => {
  it('lists sessions with calls made, identity callers, and a ping that opens a session', { timeout: 60_000 }, async () => {
    const plane = await testPlane();
    planes.push(plane);
    await call(plane, 'peers.create', { id: 'gamma', port: 0 });
    await call(plane, 'peers.create', { id: 'delta', port: 0 });
    const gamma = await call(plane, 'peers.start', { id: 'gamma' });
    await call(plane, 'peers.start', { id: 'delta' });

    const client = Mcpv2Client.at(gamma.address!);
    const session = await client.freshSession();
    await client.callTool('ping', {}, { auth: { sessionId: session } });
    await client.callTool('ping', {}, { auth: { sessionId: session } });
    const listed = await call(plane, 'peers.sessions', { id: 'gamma' });
    expect(listed.sessions).toHaveLength(1);
    expect(listed.sessions[0]).toMatchObject({ calls: 2, lastUsedAt: expect.any(Number) });
    expect(listed.identities).toEqual([]);

    const ping = await call(plane, 'peers.ping', { id: 'gamma' });
    expect(ping.label).toMatch(/^sess_/);
    expect(ping.latencyMs).toBeGreaterThanOrEqual(0);
    const after = await call(plane, 'peers.sessions', { id: 'gamma' });
    expect(after.sessions.find((s) => s.label === ping.label)).toMatchObject({ calls: 1 });

    await call(plane, 'peers.allow', { callee: 'gamma', caller: 'delta', skills: ['ping'] });
    await call(plane, 'peers.call', { from: 'delta', to: 'gamma', skill: 'ping', arguments: {} });
    await call(plane, 'peers.call', { from: 'delta', to: 'gamma', skill: 'ping', arguments: {} });
    const identities = (await call(plane, 'peers.sessions', { id: 'gamma' })).identities;
    expect(identities).toEqual([{ caller: 'delta', clientIp: expect.any(String), firstSeenAt: expect.any(Number), lastUsedAt: expect.any(Number), calls: 2 }]);
    // One row per calling peer (toEqual is exact: no credential in the row), though each call presented a fresh credential.

    await call(plane, 'peers.stop', { id: 'gamma' });
    expect((await failure(plane, 'peers.ping', { id: 'gamma' })).message).toContain('gamma');
  });
});
