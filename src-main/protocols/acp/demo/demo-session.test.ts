/**
 * The demo session end to end, with no tap between: the demo agent as a real process (started
 * the way the CLI starts it, demo-agent-command.ts) and the demo client against it, both on the
 * official SDK. Every ndjson line on the child's pipes is recorded in both directions, so the
 * assertions are about what crossed the wire, not about what either side says it did.
 *
 * The checks are the session the Editor sessions view is built to show: a plan, a file read, an
 * edit tool call with a diff, a permission request, a write only when allowed, a terminal whose
 * output was read, a streamed summary, `end_turn`; and `cancelled` when the turn is cancelled
 * while the permission request waits.
 */
import { mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempFolders } from '../../../../tests/helpers/temp-folders';
import { demoAgentCommand } from './demo-agent-command';
import { DEMO_AGENT_NAME } from './demo-agent-app';
import { DEMO_CLIENT_NAME, insideWorkspace, runDemoClient, type DemoPermissionAnswer, type WireDirection } from './demo-client';
import { DEMO_FILE, DEMO_FILE_TEXT, prepareDemoWorkspace } from './demo-workspace';

const tempFolder = useTempFolders('agentplane-acp-demo-test-');

interface WireMessage {
  direction: WireDirection;
  id?: number | string | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

async function runRecorded(permission: DemoPermissionAnswer, signal?: AbortSignal, onMessage?: (message: WireMessage) => void) {
  const workspace = tempFolder();
  const wire: WireMessage[] = [];
  const result = await runDemoClient({
    command: demoAgentCommand(),
    cwd: workspace,
    permission,
    signal,
    log: () => undefined,
    onWire: (direction, line) => {
      const message = { direction, ...(JSON.parse(line) as Omit<WireMessage, 'direction'>) };
      wire.push(message);
      onMessage?.(message);
    },
  });
  return { result, wire, file: join(result.workspace, DEMO_FILE) };
}

/** Requests of `method` sent in `direction`. */
const requests = (wire: WireMessage[], direction: WireDirection, method: string) => wire.filter((m) => m.direction === direction && m.method === method);

/** The response (in the other direction) to a request. */
function responseTo(wire: WireMessage[], request: WireMessage): WireMessage {
  const response = wire.find((m) => m.direction !== request.direction && m.method === undefined && m.id === request.id);
  if (!response) throw new Error(`no response to ${request.method ?? '?'} #${String(request.id)}`);
  return response;
}

const updateKinds = (wire: WireMessage[]) =>
  requests(wire, 'from-agent', 'session/update').map((m) => (m.params?.update as { sessionUpdate: string }).sessionUpdate);

function editDiff(wire: WireMessage[]): { path: string; oldText: string; newText: string } {
  const toolCall = requests(wire, 'from-agent', 'session/update')
    .map((m) => m.params?.update as { sessionUpdate: string; kind?: string; content?: Array<{ type: string }> })
    .find((u) => u.sessionUpdate === 'tool_call' && u.kind === 'edit');
  const diff = toolCall?.content?.find((c) => c.type === 'diff');
  if (!diff) throw new Error('no edit tool_call with a diff on the wire');
  return diff as unknown as { path: string; oldText: string; newText: string };
}

describe('the demo session (agent process <-> demo client, no tap)', () => {
  it('allowed: plans, reads, asks, writes the diff, runs the terminal and ends the turn', async () => {
    const { result, wire, file } = await runRecorded('allow');

    expect(result.stopReason).toBe('end_turn');
    const [initialize] = requests(wire, 'to-agent', 'initialize');
    expect(initialize?.params).toMatchObject({ protocolVersion: 1, clientInfo: { name: DEMO_CLIENT_NAME }, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true } });
    expect(responseTo(wire, initialize!).result).toMatchObject({ protocolVersion: 1, agentInfo: { name: DEMO_AGENT_NAME } });
    expect(requests(wire, 'to-agent', 'session/new')[0]?.params).toMatchObject({ cwd: result.workspace, mcpServers: [] });
    expect(requests(wire, 'to-agent', 'session/prompt')).toHaveLength(1);
    expect(new Set(updateKinds(wire))).toEqual(new Set(['agent_thought_chunk', 'plan', 'tool_call', 'tool_call_update', 'agent_message_chunk']));

    // The plan: three entries, its statuses moving until all are completed.
    const plans = requests(wire, 'from-agent', 'session/update')
      .map((m) => m.params?.update as { sessionUpdate: string; entries?: Array<{ status: string }> })
      .filter((u) => u.sessionUpdate === 'plan');
    expect(plans.length).toBeGreaterThanOrEqual(3);
    expect(plans.every((p) => p.entries?.length === 3)).toBe(true);
    expect(plans[0]?.entries?.map((e) => e.status)).toEqual(['in_progress', 'pending', 'pending']);
    expect(plans.at(-1)?.entries?.map((e) => e.status)).toEqual(['completed', 'completed', 'completed']);

    // The edit: pending -> in_progress -> completed, and the file now holds the diff's newText.
    const diff = editDiff(wire);
    expect(diff.path).toBe(file);
    expect(diff.oldText).toBe(DEMO_FILE_TEXT);
    expect(diff.newText).not.toBe(DEMO_FILE_TEXT);
    expect(readFileSync(file, 'utf8')).toBe(diff.newText);
    const editStatuses = requests(wire, 'from-agent', 'session/update')
      .map((m) => m.params?.update as { toolCallId?: string; status?: string })
      .filter((u) => u.toolCallId === 'edit-1' && u.status)
      .map((u) => u.status);
    expect(editStatuses).toEqual(['pending', 'in_progress', 'completed']);

    const [read] = requests(wire, 'from-agent', 'fs/read_text_file');
    expect(read?.params).toMatchObject({ path: file });
    expect(responseTo(wire, read!).result).toEqual({ content: DEMO_FILE_TEXT });
    const [permission] = requests(wire, 'from-agent', 'session/request_permission');
    expect((permission?.params?.options as Array<{ optionId: string }>).map((o) => o.optionId)).toEqual(['allow_once', 'allow_always', 'reject_once']);
    expect(responseTo(wire, permission!).result).toEqual({ outcome: { outcome: 'selected', optionId: 'allow_once' } });
    const writes = requests(wire, 'from-agent', 'fs/write_text_file');
    expect(writes.map((w) => w.params)).toEqual([expect.objectContaining({ path: file, content: diff.newText })]);

    // The terminal: created, waited on, its output read (showing the edit landed), released.
    expect(requests(wire, 'from-agent', 'terminal/create')).toHaveLength(1);
    expect(requests(wire, 'from-agent', 'terminal/wait_for_exit')).toHaveLength(1);
    expect(requests(wire, 'from-agent', 'terminal/release')).toHaveLength(1);
    const [output] = requests(wire, 'from-agent', 'terminal/output');
    expect(responseTo(wire, output!).result).toMatchObject({ output: expect.stringContaining('greeting check: friendly'), exitStatus: { exitCode: 0 } });

    expect(result.transcript).toContain('permission answered: allow_once');
    expect(result.transcript.at(-1)).toBe('turn ended: end_turn');
  });

  it('rejected: the file is left as it was and nothing is written', async () => {
    const { result, wire, file } = await runRecorded('reject');

    expect(result.stopReason).toBe('end_turn');
    expect(readFileSync(file, 'utf8')).toBe(DEMO_FILE_TEXT);
    expect(requests(wire, 'from-agent', 'fs/write_text_file')).toEqual([]);
    const [permission] = requests(wire, 'from-agent', 'session/request_permission');
    expect(responseTo(wire, permission!).result).toEqual({ outcome: { outcome: 'selected', optionId: 'reject_once' } });
    const [output] = requests(wire, 'from-agent', 'terminal/output');
    expect(responseTo(wire, output!).result).toMatchObject({ output: expect.stringContaining('greeting check: plain') });
  });

  it('waiting: the permission stays open until the turn is cancelled, then the prompt ends cancelled', async () => {
    const cancel = new AbortController();
    const { result, wire, file } = await runRecorded('wait', cancel.signal, (message) => {
      if (message.method === 'session/request_permission') setTimeout(() => cancel.abort(), 200);
    });

    expect(result.stopReason).toBe('cancelled');
    expect(requests(wire, 'to-agent', 'session/cancel')).toHaveLength(1);
    // Withdrawn by the agent ($/cancel_request) and answered cancelled by the client, never selected.
    const [permission] = requests(wire, 'from-agent', 'session/request_permission');
    expect(requests(wire, 'from-agent', '$/cancel_request').map((m) => m.params)).toEqual([{ requestId: permission?.id }]);
    expect(responseTo(wire, permission!).result).toEqual({ outcome: { outcome: 'cancelled' } });
    expect(requests(wire, 'from-agent', 'fs/write_text_file')).toEqual([]);
    expect(requests(wire, 'from-agent', 'terminal/create')).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(DEMO_FILE_TEXT);
  });
});

describe("the demo client's file access stays inside the workspace", () => {
  it('serves paths inside it, new files included, and refuses the rest by name', () => {
    const workspace = prepareDemoWorkspace(join(tempFolder(), 'workspace'));
    const outside = realpathSync(tempFolder());
    writeFileSync(join(outside, 'secret.txt'), 'not for agents');
    symlinkSync(outside, join(workspace, 'link-out'));
    mkdirSync(join(workspace, 'src'));

    expect(insideWorkspace(workspace, join(workspace, DEMO_FILE))).toBe(join(workspace, DEMO_FILE));
    expect(insideWorkspace(workspace, join(workspace, 'src', 'new', 'file.ts'))).toBe(join(workspace, 'src', 'new', 'file.ts'));
    expect(() => insideWorkspace(workspace, join(outside, 'secret.txt'))).toThrow(`refused: ${join(outside, 'secret.txt')} is outside the demo workspace ${workspace}`);
    expect(() => insideWorkspace(workspace, join(workspace, '..', 'x.ts'))).toThrow(/outside the demo workspace/);
    expect(() => insideWorkspace(workspace, join(workspace, 'link-out', 'secret.txt'))).toThrow(/outside the demo workspace/);
    expect(() => insideWorkspace(workspace, join(workspace, 'link-out', 'new.txt'))).toThrow(/outside the demo workspace/);
    expect(() => insideWorkspace(workspace, DEMO_FILE)).toThrow(/ACP paths are absolute/);
  });

  it('seeds a named workspace once and never overwrites what is there', () => {
    const dir = join(tempFolder(), 'named');
    const workspace = prepareDemoWorkspace(dir);
    expect(readFileSync(join(workspace, DEMO_FILE), 'utf8')).toBe(DEMO_FILE_TEXT);
    writeFileSync(join(workspace, DEMO_FILE), 'the user edited this');
    prepareDemoWorkspace(dir);
    expect(readFileSync(join(workspace, DEMO_FILE), 'utf8')).toBe('the user edited this');
  });
});
