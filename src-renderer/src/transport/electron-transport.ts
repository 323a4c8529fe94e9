/** The contract over Electron IPC, through the one object the preload exposes. */
import type { ContractTransport } from '../../../src-shared/ipc/client';
import type { PreloadApi } from '../../../src-shared/ipc/preload-api';

export function createElectronTransport(api: PreloadApi): ContractTransport {
  return {
    invoke: (command, request) => (api.commands[command] as (r: unknown) => Promise<unknown>)(request),
    connectEvents: (handlers) => api.events.connect(handlers),
  };
}
