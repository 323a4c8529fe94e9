/**
 * The store across reconnects and misbehaving channels: a dropped connection resumes from the
 * last journal seq (re-reading only the runs touched meanwhile and the snapshots), a plane that
 * cannot list what changed makes it re-read its views, and notifications that arrive out of
 * order or twice cost at most one catch-up and never a lost or doubled update.
 */
import { describe, expect, it } from 'vitest';
import { runDrafts } from '../../../tests/support/journal-support';
import { call } from '../../../tests/support/runtime-support';
import { createPlaneClient, type ContractTransport } from '../../../src-shared/ipc/client';
import { testTransport } from '../../../tests/support/contract-support';
import { testPlane } from '../../../tests/support/runtime-support';
import { createAppStore } from './app-store';
import { manualEnv, useSyncedHarnesses, type StoreHarness } from './testing/store-harness';

const harness = useSyncedHarnesses();

const runId = (n: number) => `run-${n.toString(16).padStart(20, '0')}`;
const head = async (h: StoreHarness) => (await h.plane.journal.head()).seq;

describe('the store across reconnects', () => {
  it("the first connect asks for the Peers view's rows at once, then reads every view once after its sync", async () => {
    const h = await harness();
    // The first look leaves before the event stream's sync (journal.changes), not after it.
    expect(h.wire.requests[0]).toBe('peers.list');
    expect(h.wire.requests.indexOf('journal.changes')).toBeGreaterThan(0);
    expect([...h.wire.requests.slice(1)].sort()).toEqual(['agents.list', 'journal.changes', 'peers.list', 'plane.status', 'runs.list']);
    expect(h.store.getState().status).toMatchObject({ state: 'running' });
  });

  it('a first look answered after the sync read the peers is dropped: it never replaces a newer list', async () => {
    const plane = await testPlane({ agents: [] });
    const wire = testTransport(plane);
    // The first peers.list is held until the store has synced and re-read the peers, and a peer
    // is created in between: the held answer is the older list, without it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let firstLook = true;
    const transport: ContractTransport = {
      async invoke(command, request) {
        if (command === 'peers.list' && firstLook) {
          firstLook = false;
          const answer = await wire.transport.invoke(command, request);
          await held;
          return answer;
        }
        return wire.transport.invoke(command, request);
      },
      connectEvents: (handlers) => wire.transport.connectEvents(handlers),
    };
    const store = createAppStore(createPlaneClient(transport), manualEnv());
    const stop = store.getState().start();
    try {
      await call(plane, 'peers.create', { id: 'gamma', port: 0 });
      const until = async (condition: () => boolean, what: string) => {
        const deadline = Date.now() + 10_000;
        while (!condition()) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 5));
        }
      };
      await until(() => store.getState().peers.some((p) => p.id === 'gamma'), 'the synced list with gamma');
      release();
      await new Promise((r) => setTimeout(r, 50));
      expect(store.getState().peers.map((p) => p.id)).toContain('gamma');
    } finally {
      stop();
      wire.drop();
      await plane.close();
    }
  });

  it('on the Peers view, given its first commit, opens the event stream only after it; other views at once', async () => {
    const plane = await testPlane({ agents: [] });
    const wire = testTransport(plane);
    let streams = 0;
    const transport: ContractTransport = {
      invoke: (command, request) => wire.transport.invoke(command, request),
      connectEvents: (handlers) => {
        streams += 1;
        return wire.transport.connectEvents(handlers);
      },
    };
    const stops: Array<() => void> = [];
    try {
      let committed!: () => void;
      const firstCommit = new Promise<void>((resolve) => (committed = resolve));
      const peers = createAppStore(createPlaneClient(transport), manualEnv());
      stops.push(peers.getState().start({ connectAfter: firstCommit }));
      const until = async (condition: () => boolean, what: string) => {
        const deadline = Date.now() + 10_000;
        while (!condition()) {
          if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
          await new Promise((r) => setTimeout(r, 5));
        }
      };
      // The first look fills the view while the stream waits: no sync, no other list read.
      await until(() => peers.getState().peersLoaded, 'the first look');
      await new Promise((r) => setTimeout(r, 50));
      expect(streams).toBe(0);
      expect(wire.requests).toEqual(['peers.list']);
      committed();
      await until(() => peers.getState().status !== null && peers.getState().runsLoaded, 'the sync after the first commit');
      expect(streams).toBe(1);
      expect(wire.requests).toContain('journal.changes');

      // The Runs view's rows come from the sync: the stream opens at once, commit or not.
      const runs = createAppStore(createPlaneClient(transport), manualEnv(), { section: 'runs', runId: null, seq: null, peerId: null });
      stops.push(runs.getState().start({ connectAfter: new Promise(() => undefined) }));
      expect(streams).toBe(2);

      // Stopped before the commit, it never opens.
      let never!: () => void;
      const late = createAppStore(createPlaneClient(transport), manualEnv());
      late.getState().start({ connectAfter: new Promise<void>((resolve) => (never = resolve)) })();
      never();
      await new Promise((r) => setTimeout(r, 20));
      expect(streams).toBe(2);
    } finally {
      for (const stop of stops) stop();
      wire.drop();
      await plane.close();
    }
  });

  it('after a drop, asks what changed since its seq, re-reads only those runs and the snapshots', async () => {
    const h = await harness();
    const a = runDrafts(runId(1), 2);
    await h.plane.journal.appendBatch(a.slice(0, 2));
    const first = await head(h);
    await h.until(() => h.store.getState().journalHead === first, 'the notification');
    h.env.clock.advance(100);
    await h.settle();
    expect(h.store.getState().runs[runId(1)]).toMatchObject({ status: 'running', records: 2 });

    h.wire.drop();
    await h.until(() => h.store.getState().connection === 'reconnecting', 'the drop to be noticed');
    // While it is away: run 1 ends, run 2 starts, a peer is created (a snapshot, not replayed).
    await h.plane.journal.appendBatch(a.slice(2));
    await h.plane.journal.appendBatch(runDrafts(runId(2), 1).slice(0, 1));
    await call(h.plane, 'peers.create', { id: 'gamma', port: 0 });
    const before = h.wire.requests.length;
    h.env.clock.advance(250); // the reconnect delay
    await h.until(() => h.store.getState().connection === 'connected', 'the reconnect');
    await h.settle();
    expect(h.wire.requests.slice(before)).toEqual(['journal.changes', 'plane.status', 'peers.list']);
    expect(h.store.getState().journalHead).toBe(await head(h));
    expect(h.store.getState().peers.map((p) => p.id)).toContain('gamma');
    // The status of what changed shows at once; the runs themselves are read once things are quiet.
    expect(h.store.getState().runs[runId(1)]).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    h.env.clock.advance(100);
    await h.settle();
    expect(h.wire.requests.slice(before + 3).sort()).toEqual(['runs.get', 'runs.get']);
    expect(h.store.getState().runs[runId(1)]).toMatchObject({ records: 6 });
    expect(h.store.getState().runs[runId(2)]).toMatchObject({ status: 'running', records: 1 });
  });

  it('when too much changed while away, re-reads every view instead', async () => {
    const h = await harness();
    h.wire.drop();
    await h.until(() => h.store.getState().connection === 'reconnecting', 'the drop to be noticed');
    await h.plane.journal.appendBatch(runDrafts(runId(3), 2600)); // 5,202 records: more than journal.changes lists
    const before = h.wire.requests.length;
    h.env.clock.advance(250);
    await h.until(() => h.store.getState().connection === 'connected', 'the reconnect');
    await h.settle();
    expect([...h.wire.requests.slice(before)].sort()).toEqual(['agents.list', 'journal.changes', 'peers.list', 'plane.status', 'runs.list']);
    expect(h.store.getState().runs[runId(3)]).toMatchObject({ status: 'sealed', records: 5202 });
  });
});

describe('notifications out of order or twice', () => {
  it('a notification that skips seqs triggers one catch-up; the late and repeated ones are dropped', async () => {
    const h = await harness({ scriptedEvents: true });
    const start = await head(h);
    // Two commits; the plane's own notifications are not forwarded: the test sends them.
    await h.plane.journal.appendBatch(runDrafts(runId(1), 0).slice(0, 1));
    await h.plane.journal.appendBatch(runDrafts(runId(2), 0).slice(0, 1));
    const first = { fromSeq: start + 1, seq: start + 1, runs: [{ runId: runId(1), kind: 'RunAdmitted', status: 'running' as const, outcome: null }] };
    const second = { fromSeq: start + 2, seq: start + 2, runs: [{ runId: runId(2), kind: 'RunAdmitted', status: 'running' as const, outcome: null }] };
    const before = h.wire.requests.length;
    h.wire.events.publish('journal.appended', second); // overtook `first`
    await h.settle();
    h.wire.events.publish('journal.appended', first);
    h.wire.events.publish('journal.appended', second);
    h.wire.events.publish('journal.appended', first);
    await h.settle();
    expect(h.wire.requests.slice(before)).toEqual(['journal.changes']);
    expect(h.store.getState().journalHead).toBe(start + 2);
    h.env.clock.advance(100);
    await h.settle();
    expect(h.wire.requests.slice(before + 1).sort()).toEqual(['runs.get', 'runs.get']);
    expect(Object.keys(h.store.getState().runs).sort()).toEqual([runId(1), runId(2)]);
  });

  it('duplicates in order cost nothing, and snapshots replace what they describe', async () => {
    const h = await harness({ scriptedEvents: true });
    const start = await head(h);
    await h.plane.journal.appendBatch(runDrafts(runId(4), 0).slice(0, 1));
    const note = { fromSeq: start + 1, seq: start + 1, runs: [{ runId: runId(4), kind: 'RunAdmitted', status: 'running' as const, outcome: null }] };
    const before = h.wire.requests.length;
    for (let i = 0; i < 3; i++) h.wire.events.publish('journal.appended', note);
    const status = { ...h.store.getState().status!, state: 'stopping' as const };
    h.wire.events.publish('plane.statusChanged', status);
    await call(h.plane, 'peers.create', { id: 'delta', port: 0 }); // not forwarded: scripted events only
    h.wire.events.publish('peers.changed', await call(h.plane, 'peers.list', {}));
    await h.settle();
    h.env.clock.advance(100);
    await h.settle();
    expect(h.wire.requests.slice(before)).toEqual(['runs.get']);
    expect(h.store.getState().status).toEqual(status);
    expect(h.store.getState().peers.map((p) => p.id)).toEqual(['delta']);
  });
});
