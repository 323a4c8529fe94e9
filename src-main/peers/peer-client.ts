/**
 * An MCPv2 client: what the REPL, the plane's peer calls and the tests use to talk to a peer.
 *
 * Every request has a whole-request deadline and its answer is read under a size cap: a
 * timeout bounds how long a peer may take and says nothing about how much it may send.
 * Redirects are never followed (undici's request does not). A session token or credential goes in the Authorization header
 * (never the URL) and never into a message this module produces.
 */
import { undici } from '../net/undici';
import { formatPeerAddress, parsePeerAddress, SessionAnswerSchema, SlotResponseSchema, type Slot, type SlotResponse } from '../../src-shared/protocol/mcpv2';
import type { PeerCredential } from './peer-credential';

export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * Which step of a call failed, which is what decides whether the call can have happened:
 *
 * - `address`: the address did not parse; nothing was sent.
 * - `unreachable`: no connection was made (refused, no route, no such name, connect timeout);
 *   nothing was sent.
 * - `session`: the peer refused the session or credential (401) before running anything.
 * - `refused`: the peer refused the request as a whole with a 4xx (rate limited, too large,
 *   not a valid batch, forbidden) before running any slot of it.
 * - `no-answer`: the request left and no usable answer came back: a headers or body timeout,
 *   the connection reset mid-answer, a 5xx, a body that is not a JSON-RPC answer. The peer may
 *   have run the call, or part of it: nobody here can say, so the caller must treat it as in
 *   doubt and never as "did not happen" (a retry could pay or write twice).
 * - `call`: the peer answered the call with a JSON-RPC error (`code` says which).
 */
export type PeerFailureStage = 'address' | 'unreachable' | 'session' | 'refused' | 'no-answer' | 'call';

export class PeerClientError extends Error {
  override readonly name = 'PeerClientError';
  constructor(
    readonly stage: PeerFailureStage,
    message: string,
    readonly status: number | null = null,
    /** The JSON-RPC error code of a `call` failure, when the peer sent one. */
    readonly code: number | null = null,
  ) {
    super(message);
  }
}

/**
 * Errors undici raises while connecting, before a byte of the request is written. Anything
 * else raised by a request (a headers or body timeout, `other side closed`, ECONNRESET, EPIPE)
 * may come after the request left.
 */
const CONNECT_PHASE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

function failedBeforeSending(error: unknown): boolean {
  const codes: unknown[] = [];
  const seen = (e: unknown) => {
    if (!e || typeof e !== 'object') return;
    codes.push((e as { code?: unknown }).code);
    if (e instanceof AggregateError) for (const inner of e.errors) seen(inner);
  };
  seen(error);
  seen((error as { cause?: unknown } | null)?.cause);
  return codes.some((code) => typeof code === 'string' && CONNECT_PHASE.has(code));
}

export interface PeerEndpoint {
  host: string;
  port: number;
  /** A session carried in the address (the protocol's `?sessionId=` form, docs/PEER-PROTOCOL.md), if any. */
  sessionId: string | null;
}

export function endpointOf(address: string): PeerEndpoint {
  const parsed = parsePeerAddress(address);
  if (!parsed) throw new PeerClientError('address', `malformed peer address "${address.slice(0, 120)}": expected mcpv2://host:port/mcpv2`);
  return parsed;
}

function base(endpoint: PeerEndpoint): string {
  return `http://${endpoint.host.includes(':') ? `[${endpoint.host}]` : endpoint.host}:${endpoint.port}`;
}

/** Reads a JSON answer counting bytes as they arrive, and stops reading past `limit`. */
async function readJson(body: AsyncIterable<Uint8Array> & { destroy(error?: Error): unknown }, limit: number): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) {
      body.destroy();
      throw new PeerClientError('call', `the peer answered more than ${limit} bytes`);
    }
    chunks.push(Buffer.from(chunk));
  }
  const text = Buffer.concat(chunks).toString('utf8');
  return text.length === 0 ? null : JSON.parse(text);
}

export interface CallOptions {
  timeoutMs?: number;
  /** Session token (shared-secret mode) or a credential for this peer (identity mode). */
  auth: { sessionId: string } | { credential: PeerCredential; audience: string };
}

export class Mcpv2Client {
  constructor(
    readonly endpoint: PeerEndpoint,
    private readonly timeoutMs = 30_000,
  ) {}

  static at(address: string, timeoutMs?: number): Mcpv2Client {
    return new Mcpv2Client(endpointOf(address), timeoutMs);
  }

  get address(): string {
    return formatPeerAddress(this.endpoint.host, this.endpoint.port);
  }

  private async get(path: string): Promise<{ status: number; json: unknown }> {
    let response;
    try {
      // undici's request never follows redirects: a 3xx is answered as a 3xx.
      response = await undici().request(`${base(this.endpoint)}${path}`, { method: 'GET', headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
    } catch (error) {
      throw new PeerClientError('unreachable', `cannot reach ${this.address}: ${(error as Error).message}`);
    }
    return { status: response.statusCode, json: await readJson(response.body, 1024 * 1024).catch(() => null) };
  }

  async health(): Promise<unknown> {
    const { status, json } = await this.get('/mcpv2/health');
    if (status !== 200) throw new PeerClientError('unreachable', `${this.address} answered its health check with HTTP ${status}`, status);
    return json;
  }

  async agentCard(): Promise<unknown> {
    return (await this.get('/mcpv2/agent-card')).json;
  }

  /** Always a new session from the peer, whatever the address carried. */
  async freshSession(): Promise<string> {
    const { status, json } = await this.get('/mcpv2/session');
    const parsed = SessionAnswerSchema.safeParse(json);
    if (status !== 200 || !parsed.success) throw new PeerClientError('session', `${this.address} refused a session (HTTP ${status})`, status);
    return parsed.data.sessionId;
  }

  /**
   * Sends a batch; answers in order (notifications have none). A 401 is a `session` failure,
   * another 4xx `refused`; everything that goes wrong after the request left is `no-answer`.
   */
  async batch(slots: Slot[], options: CallOptions): Promise<SlotResponse[]> {
    const token = 'sessionId' in options.auth ? options.auth.sessionId : options.auth.credential.presentTo(options.auth.audience);
    const timeout = options.timeoutMs ?? this.timeoutMs;
    let response;
    try {
      response = await undici().request(`${base(this.endpoint)}/mcpv2`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(slots),
        headersTimeout: timeout,
        bodyTimeout: timeout,
      });
    } catch (error) {
      if (failedBeforeSending(error)) throw new PeerClientError('unreachable', `cannot reach ${this.address}: ${(error as Error).message}`);
      throw new PeerClientError('no-answer', `${this.address} took the request but gave no answer: ${(error as Error).message}`);
    }
    const status = response.statusCode;
    let json: unknown;
    try {
      json = await readJson(response.body, MAX_ANSWER_BYTES);
    } catch (error) {
      if (error instanceof PeerClientError) throw error;
      const what = error instanceof SyntaxError ? 'an answer that is not JSON' : `a broken answer (${(error as Error).message})`;
      if (status === 401) throw new PeerClientError('session', `${this.address} rejected the session (401)`, 401);
      if (status >= 400 && status < 500) throw new PeerClientError('refused', `${this.address} refused the call: HTTP ${status}`, status);
      throw new PeerClientError('no-answer', `${this.address} sent ${what} (HTTP ${status})`, status);
    }
    if (status === 401) throw new PeerClientError('session', `${this.address} rejected the session (401)`, 401);
    if (status === 204) return [];
    if (status >= 400 && status < 500) {
      const message = (json as { error?: { message?: string } } | null)?.error?.message ?? `HTTP ${status}`;
      throw new PeerClientError('refused', `${this.address} refused the call: ${message}`, status);
    }
    if (status !== 200) throw new PeerClientError('no-answer', `${this.address} answered HTTP ${status} without an answer to the call`, status);
    const list = Array.isArray(json) ? json : [json];
    return list.map((item) => {
      const parsed = SlotResponseSchema.safeParse(item);
      if (!parsed.success) throw new PeerClientError('no-answer', `${this.address} answered something that is not a JSON-RPC response`, status);
      return parsed.data;
    });
  }

  /** One tools/call; resolves with its result or rejects with the peer's error. */
  async callTool(name: string, args: Record<string, unknown>, options: CallOptions, context?: Slot['context']): Promise<unknown> {
    const [answer] = await this.batch([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args }, ...(context ? { context } : {}) }], options);
    if (!answer) throw new PeerClientError('no-answer', `${this.address} sent no answer to the call`);
    if ('error' in answer) throw new PeerClientError('call', `${name} failed: ${answer.error.message} (${answer.error.code})`, 200, answer.error.code);
    return answer.result;
  }
}
