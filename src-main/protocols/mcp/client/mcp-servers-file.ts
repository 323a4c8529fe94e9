/**
 * `<data dir>/mcp-servers.json`: the MCP servers the user declared for the plane's agents,
 * `{servers: {<name>: config}}` (McpServersFileSchema in src-shared/protocol/mcp.ts).
 *
 * A server's env and header values are credentials more often than not, so the file is the
 * user's alone: written whole (a temporary file, then rename) and 0600, through
 * base/private-files.ts, never followed through a symbolic link. A file that does not parse or
 * does not match the schema is an error naming the file and the field, and it is never
 * overwritten: what a person wrote by hand stays as they wrote it until they fix it. The error
 * names fields, never values (a value may be a secret).
 */
import { join } from 'node:path';
import { z } from 'zod';
import { describeZodError } from '../../../../src-shared/ipc/errors';
import { McpServersFileSchema, type McpServerConfig, type McpServersFile } from '../../../../src-shared/protocol/mcp';
import { readRegularFile, writePrivateFileAtomically } from '../../../base/private-files';

export function mcpServersFilePath(dataDir: string): string {
  return join(dataDir, 'mcp-servers.json');
}

/** The servers file is unreadable or malformed; the message names the file and the field. */
export class McpServersFileError extends Error {
  override readonly name = 'McpServersFileError';
}

/** A server of that name is already declared. */
export class McpServerExistsError extends Error {
  override readonly name = 'McpServerExistsError';
}

/** The declared servers; an absent file declares none. */
export function readMcpServersFile(dataDir: string): McpServersFile {
  const path = mcpServersFilePath(dataDir);
  let text: string | null;
  try {
    text = readRegularFile(path);
  } catch (error) {
    throw new McpServersFileError(`${path}: cannot be read (${(error as Error).message})`);
  }
  if (text === null) return { servers: {} };
  if (text.trim() === '') return { servers: {} };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new McpServersFileError(`${path}: not valid JSON (${(error as Error).message}); fix or remove the file, nothing was changed`);
  }
  const parsed = McpServersFileSchema.safeParse(json);
  if (!parsed.success) throw new McpServersFileError(`${path}: ${describeFileError(parsed.error)}; fix the file, nothing was changed`);
  return parsed.data;
}

/** Zod's words, with a bad server name said as the rule it broke (zod says only "Invalid key"). */
function describeFileError(error: z.ZodError): string {
  const keyIssues = error.issues.flatMap((issue) => (issue.code === 'invalid_key' ? issue.issues.map((inner) => `${[...issue.path, ...inner.path].map(String).join('.')}: ${inner.message}`) : []));
  const rest = error.issues.filter((issue) => issue.code !== 'invalid_key');
  return [...keyIssues, ...(rest.length > 0 ? [describeZodError(new z.ZodError(rest))] : [])].join('; ');
}

export function writeMcpServersFile(dataDir: string, file: McpServersFile): void {
  writePrivateFileAtomically(mcpServersFilePath(dataDir), `${JSON.stringify(McpServersFileSchema.parse(file), null, 2)}\n`);
}

/** Adds one server; a name already declared is refused (remove it first). Re-reads the file. */
export function addMcpServer(dataDir: string, name: string, config: McpServerConfig): McpServersFile {
  const file = readMcpServersFile(dataDir);
  if (file.servers[name]) throw new McpServerExistsError(`an MCP server named ${name} is already declared in ${mcpServersFilePath(dataDir)}; remove it first`);
  const next = { servers: { ...file.servers, [name]: config } };
  writeMcpServersFile(dataDir, next);
  return next;
}

/** Removes one server; false when none had that name. */
export function removeMcpServer(dataDir: string, name: string): boolean {
  const file = readMcpServersFile(dataDir);
  if (!file.servers[name]) return false;
  const { [name]: _removed, ...rest } = file.servers;
  writeMcpServersFile(dataDir, { servers: rest });
  return true;
}
