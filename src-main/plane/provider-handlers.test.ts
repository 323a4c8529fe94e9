/**
 * The `providers.*` commands on a real plane (real SQLite, the contract client) against the
 * wire-faithful fake servers: a key set in Settings is in force at the next admission without a
 * restart, a connection test makes one tiny call and answers the provider's own error without
 * the key, a removal takes the provider away again; bad input is refused by field; a protocol
 * caller reaches none of it; and the key is in no answer, log line or journal byte.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Plane } from './plane';
import type { CallContext } from './dispatch';
import { loadAgents } from './plane-config';
import { createLogger } from '../base/logger';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, failure, testPlane } from '../../tests/support/runtime-support';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../../tests/doubles/fake-anthropic-server';
import { startFakeChatServer, FAKE_MODEL, type FakeChatServer } from '../../tests/doubles/fake-chat-server';
import { openProviderSettings, providerHandlers } from './provider-handlers';
import { silentLogger } from '../base/logger';
import type { ModelProvider } from '../runtime/model-provider';

const KEY = 'sk-ant-api03-handlers-test-key-5e6f7a8b9c';
const UI: CallContext = { transport: 'web' };
const MCP: CallContext = { transport: 'local', caller: { principal: 'mcp:local', via: 'mcp' } };

let anthropic: FakeAnthropicServer;
let chat: FakeChatServer;
beforeAll(async () => {
  [anthropic, chat] = await Promise.all([startFakeAnthropicServer(), startFakeChatServer()]);
});
afterAll(async () => {
  await Promise.all([anthropic?.close(), chat?.close()]);
});

const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

const claude = agent({ name: 'claude-writer', steps: [{ model: { provider: 'anthropic', model: 'claude-sonnet-4-5', prompt: 'hi' } }], grants: [{ kind: 'model', name: 'anthropic' }] });

async function plane(dir = tempDataDir('ap-providers-')): Promise<Plane> {
  const p = await testPlane({ dataDir: dir, env: {}, agents: [...loadAgents(dir), claude], logger: createLogger(join(dir, 'plane.log'), () => undefined) });
  planes.push(p);
  return p;
}

/** Every byte the plane wrote in its data dir (journal, WAL, log, settings aside). */
function dataDirBytes(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name !== 'providers.json')
    .map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString('latin1'))
    .join('\n');
}

describe('providers.set, list, test and remove', () => {
  it('applies a key live, tests the connection, shows the provider’s own 401 without the key, and removes it', async () => {
    const p = await plane();
    const before = await call(p, 'providers.list', {});
    expect(before.providers.find((v) => v.id === 'anthropic')).toMatchObject({ configured: false, keySet: false, keySource: null });
    expect(before).toMatchObject({ file: join(p.dataDir, 'providers.json'), sealed: false, error: null });
    expect((await failure(p, 'runs.start', { agent: 'claude-writer', input: {} })).message).toMatch(/not configured: set AGENTPLANE_ANTHROPIC_API_KEY/);

    const view = await call(p, 'providers.set', { provider: 'anthropic', apiKey: KEY, baseUrl: anthropic.baseUrl, model: 'claude-sonnet-4-5' });
    expect(view).toMatchObject({ configured: true, keySet: true, keySource: 'settings', keyHint: `…${KEY.slice(-4)}`, baseUrl: anthropic.baseUrl, baseUrlSource: 'settings', model: 'claude-sonnet-4-5', modelSource: 'settings' });

    // The next admission sees it, no restart: the run is admitted and answered by the fake.
    const run = await call(p, 'runs.start', { agent: 'claude-writer', input: {}, wait: true });
    expect(run.status).toBe('sealed');
    expect(anthropic.requests.at(-1)?.headers['x-api-key']).toBe(KEY);

    // One tiny call: a one-word prompt and a handful of tokens, nothing journaled.
    const head = (await p.journal.head()).seq;
    const ok = await call(p, 'providers.test', { provider: 'anthropic' });
    expect(ok).toMatchObject({ ok: true, model: 'claude-fake-4-5-20250929' });
    expect(anthropic.requests.at(-1)?.body).toMatchObject({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] });
    expect((await p.journal.head()).seq).toBe(head);

    // The fake's 401 echoes the presented key, as careless servers do: the driver scrubs it.
    const refused = await call(p, 'providers.test', { provider: 'anthropic', model: 'unauthorized' });
    expect(refused.ok).toBe(false);
    if (!refused.ok) {
      expect(refused.error).toMatch(/401/);
      expect(refused.error).toMatch(/invalid x-api-key/);
      // The fake echoed the key (as careless servers do), and the driver put [key] in its place.
      expect(refused.error).toContain('[key]');
      expect(refused.error).not.toContain(KEY.slice(0, 12));
      expect(refused.error).not.toContain(KEY.slice(-8));
    }

    const removed = await call(p, 'providers.remove', { provider: 'anthropic' });
    expect(removed).toMatchObject({ removed: true, provider: { configured: false, keySet: false } });
    expect((await failure(p, 'runs.start', { agent: 'claude-writer', input: {} })).message).toMatch(/not configured/);
    expect(await failure(p, 'providers.test', { provider: 'anthropic' })).toMatchObject({ code: 'AP_CONFLICT' });

    const log = readFileSync(join(p.dataDir, 'plane.log'), 'utf8');
    expect(log).toContain('provider settings changed');
    await p.close();
    expect(dataDirBytes(p.dataDir)).not.toContain(KEY.slice(0, 12));
    expect(JSON.stringify(before)).not.toContain(KEY);
  });

  it('sets a chat server by base URL alone and tests it with the model asked for', async () => {
    const p = await plane();
    await call(p, 'providers.set', { provider: 'chat', baseUrl: chat.baseUrl });
    expect(await failure(p, 'providers.test', { provider: 'chat' })).toMatchObject({ code: 'AP_BAD_REQUEST', message: expect.stringMatching(/no default model/) });
    expect(await call(p, 'providers.test', { provider: 'chat', model: FAKE_MODEL })).toMatchObject({ ok: true, model: FAKE_MODEL });
    const cleared = await call(p, 'providers.set', { provider: 'chat', baseUrl: null });
    expect(cleared).toMatchObject({ configured: false, baseUrl: null });
  });

  it('refuses bad input by field, never repeating a key', async () => {
    const p = await plane();
    const cases: Array<[unknown, RegExp]> = [
      [{ provider: 'mistral', apiKey: KEY }, /provider/],
      [{ provider: 'anthropic', apiKey: `${KEY}\n` }, /apiKey: the key must be printable ASCII without spaces or line breaks/],
      [{ provider: 'anthropic', apiKey: `${KEY} ${KEY}` }, /apiKey: the key must be printable ASCII/],
      [{ provider: 'anthropic', apiKey: '' }, /apiKey: the key is empty/],
      [{ provider: 'anthropic', apiKey: 'k'.repeat(600) }, /apiKey: the key is longer than 512 characters/],
      [{ provider: 'anthropic', baseUrl: 'ftp://example.com' }, /baseUrl: an http:\/\/ or https:\/\/ URL/],
      [{ provider: 'anthropic', baseUrl: 'https://user:secret@example.com' }, /baseUrl: an http:\/\/ or https:\/\/ URL without credentials/],
      [{ provider: 'anthropic', model: 'two words' }, /model: a model name without spaces/],
      [{ provider: 'anthropic' }, /nothing to set/],
    ];
    for (const [request, message] of cases) {
      const result = await p.dispatch('providers.set', request, UI);
      expect(result.ok, JSON.stringify(request).slice(0, 80)).toBe(false);
      if (!result.ok) {
        expect(result.error.code).toBe('AP_BAD_REQUEST');
        expect(result.error.message).toMatch(message);
        expect(result.error.message).not.toContain(KEY.slice(0, 12));
      }
    }
    expect(existsSync(join(p.dataDir, 'providers.json'))).toBe(false);
  });

  it('is a person’s: a protocol caller may neither read, change, test nor remove provider settings', async () => {
    const p = await plane();
    for (const [name, request] of [
      ['providers.list', {}],
      ['providers.set', { provider: 'anthropic', apiKey: KEY }],
      ['providers.test', { provider: 'anthropic' }],
      ['providers.remove', { provider: 'anthropic' }],
    ] as const) {
      expect(await p.dispatch(name, request, MCP)).toMatchObject({ ok: false, error: { code: 'AP_FORBIDDEN' } });
    }
    expect(existsSync(join(p.dataDir, 'providers.json'))).toBe(false);
  });

  it('starts on the environment alone when the stored file is malformed, says why, and never overwrites it', async () => {
    const dir = tempDataDir('ap-providers-');
    const broken = `{"version": 1, "providers": {"anthropic": {"apiKey": ${KEY}`;
    writeFileSync(join(dir, 'providers.json'), broken, { mode: 0o600 });
    const p = await plane(dir);
    const list = await call(p, 'providers.list', {});
    expect(list.error).toMatch(/providers\.json is not valid JSON/);
    expect(list.error).not.toContain(KEY.slice(0, 12));
    expect((await failure(p, 'providers.set', { provider: 'gemini', apiKey: KEY })).message).toMatch(/not valid JSON/);
    expect(readFileSync(join(dir, 'providers.json'), 'utf8')).toBe(broken);
    expect(readFileSync(join(dir, 'plane.log'), 'utf8')).not.toContain(KEY.slice(0, 12));
  });

  it('gives up a connection test at its deadline', async () => {
    const dir = tempDataDir('ap-providers-');
    const state = await openProviderSettings(dir, null, silentLogger);
    const providers = new Map<string, ModelProvider>();
    const handlers = providerHandlers({ state, providers, env: {}, dataDir: dir, logger: silentLogger, testTimeoutMs: 300 });
    await handlers['providers.set']({ provider: 'anthropic', apiKey: KEY, baseUrl: anthropic.baseUrl }, UI);
    const result = await handlers['providers.test']({ provider: 'anthropic', model: 'hang' }, UI);
    expect(result).toMatchObject({ ok: false, error: 'anthropic: no answer within 0.3 s' });
    expect(result.latencyMs).toBeGreaterThanOrEqual(250);
  });
});
