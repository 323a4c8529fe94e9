/**
 * What an A2A test opens beside its plane, closed after each test: planes first (they hold
 * connections to the rest), then the netguards they dialled through, then the SDK remotes.
 */
import { afterEach, expect } from 'vitest';
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

/**
 * A JSON-RPC error's `data` as the A2A endpoint answers it: an array holding one
 * google.rpc.ErrorInfo whose metadata carries `detail`, every value as a string (a2a-wire.ts).
 */
export function errorData(detail: Record<string, unknown>): unknown {
  const metadata = Object.fromEntries(Object.entries(detail).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  return [expect.objectContaining({ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: expect.any(String), domain: expect.any(String), metadata: expect.objectContaining(metadata) })];
}
