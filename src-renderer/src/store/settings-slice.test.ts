/**
 * The Settings slice against a real plane and the fake Anthropic server: a key goes to the plane
 * once and never into the store (views carry at most its last four characters); a connection
 * test's answer (ok, or the provider's own 401 without the key) is kept per provider; the
 * plane's refusals come back in its words; a save forgets the test made against the old settings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testPlane } from '../../../tests/support/runtime-support';
import { startFakeAnthropicServer, FAKE_ANTHROPIC_MODEL, type FakeAnthropicServer } from '../../../tests/doubles/fake-anthropic-server';
import { useSyncedHarnesses } from './testing/store-harness';

const KEY = 'sk-ant-api03-slice-test-key-0a1b2c3d4e';
const harness = useSyncedHarnesses(() => testPlane({ agents: [], env: {} }));

let fake: FakeAnthropicServer;
beforeAll(async () => {
  fake = await startFakeAnthropicServer();
});
afterAll(async () => {
  await fake?.close();
});

describe('the Settings slice', () => {
  it('saves a key without keeping it, tests the connection, and keeps the provider’s own 401 without the key', async () => {
    const h = await harness();
    await h.store.getState().refreshProviders();
    expect(h.store.getState().providersList?.providers.map((p) => [p.id, p.configured])).toEqual([
      ['anthropic', false],
      ['openai', false],
      ['gemini', false],
      ['chat', false],
    ]);

    expect(await h.store.getState().saveProvider({ provider: 'anthropic', apiKey: KEY, baseUrl: fake.baseUrl, model: 'claude-sonnet-4-5' })).toBe(true);
    const view = h.store.getState().providersList?.providers.find((p) => p.id === 'anthropic');
    expect(view).toMatchObject({ configured: true, keyHint: `…${KEY.slice(-4)}`, keySource: 'settings' });

    await h.store.getState().testProvider('anthropic');
    expect(h.store.getState().providerTests.anthropic).toMatchObject({ ok: true, model: FAKE_ANTHROPIC_MODEL });
    await h.store.getState().testProvider('anthropic', 'unauthorized');
    const failed = h.store.getState().providerTests.anthropic;
    expect(failed?.ok).toBe(false);
    expect(failed && !failed.ok ? failed.error : '').toMatch(/invalid x-api-key/);
    expect(h.store.getState().announcement.text).toMatch(/^anthropic: the connection test failed: /);

    // A save makes the last test's answer stale: it is forgotten.
    expect(await h.store.getState().saveProvider({ provider: 'anthropic', model: 'claude-opus-4-1' })).toBe(true);
    expect(h.store.getState().providerTests.anthropic).toBeUndefined();
    await h.settle();
    expect(JSON.stringify(h.store.getState())).not.toContain(KEY.slice(0, 12));
  });

  it('shows the plane’s refusals in its words, beside the provider', async () => {
    const h = await harness();
    expect(await h.store.getState().saveProvider({ provider: 'gemini', baseUrl: 'ftp://example.com' })).toBe(false);
    expect(h.store.getState().providerErrors.gemini).toMatch(/baseUrl: an http:\/\/ or https:\/\/ URL/);
    await h.store.getState().testProvider('openai');
    expect(h.store.getState().providerTests.openai).toMatchObject({ ok: false, error: expect.stringMatching(/openai is not configured/) });
    expect(await h.store.getState().removeProvider('gemini')).toBe(true);
    expect(h.store.getState().announcement.text).toBe('Nothing was stored for gemini.');
  });
});
