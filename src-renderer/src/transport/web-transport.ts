/**
 * The contract over the web bridge: commands as `POST /api/commands/<name>` with the per-launch
 * token as a bearer header, events over a WebSocket at `/api/events`. The token arrives once in
 * the page's URL; it is moved to sessionStorage (so a reload keeps working in this tab) and
 * removed from the address bar so it is not copied, bookmarked or shown on screen.
 */
import type { ContractTransport } from '../../../src-shared/ipc/client';
import type { CommandName } from '../../../src-shared/ipc/contract';

const TOKEN_KEY = 'agentplane.token';

export function takeTokenFromLocation(): string | null {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl) {
    window.sessionStorage.setItem(TOKEN_KEY, fromUrl);
    url.searchParams.delete('token');
    window.history.replaceState(null, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  return window.sessionStorage.getItem(TOKEN_KEY);
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
