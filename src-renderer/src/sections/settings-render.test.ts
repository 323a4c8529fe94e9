/**
 * The Settings section rendered (to HTML, in Node) from views shaped as the plane sends them: an
 * env-sourced provider read-only with its variables' names, a saved one with its key's hint and
 * an empty password field, an unconfigured chat server, a file not in force, and a test's answer.
 * The browser test (e2e/providers-settings.e2e.ts) covers behaviour against a real plane.
 */
import { createElement } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { createPlaneClient } from '../../../src-shared/ipc/client';
import type { ProvidersList, ProviderView } from '../../../src-shared/protocol/providers';
import { paletteCommands } from '../lib/palette-commands';
import { createAppStore, type AppState, type AppStore } from '../store/app-store';
import { StoreContext } from '../store/store-context';
import { manualEnv } from '../store/testing/store-harness';
import { sections } from './sections';
import { SettingsSection } from './settings-section';

const view = (id: ProviderView['id'], patch: Partial<ProviderView>): ProviderView => ({
  id,
  what: `${id} (what)`,
  configured: false,
  keySet: false,
  keyHint: null,
  keySource: null,
  baseUrl: null,
  baseUrlSource: null,
  model: null,
  modelSource: null,
  variables: { apiKey: `AGENTPLANE_${id.toUpperCase()}_API_KEY`, baseUrl: `AGENTPLANE_${id.toUpperCase()}_BASE_URL`, model: `AGENTPLANE_${id.toUpperCase()}_MODEL` },
  ...patch,
});

const list: ProvidersList = {
  providers: [
    view('anthropic', { configured: true, keySet: true, keyHint: '…9xYz', keySource: 'env', model: 'claude-sonnet-4-5', modelSource: 'env' }),
    view('openai', { configured: true, keySet: true, keyHint: '…a1b2', keySource: 'settings', baseUrl: 'https://proxy.example/v1', baseUrlSource: 'settings' }),
    view('gemini', {}),
    view('chat', {}),
  ],
  file: '/home/u/.config/AgentPlane/providers.json',
  sealed: true,
  error: '/home/u/.config/AgentPlane/providers.json: the gemini key could not be opened with this machine’s keychain',
};

function storeWith(patch: Partial<AppState>): AppStore {
  const offline = { invoke: () => new Promise<never>(() => undefined), connectEvents: () => ({ close: () => undefined }) };
  const store = createAppStore(createPlaneClient(offline), manualEnv());
  store.setState(patch);
  // Rendering on the server reads the initial state: make it the patched one.
  return { ...store, getInitialState: store.getState };
}
const render = (store: AppStore) => renderToString(createElement(StoreContext.Provider, { value: store }, createElement(SettingsSection, { empty: 'intro text' })));
const text = (html: string) => html.replace(/<[^>]+>/g, '').replace(/&#x27;/g, "'").replace(/&quot;/g, '"');

describe('the Settings section', () => {
  it('shows env-sourced values read-only with the variable, saved ones editable, a key only as its hint', () => {
    const html = render(storeWith({ providersList: list, providerTests: { openai: { ok: false, error: 'openai: HTTP 401: Incorrect API key provided: [key].', latencyMs: 41 } } }));
    const shown = text(html);
    // Anthropic's key and model come from the environment: read-only, the variable named.
    expect(html).toMatch(/<input id="[^"]+" readOnly=""[^>]* value="set by AGENTPLANE_ANTHROPIC_API_KEY"/);
    expect(html).toMatch(/<input id="[^"]+" readOnly=""[^>]* value="claude-sonnet-4-5"/);
    expect(shown).toContain('AGENTPLANE_ANTHROPIC_API_KEY was set when this plane started; it wins over a key saved here.');
    // OpenAI's key is saved: an empty password field, the hint of its last four characters.
    expect(html).toMatch(/type="password"[^>]*value=""/);
    expect(shown).toContain('A key is saved (ending a1b2)');
    expect(html).toContain('value="https://proxy.example/v1"');
    expect(shown).toContain('Failed: openai: HTTP 401: Incorrect API key provided: [key].');
    // The chat server needs a base URL; nothing saved: Remove is disabled.
    expect(shown).toContain('Required: the server’s URL including /v1');
    expect(html).toMatch(/disabled=""[^>]*aria-label="Remove the saved OpenAI-compatible chat server settings…"/);
    expect(html).not.toMatch(/disabled=""[^>]*aria-label="Remove the saved OpenAI settings…"/);
    expect(shown).toContain('Saved settings are not in force:');
    expect(shown).toContain('(keys sealed with the system keychain)');
    expect(shown.match(/Not configured/g)).toHaveLength(2);
  });

  it('is the eighth section, reached with Alt+8 and from the palette', () => {
    expect(sections.findIndex((s) => s.id === 'settings')).toBe(7);
    const commands = paletteCommands(storeWith({}).getState(), () => undefined);
    expect(commands.find((c) => c.id === 'go-settings')?.shortcut).toBe('Alt+8');
  });
});
