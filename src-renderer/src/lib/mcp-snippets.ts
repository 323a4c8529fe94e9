/**
 * The config snippets an MCP host needs to reach this plane, built from `mcp.endpoint`: one per
 * host (Claude Desktop, Cursor, VS Code) and transport (HTTP on loopback with the bearer token,
 * or stdio, the host launching the plane's command itself).
 *
 * The hosts disagree on the shape: Claude Desktop and Cursor read `{"mcpServers": {name: …}}`
 * with `command`/`args` for stdio and `url`/`headers` for HTTP; VS Code reads
 * `{"servers": {name: {"type": "stdio" | "http", …}}}`. The server's key is `agentplane`.
 *
 * The token is a credential: a snippet built for display masks it (`revealToken: false`), and
 * only the one built for copying (or shown after the person asked to reveal it) carries it.
 */
import type { McpEndpointView } from '../../../src-shared/protocol/mcp';

export const MCP_HOSTS = [
  { id: 'claude-desktop', label: 'Claude Desktop', file: 'claude_desktop_config.json' },
  { id: 'cursor', label: 'Cursor', file: '.cursor/mcp.json' },
  { id: 'vscode', label: 'VS Code', file: '.vscode/mcp.json' },
] as const;
export type McpHostId = (typeof MCP_HOSTS)[number]['id'];

export const MCP_SNIPPET_TRANSPORTS = [
  { id: 'http', label: 'HTTP' },
  { id: 'stdio', label: 'stdio' },
] as const;
export type McpSnippetTransport = (typeof MCP_SNIPPET_TRANSPORTS)[number]['id'];

/** The key the plane is listed under in a host's config. */
export const MCP_SERVER_KEY = 'agentplane';

/** What a masked token reads as: no character of the real one. */
export const MASKED_TOKEN = '••••••••••••••••';

export interface McpSnippet {
  host: McpHostId;
  transport: McpSnippetTransport;
  /** Where the host reads it from. */
  file: string;
  /** The JSON, indented. */
  text: string;
}

/**
 * The snippet for one host and transport, or null for HTTP while the plane does not serve MCP
 * over HTTP (its endpoint has no URL: there is nothing to point a host at).
 */
export function mcpHostSnippet(endpoint: McpEndpointView, host: McpHostId, transport: McpSnippetTransport, options: { revealToken: boolean }): McpSnippet | null {
  const file = MCP_HOSTS.find((h) => h.id === host)!.file;
  let entry: Record<string, unknown>;
  if (transport === 'http') {
    if (endpoint.url === null) return null;
    const token = endpoint.token === null ? null : options.revealToken ? endpoint.token : MASKED_TOKEN;
    const headers = token === null ? undefined : { Authorization: `Bearer ${token}` };
    entry = host === 'vscode' ? { type: 'http', url: endpoint.url, ...(headers ? { headers } : {}) } : { url: endpoint.url, ...(headers ? { headers } : {}) };
  } else {
    const [command, ...args] = endpoint.stdioCommand;
    entry = host === 'vscode' ? { type: 'stdio', command, args } : { command, args };
  }
  const config = host === 'vscode' ? { servers: { [MCP_SERVER_KEY]: entry } } : { mcpServers: { [MCP_SERVER_KEY]: entry } };
  return { host, transport, file, text: JSON.stringify(config, null, 2) };
}

/** The stdio command as one shell line, each word quoted when it needs to be. */
export function shellLine(words: readonly string[]): string {
  return words.map((w) => (/^[A-Za-z0-9_./:=@%+,-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/**
 * How an agent's manifest calls one tool of a declared server: the step and the grant it needs
 * (a server cannot grant itself a tool: the manifest names each one it may call).
 */
export function mcpManifestSnippet(server: string, tool: string, args: Record<string, unknown> = {}): string {
  const argsText = Object.keys(args).length === 0 ? '{}' : `{ ${Object.entries(args).map(([k, v]) => `${k}: ${JSON.stringify(v)}`).join(', ')} }`;
  return [
    'steps:',
    '  - as: called',
    `    mcp: { server: ${server}, tool: ${tool}, args: ${argsText} }`,
    '  - output: "{{steps.called}}"',
    'grants:',
    `  - { kind: mcp, name: ${server}/${tool} }`,
  ].join('\n');
}
