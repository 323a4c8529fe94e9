/**
 * The contract client, written once over a transport interface (the MCP SDK's pattern:
 * protocol core above, thin transports below). The Electron preload and the web bridge are
 * two `ContractTransport`s; everything above them (the renderer's store, tests) speaks
 * through `PlaneClient` and cannot tell which one it has.
 */
import { ErrorCode, type ErrorBody } from './errors';
import {
  commands,
  type CommandName,
  type CommandRequest,
  type CommandResponse,
  type EventEnvelope,
} from './contract';
import { FailureSchema, resultSchemaOf, type Result } from './result';

export type ConnectionState = 'connecting' | 'connected' | 'reconnecting' | 'closed';

export interface EventStreamHandlers {
  /** Called for every event in seq order, replayed ones included. */
  onEvent(event: EventEnvelope): void;
  /** The plane cannot replay what was missed (it restarted or the window passed): re-read state. */
  onReset(epoch: string, latestSeq: number): void;
  onState(state: ConnectionState): void;
}

export interface ContractTransport {
  /** Sends one command; resolves with the raw (unvalidated) answer envelope. */
  invoke(command: CommandName, request: unknown): Promise<unknown>;
  /**
   * Opens the event stream and keeps it open (reconnecting as needed), resuming after the
   * last seq it delivered. Returns a function that closes it for good.
   */
  openEvents(handlers: EventStreamHandlers): () => void;
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
  events(handlers: EventStreamHandlers): () => void;
}

export function createPlaneClient(transport: ContractTransport): PlaneClient {
  async function tryCall<K extends CommandName>(
    command: K,
    request: CommandRequest<K>,
  ): Promise<Result<CommandResponse<K>>> {
    let raw: unknown;
    try {
      raw = await transport.invoke(command, request);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { ok: false, error: { code: ErrorCode.Unavailable, message: `plane unreachable: ${message}` } };
    }
    const parsed = resultSchemaOf(commands[command].response).safeParse(raw);
    if (parsed.success) return parsed.data as Result<CommandResponse<K>>;
    const failure = FailureSchema.safeParse(raw);
    if (failure.success) return failure.data;
    return {
      ok: false,
      error: { code: ErrorCode.Internal, message: `the plane's answer to ${command} did not match the contract` },
    };
  }
  return {
    tryCall,
    async call(command, request) {
      const result = await tryCall(command, request);
      if (result.ok) return result.value;
      throw new ContractError(result.error.code, result.error.message);
    },
    events: (handlers) => transport.openEvents(handlers),
  };
}
