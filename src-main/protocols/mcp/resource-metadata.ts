/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for an MCP route that takes a bearer token:
 * the 2025-11-25 authorization specification has an MCP server serve it at the well-known URI
 * with the endpoint's path inserted (`/.well-known/oauth-protected-resource/mcp`) or at the root
 * (`/.well-known/oauth-protected-resource`), and name it in the `resource_metadata` parameter of a
 * 401's `WWW-Authenticate: Bearer` challenge. Both URIs are served, with one document.
 *
 * Honest about what this resource is: the plane issues its own static token (README, section
 * "MCP": printed as AGENTPLANE_MCP_TOKEN, kept in the data dir's mcp-address.json). There is no
 * authorization server, so `authorization_servers` is absent: a host that expects OAuth finds none
 * to go to, and learns only that this resource takes a bearer token in the Authorization header,
 * which it must be given. The document names no token and nothing secret.
 */
import type { IncomingMessage } from 'node:http';

export const RESOURCE_METADATA_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** Where the metadata of the MCP endpoint at `path` lives (RFC 9728 section 3.1: the path is appended). */
export function resourceMetadataPath(path: string): string {
  return `${RESOURCE_METADATA_WELL_KNOWN}${path === '/' ? '' : path}`;
}

/** Both metadata URIs of the MCP endpoint at `path`, as registerMcpRoute serves them (one when they coincide). */
export function resourceMetadataUrls(path: string): string[] {
  return [...new Set([resourceMetadataPath(path), RESOURCE_METADATA_WELL_KNOWN])];
}

/** Every URL an MCP route at `path` answers: the endpoint and its metadata (a front that forwards them, plane/lazy-routes.ts). */
export function mcpRouteUrls(path: string): string[] {
  return [path, ...resourceMetadataUrls(path)];
}

const LOOPBACK_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The origin the caller reached this server at, from its Host header when that is a plain
 * loopback host and port (the route's Host check has already refused any other name), else from
 * the socket: a resource identifier must match the URL the host uses, or the SDK client refuses it.
 */
export function originOf(req: IncomingMessage): string {
  const stated = String(req.headers.host ?? '').toLowerCase();
  try {
    const parsed = new URL(`http://${stated}`);
    if (LOOPBACK_HOSTNAMES.has(parsed.hostname) && parsed.host === stated && parsed.pathname === '/') return `http://${parsed.host}`;
  } catch {
    // Not a host at all: fall back to the socket's own address below.
  }
  const address = req.socket.localAddress ?? '127.0.0.1';
  const host = address.includes(':') ? `[${address.replace(/^::ffff:/, '')}]` : address;
  return `http://${host.replace(/^\[(\d+\.\d+\.\d+\.\d+)\]$/, '$1')}:${req.socket.localPort ?? 80}`;
}

/** The RFC 9728 document for the MCP endpoint at `path`, as reached through `req`. */
export function resourceMetadata(req: IncomingMessage, path: string): Record<string, unknown> {
  return {
    resource: `${originOf(req)}${path}`,
    bearer_methods_supported: ['header'],
    resource_name: 'AgentPlane MCP endpoint',
    // An extension member (RFC 9728 section 2 allows them): why there is no authorization server.
    description:
      'This resource takes the plane\'s own static bearer token in the Authorization header; there is no OAuth authorization server. ' +
      'The token is printed as AGENTPLANE_MCP_TOKEN by `agentplane serve`, shown in the MCP view, and kept in the data dir\'s mcp-address.json (see the README, section "MCP").',
  };
}

/** The `WWW-Authenticate` challenge of a 401 from the MCP endpoint at `path`. */
export function bearerChallenge(req: IncomingMessage, path: string): string {
  return `Bearer resource_metadata="${originOf(req)}${resourceMetadataPath(path)}"`;
}
