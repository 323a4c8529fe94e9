/**
 * Peers follow the plane's whole-list snapshots (no request per change), and spend is read only
 * while a view shows it: at most once a second while the journal moves, marked stale otherwise.
 */
import { describe, expect, it } from 'vitest';
import { runDrafts } from '../../../tests/support/journal-support';
import { call } from '../../../tests/support/runtime-support';
import { useSyncedHarnesses } from './testing/store-harness';

const harness = useSyncedHarnesses();

const runId = (n: number) => `run-${n.toString(16).padStart(20, '0')}`;

describe('the peers slice', () => {
  it('creates a peer, then follows its state from the plane\'s snapshots alone', async () => {
    const h = await harness();
    const created = await h.store.getState().createPeer({ id: 'gamma', port: 0 });
    expect(created).toMatchObject({ ok: true, value: { id: 'gamma', status: 'stopped' } });
    const before = h.wire.requests.length;
    // Another front end (the CLI, through its own client) revokes it: the snapshot says so.
    await call(h.plane, 'peers.revoke', { id: 'gamma' });
    // Shown a frame later (the newest of a burst of snapshots, app-store.ts): not before.
    await h.until(() => h.env.clock.pending() > 0, 'the snapshot held for a frame');
    expect(h.store.getState().peers.find((p) => p.id === 'gamma')?.revoked).toBe(false);
    h.env.clock.advance(20);
    await h.until(() => h.store.getState().peers.find((p) => p.id === 'gamma')?.revoked === true, 'the snapshot');
    expect(h.wire.requests.slice(before)).toEqual([]);
  });

  it('shows the newest of a burst of snapshots once, a frame later, not each of them', async () => {
    const h = await harness();
    await h.settle();
    h.env.clock.advance(20);
    await h.settle();
    const shown: string[][] = [];
    h.store.subscribe((state, previous) => {
      if (state.peers !== previous.peers) shown.push(state.peers.map((p) => p.id));
    });
    // Three changes from another front end: three snapshots, each the whole list.
    for (const id of ['p1', 'p2', 'p3']) await call(h.plane, 'peers.create', { id, port: 0 });
    await h.until(() => h.env.clock.pending() > 0, 'the snapshots held for a frame');
    await h.settle();
    expect(shown).toEqual([]);
    h.env.clock.advance(20);
    await h.settle();
    expect(shown).toHaveLength(1);
    expect(shown[0]).toEqual(expect.arrayContaining(['p1', 'p2', 'p3']));
  });

  it('a failed start leaves the peer\'s error beside it and re-reads the list', async () => {
    const h = await harness();
    await h.store.getState().createPeer({ id: 'faraway', port: 0, publicIp: '192.0.2.10' });
    const before = h.wire.requests.length;
    expect(await h.store.getState().peerAction('faraway', 'start')).toBe(false);
    await h.settle();
    expect(h.wire.requests.slice(before)).toEqual(['peers.start', 'peers.list']);
    expect(h.store.getState().peerErrors.faraway).toBeTruthy();
    expect(h.store.getState().peerBusy.faraway).toBeUndefined();
  });
});

describe('the spend slice', () => {
  it('reads spend only while watched, at most once a second as the journal moves', async () => {
    const h = await harness();
    const before = h.wire.requests.length;
    await h.plane.journal.appendBatch(runDrafts(runId(1), 1));
    await h.until(() => h.env.clock.pending() > 0, 'the notification');
    h.env.clock.advance(100);
    await h.settle();
    expect(h.wire.requests.slice(before)).toEqual(['runs.get']);
    expect(h.store.getState().spendStale).toBe(true);

    const unwatch = h.store.getState().watchSpend();
    await h.settle();
    expect(h.store.getState().spend?.total).toMatchObject({ effects: 1 });
    const watched = h.wire.requests.length;
    for (let i = 2; i <= 4; i++) {
      await h.plane.journal.appendBatch(runDrafts(runId(i), 1));
      await h.until(() => h.env.clock.pending() > 0, 'the notification');
      h.env.clock.advance(100);
      await h.settle();
    }
    // Three commits within 300 ms: spend waits for its second, then reads once.
    expect(h.wire.requests.slice(watched).filter((r) => r === 'spend.summary')).toEqual([]);
    h.env.clock.advance(1000);
    await h.settle();
    expect(h.wire.requests.slice(watched).filter((r) => r === 'spend.summary')).toEqual(['spend.summary']);
    expect(h.store.getState().spend?.total).toMatchObject({ effects: 4 });
    unwatch();
  });
});
