/**
 * A fake OAuth 2.0 Token Exchange issuer (RFC 8693) on loopback, for the delegated-credential
 * tests: a real HTTP server with a token endpoint and a JWKS endpoint.
 *
 * POST /token checks the client's HTTP Basic credentials and the subject and actor tokens
 * (JWTs the plane signs: their signatures against the plane's public key, `aud` = this
 * endpoint), then issues an ES256 access token with `iss`, `sub` (the subject token's),
 * `aud` (the requested audience), `act: {sub}` (the actor token's) and `exp`. Every request's
 * form is kept for the test to assert. `refuse(...)` makes it answer an RFC 6749 section 5.2
 * error; `hold()` makes it keep its next answers until `release()`, announcing each request it
 * holds (`received`), so a test can act while an exchange is in flight.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type JWK } from 'jose';
import type { KeyObject } from 'node:crypto';

export interface IssuerRequest {
  form: Record<string, string>;
  authorization: string | null;
}

export interface FakeIssuer {
  url: string;
  tokenEndpoint: string;
  jwksUrl: string;
  issuer: string;
  publicJwk: JWK;
  requests: IssuerRequest[];
  /** How many times its key set (GET /jwks) was fetched. */
  jwksFetches(): number;
  /** Answers every later request with this error (status 400 unless given). */
  refuse(error: string, description: string, status?: number): void;
  /** Answers normally again (and stops misissuing). */
  accept(): void;
  /** Issues tokens with these claims overriding the right ones (an issuer that ignores the request). */
  misissue(claims: Record<string, unknown>): void;
  /** Holds every later answer until release(). */
  hold(): void;
  release(): void;
  /** Resolves when the next request has arrived (and, if held, is being held). */
  received(): Promise<IssuerRequest>;
  /** Signs a token as this issuer would, with any claims (`iss` too, for a forgery), for refusal tests at the peer. */
  sign(claims: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startFakeIssuer(options: { clientId: string; clientSecret: string; planePublicKey: KeyObject; ttlSeconds?: number }): Promise<FakeIssuer> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const publicJwk = { ...(await exportJWK(publicKey)), kid: 'fake-issuer-1', alg: 'ES256', use: 'sig' };
  const requests: IssuerRequest[] = [];
  let jwksFetched = 0;
  let refusal: { error: string; description: string; status: number } | null = null;
  let overrides: Record<string, unknown> = {};
  let held: Array<() => void> | null = null;
  let waiters: Array<(r: IssuerRequest) => void> = [];
  const base = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sign = (claims: Record<string, unknown>) =>
    new SignJWT({ iss: base(), ...claims }).setProtectedHeader({ alg: 'ES256', kid: publicJwk.kid, typ: 'at+jwt' }).setIssuedAt().sign(privateKey);

  const server: Server = createServer((request, response) => {
    void (async () => {
      const send = (status: number, body: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        response.end(JSON.stringify(body));
      };
      if (request.method === 'GET' && request.url === '/jwks') {
        jwksFetched += 1;
        return send(200, { keys: [publicJwk] });
      }
      if (request.method !== 'POST' || request.url !== '/token') return send(404, { error: 'not_found' });
      const form = Object.fromEntries(new URLSearchParams(await readBody(request)));
      const seen: IssuerRequest = { form, authorization: request.headers.authorization ?? null };
      requests.push(seen);
      for (const wake of waiters.splice(0)) wake(seen);
      if (held) await new Promise<void>((resolve) => held!.push(resolve));
      if (refusal) return send(refusal.status, { error: refusal.error, error_description: refusal.description });
      const expected = `Basic ${Buffer.from(`${options.clientId}:${options.clientSecret}`).toString('base64')}`;
      if (seen.authorization !== expected) return send(401, { error: 'invalid_client' });
      let subject: string;
      let actor: string;
      try {
        const rules = { algorithms: ['EdDSA'], issuer: options.clientId, audience: `${base()}/token` };
        subject = (await jwtVerify(form.subject_token ?? '', options.planePublicKey, rules)).payload.sub!;
        actor = (await jwtVerify(form.actor_token ?? '', options.planePublicKey, rules)).payload.sub!;
      } catch {
        return send(400, { error: 'invalid_grant', error_description: 'subject or actor token did not verify' });
      }
      const ttl = options.ttlSeconds ?? 300;
      const token = await sign({ sub: subject, aud: form.audience, act: { sub: actor }, exp: Math.floor(Date.now() / 1000) + ttl, ...overrides });
      send(200, { access_token: token, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token', token_type: 'Bearer', expires_in: ttl });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const fake: FakeIssuer = {
    url: base(),
    tokenEndpoint: `${base()}/token`,
    jwksUrl: `${base()}/jwks`,
    issuer: base(),
    publicJwk,
    requests,
    jwksFetches: () => jwksFetched,
    refuse(error, description, status = 400) {
      refusal = { error, description, status };
    },
    accept() {
      refusal = null;
      overrides = {};
    },
    misissue(claims) {
      overrides = claims;
    },
    hold() {
      held = [];
    },
    release() {
      const waiting = held ?? [];
      held = null;
      for (const go of waiting) go();
    },
    received() {
      return new Promise((resolve) => waiters.push(resolve));
    },
    sign,
    async close() {
      fake.release();
      waiters = [];
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
