/**
 * The fixed parts of the A2A 1.0 JSON-RPC wire this server speaks: the protocol version it
 * answers, the error codes, and the error a method throws to answer with one of them.
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
} as const;

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}
