/**
 * What of an observed ACP message the journal keeps. The journal is append-only and exported
 * whole, so two things never enter it:
 * - secrets, each replaced by a marker naming what was removed (`[redacted: env API_KEY]`;
 *   base/secret-redaction.ts says how they are recognised): an authenticate call's payload;
 *   environment values handed to terminal/create and to MCP servers, MCP servers' HTTP headers,
 *   their command-line arguments and URLs as a command line is redacted; any member of a `_meta`
 *   object whose name says secret (clients and agents put keys there: `_meta.apiKey`); and
 *   anything in any string shaped like a known credential format (a key pasted into a prompt,
 *   a `.env` an agent read);
 * - bulk (file bodies, images, audio, terminal output past a cap, any string past 64 KB), which
 *   becomes a stand-in `{$digest, $size, $omitted}` — the sha256 and byte size of the UTF-8
 *   text, so a copy kept elsewhere can still be matched to the record.
 *
 * Only the journaled copy is changed: the tap forwards the original bytes untouched. The walks
 * here recurse: the message reaching them was parsed only after its nesting was bounded
 * (session-runs.ts, OBSERVED_MAX_DEPTH), so their depth is too.
 */
import { createHash } from 'node:crypto';
import { marker, redactedArgv, redactEmbeddedCredentials, SECRET_NAME } from '../../base/secret-redaction';
import { isRecord } from '../../../src-shared/plain-object';

export const REDACTED = marker('authenticate payload');
export const STRING_CAP = 64 * 1024;
export const FILE_CAP = 16 * 1024;
export const TERMINAL_CAP = 16 * 1024;

export interface StandIn {
  $digest: string;
  $size: number;
  $omitted: string;
}

export function standIn(text: string, why: string): StandIn {
  const bytes = Buffer.from(text, 'utf8');
  return { $digest: createHash('sha256').update(bytes).digest('hex'), $size: bytes.length, $omitted: why };
}

type Json = unknown;
type JsonObject = Record<string, Json>;

function capString(value: Json, cap: number, why: string): Json {
  return typeof value === 'string' && Buffer.byteLength(value, 'utf8') > cap ? standIn(value, why) : value;
}

/** `[{name, value}]` (ACP v1's EnvVariable and HttpHeader) or a plain map: every value redacted, names kept. */
function redactValues(list: Json, what: 'env' | 'header'): Json {
  if (Array.isArray(list)) return list.map((item) => (isRecord(item) && 'value' in item ? { ...item, value: marker(`${what} ${String(item.name)}`) } : item));
  if (isRecord(list)) return Object.fromEntries(Object.keys(list).map((key) => [key, marker(`${what} ${key}`)]));
  return list;
}

/** An MCP server as session/new hands it over: its env and headers redacted, its args and URL as a command line. */
function redactMcpServers(servers: Json): Json {
  if (!Array.isArray(servers)) return servers;
  return servers.map((server) => {
    if (!isRecord(server)) return server;
    const out: JsonObject = { ...server };
    if ('env' in out) out.env = redactValues(out.env, 'env');
    if ('headers' in out) out.headers = redactValues(out.headers, 'header');
    if (Array.isArray(out.args) && out.args.every((a) => typeof a === 'string')) out.args = redactedArgv(out.args as string[]);
    if (typeof out.url === 'string') out.url = redactedArgv([out.url])[0]!;
    return out;
  });
}

/** A `_meta` object: every member whose name says secret is replaced, at any depth below it. */
function redactMeta(value: Json, path: string): Json {
  if (Array.isArray(value)) return value.map((item) => redactMeta(item, path));
  if (!isRecord(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) out[key] = SECRET_NAME.test(key) ? marker(`${path}.${key}`) : redactMeta(child, `${path}.${key}`);
  return out;
}

/** Every field but the ones that say which method, not what was presented. */
function redactAuthPayload(payload: Json): Json {
  if (!isRecord(payload)) return payload === undefined ? payload : REDACTED;
  return Object.fromEntries(Object.entries(payload).map(([key, value]) => [key, key === 'methodId' ? value : REDACTED]));
}

/**
 * The generic pass: media always digested, any string past STRING_CAP digested, credentials in
 * any other string replaced, and the secret-named members of every `_meta` redacted.
 */
function capTree(value: Json): Json {
  if (typeof value === 'string') {
    const capped = capString(value, STRING_CAP, `string over ${STRING_CAP} bytes`);
    return typeof capped === 'string' ? redactEmbeddedCredentials(capped) : capped;
  }
  if (Array.isArray(value)) return value.map(capTree);
  if (!isRecord(value)) return value;
  if (typeof value.$digest === 'string' && typeof value.$omitted === 'string') return value;
  const out: JsonObject = {};
  const media = value.type === 'image' || value.type === 'audio';
  for (const [key, child] of Object.entries(value)) {
    if (media && key === 'data' && typeof child === 'string') out[key] = standIn(child, `${String(value.type)} data`);
    else if (key === 'blob' && typeof child === 'string') out[key] = standIn(child, 'binary resource');
    else if (key === '_meta') out[key] = capTree(redactMeta(child, '_meta'));
    else out[key] = capTree(child);
  }
  return out;
}

/** What a message is on the wire, and for a response, the method of the request it answers. */
export interface MessageRole {
  kind: 'request' | 'notification' | 'response' | 'other';
  method: string | null;
}

/** The journaled copy of one message: redacted, then capped. The input is not modified. */
export function journaledMessage(message: Json, role: MessageRole): Json {
  if (!isRecord(message)) return capTree(message);
  const out: JsonObject = { ...message };
  if ((role.kind === 'request' || role.kind === 'notification') && isRecord(out.params)) {
    const params: JsonObject = { ...out.params };
    if (role.method === 'authenticate') out.params = redactAuthPayload(params);
    else {
      if (role.method === 'terminal/create' && 'env' in params) params.env = redactValues(params.env, 'env');
      if ('mcpServers' in params) params.mcpServers = redactMcpServers(params.mcpServers);
      if (role.method === 'fs/write_text_file') params.content = capString(params.content, FILE_CAP, `file content over ${FILE_CAP} bytes`);
      out.params = params;
    }
  } else if (role.kind === 'request' && role.method === 'authenticate') {
    out.params = redactAuthPayload(out.params);
  }
  if (role.kind === 'response' && isRecord(out.result)) {
    const result: JsonObject = { ...out.result };
    if (role.method === 'authenticate') out.result = redactAuthPayload(result);
    else {
      if (role.method === 'fs/read_text_file') result.content = capString(result.content, FILE_CAP, `file content over ${FILE_CAP} bytes`);
      if (role.method === 'terminal/output') result.output = capString(result.output, TERMINAL_CAP, `terminal output over ${TERMINAL_CAP} bytes`);
      out.result = result;
    }
  }
  return capTree(out);
}

/**
 * The agent command as tap/started records it, redacted as any command line is
 * (base/secret-redaction.ts): editors put credentials on agent command lines, as flags, as
 * `env NAME=value` prefixes and as bare arguments.
 */
export function redactedCommand(command: readonly string[]): string[] {
  return redactedArgv(command);
}
