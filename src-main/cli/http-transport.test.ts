/**
 * The contract over a running plane's local API, as the CLI uses it: commands over HTTP and
 * events over the WebSocket, with the bridge token as a header, through the contract client.
 */
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
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

describe('createHttpTransport when the other end misbehaves', () => {
  /** A loopback HTTP server answering every request with `handler`; closed by the returned close. */
  const withServer = async (listen: (server: ReturnType<typeof createNetServer>) => void) => {
    const server = createNetServer();
    listen(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((resolve) => server.close(resolve)) };
  };

  it('hands up a body that is not JSON as its text, whatever the status', async () => {
    const server = createHttpServer((_request, response) => response.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      expect(await createHttpTransport({ url, token: 't' }).invoke('plane.status', {})).toBe('bad gateway');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('fails naming the plane when the connection closes part-way through the answer', async () => {
    const server = await withServer((s) =>
      s.on('connection', (socket) =>
        socket.once('data', () => socket.end('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"ok":tr')),
      ),
    );
    try {
      await expect(createHttpTransport({ url: server.url, token: 't', name: 'the plane for /d (pid 1)' }).invoke('plane.status', {})).rejects.toThrow(
        `the plane for /d (pid 1) did not answer at ${server.url}: the connection closed before the whole answer arrived`,
      );
    } finally {
      await server.close();
    }
  });

  it('gives up on a plane that takes the request and never answers, after the timeout', async () => {
    const sockets: Array<{ destroy(): void }> = [];
    const server = await withServer((s) => s.on('connection', (socket) => sockets.push(socket)));
    try {
      await expect(createHttpTransport({ url: server.url, token: 't', timeoutMs: 200 }).invoke('plane.status', {})).rejects.toThrow(/did not answer at .*: no answer within 200 ms/);
    } finally {
      for (const socket of sockets) socket.destroy();
      await server.close();
    }
  });

  it('fails at once when nothing listens', async () => {
    const server = await withServer(() => undefined);
    await server.close();
    await expect(createHttpTransport({ url: server.url, token: 't' }).invoke('plane.status', {})).rejects.toThrow(new RegExp(`the plane did not answer at ${server.url}: .*ECONNREFUSED`));
  });
});
