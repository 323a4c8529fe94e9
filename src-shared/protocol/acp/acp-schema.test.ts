import { describe, it, expect } from 'vitest';
import acpV1 from '@agentclientprotocol/sdk/schema/v1/schema.json';
import { ContentBlockSchema, StandInSchema, ToolCallSchema, isStandIn } from './acp-content';
import {
  ACP_PROTOCOL_VERSION,
  InitializeRequestSchema,
  InitializeResponseSchema,
  KnownSessionUpdateSchema,
  PromptResponseSchema,
  RequestPermissionRequestSchema,
  RequestPermissionResponseSchema,
  SessionNotificationSchema,
  SessionUpdateSchema,
  TerminalOutputResponseSchema,
  WriteTextFileRequestSchema,
  classifyMessage,
} from './acp-schema';

const standIn = { $digest: 'f'.repeat(64), $size: 70_000, $omitted: 'over 64 KB' };

describe('classifyMessage', () => {
  it('tells requests, notifications and responses apart, and carries the session', () => {
    expect(classifyMessage({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId: 's', prompt: [] } })).toEqual({
      type: 'request',
      method: 'session/prompt',
      id: 3,
      sessionId: 's',
    });
    expect(classifyMessage({ jsonrpc: '2.0', id: 'a', method: 'initialize', params: { protocolVersion: 1 } })).toEqual({ type: 'request', method: 'initialize', id: 'a' });
    expect(classifyMessage({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: 's' } })).toEqual({ type: 'notification', method: 'session/cancel', sessionId: 's' });
    expect(classifyMessage({ jsonrpc: '2.0', id: 1, result: { sessionId: 'new' } })).toEqual({ type: 'response', id: 1, sessionId: 'new' });
    expect(classifyMessage({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } })).toEqual({ type: 'response', id: null });
  });

  it('calls anything else invalid', () => {
    for (const bad of [
      null,
      'text',
      [{ jsonrpc: '2.0', method: 'x' }],
      { method: 'session/prompt', id: 1 },
      { jsonrpc: '1.0', method: 'x' },
      { jsonrpc: '2.0', id: { nested: true }, method: 'x' },
      { jsonrpc: '2.0', method: 7 },
      { jsonrpc: '2.0', id: 1 },
      { jsonrpc: '2.0', id: 1, error: { message: 'no code' } },
    ]) {
      expect(classifyMessage(bad), JSON.stringify(bad)).toEqual({ type: 'invalid' });
    }
  });
});

describe('ACP v1 schemas', () => {
  it('speak protocol version 1', () => {
    expect(ACP_PROTOCOL_VERSION).toBe(1);
  });

  it('know every sessionUpdate kind the SDK’s v1 schema defines', () => {
    const defs = (acpV1 as { $defs: { SessionUpdate: { oneOf: Array<{ properties: { sessionUpdate: { const: string } } }> } } }).$defs;
    const sdkKinds = defs.SessionUpdate.oneOf.map((v) => v.properties.sessionUpdate.const).sort();
    const ours = KnownSessionUpdateSchema.options.map((o) => o.shape.sessionUpdate.value as string).sort();
    expect(ours).toEqual(sdkKinds);
  });

  it('parse an unknown sessionUpdate kind, and a known kind with a broken shape, as the unknown branch', () => {
    const unknown = { sessionUpdate: 'hologram_update', beams: 3 };
    expect(SessionUpdateSchema.parse(unknown)).toEqual(unknown);
    expect(KnownSessionUpdateSchema.safeParse(unknown).success).toBe(false);
    expect(SessionNotificationSchema.safeParse({ sessionId: 's', update: { sessionUpdate: 'plan', entries: 'not a list' } }).success).toBe(true);
  });

  it('take the observed party’s words as strings, not a closed list', () => {
    expect(PromptResponseSchema.parse({ stopReason: 'paused_for_lunch' }).stopReason).toBe('paused_for_lunch');
    const request = RequestPermissionRequestSchema.parse({
      sessionId: 's',
      toolCall: { toolCallId: 't', kind: 'teleport', status: 'warming_up' },
      options: [{ optionId: 'o', name: 'Allow this hour', kind: 'allow_for_an_hour' }],
    });
    expect(request.options[0]?.kind).toBe('allow_for_an_hour');
    expect(request.toolCall.kind).toBe('teleport');
    const plan = KnownSessionUpdateSchema.parse({ sessionUpdate: 'plan', entries: [{ content: 'x', priority: 'urgent', status: 'blocked' }] });
    expect(plan).toMatchObject({ entries: [{ priority: 'urgent', status: 'blocked' }] });
  });

  it('keep fields a later revision adds', () => {
    const parsed = InitializeRequestSchema.parse({ protocolVersion: 1, clientInfo: { name: 'zed', version: '1', vendor: 'Zed' }, _meta: { trace: 'x' } });
    expect(parsed).toMatchObject({ _meta: { trace: 'x' }, clientInfo: { vendor: 'Zed' } });
    const agentSide = InitializeResponseSchema.parse({ protocolVersion: 1, agentInfo: { name: 'a', version: '2' }, authMethods: [{ id: 'k', name: 'Key' }, 'junk'] });
    expect(agentSide.authMethods).toEqual([{ id: 'k', name: 'Key' }]);
  });

  it('read the permission outcome as cancelled or selected with an option', () => {
    expect(RequestPermissionResponseSchema.parse({ outcome: { outcome: 'cancelled' } }).outcome).toEqual({ outcome: 'cancelled' });
    expect(RequestPermissionResponseSchema.parse({ outcome: { outcome: 'selected', optionId: 'a' } }).outcome).toEqual({ outcome: 'selected', optionId: 'a' });
    expect(RequestPermissionResponseSchema.safeParse({ outcome: { outcome: 'selected' } }).success).toBe(false);
  });

  it('read tool call content: content, diff and terminal, dropping a bad location rather than the call', () => {
    const call = ToolCallSchema.parse({
      toolCallId: 't',
      title: 'Edit',
      content: [
        { type: 'content', content: { type: 'text', text: 'hi' } },
        { type: 'diff', path: '/a', oldText: null, newText: 'new' },
        { type: 'terminal', terminalId: 'term' },
      ],
      locations: [{ path: '/a', line: 2 }, { line: 'three' }],
    });
    expect(call.content?.map((c) => c.type)).toEqual(['content', 'diff', 'terminal']);
    expect(call.locations).toEqual([{ path: '/a', line: 2 }]);
  });

  it('read a content block of a type it does not know as the fallback', () => {
    expect(ContentBlockSchema.parse({ type: 'hologram', beams: 2 })).toEqual({ type: 'hologram', beams: 2 });
    expect(ContentBlockSchema.safeParse({ text: 'no type' }).success).toBe(false);
  });

  it('accept the tap’s stand-ins where large strings were', () => {
    expect(isStandIn(standIn)).toBe(true);
    expect(isStandIn({ $digest: 'f', $size: 1 })).toBe(false);
    expect(isStandIn('text')).toBe(false);
    expect(StandInSchema.safeParse({ ...standIn, $size: '70000' }).success).toBe(false);
    expect(WriteTextFileRequestSchema.parse({ sessionId: 's', path: '/a', content: standIn }).content).toEqual(standIn);
    expect(TerminalOutputResponseSchema.parse({ output: standIn, truncated: false }).output).toEqual(standIn);
    expect(ContentBlockSchema.parse({ type: 'text', text: standIn })).toEqual({ type: 'text', text: standIn });
    expect(WriteTextFileRequestSchema.safeParse({ sessionId: 's', path: '/a', content: { $size: 3 } }).success).toBe(false);
  });
});
