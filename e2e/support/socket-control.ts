/**
 * Lets a test cut the UI's event WebSocket and make reconnects fail, without touching the
 * plane: an init script (it runs before the page's own code) wraps `window.WebSocket`.
 *
 * - `drop()` closes every open socket from the page's side, as a network blip would;
 * - while `refuse` is true, a new socket is opened with a wrong token, so the real bridge
 *   refuses the upgrade with 401 and the page sees a real failed connection (error, then
 *   close), not a simulated one.
 *
 * The script is plain JavaScript in a string because it runs in the page, not in Node.
 */
import type { Page } from 'playwright-core';

export const SOCKET_CONTROL_INIT_SCRIPT = `(() => {
  const NativeWebSocket = window.WebSocket;
  const live = new Set();
  const control = {
    refuse: false,
    attempts: 0,
    refused: 0,
    opened: 0,
    get open() { return live.size; },
    drop() {
      for (const socket of live) socket.close(4000, 'dropped by the e2e test');
    },
  };
  class ControlledWebSocket extends NativeWebSocket {
    constructor(url, protocols) {
      const target = new URL(url, window.location.href);
      control.attempts += 1;
      if (control.refuse) {
        target.searchParams.set('token', 'refused-by-the-e2e-test');
        control.refused += 1;
      }
      super(target.href, protocols);
      live.add(this);
      this.addEventListener('open', () => { control.opened += 1; });
      this.addEventListener('close', () => { live.delete(this); });
    }
  }
  Object.defineProperty(window, '__agentplaneSocketControl', { value: control });
  window.WebSocket = ControlledWebSocket;
})();`;

interface SocketControl {
  refuse: boolean;
  attempts: number;
  refused: number;
  opened: number;
  readonly open: number;
  drop(): void;
}

type ControlledWindow = { __agentplaneSocketControl?: SocketControl };

export interface SocketCounts {
  attempts: number;
  refused: number;
  opened: number;
  open: number;
}

export function socketCounts(page: Page): Promise<SocketCounts> {
  // The function is serialised into the page, so it is self-contained: no closure over Node values.
  return page.evaluate(() => {
    const c = (globalThis as ControlledWindow).__agentplaneSocketControl;
    if (!c) throw new Error('the socket-control init script did not run in this page');
    return { attempts: c.attempts, refused: c.refused, opened: c.opened, open: c.open };
  });
}

/** Sets whether new sockets are refused, then (optionally) closes the open ones. */
export function setRefuse(page: Page, refuse: boolean, dropOpen = false): Promise<void> {
  return page.evaluate(
    ([on, drop]) => {
      const c = (globalThis as ControlledWindow).__agentplaneSocketControl;
      if (!c) throw new Error('the socket-control init script did not run in this page');
      c.refuse = on;
      if (drop) c.drop();
    },
    [refuse, dropOpen] as const,
  );
}
