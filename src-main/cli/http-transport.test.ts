/**
 * The contract over a running plane's local API, as the CLI uses it: commands over HTTP and
 * events over the WebSocket, with the bridge token as a header, through the contract client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlaneClient, type SyncInfo } from '../../src-shared/ipc/client';
import type { PlaneEvent } from '../../src-shared/ipc/contract';
import { startWebBridge, type WebBridge } from '../bridge/web-bridge';
import type { Plane } from '../plane/plane';
import { runDrafts } from '../../tests/support/journal-support';
import { testPlane } from '../../tests/support/runtime-support';
import { createHttpTransport } from './http-transport';

let plane: Plane;
let bridge: WebBridge;

beforeAll(async () => {
  plane = await testPlane({ agents: [] });
  bridge = await startWebBridge({ plane, port: 0, rendererDir: null });
});
afterAll(async () => {
  await bridge.close();
  await plane.close();
});

const until = async (condition: () => boolean) => {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('createHttpTransport', () => {
  it('calls commands with the token, and a wrong token is the plane\'s refusal with its code', async () => {
    const client = createPlaneClient(createHttpTransport({ url: `http://127.0.0.1:${bridge.port}`, token: bridge.token }));
    expect(await client.call('plane.status', {})).toMatchObject({ state: 'running' });
    const wrong = createPlaneClient(createHttpTransport({ url: `http://127.0.0.1:${bridge.port}`, token: 'nope' }));
    expect(await wrong.tryCall('plane.status', {})).toMatchObject({ ok: false, error: { code: 'AP_UNAUTHORIZED' } });
  });

  it('follows events over the WebSocket, resuming from the journal seq', async () => {
    const client = createPlaneClient(createHttpTransport({ url: `http://127.0.0.1:${bridge.port}`, token: bridge.token }));
    const events: PlaneEvent[] = [];
    const syncs: SyncInfo[] = [];
    const close = client.events({ onEvent: (e) => events.push(e), onSync: (s) => syncs.push(s), onState: () => undefined });
    try {
      await until(() => syncs.length === 1);
      expect(syncs[0]!.reset).toBe(true);
      await plane.journal.appendBatch(runDrafts('run-000000000000000000a1', 2));
      await until(() => events.some((e) => e.name === 'journal.appended'));
      const appended = events.find((e) => e.name === 'journal.appended');
      expect(appended?.payload).toMatchObject({ fromSeq: syncs[0]!.head + 1, runs: [{ runId: 'run-000000000000000000a1', status: 'sealed', outcome: 'succeeded' }] });
    } finally {
      close();
    }
  });
});
