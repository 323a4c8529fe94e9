/**
 * How a failure crosses a boundary (IPC, the web bridge, the CLI's `--json` output): plain
 * `{code, message}` (and, rarely, a `reason`) with a code of error-codes.ts, never a thrown object, never free text a
 * caller must parse. The codes are there, without zod, for code that only names one (the CLI's
 * program, which answers `--version` and usage errors before any schema is needed).
 */
import { z } from 'zod';
import { ErrorCode, ErrorReason } from './error-codes';

export { ErrorCode, ErrorReason } from './error-codes';

const codes = Object.values(ErrorCode) as [ErrorCode, ...ErrorCode[]];
export const ErrorCodeSchema = z.enum(codes);
const reasons = Object.values(ErrorReason) as [ErrorReason, ...ErrorReason[]];
export const ErrorReasonSchema = z.enum(reasons);

/**
 * `reason` is optional and rare: set only where a caller must tell two refusals of one code
 * apart (a halt from a policy denial, both Forbidden; a drain from a broken journal, both
 * Unavailable) without reading the message. A consumer that does not know it ignores it.
 */
export const ErrorBodySchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
  reason: ErrorReasonSchema.optional(),
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
