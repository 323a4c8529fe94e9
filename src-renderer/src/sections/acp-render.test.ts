/**
 * The Editor sessions views rendered (to HTML, in Node) from a session the shared fold built
 * out of a realistic wire: the conversation, plan, tool call with its diff, permission request
 * and tabs show what they should, with their accessible names. The browser test (e2e) covers
 * behaviour; this covers that every part renders from a real SessionView without a browser.
 */
import { createElement, type ReactElement } from 'react';
import { renderToString } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { createPlaneClient } from '../../../src-shared/ipc/client';
import { foldSession, type ObservedMessage } from '../../../src-shared/protocol/acp/session-fold';
import { createAppStore, type AppState, type AppStore } from '../store/app-store';
import { StoreContext } from '../store/store-context';
import { manualEnv } from '../store/testing/store-harness';
import { AcpSessionPage } from './acp-session';
import { AcpSection } from './acp-section';

const RUN = `run-${'b'.repeat(20)}`;
const S = 'sess-9';
let wire = 0;
const at = () => new Date(Date.UTC(2026, 10, 30, 12, 0, 0, wire * 10)).toISOString();
const msg = (dir: 'toAgent' | 'toEditor', message: Record<string, unknown>): ObservedMessage => ({ update: 'message', dir, wire: wire++, at: at(), message: { jsonrpc: '2.0', ...message } });
const update = (u: Record<string, unknown>) => msg('toEditor', { method: 'session/update', params: { sessionId: S, update: u } });

function session() {
  wire = 0;
  return foldSession(RUN, S, [
    { update: 'tap/started', at: at(), tapName: 'my-agent', policy: 'observe', command: ['my-agent', '--acp'] },
    msg('toAgent', { id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'zed', version: '0.190.1' } } }),
    msg('toEditor', { id: 0, result: { protocolVersion: 1, agentCapabilities: {}, agentInfo: { name: 'my-agent', version: '1.2.3' } } }),
    msg('toAgent', { id: 1, method: 'session/new', params: { cwd: '/work/project', mcpServers: [] } }),
    msg('toEditor', { id: 1, result: { sessionId: S } }),
    msg('toAgent', { id: 2, method: 'session/prompt', params: { sessionId: S, prompt: [{ type: 'text', text: 'Fix the typo' }] } }),
    update({ sessionUpdate: 'agent_thought_chunk', content: { type: 'text', text: 'Looking for it' } }),
    update({ sessionUpdate: 'plan', entries: [{ content: 'Edit notes.txt', priority: 'high', status: 'in_progress' }] }),
    update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'I will ' } }),
    update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'fix it.' } }),
    update({
      sessionUpdate: 'tool_call',
      toolCallId: 'call-1',
      title: 'Edit notes.txt',
      kind: 'edit',
      status: 'pending',
      locations: [{ path: '/work/project/notes.txt', line: 2 }],
      content: [{ type: 'diff', path: '/work/project/notes.txt', oldText: 'one\ntow\nthree\n', newText: 'one\ntwo\nthree\n' }],
    }),
    msg('toEditor', {
      id: 0,
      method: 'session/request_permission',
      params: {
        sessionId: S,
        toolCall: { toolCallId: 'call-1', title: 'Edit notes.txt' },
        options: [
          { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
          { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
        ],
      },
    }),
    msg('toAgent', { id: 0, result: { outcome: { outcome: 'selected', optionId: 'allow' } } }),
    update({ sessionUpdate: 'tool_call_update', toolCallId: 'call-1', status: 'completed' }),
    msg('toEditor', { id: 2, result: { stopReason: 'end_turn' } }),
  ]);
}

function storeWith(patch: Partial<AppState>): AppStore {
  const offline = { invoke: () => new Promise<never>(() => undefined), connectEvents: () => ({ close: () => undefined }) };
  const store = createAppStore(createPlaneClient(offline), manualEnv());
  store.setState(patch);
  // Server rendering reads the store's initial state (useSyncExternalStore's server snapshot).
  return { ...store, getInitialState: store.getState };
}

const render = (store: AppStore, element: ReactElement) => renderToString(createElement(StoreContext.Provider, { value: store }, element));
const text = (html: string) => html.replace(/<[^>]+>/g, ' ').replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&gt;/g, '>').replace(/&lt;/g, '<').replace(/\s+/g, ' ');

describe('the Editor sessions views render a folded session', () => {
  it('the session page: header, tabs, conversation with plan, tool call diff and permission outcome', () => {
    const view = session();
    const store = storeWith({ acpOpen: { runId: RUN, view, error: null, lastSeq: null, generation: 1 }, acpSessions: [] });
    const html = render(store, createElement(AcpSessionPage, { runId: RUN }));
    const shown = text(html);
    expect(shown).toContain('my-agent');
    expect(shown).toContain('zed 0.190.1');
    expect(shown).toContain('my-agent 1.2.3');
    expect(shown).toContain('/work/project');
    expect(shown).toContain('Fix the typo');
    expect(shown).toContain('I will fix it.');
    expect(shown).toContain('Agent\'s thought');
    expect(shown).toContain('Edit notes.txt');
    expect(shown).toContain('in progress');
    expect(shown).toContain('@@ -1,3 +1,3 @@');
    expect(shown).toMatch(/removed: tow/);
    expect(shown).toMatch(/added: two/);
    expect(shown).toContain('completed');
    expect(shown).toContain('The editor chose “Allow” (allow once)');
    expect(shown).toContain('stop reason end_turn');
    expect(html).toContain('role="tablist"');
    expect(html).toMatch(/role="tab"[^>]*aria-selected="true"[^>]*>Conversation/);
    expect(html).toContain('role="tabpanel"');
    expect(html).toContain('aria-label="Copy the diff of /work/project/notes.txt"');
    expect(html).toContain('Export bundle');
  });

  it('a session recorded as evidence reads the same, its conversation marked "transcript, not evidence"', () => {
    const plain = text(render(storeWith({ acpOpen: { runId: RUN, view: session(), error: null, lastSeq: null, generation: 1 }, acpSessions: [] }), createElement(AcpSessionPage, { runId: RUN })));
    expect(plain).not.toMatch(/transcript/i);
    const view = { ...session(), transcript: { leftOut: { agent_thought_chunk: 1, plan: 1, agent_message_chunk: 2 }, kept: 3, retentionDays: 30 } };
    const html = render(storeWith({ acpOpen: { runId: RUN, view, error: null, lastSeq: null, generation: 1 }, acpSessions: [] }), createElement(AcpSessionPage, { runId: RUN }));
    const shown = text(html);
    expect(html).toMatch(/role="note" aria-label="Transcript, not evidence"/);
    expect(shown).toContain('Transcript, not evidence. Messages, thoughts and the plan are kept beside the journal for 30 days, not in it.');
    expect(shown).toContain('The journal names what it left out: agent_thought_chunk 1, plan 1, agent_message_chunk 2.');
    expect(shown).toContain('1 of them are no longer kept (erased or past retention).');
    // The conversation itself is as it was, each message and thought marked.
    expect(shown).toContain('I will fix it.');
    expect(shown.match(/· transcript/g)).toHaveLength(2);
    expect(html).toMatch(/<button[^>]*>Erase transcript…<\/button>/);
  });

  it('the list: each session with its parties, state in words and counts; empty: how to connect an editor', () => {
    const view = session();
    const { conversation: _c, plan: _p, toolCalls: _t, permissions: _q, clientEffects: _e, terminals: _x, ...summary } = view;
    const listed = text(render(storeWith({ acpLoaded: true, acpSessions: [summary], route: { section: 'acp', runId: null, seq: null, peerId: null } }), createElement(AcpSection, { empty: 'None.' })));
    expect(listed).toContain('zed 0.190.1');
    expect(listed).toMatch(/Idle|Ended|Active|Waiting for permission/);
    const empty = render(storeWith({ acpLoaded: true, acpSessions: [], route: { section: 'acp', runId: null, seq: null, peerId: null } }), createElement(AcpSection, { empty: 'None.' }));
    expect(text(empty)).toContain('agentplane acp tap -- <agent command>');
    expect(text(empty)).toContain('agentplane acp demo');
    expect(text(empty)).toContain('"agent_servers"');
    expect(empty).toContain('aria-label="Copy the Zed settings snippet"');
  });
});
