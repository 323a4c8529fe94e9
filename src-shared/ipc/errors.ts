/**
 * Stable error codes, the one list every boundary speaks (IPC, the web bridge, the CLI's
 * `--json` output). A failure crosses a boundary as plain `{code, message}`: never a thrown
 * object, never free text a caller must parse. Codes are append-only; renaming one is a
 * breaking change for every script that matched on it.
 */
import { z } from 'zod';

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

const codes = Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]];
export const ErrorCodeSchema = z.enum(codes);

export const ErrorBodySchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** HTTP status for each code, used by the web bridge so plain HTTP clients can branch too. */
export const httpStatusOf: Record<ErrorCode, number> = {
  AP_BAD_REQUEST: 400,
  AP_UNKNOWN_COMMAND: 404,
  AP_UNAUTHORIZED: 401,
  AP_FORBIDDEN: 403,
  AP_PAYLOAD_TOO_LARGE: 413,
  AP_RATE_LIMITED: 429,
  AP_NOT_FOUND: 404,
  AP_CONFLICT: 409,
  AP_INTERNAL: 500,
  AP_UNAVAILABLE: 503,
  AP_PLANE_RUNNING: 409,
  AP_PORT_IN_USE: 409,
};

/**
 * A zod failure turned into one line that names every offending path, e.g.
 * `limit: Too big: expected number to be <=1000`. Paths are what a person fixes.
 */
export function describeZodError(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}
