/**
 * A peer that accepts only a token issuer's access tokens, called by a run through the
 * plane's token exchange (docs/SECURITY.md, "Delegated credentials"), all on loopback: a real
 * issuer (tests/doubles/fake-token-issuer.ts), a real peer server, a real journal. The peer
 * refuses the plane's own credentials and tokens minted for another peer or without the
 * plane as actor; the hop journals which credential it used; an issuer's refusal fails the
 * hop by its OAuth error code alone; an issuer netguard refuses is never asked; and a subject
 * halted while the exchange is in flight never reaches the peer (counted at the peer), the run
 * waiting on the halt.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../journal/journal';
import { loadOrCreatePlaneKey } from '../journal/plane-key';
import { tempDataDir } from '../../tests/support/journal-support';
import { startTestPeer, type TestPeer } from '../../tests/support/peer-support';
import { startFakeIssuer, type FakeIssuer } from '../../tests/doubles/fake-token-issuer';
import type { Logger } from '../base/logger';
import { silentLogger } from '../base/logger';
import { loadAgents, loadPolicy } from '../plane/plane-config';
import { createLocalProvider } from '../providers/local-provider';
import { Runtime } from '../runtime/runtime';
import { builtinTools, workspaceOf } from '../runtime/tools';
import { mintPeerCredential } from './peer-credentials';
import { createPeerCaller } from './peer-caller';
import { verifyDelegatedToken } from './delegated-tokens';
import { PeerRegistry } from './peer-registry';
import { TokenExchanger, tokenIssuersFilePath } from './token-exchange';
import { NetAllowStore } from '../plane/net-allow';
import { createNetguard } from '../net/netguard';

const CLIENT_ID = 'agentplane-plane';
const CLIENT_SECRET = 'delegated-client-secret-42';
const OWNER = 'user:local';

let planeDir: string;
let issuer: FakeIssuer;
let peer: TestPeer;
let journal: Journal;
let runtime: Runtime;
let exchanger: TokenExchanger;
/** The origins the exchanger's netguard allows: the fake issuer's (a loopback server, allowed explicitly as a person would). */
const allowed = new Set<string>();
const netguard = createNetguard({ allow: { allows: (origin) => allowed.has(origin) } });
/** The exchanger's clock: moved past a cached token's life rather than waited for. */
const clock = { now: Date.now() };
/** Skill calls that reached the peer, from its own access log. */
const peerCalls: string[] = [];
const countingLogger: Logger = { enabled: () => true, log: (_level, message) => void (message.startsWith('POST /mcpv2 ') && peerCalls.push(message)) };

beforeAll(async () => {
  planeDir = tempDataDir('ap-delegated-');
  const planeKey = await loadOrCreatePlaneKey(planeDir);
  issuer = await startFakeIssuer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, planePublicKey: planeKey.publicKey });
  writeFileSync(tokenIssuersFilePath(planeDir), JSON.stringify({ issuers: { corp: { tokenEndpoint: issuer.tokenEndpoint, clientId: CLIENT_ID, clientSecretEnv: 'CORP_SECRET' } } }), { mode: 0o600 });
  peer = await startTestPeer('beta', { secret: 'beta-shared-secret', ratePerSecond: 1000, logger: countingLogger });
  peer.registry.create({ id: 'gamma', port: 0 });
  peer.registry.update('beta', (p) => ({ ...p, tokenIssuer: { name: 'corp', issuer: issuer.issuer, actor: CLIENT_ID, jwksUrl: issuer.jwksUrl } }));
  allowed.add(issuer.url);
  // The peer fetches the issuer's key set through its own netguard: a person allowed the loopback issuer in the peer's data dir.
  new NetAllowStore(peer.dataDir).add(issuer.url);
  exchanger = new TokenExchanger({ dataDir: planeDir, netguard, signingKey: async () => planeKey, env: { CORP_SECRET: CLIENT_SECRET }, now: () => clock.now });
  journal = await Journal.open({ dataDir: planeDir });
  runtime = await Runtime.create({
    journal,
    agents: loadAgents(planeDir).filter((a) => a.manifest.name === 'ask-peer'),
    policy: loadPolicy(planeDir),
    providers: new Map([['local', createLocalProvider()]]),
    tools: builtinTools,
    toolContext: { workspace: workspaceOf(planeDir) },
    logger: silentLogger,
    peers: createPeerCaller({ registry: new PeerRegistry(peer.dataDir), portOf: () => peer.peer.port, exchanger }),
  });
});

afterAll(async () => {
  await runtime?.close();
  await journal?.close();
  await peer?.close();
  await issuer?.close();
  await netguard.close();
});

/** Calls beta's `ask` presenting `token` as the bearer: the peer's refusal, or null when it answered the call. */
async function presentToBeta(token: string): Promise<string | null> {
  const response = await fetch(`http://127.0.0.1:${peer.peer.port}/mcpv2`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ask', arguments: { query: 'who is it?' } } }),
  });
  const body = (await response.json()) as { error?: { message: string } };
  if (response.status === 401) return body.error!.message;
  expect(response.status).toBe(200);
  return null;
}

/** For a trust with one configured key: no key set is fetched, and a fetch would be a fault. */
const noJwks = (url: string): Promise<Response> => Promise.reject(new Error(`no key set is fetched here (${url})`));

const tokenClaims = (overrides: Record<string, unknown>) => ({ sub: OWNER, aud: 'peer:beta', act: { sub: CLIENT_ID }, exp: Math.floor(Date.now() / 1000) + 300, ...overrides });

describe('an identity-only peer (trusts a token issuer)', () => {
  it("refuses the plane's own credentials and tokens not meant for it, and accepts the exchanged one", async () => {
    const before = peerCalls.length;
    expect(await presentToBeta(peer.session())).toMatch(/accepts access tokens from .* only/);
    expect(await presentToBeta((await mintPeerCredential(peer.registry, 'gamma', 'beta')).presentTo('peer:beta'))).toMatch(/not a valid access token/);
    expect(await presentToBeta(await issuer.sign(tokenClaims({ aud: 'peer:gamma' })))).toMatch(/another audience/);
    expect(await presentToBeta(await issuer.sign(tokenClaims({ act: { sub: 'someone-else' } })))).toMatch(/actor/);
    expect(await presentToBeta(await issuer.sign(tokenClaims({ act: undefined })))).toMatch(/actor/);
    expect(await presentToBeta(await issuer.sign(tokenClaims({ exp: Math.floor(Date.now() / 1000) - 120 })))).toMatch(/not a valid access token/);
    const exchanged = await exchanger.tokenFor({ issuer: 'corp', subject: OWNER, audience: 'peer:beta' });
    expect(await presentToBeta(exchanged.presentTo('peer:beta'))).toBeNull();
    expect(peerCalls.length - before).toBe(7);
  });

  it("fetches an issuer's key set through the peer's netguard: a loopback issuer nobody allowed is never asked, and its tokens are refused", async () => {
    const other = await startFakeIssuer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, planePublicKey: (await loadOrCreatePlaneKey(planeDir)).publicKey });
    const kept = peer.registry.get('beta')!.tokenIssuer;
    try {
      peer.registry.update('beta', (p) => ({ ...p, tokenIssuer: { name: 'other', issuer: other.issuer, actor: CLIENT_ID, jwksUrl: other.jwksUrl } }));
      const token = await other.sign(tokenClaims({}));
      expect(await presentToBeta(token)).toMatch(/not a valid access token/);
      expect(other.jwksFetches()).toBe(0);
      // Allowed by a person in the peer's data dir, the same token is checked against the key set, fetched once.
      new NetAllowStore(peer.dataDir).add(other.url);
      expect(await presentToBeta(token)).toBeNull();
      expect(other.jwksFetches()).toBe(1);
    } finally {
      peer.registry.update('beta', (p) => ({ ...p, tokenIssuer: kept }));
      await other.close();
    }
  });

  it('checks a token against one configured public key (ES256) as well as against a JWKS', async () => {
    const { kty, crv, x, y } = issuer.publicJwk as { kty: 'EC'; crv: 'P-256'; x: string; y: string };
    const trust = { name: 'corp', issuer: issuer.issuer, actor: CLIENT_ID, publicKey: { kty, crv, x, y } };
    const token = await issuer.sign(tokenClaims({}));
    expect(await verifyDelegatedToken(trust, 'beta', token, noJwks)).toEqual({ ok: true, subject: OWNER, actor: CLIENT_ID });
    const other = await startFakeIssuer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, planePublicKey: (await loadOrCreatePlaneKey(planeDir)).publicKey });
    try {
      // Same claims, same issuer name, another key: the signature decides.
      const forged = await other.sign({ ...tokenClaims({}), iss: issuer.issuer });
      expect(await verifyDelegatedToken(trust, 'beta', forged, noJwks)).toMatchObject({ ok: false });
    } finally {
      await other.close();
    }
  });

  it('a run reaches it with a delegated token, and EffectStarted names the credential kind, never the token', async () => {
    const { runId } = await runtime.start({ agent: 'ask-peer', input: { query: 'What is the capital of Peru?' }, chain: [OWNER], via: 'cli' });
    const history = await runtime.settled(runId);
    expect(history.status).toBe('sealed');
    const records = await journal.readRun(runId, 1, 100);
    const started = records.find((r) => r.kind === 'EffectStarted')!;
    expect(started.body).toMatchObject({ effect: 'peer', name: 'beta/ask', credential: { kind: 'delegated', audience: 'peer:beta', principal: OWNER, issuer: 'corp' } });
    expect(records.find((r) => r.kind === 'EffectFailed')?.body).toBeUndefined();
    expect(records.find((r) => r.kind === 'EffectDone')).toBeDefined();
    const text = JSON.stringify(records);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
    expect(text).not.toContain(CLIENT_SECRET);
  });

  it("an issuer's refusal fails the hop as DidNotHappen, with its OAuth error code only", async () => {
    issuer.refuse('access_denied', 'user:local may not act; client_secret=hunter2');
    clock.now += 3_600_000; // past the cached token's life: the plane asks the issuer again
    try {
      const { runId } = await runtime.start({ agent: 'ask-peer', input: { query: 'refused?' }, chain: [OWNER], via: 'cli' });
      await runtime.settled(runId);
      const failed = (await journal.readRun(runId, 1, 100)).find((r) => r.kind === 'EffectFailed')!;
      expect(failed.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'TokenExchangeRefused', message: 'issuer corp refused the token exchange: access_denied' } });
      expect(JSON.stringify(failed.body)).not.toContain('hunter2');
    } finally {
      issuer.accept();
    }
  });

  it('an issuer that cannot be reached fails the hop as DidNotHappen, saying so, and nothing reaches the peer', async () => {
    const file = tokenIssuersFilePath(planeDir);
    const configured = readFileSync(file, 'utf8');
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as { port: number }).port;
    await new Promise((r) => closed.close(r));
    writeFileSync(file, configured.replace(issuer.tokenEndpoint, `http://127.0.0.1:${port}/token`));
    // Allowed, so that what fails is the connection, not netguard.
    allowed.add(`http://127.0.0.1:${port}`);
    clock.now += 3_600_000;
    const before = peerCalls.length;
    try {
      const { runId } = await runtime.start({ agent: 'ask-peer', input: { query: 'anyone issuing?' }, chain: [OWNER], via: 'cli' });
      await runtime.settled(runId);
      const failed = (await journal.readRun(runId, 1, 100)).find((r) => r.kind === 'EffectFailed')!;
      expect(failed.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'TokenIssuerUnavailable' } });
      expect((failed.body as { error: { message: string } }).error.message).toMatch(/^issuer corp could not be reached at http:\/\/127\.0\.0\.1:\d+\/token \(ECONNREFUSED\); nothing was sent to the peer$/);
      expect(peerCalls.length - before).toBe(0);
    } finally {
      writeFileSync(file, configured);
    }
  });

  it("an issuer netguard refuses fails the hop as DidNotHappen with netguard's reason; nothing reaches the issuer or the peer", async () => {
    allowed.delete(issuer.url);
    clock.now += 3_600_000;
    const asked = issuer.requests.length;
    const before = peerCalls.length;
    try {
      const { runId } = await runtime.start({ agent: 'ask-peer', input: { query: 'guarded?' }, chain: [OWNER], via: 'cli' });
      await runtime.settled(runId);
      const failed = (await journal.readRun(runId, 1, 100)).find((r) => r.kind === 'EffectFailed')!;
      expect(failed.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'TokenIssuerUnavailable' } });
      expect((failed.body as { error: { message: string } }).error.message).toBe(
        `issuer corp at ${issuer.tokenEndpoint} was not asked: netguard refused ${issuer.url} (127.0.0.1): 127.0.0.1 is loopback (127.0.0.0/8): this machine; ${issuer.url} is not on the allow list; nothing was sent to the peer`,
      );
      expect(issuer.requests.length).toBe(asked);
      expect(peerCalls.length - before).toBe(0);
    } finally {
      allowed.add(issuer.url);
    }
  });

  it('a subject halted while the exchange is in flight: the call never reaches the peer, and the run waits on the halt', async () => {
    const subject = OWNER;
    clock.now += 3_600_000;
    issuer.hold();
    const arrived = issuer.received();
    const { runId } = await runtime.start({ agent: 'ask-peer', input: { query: 'halt me' }, chain: [subject], via: 'cli' });
    await arrived;
    const before = peerCalls.length;
    await runtime.halt(`subject:${subject}`, OWNER, 'test');
    issuer.release();
    const waiting = await runtime.settled(runId);
    expect(waiting.pending?.reason).toBe('halt');
    expect(peerCalls.length - before).toBe(0);
    const failed = (await journal.readRun(runId, 1, 100)).find((r) => r.kind === 'EffectFailed')!;
    expect(failed.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'HaltedAtHop' } });

    const asked = issuer.requests.length;
    await runtime.liftHalt(`subject:${subject}`, OWNER);
    const done = await runtime.settled(runId);
    expect(done.status).toBe('sealed');
    expect(done.outcome).toBe('succeeded');
    expect(peerCalls.length - before).toBe(1);
    // The token obtained before the halt was cached and is used now: no second exchange.
    expect(issuer.requests.length).toBe(asked);
  });
});
