/**
 * An editor session's permission request in the approvals inbox (`acp tap --policy inbox`), end
 * to end inside one process: a real plane, the tap writing through the plane's contract (as it
 * does when a plane runs), a real agent process (tests/doubles/acp-fake-agent.mjs, permission
 * mode), and the test as the editor. The request is listed by approvals.list, read by runs.get
 * and runs.list as a waiting run, decided through approvals.decide like any other wait, and the
 * agent receives the option a person chose.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { FAKE_AGENT } from '../../tests/helpers/acp-tap-process';
import { useTempFolders } from '../../tests/helpers/temp-folders';
import { clientOf, testPlane, until } from '../../tests/support/runtime-support';
import type { RunView } from '../../src-shared/ipc/contract';
import { startTap, type RunningTap } from '../protocols/acp/acp-tap';
import { PlaneSink } from '../protocols/acp/observation-sink';
import { PlaneInbox } from '../protocols/acp/plane-inbox';
import type { Plane } from './plane';

const tempDir = useTempFolders('agentplane-acp-plane-inbox-');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tappedEditor(plane: Plane, policy: 'observe' | 'inbox'): { tap: RunningTap; send(m: unknown): void; lines: Array<Record<string, unknown>> } {
  const client = clientOf(plane);
  const editorIn = new PassThrough();
  const editorOut = new PassThrough();
  const inbox = new PlaneInbox(client, 100);
  const tap = startTap({
    command: [process.execPath, FAKE_AGENT, '--mode', 'permission'],
    tapName: 'fake',
    policy,
    editorIn,
    editorOut,
    editorErr: new PassThrough(),
    sink: new PlaneSink(client),
    ...(policy === 'inbox' ? { inbox } : {}),
  });
  inbox.attach(tap);
  cleanups.push(async () => {
    inbox.stop();
    editorIn.end();
    await tap.done;
  });
  const lines: Array<Record<string, unknown>> = [];
  let partial = '';
  editorOut.on('data', (chunk: Buffer) => {
    partial += chunk.toString();
    let nl;
    while ((nl = partial.indexOf('\n')) !== -1) {
      lines.push(JSON.parse(partial.slice(0, nl)) as Record<string, unknown>);
      partial = partial.slice(nl + 1);
    }
  });
  const send = (m: unknown) => editorIn.write(`${JSON.stringify(m)}\n`);
  send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1, clientInfo: { name: 'test-editor', version: '1.0' } } });
  send({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/', mcpServers: [] } });
  send({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId: 'sess-1', prompt: [{ type: 'text', text: 'write it' }] } });
  return { tap, send, lines };
}

const permissionWaits = async (plane: Plane) => (await clientOf(plane).call('approvals.list', {})).waiting.filter((r) => r.pending?.reason === 'permission');

describe('an editor permission request in the approvals inbox', () => {
  it('waits as a run, is decided like any wait, and the agent gets the option a person chose', { timeout: 60_000 }, async () => {
    const plane = await testPlane({ dataDir: tempDir() });
    cleanups.push(() => plane.close());
    const client = clientOf(plane);
    const editor = tappedEditor(plane, 'inbox');

    const [waiting] = await until(async () => {
      const list = await permissionWaits(plane);
      return list.length > 0 ? list : undefined;
    }, 'the permission request in approvals.list');
    const run = waiting as RunView;
    const wait = run.pending!;
    expect(run).toMatchObject({ agent: 'acp:fake', owner: 'editor:test-editor', host: 'acp:fake', status: 'suspended', outcome: null });
    expect(wait.subject).toEqual({
      kind: 'permission',
      agent: 'fake',
      owner: 'editor:test-editor',
      sessionId: 'sess-1',
      requestKey: 'toEditor:200',
      toolCall: { toolCallId: 't1', title: 'Write file', toolKind: null, locations: [] },
      options: [
        { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
        { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
      ],
      diff: null,
    });
    expect(wait.waitId).toMatch(new RegExp(`^${run.runId}/\\d+/permission$`));
    // Read as a run, and counted where runs are listed, like every other waiting run.
    expect(await client.call('runs.get', { runId: run.runId })).toMatchObject({ status: 'suspended', pending: { waitId: wait.waitId } });
    expect((await client.call('runs.list', {})).runs.map((r) => r.runId)).toContain(run.runId);

    // Bad decisions are refused by name, and change nothing.
    const decide = (extra: Record<string, unknown>) => client.tryCall('approvals.decide', { runId: run.runId, waitId: wait.waitId, subjectHash: wait.subjectHash, decision: 'approve', ...extra } as never);
    expect(await decide({})).toMatchObject({ ok: false, error: { code: 'AP_BAD_REQUEST', message: expect.stringContaining("value {kind: 'permission', optionId}") } });
    expect(await decide({ value: { kind: 'permission', optionId: 'delete-everything' } })).toMatchObject({ ok: false, error: { message: expect.stringContaining('allow, reject') } });
    expect(await decide({ subjectHash: '0'.repeat(64), value: { kind: 'permission', optionId: 'allow' } })).toMatchObject({ ok: false, error: { code: 'AP_CONFLICT' } });
    expect(await decide({ decision: 'snooze', until: new Date(Date.now() + 60_000).toISOString() })).toMatchObject({ ok: false, error: { message: expect.stringContaining('cannot be snoozed') } });
    expect(await permissionWaits(plane)).toHaveLength(1);

    const decided = await client.call('approvals.decide', { runId: run.runId, waitId: wait.waitId, subjectHash: wait.subjectHash, decision: 'approve', value: { kind: 'permission', optionId: 'allow' } });
    expect(decided).toMatchObject({ status: 'running', pending: null });
    const chose = await until(async () => editor.lines.find((m) => JSON.stringify(m).includes('"chose ')), 'the agent to report its answer');
    expect(JSON.stringify(chose)).toContain('chose allow');
    expect(editor.lines.some((m) => m.method === '$/cancel_request')).toBe(true);
    expect(await permissionWaits(plane)).toEqual([]);
    // Deciding it twice: it is no longer open.
    expect(await decide({ value: { kind: 'permission', optionId: 'reject' } })).toMatchObject({ ok: false, error: { code: 'AP_CONFLICT' } });
    const session = await client.call('acp.session', { runId: run.runId });
    expect(session.permissions[0]!.outcome).toMatchObject({ by: 'plane:user:local', outcome: 'selected', optionId: 'allow' });
  });

  it('a denial cancels the request; under --policy observe nothing waits at the plane', { timeout: 60_000 }, async () => {
    const plane = await testPlane({ dataDir: tempDir() });
    cleanups.push(() => plane.close());
    const client = clientOf(plane);
    const observed = tappedEditor(plane, 'observe');
    await until(async () => ((await client.call('acp.sessions', { limit: 10 })).sessions[0]?.state === 'waiting' ? true : undefined), 'the observed request');
    expect(await permissionWaits(plane)).toEqual([]);
    observed.send({ jsonrpc: '2.0', id: 200, result: { outcome: { outcome: 'cancelled' } } });

    const editor = tappedEditor(plane, 'inbox');
    const [run] = await until(async () => {
      const list = await permissionWaits(plane);
      return list.length > 0 ? list : undefined;
    }, 'the permission request');
    await client.call('approvals.decide', { runId: run!.runId, waitId: run!.pending!.waitId, subjectHash: run!.pending!.subjectHash, decision: 'deny', reason: 'not now' });
    const chose = await until(async () => editor.lines.find((m) => JSON.stringify(m).includes('"chose ')), 'the agent to report its answer');
    expect(JSON.stringify(chose)).toContain('chose cancelled');
  });
});
