/**
 * The MCP HTTP route on a real socket (127.0.0.1), driven by the official SDK client for both
 * revisions and by raw HTTP requests for what a well-behaved client never sends: a forged Host,
 * a foreign Origin, no token, a session that is not yours, a reused request id, bad JSON, a body
 * too large.
 */
import { request as httpRequest } from 'node:http';
import Fastify, { type FastifyInstance } from 'fastify';
import * as z from 'zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client, StreamableHTTPClientTransport, discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams, selectResourceURL } from '@modelcontextprotocol/client';
import { McpServer } from '@modelcontextprotocol/server';
import type { Logger } from '../../base/logger';
import { MCP_SERVED_VERSIONS, type McpCaller, type McpServerFactory } from './mcp-factory';
import { registerMcpRoute, startMcpHttpServer, type McpRoute } from './mcp-http';
import { LegacySessions, sessionRef } from './mcp-sessions';

const TOKEN = 'test-token-7f3c9a1e5b';
const CLIENT_INFO = { name: 'route-test-client', version: '1.2.3' };

interface LogLine {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

/**
 * A surface with three tools: `whoami` (the caller the transport gave the factory), `count` (a
 * side effect to count) and `hold` (answers once the test lets every held call go: a request
 * being answered for as long as the test wants).
 */
function testSurface(): { factory: McpServerFactory; calls: () => number; held: () => number; letGo: () => void } {
  let calls = 0;
  let held = 0;
  let release!: () => void;
  let gate = new Promise<void>((resolve) => (release = resolve));
  const factory: McpServerFactory = (caller: McpCaller) => {
    const server = new McpServer({ name: 'route-test', version: '1.0.0' }, { supportedProtocolVersions: [...MCP_SERVED_VERSIONS] });
    server.registerTool('hold', { description: 'answers when let go', inputSchema: z.object({}) }, async () => {
      held += 1;
      await gate;
      return { content: [{ type: 'text', text: 'let go' }] };
    });
    server.registerTool('whoami', { description: 'the caller', inputSchema: z.object({}) }, async () => ({ content: [{ type: 'text', text: JSON.stringify(caller) }] }));
    server.registerTool('count', { description: 'counts its runs', inputSchema: z.object({}) }, async () => {
      calls += 1;
      return { content: [{ type: 'text', text: String(calls) }] };
    });
    return server;
  };
  return {
    factory,
    calls: () => calls,
    held: () => held,
    letGo: () => {
      release();
      gate = new Promise<void>((resolve) => (release = resolve));
    },
  };
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The JSON-RPC message in the body (a JSON body, or the first `data:` of an SSE body). */
  json: Record<string, unknown> | undefined;
}

function raw(port: number, options: { method?: string; path?: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: options.method ?? 'POST', path: options.path ?? '/mcp', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...options.headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const dataLine = text.split('\n').find((line) => line.startsWith('data: ') && line.length > 6);
          const payload = String(res.headers['content-type'] ?? '').includes('text/event-stream') ? dataLine?.slice(6) : text;
          let json: Record<string, unknown> | undefined;
          try {
            json = payload ? (JSON.parse(payload) as Record<string, unknown>) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const errorOf = (r: RawResponse) => r.json?.error as { code: number; message: string; data?: unknown } | undefined;
const resultOf = (r: RawResponse) => r.json?.result as Record<string, unknown> | undefined;
const auth = { authorization: `Bearer ${TOKEN}` };

function initializeBody(id: number, protocolVersion = '2025-11-25'): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: CLIENT_INFO } });
}

const inSessionOf = (sessionId: string) => ({ ...auth, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' });

/** Opens a session's SSE stream (GET) and resolves once its response has begun; close() ends it. */
function openStream(port: number, sessionId: string): Promise<{ status: number; close(): void }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'GET', path: '/mcp', headers: { ...inSessionOf(sessionId), accept: 'text/event-stream' } }, (res) => {
      resolve({ status: res.statusCode ?? 0, close: () => req.destroy() });
    });
    req.on('error', (error) => (String(error).includes('socket hang up') ? undefined : reject(error)));
    req.end();
  });
}

/** Opens a 2025-11-25 session by hand; returns its id. */
async function openRawSession(port: number, headers: Record<string, string> = auth): Promise<string> {
  const opened = await raw(port, { headers, body: initializeBody(1) });
  expect(opened.status).toBe(200);
  const sessionId = opened.headers['mcp-session-id'];
  expect(typeof sessionId).toBe('string');
  const inSession = { ...headers, 'mcp-session-id': String(sessionId), 'mcp-protocol-version': '2025-11-25' };
  expect((await raw(port, { headers: inSession, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).status).toBe(202);
  return String(sessionId);
}

describe('the MCP HTTP route', () => {
  const lines: LogLine[] = [];
  const logger: Logger = { log: (level, message, fields) => lines.push({ level, message, fields }) };
  const surface = testSurface();
  let app: FastifyInstance;
  let route: McpRoute;
  let port = 0;
  let url: URL;
  const clients: { client: Client; transport: StreamableHTTPClientTransport }[] = [];

  async function connect(mode: 'legacy' | '2026-07-28', token: string | undefined = TOKEN, info = CLIENT_INFO): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
    const client = new Client(info, mode === 'legacy' ? {} : { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const transport = new StreamableHTTPClientTransport(url, token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {});
    await client.connect(transport);
    clients.push({ client, transport });
    return { client, transport };
  }

  const callerIn = async (client: Client) => {
    const result = await client.callTool({ name: 'whoami', arguments: {} });
    const content = result.content as { type: string; text: string }[];
    return JSON.parse(content[0]!.text) as McpCaller;
  };

  beforeAll(async () => {
    app = Fastify();
    app.get('/', async () => 'the ui');
    route = await registerMcpRoute(app, { factory: surface.factory, token: TOKEN, logger, maxSessionsPerCaller: 3 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as { port: number }).port;
    url = new URL(`http://127.0.0.1:${port}/mcp`);
  });

  afterEach(async () => {
    // Closing an SDK client does not end its session; DELETE does.
    for (const { client, transport } of clients.splice(0)) {
      if (transport.sessionId) await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  afterAll(async () => {
    await route.close();
    await app.close();
  });

  it('serves 2026-07-28 to the SDK client, statelessly, as mcp:local', async () => {
    const { client, transport } = await connect('2026-07-28');
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(await callerIn(client)).toEqual({ principal: 'mcp:local', era: 'modern' });
    expect(transport.sessionId).toBeUndefined();
  });

  it('serves 2025-11-25 in a session the caller owns, and DELETE ends it', async () => {
    const before = route.sessionCount();
    const { client, transport } = await connect('legacy');
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await callerIn(client)).toEqual({ principal: 'mcp:local', era: 'legacy', sessionId: transport.sessionId });
    expect(route.sessionCount()).toBe(before + 1);
    await transport.terminateSession();
    expect(route.sessionCount()).toBe(before);
  });

  it('logs the negotiated version with the principal and the client, never the token', async () => {
    lines.length = 0;
    const info = { name: 'log-test-client', version: '2.0.0' };
    const legacy = await connect('legacy', TOKEN, info);
    const modern = await connect('2026-07-28', TOKEN, info);
    await callerIn(modern.client);
    await callerIn(modern.client);
    const opened = lines.filter((l) => l.message === 'mcp session opened (2025-11-25)');
    expect(opened).toHaveLength(1);
    expect(opened[0]!.fields).toMatchObject({ principal: 'mcp:local', client: 'log-test-client', clientVersion: '2.0.0', protocolVersion: '2025-11-25', session: sessionRef(legacy.transport.sessionId!) });
    // Once per distinct caller, client and version: the discovery probe and two calls make one line.
    const modernLines = lines.filter((l) => l.message === 'mcp caller (2026-07-28)');
    expect(modernLines).toHaveLength(1);
    expect(modernLines[0]!.fields).toMatchObject({ principal: 'mcp:local', client: 'log-test-client', protocolVersion: '2026-07-28' });
    await raw(port, { headers: { authorization: 'Bearer wrong-token-value' }, body: initializeBody(1) });
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    expect(JSON.stringify(lines)).not.toContain(legacy.transport.sessionId!);
    expect(JSON.stringify(lines)).not.toContain('wrong-token-value');
  });

  it('answers an initialize naming an older revision with the counter-offer 2025-11-25', async () => {
    const r = await raw(port, { headers: auth, body: initializeBody(1, '2025-03-26') });
    expect(r.status).toBe(200);
    expect(resultOf(r)?.protocolVersion).toBe('2025-11-25');
    const sessionId = String(r.headers['mcp-session-id']);
    expect((await raw(port, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': sessionId } })).status).toBe(200);
  });

  it('refuses a 2026-07-28 request naming an unknown revision with -32022', async () => {
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2099-01-01', 'io.modelcontextprotocol/clientInfo': CLIENT_INFO, 'io.modelcontextprotocol/clientCapabilities': {} };
    const r = await raw(port, {
      headers: { ...auth, 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }),
    });
    expect(r.status).toBe(400);
    expect(errorOf(r)?.code).toBe(-32022);
  });

  it('refuses a forged Host or a foreign Origin with 403 before anything else, and leaves sibling routes alone', async () => {
    const forgedHost = await raw(port, { headers: { ...auth, host: 'evil.example.com' }, body: initializeBody(1) });
    expect(forgedHost.status).toBe(403);
    expect(forgedHost.text).toContain('Invalid Host');
    // The Host check runs before the token check: no token, still 403, not 401.
    expect((await raw(port, { headers: { host: 'evil.example.com' }, body: initializeBody(1) })).status).toBe(403);
    const foreignOrigin = await raw(port, { headers: { ...auth, origin: 'http://evil.example.com' }, body: initializeBody(1) });
    expect(foreignOrigin.status).toBe(403);
    const loopbackOrigin = await raw(port, { headers: { ...auth, origin: `http://127.0.0.1:${port}` }, body: initializeBody(1) });
    expect(loopbackOrigin.status).toBe(200);
    await raw(port, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': String(loopbackOrigin.headers['mcp-session-id']) } });
    // The hooks are scoped to the MCP path: the UI still answers a request with any Host.
    const ui = await raw(port, { method: 'GET', path: '/', headers: { host: 'evil.example.com' } });
    expect(ui.status).toBe(200);
    expect(ui.text).toBe('the ui');
  });

  it('answers a missing or wrong token with 401 and WWW-Authenticate: Bearer naming the resource metadata', async () => {
    const challenge = `Bearer resource_metadata="http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp"`;
    const missing = await raw(port, { body: initializeBody(1) });
    expect(missing.status).toBe(401);
    expect(missing.headers['www-authenticate']).toBe(challenge);
    expect(errorOf(missing)?.message).toMatch(/Authorization: Bearer/);
    const wrong = await raw(port, { headers: { authorization: `Bearer ${TOKEN}x` }, body: initializeBody(1) });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe(challenge);
    // Named as the caller reached the server: the same port at localhost.
    const viaLocalhost = await raw(port, { headers: { host: `localhost:${port}` }, body: initializeBody(1) });
    expect(viaLocalhost.headers['www-authenticate']).toBe(`Bearer resource_metadata="http://localhost:${port}/.well-known/oauth-protected-resource/mcp"`);
    expect(wrong.text).not.toContain(TOKEN);
    await expect(connect('2026-07-28', 'not-the-token')).rejects.toThrow();
  });

  it('serves RFC 9728 protected resource metadata at both well-known URIs, without a token, naming no authorization server', async () => {
    const expected = {
      resource: `http://127.0.0.1:${port}/mcp`,
      bearer_methods_supported: ['header'],
      resource_name: 'AgentPlane MCP endpoint',
    };
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const r = await raw(port, { method: 'GET', path, headers: {} });
      expect(r.status).toBe(200);
      expect(String(r.headers['content-type'])).toContain('application/json');
      expect(r.json).toMatchObject(expected);
      expect(r.json).not.toHaveProperty('authorization_servers');
      expect(String(r.json?.description)).toMatch(/no OAuth authorization server.*README, section "MCP"/);
      expect(r.text).not.toContain(TOKEN);
    }
    // The SDK client's own discovery reads it from the 401's challenge, and accepts its resource for this server.
    const unauthorized = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: initializeBody(1) });
    expect(unauthorized.status).toBe(401);
    const { resourceMetadataUrl } = extractWWWAuthenticateParams(unauthorized);
    expect(resourceMetadataUrl?.href).toBe(`http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`);
    const viaChallenge = await discoverOAuthProtectedResourceMetadata(url, { resourceMetadataUrl });
    expect(viaChallenge).toMatchObject(expected);
    expect(viaChallenge.authorization_servers).toBeUndefined();
    const byProbing = await discoverOAuthProtectedResourceMetadata(url);
    expect(byProbing.resource).toBe(expected.resource);
    expect((await selectResourceURL(url, {} as never, byProbing))?.href).toBe(expected.resource);
  });

  it('keeps the Host and Origin checks on the metadata', async () => {
    const forged = await raw(port, { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp', headers: { host: 'evil.example.com' } });
    expect(forged.status).toBe(403);
    const foreign = await raw(port, { method: 'GET', path: '/.well-known/oauth-protected-resource', headers: { origin: 'http://evil.example.com' } });
    expect(foreign.status).toBe(403);
  });

  it('answers a session id that is not a live session of the caller with 404', async () => {
    const r = await raw(port, {
      headers: { ...auth, 'mcp-session-id': '00000000-0000-4000-8000-000000000000', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(r.status).toBe(404);
    expect(errorOf(r)).toMatchObject({ code: -32001, message: 'Session not found' });
  });

  it('holds a caller to its session limit: refused initializes hold no place, an open GET stream does not hold a session, and a caller whose every session is answering a request gets 429 naming the limit', async () => {
    expect(route.sessionCount()).toBe(0);
    // Refused initializes open nothing and hold no place.
    for (let i = 0; i < 4; i += 1) {
      const refusedInit = await raw(port, { headers: auth, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 5 } }) });
      expect(refusedInit.status).toBeGreaterThanOrEqual(400);
      expect(refusedInit.headers['mcp-session-id']).toBeUndefined();
    }
    const opened = [await openRawSession(port), await openRawSession(port), await openRawSession(port)];
    // An open GET stream is not a request being answered: with one on each session, the next
    // initialize still makes room (the stream of the session it closes ends with it).
    const streams = await Promise.all(opened.map((id) => openStream(port, id)));
    expect(streams.map((st) => st.status)).toEqual([200, 200, 200]);
    const roomMade = await raw(port, { headers: auth, body: initializeBody(8) });
    expect(roomMade.status).toBe(200);
    const evictedId = opened.shift()!;
    opened.push(String(roomMade.headers['mcp-session-id']));
    await raw(port, { headers: inSessionOf(opened[2]!), body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) });
    expect((await raw(port, { headers: inSessionOf(evictedId), body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) })).status).toBe(404);
    // Every session busy: each is answering a tool call that has not returned.
    const before = surface.held();
    const calls = opened.map((id, i) => raw(port, { headers: inSessionOf(id), body: JSON.stringify({ jsonrpc: '2.0', id: 100 + i, method: 'tools/call', params: { name: 'hold', arguments: {} } }) }));
    await expect.poll(() => surface.held() - before).toBe(3);
    const refused = await raw(port, { headers: auth, body: initializeBody(9) });
    expect(refused.status).toBe(429);
    expect(errorOf(refused)?.message).toContain('at most 3 live sessions');
    expect(errorOf(refused)?.data).toEqual({ limit: 3 });
    expect(refused.json?.id).toBe(9);
    expect(route.sessionCount()).toBe(3);
    surface.letGo();
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual([200, 200, 200]);
    // Every one still live: none was closed to make room.
    for (const id of opened) expect((await raw(port, { headers: inSessionOf(id), body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) })).status).toBe(200);
    expect((await raw(port, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': opened[0]! } })).status).toBe(200);
    opened[0] = await openRawSession(port);
    for (const st of streams) st.close();
    for (const id of opened) await raw(port, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': id } });
    expect(route.sessionCount()).toBe(0);
  });

  it('never locks out a caller that does not close its sessions: at the cap its least recently active idle session is closed, logged, and answers 404', async () => {
    expect(route.sessionCount()).toBe(0);
    lines.length = 0;
    const opened: string[] = [];
    for (let i = 0; i < 3; i += 1) opened.push(await openRawSession(port));
    // The first is used again, so the second is the least recently active.
    expect((await raw(port, { headers: inSessionOf(opened[0]!), body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }) })).status).toBe(200);
    for (let i = 0; i < 7; i += 1) {
      opened.push(await openRawSession(port));
      expect(route.sessionCount()).toBeLessThanOrEqual(3);
    }
    expect(route.sessionCount()).toBe(3);
    // Least recently active first: the second, the third, then the first (used since), then in order.
    const evicted = [1, 2, 0, 3, 4, 5, 6].map((i) => opened[i]!);
    for (const id of evicted) {
      const later = await raw(port, { headers: inSessionOf(id), body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }) });
      expect(later.status).toBe(404);
      expect(errorOf(later)).toMatchObject({ code: -32001, message: 'Session not found' });
    }
    for (const id of opened.slice(-3)) expect((await raw(port, { headers: inSessionOf(id), body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }) })).status).toBe(200);
    // Each eviction is one warning naming the caller and the session's reference, never its id or the token.
    const warned = lines.filter((l) => l.level === 'warn' && l.message.startsWith('mcp session closed to make room'));
    expect(warned.map((l) => l.fields?.session)).toEqual(evicted.map((id) => sessionRef(id)));
    expect(warned.every((l) => l.fields?.principal === 'mcp:local')).toBe(true);
    for (const id of evicted) expect(JSON.stringify(lines)).not.toContain(id);
    expect(JSON.stringify(lines)).not.toContain(TOKEN);
    for (const id of opened.slice(-3)) await raw(port, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': id } });
    expect(route.sessionCount()).toBe(0);
  });

  it('never runs a tool twice for a request id reused in a session: the repeat is -32600', async () => {
    const sessionId = await openRawSession(port);
    const inSession = { ...auth, 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' };
    const call = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'count', arguments: {} } });
    const before = surface.calls();
    const first = await raw(port, { headers: inSession, body: call });
    expect(first.status).toBe(200);
    expect(resultOf(first)?.content).toEqual([{ type: 'text', text: String(before + 1) }]);
    const again = await raw(port, { headers: inSession, body: call });
    expect(again.status).toBe(400);
    expect(errorOf(again)?.code).toBe(-32600);
    expect(errorOf(again)?.message).toContain('duplicate request id 7');
    expect(again.json?.id).toBe(7);
    expect(surface.calls()).toBe(before + 1);
    // The string "7" is a different id from the number 7.
    const asString = await raw(port, { headers: inSession, body: call.replace('"id":7', '"id":"7"') });
    expect(asString.status).toBe(200);
    expect(surface.calls()).toBe(before + 2);
    await raw(port, { method: 'DELETE', headers: { ...auth, 'mcp-session-id': sessionId } });
  });

  it('answers malformed JSON with -32700, a wrong content type with 415 and a body over 4 MiB with 413', async () => {
    const malformed = await raw(port, { headers: auth, body: '{"jsonrpc":"2.0",' });
    expect(malformed.status).toBe(400);
    expect(errorOf(malformed)?.code).toBe(-32700);
    const wrongType = await raw(port, { headers: { ...auth, 'content-type': 'text/plain' }, body: initializeBody(1) });
    expect(wrongType.status).toBe(415);
    expect(errorOf(wrongType)?.message).toContain('application/json');
    const tooLarge = await raw(port, { headers: auth, body: Buffer.alloc(4 * 1024 * 1024 + 1, 0x20) });
    expect(tooLarge.status).toBe(413);
    expect(errorOf(tooLarge)?.message).toContain('at most 4 MiB');
  });

  it('closes its live sessions on close()', async () => {
    const lone = Fastify();
    const loneRoute = await registerMcpRoute(lone, { factory: surface.factory, token: TOKEN, logger });
    await lone.listen({ port: 0, host: '127.0.0.1' });
    const lonePort = (lone.server.address() as { port: number }).port;
    await openRawSession(lonePort);
    await openRawSession(lonePort);
    expect(loneRoute.sessionCount()).toBe(2);
    await loneRoute.close();
    expect(loneRoute.sessionCount()).toBe(0);
    await lone.close();
  });
});

describe('startMcpHttpServer', () => {
  it('serves without a token as mcp:anonymous on loopback, and a failing factory is answered, not hung', async () => {
    const surface = testSurface();
    let failNext = false;
    const factory: McpServerFactory = (caller) => {
      if (failNext) throw new Error('factory broke');
      return surface.factory(caller);
    };
    const lines: LogLine[] = [];
    const server = await startMcpHttpServer({ factory, token: null, logger: { log: (level, message, fields) => lines.push({ level, message, fields }) }, port: 0 });
    try {
      expect(server.url).toBe(`http://127.0.0.1:${server.port}/mcp`);
      // No token, nothing to describe: no resource metadata.
      expect((await raw(server.port, { method: 'GET', path: '/.well-known/oauth-protected-resource/mcp', headers: {} })).status).toBe(404);
      const client = new Client(CLIENT_INFO);
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
      const result = await client.callTool({ name: 'whoami', arguments: {} });
      expect(JSON.parse((result.content as { text: string }[])[0]!.text)).toMatchObject({ principal: 'mcp:anonymous', era: 'legacy' });
      await client.close();
      failNext = true;
      const broken = await raw(server.port, { body: initializeBody(1) });
      expect(broken.status).toBe(500);
      expect(errorOf(broken)).toEqual({ code: -32603, message: 'Internal error' });
      expect(lines.some((l) => l.level === 'error' && String(l.fields?.error).includes('factory broke'))).toBe(true);
    } finally {
      await server.close();
    }
  });
});

describe('LegacySessions', () => {
  it('hides a session from a principal that does not own it', () => {
    const sessions = new LegacySessions(8);
    expect(sessions.reserve('mcp:local')).toBe(true);
    sessions.add({ id: 's1', principal: 'mcp:local', transport: {} as never, server: {} as never, requestIds: new Set() });
    expect(sessions.find('s1', 'mcp:local')?.id).toBe('s1');
    expect(sessions.find('s1', 'mcp:other')).toBeUndefined();
    expect(sessions.remove('s1')).toBe(true);
    expect(sessions.reserve('mcp:local')).toBe(true);
  });

  it('makes room at the cap only from the principal\'s own idle sessions, least recently active first', async () => {
    const { EventEmitter } = await import('node:events');
    const sessions = new LegacySessions(2);
    const session = (id: string, principal: string) => ({ id, principal, transport: {} as never, server: {} as never, requestIds: new Set<string>() });
    const [a, b, other] = [session('a', 'p'), session('b', 'p'), session('o', 'q')];
    for (const s of [a, b, other]) {
      expect(sessions.reserve(s.principal)).toBe(true);
      sessions.add(s);
    }
    const aResponse = new EventEmitter();
    const bResponse = new EventEmitter();
    sessions.track(a, aResponse, true);
    sessions.track(b, bResponse, true);
    // Both busy: no room, and nothing closed (another principal's idle session is never taken).
    expect(sessions.reserveOrEvict('p')).toEqual({ reserved: false });
    expect(sessions.size).toBe(3);
    bResponse.emit('close');
    aResponse.emit('close');
    // Both idle now; b's response ended first, so b is the least recently active.
    const place = sessions.reserveOrEvict('p');
    expect(place).toMatchObject({ reserved: true, evicted: { id: 'b' } });
    expect(sessions.find('b', 'p')).toBeUndefined();
    expect(sessions.find('a', 'p')?.id).toBe('a');
    expect(sessions.find('o', 'q')?.id).toBe('o');
  });

  it('refuses a repeated id inside one message and records none of that message', () => {
    const sessions = new LegacySessions(8, 2);
    const session = { id: 's', principal: 'p', transport: {} as never, server: {} as never, requestIds: new Set<string>() };
    expect(sessions.claimRequestIds(session, [1, 1])).toBe(1);
    expect(session.requestIds.size).toBe(0);
    expect(sessions.claimRequestIds(session, [1, 2, 3])).toBeUndefined();
    // At most two remembered: the oldest (1) was forgotten.
    expect(sessions.claimRequestIds(session, [3])).toBe(3);
    expect(sessions.claimRequestIds(session, [1])).toBeUndefined();
  });
});
