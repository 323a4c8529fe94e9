/**
 * What an A2A test opens beside its plane, closed after each test: planes first (they hold
 * connections to the rest), then the netguards they dialled through, then the SDK remotes.
 */
import { afterEach } from 'vitest';
import type { Plane } from '../../src-main/plane/plane';
import type { Netguard } from '../../src-main/net/netguard';
import type { SdkRemote } from '../doubles/sdk-a2a-remote';

export function useA2aTeardown(): { planes: Plane[]; remotes: SdkRemote[]; guards: Netguard[] } {
  const planes: Plane[] = [];
  const remotes: SdkRemote[] = [];
  const guards: Netguard[] = [];
  afterEach(async () => {
    for (const p of planes.splice(0)) await p.close().catch(() => undefined);
    for (const g of guards.splice(0)) await g.close();
    for (const r of remotes.splice(0)) await r.close();
  });
  return { planes, remotes, guards };
}
