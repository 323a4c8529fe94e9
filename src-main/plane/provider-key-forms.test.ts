/**
 * A provider that echoes the API key back in its error body, in any recognisable form, gets none
 * of it into what a user sees or the plane keeps: the run's error, the journal's bytes, a run's
 * export bundle and the `providers test` answer. The fake Anthropic server (tests/doubles/)
 * echoes the presented x-api-key as written, base64 and base64url encoded, hex encoded,
 * reversed, spaced out, as a run of 23 characters from inside the key in other text, and
 * base64-encoded inside longer encoded text (the key at byte offsets 1 and 2 of the encoding).
 *
 * What counts as a leak is judged without the scrubber's own rules: the text (whitespace
 * removed), and every base64 or hex run in it decoded at each alignment, must hold no stretch of
 * the key or of the key reversed (6 characters in a short error text; 8 in an export bundle
 * and 12 in the raw journal bytes, where signatures and binary pages decode to noise).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Plane } from './plane';
import { loadAgents } from './plane-config';
import { createLogger } from '../base/logger';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, testPlane } from '../../tests/support/runtime-support';
import { ECHOED_KEY_FORMS as ECHOED, startFakeAnthropicServer, type FakeAnthropicServer } from '../../tests/doubles/fake-anthropic-server';

/** Printable ASCII without spaces, as providers.set demands; its ? and ~ make its base64 and base64url differ (/ and _, + and -). */
const KEY = 'sk-live-Zq7vR2mXo9LbT4w?KcY8nH1sD5gF~jU6eP3tA';

const FORMS = [
  ['plain', 'unauthorized'],
  ['base64', 'unauthorized-base64'],
  ['base64url', 'unauthorized-base64url'],
  ['hex', 'unauthorized-hex'],
  ['reversed', 'unauthorized-reversed'],
  ['spaced out', 'unauthorized-spaced'],
  ['a 23-character run inside other text', 'unauthorized-run'],
  ['base64 inside longer encoded text, at byte offsets 1 and 2', 'unauthorized-embedded-base64'],
] as const;

// One plane for every form, each with its own agent: the journal's export worker starts once.
let anthropic: FakeAnthropicServer;
let p: Plane;
let dir: string;
const writerOf = (behaviour: string) => `writer-${FORMS.findIndex(([, b]) => b === behaviour)}`;
beforeAll(async () => {
  anthropic = await startFakeAnthropicServer();
  dir = tempDataDir('ap-key-forms-');
  const writers = FORMS.map(([, behaviour]) => agent({ name: writerOf(behaviour), steps: [{ model: { provider: 'anthropic', model: behaviour, prompt: 'hi' } }], grants: [{ kind: 'model', name: 'anthropic' }] }));
  p = await testPlane({ dataDir: dir, env: {}, agents: [...loadAgents(dir), ...writers], logger: createLogger(join(dir, 'plane.log'), () => undefined) });
  await call(p, 'providers.set', { provider: 'anthropic', apiKey: KEY, baseUrl: anthropic.baseUrl, model: 'claude-sonnet-4-5' });
});
afterAll(async () => {
  await p?.close();
  await anthropic?.close();
  // Closed (the WAL checkpointed into the database): still none of it, in any form.
  if (dir) expect(leakIn(dataDirBytes(dir), 12)).toBeNull();
});

/**
 * The first stretch of `window` characters of the key (or the key reversed) that `text` holds:
 * as written, with whitespace removed, or in any base64/base64url or hex run of it decoded at
 * every alignment. null: none.
 */
function leakIn(text: string, window: number): string | null {
  const flat = text.replace(/\s+/g, '');
  const views = [text, flat];
  for (const run of flat.match(/[A-Za-z0-9+/_-]{8,}/g) ?? []) {
    // Node's base64 decoder takes both alphabets.
    for (let offset = 0; offset < 4; offset++) views.push(Buffer.from(run.slice(offset), 'base64').toString('latin1'));
  }
  for (const run of flat.match(/[0-9a-fA-F]{8,}/g) ?? []) {
    for (let offset = 0; offset < 2; offset++) {
      const even = run.slice(offset, offset + ((run.length - offset) & ~1));
      views.push(Buffer.from(even, 'hex').toString('latin1'));
    }
  }
  for (const needle of [KEY, [...KEY].reverse().join('')]) {
    for (let i = 0; i + window <= needle.length; i++) {
      const stretch = needle.slice(i, i + window);
      const view = views.find((v) => v.includes(stretch));
      if (view !== undefined) return `${JSON.stringify(stretch)} in ${JSON.stringify(view.slice(0, 160))}`;
    }
  }
  return null;
}

/** Every byte the plane has written in its data dir (journal, WAL, log), the settings file (which holds the key) aside. */
function dataDirBytes(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name !== 'providers.json')
    .map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString('latin1'))
    .join('\n');
}

describe('a provider echoing the API key in another form: no form of it reaches the user or the journal', () => {
  it('the leak check itself sees each form the fake echoes', () => {
    // Guards the test: were leakIn blind to a form, every case below would pass for nothing.
    const forms = ['unauthorized-base64', 'unauthorized-base64url', 'unauthorized-hex', 'unauthorized-reversed', 'unauthorized-spaced', 'unauthorized-run', 'unauthorized-embedded-base64'] as const;
    for (const form of forms) expect(leakIn(`anthropic: HTTP 401: ${ECHOED[form](KEY)}`, 6), form).not.toBeNull();
    expect(leakIn(`anthropic: HTTP 401: invalid x-api-key: ${KEY}`, 12)).not.toBeNull();
  });

  for (const [form, behaviour] of FORMS) {
    it(`${form}: the run's error, its export, the journal bytes and providers test hold none of it`, async () => {
      // providers test: the provider's own words, without the key.
      const tested = await call(p, 'providers.test', { provider: 'anthropic', model: behaviour });
      expect(tested.ok).toBe(false);
      expect(anthropic.requests.at(-1)?.headers['x-api-key']).toBe(KEY);
      const testError = tested.ok ? '' : tested.error;
      // A run: its error as runs.get shows it, and its export bundle.
      const run = await call(p, 'runs.start', { agent: writerOf(behaviour), input: {}, wait: true });
      expect(run.outcome).toBe('failed');
      const shown = JSON.stringify(await call(p, 'runs.get', { runId: run.runId }));
      const exported = (await call(p, 'journal.exportRun', { runId: run.runId })).content;
      // The journal as it stands on disk (committed: the database and its WAL), and the log.
      const kept = dataDirBytes(dir);

      // Each surface judged on its own (soft: a failure names every surface that leaked).
      expect.soft(testError).toMatch(/HTTP 401.*invalid x-api-key: .*\[key/);
      expect.soft(leakIn(testError, 6), 'providers test').toBeNull();
      expect.soft(shown).toMatch(/HTTP 401.*invalid x-api-key: .*\[key/);
      expect.soft(leakIn(JSON.stringify(run), 6), 'the run as runs.start answered it').toBeNull();
      expect.soft(leakIn(shown, 6), 'the run as runs.get shows it').toBeNull();
      expect.soft(exported).toContain('invalid x-api-key');
      expect.soft(leakIn(exported, 8), 'the run\'s export bundle').toBeNull();
      expect.soft(leakIn(kept, 12), 'the data dir').toBeNull();
    });
  }
});
