/**
 * The plane's agents over MCP, end to end inside one process: a real plane on a temporary data
 * dir (the bundled agents and policy), the real MCP endpoint on 127.0.0.1 (plane/mcp-endpoint.ts
 * over mcp-http.ts), and the official SDK client in both revisions: 2026-07-28 (auto
 * negotiation) and 2025-11-25 (the legacy, sessionful path).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { call, countingProvider, testPlane } from '../../../tests/support/runtime-support';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { readMcpAddress } from '../../plane/mcp-address';
import { startPlaneMcpEndpoint, type PlaneMcpEndpoint } from '../../plane/mcp-endpoint';
import type { Plane } from '../../plane/plane';
import { silentLogger } from '../../base/logger';
import { fieldOf } from './plane-surface';
import { IdempotencyKeys } from './idempotency';
import { CALM_AGENT, writeCalmAgent } from '../../../tests/support/calm-agent';

const tempDir = useTempFolders('agentplane-mcp-surface-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

type Era = 'modern' | 'legacy';

async function servedPlane(settleMs = 15_000): Promise<{ plane: Plane; endpoint: PlaneMcpEndpoint }> {
  const plane = await testPlane({ dataDir: writeCalmAgent(tempDir()) });
  cleanups.push(() => plane.close());
  const endpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: 'http://127.0.0.1:5555', logger: silentLogger, settleMs });
  cleanups.push(() => endpoint.close());
  return { plane, endpoint };
}

async function connect(endpoint: PlaneMcpEndpoint, era: Era, options: { token?: string | null } = {}): Promise<Client> {
  const client = new Client({ name: 'surface-test', version: '1.0.0' }, era === 'modern' ? { versionNegotiation: { mode: 'auto' as const } } : {});
  const token = options.token === undefined ? endpoint.token : options.token;
  const transport = new StreamableHTTPClientTransport(new URL(endpoint.url), token === null ? {} : { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return client;
}

function structured(result: unknown): Record<string, unknown> {
  return (result as { structuredContent: Record<string, unknown> }).structuredContent;
}

describe.each<Era>(['modern', 'legacy'])('the plane over MCP (%s era)', (era) => {
  it('negotiates the revision the era speaks', async () => {
    const { endpoint } = await servedPlane();
    const client = await connect(endpoint, era);
    expect(client.getNegotiatedProtocolVersion()).toBe(era === 'modern' ? '2026-07-28' : '2025-11-25');
  });

  it('lists, to a host without Tasks, only the agents whose runs never wait for a person, each with its manifest description and input schema verbatim', async () => {
    const { plane, endpoint } = await servedPlane();
    const client = await connect(endpoint, era);
    const { tools } = await client.listTools();
    const { agents } = await call(plane, 'agents.list', {});
    // A declared ceiling alone does not hide an agent (summarize, thrifty): spend reaches it, not a question.
    expect(tools.map((t) => t.name).sort()).toEqual(['summarize', 'thrifty', CALM_AGENT]);
    expect(agents.filter((a) => a.mayWaitFor?.every((w) => w === 'budget')).map((a) => a.name).sort()).toEqual(['summarize', 'thrifty', CALM_AGENT]);
    for (const tool of tools) {
      const manifest = agents.find((a) => a.name === tool.name);
      expect(tool.description).toBe(manifest?.description);
      expect(tool.inputSchema).toEqual(manifest?.inputSchema);
      expect(tool.execution).toBeUndefined();
    }
  });

  it('answers a run that waits anyway (at its budget ceiling) as an error naming the run and saying it waits on this plane; the run stays waiting', async () => {
    const { plane, endpoint } = await servedPlane();
    const client = await connect(endpoint, era);
    const result = await client.callTool({ name: 'thrifty', arguments: { topic: 'ceilings '.repeat(55) } });
    expect(result.isError, JSON.stringify(result)).toBe(true);
    const answer = structured(result);
    expect(answer).toMatchObject({ status: 'suspended', waitingFor: { reason: 'budget' } });
    const text = (result.content as Array<{ text: string }>)[0]!.text;
    expect(text).toContain(`run ${String(answer.runId)} (thrifty) is waiting on this plane for a person`);
    const run = await call(plane, 'runs.get', { runId: String(answer.runId) });
    expect(run).toMatchObject({ status: 'suspended', outcome: null });
    expect(run.pending?.reason).toBe('budget');
  });

  it('runs an agent as a governed run admitted for the MCP caller, via mcp', async () => {
    const { plane, endpoint } = await servedPlane();
    const client = await connect(endpoint, era);
    const result = await client.callTool({ name: CALM_AGENT, arguments: { text: 'The plane runs agents and journals every effect.' } });
    expect(result.isError ?? false).toBe(false);
    const answer = structured(result);
    expect(answer).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    expect((answer.result as { summary?: unknown }).summary).toEqual(expect.any(String));
    const runId = String(answer.runId);
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(answer.result);
    const { records } = await call(plane, 'journal.records', { runId });
    const admitted = records.find((r) => r.kind === 'RunAdmitted');
    expect(admitted?.body).toMatchObject({ chain: ['mcp:local'], owner: 'mcp:local', inputProvenance: 'mcp:local', trigger: { via: 'mcp', by: 'mcp:local' } });
  });

  it('answers arguments the schema refuses with -32602 naming the field', async () => {
    const { plane, endpoint } = await servedPlane();
    const client = await connect(endpoint, era);
    const error = await client.callTool({ name: CALM_AGENT, arguments: { text: 42 } }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProtocolError);
    expect((error as ProtocolError).code).toBe(-32602);
    expect((error as ProtocolError).message).toMatch(/input\.text/);
    expect((error as ProtocolError).data).toEqual({ field: 'text' });
    const missing = await client.callTool({ name: CALM_AGENT, arguments: {} }).catch((e: unknown) => e as ProtocolError);
    expect((missing as ProtocolError).data).toEqual({ field: 'text' });
    const unknown = await client.callTool({ name: 'nope', arguments: {} }).catch((e: unknown) => e as ProtocolError);
    expect((unknown as ProtocolError).code).toBe(-32602);
    expect((unknown as ProtocolError).message).toMatch(/no tool named nope/);
    // Nothing was admitted for a refused call.
    expect((await call(plane, 'runs.list', {})).runs).toHaveLength(0);
  });

  it('refuses, before admission, a call to an agent whose runs may wait, naming the Tasks extension', async () => {
    const { plane, endpoint } = await servedPlane();
    const client = await connect(endpoint, era);
    for (const name of ['write-note', 'ask-first', 'pay-vendor', 'ask-peer']) {
      const refused = await client.callTool({ name, arguments: {} }).catch((e: unknown) => e as ProtocolError);
      expect(refused).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(era === 'modern' ? -32021 : -32602);
      expect((refused as ProtocolError).message).toContain(`the tool ${name}`);
      expect((refused as ProtocolError).message).toContain('io.modelcontextprotocol/tasks');
      expect((refused as ProtocolError).message).toContain('no run was started');
    }
    expect((await call(plane, 'runs.list', {})).runs).toHaveLength(0);
    expect((await call(plane, 'approvals.list', {})).waiting).toHaveLength(0);
  });

  it("reads the caller's own run as a resource, and nobody else's", async () => {
    const { plane, endpoint } = await servedPlane();
    const client = await connect(endpoint, era);
    const result = await client.callTool({ name: CALM_AGENT, arguments: { text: 'read me back' } });
    const runId = String(structured(result).runId);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['agentplane://runs/{runId}']);
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['agentplane://declaration', `agentplane://runs/${runId}`]);
    const read = await client.readResource({ uri: `agentplane://runs/${runId}` });
    const content = read.contents[0] as { mimeType?: string; text: string };
    expect(content.mimeType).toBe('application/json');
    const body = JSON.parse(content.text) as { run: { runId: string; status: string }; records: Array<{ kind: string }> };
    expect(body.run).toMatchObject({ runId, status: 'sealed' });
    expect(body.records.map((r) => r.kind)).toContain('RunAdmitted');
    expect(body.records.at(-1)?.kind).toBe('RunSealed');

    // A run the person at this machine started is not the MCP caller's: it reads as missing.
    const mine = await call(plane, 'runs.start', { agent: CALM_AGENT, input: { text: 'the user' }, wait: true });
    const refused = await client.readResource({ uri: `agentplane://runs/${mine.runId}` }).catch((e: unknown) => e as ProtocolError);
    const absent = await client.readResource({ uri: 'agentplane://runs/run-00000000000000000000' }).catch((e: unknown) => e as ProtocolError);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect(absent).toBeInstanceOf(ProtocolError);
    expect([(refused as ProtocolError).code, (refused as ProtocolError).message]).toEqual([(absent as ProtocolError).code, (absent as ProtocolError).message.replace('run-00000000000000000000', mine.runId)]);
    expect((refused as ProtocolError).data).toEqual({ uri: `agentplane://runs/${mine.runId}` });
    expect((await client.listResources()).resources).toHaveLength(2);
  });

  it('makes every retry with one idempotency key one run', async () => {
    const { plane, endpoint } = await servedPlane();
    const client = await connect(endpoint, era);
    const meta = { 'io.agentplane/idempotencyKey': `key-${era}` };
    const first = await client.callTool({ name: CALM_AGENT, arguments: { text: 'once' }, _meta: meta });
    const second = await client.callTool({ name: CALM_AGENT, arguments: { text: 'once' }, _meta: meta });
    expect(structured(second).runId).toBe(structured(first).runId);
    const other = await client.callTool({ name: CALM_AGENT, arguments: { text: 'once' }, _meta: { 'io.agentplane/idempotencyKey': 'another' } });
    expect(structured(other).runId).not.toBe(structured(first).runId);
    expect((await call(plane, 'runs.list', { agent: CALM_AGENT })).runs).toHaveLength(2);
  });

  it('refuses a missing or wrong token with 401', async () => {
    const { endpoint } = await servedPlane();
    for (const token of [null, 'not-the-token']) {
      const error = await connect(endpoint, era, { token }).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(error?.message ?? '').toMatch(/401|Unauthorized/i);
    }
  });
});

describe('the plane over MCP: bounds and refusal', () => {
  it('answers a run still going at the bound as running, not failed', async () => {
    const dataDir = writeCalmAgent(tempDir());
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const plane = await testPlane({ dataDir, providers: new Map([['local', countingProvider(`${dataDir}/calls`, () => gate)]]) });
    cleanups.push(() => plane.close());
    cleanups.push(() => release());
    const endpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger, settleMs: 300 });
    cleanups.push(() => endpoint.close());
    const client = await connect(endpoint, 'modern');
    const result = await client.callTool({ name: CALM_AGENT, arguments: { text: 'held at the model' } });
    expect(result.isError ?? false).toBe(false);
    expect(structured(result)).toMatchObject({ status: 'running', waitingFor: null });
    release();
  });

  it("answers a policy refusal as a tool error naming the refusal, and the plane goes on", async () => {
    const dataDir = writeCalmAgent(tempDir());
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${dataDir}/policy.json`, JSON.stringify({ rules: [{ effect: 'allow', principal: 'user:local', action: 'runtime:run.start', resource: 'agent:*' }] }));
    const plane = await testPlane({ dataDir });
    cleanups.push(() => plane.close());
    const endpoint = await startPlaneMcpEndpoint(plane, { port: 0, uiOrigin: null, logger: silentLogger });
    cleanups.push(() => endpoint.close());
    const client = await connect(endpoint, 'modern');
    const result = await client.callTool({ name: CALM_AGENT, arguments: { text: 'not for you' } });
    expect(result.isError).toBe(true);
    expect((result.content as Array<{ text: string }>)[0]!.text).toMatch(/policy refused to start tidy.*AP_FORBIDDEN/);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('keeps its port and token across a restart of the plane', async () => {
    const dataDir = tempDir();
    const plane = await testPlane({ dataDir });
    const first = await startPlaneMcpEndpoint(plane, { uiOrigin: null, logger: silentLogger });
    await first.close();
    await plane.close();
    expect(readMcpAddress(dataDir)).toEqual({ port: first.port, token: first.token });
    const again = await testPlane({ dataDir });
    cleanups.push(() => again.close());
    const second = await startPlaneMcpEndpoint(again, { uiOrigin: null, logger: silentLogger });
    cleanups.push(() => second.close());
    expect([second.port, second.token]).toEqual([first.port, first.token]);
    const { statSync } = await import('node:fs');
    expect(statSync(`${dataDir}/mcp-address.json`).mode & 0o777).toBe(0o600);
  });
});

describe('parts', () => {
  it('reads the field out of the runtime validation message', () => {
    expect(fieldOf('input for x does not match its schema: input.text: must be string')).toBe('text');
    expect(fieldOf("input for x does not match its schema: input: must have required property 'title'")).toBe('title');
    expect(fieldOf('something else')).toBeNull();
  });

  it('keeps a bounded number of idempotency keys, forgetting the oldest', async () => {
    const keys = new IdempotencyKeys(2);
    let n = 0;
    const start = async () => `run-${++n}`;
    expect(await keys.runFor('p', 't', 'a', start)).toBe('run-1');
    expect(await keys.runFor('p', 't', 'a', start)).toBe('run-1');
    expect(await keys.runFor('p', 't', 'b', start)).toBe('run-2');
    expect(await keys.runFor('q', 't', 'a', start)).toBe('run-3');
    expect(keys.size).toBe(2);
    expect(await keys.runFor('p', 't', 'a', start)).toBe('run-4');
    await expect(keys.runFor('p', 't', 'fails', () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(await keys.runFor('p', 't', 'fails', start)).toBe('run-5');
  });
});
