/**
 * The data dir's MCP address file, `<dataDir>/mcp-address.json` (0600): the one MCP token every
 * door of the data dir takes (the plane's endpoint, plane/mcp-endpoint.ts, and each peer's `/mcp`
 * and A2A, plane/peer-mcp.ts and plane/peer-a2a.ts), and the port the plane's endpoint last
 * listened on. Kept apart from the endpoint so that a peer, which reads the token when it starts,
 * does not load the MCP SDK with it: a peer loads its MCP and A2A servers on their first request
 * (plane/lazy-routes.ts).
 */
import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, rmSync, writeSync } from 'node:fs';
import { z } from 'zod';
import { openPrivateFile, temporaryNameFor, writePrivateFileAtomically } from '../base/private-files';
import { addressFile } from './address-file';

/**
 * `port` is absent when a peer made the file before the plane ever served MCP (the token is
 * needed first; the port is the plane's, written when its endpoint first listens).
 */
const McpAddressSchema = z.object({ port: z.number().int().min(1).max(65535).optional(), token: z.string().min(32).max(200) });
export type McpAddress = z.infer<typeof McpAddressSchema>;

const mcpAddress = addressFile('mcp-address.json', McpAddressSchema);
export const mcpAddressPath = mcpAddress.path;
/** The last address, or null (none yet, or a file that does not parse: then a new one is made). */
export const readMcpAddress = mcpAddress.read;
export const rememberMcpAddress = mcpAddress.remember;

/**
 * The data dir's MCP token: the one in `mcp-address.json`, or a new one written there. The plane
 * and its peers are separate processes that may start at the same moment, so a new file is
 * created exclusively (written whole under a temporary name, then hard-linked into place, which
 * fails when the name exists): of two processes creating at once, one token wins and the other
 * process reads it, rather than each keeping a token the other overwrote. A file that does not
 * parse is replaced (the worst outcome is a new token, as with no file).
 */
export function loadOrCreateMcpToken(dataDir: string): string {
  const existing = readMcpAddress(dataDir);
  if (existing) return existing.token;
  const path = mcpAddressPath(dataDir);
  const token = randomBytes(32).toString('hex');
  const content = `${JSON.stringify({ token } satisfies McpAddress)}\n`;
  const temporary = `${temporaryNameFor(path)}.${randomBytes(4).toString('hex')}`;
  const fd = openPrivateFile(temporary, 'create-new');
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, path);
    return token;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Someone made it in between (take theirs), or a damaged file is there (replace it).
    const theirs = readMcpAddress(dataDir);
    if (theirs) return theirs.token;
    writePrivateFileAtomically(path, content);
    return token;
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Where a person approves a waiting run: the UI's approvals page when one is served, and the CLI. */
export function approveWithOf(uiOrigin: string | null, dataDir: string | null): (runId: string) => string {
  return (runId) => {
    const command = `agentplane approvals approve ${runId}${dataDir ? ` --data-dir ${dataDir}` : ''}`;
    return uiOrigin ? `${uiOrigin}/#/approvals (or: ${command})` : command;
  };
}
