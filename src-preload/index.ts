/**
 * The Electron preload. Runs sandboxed (bundled to one CommonJS file with no externals, so
 * `sandbox: true` holds) and exposes one typed object, `window.agentplane`, built from the IPC
 * contract. Nothing else crosses: no ipcRenderer, no channel names, no Node.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { commandNames, type CommandName, type EventEnvelope } from '../src-shared/ipc/contract';
import { IPC_COMMAND_CHANNEL, IPC_EVENT_CHANNEL, type PreloadApi } from '../src-shared/ipc/preload-api';
import { openResumableEvents, type SinceAnswer } from '../src-shared/ipc/event-stream';
import type { EventStreamHandlers } from '../src-shared/ipc/client';

const invoke = (name: CommandName, request: unknown): Promise<unknown> => ipcRenderer.invoke(IPC_COMMAND_CHANNEL, name, request);

const commands = Object.fromEntries(
  commandNames.map((name) => [name, (request: unknown) => invoke(name, request)]),
) as unknown as PreloadApi['commands'];

async function since(epoch: string | null, afterSeq: number): Promise<SinceAnswer> {
  const result = (await invoke('events.since', { epoch, afterSeq })) as { ok: boolean; value?: SinceAnswer };
  if (!result.ok || !result.value) throw new Error('events.since failed');
  return result.value;
}

const api: PreloadApi = {
  host: 'electron',
  commands,
  events: {
    open(handlers: EventStreamHandlers) {
      return openResumableEvents(
        {
          connect(raw) {
            const listener = (_event: IpcRendererEvent, envelope: EventEnvelope) => raw.onEvent(envelope);
            ipcRenderer.on(IPC_EVENT_CHANNEL, listener);
            queueMicrotask(() => raw.onOpen());
            return {
              close() {
                ipcRenderer.removeListener(IPC_EVENT_CHANNEL, listener);
                raw.onClose();
              },
            };
          },
        },
        handlers,
        { since },
      );
    },
  },
};

contextBridge.exposeInMainWorld('agentplane', api);
