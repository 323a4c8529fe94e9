/**
 * The Electron main process: app lifecycle, the window, and IPC routing, nothing more. The only
 * folder that imports 'electron'. The plane (runtime, journal, peer supervisor, the local API
 * the CLI and a browser use) runs in a `utilityProcess` (plane-host-entry.ts), built by the same
 * composition root the CLI uses, so nothing it does (a synchronous SQLite lock wait, a large
 * fold) can freeze the windows. Commands from the renderer are routed to it as they arrived;
 * events come back the same way; the renderer's contract client validates both.
 */
import { app, BrowserWindow, dialog, ipcMain, safeStorage, session, utilityProcess, type IpcMainInvokeEvent } from 'electron';
import { join } from 'node:path';
import type { CommandName } from '../../src-shared/ipc/contract';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { IPC_COMMAND_CHANNEL, IPC_EVENT_CHANNEL } from '../../src-shared/ipc/preload-api';
import { appRoot, appVersion, rendererDir, resolveDataDir } from '../base/app-paths';
import { startPlaneHost } from '../plane/plane-host';
import type { KeySealer } from '../plane/provider-settings';
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
  const child = utilityProcess.fork(join(appRoot(), 'out', 'main', 'plane-host.js'), [], { serviceName: 'AgentPlane plane', stdio: 'inherit' });
  // Provider keys sealed with the OS keychain (safeStorage) where it is available; where it is
  // not (Linux without a secret service), the plane keeps them in its 0600 providers.json, as
  // headless. Linux's `basic_text` backend encrypts with a password written into Chromium, which
  // protects nothing the file's mode does not, so it is not called sealing (the view would lie).
  const weakBackend = process.platform === 'linux' && safeStorage.getSelectedStorageBackend() === 'basic_text';
  const sealer = safeStorage.isEncryptionAvailable() && !weakBackend ? keychainSealer() : undefined;
  const plane = await startPlaneHost(child, { dataDir, version: appVersion(), host: 'electron', demoPeers: process.env.AGENTPLANE_DEMO_PEERS !== '0', sealKeys: sealer !== undefined }, undefined, sealer);

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
    // Routed as it came: the plane host parses the request, the renderer's client the reply.
    return plane.transport.invoke(typeof name === 'string' ? (name as CommandName) : ('' as CommandName), request).catch((error: unknown) => ({
      ok: false,
      error: { code: ErrorCode.Unavailable, message: `the plane is not answering: ${error instanceof Error ? error.message : String(error)}` },
    }));
  });
  // Events go out as they are (`{name, payload}`); the renderer's client resumes by journal seq.
  const events = plane.transport.connectEvents({
    onOpen: () => undefined,
    onMessage: (event) => {
      if (!window.isDestroyed()) window.webContents.send(IPC_EVENT_CHANNEL, event);
    },
    onClose: () => undefined,
  });
  const unsubscribe = () => events.close();

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
      // The host closes its servers and its plane (the shutdown checkpoint) and removes
      // plane.json before it exits.
      await plane.stop();
      app.exit(0);
    })();
  });
  app.on('window-all-closed', () => app.quit());

  await window.loadFile(rendererIndex);
}

/** safeStorage as the plane's KeySealer: ciphertext as base64, so it travels and stores as text. */
function keychainSealer(): KeySealer {
  return {
    seal: async (plain) => safeStorage.encryptString(plain).toString('base64'),
    open: async (sealed) => safeStorage.decryptString(Buffer.from(sealed, 'base64')),
  };
}
