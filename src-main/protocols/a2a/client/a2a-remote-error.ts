/**
 * A remote A2A server's JSON-RPC error, said in one line for an effect's failure: its code, the
 * ErrorInfo reason and the field it names when it gives them, and its message. `error.data` is
 * read in both forms (a2a-wire.ts errorInfoOf): the 1.0 array holding a google.rpc.ErrorInfo,
 * and the bare object older servers (this plane's included) sent. What the remote says is
 * somebody else's text on its way into the journal: the reason must look like a reason, and
 * every part is capped.
 */
import { errorInfoOf } from '../a2a-wire';

const REASON = /^[A-Z][A-Z0-9_]{0,63}$/;

export function remoteErrorText(error: Record<string, unknown>): string {
  const code = typeof error.code === 'number' ? error.code : NaN;
  const message = typeof error.message === 'string' ? error.message.slice(0, 200) : '';
  const info = errorInfoOf(error.data);
  const reason = info?.reason !== undefined && REASON.test(info.reason) ? ` (${info.reason})` : '';
  const field = info?.metadata.field !== undefined ? ` [field ${info.metadata.field.slice(0, 100)}]` : '';
  return `${code}${reason}: ${message}${field}`;
}
