/**
 * The fixed parts of the A2A 1.0 JSON-RPC wire this server speaks: the protocol version it
 * answers, the error codes, the error a method throws to answer with one of them, and the
 * error's `data` as the specification's JSON-RPC binding has it (its "Error Handling" section):
 * an ARRAY of ProtoJSON `Any` objects, here one `google.rpc.ErrorInfo`.
 *
 * ErrorInfo's domain: the specification's own (`a2a-protocol.org`) for the errors of its table
 * (TaskNotFound, TaskNotCancelable, …, reason in UPPER_SNAKE_CASE without "Error", as the gRPC and
 * HTTP bindings require); this project's domain (`agentplane.io`, the reverse of the
 * `io.agentplane…` metadata keys) for JSON-RPC's own codes, whose meaning is ours to refine. The
 * detail a thrown error carries (the field, the task id, …) is ErrorInfo's `metadata`, every
 * value a string (ErrorInfo's metadata is `map<string, string>`): a non-string is its JSON.
 */

export type Json = Record<string, unknown>;

export const A2A_PROTOCOL_VERSION = '1.0';

/** A2A 1.0 error codes (specification §5.4 / a2a.proto), and JSON-RPC's own. */
export const A2A_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotSupported: -32003,
  unsupportedOperation: -32004,
  contentTypeNotSupported: -32005,
  versionNotSupported: -32009,
  // This plane's admission refusals, from the range JSON-RPC leaves to implementations. A2A 1.0
  // claims -32001..-32099 for its own table, so a numeral alone may mean something else to
  // another server: each is read as this plane's only with its ErrorInfo (PLANE_REFUSALS).
  quotaExhausted: -32029,
  halted: -32030,
  draining: -32031,
} as const;

/** The specification's ErrorInfo domain, for the errors of its own table. */
export const A2A_ERROR_DOMAIN = 'a2a-protocol.org';
/** This project's ErrorInfo domain, for every error whose meaning the plane defines. */
export const PLANE_ERROR_DOMAIN = 'agentplane.io';
export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';

/** Each code's ErrorInfo reason and domain. */
const REASONS: Record<number, { reason: string; domain: string }> = {
  [A2A_ERRORS.parse]: { reason: 'JSON_PARSE', domain: PLANE_ERROR_DOMAIN },
  [A2A_ERRORS.invalidRequest]: { reason: 'INVALID_REQUEST', domain: PLANE_ERROR_DOMAIN },
  [A2A_ERRORS.methodNotFound]: { reason: 'METHOD_NOT_FOUND', domain: PLANE_ERROR_DOMAIN },
  [A2A_ERRORS.invalidParams]: { reason: 'INVALID_PARAMS', domain: PLANE_ERROR_DOMAIN },
  [A2A_ERRORS.internal]: { reason: 'INTERNAL', domain: PLANE_ERROR_DOMAIN },
  [A2A_ERRORS.taskNotFound]: { reason: 'TASK_NOT_FOUND', domain: A2A_ERROR_DOMAIN },
  [A2A_ERRORS.taskNotCancelable]: { reason: 'TASK_NOT_CANCELABLE', domain: A2A_ERROR_DOMAIN },
  [A2A_ERRORS.pushNotSupported]: { reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED', domain: A2A_ERROR_DOMAIN },
  [A2A_ERRORS.unsupportedOperation]: { reason: 'UNSUPPORTED_OPERATION', domain: A2A_ERROR_DOMAIN },
  [A2A_ERRORS.contentTypeNotSupported]: { reason: 'CONTENT_TYPE_NOT_SUPPORTED', domain: A2A_ERROR_DOMAIN },
  [A2A_ERRORS.versionNotSupported]: { reason: 'VERSION_NOT_SUPPORTED', domain: A2A_ERROR_DOMAIN },
  [A2A_ERRORS.quotaExhausted]: { reason: 'QUOTA_EXHAUSTED', domain: PLANE_ERROR_DOMAIN },
  [A2A_ERRORS.halted]: { reason: 'HALTED', domain: PLANE_ERROR_DOMAIN },
  [A2A_ERRORS.draining]: { reason: 'DRAINING', domain: PLANE_ERROR_DOMAIN },
};

/**
 * The three ways admission refuses a run that policy would allow, each asking something else of
 * the caller (docs/GOVERNED-RUNTIME.md, "A2A, being called"): `quota` wait and retry, `halted`
 * stop and do not retry, `draining` go elsewhere or try later. The identity is the pair, the
 * code and the ErrorInfo (domain and reason), never the code alone. Each message is one fixed
 * sentence with no counter, no operator reason and no instance name: the counterparty learns the
 * outcome, not the plane's internals.
 */
export type PlaneRefusal = 'quota' | 'halted' | 'draining';
export const PLANE_REFUSALS: Record<PlaneRefusal, { code: number; message: string }> = {
  quota: { code: A2A_ERRORS.quotaExhausted, message: 'This caller has as many open tasks as this plane admits; retry after one of them ends.' },
  halted: { code: A2A_ERRORS.halted, message: 'This agent is halted for this caller; do not retry.' },
  draining: { code: A2A_ERRORS.draining, message: 'This plane is shutting down and admits no new task; try again later or elsewhere.' },
};

/** The refusal an admission answers with. */
export function planeRefusal(kind: PlaneRefusal): RpcError {
  return new RpcError(PLANE_REFUSALS[kind].code, PLANE_REFUSALS[kind].message);
}

/**
 * Which of this plane's admission refusals a remote error is, or null: only the marked pair
 * counts (the code AND an ErrorInfo in this plane's domain with that code's reason). A bare
 * -32029 from a server that means something else by it is no refusal of ours.
 */
export function planeRefusalOf(error: { code?: unknown; data?: unknown }): PlaneRefusal | null {
  const info = errorInfoOf(error.data);
  for (const [kind, { code }] of Object.entries(PLANE_REFUSALS) as [PlaneRefusal, { code: number }][]) {
    if (error.code === code && info?.domain === PLANE_ERROR_DOMAIN && info.reason === REASONS[code]?.reason) return kind;
  }
  return null;
}

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

export interface ErrorInfo {
  '@type': typeof ERROR_INFO_TYPE;
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

/** An error's `error.data`: one ErrorInfo holding the thrown detail as string metadata. */
export function errorDataOf(error: RpcError): ErrorInfo[] {
  const { reason, domain } = REASONS[error.code] ?? { reason: 'UNKNOWN', domain: PLANE_ERROR_DOMAIN };
  const metadata: Record<string, string> = {};
  for (const [key, value] of Object.entries(error.data ?? {})) {
    if (value !== undefined) metadata[key] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  return [{ '@type': ERROR_INFO_TYPE, reason, domain, metadata }];
}

/** A JSON-RPC error response for `error`. */
export function rpcErrorBody(id: unknown, error: RpcError): Json {
  return { jsonrpc: '2.0', id: id ?? null, error: { code: error.code, message: error.message, data: errorDataOf(error) } };
}

/**
 * What a remote error's `data` says, read leniently: the array form (the first ErrorInfo in it),
 * or the bare object an older server sent (its string-valued fields as metadata). Null when it
 * says nothing readable.
 */
export function errorInfoOf(data: unknown): { reason?: string; domain?: string; metadata: Record<string, string> } | null {
  const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
  const stringsOf = (v: unknown): Record<string, string> => {
    const out: Record<string, string> = {};
    if (isObject(v)) for (const [k, x] of Object.entries(v)) if (typeof x === 'string') out[k] = x;
    return out;
  };
  if (Array.isArray(data)) {
    const info = data.find((d): d is Json => isObject(d) && d['@type'] === ERROR_INFO_TYPE);
    if (!info) return null;
    return {
      ...(typeof info.reason === 'string' ? { reason: info.reason } : {}),
      ...(typeof info.domain === 'string' ? { domain: info.domain } : {}),
      metadata: stringsOf(info.metadata),
    };
  }
  if (isObject(data)) return { metadata: stringsOf(data) };
  return null;
}
