/**
 * The "Add an MCP server" form's text, turned into the `mcp.servers.add` request, or into an
 * error beside each field that is wrong. The rules are the contract's (McpServerConfigSchema,
 * McpServerNameSchema), applied field by field so each error names its field and line; the
 * contract's own request schema is applied last, so the form can never send what the plane
 * would refuse to parse.
 *
 * Environment values and header values are usually credentials: an error names the line and
 * what is wrong with it, never the value written there.
 */
import { commands, type CommandRequest } from '../../../src-shared/ipc/contract';
import { describeZodError } from '../../../src-shared/ipc/errors';
import { McpHttpConfigSchema, McpServerNameSchema } from '../../../src-shared/protocol/mcp';

export interface McpServerFormValues {
  name: string;
  transport: 'stdio' | 'http';
  command: string;
  /** One argument per line, exactly as written (blank lines are left out). */
  args: string;
  /** `KEY=VALUE`, one per line. */
  env: string;
  url: string;
  /** `Name: value`, one per line. */
  headers: string;
}

export type McpServerFormField = 'name' | 'command' | 'args' | 'env' | 'url' | 'headers' | 'form';
export type McpServerFormErrors = Partial<Record<McpServerFormField, string>>;

export const EMPTY_MCP_SERVER_FORM: McpServerFormValues = { name: '', transport: 'stdio', command: '', args: '', env: '', url: '', headers: '' };

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[A-Za-z0-9-]+$/;

/** Non-blank lines with their 1-based line numbers; a trailing `\r` (pasted from Windows) dropped. */
function linesOf(text: string): Array<{ line: number; text: string }> {
  return text
    .split('\n')
    .map((t, i) => ({ line: i + 1, text: t.replace(/\r$/, '') }))
    .filter((l) => l.text.trim() !== '');
}

/** `KEY=VALUE` lines into a record, or the first problem (naming the line, never the value). */
export function parseEnvLines(text: string): { env: Record<string, string> } | { error: string } {
  const env: Record<string, string> = {};
  for (const { line, text: t } of linesOf(text)) {
    const at = t.indexOf('=');
    if (at < 0) return { error: `Line ${line}: write KEY=VALUE (no "=" found).` };
    const key = t.slice(0, at).trim();
    if (!ENV_NAME.test(key)) return { error: `Line ${line}: "${key}" is not an environment variable name (letters, digits and _, not starting with a digit).` };
    if (key in env) return { error: `Line ${line}: ${key} is set twice.` };
    env[key] = t.slice(at + 1);
  }
  return { env };
}

/** `Name: value` lines into a record, or the first problem (naming the line, never the value). */
export function parseHeaderLines(text: string): { headers: Record<string, string> } | { error: string } {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  for (const { line, text: t } of linesOf(text)) {
    const at = t.indexOf(':');
    if (at < 0) return { error: `Line ${line}: write Name: value (no ":" found).` };
    const name = t.slice(0, at).trim();
    if (!HEADER_NAME.test(name)) return { error: `Line ${line}: "${name}" is not an HTTP header name (letters, digits and dashes).` };
    // Header names are case-insensitive on the wire: two spellings of one name are one header.
    if (seen.has(name.toLowerCase())) return { error: `Line ${line}: ${name} is given twice.` };
    seen.add(name.toLowerCase());
    headers[name] = t.slice(at + 1).trim();
  }
  return { headers };
}

/**
 * The request the form describes, or the errors to show beside its fields (`form` for what the
 * contract still refuses as a whole). Only the chosen transport's fields are read.
 */
export function mcpServerRequestOf(values: McpServerFormValues): { request: CommandRequest<'mcp.servers.add'> } | { errors: McpServerFormErrors } {
  const errors: McpServerFormErrors = {};
  const name = values.name.trim();
  if (!name) errors.name = 'A name is required: steps and grants call the server by it.';
  else if (!McpServerNameSchema.safeParse(name).success) errors.name = 'Lowercase letters, digits and dashes, starting with a letter (at most 63).';

  let config: CommandRequest<'mcp.servers.add'>['config'] | null = null;
  if (values.transport === 'stdio') {
    const command = values.command.trim();
    if (!command) errors.command = 'The command that starts the server, e.g. node or npx.';
    else if (/\s/.test(command) && !/[/\\]/.test(command)) errors.command = 'Only the program here; put each of its arguments on its own line below.';
    const args = linesOf(values.args).map((l) => l.text);
    const env = parseEnvLines(values.env);
    if ('error' in env) errors.env = env.error;
    else if (command) config = { transport: 'stdio', command, args, env: env.env };
  } else {
    const url = values.url.trim();
    if (!url) errors.url = 'The server’s Streamable HTTP endpoint, e.g. http://127.0.0.1:3001/mcp.';
    else if (!McpHttpConfigSchema.shape.url.safeParse(url).success) errors.url = 'An http:// or https:// URL, e.g. http://127.0.0.1:3001/mcp.';
    const headers = parseHeaderLines(values.headers);
    if ('error' in headers) errors.headers = headers.error;
    else if (!errors.url) config = { transport: 'http', url, headers: headers.headers };
  }
  if (Object.keys(errors).length > 0 || config === null) return { errors };
  const parsed = commands['mcp.servers.add'].request.safeParse({ name, config });
  if (!parsed.success) return { errors: { form: describeZodError(parsed.error) } };
  return { request: parsed.data };
}
