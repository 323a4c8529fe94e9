/**
 * The one error type main-side code throws on purpose. It carries a stable code from the
 * shared list, so the dispatcher can put it across a boundary as `{code, message}` without
 * guessing. Anything else that escapes a handler is an internal fault: logged here, answered
 * with a fixed sentence there.
 */
import type { ErrorCode } from '../../src-shared/ipc/errors';

export class PlaneError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'PlaneError';
  }
}
