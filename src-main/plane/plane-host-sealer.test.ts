/**
 * Provider keys sealed across the plane host's channel: in the desktop app only the Electron
 * main has safeStorage, so the plane (in its utility process) asks for each seal and open over
 * the channel it already has. Here the two ends are linked in memory (messages cross as JSON, as
 * over a real channel) and the parent's sealer is a stand-in; safeStorage itself needs the
 * Electron binary, which this machine does not have.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answerSealRequests, channelSealer } from './plane-host';
import type { Channel } from './process-channel';
import { ProviderSettingsStore, type KeySealer } from './provider-settings';

function linkedChannels(): [Channel, Channel] {
  const listeners: [Set<(m: unknown) => void>, Set<(m: unknown) => void>] = [new Set(), new Set()];
  const end = (mine: 0 | 1, theirs: 0 | 1): Channel => ({
    send(message) {
      const copy = JSON.parse(JSON.stringify(message)) as unknown;
      queueMicrotask(() => {
        for (const listener of [...listeners[theirs]]) listener(copy);
      });
    },
    onMessage(listener) {
      listeners[mine].add(listener);
      return () => listeners[mine].delete(listener);
    },
    onClose() {},
    close() {},
  });
  return [end(0, 1), end(1, 0)];
}

const KEY = 'sk-ant-api03-sealed-over-the-channel-42';
const keychain: KeySealer = {
  seal: async (plain) => Buffer.from(`sealed:${plain}`).toString('base64'),
  open: async (sealed) => {
    const text = Buffer.from(sealed, 'base64').toString('utf8');
    if (!text.startsWith('sealed:')) throw new Error('the keychain cannot decrypt this');
    return text.slice('sealed:'.length);
  },
};

describe('keys sealed over the plane host channel', () => {
  it('seals and opens through the parent, so the settings file holds only ciphertext', async () => {
    const [parent, host] = linkedChannels();
    answerSealRequests(parent, keychain);
    const sealer = channelSealer(host);
    const dir = mkdtempSync(join(tmpdir(), 'ap-sealer-'));
    try {
      const store = new ProviderSettingsStore(dir, sealer);
      expect((await store.set('anthropic', { apiKey: KEY })).settings.anthropic?.apiKey).toBe(KEY);
      expect(readFileSync(store.file, 'utf8')).not.toContain(KEY);
      // Two requests in flight at once are answered each to its own asker.
      expect(await Promise.all([sealer.seal('a-first-key-000000'), sealer.seal('a-second-key-11111')])).toEqual([await keychain.seal('a-first-key-000000'), await keychain.seal('a-second-key-11111')]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers a keychain failure as a failure, in the keychain’s words', async () => {
    const [parent, host] = linkedChannels();
    answerSealRequests(parent, keychain);
    await expect(channelSealer(host).open(Buffer.from('not ours').toString('base64'))).rejects.toThrow('the keychain cannot decrypt this');
    // A keychain that refuses to seal: the Save is refused, naming why, and nothing is written.
    const [parent2, host2] = linkedChannels();
    answerSealRequests(parent2, { seal: () => Promise.reject(new Error('the keychain is locked')), open: keychain.open });
    const dir = mkdtempSync(join(tmpdir(), 'ap-sealer-'));
    try {
      const store = new ProviderSettingsStore(dir, channelSealer(host2));
      await expect(store.set('gemini', { apiKey: KEY })).rejects.toThrow('the gemini key could not be sealed with the OS keychain (the keychain is locked); nothing was saved');
      expect(existsSync(store.file)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
