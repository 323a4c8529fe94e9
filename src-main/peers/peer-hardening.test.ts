/**
 * Hardening found by review, each as a test: uploads never enter the journal, conversations
 * are scoped to their trust domain, a batch pays the rate limit per slot, and a peer
 * credential must be short-lived and typed.
 */
import { createPrivateKey, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mcpv2Error } from '../../src-shared/protocol/mcpv2';
import { mintPeerCredential, verifyPeerCredential } from './peer-credentials';
import type { StartedPeer } from '../plane/peer-host';
import { startTestPeer, type TestPeer } from '../../tests/support/peer-support';
import { type PeerRegistry } from './peer-registry';

let testPeer: TestPeer;
let dataDir: string;
let registry: PeerRegistry;
let peer: StartedPeer;

beforeAll(async () => {
  testPeer = await startTestPeer('hard', { secret: 'peer-hardening-secret', ratePerSecond: 5, llmMode: true });
  ({ dataDir, registry, peer } = testPeer);
});
afterAll(() => testPeer.close());

const session = () => testPeer.session();
const call = (id: number, name: string, args: Record<string, unknown> = {}, context?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args }, ...(context ? { context } : {}) });
async function rpc(body: unknown, token = session()): Promise<Array<{ id: number; result?: Record<string, unknown>; error?: { code: number; message: string } }>> {
  const response = await peer.app.inject({ method: 'POST', url: '/mcpv2', headers: { host: `127.0.0.1:${peer.port}`, authorization: `Bearer ${token}`, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  return JSON.parse(response.body) as never;
}

describe('peer hardening', () => {
  it('keeps an upload\'s bytes out of the journal: the run records its digest and size', async () => {
    const marker = `UPLOAD-MARKER-${randomBytes(8).toString('hex')}`;
    const [answer] = await rpc([call(1, 'upload_file', { filename: 'note.txt', content: marker })]);
    expect(answer!.result).toMatchObject({ filename: 'note.txt', bytes: marker.length, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const [bad] = await rpc([call(2, 'upload_file', { filename: 'x.bin', content: '@@not base64@@', encoding: 'base64' })]);
    expect(bad!.error).toMatchObject({ code: Mcpv2Error.InvalidParams, message: expect.stringContaining('not valid base64') });
    await peer.journal.checkpoint();
    for (const file of readdirSync(dataDir).filter((f) => f.startsWith('journal.sqlite'))) {
      expect(readFileSync(join(dataDir, file)).includes(Buffer.from(marker)), file).toBe(false);
    }
    expect(readdirSync(join(registry.dir, 'hard', 'staging')).filter((f) => !f.startsWith('.'))).toEqual([]);
  });

  it('refuses conversation names that would reach another session\'s context', async () => {
    const [answer] = await rpc([call(1, 'ask', { query: 'hello' }, { conversation: 'session:sess_0123456789ab' })]);
    expect(answer!.error).toMatchObject({ code: Mcpv2Error.InvalidParams, message: expect.stringContaining('reserved') });
    const mine = session();
    await rpc([call(1, 'ask', { query: 'My PIN is 4321.' })], mine);
    const [other] = await rpc([call(2, 'ask', { query: 'What is my PIN?' })]);
    expect(other!.result!.turn).toBe(1);
    expect(String(other!.result!.response)).not.toContain('4321');
  });

  it('charges the rate limit per slot, not per request', async () => {
    const answers = await rpc(Array.from({ length: 20 }, (_, i) => call(i, 'ping')));
    expect(answers).toHaveLength(20);
    expect(answers.filter((a) => a.error?.code === Mcpv2Error.RateLimited).length).toBeGreaterThan(10);
  });

  it('accepts its own short-lived credentials and refuses one without an expiry, too long-lived or of another type', async () => {
    registry.create({ id: 'caller', port: 0 });
    const good = await mintPeerCredential(registry, 'caller', 'hard');
    expect(await verifyPeerCredential(registry, 'hard', good.presentTo('peer:hard'))).toEqual({ ok: true, caller: 'caller' });
    const key = createPrivateKey({ key: JSON.parse(readFileSync(join(registry.dir, 'caller', 'identity.jwk'), 'utf8')), format: 'jwk' });
    const now = Math.floor(Date.now() / 1000);
    const forge = (claims: { exp?: number; typ?: string }) => {
      let jwt = new SignJWT({}).setProtectedHeader({ alg: 'EdDSA', kid: 'caller', typ: claims.typ ?? 'agentplane-peer+jwt' }).setIssuer('peer:caller').setAudience('peer:hard').setIssuedAt(now).setJti('j');
      if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
      return jwt.sign(key);
    };
    expect(await verifyPeerCredential(registry, 'hard', await forge({}))).toEqual({ ok: false, reason: 'invalid' });
    expect(await verifyPeerCredential(registry, 'hard', await forge({ exp: now + 10 * 365 * 86400 }), Date.now() + 3600_000)).toEqual({ ok: false, reason: 'invalid' });
    expect(await verifyPeerCredential(registry, 'hard', await forge({ exp: now + 60, typ: 'JWT' }))).toEqual({ ok: false, reason: 'invalid' });
  });
});
