/**
 * An A2A caller made of the official @a2a-js/sdk 1.3 client: its ClientFactory with the JSON-RPC
 * transport, the card resolved and every call made through a fetch that adds
 * `Authorization: Bearer <token>` (none when no token is given). The one way the tests and the
 * A2A benchmark call the plane's endpoint and a peer's port as an SDK client, written once.
 */
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';

/** `fetch` with `Authorization: Bearer <token>` set on every request; plain `fetch`'s behaviour without a token. */
export function bearerFetch(token?: string): typeof fetch {
  return (input, init) => {
    const headers = new Headers(init?.headers);
    if (token) headers.set('Authorization', `Bearer ${token}`);
    return fetch(input, { ...init, headers });
  };
}

/** An SDK client from the card at `cardPath` under `baseUrl` (both resolved as the SDK's createFromUrl does). */
export function sdkA2aClientAt(baseUrl: string, cardPath: string, token?: string): Promise<Client> {
  const fetchImpl = bearerFetch(token);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })], cardResolver: new DefaultAgentCardResolver({ fetchImpl }) }),
  );
  return factory.createFromUrl(baseUrl, cardPath);
}

/** An SDK client of `agent` as the plane and a peer serve it: its card at `a2a/<agent>/.well-known/agent-card.json`. */
export function sdkA2aClient(baseUrl: string, agent: string, token?: string): Promise<Client> {
  return sdkA2aClientAt(baseUrl, `a2a/${agent}/.well-known/agent-card.json`, token);
}
