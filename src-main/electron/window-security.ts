/**
 * The desktop window's security settings in one place, so the lint-level check (no
 * `sandbox: false` anywhere) and the electronegativity scan have one thing to read:
 * contextIsolation and sandbox on, no Node in the page, navigation and new windows denied,
 * every permission request denied, and IPC answered only for our own top frame.
 */
import type { BrowserWindowConstructorOptions, Session, WebContents, WebFrameMain } from 'electron';
import { pathToFileURL } from 'node:url';

export function secureWebPreferences(preloadPath: string): BrowserWindowConstructorOptions['webPreferences'] {
  return {
    preload: preloadPath,
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
  };
}

export function lockDownSession(session: Session): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
}

export function lockDownContents(contents: WebContents): void {
  contents.on('will-navigate', (event) => event.preventDefault());
  contents.on('will-redirect', (event) => event.preventDefault());
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
}

/** True when an IPC message comes from our window's own top frame showing our own page. */
export function isTrustedSender(frame: WebFrameMain | null, expected: WebContents, rendererIndex: string): boolean {
  if (!frame || frame !== expected.mainFrame) return false;
  return frame.url === pathToFileURL(rendererIndex).href;
}
