/**
 * A remote's JSON-RPC error as the plane's A2A client says it (a2a-remote-error.ts): the 1.0
 * array form of `error.data` (a google.rpc.ErrorInfo), the bare object older servers sent, and
 * whatever else a server may put there, each read without throwing.
 */
import { describe, expect, it } from 'vitest';
import { remoteErrorText } from './a2a-remote-error';

describe('a remote A2A error, said in one line', () => {
  it('reads the ErrorInfo in the array form: reason and field', () => {
    const data = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'INVALID_PARAMS', domain: 'agentplane.io', metadata: { field: 'message.parts[0].data.text' } }];
    expect(remoteErrorText({ code: -32602, message: 'Invalid params: text must be a string', data })).toBe('-32602 (INVALID_PARAMS): Invalid params: text must be a string [field message.parts[0].data.text]');
    const notFound = [{ '@type': 'type.googleapis.com/google.rpc.BadRequest' }, { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' }];
    expect(remoteErrorText({ code: -32001, message: 'no task t', data: notFound })).toBe('-32001 (TASK_NOT_FOUND): no task t');
  });

  it('still reads the old object form, and ignores what it cannot read', () => {
    expect(remoteErrorText({ code: -32602, message: 'bad', data: { field: 'message' } })).toBe('-32602: bad [field message]');
    expect(remoteErrorText({ code: -32603, message: 'x', data: 'text' })).toBe('-32603: x');
    expect(remoteErrorText({ code: -32603, message: 'x', data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'not a reason\nX: 1' }] })).toBe('-32603: x');
    expect(remoteErrorText({ message: 'no code' })).toBe('NaN: no code');
  });
});
