/**
 * The web bridge's refusals, each as a test, and after each the plane still answers. Routes
 * are exercised through app.inject (fastify's in-process request) and the WebSocket upgrade
 * and the loopback binding through one real socket each.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlane, type Plane } from '../plane/plane';
import { BRIDGE_BODY_LIMIT, startWebBridge, type WebBridge } from './web-bridge';

let plane: Plane;
let bridge: WebBridge;
let host: string;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ap-bridge-'));
  const ui = join(dir, 'ui');
  mkdirSync(join(ui, 'assets'), { recursive: true });
  writeFileSync(join(ui, 'index.html'), '<!doctype html><title>ui</title>');
  writeFileSync(join(ui, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(join(dir, 'secret.txt'), 'outside the UI folder');
  plane = await createPlane({ dataDir: dir, version: '9.9.9', host: 'headless' });
  bridge = await startWebBridge({ plane, port: 0, rendererDir: ui });
  host = `127.0.0.1:${bridge.port}`;
});

afterAll(async () => {
  await bridge.close();
  await plane.close();
});

const auth = () => ({ authorization: `Bearer ${bridge.token}` });

async function command(name: string, body: unknown, headers: Record<string, string> = {}) {
  return bridge.app.inject({
    method: 'POST',
    url: `/api/commands/${name}`,
    headers: { host, 'content-type': 'application/json', ...auth(), ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function stillAnswers() {
  const res = await command('plane.status', {});
  expect(res.statusCode).toBe(200);
  expect(res.json()).toMatchObject({ ok: true, value: { version: '9.9.9', state: 'running' } });
}

describe('web bridge', () => {
  it('answers a command with the token', async () => {
    await stillAnswers();
    const peers = await command('peers.list', {});
    expect(peers.json()).toEqual({ ok: true, value: { peers: [] } });
  });

  it('binds loopback only and prints a URL carrying the token', () => {
    const address = bridge.app.server.address();
    expect(typeof address === 'object' && address?.address).toBe('127.0.0.1');
    expect(bridge.url).toBe(`http://127.0.0.1:${bridge.port}/?token=${bridge.token}`);
    expect(bridge.token.length).toBeGreaterThanOrEqual(40);
  });

  it('401 without a token, with a wrong one, and with one differing in length', async () => {
    for (const headers of [{ authorization: '' }, { authorization: `Bearer ${bridge.token.slice(0, -1)}x` }, { authorization: 'Bearer x' }]) {
      const res = await command('plane.status', {}, headers);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ ok: false, error: { code: 'AP_UNAUTHORIZED', message: 'missing or wrong bridge token' } });
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
    await stillAnswers();
  });

  it('401 for the token in the query string of a command: only the WebSocket upgrade may carry it there', async () => {
    for (const [method, url] of [
      ['POST', `/api/commands/plane.status?token=${bridge.token}`],
      ['POST', `/api/commands/halts.apply?token=${encodeURIComponent(bridge.token)}`],
      ['GET', `/api/events?token=${bridge.token}`],
      ['GET', `/api/anything?token=${bridge.token}`],
    ] as const) {
      const res = await bridge.app.inject({ method, url, headers: { host, 'content-type': 'application/json' }, payload: method === 'POST' ? '{"scope":"all"}' : undefined });
      expect(res.statusCode, url).toBe(401);
      expect(res.json().error.code).toBe('AP_UNAUTHORIZED');
    }
    const halts = await command('halts.list', {});
    expect(halts.json()).toEqual({ ok: true, value: { scopes: [] } });
  });

  it('matches the Authorization scheme case-insensitively, as the peers do', async () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr']) {
      const res = await command('plane.status', {}, { authorization: `${scheme} ${bridge.token}` });
      expect(res.statusCode, scheme).toBe(200);
    }
    for (const authorization of [`Basic ${bridge.token}`, `Bearer${bridge.token}`, bridge.token]) {
      const res = await command('plane.status', {}, { authorization });
      expect(res.statusCode, authorization).toBe(401);
    }
  });

  it('every /api route needs the token, including unknown ones and journal.changes', async () => {
    const res = await bridge.app.inject({ method: 'GET', url: '/api/anything', headers: { host } });
    expect(res.statusCode).toBe(401);
    const known = await bridge.app.inject({ method: 'GET', url: '/api/anything', headers: { host, ...auth() } });
    expect(known.statusCode).toBe(404);
    expect(known.json().error.code).toBe('AP_NOT_FOUND');
    const changes = await bridge.app.inject({ method: 'POST', url: '/api/commands/journal.changes', headers: { host }, payload: {} });
    expect(changes.statusCode).toBe(401);
  });

  it('403 for a Host that is not the loopback address and port (DNS rebinding)', async () => {
    for (const badHost of ['evil.example:80', `evil.example:${bridge.port}`, '127.0.0.1:1', '']) {
      const res = await command('plane.status', {}, { host: badHost });
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('AP_FORBIDDEN');
    }
    const page = await bridge.app.inject({ method: 'GET', url: '/', headers: { host: 'evil.example' } });
    expect(page.statusCode).toBe(403);
    await stillAnswers();
  });

  it('accepts localhost:<port> as Host', async () => {
    const res = await command('plane.status', {}, { host: `localhost:${bridge.port}` });
    expect(res.statusCode).toBe(200);
  });

  it('403 for a foreign Origin; the UI\'s own Origin passes', async () => {
    const bad = await command('plane.status', {}, { origin: 'https://evil.example' });
    expect(bad.statusCode).toBe(403);
    const nullOrigin = await command('plane.status', {}, { origin: 'null' });
    expect(nullOrigin.statusCode).toBe(403);
    const own = await command('plane.status', {}, { origin: `http://127.0.0.1:${bridge.port}` });
    expect(own.statusCode).toBe(200);
  });

  it('413 for a body over the cap', async () => {
    const res = await command('plane.status', { pad: 'x'.repeat(BRIDGE_BODY_LIMIT + 10) });
    expect(res.statusCode).toBe(413);
    expect(res.json().error.code).toBe('AP_PAYLOAD_TOO_LARGE');
    await stillAnswers();
  });

  it('clear errors for unknown commands and malformed requests', async () => {
    const unknown = await command('plane.explode', {});
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toEqual({ code: 'AP_UNKNOWN_COMMAND', message: 'unknown command "plane.explode"' });

    const notJson = await command('plane.status', '{"broken": ');
    expect(notJson.statusCode).toBe(400);
    expect(notJson.json().error.code).toBe('AP_BAD_REQUEST');

    const extraField = await command('plane.status', { surprise: true });
    expect(extraField.statusCode).toBe(400);
    expect(extraField.json().error.message).toContain('surprise');

    const wrongType = await command('journal.changes', { afterSeq: -1 });
    expect(wrongType.statusCode).toBe(400);
    expect(wrongType.json().error.message).toMatch(/^journal\.changes: afterSeq: /);

    const textBody = await command('plane.status', 'hello', { 'content-type': 'text/plain' });
    expect(textBody.statusCode).toBe(400);
    expect(textBody.json().error.message).toContain('application/json');
    await stillAnswers();
  });

  it('serves static UI without the token, with a CSP, and never outside its folder', async () => {
    const index = await bridge.app.inject({ method: 'GET', url: '/', headers: { host } });
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-security-policy']).toContain("script-src 'self'");
    expect(index.headers['content-security-policy']).not.toContain('unsafe');
    expect(index.headers['referrer-policy']).toBe('no-referrer');
    const asset = await bridge.app.inject({ method: 'GET', url: '/assets/app.js', headers: { host } });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toContain('javascript');
    for (const url of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/%00']) {
      const res = await bridge.app.inject({ method: 'GET', url, headers: { host } });
      expect(res.body).not.toContain('outside the UI folder');
    }
    const spa = await bridge.app.inject({ method: 'GET', url: '/runs', headers: { host } });
    expect(spa.body).toContain('<title>ui</title>');
  });

  it('refuses the WebSocket upgrade without the token (real socket)', async () => {
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${bridge.port}/api/events`);
      ws.on('unexpected-response', (req, res) => {
        req.destroy();
        resolve(res.statusCode ?? 0);
      });
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(status).toBe(401);
    const wrong = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${bridge.port}/api/events?token=nope`);
      ws.on('unexpected-response', (req, res) => {
        req.destroy();
        resolve(res.statusCode ?? 0);
      });
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(wrong).toBe(401);
    const foreign = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${bridge.port}/api/events?token=${bridge.token}`, { origin: 'https://evil.example' });
      ws.on('unexpected-response', (req, res) => {
        req.destroy();
        resolve(res.statusCode ?? 0);
      });
      ws.on('open', () => resolve(101));
      ws.on('error', () => undefined);
    });
    expect(foreign).toBe(403);
  });

  it('delivers events over the WebSocket with the token, in order, as {name, payload}', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${bridge.port}/api/events?token=${bridge.token}`);
    await new Promise((resolve, reject) => {
      ws.on('open', resolve);
      ws.on('error', reject);
    });
    const received: unknown[] = [];
    const got = new Promise<void>((resolve) =>
      ws.on('message', (data: WebSocket.RawData) => {
        received.push(JSON.parse(String(data)));
        if (received.length === 3) resolve();
      }),
    );
    for (let i = 1; i <= 3; i++) plane.events.publish('journal.appended', { fromSeq: i, seq: i, runs: [] });
    await got;
    ws.close();
    expect(received).toEqual([1, 2, 3].map((seq) => ({ name: 'journal.appended', payload: { fromSeq: seq, seq, runs: [] } })));
  });
});
