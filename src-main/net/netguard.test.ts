import { createServer, type Server, type ServerResponse, type IncomingMessage } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createNetguard, guardedRequest, normaliseOrigin, staticAllowList, NetguardRefusal, GuardedRequestError, type LookupFn, type Netguard } from './netguard';

/** A throwaway self-signed certificate for CN=public.example (test only; openssl req -x509, P-256). */
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBojCCAUigAwIBAgIUKlOIBSAaZH4Jt7H0j+TB801CrFowCgYIKoZIzj0EAwIw
GTEXMBUGA1UEAwwOcHVibGljLmV4YW1wbGUwHhcNMjYxMjAxMDczNjA3WhcNMzYx
MTI4MDczNjA3WjAZMRcwFQYDVQQDDA5wdWJsaWMuZXhhbXBsZTBZMBMGByqGSM49
AgEGCCqGSM49AwEHA0IABLqdGIAleJlw1dpie4xObCnzpc1wlYMOD1Z6F//GHhxp
yXCxQ9aWXRXTruz+jxWDrmN9M0LCnZUwdztFeqloglyjbjBsMB0GA1UdDgQWBBQG
ly1CNJ+hrQz9R5Ws/MTyStvmyjAfBgNVHSMEGDAWgBQGly1CNJ+hrQz9R5Ws/MTy
StvmyjAPBgNVHRMBAf8EBTADAQH/MBkGA1UdEQQSMBCCDnB1YmxpYy5leGFtcGxl
MAoGCCqGSM49BAMCA0gAMEUCIC54X4+3GBHobFPEJvCvIU6CRSPZ+hnCtFb0yoKJ
X6lMAiEAssRpnC3/PIRMeaSBJnnA9HCS+nEjHSvJotCa27e4Myo=
-----END CERTIFICATE-----`;
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgzVmhucHIbbiNjfA2
ar6gfaZGAiMfssOIuyN/ViDYbiKhRANCAAS6nRiAJXiZcNXaYnuMTmwp86XNcJWD
Dg9Wehf/xh4caclwsUPWll0V067s/o8Vg65jfTNCwp2VMHc7RXqpaIJc
-----END PRIVATE KEY-----`;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function listen(handler: Handler): Promise<{ server: Server; port: number; origin: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, port, origin: `http://127.0.0.1:${port}` };
}

const routes: Handler = (req, res) => {
  if (req.url === '/redirect') {
    res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' });
    return res.end();
  }
  if (req.url === '/big') {
    res.writeHead(200, { 'content-type': 'application/octet-stream' });
    return res.end(Buffer.alloc(64 * 1024, 1));
  }
  if (req.url === '/big-declared') {
    res.writeHead(200, { 'content-length': String(10 * 1024 * 1024) });
    res.write('x');
    return;
  }
  if (req.url === '/hang') return; // never answers
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end('hello');
};

const names: Record<string, string[]> = {
  'internal.example': ['10.0.0.5'],
  'metadata.example': ['169.254.169.254'],
  'rebound.example': ['127.0.0.1'],
  'mixed.example': ['93.184.216.34', '192.168.1.10'],
  'mapped.example': ['::ffff:127.0.0.1'],
};
const lookups: string[] = [];
const lookup: LookupFn = async (hostname) => {
  lookups.push(hostname);
  const answer = names[hostname];
  if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

let allowed: Awaited<ReturnType<typeof listen>>;
let other: Awaited<ReturnType<typeof listen>>;
let guard: Netguard;

beforeAll(async () => {
  allowed = await listen(routes);
  other = await listen(routes);
  guard = createNetguard({ allow: staticAllowList([allowed.origin]), lookup });
});
afterAll(async () => {
  await guard.close();
  allowed.server.closeAllConnections();
  other.server.closeAllConnections();
  await Promise.all([allowed, other].map(({ server }) => new Promise((resolve) => server.close(resolve))));
});

async function refusalOf(work: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await work;
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('the request was not refused');
}

describe('netguard', () => {
  it('lets an allowed loopback origin through and refuses another port on loopback, though a server listens there', async () => {
    const answer = await guardedRequest(guard, `${allowed.origin}/`);
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe('hello');
    const error = await refusalOf(guardedRequest(guard, `${other.origin}/`));
    expect(error).toBeInstanceOf(NetguardRefusal);
    expect(error.code).toBe('AP_NET_REFUSED');
    expect(error.message).toMatch(new RegExp(`127\\.0\\.0\\.1 is loopback.*; ${other.origin} is not on the allow list`));
  });

  it('judges at connect: the dispatcher alone (no pre-flight) refuses a listening loopback server', async () => {
    const error = await refusalOf(request(`http://127.1:${other.port}/`, { dispatcher: guard.dispatcher }));
    expect(error.name).toBe('NetguardRefusal');
    expect(error.message).toMatch(/127\.0\.0\.1 is loopback/);
    const ok = await request(`http://127.0.0.1:${allowed.port}/`, { dispatcher: guard.dispatcher });
    expect(await ok.body.text()).toBe('hello');
  });

  it.each([
    ['http://2130706433/', /127\.0\.0\.1 is loopback/],
    ['http://0177.0.0.1/', /127\.0\.0\.1 is loopback/],
    ['http://0x7f.0.0.1/', /127\.0\.0\.1 is loopback/],
    ['http://0x7f000001/', /127\.0\.0\.1 is loopback/],
    ['http://127.1/', /127\.0\.0\.1 is loopback/],
    ['http://10.1/', /10\.0\.0\.1 is a private network address/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is the cloud metadata address/],
    ['http://[::1]/', /::1 is loopback/],
    ['http://[::ffff:127.0.0.1]/', /IPv4-mapped form of 127\.0\.0\.1 is loopback/],
    ['http://[::ffff:7f00:1]/', /IPv4-mapped form of 127\.0\.0\.1 is loopback/],
    ['http://[0:0:0:0:0:ffff:169.254.169.254]/', /IPv4-mapped form of 169\.254\.169\.254 is the cloud metadata address/],
    ['http://[64:ff9b::a9fe:a9fe]/', /NAT64 form of 169\.254\.169\.254 is the cloud metadata address/],
    ['http://[fe80::1%25eth0]/', /fe80::1%eth0 is link-local/],
    ['http://[fd00:ec2::254]/', /fd00:ec2::254 is the cloud metadata address \(IPv6\)/],
    ['https://[fc00::5]:8443/', /unique local/],
  ])('refuses %s with its reason', async (url, reason) => {
    const error = await refusalOf(guardedRequest(guard, url));
    expect(error).toBeInstanceOf(NetguardRefusal);
    expect(error.message).toMatch(reason);
  });

  it('refuses the same literal forms at connect when no pre-flight ran', async () => {
    for (const url of [`http://2130706433:${other.port}/`, `http://[::ffff:7f00:1]:${other.port}/`, 'http://[64:ff9b::a9fe:a9fe]/']) {
      const error = await refusalOf(request(url, { dispatcher: guard.dispatcher }));
      expect(error, url).toBeInstanceOf(NetguardRefusal);
    }
  });

  it('resolves names itself and refuses one that resolves to a private or metadata address', async () => {
    const internal = await refusalOf(guardedRequest(guard, 'http://internal.example/'));
    expect(internal.message).toMatch(/internal\.example resolves to 10\.0\.0\.5, and 10\.0\.0\.5 is a private network address/);
    const metadata = await refusalOf(guardedRequest(guard, 'http://metadata.example/'));
    expect(metadata.message).toMatch(/169\.254\.169\.254 is the cloud metadata address/);
    const mapped = await refusalOf(guardedRequest(guard, 'http://mapped.example/'));
    expect(mapped.message).toMatch(/IPv4-mapped form of 127\.0\.0\.1/);
    expect(lookups).toContain('internal.example');
  });

  it('refuses a name that resolves to a loopback server genuinely listening (rebinding)', async () => {
    const error = await refusalOf(guardedRequest(guard, `http://rebound.example:${other.port}/`));
    expect(error).toBeInstanceOf(NetguardRefusal);
    expect(error.message).toMatch(/rebound\.example resolves to 127\.0\.0\.1, and 127\.0\.0\.1 is loopback/);
  });

  it('refuses a name with one public and one private address whole, naming the private one', async () => {
    const error = await refusalOf(guardedRequest(guard, 'http://mixed.example/'));
    expect(error).toBeInstanceOf(NetguardRefusal);
    expect((error as NetguardRefusal).address).toBe('192.168.1.10');
    expect(error.message).toMatch(/192\.168\.1\.10 is a private network address/);
  });

  it('does not follow a redirect to a private address; the error names the target', async () => {
    const error = await refusalOf(guardedRequest(guard, `${allowed.origin}/redirect`));
    expect(error).toBeInstanceOf(GuardedRequestError);
    expect(error.code).toBe('AP_NET_REDIRECT');
    expect(error.message).toMatch(/answered 302, a redirect to http:\/\/169\.254\.169\.254\/latest\/meta-data\/iam\/security-credentials\/, which is not followed/);
  });

  it('reads the answer under the size cap, declared or not', async () => {
    const streamed = await refusalOf(guardedRequest(guard, `${allowed.origin}/big`, { maxBytes: 1000 }));
    expect(streamed.code).toBe('AP_NET_TOO_LARGE');
    expect(streamed.message).toMatch(/more than the 1000-byte cap/);
    const declared = await refusalOf(guardedRequest(guard, `${allowed.origin}/big-declared`, { maxBytes: 1000 }));
    expect(declared.message).toMatch(/10485760 bytes, over the 1000-byte cap/);
    const fits = await guardedRequest(guard, `${allowed.origin}/big`, { maxBytes: 64 * 1024 });
    expect(fits.body.length).toBe(64 * 1024);
  });

  it('gives up at the whole-request deadline', async () => {
    const started = Date.now();
    const error = await refusalOf(guardedRequest(guard, `${allowed.origin}/hang`, { deadlineMs: 150 }));
    expect(error.code).toBe('AP_NET_DEADLINE');
    expect(error.message).toMatch(/did not answer within 150 ms/);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('dials a name by the address its resolver answered, keeping the name in Host; the next address when one is unreachable', async () => {
    // A stand-in judge treats 127.0.0.0/8 as public, so a loopback server can play a public host.
    const seen: string[] = [];
    const stage = createNetguard({
      allow: staticAllowList([]),
      judge: (address) => (address.startsWith('127.') ? { allowed: true } : { allowed: false, reason: `${address} is not a stand-in` }),
      lookup: async (hostname) => {
        seen.push(hostname);
        // 127.0.0.2 is on the loopback interface with nothing listening on the port: refused, so the next is tried.
        return hostname === 'public.example' ? [{ address: '127.0.0.2', family: 4 }, { address: '127.0.0.1', family: 4 }] : [];
      },
    });
    const hosts: string[] = [];
    const server = await listen((req, res) => {
      hosts.push(String(req.headers.host));
      if (req.url === '/go') return res.writeHead(301, { location: 'http://10.0.0.5/admin' }).end();
      res.end(`via ${req.socket.localAddress}`);
    });
    try {
      const answer = await guardedRequest(stage, `http://public.example:${server.port}/`);
      expect(answer.body.toString()).toBe('via 127.0.0.1');
      expect(hosts[0]).toBe(`public.example:${server.port}`);
      expect(seen).toEqual(['public.example']);
      // A public-looking name that redirects to a private address: refused as a redirect, naming it.
      const redirected = await refusalOf(guardedRequest(stage, `http://public.example:${server.port}/go`));
      expect(redirected.code).toBe('AP_NET_REDIRECT');
      expect(redirected.message).toMatch(/answered 301, a redirect to http:\/\/10\.0\.0\.5\/admin, which is not followed/);
      const none = await refusalOf(guardedRequest(stage, `http://nowhere.example:${server.port}/`));
      expect(none.message).toMatch(/nowhere\.example resolved to no address/);
    } finally {
      await stage.close();
      server.server.closeAllConnections();
      await new Promise((resolve) => server.server.close(resolve));
    }
  });

  it('over TLS, dials the IP and checks the certificate against the name (servername = the host name)', async () => {
    const server = createTlsServer({ cert: TEST_CERT, key: TEST_KEY }, (_req, res) => res.end('tls ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const stage = createNetguard({
      allow: staticAllowList([]),
      ca: TEST_CERT,
      judge: (address) => (address === '127.0.0.1' ? { allowed: true } : { allowed: false, reason: 'not the stand-in' }),
      lookup: async (hostname) => (hostname === 'public.example' || hostname === 'other.example' ? [{ address: '127.0.0.1', family: 4 }] : []),
    });
    try {
      const answer = await guardedRequest(stage, `https://public.example:${port}/`);
      expect(answer.body.toString()).toBe('tls ok');
      // Same address, another name: the certificate is for public.example only, so this fails.
      const wrongName = await refusalOf(guardedRequest(stage, `https://other.example:${port}/`));
      expect(wrongName.message).toMatch(/other\.example/);
      expect((wrongName as { code?: string }).code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
    } finally {
      await stage.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('passes a resolver failure through as it is (a name that does not exist is not a refusal)', async () => {
    const error = await refusalOf(guardedRequest(guard, 'http://missing.example/'));
    expect(error).not.toBeInstanceOf(NetguardRefusal);
    expect(error.message).toMatch(/ENOTFOUND missing\.example/);
  });

  it('normalises origins and refuses what is not one', () => {
    expect(normaliseOrigin('HTTP://LocalHost:80')).toBe('http://localhost');
    expect(normaliseOrigin('https://example.com:8443/')).toBe('https://example.com:8443');
    expect(() => normaliseOrigin('ftp://example.com')).toThrow(/ftp: is not http: or https:/);
    expect(() => normaliseOrigin('http://example.com/path')).toThrow(/has a path/);
    expect(() => normaliseOrigin('http://u:p@example.com')).toThrow(/no user name or password/);
    expect(() => normaliseOrigin('nope')).toThrow(/"nope" is not a URL/);
  });
});

describe('closing while a refused reconnect is in flight', () => {
  it('close() ends when the origin left the allow list and the server dropped the socket as the request was aborted', async () => {
    // Found stopping a peer with a push in flight: the receiver drops the connection in the tick
    // the request is aborted, undici reconnects, and a refusal answered synchronously inside its
    // connect left close() waiting for ever.
    let allowedNow = true;
    const receiver = await listen((req) => {
      req.resume(); // read and never answer
    });
    const stage = createNetguard({ allow: { allows: (origin) => allowedNow && origin === receiver.origin }, lookup });
    const abort = new AbortController();
    const sent = guardedRequest(stage, `${receiver.origin}/hook`, { method: 'POST', body: '{}', deadlineMs: 3_000, signal: abort.signal }).catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    allowedNow = false;
    receiver.server.close();
    receiver.server.closeAllConnections();
    abort.abort();
    expect(await sent).toBeInstanceOf(Error);
    const closed = await Promise.race([stage.close().then(() => 'closed'), new Promise((resolve) => setTimeout(() => resolve('hung'), 2_000))]);
    expect(closed).toBe('closed');
  });
});
