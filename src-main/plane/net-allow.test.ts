import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { call, failure, testPlane } from '../../tests/support/runtime-support';
import { startFakeChatServer, FAKE_ANSWER, type FakeChatServer } from '../../tests/doubles/fake-chat-server';
import { createNetguard, type Netguard } from '../net/netguard';
import { loadProviders } from './plane-config';
import { derivedAllowEntries, NetAllowStore, planeAllowList, type DerivedAllowSources } from './net-allow';
import type { CallContext } from './dispatch';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../base/logger';
import { createMcpClientPool } from '../protocols/mcp/client/mcp-client-pool';

const MCP: CallContext = { transport: 'local', caller: { principal: 'mcp:local', via: 'mcp' } };

function sources(dataDir: string, env: NodeJS.ProcessEnv = {}): DerivedAllowSources {
  return { dataDir, env, storedProviders: () => ({}) };
}

describe('NetAllowStore', () => {
  it('adds normalised origins to a 0600 file, removes them, and reads them back', () => {
    const dir = tempDataDir('ap-net-allow-');
    const store = new NetAllowStore(dir);
    expect(store.add('HTTP://LocalHost:8080/')).toBe('http://localhost:8080');
    expect(store.add('https://example.com:443')).toBe('https://example.com');
    expect(store.add('http://localhost:8080')).toBe('http://localhost:8080');
    expect(JSON.parse(readFileSync(store.file, 'utf8'))).toEqual({ origins: ['http://localhost:8080', 'https://example.com'] });
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    expect(new NetAllowStore(dir).has('http://localhost:8080')).toBe(true);
    expect(store.remove('http://localhost:8080')).toBe(true);
    expect(store.remove('http://localhost:8080')).toBe(false);
    expect(store.has('http://localhost:8080')).toBe(false);
  });

  it('refuses what is not an origin, naming what is wrong', () => {
    const store = new NetAllowStore(tempDataDir('ap-net-allow-'));
    expect(() => store.add('http://example.com/v1')).toThrow(/has a path, query or fragment/);
    expect(() => store.add('file:///etc/passwd')).toThrow(/file: is not http: or https:/);
    expect(() => store.add('example.com')).toThrow(/"example\.com" is not a URL/);
    expect(() => store.add('http://user:pw@example.com')).toThrow(/no user name or password/);
  });

  it('a malformed or linked file allows nothing and says why; add refuses to overwrite it', () => {
    const dir = tempDataDir('ap-net-allow-');
    writeFileSync(join(dir, 'net-allow.json'), '{"origins": ["http://127.0.0.1:1"], "extra": 1}');
    const store = new NetAllowStore(dir);
    expect(store.problem).toMatch(/net-allow\.json: .*extra/);
    expect(store.has('http://127.0.0.1:1')).toBe(false);
    expect(() => store.add('http://127.0.0.1:2')).toThrow(/nothing was changed/);
    const linked = tempDataDir('ap-net-allow-');
    mkdirSync(join(linked, 'elsewhere'));
    writeFileSync(join(linked, 'elsewhere', 'x.json'), '{"origins":["http://127.0.0.1:3"]}');
    symlinkSync(join(linked, 'elsewhere', 'x.json'), join(linked, 'net-allow.json'));
    expect(new NetAllowStore(linked).problem).toMatch(/cannot be read/);
  });
});

describe('derived allow entries', () => {
  it('are the configured provider base URLs and MCP server URLs, by origin, never copied into the file', () => {
    const dir = tempDataDir('ap-net-allow-');
    writeFileSync(
      join(dir, 'mcp-servers.json'),
      JSON.stringify({ servers: { tools: { transport: 'http', url: 'http://127.0.0.1:9100/mcp' }, local: { transport: 'stdio', command: 'x' } } }),
    );
    const env = { AGENTPLANE_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' };
    const entries = derivedAllowEntries({ dataDir: dir, env, storedProviders: () => ({ gemini: { apiKey: 'k', baseUrl: 'https://gemini.internal:8443/x' } }) });
    expect(entries).toEqual(
      expect.arrayContaining([
        { origin: 'http://127.0.0.1:11434', source: 'provider', from: 'chat' },
        { origin: 'https://gemini.internal:8443', source: 'provider', from: 'gemini' },
        { origin: 'http://127.0.0.1:9100', source: 'mcp-server', from: 'tools' },
      ]),
    );
    const allow = planeAllowList(new NetAllowStore(dir), { dataDir: dir, env, storedProviders: () => ({}) });
    expect(allow.allows('http://127.0.0.1:11434')).toBe(true);
    expect(allow.allows('http://127.0.0.1:9100')).toBe(true);
    expect(allow.allows('http://127.0.0.1:9101')).toBe(false);
    expect(allow.allows('https://127.0.0.1:11434')).toBe(false);
  });

  it('the default keyless setup derives nothing', () => {
    expect(derivedAllowEntries(sources(tempDataDir('ap-net-allow-')))).toEqual([]);
  });
});

describe('providers through netguard', () => {
  let fake: FakeChatServer;
  const guards: Netguard[] = [];
  beforeAll(async () => {
    fake = await startFakeChatServer();
  });
  afterAll(async () => {
    await Promise.all(guards.map((g) => g.close()));
    await fake.close();
  });

  it('a provider base URL configured on loopback is allowed for exactly that origin', async () => {
    const dir = tempDataDir('ap-net-allow-');
    const env = { AGENTPLANE_OPENAI_BASE_URL: fake.baseUrl };
    const guard = createNetguard({ allow: planeAllowList(new NetAllowStore(dir), sources(dir, env)) });
    guards.push(guard);
    const chat = loadProviders(env, { dispatcher: guard.dispatcher }).get('chat')!;
    const done = await chat.complete({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }], maxTokens: 16 });
    expect(done.text).toBe(FAKE_ANSWER);
  });

  it('the same loopback server is refused when the allow list does not derive it', async () => {
    const dir = tempDataDir('ap-net-allow-');
    const guard = createNetguard({ allow: planeAllowList(new NetAllowStore(dir), sources(dir, {})) });
    guards.push(guard);
    const chat = loadProviders({ AGENTPLANE_OPENAI_BASE_URL: fake.baseUrl }, { dispatcher: guard.dispatcher }).get('chat')!;
    const before = fake.requests.length;
    await expect(chat.complete({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }], maxTokens: 16 })).rejects.toThrow(/127\.0\.0\.1 is loopback/);
    expect(fake.requests.length).toBe(before);
  });
});

describe('MCP over HTTP through netguard', () => {
  it('reaches a declared server only through the guard: refused on loopback unless its origin is allowed', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits += 1;
      res.writeHead(500).end('not an MCP server');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const dir = tempDataDir('ap-net-allow-');
    const closed = createNetguard({ allow: { allows: () => false } });
    const open = createNetguard({ allow: { allows: (o) => o === origin } });
    const refusedPool = createMcpClientPool(dir, silentLogger, { dispatcher: closed.dispatcher, deadlineMs: 3000 });
    const allowedPool = createMcpClientPool(dir, silentLogger, { dispatcher: open.dispatcher, deadlineMs: 3000 });
    try {
      refusedPool.add('far', { transport: 'http', url: `${origin}/mcp`, headers: {} });
      const refused = await refusedPool.connect('far');
      expect(refused.error).toMatch(/127\.0\.0\.1 is loopback/);
      expect(hits).toBe(0);
      await allowedPool.connect('far');
      expect(hits).toBeGreaterThan(0);
    } finally {
      await refusedPool.close();
      await allowedPool.close();
      await Promise.all([closed.close(), open.close()]);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('net.allow commands', () => {
  it('list, add and remove for a person; a protocol caller is refused', async () => {
    const plane = await testPlane({ env: { AGENTPLANE_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1' } });
    try {
      expect(await call(plane, 'net.allow.add', { origin: 'http://127.0.0.1:7000/' })).toEqual({ origin: 'http://127.0.0.1:7000', source: 'allow-list' });
      const list = await call(plane, 'net.allow.list', {});
      expect(list.entries).toEqual([
        { origin: 'http://127.0.0.1:7000', source: 'allow-list' },
        { origin: 'http://127.0.0.1:11434', source: 'provider', from: 'chat' },
      ]);
      expect(list.file).toMatch(/net-allow\.json$/);
      expect(await failure(plane, 'net.allow.add', { origin: 'http://127.0.0.1:7000/path' })).toMatchObject({ code: 'AP_BAD_REQUEST', message: expect.stringMatching(/has a path/) });
      const refused = await plane.dispatch('net.allow.add', { origin: 'http://169.254.169.254' }, MCP);
      expect(refused).toMatchObject({ ok: false, error: { code: 'AP_FORBIDDEN', message: expect.stringMatching(/only a person/) } });
      expect(await plane.dispatch('net.allow.list', {}, MCP)).toMatchObject({ ok: false, error: { code: 'AP_FORBIDDEN' } });
      expect(await call(plane, 'net.allow.remove', { origin: 'http://127.0.0.1:7000' })).toEqual({ removed: true });
      expect((await call(plane, 'net.allow.list', {})).entries.map((e) => e.source)).toEqual(['provider']);
    } finally {
      await plane.close();
    }
  });
});
