/**
 * The Electron preload. Runs sandboxed (bundled to one CommonJS file with no externals, so
 * `sandbox: true` holds) and exposes one typed object, `window.agentplane`, built from the IPC
 * contract. Nothing else crosses: no ipcRenderer, no channel names, no Node. Answers and events
 * pass through as they arrived; the renderer's contract client validates both.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { commandNames, type CommandName } from '../src-shared/ipc/contract';
import type { RawChannelHandlers } from '../src-shared/ipc/event-stream';
import { IPC_COMMAND_CHANNEL, IPC_EVENT_CHANNEL, type PreloadApi } from '../src-shared/ipc/preload-api';

const invoke = (name: CommandName, request: unknown): Promise<unknown> => ipcRenderer.invoke(IPC_COMMAND_CHANNEL, name, request);

const commands = Object.fromEntries(
  commandNames.map((name) => [name, (request: unknown) => invoke(name, request)]),
) as unknown as PreloadApi['commands'];

const api: PreloadApi = {
  host: 'electron',
  commands,
  events: {
    connect(handlers: RawChannelHandlers) {
      const listener = (_event: IpcRendererEvent, message: unknown) => handlers.onMessage(message);
      ipcRenderer.on(IPC_EVENT_CHANNEL, listener);
      // The listener is in place: everything the main process sends from now on arrives.
      queueMicrotask(() => handlers.onOpen());
      return {
        close() {
          ipcRenderer.removeListener(IPC_EVENT_CHANNEL, listener);
          handlers.onClose();
        },
      };
    },
  },
};

contextBridge.exposeInMainWorld('agentplane', api);
