/**
 * Token exchange (RFC 8693) against a real issuer on loopback (tests/doubles/fake-token-issuer.ts):
 * the form the issuer receives, the cache (counted at the issuer, with a clock the test moves),
 * a refusal reported by its OAuth error code alone, an issuer nobody answers at, and one whose
 * address netguard refuses (never asked: counted at the issuer).
 */
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { decodeJwt, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { startFakeIssuer, type FakeIssuer } from '../../tests/doubles/fake-token-issuer';
import { createNetguard, staticAllowList, type Netguard } from '../net/netguard';
import { EXPIRY_SKEW_MS, TokenExchangeError, TokenExchanger, tokenIssuersFilePath } from './token-exchange';

const CLIENT_ID = 'agentplane-test';
const CLIENT_SECRET = 'client-secret-0123456789';
const planeKey = generateKeyPairSync('ed25519');
let issuer: FakeIssuer;
let dataDir: string;
let netguard: Netguard;

beforeAll(async () => {
  issuer = await startFakeIssuer({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, planePublicKey: planeKey.publicKey, ttlSeconds: 300 });
  dataDir = tempDataDir('ap-token-exchange-');
  const gonePort = await closedPort();
  // Loopback test servers are allowed explicitly, by exact origin, as a person would allow theirs.
  netguard = createNetguard({ allow: staticAllowList([issuer.url, `http://127.0.0.1:${gonePort}`]) });
  writeFileSync(join(dataDir, 'client-secret'), `${CLIENT_SECRET}\n`, { mode: 0o600 });
  writeFileSync(
    tokenIssuersFilePath(dataDir),
    JSON.stringify({
      issuers: {
        corp: { tokenEndpoint: issuer.tokenEndpoint, clientId: CLIENT_ID, clientSecretFile: join(dataDir, 'client-secret') },
        gone: { tokenEndpoint: `http://127.0.0.1:${gonePort}/token`, clientId: CLIENT_ID, clientSecretEnv: 'TEST_ISSUER_SECRET' },
        metadata: { tokenEndpoint: 'http://169.254.169.254/token', clientId: CLIENT_ID, clientSecretEnv: 'TEST_ISSUER_SECRET' },
      },
    }),
    { mode: 0o600 },
  );
});
afterAll(async () => {
  await issuer.close();
  await netguard.close();
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

function exchanger(clock: { now: number }, guard: Netguard = netguard): TokenExchanger {
  return new TokenExchanger({ dataDir, netguard: guard, signingKey: async () => ({ privateKey: planeKey.privateKey, keyId: 'plane-key' }), now: () => clock.now, env: { TEST_ISSUER_SECRET: CLIENT_SECRET } });
}

describe('token exchange', () => {
  it('sends the RFC 8693 form, authenticated as the plane, naming the owner as subject and the plane as actor', async () => {
    const before = issuer.requests.length;
    const credential = await exchanger({ now: Date.now() }).tokenFor({ issuer: 'corp', subject: 'user:alice', audience: 'peer:beta', resource: 'http://127.0.0.1:7001/mcpv2' });
    expect(issuer.requests.length).toBe(before + 1);
    const { form, authorization } = issuer.requests.at(-1)!;
    expect(authorization).toBe(`Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`);
    expect(form).toMatchObject({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      actor_token_type: 'urn:ietf:params:oauth:token-type:jwt',
      requested_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      audience: 'peer:beta',
      resource: 'http://127.0.0.1:7001/mcpv2',
    });
    const rules = { issuer: CLIENT_ID, audience: issuer.tokenEndpoint };
    expect((await jwtVerify(form.subject_token!, planeKey.publicKey, rules)).payload.sub).toBe('user:alice');
    expect((await jwtVerify(form.actor_token!, planeKey.publicKey, rules)).payload.sub).toBe(CLIENT_ID);
    expect(credential.audience).toBe('peer:beta');
    const claims = decodeJwt(credential.presentTo('peer:beta'));
    expect(claims).toMatchObject({ sub: 'user:alice', aud: 'peer:beta', act: { sub: CLIENT_ID } });
    expect(() => credential.presentTo('peer:gamma')).toThrow(/cannot be presented/);
    expect(String(credential)).not.toContain(credential.presentTo('peer:beta'));
  });

  it('reuses an issued token per (subject, audience) until its expiry less the skew', async () => {
    const clock = { now: Date.now() };
    const plane = exchanger(clock);
    const before = issuer.requests.length;
    const first = await plane.tokenFor({ issuer: 'corp', subject: 'user:alice', audience: 'peer:beta' });
    await plane.tokenFor({ issuer: 'corp', subject: 'user:alice', audience: 'peer:beta' });
    expect(issuer.requests.length - before).toBe(1);
    await plane.tokenFor({ issuer: 'corp', subject: 'user:bob', audience: 'peer:beta' });
    await plane.tokenFor({ issuer: 'corp', subject: 'user:alice', audience: 'peer:gamma' });
    expect(issuer.requests.length - before).toBe(3);
    clock.now += 300_000 - EXPIRY_SKEW_MS - 1;
    expect(await plane.tokenFor({ issuer: 'corp', subject: 'user:alice', audience: 'peer:beta' })).toBe(first);
    expect(issuer.requests.length - before).toBe(3);
    clock.now += 1;
    expect(await plane.tokenFor({ issuer: 'corp', subject: 'user:alice', audience: 'peer:beta' })).not.toBe(first);
    expect(issuer.requests.length - before).toBe(4);
  });

  it('a refusal is reported by its OAuth error code only, never its description', async () => {
    issuer.refuse('invalid_target', 'audience peer:beta unknown; subject_token=eyJsecret-looking-text');
    try {
      const error = await exchanger({ now: Date.now() }).tokenFor({ issuer: 'corp', subject: 'user:carol', audience: 'peer:beta' }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(TokenExchangeError);
      expect(error).toMatchObject({ stage: 'refused', oauthError: 'invalid_target' });
      expect((error as Error).message).toBe('issuer corp refused the token exchange: invalid_target');
    } finally {
      issuer.accept();
    }
  });

  it.each([
    [{ aud: 'peer:gamma' }, /for another audience than peer:beta/],
    [{ sub: 'user:mallory' }, /for another subject than user:dave/],
    [{ act: { sub: 'someone-else' } }, /does not name the plane as its actor/],
  ])('a token issued with %o is not presented: the issuer is not taken at its word', async (claims, message) => {
    issuer.misissue(claims);
    try {
      const error = await exchanger({ now: Date.now() }).tokenFor({ issuer: 'corp', subject: 'user:dave', audience: 'peer:beta' }).then(() => null, (e: unknown) => e);
      expect(error).toMatchObject({ stage: 'unavailable' });
      expect((error as Error).message).toMatch(message);
    } finally {
      issuer.accept();
    }
  });

  it('an issuer nobody answers at: unavailable, saying where, nothing else', async () => {
    const error = await exchanger({ now: Date.now() }).tokenFor({ issuer: 'gone', subject: 'user:alice', audience: 'peer:beta' }).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ stage: 'unavailable' });
    expect((error as Error).message).toMatch(/issuer gone could not be reached at http:\/\/127\.0\.0\.1:\d+\/token/);
    expect((error as Error).message).not.toContain(CLIENT_SECRET);
  });

  it("an issuer on loopback that netguard does not allow is refused with netguard's reason, and never asked", async () => {
    const unlisted = createNetguard({ allow: staticAllowList([]) });
    try {
      const before = issuer.requests.length;
      const error = await exchanger({ now: Date.now() }, unlisted).tokenFor({ issuer: 'corp', subject: 'user:alice', audience: 'peer:beta' }).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(TokenExchangeError);
      expect(error).toMatchObject({ stage: 'unavailable' });
      expect((error as Error).message).toBe(
        `issuer corp at ${issuer.tokenEndpoint} was not asked: netguard refused ${issuer.url} (127.0.0.1): 127.0.0.1 is loopback (127.0.0.0/8): this machine; ${issuer.url} is not on the allow list; nothing was sent to the peer`,
      );
      expect(issuer.requests.length).toBe(before);
    } finally {
      await unlisted.close();
    }
  });

  it("an issuer at the cloud metadata address is refused with netguard's reason", async () => {
    const error = await exchanger({ now: Date.now() }).tokenFor({ issuer: 'metadata', subject: 'user:alice', audience: 'peer:beta' }).then(() => null, (e: unknown) => e);
    expect(error).toMatchObject({ stage: 'unavailable' });
    expect((error as Error).message).toBe(
      'issuer metadata at http://169.254.169.254/token was not asked: netguard refused http://169.254.169.254 (169.254.169.254): 169.254.169.254 is the cloud metadata address; http://169.254.169.254 is not on the allow list; nothing was sent to the peer',
    );
  });

  it('an issuer not declared: a configuration error naming the file', async () => {
    await expect(exchanger({ now: Date.now() }).tokenFor({ issuer: 'nobody', subject: 'user:alice', audience: 'peer:beta' })).rejects.toThrow(/token-issuers\.json declares no issuer named nobody/);
  });
});
