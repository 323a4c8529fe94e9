/**
 * The Electron main process: app lifecycle, the window, and IPC. The only folder that imports
 * 'electron'. The plane itself is built by the same composition root the CLI uses; this file
 * only connects it to a window. It also starts the local API (the web bridge) so the CLI and a
 * browser can act on the same plane while the app is open (DESIGN.md: one data dir, one plane).
 */
import { app, BrowserWindow, dialog, ipcMain, session, type IpcMainInvokeEvent } from 'electron';
import { join } from 'node:path';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { IPC_COMMAND_CHANNEL, IPC_EVENT_CHANNEL } from '../../src-shared/ipc/preload-api';
import { appRoot, appVersion, rendererDir, resolveDataDir } from '../base/app-paths';
import { createLogger } from '../base/logger';
import { createPlane, type Plane } from '../plane/plane';
import { removePlaneFile, writePlaneFile } from '../plane/plane-file';
import { startWebBridge, type WebBridge } from '../bridge/web-bridge';
import { isTrustedSender, lockDownContents, lockDownSession } from './window-security';

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  // A plane that cannot start (a data dir others can write, a journal that is not ours) says
  // why in a dialog and exits, instead of leaving a process with no window.
  main().catch((error: unknown) => {
    dialog.showErrorBox('AgentPlane could not start', error instanceof Error ? error.message : String(error));
    app.exit(1);
  });
}

async function main(): Promise<void> {
  await app.whenReady();
  const dataDir = resolveDataDir(undefined);
  const logger = createLogger(join(dataDir, 'plane.log'));
  const plane: Plane = await createPlane({ dataDir, version: appVersion(), host: 'electron', logger, demoPeers: process.env.AGENTPLANE_DEMO_PEERS !== '0' });
  const bridge: WebBridge = await startWebBridge({ plane, port: 0, rendererDir: rendererDir() });
  writePlaneFile(dataDir, { pid: process.pid, url: `http://127.0.0.1:${bridge.port}`, port: bridge.port, token: bridge.token, startedAt: plane.status().startedAt });

  lockDownSession(session.defaultSession);
  app.on('web-contents-created', (_event, contents) => lockDownContents(contents));

  const rendererIndex = join(rendererDir(), 'index.html');
  const window = new BrowserWindow({
    width: 1280,
    height: 800,
    title: 'AgentPlane',
    show: false,
    // Written out here, literally, so that a reader and a scanner see them at the one place a
    // window is made: the page gets no Node, runs sandboxed and isolated from the preload.
    webPreferences: {
      preload: join(appRoot(), 'out', 'preload', 'index.cjs'),
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      spellcheck: false,
    },
  });
  window.once('ready-to-show', () => window.show());

  ipcMain.handle(IPC_COMMAND_CHANNEL, async (event: IpcMainInvokeEvent, name: unknown, request: unknown) => {
    if (!isTrustedSender(event.senderFrame, window.webContents, rendererIndex)) {
      return { ok: false, error: { code: ErrorCode.Forbidden, message: 'IPC from an unexpected frame' } };
    }
    return plane.dispatch(typeof name === 'string' ? name : '', request, { transport: 'electron' });
  });
  const unsubscribe = plane.events.subscribe((envelope) => {
    if (!window.isDestroyed()) window.webContents.send(IPC_EVENT_CHANNEL, envelope);
  });

  app.on('second-instance', () => {
    if (window.isMinimized()) window.restore();
    window.focus();
  });

  let quitting = false;
  app.on('before-quit', (event) => {
    if (quitting) return;
    event.preventDefault();
    quitting = true;
    unsubscribe();
    void (async () => {
      await bridge.close();
      await plane.close();
      removePlaneFile(dataDir);
      app.exit(0);
    })();
  });
  app.on('window-all-closed', () => app.quit());

  await window.loadFile(rendererIndex);
}
