/**
 * An MCPv2 client: what the REPL, the plane's peer calls and the tests use to talk to a peer.
 *
 * Every request has a whole-request deadline and its answer is read under a size cap: a
 * timeout bounds how long a peer may take and says nothing about how much it may send.
 * Redirects are never followed (undici's request does not). A session token or credential goes in the Authorization header
 * (never the URL) and never into a message this module produces.
 */
import { request } from 'undici';
import { formatPeerAddress, parsePeerAddress, SessionAnswerSchema, SlotResponseSchema, type Slot, type SlotResponse } from '../../src-shared/protocol/mcpv2';
import type { PeerCredential } from './peer-credential';

export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export class PeerClientError extends Error {
  override readonly name = 'PeerClientError';
  constructor(
    /** Which step failed: the address, reaching the peer, getting a session, or the call. */
    readonly stage: 'address' | 'unreachable' | 'session' | 'call',
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

export interface PeerEndpoint {
  host: string;
  port: number;
  /** A session carried in the address (the seed's `?sessionId=` form), if any. */
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
      response = await request(`${base(this.endpoint)}${path}`, { method: 'GET', headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs });
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

  /** Sends a batch; answers in order (notifications have none). A 401 is a 'session' error. */
  async batch(slots: Slot[], options: CallOptions): Promise<SlotResponse[]> {
    const token = 'sessionId' in options.auth ? options.auth.sessionId : options.auth.credential.presentTo(options.auth.audience);
    let response;
    try {
      response = await request(`${base(this.endpoint)}/mcpv2`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(slots),
        headersTimeout: options.timeoutMs ?? this.timeoutMs,
        bodyTimeout: options.timeoutMs ?? this.timeoutMs,
      });
    } catch (error) {
      throw new PeerClientError('unreachable', `cannot reach ${this.address}: ${(error as Error).message}`);
    }
    const json = await readJson(response.body, MAX_ANSWER_BYTES).catch(() => null);
    if (response.statusCode === 401) throw new PeerClientError('session', `${this.address} rejected the session (401)`, 401);
    if (response.statusCode === 204) return [];
    if (response.statusCode !== 200) {
      const message = (json as { error?: { message?: string } } | null)?.error?.message ?? `HTTP ${response.statusCode}`;
      throw new PeerClientError('call', `${this.address} refused the call: ${message}`, response.statusCode);
    }
    const list = Array.isArray(json) ? json : [json];
    return list.map((item) => {
      const parsed = SlotResponseSchema.safeParse(item);
      if (!parsed.success) throw new PeerClientError('call', `${this.address} answered something that is not a JSON-RPC response`);
      return parsed.data;
    });
  }

  /** One tools/call; resolves with its result or rejects with the peer's error. */
  async callTool(name: string, args: Record<string, unknown>, options: CallOptions, context?: Slot['context']): Promise<unknown> {
    const [answer] = await this.batch([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args }, ...(context ? { context } : {}) }], options);
    if (!answer) throw new PeerClientError('call', `${this.address} sent no answer`);
    if ('error' in answer) throw Object.assign(new PeerClientError('call', `${name} failed: ${answer.error.message} (${answer.error.code})`), { code: answer.error.code });
    return answer.result;
  }
}
