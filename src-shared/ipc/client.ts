/**
 * The contract client, written once over a transport interface (the MCP SDK's pattern:
 * protocol core above, thin transports below). It is the one door to the plane (docs/DESIGN.md):
 * the renderer (Electron IPC, the web bridge), the CLI (HTTP to a running plane, or a plane of
 * its own in-process), the REPL and tests (an in-memory linked pair, message-transport.ts) all
 * call through `PlaneClient` and cannot tell which transport they have.
 *
 * Every answer is validated here against the contract's response schema for the command sent;
 * an answer of any other shape is a failure naming the command, never a value handed on. A
 * transport moves bytes and nothing else: it neither checks nor casts what it carries.
 */
import { describeZodError, ErrorCode, type ErrorBody } from './errors';
import { commands, type CommandName, type CommandRequest, type CommandResponse } from './contract';
import { openResumableEvents, type EventStreamHandlers, type RawChannelHandlers, type ReconnectTiming } from './event-stream';
import { FailureSchema, resultSchemaOf, type Result } from './result';

export type { ConnectionState, EventStreamHandlers, RawChannelHandlers, SyncInfo } from './event-stream';

export interface ContractTransport {
  /** Sends one command; resolves with the raw (unvalidated) answer envelope; rejects when the plane cannot be reached. */
  invoke(command: CommandName, request: unknown): Promise<unknown>;
  /** Opens one connection of the event channel; the client validates what arrives and reconnects. */
  connectEvents(handlers: RawChannelHandlers): { close(): void };
}

export class ContractError extends Error {
  constructor(
    readonly code: ErrorBody['code'],
    message: string,
  ) {
    super(message);
    this.name = 'ContractError';
  }
}

export interface PlaneClient {
  call<K extends CommandName>(command: K, request: CommandRequest<K>): Promise<CommandResponse<K>>;
  tryCall<K extends CommandName>(command: K, request: CommandRequest<K>): Promise<Result<CommandResponse<K>>>;
  /** The live event stream, resumed by journal seq across reconnects; returns its close. */
  events(handlers: EventStreamHandlers, timing?: ReconnectTiming): () => void;
}

export function createPlaneClient(transport: ContractTransport): PlaneClient {
  async function tryCall<K extends CommandName>(command: K, request: CommandRequest<K>): Promise<Result<CommandResponse<K>>> {
    let raw: unknown;
    try {
      raw = await transport.invoke(command, request);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, error: { code: ErrorCode.Unavailable, message: `plane unreachable: ${message}` } };
    }
    const parsed = resultSchemaOf(commands[command].response).safeParse(raw);
    if (parsed.success) return parsed.data as Result<CommandResponse<K>>;
    // A refusal in the contract's shape is the plane's refusal, with its code.
    const failure = FailureSchema.safeParse(raw);
    if (failure.success) return failure.data;
    return {
      ok: false,
      error: {
        code: ErrorCode.Internal,
        message: `the plane's answer to ${command} does not match the contract (${describeZodError(parsed.error).slice(0, 300)}); not using it`,
      },
    };
  }
  return {
    tryCall,
    async call(command, request) {
      const result = await tryCall(command, request);
      if (result.ok) return result.value;
      throw new ContractError(result.error.code, result.error.message);
    },
    events: (handlers, timing = {}) =>
      openResumableEvents({ connect: (raw) => transport.connectEvents(raw) }, handlers, {
        ...timing,
        changes: (afterSeq) => tryCall('journal.changes', { afterSeq }),
      }),
  };
}
