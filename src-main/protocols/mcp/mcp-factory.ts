/**
 * What the MCP transports (mcp-http.ts, mcp-stdio.ts) hand to the code that builds a served MCP
 * surface, and the revisions the plane serves.
 *
 * The transports own the wire (the official SDK's `createMcpHandler`, its streamable HTTP
 * transport and `serveStdio`) and the plane's governance of it (who is calling, which session
 * is whose, how many); a surface (the plane's agents as tools, or the conformance fixtures)
 * only says what to register, for the caller the transport authenticated.
 */
import type { McpServer, Server } from '@modelcontextprotocol/server';

/**
 * The two revisions this plane serves, newest first: 2026-07-28 (the revision carrying the Tasks
 * extension the plane depends on) and 2025-11-25 (the handshake era). A factory passes this as
 * `supportedProtocolVersions`, so an `initialize` naming anything older gets the counter-offer
 * 2025-11-25, which is the specification's answer to an unsupported version, and a 2026-era
 * request naming an unknown revision gets the SDK's -32022.
 */
export const MCP_SERVED_VERSIONS: readonly string[] = ['2026-07-28', '2025-11-25'];

export interface McpCaller {
  /** Who the transport authenticated: 'mcp:local' (the plane's bearer token), 'mcp:stdio' (a host that launched us), 'mcp:anonymous' (fixtures, auth off). */
  principal: string;
  /** 2025-11-25 session id when there is one (legacy era over HTTP); undefined otherwise. */
  sessionId?: string;
  era: 'modern' | 'legacy';
}

/**
 * Builds the MCP server object for one caller. Called per HTTP request on 2026-07-28 (that era
 * is stateless: a fresh instance answers each request), per session on 2025-11-25 over HTTP,
 * and per connection over stdio.
 */
export type McpServerFactory = (caller: McpCaller) => McpServer | Server;

export const PRINCIPAL_LOCAL = 'mcp:local';
export const PRINCIPAL_STDIO = 'mcp:stdio';
export const PRINCIPAL_ANONYMOUS = 'mcp:anonymous';
