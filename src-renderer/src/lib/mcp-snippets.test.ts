/**
 * The host config snippets are what a person pastes into Claude Desktop, Cursor or VS Code:
 * each host's own shape, the real URL and token when copied, the token masked when only shown,
 * and no HTTP snippet at all while the plane does not serve MCP over HTTP.
 */
import { describe, expect, it } from 'vitest';
import type { McpEndpointView } from '../../../src-shared/protocol/mcp';
import { MASKED_TOKEN, MCP_HOSTS, mcpHostSnippet, mcpManifestSnippet, shellLine } from './mcp-snippets';

const TOKEN = 'tok_0123456789abcdef';
const endpoint: McpEndpointView = {
  url: 'http://127.0.0.1:43117/mcp',
  token: TOKEN,
  stdioCommand: ['/usr/bin/node', '/opt/agentplane/bin/agentplane.js', 'mcp', 'serve', '--data-dir', '/home/me/.agentplane'],
  versions: ['2026-07-28', '2025-11-25'],
  tools: ['summarize', 'write-note'],
};
const parse = (text: string) => JSON.parse(text) as Record<string, Record<string, Record<string, unknown>>>;

describe('MCP host config snippets', () => {
  it('Claude Desktop and Cursor: mcpServers with url and an Authorization header for HTTP', () => {
    for (const host of ['claude-desktop', 'cursor'] as const) {
      const snippet = mcpHostSnippet(endpoint, host, 'http', { revealToken: true })!;
      expect(parse(snippet.text)).toEqual({ mcpServers: { agentplane: { url: endpoint.url, headers: { Authorization: `Bearer ${TOKEN}` } } } });
    }
    expect(mcpHostSnippet(endpoint, 'claude-desktop', 'http', { revealToken: true })!.file).toBe('claude_desktop_config.json');
    expect(mcpHostSnippet(endpoint, 'cursor', 'http', { revealToken: true })!.file).toBe('.cursor/mcp.json');
  });

  it('Claude Desktop and Cursor: mcpServers with command and args for stdio', () => {
    for (const host of ['claude-desktop', 'cursor'] as const) {
      const snippet = mcpHostSnippet(endpoint, host, 'stdio', { revealToken: false })!;
      expect(parse(snippet.text)).toEqual({ mcpServers: { agentplane: { command: '/usr/bin/node', args: endpoint.stdioCommand.slice(1) } } });
    }
  });

  it('VS Code: servers with a type, for HTTP and stdio, in .vscode/mcp.json', () => {
    const http = mcpHostSnippet(endpoint, 'vscode', 'http', { revealToken: true })!;
    expect(http.file).toBe('.vscode/mcp.json');
    expect(parse(http.text)).toEqual({ servers: { agentplane: { type: 'http', url: endpoint.url, headers: { Authorization: `Bearer ${TOKEN}` } } } });
    const stdio = mcpHostSnippet(endpoint, 'vscode', 'stdio', { revealToken: true })!;
    expect(parse(stdio.text)).toEqual({ servers: { agentplane: { type: 'stdio', command: '/usr/bin/node', args: endpoint.stdioCommand.slice(1) } } });
  });

  it('masks the token in a snippet built for display: no character of it is shown', () => {
    for (const host of MCP_HOSTS) {
      const shown = mcpHostSnippet(endpoint, host.id, 'http', { revealToken: false })!.text;
      expect(shown).not.toContain(TOKEN);
      expect(shown).not.toContain(TOKEN.slice(-4));
      expect(shown).toContain(`Bearer ${MASKED_TOKEN}`);
    }
  });

  it('has no HTTP snippet while the plane does not serve MCP over HTTP; stdio still works', () => {
    const notServing = { ...endpoint, url: null, token: null };
    for (const host of MCP_HOSTS) {
      expect(mcpHostSnippet(notServing, host.id, 'http', { revealToken: true })).toBeNull();
      expect(mcpHostSnippet(notServing, host.id, 'stdio', { revealToken: true })).not.toBeNull();
    }
  });

  it('a one-word stdio command gets empty args, never a missing key', () => {
    const snippet = mcpHostSnippet({ ...endpoint, stdioCommand: ['agentplane-mcp'] }, 'cursor', 'stdio', { revealToken: false })!;
    expect(parse(snippet.text)).toEqual({ mcpServers: { agentplane: { command: 'agentplane-mcp', args: [] } } });
  });
});

describe('shell lines and the manifest hint', () => {
  it('quotes only the words that need it', () => {
    expect(shellLine(['node', '/a b/cli.js', "it's", '--x=1'])).toBe(`node '/a b/cli.js' 'it'\\''s' --x=1`);
  });

  it('names the step and the exact grant a tool call needs', () => {
    const yaml = mcpManifestSnippet('everything', 'echo', { message: 'hi' });
    expect(yaml).toContain('mcp: { server: everything, tool: echo, args: { message: "hi" } }');
    expect(yaml).toContain('- { kind: mcp, name: everything/echo }');
  });
});
