/**
 * The one error type main-side code throws on purpose. It carries a stable code from the
 * shared list, so the dispatcher can put it across a boundary as `{code, message}` (its `reason` too, when it has one) without
 * guessing. Anything else that escapes a handler is an internal fault: logged here, answered
 * with a fixed sentence there.
 */
import type { ErrorCode, ErrorReason } from '../../src-shared/ipc/errors';

export class PlaneError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    /** What the refusal means beyond its code, for a caller that must branch on it (errors.ts ErrorBody). */
    readonly reason?: ErrorReason,
  ) {
    super(message);
    this.name = 'PlaneError';
  }
}
