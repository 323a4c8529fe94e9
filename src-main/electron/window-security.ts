/**
 * The desktop window's lock-down beyond its webPreferences (which main.ts writes out where the
 * window is made): navigation, redirects, webviews and new windows denied, every permission
 * request denied, and IPC answered only for our own top frame showing our own page.
 */
import type { Session, WebContents, WebFrameMain } from 'electron';
import { pathToFileURL } from 'node:url';

/** Every permission is denied except notifications (the approvals inbox announces new requests). */
export function lockDownSession(session: Session): void {
  session.setPermissionRequestHandler((_contents, permission, callback) => callback(permission === 'notifications'));
  session.setPermissionCheckHandler((_contents, permission) => permission === 'notifications');
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
