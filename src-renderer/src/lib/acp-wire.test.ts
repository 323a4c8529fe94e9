import { describe, expect, it } from 'vitest';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { matchWire, wireCopyText, wireEntryOf } from './acp-wire';

let seq = 0;
const observation = (update: string, detail: unknown) =>
  ({ seq: ++seq, runId: 'run-x', kind: 'Observation', time: '2026-11-30T12:00:01.000Z', body: { source: 'acp', sessionId: 's', update, detail }, known: true }) as unknown as RecordView;
const msg = (dir: string, message: unknown) => observation('message', { dir, wire: seq, at: '2026-11-30T12:00:00.500Z', message });

describe('an observed record as a row of the raw wire', () => {
  it('reads direction, method, id and the session/update kind of a message', () => {
    const r = msg('toEditor', { jsonrpc: '2.0', method: 'session/update', params: { sessionId: 's', update: { sessionUpdate: 'agent_message_chunk' } } });
    expect(wireEntryOf(r)).toMatchObject({ direction: 'toEditor', label: 'session/update', note: 'agent_message_chunk', at: '2026-11-30T12:00:00.500Z' });
    expect(wireEntryOf(msg('toAgent', { jsonrpc: '2.0', id: 2, method: 'session/prompt', params: {} }))).toMatchObject({ direction: 'toAgent', label: 'session/prompt', note: 'id 2' });
  });

  it('names responses by the id they answer, with a stop reason or an error', () => {
    expect(wireEntryOf(msg('toEditor', { jsonrpc: '2.0', id: 2, result: { stopReason: 'end_turn' } }))).toMatchObject({ label: '↩ 2', note: 'stopReason end_turn' });
    expect(wireEntryOf(msg('toEditor', { jsonrpc: '2.0', id: '7', error: { code: -32601, message: 'nope' } }))).toMatchObject({ label: '↩ "7"', note: 'error -32601: nope' });
  });

  it("shows the tap's own entries and the plane's records as such", () => {
    expect(wireEntryOf(observation('tap/started', { at: '2026-11-30T12:00:00.000Z', tapName: 'a' }))).toMatchObject({ direction: 'plane', label: 'tap/started' });
    const sealed = { seq: ++seq, runId: 'run-x', kind: 'RunSealed', time: '2026-11-30T12:00:02.000Z', body: { outcome: 'observed' }, known: true } as unknown as RecordView;
    expect(wireEntryOf(sealed)).toMatchObject({ direction: 'plane', label: 'RunSealed', message: { outcome: 'observed' } });
  });

  it('search matches every word, in the direction, method and message text', () => {
    const records = [
      msg('toAgent', { jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: '/home/me/project' } }),
      msg('toEditor', { jsonrpc: '2.0', method: 'session/update', params: { update: { sessionUpdate: 'plan', entries: [{ content: 'Read the file' }] } } }),
      msg('toEditor', { jsonrpc: '2.0', id: 1, result: { sessionId: 'abc' } }),
    ];
    expect(matchWire(records, '  ')).toBeNull();
    expect(matchWire(records, 'project')).toEqual([0]);
    expect(matchWire(records, 'toEditor')).toEqual([1, 2]);
    expect(matchWire(records, 'toeditor abc')).toEqual([2]);
    expect(matchWire(records, 'plan READ')).toEqual([1]);
    expect(matchWire(records, 'plan nothing')).toEqual([]);
  });

  it('copies a message as pretty JSON after a line with its direction and time', () => {
    const text = wireCopyText(msg('toAgent', { jsonrpc: '2.0', id: 0, method: 'initialize' }));
    expect(text.split('\n')[0]).toMatch(/^\/\/ editor → agent at 2026-11-30T12:00:00.500Z \(seq \d+\)$/);
    expect(JSON.parse(text.split('\n').slice(1).join('\n'))).toEqual({ jsonrpc: '2.0', id: 0, method: 'initialize' });
  });
});
