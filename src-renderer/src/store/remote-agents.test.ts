/**
 * The Remote agents slice and the Settings view's outbound allow list against a real plane: an
 * empty plane lists no remotes; accepting a key no origin has pending is refused in the plane's
 * words, kept beside that origin; an origin is added to and removed from the allow list, a
 * derived entry (a provider's base URL) is listed with where it comes from, and a bad origin is
 * refused in the plane's words. (a2a.remotes with real calls: src-main/plane/a2a-remotes.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { testPlane } from '../../../tests/support/runtime-support';
import { useSyncedHarnesses } from './testing/store-harness';

const harness = useSyncedHarnesses(() => testPlane({ agents: [], env: { AGENTPLANE_GEMINI_BASE_URL: 'http://127.0.0.1:9/v1beta' } }));

describe('the Remote agents slice', () => {
  it('reads an empty list, and keeps the plane’s refusal of an accept beside its origin', async () => {
    const h = await harness();
    expect(h.store.getState().remotesLoaded).toBe(false);
    await h.store.getState().refreshRemotes();
    expect(h.store.getState()).toMatchObject({ remotes: [], remotesLoaded: true, remotesError: null });

    expect(await h.store.getState().acceptRemoteKey('https://agent.example')).toBe(false);
    expect(h.store.getState().remoteAcceptErrors['https://agent.example']).toMatch(/no key is pinned for https:\/\/agent\.example/);
    expect(h.store.getState().remoteAccepting['https://agent.example']).toBeUndefined();
    expect(h.store.getState().announcement.text).toMatch(/^Could not accept the new key for https:\/\/agent\.example: /);
  });

  it('reads once more, not once per call, when asked while a read is in flight', async () => {
    const h = await harness();
    const before = h.wire.requests.filter((r) => r === 'a2a.remotes').length;
    await Promise.all([h.store.getState().refreshRemotes(), h.store.getState().refreshRemotes(), h.store.getState().refreshRemotes()]);
    expect(h.wire.requests.filter((r) => r === 'a2a.remotes').length - before).toBe(2);
  });
});

describe('the outbound allow list in Settings', () => {
  it('adds and removes an origin, lists derived entries with their source, and shows a refusal in the plane’s words', async () => {
    const h = await harness();
    await h.store.getState().refreshNetAllow();
    expect(h.store.getState().netAllow?.entries).toEqual([{ origin: 'http://127.0.0.1:9', source: 'provider', from: 'gemini' }]);

    expect(await h.store.getState().addNetAllow('http://127.0.0.1:8080/some/path')).toBe(false);
    expect(h.store.getState().netAllowActionError).toMatch(/path/);
    expect(await h.store.getState().addNetAllow('http://127.0.0.1:8080')).toBe(true);
    expect(h.store.getState().netAllow?.entries).toContainEqual({ origin: 'http://127.0.0.1:8080', source: 'allow-list' });
    expect(h.store.getState().announcement.text).toBe('Outbound connections to http://127.0.0.1:8080 are allowed.');

    expect(await h.store.getState().addNetAllow('ftp://example.com')).toBe(false);
    expect(h.store.getState().netAllowActionError).toMatch(/ftp/);
    expect(h.store.getState().netAllowBusy).toBe(false);

    expect(await h.store.getState().removeNetAllow('http://127.0.0.1:8080')).toBe(true);
    expect(h.store.getState().netAllowActionError).toBeNull();
    expect(h.store.getState().netAllow?.entries.map((e) => e.source)).toEqual(['provider']);
    expect(h.store.getState().announcement.text).toBe('Removed http://127.0.0.1:8080 from the allow list.');
  });
});
