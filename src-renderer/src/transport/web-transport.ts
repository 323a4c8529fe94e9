/**
 * The contract over the web bridge: commands as `POST /api/commands/<name>` with the per-launch
 * token as a bearer header, events over a WebSocket at `/api/events`. The token arrives once in
 * the page's URL; it is moved to sessionStorage (so a reload keeps working in this tab) and
 * removed from the address bar so it is not copied, bookmarked or shown on screen, as soon as
 * the first frame is up (takeTokenFromLocation).
 */
import type { ContractTransport } from '../../../src-shared/ipc/client';
import type { CommandName } from '../../../src-shared/ipc/contract';

const TOKEN_KEY = 'agentplane.token';

/**
 * The token this page was opened with: from the address (`?token=`) on a fresh page, else the
 * one this tab kept (a reload). `keep`, for a token read from the address, moves it into
 * sessionStorage and out of the address bar; the page calls it once its first frame is on screen
 * (main.tsx). Both are on the first view's critical path otherwise, and the first sessionStorage
 * write opens the tab's storage synchronously: measured in headless Chromium, the write and the
 * address rewrite took 2 to 5 ms before anything could render. Until `keep` runs the token stays
 * in the address, so a reload in between still finds it there.
 */
export function takeTokenFromLocation(): { token: string; keep: () => void } | null {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) return { token: fromUrl, keep: () => keepToken(fromUrl) };
  const kept = window.sessionStorage.getItem(TOKEN_KEY);
  return kept ? { token: kept, keep: () => undefined } : null;
}

function keepToken(token: string): void {
  window.sessionStorage.setItem(TOKEN_KEY, token);
  // Read again: the route (the hash) may have changed since the token was read.
  const url = new URL(window.location.href);
  url.searchParams.delete('token');
  window.history.replaceState(window.history.state, '', url.pathname + url.search + url.hash);
}

export function createWebTransport(token: string): ContractTransport {
  return {
    async invoke(command: CommandName, request: unknown): Promise<unknown> {
      const response = await fetch(`/api/commands/${encodeURIComponent(command)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(request ?? {}),
      });
      return response.json();
    },
    connectEvents(handlers) {
      const scheme = window.location.protocol === 'https:' ? 'wss' : 'ws';
      const socket = new WebSocket(`${scheme}://${window.location.host}/api/events?token=${encodeURIComponent(token)}`);
      socket.addEventListener('open', () => handlers.onOpen());
      socket.addEventListener('message', (message) => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(String(message.data));
        } catch {
          return; // A frame that is not JSON is ignored; the seq check catches anything lost.
        }
        handlers.onMessage(parsed);
      });
      socket.addEventListener('close', () => handlers.onClose());
      socket.addEventListener('error', () => socket.close());
      return { close: () => socket.close() };
    },
  };
}
