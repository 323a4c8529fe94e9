/**
 * Stable error codes, the one list every boundary speaks (IPC, the web bridge, the CLI's
 * `--json` output). Codes are append-only; renaming one is a breaking change for every script
 * that matched on it. Plain values: the schemas that carry them are in errors.ts.
 */
export const ErrorCode = {
  /** The request did not match the command's schema; the message names the field. */
  BadRequest: 'AP_BAD_REQUEST',
  /** No command of that name exists in the contract. */
  UnknownCommand: 'AP_UNKNOWN_COMMAND',
  /** Missing or wrong credential (bridge token, session). */
  Unauthorized: 'AP_UNAUTHORIZED',
  /** The caller is known but not allowed here (Host, Origin, IPC sender frame). */
  Forbidden: 'AP_FORBIDDEN',
  /** The request body exceeded the size cap. */
  PayloadTooLarge: 'AP_PAYLOAD_TOO_LARGE',
  /** Too many requests; back off. */
  RateLimited: 'AP_RATE_LIMITED',
  /** The thing named does not exist. */
  NotFound: 'AP_NOT_FOUND',
  /** The thing exists but is not in a state that allows the action. */
  Conflict: 'AP_CONFLICT',
  /** The plane failed; the detail is in the operator's log, never in the answer. */
  Internal: 'AP_INTERNAL',
  /** The plane is shutting down or not ready. */
  Unavailable: 'AP_UNAVAILABLE',
  /** Another live plane holds this data dir's lock; the message names its URL and pid. */
  PlaneRunning: 'AP_PLANE_RUNNING',
  /** A peer's port is taken (by a running peer of this plane or another process); the message names the port. */
  PortInUse: 'AP_PORT_IN_USE',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/**
 * What a refusal means beyond its code, where a caller must act on the difference and must not
 * parse the message to learn it: an optional `reason` beside `{code, message}`. Append-only,
 * like the codes.
 */
export const ErrorReason = {
  /** Forbidden because a halt is in force for the agent or the caller: stop, do not retry. */
  Halted: 'halted',
  /** Unavailable because the plane is shutting down: try again later, or elsewhere. */
  Draining: 'draining',
} as const;

export type ErrorReason = (typeof ErrorReason)[keyof typeof ErrorReason];
