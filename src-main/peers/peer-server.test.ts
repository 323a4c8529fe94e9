/**
 * The peer's HTTP surface in process (`startPeer`, then `app.inject`): JSON-RPC 2.0 batch
 * semantics exactly as the spec's section 6 ("Batch") defines them and its section 7 examples
 * show them, adapted to this peer's methods (`tools/call`, `tools/list`); a single request
 * object answered as a single response; the batch cap; and the HTTP refusals (Host, Origin,
 * body cap, authentication).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BATCH_SIZE, Mcpv2Error } from '../../src-shared/protocol/mcpv2';
import type { StartedPeer } from '../plane/peer-host';
import { startTestPeer, type TestPeer } from '../../tests/support/peer-support';
import { createLogger } from '../base/logger';
import { PEER_BODY_LIMIT } from './peer-server';
import { mintSession } from './session-token';

const SECRET = 'peer-server-test-secret';
let testPeer: TestPeer;
let peer: StartedPeer;
let token: string;

beforeAll(async () => {
  testPeer = await startTestPeer('srv', { secret: SECRET, ratePerSecond: 100_000 });
  peer = testPeer.peer;
  token = testPeer.session();
});

afterAll(() => testPeer.close());

const host = () => `127.0.0.1:${peer.port}`;

/** A request as a same-host caller sends it: the right Host, the session, JSON. */
function inject(options: InjectOptions & { auth?: string | null }): Promise<LightMyRequestResponse> {
  const { auth, headers, ...rest } = options;
  return peer.app.inject({
    ...rest,
    headers: {
      host: host(),
      ...(auth === null ? {} : { authorization: `Bearer ${auth ?? token}` }),
      ...(rest.payload !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
  });
}

/** POST /mcpv2 with `body` as the exact text sent (a string) or as JSON. */
async function rpc(body: unknown): Promise<{ status: number; json: unknown; text: string }> {
  const response = await inject({ method: 'POST', url: '/mcpv2', payload: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.statusCode, json: response.body.length > 0 ? (JSON.parse(response.body) as unknown) : undefined, text: response.body };
}

const call = (id: string | number | null | undefined, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  ...(id !== undefined ? { id } : {}),
  method: 'tools/call',
  params: { name, arguments: args },
});
const invalid = (id: unknown = null) => ({ jsonrpc: '2.0', id, error: { code: Mcpv2Error.InvalidRequest, message: expect.any(String) } });

describe('JSON-RPC 2.0 batch semantics (spec section 6, examples of section 7)', () => {
  it('rpc call with invalid JSON: a single Parse error (-32700) with id null', async () => {
    const answer = await rpc('{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]');
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: Mcpv2Error.ParseError, message: expect.any(String) } });
  });

  it('rpc call Batch, invalid JSON: a single Parse error (-32700) with id null', async () => {
    const answer = await rpc('[{"jsonrpc": "2.0", "method": "tools/list", "id": "1"},{"jsonrpc": "2.0", "method"]');
    expect(answer.json).toEqual({ jsonrpc: '2.0', id: null, error: { code: Mcpv2Error.ParseError, message: expect.any(String) } });
  });

  it('rpc call with an empty Array: a single Invalid Request (-32600), not an array', async () => {
    const answer = await rpc([]);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual(invalid());
  });

  it('rpc call with an invalid Batch but not empty ([1]): an array of one Invalid Request', async () => {
    expect((await rpc([1])).json).toEqual([invalid()]);
  });

  it('rpc call with invalid Batch ([1,2,3]): three Invalid Requests, in order', async () => {
    expect((await rpc([1, 2, 3])).json).toEqual([invalid(), invalid(), invalid()]);
  });

  it('rpc call Batch: calls, notifications and invalid objects are answered only for the non-notifications, in order, ids echoed', async () => {
    const answer = await rpc([
      call('1', 'negotiate', { versions: ['2.0'] }),
      call(undefined, 'ping'),
      call('2', 'get_skill', { name: 'ping' }),
      { foo: 'boo' },
      { jsonrpc: '2.0', method: 'foo.get', params: { name: 'myself' }, id: '5' },
      { jsonrpc: '2.0', method: 'tools/list', id: '9' },
      { jsonrpc: '2.0', method: 'notify_hello', params: [7] },
    ]);
    expect(answer.status).toBe(200);
    const slots = answer.json as Array<{ id: unknown; result?: unknown; error?: { code: number } }>;
    expect(slots.map((s) => s.id)).toEqual(['1', '2', null, '5', '9']);
    expect(slots[0]!.result).toMatchObject({ version: '2.0' });
    expect(slots[1]!.result).toMatchObject({ name: 'ping', custom: false });
    expect(slots[2]).toEqual(invalid());
    expect(slots[3]).toEqual({ jsonrpc: '2.0', id: '5', error: { code: Mcpv2Error.MethodNotFound, message: expect.any(String) } });
    expect((slots[4]!.result as { tools: Array<{ name: string }> }).tools.map((t) => t.name)).toContain('ping');
    for (const slot of slots) expect(Object.keys(slot).sort()).toEqual(['error' in slot ? 'error' : 'result', 'id', 'jsonrpc'].sort());
  });

  it('rpc call Batch (all notifications): nothing is returned (HTTP 204, no body)', async () => {
    const response = await inject({
      method: 'POST',
      url: '/mcpv2',
      payload: JSON.stringify([call(undefined, 'ping'), { jsonrpc: '2.0', method: 'notify_hello', params: [7] }, { jsonrpc: '2.0', method: 'tools/list' }]),
    });
    expect(response.statusCode).toBe(204);
    expect(response.body).toBe('');
  });

  it('a single request object gets a single response object; a single notification gets nothing', async () => {
    const single = await rpc(call(42, 'ping'));
    expect(single.json).toEqual({ jsonrpc: '2.0', id: 42, result: expect.objectContaining({ pong: true }) });
    const unknown = await rpc({ jsonrpc: '2.0', id: 'x', method: 'subtract', params: [42, 23] });
    expect(unknown.json).toEqual({ jsonrpc: '2.0', id: 'x', error: { code: Mcpv2Error.MethodNotFound, message: expect.any(String) } });
    const notification = await inject({ method: 'POST', url: '/mcpv2', payload: JSON.stringify(call(undefined, 'ping')) });
    expect(notification.statusCode).toBe(204);
    expect(notification.body).toBe('');
  });

  it.each([['"hello"'], ['42'], ['null'], ['true']])('a body that is neither a request nor a batch (%s) is one Invalid Request', async (text) => {
    expect((await rpc(text)).json).toEqual(invalid());
  });

  it('ids are echoed as sent: strings, numbers (zero, negative, fractional) and null; duplicates each answered', async () => {
    const ids = ['abc', '', 0, -7, 1.5, null, 'abc'];
    const answer = await rpc(ids.map((id) => call(id, 'ping')));
    expect((answer.json as Array<{ id: unknown; result: { pong: boolean } }>).map((s) => [s.id, s.result.pong])).toEqual(ids.map((id) => [id, true]));
  });

  it('an invalid request keeps its id when one can be read, and null when it cannot', async () => {
    const answer = await rpc([
      { jsonrpc: '1.0', id: 7, method: 'tools/list' },
      { jsonrpc: '2.0', id: 8 },
      { jsonrpc: '2.0', id: 9, method: '' },
      { jsonrpc: '2.0', id: 10, method: 'tools/list', params: 'not structured' },
      { jsonrpc: '2.0', id: { nested: true }, method: 'tools/list' },
      { jsonrpc: '2.0', method: 42 },
    ]);
    expect(answer.json).toEqual([invalid(7), invalid(8), invalid(9), invalid(10), invalid(null), invalid(null)]);
  });

  it('tools/call with bad params is Invalid params (-32602); an unknown skill is -32002', async () => {
    const answer = await rpc([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: ['ping'] },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { arguments: {} } },
      call(3, 'ping', { unexpected: true }),
      call(4, 'negotiate', { versions: 'not a list' }),
      call(5, 'no_such_skill'),
      call(6, 'ai', { provider: 'openai' }),
    ]);
    expect((answer.json as Array<{ error: { code: number } }>).map((s) => s.error.code)).toEqual([
      Mcpv2Error.InvalidParams,
      Mcpv2Error.InvalidParams,
      Mcpv2Error.InvalidParams,
      Mcpv2Error.InvalidParams,
      Mcpv2Error.SkillNotFound,
      Mcpv2Error.SkillNotFound,
    ]);
  });

  it(`a batch of ${MAX_BATCH_SIZE} is answered; ${MAX_BATCH_SIZE + 1} is refused as one Invalid Request`, async () => {
    const full = await rpc(Array.from({ length: MAX_BATCH_SIZE }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' })));
    expect(full.status).toBe(200);
    expect((full.json as unknown[]).length).toBe(MAX_BATCH_SIZE);
    const over = await rpc(Array.from({ length: MAX_BATCH_SIZE + 1 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' })));
    expect(over.status).toBe(400);
    expect(over.json).toEqual(invalid());
    expect((over.json as { error: { message: string } }).error.message).toContain(String(MAX_BATCH_SIZE));
  });

  it('a slot whose arguments the journal cannot hold (a lone surrogate, an unsafe integer) fails alone; the batch still answers every slot', async () => {
    // Regression: the journal refusing one slot's arguments once made the whole batch HTTP 500.
    const answer = await rpc([call(1, 'ping'), call(2, 'ping', { note: 'bad \ud800' }), call(3, 'ping', { n: 2 ** 53 + 2 }), call(4, 'ping')]);
    expect(answer.status).toBe(200);
    const slots = answer.json as Array<{ id: number; result?: unknown; error?: { code: number } }>;
    expect(slots.map((s) => s.id)).toEqual([1, 2, 3, 4]);
    expect(slots[0]!.result).toMatchObject({ pong: true });
    expect(slots[1]!.error?.code).toBe(Mcpv2Error.InvalidParams);
    expect(slots[2]!.error?.code).toBe(Mcpv2Error.InvalidParams);
    expect(slots[3]!.result).toMatchObject({ pong: true });
  });
});

describe('HTTP refusals', () => {
  it('a Host that is not this peer\'s address (or the wrong port) is refused with 403, before anything else', async () => {
    for (const badHost of ['evil.example', `evil.example:${peer.port}`, `127.0.0.1:${peer.port + 1}`, `127.0.0.1`, `127.0.0.2:${peer.port}`]) {
      const response = await inject({ method: 'GET', url: '/mcpv2/health', headers: { host: badHost } });
      expect(response.statusCode, badHost).toBe(403);
      expect(response.json()).toMatchObject({ error: { code: Mcpv2Error.InvalidRequest } });
    }
    for (const goodHost of [host(), `localhost:${peer.port}`, `LOCALHOST:${peer.port}`]) {
      expect((await inject({ method: 'GET', url: '/mcpv2/health', headers: { host: goodHost } })).statusCode, goodHost).toBe(200);
    }
    // The Host check runs before authentication: a bad Host with a good session is still 403.
    expect((await inject({ method: 'POST', url: '/mcpv2', headers: { host: `evil.example:${peer.port}` }, payload: JSON.stringify([call(1, 'ping')]) })).statusCode).toBe(403);
  });

  it('any Origin is refused with 403 (a peer is not a browser API), even its own', async () => {
    for (const origin of ['https://evil.example', 'null', `http://${host()}`]) {
      const get = await inject({ method: 'GET', url: '/mcpv2/health', headers: { origin } });
      expect(get.statusCode, origin).toBe(403);
      const post = await inject({ method: 'POST', url: '/mcpv2', headers: { origin }, payload: JSON.stringify([call(1, 'ping')]) });
      expect(post.statusCode, origin).toBe(403);
    }
  });

  it(`a body over the cap (${PEER_BODY_LIMIT} bytes) is refused with 413`, async () => {
    const big = JSON.stringify([call(1, 'upload_file', { filename: 'big.txt', content: 'x'.repeat(PEER_BODY_LIMIT) })]);
    const response = await inject({ method: 'POST', url: '/mcpv2', payload: big });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ id: null, error: { code: Mcpv2Error.InvalidRequest } });
  });

  it('no session, a bad session or a session for another IP: 401, -32001 and WWW-Authenticate: Bearer', async () => {
    const otherIp = mintSession({ secret: SECRET, clientIp: '127.0.0.2', ttlSeconds: 3600 }).sessionId;
    const cases: Array<[string, InjectOptions & { auth?: string | null }, RegExp]> = [
      ['none', { auth: null }, /no session/],
      ['garbage', { auth: 'garbage' }, /malformed/],
      ['wrong secret', { auth: mintSession({ secret: 'other', clientIp: '127.0.0.1', ttlSeconds: 60 }).sessionId }, /bad-signature/],
      ['another IP', { auth: otherIp }, /wrong-ip/],
      ['right token, wrong caller address', { remoteAddress: '127.0.0.3' }, /wrong-ip/],
    ];
    for (const [what, options, reason] of cases) {
      for (const url of ['/mcpv2', '/mcpv2/ai/openai']) {
        const response = await inject({ method: 'POST', url, payload: JSON.stringify(url === '/mcpv2' ? [call(1, 'ping')] : { messages: [{ role: 'user', content: 'hi' }] }), ...options });
        expect(response.statusCode, `${what} ${url}`).toBe(401);
        expect(response.headers['www-authenticate']).toBe('Bearer');
        expect(response.json()).toMatchObject({ id: null, error: { code: Mcpv2Error.InvalidSession, message: expect.stringMatching(reason) } });
      }
    }
  });

  it('the session may come as ?sessionId= (the protocol\'s address form) as well as a Bearer header', async () => {
    const response = await inject({ method: 'POST', url: `/mcpv2?sessionId=${encodeURIComponent(token)}`, auth: null, payload: JSON.stringify([call(1, 'ping')]) });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([{ jsonrpc: '2.0', id: 1, result: expect.objectContaining({ pong: true }) }]);
  });

  it('health, the /health alias, the agent card and session issuance need no session', async () => {
    for (const url of ['/mcpv2/health', '/health', '/mcpv2/agent-card', '/mcpv2/session']) {
      expect((await inject({ method: 'GET', url, auth: null })).statusCode, url).toBe(200);
    }
  });

  it('authentication comes before the body is parsed (an unauthenticated caller gets 401, not a JSON-RPC answer)', async () => {
    // Regression: the session was once checked after the body was parsed, so an unauthenticated
    // caller got 200 / -32700 for bad JSON (and could make the peer parse up to 24 MB).
    const response = await inject({ method: 'POST', url: '/mcpv2', auth: null, payload: '{"not json' });
    expect(response.statusCode).toBe(401);
  });

  it('the Bearer scheme is case-insensitive (RFC 9110 section 11.1)', async () => {
    const response = await inject({ method: 'POST', url: '/mcpv2', auth: null, headers: { authorization: `bearer ${token}` }, payload: JSON.stringify([call(1, 'ping')]) });
    expect(response.statusCode).toBe(200);
  });
});

describe('the access log (a debug line per request)', () => {
  const pingThrough = async (level: 'info' | 'debug'): Promise<Array<{ level: string; message: string }>> => {
    const dir = mkdtempSync(join(tmpdir(), 'ap-peer-log-'));
    const file = join(dir, 'peer.jsonl');
    const logged = await startTestPeer(`log-${level}`, { secret: SECRET, ratePerSecond: 100_000, logger: createLogger(file, () => undefined, level) });
    try {
      const response = await logged.peer.app.inject({
        method: 'POST',
        url: '/mcpv2',
        headers: { host: `127.0.0.1:${logged.peer.port}`, authorization: `Bearer ${logged.session()}`, 'content-type': 'application/json' },
        payload: JSON.stringify([call(1, 'ping')]),
      });
      expect(response.statusCode).toBe(200);
      return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { level: string; message: string }) : [];
    } finally {
      await logged.close();
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it('is not written at the default level, info', async () => {
    expect((await pingThrough('info')).filter((l) => l.message.startsWith('POST '))).toEqual([]);
  });

  it('is written at debug, one line naming the method, path and status', async () => {
    expect((await pingThrough('debug')).filter((l) => l.message.startsWith('POST '))).toEqual([expect.objectContaining({ level: 'debug', message: 'POST /mcpv2 200' })]);
  });
});
