/**
 * The shape of the one object the Electron preload exposes as `window.agentplane`. It is built
 * by iterating the contract, so it has exactly one function per command; the renderer never
 * sees `ipcRenderer`, a channel name or a generic `send`.
 */
import type { EventStreamHandlers } from './client';
import type { CommandName, CommandRequest } from './contract';

export const IPC_COMMAND_CHANNEL = 'agentplane:command';
export const IPC_EVENT_CHANNEL = 'agentplane:event';

export interface PreloadApi {
  readonly host: 'electron';
  readonly commands: { readonly [K in CommandName]: (request: CommandRequest<K>) => Promise<unknown> };
  readonly events: { open(handlers: EventStreamHandlers): () => void };
}
