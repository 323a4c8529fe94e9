/**
 * How the web bridge answers a refusal or a failure: the contract's error body, `{ok: false,
 * error}`, under the HTTP status its code maps to. Used by web-bridge.ts (its own refusals and
 * error handler) and by api-plugin.ts (the token check, a failed command, an unknown /api path),
 * so every answer of the bridge that is an error has the same shape.
 */
import { httpStatusOf, type ErrorBody } from '../../src-shared/ipc/errors';

export function sendError(reply: { code(n: number): { send(body: unknown): unknown } }, error: ErrorBody): unknown {
  return reply.code(httpStatusOf[error.code]).send({ ok: false, error });
}
