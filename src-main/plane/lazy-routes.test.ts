/**
 * A front for routes loaded on their first request (plane/lazy-routes.ts), on a real fastify app
 * listening on 127.0.0.1: nothing is loaded before a request; the loaded app answers with its own
 * body parsing and hooks, the front's app's root hooks still first; a load that fails is a 500 and
 * tried again on the next request; close closes what was loaded, and nothing when nothing was.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../base/logger';
import { loadOnce, mountLazily, type LoadedRoutes } from './lazy-routes';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

/** The loaded side: echoes the parsed JSON body, and refuses a request without `x-token` in its own hook. */
function echoApp(closed: string[]): LoadedRoutes {
  const app = Fastify({ logger: false, bodyLimit: 64 });
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers['x-token'] !== 'yes') return reply.code(401).send({ refused: 'token' });
  });
  app.post('/lazy', async (request) => ({ echoed: request.body }));
  app.get('/lazy/meta', async () => ({ meta: true }));
  return { app, close: async () => void closed.push('route') };
}

async function front(load: () => Promise<LoadedRoutes>) {
  const app = Fastify({ logger: false });
  apps.push(app);
  // The front app's own root hook, as a peer's Host check: it must still run first.
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers['x-blocked'] === 'yes') return reply.code(403).send({ refused: 'root' });
  });
  app.get('/other', async () => ({ other: true }));
  const lazy = await mountLazily(app, {
    urls: ['/lazy', '/lazy/meta'],
    name: 'the test server',
    logger: silentLogger,
    failed: (res) => res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'could not be loaded' })),
    load,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { lazy, url };
}

const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-token': 'yes', ...headers }, body });

describe('routes loaded on their first request', () => {
  it('loads nothing until a request reaches the front, then once for every request after', async () => {
    let loads = 0;
    const closed: string[] = [];
    const { lazy, url } = await front(async () => {
      loads++;
      return echoApp(closed);
    });
    expect(await (await fetch(`${url}/other`)).json()).toEqual({ other: true });
    expect(loads).toBe(0);
    const answers = await Promise.all([post(`${url}/lazy`, '{"a":1}'), post(`${url}/lazy`, '{"b":2}'), fetch(`${url}/lazy/meta`, { headers: { 'x-token': 'yes' } })]);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(await answers[0]!.json()).toEqual({ echoed: { a: 1 } });
    expect(await answers[1]!.json()).toEqual({ echoed: { b: 2 } });
    expect(await answers[2]!.json()).toEqual({ meta: true });
    expect(loads).toBe(1);
    await lazy.close();
    expect(closed).toEqual(['route']);
  });

  it("keeps the front app's root hooks first and the loaded app's own hooks and body limit", async () => {
    let loads = 0;
    const { url } = await front(async () => {
      loads++;
      return echoApp([]);
    });
    const blocked = await post(`${url}/lazy`, '{}', { 'x-blocked': 'yes' });
    expect(blocked.status).toBe(403);
    expect(await blocked.json()).toEqual({ refused: 'root' });
    expect(loads).toBe(0);
    const unauthorised = await post(`${url}/lazy`, '{}', { 'x-token': 'no' });
    expect(unauthorised.status).toBe(401);
    expect(await unauthorised.json()).toEqual({ refused: 'token' });
    // The loaded app's 64-byte body limit, not the front's default: the front never read the body.
    const large = await post(`${url}/lazy`, JSON.stringify({ text: 'x'.repeat(100) }));
    expect(large.status).toBe(413);
    const bad = await post(`${url}/lazy`, '{"a":');
    expect(bad.status).toBe(400);
  });

  it('answers 500 when loading fails, and loads again on the next request', async () => {
    let loads = 0;
    const closed: string[] = [];
    const { lazy, url } = await front(async () => {
      loads++;
      if (loads === 1) throw new Error('module not found');
      return echoApp(closed);
    });
    const failed = await post(`${url}/lazy`, '{"a":1}');
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({ error: 'could not be loaded' });
    const next = await post(`${url}/lazy`, '{"a":2}');
    expect(next.status).toBe(200);
    expect(await next.json()).toEqual({ echoed: { a: 2 } });
    expect(loads).toBe(2);
    await lazy.close();
    expect(closed).toEqual(['route']);
  });

  it('closes nothing when nothing was loaded', async () => {
    let loads = 0;
    const { lazy } = await front(async () => {
      loads++;
      return echoApp([]);
    });
    await lazy.close();
    expect(loads).toBe(0);
  });
});

describe('loadOnce', () => {
  it('shares one load between callers, and forgets a failed one', async () => {
    let calls = 0;
    const value = loadOnce(async () => {
      calls++;
      if (calls === 1) throw new Error('first fails');
      return calls;
    });
    expect(value.peek()).toBeUndefined();
    await expect(value.get()).rejects.toThrow('first fails');
    expect(value.peek()).toBeUndefined();
    const [a, b] = await Promise.all([value.get(), value.get()]);
    expect([a, b]).toEqual([2, 2]);
    expect(calls).toBe(2);
  });
});
