/**
 * The MCP section rendered (to HTML, in Node) from views shaped as the plane sends them: the
 * endpoint with its masked token and a host's snippet, a connected server with its tools,
 * prompts and resources, a failed one with its error and stderr, the empty state, and an MCP
 * call's records in the inspector. The browser test (e2e/mcp-ui.e2e.ts) covers behaviour
 * against a real plane; this covers every part rendering, with its accessible names.
 */
import { createElement, type ReactElement } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { createPlaneClient } from '../../../src-shared/ipc/client';
import type { McpEndpointView, McpServerView } from '../../../src-shared/protocol/mcp';
import { paletteCommands } from '../lib/palette-commands';
import { formatRoute, parseRoute } from '../lib/route';
import { createAppStore, type AppState, type AppStore } from '../store/app-store';
import { StoreContext } from '../store/store-context';
import { manualEnv } from '../store/testing/store-harness';
import { McpRecordDetails } from './mcp-record-details';
import { McpSection } from './mcp-section';

const TOKEN = 'tok_secret_0123456789';
const endpoint: McpEndpointView = {
  url: 'http://127.0.0.1:43117/mcp',
  token: TOKEN,
  stdioCommand: ['node', '/opt/agentplane/bin/agentplane.js', 'mcp', 'serve'],
  versions: ['2026-07-28', '2025-11-25'],
  tools: ['summarize', 'write-note'],
};
const connected: McpServerView = {
  name: 'everything',
  transport: 'stdio',
  command: 'node',
  args: ['/x/server-everything/dist/index.js', 'stdio'],
  envNames: ['API_KEY'],
  state: 'connected',
  negotiatedVersion: '2025-11-25',
  serverInfo: { name: 'mcp-servers/everything', version: '2.0.0' },
  tools: [{ name: 'echo', description: 'Echoes back the input', inputSchema: { type: 'object', properties: { message: { type: 'string' } } } }],
  prompts: [{ name: 'simple-prompt', description: 'A prompt without arguments', arguments: [] }],
  resources: [{ uri: 'demo://resource/static/document/architecture.md', name: 'architecture.md', mimeType: 'text/markdown' }],
};
const failed: McpServerView = {
  name: 'broken',
  transport: 'http',
  url: 'http://127.0.0.1:9/mcp',
  headerNames: ['Authorization'],
  state: 'failed',
  error: 'connect ECONNREFUSED 127.0.0.1:9',
  stderrTail: [],
};
const dead: McpServerView = { name: 'crashy', transport: 'stdio', command: 'node', args: ['crash.js'], state: 'failed', error: 'the server exited (code 1)', stderrTail: ['Error: no config file', '    at main (crash.js:3)'] };

function storeWith(patch: Partial<AppState>): AppStore {
  const offline = { invoke: () => new Promise<never>(() => undefined), connectEvents: () => ({ close: () => undefined }) };
  const store = createAppStore(createPlaneClient(offline), manualEnv());
  store.setState(patch);
  return { ...store, getInitialState: store.getState };
}
const render = (store: AppStore, element: ReactElement) => renderToString(createElement(StoreContext.Provider, { value: store }, element));
// React separates adjacent text nodes with empty comments: they are not spaces on screen.
const text = (html: string) => html.replace(/<!-- -->/g, '').replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&gt;/g, '>').replace(/&lt;/g, '<').replace(/&amp;/g, '&').replace(/\s+/g, ' ');

describe('the MCP section renders what the plane says', () => {
  it('the endpoint: URL, masked token with its toggle, stdio command, revisions, agents, and a host snippet', () => {
    const html = render(storeWith({ mcpEndpoint: endpoint, mcpLoaded: true, mcpServers: [] }), createElement(McpSection, { empty: 'No servers.' }));
    const shown = text(html);
    expect(shown).toContain('This plane as an MCP server');
    expect(shown).toContain('http://127.0.0.1:43117/mcp');
    expect(html).not.toContain(TOKEN);
    expect(html).toMatch(/aria-pressed="false"[^>]*>Show token/);
    expect(html).toContain('aria-label="Copy the bearer token"');
    expect(html).toContain('aria-label="Copy the endpoint URL"');
    expect(shown).toContain('node /opt/agentplane/bin/agentplane.js mcp serve');
    expect(shown).toContain('2026-07-28, 2025-11-25 (preferred first)');
    expect(shown).toContain('summarize');
    expect(shown).toContain('write-note');
    expect(html).toContain('role="tablist" aria-label="MCP hosts"');
    expect(html).toMatch(/role="tab"[^>]*aria-selected="true"[^>]*>Claude Desktop/);
    expect(shown).toContain('claude_desktop_config.json');
    expect(shown).toContain('"mcpServers"');
    expect(shown).toContain('"url": "http://127.0.0.1:43117/mcp"');
    expect(html).toContain('aria-label="Copy the Claude Desktop HTTP config"');
    expect(html).toContain('role="radiogroup" aria-label="How Claude Desktop reaches the plane"');
    // The empty state, with its action; the manifest hint with placeholders.
    expect(shown).toContain('No servers.');
    expect(shown).toContain('- { kind: mcp, name: <server>/<tool> }');
  });

  it('not serving over HTTP: says so, and offers the stdio snippet', () => {
    const shown = text(render(storeWith({ mcpEndpoint: { ...endpoint, url: null, token: null }, mcpLoaded: true }), createElement(McpSection, { empty: 'x' })));
    expect(shown).toContain('not serving over HTTP');
    expect(shown).not.toContain('Bearer token');
    expect(shown).toContain('"command": "node"');
  });

  it('a connected server: transport, command, env names without values, revision, server info, tools with schemas, prompts, resources', () => {
    const html = render(storeWith({ mcpEndpoint: endpoint, mcpLoaded: true, mcpServers: [connected] }), createElement(McpSection, { empty: 'x' }));
    const shown = text(html);
    expect(shown).toContain('MCP servers your agents can call');
    expect(shown).toContain('1 declared · 1 connected');
    expect(shown).toContain('Connected');
    expect(shown).toContain('node /x/server-everything/dist/index.js stdio');
    expect(shown).toContain('API_KEY (values not shown)');
    expect(shown).toContain('2025-11-25 (older than 2026-07-28');
    expect(shown).toContain('mcp-servers/everything 2.0.0');
    expect(shown).toContain('Tools (1)');
    expect(shown).toContain('echo — Echoes back the input');
    expect(shown).toContain('Input schema of echo');
    expect(shown).toContain('simple-prompt');
    expect(shown).toContain('demo://resource/static/document/architecture.md');
    expect(html).toContain('aria-label="Disconnect everything"');
    expect(html).toContain('aria-label="Remove everything…"');
    // The usage hint picks a real tool.
    expect(shown).toContain('mcp: { server: everything, tool: echo, args: {} }');
    expect(shown).toContain('- { kind: mcp, name: everything/echo }');
  });

  it('failed servers: the error in the server’s words, header names only, the stderr tail collapsible, a retry', () => {
    const html = render(storeWith({ mcpEndpoint: endpoint, mcpLoaded: true, mcpServers: [failed, dead] }), createElement(McpSection, { empty: 'x' }));
    const shown = text(html);
    expect(shown).toContain('It failed: connect ECONNREFUSED 127.0.0.1:9');
    expect(shown).toContain('Authorization (values not shown)');
    expect(shown).toContain('Streamable HTTP');
    expect(shown).toContain('What it wrote to stderr lately (2 lines)');
    expect(shown).toContain('Error: no config file');
    expect(html).toContain('aria-label="stderr of crashy"');
    expect(html).toContain('aria-label="Retry connecting broken"');
    expect(shown).not.toContain('Tools (');
  });

  it('a refused read of the endpoint or the list is said, not hidden', () => {
    const shown = text(render(storeWith({ mcpEndpointError: 'not built yet', mcpError: 'the plane is busy' }), createElement(McpSection, { empty: 'x' })));
    expect(shown).toContain('Could not read the plane’s MCP endpoint: not built yet');
    expect(shown).toContain('Could not list the MCP servers: the plane is busy');
  });
});

describe('an MCP call in the record inspector', () => {
  const rec = (kind: string, body: Record<string, unknown>) =>
    ({ seq: 4, runId: `run-${'a'.repeat(20)}`, kind, v: 1, time: '2026-12-01T03:00:00.000Z', body, hash: 'ab'.repeat(32), prevHash: 'cd'.repeat(32), known: true }) as RecordView;
  const store = storeWith({});

  it('EffectStarted: server, tool and arguments', () => {
    const html = render(store, createElement(McpRecordDetails, { record: rec('EffectStarted', { step: 0, effect: 'mcp', name: 'everything/echo', key: 'ef'.repeat(32), request: { server: 'everything', tool: 'echo', arguments: { message: 'hi' } }, destination: 'stdio:node' }) }));
    const shown = text(html);
    expect(shown).toContain('MCP server everything (stdio:node)');
    expect(shown).toContain('Tool echo');
    expect(shown).toContain('"message": "hi"');
  });

  it('EffectDone: the tool’s text, labelled untrusted; other effects show nothing extra', () => {
    const done = render(store, createElement(McpRecordDetails, { record: rec('EffectDone', { step: 0, key: 'ef'.repeat(32), result: { content: [{ type: 'text', text: 'Echo: hi' }] }, provenance: 'mcp:everything' }) }));
    expect(text(done)).toContain('Result from everything (untrusted)');
    expect(text(done)).toContain('Echo: hi');
    expect(render(store, createElement(McpRecordDetails, { record: rec('EffectDone', { step: 0, key: 'ef'.repeat(32), result: 'x', provenance: 'peer:beta' }) }))).toBe('');
  });
});

describe('MCP in the command palette and the address bar', () => {
  it('has its own address, so a reload returns to it', () => {
    expect(parseRoute('#/mcp')).toEqual({ section: 'mcp', runId: null, seq: null, peerId: null });
    expect(formatRoute(parseRoute('#/mcp'))).toBe('#/mcp');
  });

  it('adds a server (opens the section and its form) and connects or disconnects each listed one', () => {
    const store = createAppStore(createPlaneClient({ invoke: () => new Promise<never>(() => undefined), connectEvents: () => ({ close: () => undefined }) }), manualEnv());
    store.setState({ mcpServers: [connected, failed] });
    const commands = paletteCommands(store.getState(), () => undefined);
    const labels = commands.filter((c) => c.group === 'MCP').map((c) => c.label);
    expect(labels).toEqual(['Add an MCP server…', 'Disconnect MCP server everything', 'Connect MCP server broken']);
    expect(commands.find((c) => c.id === 'go-mcp')?.shortcut).toBe('Alt+7');
    commands.find((c) => c.label === 'Add an MCP server…')!.run();
    expect(store.getState().section).toBe('mcp');
    expect(store.getState().mcpFormRequest).toBe(1);
    commands.find((c) => c.label === 'Connect MCP server broken')!.run();
    // Sent (the offline client never answers): the server is marked busy with that action.
    expect(store.getState().mcpBusy.broken).toBe('connect');
  });
});
