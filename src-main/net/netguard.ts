/**
 * netguard: the one undici dispatcher every outbound HTTP client of the plane uses (model
 * providers, MCP servers over HTTP, A2A agents, push targets), so that none of them can be
 * pointed at the user's own network or the cloud metadata address by a card, a redirect or a
 * DNS answer.
 *
 * Judged at connect, not before. The guard is undici's `connect` hook: it resolves the name
 * itself (every address), judges each with address-judge.ts, and dials the chosen address BY IP,
 * with TLS servername = the name. So the address judged is the address connected to: a name
 * that answers a public address to a pre-flight and a private one a moment later (DNS
 * rebinding) never gets the second answer used, and a pooled client that opens a connection
 * long after any pre-flight is judged again, on that connection. An IP-literal host is judged
 * directly (it has exactly one address, the one dialled).
 *
 * The three things that make a client guarded (this connector, redirects not followed, the
 * answer read under a cap) are one constructor plus guardedRequest, not settings a caller must
 * remember: a client with two of the three looks guarded and is not.
 *
 * A name that resolves to several addresses where ANY is refused is refused whole, naming the
 * refused address. Connecting only to the public one would work for an honest dual-homed name,
 * but a name whose owner publishes a private address next to a public one is exactly the shape
 * of a rebinding attempt, and the person can allow the origin explicitly when it is theirs.
 *
 * The allow list is by exact origin (`scheme://host:port`), compared with the request's origin:
 * an allowed origin connects to whatever its name resolves to (a local model server on
 * loopback, a push target the person runs). Another port on the same host is another origin.
 *
 * Out of scope: the plane's own peers on loopback. They are this plane's own processes, reached
 * by the peers layer's own client (peers/peer-caller.ts) at ports the supervisor assigned, never
 * at an address something outside chose; guarding them would only need an allow entry per port
 * the supervisor already knows. The web bridge and MCP endpoint are servers, not clients.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { buildConnector, Dispatcher } from 'undici';
import { lazyDispatcher, undici } from './undici';
import { judgeAddress, isIpLiteral, type AddressJudgement } from './address-judge';

/** Stable code of a refusal (the A2A client and the MCP pool classify by it: never retried). */
export const NETGUARD_REFUSED = 'AP_NET_REFUSED';

/** A connection netguard refused, naming the host, the address and why. Never retried. */
export class NetguardRefusal extends Error {
  override readonly name = 'NetguardRefusal';
  readonly code = NETGUARD_REFUSED;
  constructor(
    readonly host: string,
    readonly address: string | null,
    readonly reason: string,
  ) {
    super(`netguard refused ${host}${address && address !== host ? ` (${address})` : ''}: ${reason}`);
  }
}

/** A guarded request that failed for a reason other than a refused address (redirect, cap, deadline). */
export class GuardedRequestError extends Error {
  override readonly name = 'GuardedRequestError';
  constructor(
    readonly code: 'AP_NET_REDIRECT' | 'AP_NET_TOO_LARGE' | 'AP_NET_DEADLINE',
    message: string,
  ) {
    super(message);
  }
}

/** Which origins pass whatever they resolve to. Asked on every connection, so it may be live. */
export interface AllowList {
  allows(origin: string): boolean;
}

/** A fixed allow list of exact origins (normalised by the URL parser). */
export function staticAllowList(origins: Iterable<string>): AllowList {
  const set = new Set([...origins].map(normaliseOrigin));
  return { allows: (origin) => set.has(origin) };
}

/** `scheme://host:port` as the WHATWG parser writes it (default ports left out); throws on anything but an http(s) origin. */
export function normaliseOrigin(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(`${JSON.stringify(text.slice(0, 200))} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`${url.protocol} is not http: or https: (an origin is scheme://host:port)`);
  if (url.username || url.password) throw new TypeError('an origin carries no user name or password');
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash) throw new TypeError(`${url.origin} has a path, query or fragment; an origin is scheme://host:port only`);
  return url.origin;
}

/** Resolves a name to every address (injectable so tests answer without DNS). */
export type LookupFn = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemLookup: LookupFn = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface NetguardOptions {
  allow: AllowList;
  lookup?: LookupFn;
  /** How long one TCP (and TLS) connect may take (default 10 s). */
  connectTimeoutMs?: number;
  /**
   * The address rule; always judgeAddress in the product. Tests replace it to let a loopback
   * server stand in for a public host, the only way to watch a name being dialled by the IP
   * its resolver answered (no public address answers on demand in a test).
   */
  judge?: (address: string) => AddressJudgement;
  /** Certificates trusted in place of the system's (tests' self-signed ones); absent: Node's default CAs. */
  ca?: string;
}

export interface Netguard {
  /** The dispatcher: pass it as `dispatcher` to undici's request/fetch, or to a driver. */
  readonly dispatcher: Dispatcher;
  readonly allow: AllowList;
  /** Judges a URL before any connection: the refusal, or null when it may be tried. */
  preflight(url: string): NetguardRefusal | null;
  close(): Promise<void>;
}

/** Connect failures after which the next address of a name is tried (not refusals, not TLS errors). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

type ConnectOptions = buildConnector.Options & { hostname: string; host?: string; protocol: string; port: string; servername?: string };

/** The origin of a connection as undici describes it (hostname without brackets; port '' for the default). */
function originOf(options: { protocol: string; hostname: string; port: string }): string {
  const host = isIP(options.hostname) === 6 ? `[${options.hostname}]` : options.hostname;
  return new URL(`${options.protocol}//${host}${options.port ? `:${options.port}` : ''}`).origin;
}

export function createNetguard(options: NetguardOptions): Netguard {
  const lookup = options.lookup ?? systemLookup;
  const { allow } = options;
  const judge = options.judge ?? judgeAddress;
  // Made with the dispatcher (lazyDispatcher: undici is loaded by the first request, not here).
  let base!: buildConnector.connector;

  const connect: buildConnector.connector = (opts, done) => {
    // A refusal is answered on a later tick, never inside undici's connect call: a synchronous
    // error there, while the pool is reconnecting after a dropped socket, left the pool with a
    // connect it never saw finish, and `dispatcher.close()` waited for ever (a plane or peer
    // stopping with a push in flight whose origin had just left the allow list).
    const refuse = (error: Error) => process.nextTick(() => done(error, null));
    const callback: typeof done = (error, socket) => (error ? refuse(error) : done(null, socket!));
    const o = opts as unknown as ConnectOptions;
    const host = o.hostname;
    let origin: string;
    try {
      origin = originOf(o);
    } catch {
      callback(new NetguardRefusal(host, null, 'not a host netguard can name as an origin'), null);
      return;
    }
    if (allow.allows(origin)) {
      base(opts, callback);
      return;
    }
    if (isIP(host)) {
      const verdict = judge(host);
      if (!verdict.allowed) callback(new NetguardRefusal(origin, host, `${verdict.reason}; ${origin} is not on the allow list`), null);
      else base(opts, callback);
      return;
    }
    lookup(host).then(
      (addresses) => {
        if (addresses.length === 0) return callback(new NetguardRefusal(origin, null, `${host} resolved to no address`), null);
        for (const { address } of addresses) {
          const verdict = judge(address);
          if (!verdict.allowed) return callback(new NetguardRefusal(origin, address, `${host} resolves to ${address}, and ${verdict.reason}; ${origin} is not on the allow list`), null);
        }
        // Dial the judged addresses by IP, in the resolver's order, the next one only when one
        // cannot be reached; the name stays the TLS servername (SNI and the certificate check)
        // and the Host header (undici writes it from the URL, not from this hostname).
        const dial = (index: number) => {
          base({ ...opts, hostname: addresses[index]!.address, servername: o.servername || host } as typeof opts, (error, socket) => {
            if (error && index + 1 < addresses.length && UNREACHABLE.has((error as NodeJS.ErrnoException).code ?? '')) return dial(index + 1);
            if (error) callback(error, null);
            else callback(null, socket!);
          });
        };
        dial(0);
      },
      (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
    );
  };

  // No undici headers/body timeouts of its own (its default cuts at 300 s): one dispatcher serves
  // every caller, and each holds its own whole-request deadline (a provider's timeoutMs, the MCP
  // and A2A clients' deadlines, guardedRequest's), which is the one a person configured.
  const { dispatcher, close } = lazyDispatcher(({ Agent, buildConnector: build }) => {
    base = build({ timeout: options.connectTimeoutMs ?? 10_000, ...(options.ca ? { ca: options.ca } : {}) });
    return new Agent({ connect, headersTimeout: 0, bodyTimeout: 0 });
  });
  return {
    dispatcher,
    allow,
    preflight(url) {
      const raw = rawHostOf(url);
      // The WHATWG parser refuses a zone id (`[fe80::1%25eth0]`); judged here so the refusal
      // says what it was rather than "invalid URL".
      if (raw && raw.startsWith('[') && raw.includes('%')) {
        let bare: string;
        try {
          bare = decodeURIComponent(raw.slice(1, -1));
        } catch {
          return new NetguardRefusal(raw, null, 'a malformed IPv6 zone id');
        }
        const verdict = judge(bare);
        return new NetguardRefusal(raw, bare, verdict.allowed ? 'an IPv6 zone id names a local interface' : verdict.reason);
      }
      let parsed: URL;
      try {
        parsed = new URL(url);
      } catch {
        return new NetguardRefusal(raw ?? url.slice(0, 100), null, 'not a valid URL');
      }
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return new NetguardRefusal(parsed.host, null, `${parsed.protocol} is not http: or https:`);
      if (allow.allows(parsed.origin)) return null;
      if (isIpLiteral(parsed.hostname)) {
        const verdict = judge(parsed.hostname);
        if (!verdict.allowed) return new NetguardRefusal(parsed.origin, parsed.hostname, `${verdict.reason}; ${parsed.origin} is not on the allow list`);
      }
      return null;
    },
    close,
  };
}

/** The host part of a URL's text as written (for refusals about forms the parser rejects). */
function rawHostOf(url: string): string | null {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^/?#@]*@)?(\[[^\]]*\]|[^/?#:]*)/i.exec(url);
  return match?.[1] ?? null;
}

export interface GuardedRequestOptions {
  method?: Dispatcher.HttpMethod;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** The most bytes the answer's body may carry (default 1 MiB). */
  maxBytes?: number;
  /** The whole-request deadline: connect, headers and body (default 30 s). */
  deadlineMs?: number;
  signal?: AbortSignal;
}

export interface GuardedAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Drops an answer's body unread; the abort it raises on the stream is expected, not an error. */
function discard(body: Dispatcher.ResponseData['body']): void {
  body.on('error', () => {});
  body.destroy();
}

const clip = (text: string, max = 200) => (text.length > max ? `${text.slice(0, max)}…` : text);

/**
 * One request through the guard. Redirects are not followed: a 3xx is an error naming where it
 * pointed (a public-looking server must not be able to send the plane to a private one by
 * Location, and following would also skip the pre-flight's refusal reason). The body is read
 * under `maxBytes` and the whole request under `deadlineMs`.
 */
export async function guardedRequest(netguard: Netguard, url: string, options: GuardedRequestOptions = {}): Promise<GuardedAnswer> {
  const refused = netguard.preflight(url);
  if (refused) throw refused;
  const maxBytes = options.maxBytes ?? 1024 * 1024;
  const deadlineMs = options.deadlineMs ?? 30_000;
  // undici is loaded first (net/undici.ts: on the first request): loading it is the plane's
  // own cost, and must not eat into the time the far side is given.
  const { request } = undici();
  const deadline = AbortSignal.timeout(deadlineMs);
  const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
  const overDeadline = () => new GuardedRequestError('AP_NET_DEADLINE', `${clip(url)} did not answer within ${deadlineMs} ms`);
  let response: Dispatcher.ResponseData;
  try {
    response = await request(url, {
      dispatcher: netguard.dispatcher,
      method: options.method ?? 'GET',
      ...(options.headers ? { headers: options.headers } : {}),
      ...(options.body !== undefined ? { body: options.body } : {}),
      signal,
    });
  } catch (error) {
    if (deadline.aborted && !options.signal?.aborted) throw overDeadline();
    throw error;
  }
  if (response.statusCode >= 300 && response.statusCode < 400) {
    discard(response.body);
    const location = response.headers.location;
    const target = Array.isArray(location) ? location[0] : location;
    throw new GuardedRequestError('AP_NET_REDIRECT', `${clip(url)} answered ${response.statusCode}, a redirect to ${target ? clip(target) : '(no Location)'}, which is not followed`);
  }
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    discard(response.body);
    throw new GuardedRequestError('AP_NET_TOO_LARGE', `${clip(url)} answered ${declared} bytes, over the ${maxBytes}-byte cap`);
  }
  const chunks: Buffer[] = [];
  let seen = 0;
  try {
    for await (const chunk of response.body) {
      const buffer = chunk as Buffer;
      seen += buffer.length;
      if (seen > maxBytes) {
        discard(response.body);
        throw new GuardedRequestError('AP_NET_TOO_LARGE', `${clip(url)} answered more than the ${maxBytes}-byte cap`);
      }
      chunks.push(buffer);
    }
  } catch (error) {
    if (error instanceof GuardedRequestError) throw error;
    if (deadline.aborted && !options.signal?.aborted) throw overDeadline();
    throw error;
  }
  return { status: response.statusCode, headers: response.headers, body: Buffer.concat(chunks) };
}
