/**
 * The contract over a message channel: the linked pair carries nothing but JSON, a client over
 * it reaches a real plane with every reply checked, events flow and resume, and a closed channel
 * fails what was waiting and is reopened on the next call.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createPlaneClient, type SyncInfo } from '../../src-shared/ipc/client';
import type { PlaneEvent } from '../../src-shared/ipc/contract';
import { createLinkedPair, createMessageTransport, type MessagePort } from '../../src-shared/ipc/message-transport';
import { runDrafts } from '../../tests/support/journal-support';
import { testPlane } from '../../tests/support/runtime-support';
import type { Plane } from './plane';
import { serveContract } from './serve-contract';

const planes: Plane[] = [];
afterEach(async () => {
  for (const plane of planes.splice(0)) await plane.close();
});

async function plane(): Promise<Plane> {
  const p = await testPlane({ agents: [] });
  planes.push(p);
  return p;
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('createLinkedPair', () => {
  it('delivers in order, asynchronously, as JSON only, and closes both ends', async () => {
    const [a, b] = createLinkedPair();
    const got: unknown[] = [];
    let closed = 0;
    b.start({ message: (m) => got.push(m), close: () => closed++ });
    a.start({ message: () => undefined, close: () => closed++ });
    const message = { type: 'invoke', id: 1, command: 'x', request: { when: new Date(0), map: new Map([[1, 2]]), gone: undefined } } as const;
    a.send(message as never);
    a.send({ type: 'subscribe', subscription: 2 });
    expect(got).toEqual([]); // never inside send
    await tick();
    expect(got).toEqual([
      { type: 'invoke', id: 1, command: 'x', request: { when: '1970-01-01T00:00:00.000Z', map: {} } },
      { type: 'subscribe', subscription: 2 },
    ]);
    a.close();
    expect(() => a.send({ type: 'subscribe', subscription: 3 })).toThrow(/closed/);
    await tick();
    expect(closed).toBe(2);
  });
});

describe('serveContract', () => {
  it('answers commands through plane.dispatch, checked by the client', async () => {
    const p = await plane();
    const client = createPlaneClient(createMessageTransport(() => {
      const [mine, theirs] = createLinkedPair();
      serveContract(theirs, p);
      return mine;
    }));
    expect(await client.call('plane.status', {})).toMatchObject({ state: 'running', host: 'headless' });
    expect(await client.tryCall('runs.get', { runId: 'run-00000000000000000000' })).toMatchObject({ ok: false, error: { code: 'AP_NOT_FOUND' } });
  });

  it('a reply that does not match the contract is a failure naming the command, never a value', async () => {
    const client = createPlaneClient(createMessageTransport(() => {
      const [mine, theirs] = createLinkedPair();
      theirs.start({
        message(raw) {
          const { id } = raw as { id: number };
          theirs.send({ type: 'reply', id, result: { ok: true, value: { version: 1 } } });
        },
        close: () => undefined,
      });
      return mine;
    }));
    const result = await client.tryCall('plane.status', {});
    expect(result).toMatchObject({ ok: false, error: { code: 'AP_INTERNAL' } });
    if (!result.ok) expect(result.error.message).toMatch(/plane\.status does not match the contract/);
  });

  it('a closed channel fails what was waiting (AP_UNAVAILABLE), and the next call opens a new one', async () => {
    const p = await plane();
    const ports: MessagePort[] = [];
    let opened = 0;
    const client = createPlaneClient(createMessageTransport(() => {
      opened++;
      const [mine, theirs] = createLinkedPair();
      // The first server never answers: it only goes away.
      if (opened === 1) theirs.start({ message: () => undefined, close: () => undefined });
      else serveContract(theirs, p);
      ports.push(theirs);
      return mine;
    }));
    const waiting = client.tryCall('plane.status', {});
    await tick();
    ports[0]!.close();
    expect(await waiting).toMatchObject({ ok: false, error: { code: 'AP_UNAVAILABLE' } });
    expect(await client.call('plane.status', {})).toMatchObject({ state: 'running' });
    expect(opened).toBe(2);
  });

  it('streams events, and a client that reconnects is told what changed while it was away', async () => {
    const p = await plane();
    const servers: Array<() => void> = [];
    const client = createPlaneClient(createMessageTransport(() => {
      const [mine, theirs] = createLinkedPair();
      servers.push(serveContract(theirs, p));
      return mine;
    }));
    const events: PlaneEvent[] = [];
    const syncs: SyncInfo[] = [];
    const timers: Array<() => void> = [];
    const close = client.events(
      { onEvent: (e) => events.push(e), onSync: (s) => syncs.push(s), onState: () => undefined },
      { setTimer: (fn) => timers.push(fn), clearTimer: () => undefined },
    );
    await tick();
    await tick();
    expect(syncs).toEqual([{ head: (await p.journal.head()).seq, reset: true }]);
    await p.journal.appendBatch(runDrafts('run-00000000000000000001', 1));
    await tick();
    expect(events.map((e) => e.name)).toEqual(['journal.appended']);

    servers[0]!(); // the server goes away
    await tick();
    await p.journal.appendBatch(runDrafts('run-00000000000000000002', 1));
    timers.shift()!(); // reconnect
    for (let i = 0; i < 5; i++) await tick();
    const last = events.at(-1)!;
    expect(last.name).toBe('journal.appended');
    if (last.name === 'journal.appended') expect(last.payload.runs.map((r) => r.runId)).toEqual(['run-00000000000000000002']);
    expect(syncs.at(-1)).toEqual({ head: (await p.journal.head()).seq, reset: false });
    close();
  });
});
