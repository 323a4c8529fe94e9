/**
 * Durable revocation (docs/SECURITY.md): a session revoked through the plane's admin route stays
 * refused after the peer restarts, until it expires; the revocation file holds digests, never
 * tokens, is 0600, drops expired entries, and a malformed one stops the peer from starting with
 * its path named. A revoked caller peer's credentials stay refused across a restart too (whole
 * peer revocation lives in the registry file).
 *
 * Every peer here is real: `startPeer` on a loopback port, called over HTTP with fetch, and
 * "restart" is `close()` then `startPeer` again on the same data dir.
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Mcpv2Error } from '../../src-shared/protocol/mcpv2';
import { silentLogger } from '../base/logger';
import { createLocalProvider } from '../providers/local-provider';
import { mintPeerCredential } from './peer-credentials';
import { PeerStartError, settingsFromEnv, startPeer, type StartedPeer } from '../plane/peer-host';
import { PeerRegistry } from './peer-registry';
import { mintSession, redactSession, SessionBook } from './session-token';

const SECRET = 'durable-revocation-secret';
const ADMIN = 'durable-revocation-admin-token';

let dataDir: string;
let registry: PeerRegistry;
const running: StartedPeer[] = [];

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'agentplane-revocation-'));
  registry = new PeerRegistry(dataDir);
});

afterEach(async () => {
  for (const peer of running.splice(0)) await peer.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(id: string): Promise<StartedPeer> {
  const record = registry.get(id)!;
  const peer = await startPeer({
    dataDir,
    record,
    settings: { ...settingsFromEnv({}), ratePerSecond: 1000 },
    logger: silentLogger,
    providers: new Map([['local', createLocalProvider()]]),
    adminToken: ADMIN,
  });
  running.push(peer);
  return peer;
}

async function stop(peer: StartedPeer): Promise<void> {
  running.splice(running.indexOf(peer), 1);
  await peer.close();
}

async function http(peer: StartedPeer, method: 'GET' | 'POST', path: string, options: { token?: string; body?: unknown; admin?: boolean } = {}) {
  const response = await fetch(`http://127.0.0.1:${peer.port}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.admin ? { 'x-agentplane-admin': ADMIN } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

const ping = (peer: StartedPeer, token: string) => http(peer, 'POST', '/mcpv2', { token, body: [{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {} } }] });
const digest = (token: string) => createHash('sha256').update(token).digest('hex');

describe('durable session revocation', () => {
  it('a session revoked by label stays refused after the peer restarts; other sessions still work', async () => {
    registry.create({ id: 'dur', port: 0, publicIp: '127.0.0.1', secret: SECRET });
    let peer = await start('dur');
    const issued = await http(peer, 'GET', '/mcpv2/session');
    const token = String(issued.json!.sessionId);
    expect((await ping(peer, token)).status).toBe(200);

    const listed = (await http(peer, 'GET', '/mcpv2/admin/sessions', { admin: true })).json as { sessions: Array<{ label: string }> };
    const label = redactSession(token);
    expect(listed.sessions.map((s) => s.label)).toContain(label);
    expect((await http(peer, 'POST', '/mcpv2/admin/sessions/revoke', { admin: true, body: { label } })).json).toEqual({ revoked: true });

    // Written before the admin call answered: the file already names the token's digest.
    const file = join(registry.dir, 'dur', 'revoked.jsonl');
    const text = readFileSync(file, 'utf8');
    expect(text).toContain(digest(token));
    expect(text).not.toContain(token);
    expect(text).not.toContain(token.split('.')[1]!); // not even the HMAC half
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const refused = await ping(peer, token);
    expect(refused.status).toBe(401);
    expect(refused.json).toMatchObject({ error: { code: Mcpv2Error.InvalidSession, message: expect.stringContaining('revoked') } });

    await stop(peer);
    peer = await start('dur');
    const afterRestart = await ping(peer, token);
    expect(afterRestart.status).toBe(401);
    expect(afterRestart.json).toMatchObject({ error: { code: Mcpv2Error.InvalidSession, message: expect.stringContaining('revoked') } });

    const fresh = String((await http(peer, 'GET', '/mcpv2/session')).json!.sessionId);
    expect((await ping(peer, fresh)).status).toBe(200);
  });

  it('a malformed revocation file stops the peer from starting, naming the file', async () => {
    registry.create({ id: 'bad', port: 0, publicIp: '127.0.0.1', secret: SECRET });
    const file = join(registry.dir, 'bad', 'revoked.jsonl');
    writeFileSync(file, 'this is not a revocation\n', { mode: 0o600 });
    const error = await start('bad').then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PeerStartError);
    expect((error as Error).message).toContain(file);
    // And nothing of it was taken as "no revocations": the file is left for the operator.
    expect(readFileSync(file, 'utf8')).toBe('this is not a revocation\n');
  });

  it('refuses a revocation file other users could write, or a symlink, naming it', async () => {
    registry.create({ id: 'loose', port: 0, publicIp: '127.0.0.1', secret: SECRET });
    const file = join(registry.dir, 'loose', 'revoked.jsonl');
    writeFileSync(file, '');
    chmodSync(file, 0o666);
    await expect(start('loose')).rejects.toThrow(new RegExp(`${file}.*writable by other users`));
    rmSync(file);
    writeFileSync(join(dataDir, 'elsewhere.jsonl'), '');
    symlinkSync(join(dataDir, 'elsewhere.jsonl'), file);
    await expect(start('loose')).rejects.toThrow(new RegExp(`${file}.*symbolic link`));
  });

  it('drops entries past their expiry when it loads the file, and keeps the live ones', async () => {
    registry.create({ id: 'prune', port: 0, publicIp: '127.0.0.1', secret: SECRET });
    const file = join(registry.dir, 'prune', 'revoked.jsonl');
    const live = mintSession({ secret: SECRET, clientIp: '127.0.0.1', ttlSeconds: 3600 });
    const gone = 'a'.repeat(64);
    writeFileSync(file, `${JSON.stringify({ sha256: gone, expiresAt: Date.now() - 1000 })}\n${JSON.stringify({ sha256: digest(live.sessionId), expiresAt: live.expiresAt })}\n`, { mode: 0o600 });
    const peer = await start('prune');
    const kept = readFileSync(file, 'utf8');
    expect(kept).not.toContain(gone);
    expect(kept).toContain(digest(live.sessionId));
    expect((await ping(peer, live.sessionId)).status).toBe(401);
  });

  it('a token revoked directly (client-minted, never issued here) is refused by a book opened later on the same file', () => {
    const file = join(dataDir, 'revoked.jsonl');
    const token = mintSession({ secret: SECRET, clientIp: '127.0.0.1', ttlSeconds: 60 }).sessionId;
    const book = new SessionBook({ revocationFile: file });
    expect(book.revoke(token)).toBe(true);
    expect(new SessionBook({ revocationFile: file }).isRevoked(token)).toBe(true);
    expect(new SessionBook({ revocationFile: file }).isRevoked(mintSession({ secret: SECRET, clientIp: '127.0.0.1', ttlSeconds: 60 }).sessionId)).toBe(false);
  });
});

describe('peer credentials across a restart', () => {
  // There is no per-credential (jti) revocation: a credential lives 120 s and is revoked by
  // revoking its peer in the registry, a file the plane writes (atomically) and every peer
  // re-reads. This pins down that such a revocation survives the called peer's restart.
  it('a credential of a revoked caller stays refused after the called peer restarts', async () => {
    registry.create({ id: 'callee', port: 0, publicIp: '127.0.0.1', secret: SECRET });
    registry.create({ id: 'caller', port: 0 });
    registry.allow('callee', 'caller', ['ping']);
    let peer = await start('callee');
    const credential = (await mintPeerCredential(registry, 'caller', 'callee')).presentTo('peer:callee');
    expect((await ping(peer, credential)).status).toBe(200);
    registry.revoke('caller');
    expect((await ping(peer, credential)).json).toMatchObject({ error: { code: Mcpv2Error.InvalidSession, message: expect.stringContaining('revoked') } });
    await stop(peer);
    peer = await start('callee');
    const after = await ping(peer, credential);
    expect(after.status).toBe(401);
    expect(after.json).toMatchObject({ error: { code: Mcpv2Error.InvalidSession, message: expect.stringContaining('revoked') } });
  });
});
