/**
 * Provenance at protected sinks for MCP and A2A calls (docs/GOVERNED-RUNTIME.md, "Provenance at
 * protected sinks"), on a real plane, counted at the far side: an MCP tool argument a model's
 * output chose is refused where the grant's `protect:` says refuse (server-everything over HTTP,
 * counted through a proxy, never sees tools/call), while the operator's literal goes; an A2A message a model chose waits
 * for a person (the SDK's remote agent sees no SendMessage until it is approved, then one). A
 * bad `protect:` on either grant is refused at load, naming the field.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startEverythingHttp, type RunningServer } from '../../tests/doubles/everything-server';
import { startHoldingProxy, type HoldingProxy } from '../../tests/doubles/holding-proxy';
import { startSdkRemote, type SdkRemote } from '../../tests/doubles/sdk-a2a-remote';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, approvePending, call, testPlane } from '../../tests/support/runtime-support';
import { createNetguard, staticAllowList, type Netguard } from '../net/netguard';
import type { Plane } from '../plane/plane';
import { createA2aClient } from '../protocols/a2a/client/a2a-client';
import { writeMcpServersFile } from '../protocols/mcp/client/mcp-servers-file';
import { ManifestError } from './manifest';

const open: Array<Plane | Netguard | SdkRemote | RunningServer | HoldingProxy> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await ('stop' in thing ? thing.stop() : thing.close());
});

const OPERATOR_ONLY = { accept: ['operator'], otherwise: 'refuse' };

describe('provenance at MCP and A2A sinks', () => {
  it("refuses an MCP tool argument a model's output chose, before the server is called; the operator's literal goes", { timeout: 60_000 }, async () => {
    const server = await startEverythingHttp();
    open.push(server);
    // A proxy that holds nothing: it counts what reaches the server.
    const proxy = await startHoldingProxy(server.url);
    open.push(proxy);
    const dataDir = tempDataDir('ap-sinks-mcp-');
    writeMcpServersFile(dataDir, { servers: { everything: { transport: 'http', url: proxy.url, headers: {} } } });
    const grants = [
      { kind: 'model', name: 'local' },
      { kind: 'mcp', name: 'everything/echo', protect: { message: OPERATOR_ONLY } },
    ];
    const fromModel = agent({
      name: 'echo-model',
      steps: [{ as: 'said', model: { provider: 'local', prompt: 'say a word', maxTokens: 4 } }, { as: 'echoed', mcp: { server: 'everything', tool: 'echo', args: { message: '{{steps.said.text}}' } } }, { output: 'done' }],
      grants,
    });
    const literal = agent({ name: 'echo-literal', steps: [{ as: 'echoed', mcp: { server: 'everything', tool: 'echo', args: { message: 'the operator says' } } }, { output: '{{steps.echoed.content.0.text}}' }], grants });
    const p = await testPlane({ dataDir, agents: [fromModel, literal] });
    open.push(p);
    const toolCalls = () => proxy.methods.filter((m) => m === 'tools/call').length;

    const refused = await call(p, 'runs.start', { agent: 'echo-model', input: {}, wait: true });
    expect(refused).toMatchObject({ outcome: 'failed', error: { code: 'ProvenanceRefused' } });
    expect(refused.error!.message).toContain('message');
    expect(refused.error!.message).toContain('model:local');
    expect(toolCalls()).toBe(0);
    const verdict = (await p.journal.readRun(refused.runId, 1, 100)).find((r) => r.kind === 'ProvenanceVerdict');
    expect(verdict?.body).toMatchObject({ grant: 'mcp:everything/echo', verdict: 'refused' });

    expect(await call(p, 'runs.start', { agent: 'echo-literal', input: {}, wait: true })).toMatchObject({ outcome: 'succeeded', result: 'Echo: the operator says' });
    expect(toolCalls()).toBe(1);
  });

  it('puts an A2A message a model chose to a person before it is sent; approved, it is sent once', { timeout: 60_000 }, async () => {
    const remote = await startSdkRemote({ answer: (input) => ({ echoed: input }) });
    open.push(remote);
    const netguard = createNetguard({ allow: staticAllowList([remote.origin]) });
    open.push(netguard);
    const dataDir = tempDataDir('ap-sinks-a2a-');
    const asker = agent({
      name: 'ask-remote',
      steps: [{ as: 'said', model: { provider: 'local', prompt: 'say a word', maxTokens: 4 } }, { as: 'remote', a2a: { card: remote.cardUrl, skill: 'echo', message: { said: '{{steps.said.text}}' } } }, { output: 'done' }],
      grants: [
        { kind: 'model', name: 'local' },
        { kind: 'a2a', name: remote.cardUrl, protect: { message: { accept: ['operator'], otherwise: 'ask' } } },
      ],
    });
    const p = await testPlane({ dataDir, agents: [asker], a2a: createA2aClient({ dataDir, dispatcher: netguard.dispatcher, poll: { initialMs: 20, maxMs: 100 } }) });
    open.push(p);
    const sends = () => remote.methods.filter((m) => m === 'SendMessage').length;

    const waiting = await call(p, 'runs.start', { agent: 'ask-remote', input: {}, wait: true });
    expect(waiting).toMatchObject({ status: 'suspended', pending: { reason: 'provenance', step: 1 } });
    const subject = waiting.pending!.subject as { grant: string; fields: Array<{ field: string; provenance: string[] }> };
    expect(subject.grant).toBe(`a2a:${remote.cardUrl}`);
    // The message is the operator's object around the model's words: both origins, the model's among them.
    expect(subject.fields.map((f) => f.field)).toEqual(['message']);
    expect(subject.fields[0]!.provenance).toContain('model:local');
    expect(sends()).toBe(0);

    await approvePending(p, waiting.runId);
    const done = await p.runtime.settled(waiting.runId);
    expect(done).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    expect(sends()).toBe(1);
  });

  it('refuses a bad protect on an MCP or an A2A grant at load, naming the field', () => {
    const base = { name: 'bad', steps: [{ output: 'x' }] };
    expect(() => agent({ ...base, grants: [{ kind: 'a2a', name: 'https://agent.example/card', protect: { payee: OPERATOR_ONLY } }] })).toThrow(ManifestError);
    expect(() => agent({ ...base, grants: [{ kind: 'a2a', name: 'https://agent.example/card', protect: { payee: OPERATOR_ONLY } }] })).toThrow(/payee is not a field this grant can protect \(it can protect message\)/);
    expect(() => agent({ ...base, grants: [{ kind: 'mcp', name: 'files/read', protect: { path: { accept: ['operator'], otherwise: 'maybe' } } }] })).toThrow(/otherwise must be ask or refuse/);
  });
});
