/**
 * A lost plane is recoverable: a plane restarted on the same data dir comes back at the same
 * address with the same token (when its port is free), so an open tab reconnects by itself
 * instead of needing a new URL; an explicit --ui-port still wins, and a busy port gets a new
 * address rather than a failure.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callCommand, makeTempDir, requireBuild, startServe, stopWith, type ServeProcess } from './support/serve-process';

const planes: ServeProcess[] = [];
afterAll(() => planes.forEach((p) => p.dispose()));
beforeAll(() => requireBuild());

async function serve(dataDir: string, uiPort?: number | null): Promise<ServeProcess> {
  const plane = await startServe({ dataDir, uiPort });
  planes.push(plane);
  return plane;
}

describe('a plane restarted on the same data dir', () => {
  it('comes back at the same URL and token, so an open tab finds it again', { timeout: 60_000 }, async () => {
    const dataDir = makeTempDir('restart');
    const first = await serve(dataDir, null);
    await stopWith(first, 'SIGTERM');
    const second = await serve(dataDir, null);
    expect(second.url).toBe(first.url);
    // The old tab's token works against the new plane.
    expect((await callCommand({ origin: first.origin, token: first.token }, 'plane.status')).status).toBe(200);
    await stopWith(second, 'SIGTERM');

    // Its port taken meanwhile: a new address, not a failure.
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(second.port, '127.0.0.1', r));
    try {
      const third = await serve(dataDir, null);
      expect(third.port).not.toBe(second.port);
      expect(third.token).not.toBe(second.token);
      await stopWith(third, 'SIGTERM');
    } finally {
      squatter.close();
    }
    // An explicit port always wins.
    const fourth = await serve(dataDir, 0);
    expect(fourth.url).not.toBe(first.url);
    await stopWith(fourth, 'SIGTERM');
  });
});
