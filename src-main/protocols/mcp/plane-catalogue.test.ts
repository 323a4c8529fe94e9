/**
 * The plane surface's prompts and its declaration resource, end to end: a real plane on a
 * temporary data dir (the bundled agents and one that never waits, tests/support/calm-agent.ts),
 * the real MCP endpoint, and the official SDK client in both revisions, without Tasks.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { call, testPlane } from '../../../tests/support/runtime-support';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { CALM_AGENT, CALM_SYSTEM_PROMPT, writeCalmAgent } from '../../../tests/support/calm-agent';
import { startPlaneMcpEndpoint, type PlaneMcpEndpoint } from '../../plane/mcp-endpoint';
import type { Plane } from '../../plane/plane';
import { silentLogger } from '../../base/logger';
import { DECLARATION_URI } from './plane-catalogue';
import { TASKS_EXTENSION } from './tasks';

const tempDir = useTempFolders('agentplane-mcp-catalogue-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Era = 'modern' | 'legacy';

async function served(era: Era): Promise<{ plane: Plane; endpoint: PlaneMcpEndpoint; client: Client }> {
  const plane = await testPlane({ dataDir: writeCalmAgent(tempDir()) });
  cleanups.push(() => plane.close());
  const endpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger });
  cleanups.push(() => endpoint.close());
  const client = new Client({ name: 'catalogue-test', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: 'auto' as const } } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } } }));
  cleanups.push(() => client.close());
  return { plane, endpoint, client };
}

describe.each<Era>(['modern', 'legacy'])('prompts and the declaration (%s era, no Tasks)', (era) => {
  it("serves each offered agent's system prompt as a prompt with no arguments, verbatim", async () => {
    const { client } = await served(era);
    expect(client.getServerCapabilities()?.prompts).toEqual({ listChanged: false });
    const { prompts } = await client.listPrompts();
    // summarize waits only at a ceiling, so it is offered; write-note (an approve grant) is not.
    expect(prompts.map((p) => p.name).sort()).toEqual(['summarize', CALM_AGENT]);
    expect(prompts.every((p) => p.arguments === undefined)).toBe(true);
    const got = await client.getPrompt({ name: CALM_AGENT });
    expect(got.messages).toEqual([{ role: 'user', content: { type: 'text', text: CALM_SYSTEM_PROMPT } }]);
  });

  it('answers a prompt for an unknown agent, or one this caller is not offered, -32602 naming it', async () => {
    const { client } = await served(era);
    for (const name of ['nope', 'write-note']) {
      const error = await client.getPrompt({ name }).catch((e: unknown) => e as ProtocolError);
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).code).toBe(-32602);
      expect((error as ProtocolError).message).toContain(`no prompt named "${name}"`);
      expect((error as ProtocolError).data).toEqual({ prompt: name });
    }
  });

  it('lists the declaration among the resources and reads it: every agent served, its schema, grants, budget and what it needs', async () => {
    const { plane, client } = await served(era);
    const { resources } = await client.listResources();
    expect(resources[0]).toMatchObject({ uri: DECLARATION_URI, mimeType: 'application/json' });
    const read = await client.readResource({ uri: DECLARATION_URI });
    const content = read.contents[0] as { uri: string; mimeType?: string; text: string };
    expect([content.uri, content.mimeType]).toEqual([DECLARATION_URI, 'application/json']);
    const declaration = JSON.parse(content.text) as { tasksExtension: string; agents: Array<Record<string, unknown>> };
    expect(declaration.tasksExtension).toBe(TASKS_EXTENSION);
    const { agents } = await call(plane, 'agents.list', {});
    expect(declaration.agents.map((a) => a.name).sort()).toEqual(agents.map((a) => a.name).sort());
    const note = declaration.agents.find((a) => a.name === 'write-note');
    const manifest = agents.find((a) => a.name === 'write-note')!;
    expect(note).toMatchObject({ inputSchema: manifest.inputSchema, grants: manifest.grants, budget: manifest.budget, mayWaitFor: ['approval', 'budget'], needsTasks: true, offeredToYou: false, prompt: false });
    expect(declaration.agents.find((a) => a.name === CALM_AGENT)).toMatchObject({ mayWaitFor: [], needsTasks: false, offeredToYou: true, prompt: true });
  });
});
