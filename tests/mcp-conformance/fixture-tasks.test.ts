/**
 * The conformance fixtures' Tasks tools on 2025-11-25, which no conformance suite drives (the
 * alpha's tasks-* scenarios are 2026-07-28 only): the official SDK client on a real session of
 * the fixtures surface, task methods sent with `request` and a schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { Client, ProtocolError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startMcpHttpServer } from '../../src-main/protocols/mcp/mcp-http';
import { FIXTURES_MAX_SESSIONS, createFixturesSurface } from '../../src-main/protocols/mcp/fixtures/fixtures-factory';
import { silentLogger } from '../../src-main/base/logger';

const Loose = z.looseObject({});
type Json = Record<string, unknown>;

describe('the fixtures Tasks tools on 2025-11-25', () => {
  let server: Awaited<ReturnType<typeof startMcpHttpServer>>;
  let client: Client;

  beforeAll(async () => {
    const surface = createFixturesSurface();
    server = await startMcpHttpServer({ factory: surface.factory, token: null, logger: silentLogger, port: 0, maxSessionsPerCaller: FIXTURES_MAX_SESSIONS });
    client = new Client({ name: 'fixture-tasks-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('declares capabilities.tasks and each task tool its execution.taskSupport', async () => {
    expect(client.getServerCapabilities()?.tasks).toMatchObject({ cancel: {}, requests: { tools: { call: {} } } });
    const { tools } = await client.listTools();
    const support = Object.fromEntries(tools.filter((t) => t.execution).map((t) => [t.name, t.execution?.taskSupport]));
    expect(support).toEqual({ slow_compute: 'optional', failing_job: 'required', protocol_error_job: 'optional', confirm_delete: 'optional', multi_input: 'optional', test_tool_with_task: 'required' });
  });

  it('runs slow_compute as a task: {task}, tasks/get, then tasks/result with the related-task _meta', async () => {
    const created = await client.request({ method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0.2, label: 'x' }, task: { ttl: 60_000 } } }, Loose);
    const task = created.task as Json;
    expect(task).toMatchObject({ status: 'working', pollInterval: 1000 });
    const taskId = String(task.taskId);
    expect(await client.request({ method: 'tasks/get', params: { taskId } }, Loose)).toMatchObject({ taskId, status: 'working' });
    const result = await client.request({ method: 'tasks/result', params: { taskId } }, Loose);
    expect(result.content).toEqual([{ type: 'text', text: 'computed x after 0.2s' }]);
    expect((result._meta as Json)['io.modelcontextprotocol/related-task']).toEqual({ taskId });
    expect(await client.request({ method: 'tasks/get', params: { taskId } }, Loose)).toMatchObject({ status: 'completed' });
  });

  it('reports a tool error as failed (this revision), refuses a required tool called without a task, and cancels', async () => {
    const failing = await client.request({ method: 'tools/call', params: { name: 'failing_job', arguments: {}, task: {} } }, Loose);
    const failed = await client.request({ method: 'tasks/result', params: { taskId: String((failing.task as Json).taskId) } }, Loose);
    expect(failed.isError).toBe(true);
    expect(await client.request({ method: 'tasks/get', params: { taskId: String((failing.task as Json).taskId) } }, Loose)).toMatchObject({ status: 'failed' });

    const refused = await client.callTool({ name: 'failing_job', arguments: {} }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ProtocolError);
    expect((refused as ProtocolError).code).toBe(-32601);

    const slow = await client.request({ method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 60 }, task: {} } }, Loose);
    const taskId = String((slow.task as Json).taskId);
    expect(await client.request({ method: 'tasks/cancel', params: { taskId } }, Loose)).toMatchObject({ taskId, status: 'cancelled' });
    const again = await client.request({ method: 'tasks/cancel', params: { taskId } }, Loose).catch((e: unknown) => e);
    expect((again as ProtocolError).code).toBe(-32602);
    const unknown = await client.request({ method: 'tasks/get', params: { taskId: 'task-nope' } }, Loose).catch((e: unknown) => e);
    expect((unknown as ProtocolError).code).toBe(-32602);
    const { tasks } = await client.request({ method: 'tasks/list', params: {} }, Loose);
    expect((tasks as Json[]).map((t) => t.taskId)).toContain(taskId);
    const badCursor = await client.request({ method: 'tasks/list', params: { cursor: 'not-issued' } }, Loose).catch((e: unknown) => e);
    expect((badCursor as ProtocolError).code).toBe(-32602);
  });

  it('pages tasks/list with an opaque cursor', async () => {
    for (let i = 0; i < 55; i++) await client.request({ method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0 }, task: {} } }, Loose);
    const first = await client.request({ method: 'tasks/list', params: {} }, Loose);
    expect(first.tasks).toHaveLength(50);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.request({ method: 'tasks/list', params: { cursor: String(first.nextCursor) } }, Loose);
    expect((second.tasks as Json[]).length).toBeGreaterThanOrEqual(5);
    const ids = new Set([...(first.tasks as Json[]), ...(second.tasks as Json[])].map((t) => t.taskId));
    expect(ids.size).toBe((first.tasks as Json[]).length + (second.tasks as Json[]).length);
  });

  it('answers slow_compute without a task inline', async () => {
    const result = await client.callTool({ name: 'slow_compute', arguments: { seconds: 0, label: 'inline' } });
    expect(result.content).toEqual([{ type: 'text', text: 'computed inline after 0s' }]);
  });
});
