/**
 * Watching one's own runs over the plane's real MCP endpoint (run-watch.ts), with the official
 * SDK client: run-id completion in both revisions; subscriptions and log messages on a
 * 2025-11-25 session. A real plane on a temporary data dir, on 127.0.0.1.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { call, testPlane } from '../../../tests/support/runtime-support';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { CALM_AGENT, writeCalmAgent } from '../../../tests/support/calm-agent';
import { startPlaneMcpEndpoint, type PlaneMcpEndpoint } from '../../plane/mcp-endpoint';
import type { Plane } from '../../plane/plane';
import { silentLogger } from '../../base/logger';
import { RUN_URI_PREFIX, runTemplate } from './run-resource';

const tempDir = useTempFolders('agentplane-mcp-watch-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Era = 'modern' | 'legacy';

async function served(): Promise<{ plane: Plane; endpoint: PlaneMcpEndpoint }> {
  const plane = await testPlane({ dataDir: writeCalmAgent(tempDir()) });
  cleanups.push(() => plane.close());
  const endpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: 'http://127.0.0.1:5555', logger: silentLogger, settleMs: 15_000 });
  cleanups.push(() => endpoint.close());
  return { plane, endpoint };
}

async function connect(endpoint: PlaneMcpEndpoint, era: Era): Promise<Client> {
  const client = new Client({ name: 'watch-test', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: 'auto' as const } } : {});
  await client.connect(new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } } }));
  cleanups.push(() => client.close());
  return client;
}

async function tidy(client: Client, text: string): Promise<string> {
  const result = await client.callTool({ name: CALM_AGENT, arguments: { text } });
  return String((result.structuredContent as { runId: string }).runId);
}

/** Resolves with the first value `pick` answers for an arriving notification. */
function waitFor<T>(subscribe: (listener: (value: T) => void) => void, accept: (value: T) => boolean): Promise<T> {
  return new Promise((resolve) => subscribe((value) => accept(value) && resolve(value)));
}

describe.each<Era>(['modern', 'legacy'])('completion (%s era)', (era) => {
  it("completes the run template's runId to the caller's own runs only, by prefix", async () => {
    const { plane, endpoint } = await served();
    const client = await connect(endpoint, era);
    expect(client.getServerCapabilities()?.completions).toEqual({});
    const first = await tidy(client, 'one');
    const second = await tidy(client, 'two');
    // A run the operator started is not the MCP caller's: never offered.
    const operators = (await call(plane, 'runs.start', { agent: CALM_AGENT, input: { text: 'not yours' } })).runId;
    const ref = { type: 'ref/resource' as const, uri: runTemplate.uriTemplate };
    const all = await client.complete({ ref, argument: { name: 'runId', value: 'run-' } });
    expect(all.completion.values.sort()).toEqual([first, second].sort());
    expect(all.completion.values).not.toContain(operators);
    expect(all.completion).toMatchObject({ total: 2, hasMore: false });
    const one = await client.complete({ ref, argument: { name: 'runId', value: first.slice(0, 14) } });
    expect(one.completion.values).toContain(first);
    const none = await client.complete({ ref, argument: { name: 'runId', value: operators } });
    expect(none.completion.values).toEqual([]);
  });

  it("completes an agent's prompt (no arguments) to nothing, and refuses an unknown prompt or template naming it", async () => {
    const { endpoint } = await served();
    const client = await connect(endpoint, era);
    const prompt = await client.complete({ ref: { type: 'ref/prompt', name: CALM_AGENT }, argument: { name: 'x', value: '' } });
    expect(prompt.completion.values).toEqual([]);
    const unknown = await client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(ProtocolError);
    expect((unknown as ProtocolError).code).toBe(-32602);
    expect((unknown as ProtocolError).message).toContain('no prompt named "nope"');
    const template = await client.complete({ ref: { type: 'ref/resource', uri: 'test://other/{x}' }, argument: { name: 'x', value: '' } }).catch((e: unknown) => e);
    expect((template as ProtocolError).code).toBe(-32602);
    expect((template as ProtocolError).message).toContain(runTemplate.uriTemplate);
  });
});

describe('subscriptions and log messages (2025-11-25 session)', () => {
  it('tells a subscriber each commit to its own run, and refuses a run that is not its own as not found', async () => {
    const { plane, endpoint } = await served();
    const client = await connect(endpoint, 'legacy');
    expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true });
    // thrifty with a long topic waits at its token ceiling: a run that stays open.
    const waiting = await client.callTool({ name: 'thrifty', arguments: { topic: 'ceilings '.repeat(55) } });
    const runId = String((waiting.structuredContent as { runId: string }).runId);
    const uri = `${RUN_URI_PREFIX}${runId}`;
    const updated = waitFor<string>((listener) => client.setNotificationHandler('notifications/resources/updated', (n) => listener(n.params.uri)), (u) => u === uri);
    expect(await client.subscribeResource({ uri })).toEqual({});
    await call(plane, 'runs.cancel', { runId, reason: 'watched' });
    expect(await updated).toBe(uri);

    const operators = (await call(plane, 'runs.start', { agent: CALM_AGENT, input: { text: 'not yours' } })).runId;
    // Not found is the same answer a read of a missing run gives.
    const missing = await client.readResource({ uri: `${RUN_URI_PREFIX}${operators}` }).catch((e: unknown) => e as ProtocolError);
    expect(missing).toBeInstanceOf(ProtocolError);
    for (const other of [`${RUN_URI_PREFIX}${operators}`, `${RUN_URI_PREFIX}run-00000000000000000000`, 'test://watched-resource']) {
      const refused = await client.subscribeResource({ uri: other }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(missing.code);
      expect((refused as ProtocolError).message).toContain(`no run at ${other}`);
    }
    expect(await client.unsubscribeResource({ uri })).toEqual({});
  });

  it("says each move of a run the session started as a log message at the host's level, with no input or result in it", async () => {
    const { endpoint } = await served();
    const client = await connect(endpoint, 'legacy');
    expect(client.getServerCapabilities()?.logging).toEqual({});
    const messages: Array<{ level: string; data: Record<string, unknown> }> = [];
    const sealed = waitFor<{ level: string; data: Record<string, unknown> }>(
      (listener) =>
        client.setNotificationHandler('notifications/message', (n) => {
          const message = { level: n.params.level, data: n.params.data as Record<string, unknown> };
          messages.push(message);
          listener(message);
        }),
      (m) => m.data.status === 'sealed',
    );
    expect(await client.setLoggingLevel('info')).toEqual({});
    const runId = await tidy(client, 'secret words stay out of logs');
    const last = await sealed;
    expect(last).toMatchObject({ level: 'info', data: { runId, kind: 'RunSealed', outcome: 'succeeded' } });
    expect(String(last.data.message)).toBe(`run ${runId}: RunSealed; it ended succeeded`);
    expect(messages.every((m) => m.data.runId === runId)).toBe(true);
    expect(JSON.stringify(messages)).not.toContain('secret words');

    // At `error`, a run that succeeds says nothing.
    await client.setLoggingLevel('error');
    const before = messages.length;
    await tidy(client, 'quiet');
    await client.ping();
    expect(messages.length).toBe(before);
  });

  it('offers neither subscriptions nor log messages on 2026-07-28 (no session stream; logging is deprecated there)', async () => {
    const { endpoint } = await served();
    const client = await connect(endpoint, 'modern');
    expect(client.getServerCapabilities()?.resources?.subscribe).toBeUndefined();
    expect(client.getServerCapabilities()?.logging).toBeUndefined();
  });
});
