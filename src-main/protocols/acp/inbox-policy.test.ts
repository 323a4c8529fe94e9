/**
 * `--policy inbox` on the tap, with a real agent process (tests/doubles/acp-fake-agent.mjs in
 * its `permission` mode) and the test as both the editor (stdio streams) and the inbox (the
 * PermissionInbox the tap tells, and answerPermission for a person's answer). The plane's half
 * (the approvals inbox item, a person's decision journaled) is not in this test.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { FAKE_AGENT } from '../../../tests/helpers/acp-tap-process';
import { startTap, type RunningTap } from './acp-tap';
import type { RunWrite } from './session-runs';
import type { HeldPermission } from './permission-relay';

const tempDir = useTempFolders('agentplane-acp-inbox-');
const taps: RunningTap[] = [];
afterEach(() => {
  for (const t of taps.splice(0)) t.close();
});

function editorSession(inFile: string, outFile?: string) {
  const editorIn = new PassThrough();
  const received: Buffer[] = [];
  const sent: Buffer[] = [];
  const editorOut = new PassThrough();
  const held: HeldPermission[] = [];
  const settled: Array<[string, string]> = [];
  const writes: RunWrite[] = [];
  const tap = startTap({
    command: [process.execPath, FAKE_AGENT, '--mode', 'permission', '--in', inFile, ...(outFile ? ['--out', outFile] : [])],
    tapName: 'fake',
    policy: 'inbox',
    editorIn,
    editorOut,
    editorErr: new PassThrough(),
    sink: { write: async (w) => void writes.push(w), close: async () => undefined },
    inbox: { hold: (r) => held.push(r), settled: (key, by) => settled.push([key, by]) },
  });
  taps.push(tap);
  const lines: Array<Record<string, unknown>> = [];
  let partial = '';
  const waiters = new Set<() => void>();
  editorOut.on('data', (chunk: Buffer) => {
    received.push(chunk);
    partial += chunk.toString();
    let nl;
    while ((nl = partial.indexOf('\n')) !== -1) {
      lines.push(JSON.parse(partial.slice(0, nl)) as Record<string, unknown>);
      partial = partial.slice(nl + 1);
    }
    for (const w of [...waiters]) w();
  });
  let taken = 0;
  const next = (match: (m: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no matching line')), 10_000);
      const check = () => {
        while (taken < lines.length) {
          const m = lines[taken++]!;
          if (match(m)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(m);
            return;
          }
        }
      };
      waiters.add(check);
      check();
    });
  const send = (m: unknown) => {
    const line = Buffer.from(`${JSON.stringify(m)}\n`);
    sent.push(line);
    editorIn.write(line);
  };
  return { tap, editorIn, held, settled, writes, next, send, received: () => Buffer.concat(received).toString(), sent: () => Buffer.concat(sent).toString() };
}

async function openTurn(s: ReturnType<typeof editorSession>): Promise<void> {
  s.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 1 } });
  await s.next((m) => m.id === 1);
  s.send({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/', mcpServers: [] } });
  await s.next((m) => m.id === 2);
  s.send({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId: 'sess-1', prompt: [{ type: 'text', text: 'write it' }] } });
  await s.next((m) => m.method === 'session/request_permission');
}

const chunkText = (m: Record<string, unknown>) => (m.params as { update?: { content?: { text?: string } } } | undefined)?.update?.content?.text;

describe('acp tap --policy inbox', () => {
  it("a person's answer reaches the agent, the editor is told the request is withdrawn, and its late answer is withheld", async () => {
    const dir = tempDir();
    const inFile = join(dir, 'agent-in');
    const outFile = join(dir, 'agent-out');
    const s = editorSession(inFile, outFile);
    await openTurn(s);
    expect(s.held).toEqual([expect.objectContaining({ sessionId: 'sess-1', requestKey: 'toEditor:200' })]);
    expect(s.tap.answerPermission('toEditor:200', { outcome: 'selected', optionId: 'allow' })).toBe(true);
    expect(await s.next((m) => m.method === '$/cancel_request')).toMatchObject({ params: { requestId: 200 } });
    expect(chunkText(await s.next((m) => typeof chunkText(m) === 'string'))).toBe('chose allow');
    await s.next((m) => m.id === 3);
    // The editor, not knowing $/cancel_request, answers anyway: the agent never sees it.
    s.send({ jsonrpc: '2.0', id: 200, result: { outcome: { outcome: 'selected', optionId: 'reject' } } });
    expect(s.tap.answerPermission('toEditor:200', { outcome: 'selected', optionId: 'allow' })).toBe(false);
    s.editorIn.end();
    await s.tap.done;
    expect(readFileSync(inFile, 'utf8')).not.toContain('reject');
    expect(s.settled).toEqual([]);
    // Apart from the tap's own two lines and the one it withheld, every byte passed unchanged.
    const answerLine = '{"jsonrpc":"2.0","id":200,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}\n';
    const withdrawLine = '{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":200}}\n';
    const lateAnswer = '{"jsonrpc":"2.0","id":200,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}\n';
    expect(s.received().replace(withdrawLine, '')).toBe(readFileSync(outFile, 'utf8'));
    expect(readFileSync(inFile, 'utf8').replace(answerLine, '')).toBe(s.sent().replace(lateAnswer, ''));
    // The tap's own lines are on the journaled wire like any other.
    const inserted = s.writes.flatMap((w) => w.observations).filter((o) => (o.detail as { origin?: string }).origin === 'tap');
    expect(inserted.map((o) => (o.detail as { dir: string }).dir).sort()).toEqual(['toAgent', 'toEditor']);
    expect(inserted.map((o) => (o.detail as { message: { method?: string } }).message.method ?? 'response').sort()).toEqual(['$/cancel_request', 'response']);
  }, 30_000);

  it("the editor's answer settles the inbox item, and a later answer at the plane is refused", async () => {
    const s = editorSession(join(tempDir(), 'agent-in'));
    await openTurn(s);
    s.send({ jsonrpc: '2.0', id: 200, result: { outcome: { outcome: 'selected', optionId: 'reject' } } });
    expect(chunkText(await s.next((m) => typeof chunkText(m) === 'string'))).toBe('chose reject');
    expect(s.settled).toEqual([['toEditor:200', 'editor']]);
    expect(s.tap.answerPermission('toEditor:200', { outcome: 'selected', optionId: 'allow' })).toBe(false);
    s.editorIn.end();
    await s.tap.done;
  }, 30_000);

  it('a prompt turn cancelled while the request is open settles the item as cancelled', async () => {
    const s = editorSession(join(tempDir(), 'agent-in'));
    await openTurn(s);
    s.send({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 'sess-1' } });
    expect(await s.next((m) => m.id === 3)).toMatchObject({ result: { stopReason: 'cancelled' } });
    expect(s.settled).toEqual([['toEditor:200', 'cancelled']]);
    s.editorIn.end();
    await s.tap.done;
  }, 30_000);
});
