/**
 * The plane's peer errors as the Peers view says them. The plane answers with a stable code and
 * a message free of CLI flags; the remedy here names what a person can do in this view.
 */
import { ErrorCode, type ErrorBody } from '../../../src-shared/ipc/errors';

export const NEXT_FREE_PORT = 'use the next free port';

export function peerErrorText(error: ErrorBody): string {
  if (error.code === ErrorCode.PortInUse) return `${error.message}: choose another port or enable '${NEXT_FREE_PORT}'.`;
  return error.message;
}
