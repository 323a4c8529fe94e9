/**
 * The shape of the one object the Electron preload exposes as `window.agentplane`. It is built
 * by iterating the contract, so it has exactly one function per command; the renderer never
 * sees `ipcRenderer`, a channel name or a generic `send`. Both halves hand over raw answers and
 * raw event messages: the contract client in the renderer validates them (client.ts).
 */
import type { CommandName, CommandRequest } from './contract';
import type { RawChannelHandlers } from './event-stream';

export const IPC_COMMAND_CHANNEL = 'agentplane:command';
export const IPC_EVENT_CHANNEL = 'agentplane:event';

export interface PreloadApi {
  readonly host: 'electron';
  readonly commands: { readonly [K in CommandName]: (request: CommandRequest<K>) => Promise<unknown> };
  /** One connection of the event channel; the client resumes by journal seq and reconnects. */
  readonly events: { connect(handlers: RawChannelHandlers): { close(): void } };
}
