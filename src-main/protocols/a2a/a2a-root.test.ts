/**
 * The root of the printed `AGENTPLANE_A2A_URL` answers something a person (or a client that
 * starts there) can use: a JSON index naming the directory card, and per agent its card and its
 * JSON-RPC endpoint, each of which answers. Public like the cards, so it never names the token.
 * A real plane on a temporary data dir and the real endpoint on 127.0.0.1, read with fetch.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { testPlane } from '../../../tests/support/runtime-support';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { startPlaneA2aEndpoint } from '../../plane/a2a-endpoint';
import { silentLogger } from '../../base/logger';

const tempDir = useTempFolders('agentplane-a2a-root-');
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('the A2A endpoint’s root', () => {
  it('answers a JSON index of the cards and endpoints, without the token, and each URL it names answers', async () => {
    const plane = await testPlane({ dataDir: tempDir() });
    cleanups.push(() => plane.close());
    const endpoint = await startPlaneA2aEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger });
    cleanups.push(() => endpoint.close());

    const response = await fetch(endpoint.url);
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(text).not.toContain(endpoint.token);
    const index = JSON.parse(text) as { agentCard: string; protocolVersion: string; agents: Array<{ name: string; agentCard: string; endpoint: string }> };
    expect(index).toMatchObject({ protocolVersion: '1.0', agentCard: `${endpoint.url}.well-known/agent-card.json` });
    const summarize = index.agents.find((a) => a.name === 'summarize');
    expect(summarize).toEqual(expect.objectContaining({ agentCard: `${endpoint.url}a2a/summarize/.well-known/agent-card.json`, endpoint: `${endpoint.url}a2a/summarize` }));

    // What it names is there: the directory card, the agent's card, and its JSON-RPC endpoint.
    expect((await fetch(index.agentCard)).status).toBe(200);
    expect(await (await fetch(summarize!.agentCard)).json()).toMatchObject({ name: 'summarize', supportedInterfaces: [{ url: summarize!.endpoint }] });
    const rpc = await fetch(summarize!.endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${endpoint.token}`, 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
    });
    expect(await rpc.json()).toMatchObject({ jsonrpc: '2.0', id: 1, result: { tasks: [] } });
  });
});
