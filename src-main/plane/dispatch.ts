/**
 * The one place a command crosses from a transport into the plane. Every transport
 * (Electron IPC, the web bridge, the CLI talking to a running plane) calls `dispatchCommand`,
 * which: refuses unknown names, parses the request with the contract's schema (a failure
 * names the field), runs the handler, and maps every failure to `{code, message}`. A handler
 * never sees an unvalidated request, and a caller never sees a stack trace.
 */
import {
  commands,
  isCommandName,
  type CommandName,
  type CommandResponse,
  type ParsedRequest,
} from '../../src-shared/ipc/contract';
import { ErrorCode, describeZodError } from '../../src-shared/ipc/errors';
import type { Result } from '../../src-shared/ipc/result';
import { PlaneError } from '../base/plane-error';
import type { RecordBody } from '../../src-shared/journal/records';

/** The door a run came through, as RunAdmitted records it. */
type RunTriggerVia = RecordBody<'RunAdmitted'>['trigger']['via'];

/** Who is calling, as far as the transport can tell; handlers may use it for audit. */
export interface CallContext {
  transport: 'electron' | 'web' | 'local';
  /**
   * Set by a protocol adapter running in this process (MCP, and A2A as it lands): who it
   * authenticated (`mcp:local`, `mcp:stdio`) and which door they came through. The run acts for
   * that principal, not for the person at this machine, and the journal says which door it was.
   * Absent for the UI and the CLI, which act as `user:local`.
   */
  caller?: { principal: string; via: RunTriggerVia };
}

/** A handler for every command: leaving one out does not compile. */
export type CommandHandlers = {
  [K in CommandName]: (request: ParsedRequest<K>, context: CallContext) => Promise<CommandResponse<K>> | CommandResponse<K>;
};

export type FaultLogger = (command: string, error: unknown) => void;

export async function dispatchCommand(
  handlers: CommandHandlers,
  name: string,
  rawRequest: unknown,
  context: CallContext,
  logFault: FaultLogger,
): Promise<Result<unknown>> {
  if (!isCommandName(name)) {
    return { ok: false, error: { code: ErrorCode.UnknownCommand, message: `unknown command "${truncate(name, 80)}"` } };
  }
  const parsed = commands[name].request.safeParse(rawRequest ?? {});
  if (!parsed.success) {
    return {
      ok: false,
      error: { code: ErrorCode.BadRequest, message: `${name}: ${describeZodError(parsed.error)}` },
    };
  }
  try {
    const handler = handlers[name] as (request: unknown, context: CallContext) => unknown;
    const value = await handler(parsed.data, context);
    return { ok: true, value };
  } catch (error) {
    if (error instanceof PlaneError) return { ok: false, error: { code: error.code, message: error.message, ...(error.reason !== undefined ? { reason: error.reason } : {}) } };
    logFault(name, error);
    return { ok: false, error: { code: ErrorCode.Internal, message: `${name} failed inside the plane; the plane's log has the detail` } };
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
