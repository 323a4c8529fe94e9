/**
 * A run's MCP calls read as what they are, in the timeline and in the approvals inbox: which
 * tool on which server, with what arguments, and what came back (the tool's text, not the JSON
 * of its content blocks). Records are built the way the runtime writes them (runtime/mcp-effect.ts:
 * `effect: 'mcp'`, `name: '<server>/<tool>'`, `request: {server, tool, arguments}`, the result
 * labelled `mcp:<server>`).
 */
import { describe, expect, it } from 'vitest';
import type { RecordView, Wait } from '../../../src-shared/ipc/contract';
import type { WaitSubject } from '../../../src-shared/vocabulary/waits';
import { mcpResultText, readMcpCall } from './mcp-call';
import { searchableText, summarizeRecord } from './record-summary';
import { describeWait } from './wait-description';

const NO = { effects: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 };
const KEY = 'cd'.repeat(32);
let seq = 0;
const record = (kind: string, body: Record<string, unknown>): RecordView =>
  ({ seq: ++seq, runId: `run-${'a'.repeat(20)}`, kind, v: 1, time: '2026-12-01T03:00:00.000Z', body, hash: 'ab'.repeat(32), prevHash: 'ef'.repeat(32), known: true }) as RecordView;
const request = { server: 'everything', tool: 'echo', arguments: { message: 'hello there' } };

describe('MCP calls in the timeline', () => {
  it('EffectStarted names the tool, the server, the arguments and where the call goes', () => {
    const started = record('EffectStarted', { step: 0, effect: 'mcp', name: 'everything/echo', key: KEY, request, destination: 'stdio:node' });
    expect(summarizeRecord(started)).toBe('MCP tool echo on everything {"message":"hello there"} → stdio:node');
  });

  it('EffectDone shows the tool’s text, not the JSON of its content blocks', () => {
    const done = record('EffectDone', { step: 0, key: KEY, result: { content: [{ type: 'text', text: 'Echo: hello there' }] }, spend: { ...NO, effects: 1 }, provenance: 'mcp:everything' });
    const line = summarizeRecord(done);
    expect(line).toContain('from mcp:everything · Echo: hello there');
    expect(line).not.toContain('"type"');
    // Search still reaches the raw body.
    expect(searchableText(done)).toContain('"text":"echo: hello there"');
  });

  it('says what non-text blocks are, falls back to structured content, and names a digested result', () => {
    expect(mcpResultText({ content: [{ type: 'text', text: 'see' }, { type: 'image', mimeType: 'image/png', data: 'AAAA' }, { type: 'resource_link', uri: 'file:///a.txt', name: 'a' }] })).toBe('see [image image/png] [resource file:///a.txt]');
    expect(mcpResultText({ content: [], structuredContent: { sum: 3 } })).toBe('{"sum":3}');
    expect(mcpResultText({ large: { sha256: 'f'.repeat(64), bytes: 70000 }, note: 'larger than 65536 bytes' })).toBe(`a large result: 70000 bytes, kept as their SHA-256 ${'f'.repeat(12)}…`);
    expect(mcpResultText({ sha256: 'f'.repeat(64), bytes: 70000 })).toBe(`a large result: 70000 bytes, kept as their SHA-256 ${'f'.repeat(12)}…`);
    expect(mcpResultText({ not: 'a tool result' })).toBeNull();
  });

  it('leaves other effects as they were, and an mcp request of another shape is shown raw', () => {
    const peer = record('EffectStarted', { step: 1, effect: 'peer', name: 'beta/ask', key: KEY, request: { peer: 'beta', skill: 'ask', arguments: { query: 'q' } } });
    expect(summarizeRecord(peer)).toBe('peer beta/ask {"peer":"beta","skill":"ask","arguments":{"query":"q"}}');
    expect(readMcpCall('mcp', { uri: 'file:///x' })).toBeNull();
    const odd = record('EffectStarted', { step: 1, effect: 'mcp', name: 'x/y', key: KEY, request: { uri: 'file:///x' } });
    expect(summarizeRecord(odd)).toBe('mcp x/y {"uri":"file:///x"}');
  });
});

describe('MCP calls in the approvals inbox', () => {
  const wait = (subject: WaitSubject): Wait => ({ waitId: 'w1', reason: subject.kind, step: 0, subject, subjectHash: 'ab'.repeat(32), since: '2026-01-01T00:00:00.000Z', seq: 3 }) as Wait;
  const held = { effect: 'mcp' as const, name: 'everything/echo', request, destination: 'stdio:node', estimate: { ...NO, effects: 1 }, chain: ['user:local'], agent: 'echoer', owner: 'user:local' };

  it('asks "Call MCP tool echo on everything?" and shows the tool’s arguments', () => {
    const d = describeWait(wait({ kind: 'approval', ...held } as WaitSubject));
    expect(d.summary).toBe('Call MCP tool echo on everything?');
    expect(d.args).toEqual({ message: 'hello there' });
    expect(d.effect).toBe('mcp everything/echo → stdio:node');
  });

  it('reads an oversight review and an in-doubt call the same way', () => {
    expect(describeWait(wait({ kind: 'oversight', ...held } as WaitSubject)).summary).toBe('Review the call of MCP tool echo on everything before it runs');
    const recovery = describeWait(wait({ kind: 'recovery', effect: 'mcp', name: 'everything/echo', request, agent: 'echoer', owner: 'user:local' } as WaitSubject));
    expect(recovery.summary).toBe('Did the call of MCP tool echo on everything happen? Retry it, mark it landed, or fail the run');
    expect(recovery.args).toEqual({ message: 'hello there' });
  });
});
