/**
 * What of an observed ACP message the journal keeps. The journal is append-only and exported
 * whole, so two things never enter it: secrets (an authenticate call's payload; environment
 * values handed to terminal/create and to MCP servers, and MCP servers' HTTP headers), which
 * become "[redacted]"; and bulk (file bodies, images, audio, terminal output past a cap, any
 * string past 64 KB), which becomes a stand-in `{$digest, $size, $omitted}` — the sha256 and
 * byte size of the UTF-8 text, so a copy kept elsewhere can still be matched to the record.
 *
 * Only the journaled copy is changed: the tap forwards the original bytes untouched.
 */
import { createHash } from 'node:crypto';

export const REDACTED = '[redacted]';
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

function isObject(value: Json): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function capString(value: Json, cap: number, why: string): Json {
  return typeof value === 'string' && Buffer.byteLength(value, 'utf8') > cap ? standIn(value, why) : value;
}

/** `[{name, value}]` (ACP v1's EnvVariable and HttpHeader) or a plain map: every value redacted, names kept. */
function redactValues(list: Json): Json {
  if (Array.isArray(list)) return list.map((item) => (isObject(item) && 'value' in item ? { ...item, value: REDACTED } : item));
  if (isObject(list)) return Object.fromEntries(Object.keys(list).map((key) => [key, REDACTED]));
  return list;
}

function redactMcpServers(servers: Json): Json {
  if (!Array.isArray(servers)) return servers;
  return servers.map((server) => {
    if (!isObject(server)) return server;
    const out: JsonObject = { ...server };
    if ('env' in out) out.env = redactValues(out.env);
    if ('headers' in out) out.headers = redactValues(out.headers);
    return out;
  });
}

/** Every field but the ones that say which method, not what was presented. */
function redactAuthPayload(payload: Json): Json {
  if (!isObject(payload)) return payload === undefined ? payload : REDACTED;
  return Object.fromEntries(Object.entries(payload).map(([key, value]) => [key, key === 'methodId' ? value : REDACTED]));
}

/** The generic pass: media always digested, any string past STRING_CAP digested. */
function capTree(value: Json): Json {
  if (typeof value === 'string') return capString(value, STRING_CAP, `string over ${STRING_CAP} bytes`);
  if (Array.isArray(value)) return value.map(capTree);
  if (!isObject(value)) return value;
  if (typeof value.$digest === 'string' && typeof value.$omitted === 'string') return value;
  const out: JsonObject = {};
  const media = value.type === 'image' || value.type === 'audio';
  for (const [key, child] of Object.entries(value)) {
    if (media && key === 'data' && typeof child === 'string') out[key] = standIn(child, `${String(value.type)} data`);
    else if (key === 'blob' && typeof child === 'string') out[key] = standIn(child, 'binary resource');
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
  if (!isObject(message)) return capTree(message);
  const out: JsonObject = { ...message };
  if ((role.kind === 'request' || role.kind === 'notification') && isObject(out.params)) {
    const params: JsonObject = { ...out.params };
    if (role.method === 'authenticate') out.params = redactAuthPayload(params);
    else {
      if (role.method === 'terminal/create' && 'env' in params) params.env = redactValues(params.env);
      if ('mcpServers' in params) params.mcpServers = redactMcpServers(params.mcpServers);
      if (role.method === 'fs/write_text_file') params.content = capString(params.content, FILE_CAP, `file content over ${FILE_CAP} bytes`);
      out.params = params;
    }
  } else if (role.kind === 'request' && role.method === 'authenticate') {
    out.params = redactAuthPayload(out.params);
  }
  if (role.kind === 'response' && isObject(out.result)) {
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

const SECRET_FLAG = /key|token|secret|password|auth/i;

/**
 * The agent command as tap/started records it: the value of any flag whose name looks like a
 * secret (`--api-key V`, `--token=V`) is redacted, since editors put credentials on agent
 * command lines.
 */
export function redactedCommand(command: readonly string[]): string[] {
  const out: string[] = [];
  let redactNext = false;
  for (const arg of command) {
    if (redactNext && !arg.startsWith('-')) {
      out.push(REDACTED);
      redactNext = false;
      continue;
    }
    redactNext = false;
    const flag = /^(--?[^=]+)(=.*)?$/s.exec(arg);
    if (flag && SECRET_FLAG.test(flag[1]!)) {
      if (flag[2] !== undefined) out.push(`${flag[1]}=${REDACTED}`);
      else {
        out.push(arg);
        redactNext = true;
      }
      continue;
    }
    out.push(arg);
  }
  return out;
}
