/**
 * The provider settings store: keys kept in a 0600 file written atomically (or sealed by the
 * desktop app's keychain), a file others could read or that is not JSON refused naming the file
 * and never overwritten, the environment winning field by field, and no key in any view.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ProviderSettingsError, ProviderSettingsStore, providerViews, resolveProviderSettings, type KeySealer } from './provider-settings';
import { loadProviders, reloadProviders } from './plane-config';

const KEY = 'sk-ant-api03-settings-test-key-7f3a9c2b';
const OTHER_KEY = 'sk-ant-api03-another-key-0000-aaaa1111';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ap-provider-settings-'));
  dirs.push(dir);
  return dir;
}

/** A sealer standing in for safeStorage: reversible, and visibly not the plain key. */
const reversing: KeySealer = {
  seal: async (plain) => Buffer.from([...plain].reverse().join(''), 'utf8').toString('base64'),
  open: async (sealed) => [...Buffer.from(sealed, 'base64').toString('utf8')].reverse().join(''),
};

describe('the provider settings file', () => {
  it('is written 0600 and atomically, and reads back what was set', async () => {
    const dir = dataDir();
    const store = new ProviderSettingsStore(dir);
    const read = await store.set('anthropic', { apiKey: KEY, model: 'claude-sonnet-4-5' });
    expect(read.settings.anthropic).toEqual({ apiKey: KEY, model: 'claude-sonnet-4-5' });
    expect(statSync(store.file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(store.file, 'utf8'))).toEqual({ version: 1, providers: { anthropic: { apiKey: KEY, model: 'claude-sonnet-4-5' } } });
    // A second change keeps what it does not name; null clears.
    await store.set('anthropic', { baseUrl: 'http://127.0.0.1:9/' });
    await store.set('anthropic', { model: null });
    expect((await new ProviderSettingsStore(dir).read()).settings.anthropic).toEqual({ apiKey: KEY, baseUrl: 'http://127.0.0.1:9/' });
    // No temporary file is left behind.
    expect(() => statSync(`${store.file}.${process.pid}.tmp`)).toThrow();
  });

  it('refuses a file others can read, naming it, and overwrites nothing', async () => {
    const dir = dataDir();
    const store = new ProviderSettingsStore(dir);
    await store.set('gemini', { apiKey: KEY });
    chmodSync(store.file, 0o644);
    const before = readFileSync(store.file, 'utf8');
    await expect(store.read()).rejects.toThrow(ProviderSettingsError);
    await expect(store.read()).rejects.toThrow(`${store.file} can be read or written by others (mode 0644)`);
    await expect(store.set('gemini', { apiKey: OTHER_KEY })).rejects.toThrow(/mode 0644/);
    expect(readFileSync(store.file, 'utf8')).toBe(before);
  });

  it('refuses malformed JSON without quoting it (JSON.parse would quote the key), and never overwrites it', async () => {
    const dir = dataDir();
    const store = new ProviderSettingsStore(dir);
    const broken = `{"version": 1, "providers": {"anthropic": {"apiKey": ${KEY}}}}`;
    writeFileSync(store.file, broken, { mode: 0o600 });
    const error = await store.read().then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toContain(`${store.file} is not valid JSON`);
    expect(error?.message).not.toContain(KEY.slice(0, 12));
    await expect(store.remove('anthropic')).rejects.toThrow(/not valid JSON/);
    expect(readFileSync(store.file, 'utf8')).toBe(broken);
  });

  it('refuses a file of the wrong shape, naming the field but not the value', async () => {
    const dir = dataDir();
    const store = new ProviderSettingsStore(dir);
    writeFileSync(store.file, JSON.stringify({ version: 1, providers: { anthropic: { apiKey: `${KEY}\n` } } }), { mode: 0o600 });
    const error = await store.read().then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error?.message).toMatch(/providers\.anthropic\.apiKey: the key must be printable ASCII/);
    expect(error?.message).not.toContain(KEY.slice(0, 12));
  });

  it('never reads keys through a symbolic link', async () => {
    const dir = dataDir();
    const elsewhere = join(dataDir(), 'keys.json');
    writeFileSync(elsewhere, JSON.stringify({ version: 1, providers: {} }), { mode: 0o600 });
    symlinkSync(elsewhere, join(dir, 'providers.json'));
    await expect(new ProviderSettingsStore(dir).read()).rejects.toThrow(/symbolic link/);
  });

  it('keeps only ciphertext when a sealer is given, and says so when the key cannot be opened here', async () => {
    const dir = dataDir();
    const sealedStore = new ProviderSettingsStore(dir, reversing);
    expect(sealedStore.sealed).toBe(true);
    const read = await sealedStore.set('openai', { apiKey: KEY });
    expect(read.settings.openai?.apiKey).toBe(KEY);
    const text = readFileSync(sealedStore.file, 'utf8');
    expect(text).not.toContain(KEY);
    expect(JSON.parse(text).providers.openai).toEqual({ sealedApiKey: await reversing.seal(KEY) });
    // Headless (no keychain): the key is left out, the reason named, the rest still in force.
    await sealedStore.set('openai', { model: 'gpt-5' });
    const headless = await new ProviderSettingsStore(dir).read();
    expect(headless.settings.openai).toEqual({ model: 'gpt-5' });
    expect(headless.problems.join()).toMatch(/the openai key was sealed by the desktop app's keychain and cannot be opened here/);
    // A keychain that cannot open it (another machine): the same, without the sealer's words.
    const failing: KeySealer = { seal: reversing.seal, open: () => Promise.reject(new Error('decrypt failed: bad ciphertext')) };
    const other = await new ProviderSettingsStore(dir, failing).read();
    expect(other.problems.join()).toMatch(/could not be opened with this machine's keychain/);
    expect(other.problems.join()).not.toContain('bad ciphertext');
  });

  it('removes one provider and says whether there was anything', async () => {
    const store = new ProviderSettingsStore(dataDir());
    await store.set('anthropic', { apiKey: KEY });
    await store.set('gemini', { apiKey: OTHER_KEY });
    expect((await store.remove('anthropic')).removed).toBe(true);
    const again = await store.remove('anthropic');
    expect(again.removed).toBe(false);
    expect(again.settings).toEqual({ gemini: { apiKey: OTHER_KEY } });
  });
});

describe('settings under the environment', () => {
  it('lets a variable win over a stored value, field by field, and says where each came from', () => {
    const env = { AGENTPLANE_ANTHROPIC_MODEL: 'claude-from-env' };
    const resolved = resolveProviderSettings(env, { anthropic: { apiKey: KEY, model: 'claude-from-settings' } });
    expect(resolved.anthropic).toEqual({ apiKey: KEY, model: 'claude-from-env', sources: { apiKey: 'settings', baseUrl: null, model: 'env' } });
    const views = providerViews({ AGENTPLANE_ANTHROPIC_API_KEY: OTHER_KEY }, { anthropic: { apiKey: KEY } });
    expect(views.find((v) => v.id === 'anthropic')).toMatchObject({ configured: true, keySet: true, keySource: 'env', keyHint: `…${OTHER_KEY.slice(-4)}` });
  });

  it('keeps the shared OpenAI variables together: an OpenAI key goes to no chat server it was not set with', () => {
    const env = { AGENTPLANE_OPENAI_API_KEY: KEY };
    const resolved = resolveProviderSettings(env, { chat: { baseUrl: 'http://127.0.0.1:11434/v1' } });
    expect(resolved.chat.apiKey).toBeUndefined();
    expect(resolved.openai.apiKey).toBe(KEY);
    // Nor a key saved for openai to the chat server (and its model) the environment names.
    const saved = resolveProviderSettings({ AGENTPLANE_OPENAI_BASE_URL: 'http://127.0.0.1:11434/v1', AGENTPLANE_OPENAI_MODEL: 'llama3' }, { openai: { apiKey: KEY } });
    expect(saved.openai).toEqual({ apiKey: KEY, sources: { apiKey: 'settings', baseUrl: null, model: null } });
    expect(saved.chat).toMatchObject({ baseUrl: 'http://127.0.0.1:11434/v1', model: 'llama3', sources: { baseUrl: 'env', model: 'env' } });
    // With the chat server named in the environment too, the variables apply together, as before.
    expect(resolveProviderSettings({ ...env, AGENTPLANE_OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1' }, {}).chat).toMatchObject({ apiKey: KEY, sources: { apiKey: 'env', baseUrl: 'env' } });
  });

  it('never shows a key: at most the last four characters of a long one', () => {
    const views = providerViews({}, { anthropic: { apiKey: KEY }, gemini: { apiKey: 'short-key-1' }, chat: { baseUrl: 'http://127.0.0.1:1/v1' } });
    const text = JSON.stringify(views);
    expect(text).not.toContain(KEY.slice(0, -4));
    expect(text).not.toContain('short-key');
    expect(views.map((v) => [v.id, v.configured, v.keyHint])).toEqual([
      ['anthropic', true, `…${KEY.slice(-4)}`],
      ['openai', false, null],
      ['gemini', true, null],
      ['chat', true, null],
    ]);
  });

  it('builds drivers from stored settings, and a reload changes the Map in place', () => {
    const providers = loadProviders({}, { stored: { anthropic: { apiKey: KEY, baseUrl: 'http://127.0.0.1:9', model: 'claude-x' } } });
    expect(providers.get('anthropic')?.profile).toMatchObject({ endpoint: 'http://127.0.0.1:9', defaultModel: 'claude-x' });
    const local = providers.get('local');
    reloadProviders(providers, {}, { stored: { chat: { baseUrl: 'http://127.0.0.1:11434/v1' } } });
    expect([...providers.keys()].sort()).toEqual(['chat', 'local', 'openai-compatible']);
    expect(providers.get('local')).toBe(local);
    // A profile never carries the key.
    expect(JSON.stringify([...providers.values()].map((p) => p.profile))).not.toContain(KEY);
  });
});
