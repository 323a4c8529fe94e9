/**
 * JSON-RPC answers the MCP route writes itself, before a request reaches the SDK: a body that is
 * not JSON, too large, the wrong content type, a session that is not the caller's, too many
 * sessions, a request id used twice. Each is a JSON-RPC error object with a message naming what
 * was wrong, so an MCP client shows the cause rather than an HTTP framework's error shape.
 */
import type { ServerResponse } from 'node:http';

export const JSONRPC_PARSE_ERROR = -32700;
export const JSONRPC_INVALID_REQUEST = -32600;
export const JSONRPC_INTERNAL_ERROR = -32603;
/** The code the SDK and the 2025-11-25 transport use for "Session not found" and other transport-level refusals. */
export const MCP_SESSION_NOT_FOUND = -32001;
export const MCP_SERVER_ERROR = -32000;

/** 4 MiB, the SDK's own default for the bodies it reads itself. */
export const MCP_MAX_BODY_BYTES = 4 * 1024 * 1024;

/** The marker the route's content-type parser leaves when a body is not JSON, so the handler can answer -32700. */
export interface UnparsableBody {
  readonly unparsable: true;
}

export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return { unparsable: true } satisfies UnparsableBody;
  }
}

export function isUnparsable(body: unknown): body is UnparsableBody {
  return typeof body === 'object' && body !== null && (body as Partial<UnparsableBody>).unparsable === true && Object.keys(body).length === 1;
}

export function jsonRpcErrorBody(code: number, message: string, id: string | number | null = null, data?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', error: data === undefined ? { code, message } : { code, message, data }, id });
}

export function writeJsonRpcError(res: ServerResponse, status: number, code: number, message: string, options: { id?: string | number | null; headers?: Record<string, string>; data?: unknown } = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...options.headers }).end(jsonRpcErrorBody(code, message, options.id ?? null, options.data));
}

/** The JSON-RPC messages in a body: one object, or each element of a batch. */
export function messagesOf(body: unknown): Record<string, unknown>[] {
  const items = Array.isArray(body) ? body : [body];
  return items.filter((m): m is Record<string, unknown> => typeof m === 'object' && m !== null && !Array.isArray(m));
}

/** The ids of the requests (not notifications, not responses) in a body. */
export function requestIdsOf(body: unknown): (string | number)[] {
  return messagesOf(body)
    .filter((m) => typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number'))
    .map((m) => m.id as string | number);
}

export function firstRequestId(body: unknown): string | number | null {
  return requestIdsOf(body)[0] ?? null;
}
