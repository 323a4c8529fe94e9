/**
 * Editor sessions as a view of the journal, against a real plane: a tap's observations arrive
 * as `acp.record` batches (from a second client, as `agentplane acp tap` sends them); the list
 * and the open session follow the journal's notifications, coalesced, and the open session's
 * raw wire is read with `journal.records` and followed by seq. Requests are counted where they
 * leave the store's client.
 */
import { describe, expect, it } from 'vitest';
import { createPlaneClient, type PlaneClient } from '../../../src-shared/ipc/client';
import type { CommandName } from '../../../src-shared/ipc/contract';
import { testTransport } from '../../../tests/support/contract-support';
import { useSyncedHarnesses, type StoreHarness } from './testing/store-harness';

const harness = useSyncedHarnesses();

const RUN = `run-${'a'.repeat(20)}`;
const SESSION = 'sess-1';
const count = (requests: CommandName[], name: CommandName) => requests.filter((r) => r === name).length;

let wire = 0;
const at = () => new Date(Date.UTC(2026, 10, 30, 12, 0, 0, wire)).toISOString();
const message = (dir: 'toAgent' | 'toEditor', msg: Record<string, unknown>) => ({ update: 'message', detail: { dir, wire: wire++, at: at(), message: { jsonrpc: '2.0', ...msg } } });
const chunk = (text: string) =>
  message('toEditor', { method: 'session/update', params: { sessionId: SESSION, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } });

function opening(policy: 'observe' | 'inbox' = 'observe') {
  wire = 0;
  return [
    { update: 'tap/started', detail: { at: at(), tapName: 'demo-agent', policy, command: ['demo-agent', '--acp'] } },
    message('toAgent', { id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: 'zed', version: '0.190.1' } } }),
    message('toEditor', { id: 0, result: { protocolVersion: 1, agentCapabilities: {}, agentInfo: { name: 'demo-agent', version: '2.0.0' } } }),
    message('toAgent', { id: 1, method: 'session/new', params: { cwd: '/work/project', mcpServers: [] } }),
    message('toEditor', { id: 1, result: { sessionId: SESSION } }),
    message('toAgent', { id: 2, method: 'session/prompt', params: { sessionId: SESSION, prompt: [{ type: 'text', text: 'Say hello' }] } }),
  ];
}

async function tapClient(h: StoreHarness): Promise<{ tap: PlaneClient; record(observations: unknown[], runId?: string): Promise<void>; close(): void }> {
  const side = testTransport(h.plane);
  const tap = createPlaneClient(side.transport);
  return {
    tap,
    async record(observations, runId = RUN) {
      const result = await tap.tryCall('acp.record', { runId, sessionId: SESSION, observations: observations as Array<{ update: string; detail: unknown }> });
      if (!result.ok) throw new Error(result.error.message);
    },
    close: () => side.drop(),
  };
}

async function journalCaughtUp(h: StoreHarness) {
  const head = (await h.plane.journal.head()).seq;
  await h.until(() => h.store.getState().journalHead === head, `journal head ${head}`);
  await h.settle();
}

describe('editor sessions follow the journal by notification', () => {
  it('lists a new session when the section is shown, and marks the list stale while it is not', async () => {
    const h = await harness();
    const { record, close } = await tapClient(h);
    try {
      h.store.getState().navigate({ section: 'acp' });
      h.store.getState().touchAcpSessions();
      await h.settle();
      expect(h.store.getState()).toMatchObject({ acpLoaded: true, acpSessions: [] });

      await record(opening());
      await journalCaughtUp(h);
      h.env.clock.advance(100);
      await h.settle();
      const [session] = h.store.getState().acpSessions;
      expect(session).toMatchObject({
        runId: RUN,
        sessionId: SESSION,
        tapName: 'demo-agent',
        client: { name: 'zed', version: '0.190.1' },
        agent: { name: 'demo-agent', version: '2.0.0' },
        cwd: '/work/project',
        state: 'active',
        counts: { prompts: 1 },
      });

      // Away from the section, a change costs no read: the list is marked stale instead.
      h.store.getState().navigate({ section: 'runs' });
      const before = h.wire.requests.length;
      await record([chunk('Hello')]);
      await journalCaughtUp(h);
      h.env.clock.advance(1000);
      await h.settle();
      expect(count(h.wire.requests.slice(before), 'acp.sessions')).toBe(0);
      expect(h.store.getState().acpStale).toBe(true);
      h.store.getState().navigate({ section: 'acp' });
      h.store.getState().touchAcpSessions();
      await h.settle();
      expect(count(h.wire.requests.slice(before), 'acp.sessions')).toBe(1);
      expect(h.store.getState().acpStale).toBe(false);
    } finally {
      close();
    }
  });

  it('the open session shows a new message within the 200 ms window, and a burst of chunks costs a few reads', async () => {
    const h = await harness();
    const { record, close } = await tapClient(h);
    try {
      await record(opening());
      await journalCaughtUp(h);
      h.store.getState().navigate({ section: 'acp', runId: RUN });
      await h.settle();
      expect(h.store.getState().acpOpen.view).toMatchObject({ runId: RUN, conversation: [{ kind: 'prompt' }] });
      await h.store.getState().loadAcpWire();
      await h.settle();
      expect(h.store.getState().acpWire).toMatchObject({ runId: RUN, complete: true });
      expect(h.store.getState().acpWire.records).toHaveLength(6);

      // One message: shown once the short window closes (40 ms quiet), well inside 200 ms.
      await record([chunk('Hel')]);
      await journalCaughtUp(h);
      h.env.clock.advance(40);
      await h.settle();
      expect(h.store.getState().acpOpen.view?.conversation.at(-1)).toMatchObject({ kind: 'message', text: 'Hel' });
      expect(h.store.getState().acpWire.records).toHaveLength(7);

      // A stream: 40 chunks, one commit every 10 ms (never quiet): re-read at most every 150 ms.
      const before = h.wire.requests.length;
      for (let i = 0; i < 40; i++) {
        await record([chunk('lo')]);
        await journalCaughtUp(h);
        h.env.clock.advance(10);
        await h.settle();
      }
      h.env.clock.advance(40);
      await h.settle();
      const burst = h.wire.requests.slice(before);
      const reads = count(burst, 'acp.session');
      expect(reads).toBeGreaterThanOrEqual(2);
      expect(reads).toBeLessThanOrEqual(5);
      expect(count(burst, 'journal.records')).toBeLessThanOrEqual(reads);
      // An observed session is not a run of the runtime: its commits never send runs.get.
      expect(count(burst, 'runs.get')).toBe(0);
      const state = h.store.getState();
      expect(state.acpOpen.view?.conversation.at(-1)).toMatchObject({ kind: 'message', text: `Hel${'lo'.repeat(40)}` });
      expect(state.acpWire.records).toHaveLength(47);
      // Each record once, in seq order.
      expect(state.acpWire.records.every((r, i, all) => i === 0 || r.seq > all[i - 1]!.seq)).toBe(true);
      // What is left is the list's and the runs' slower windows (80 ms quiet); nothing repeats.
      h.env.clock.advance(1000);
      await h.settle();
      expect(h.env.clock.pending()).toBe(0);
    } finally {
      close();
    }
  });

  it('recorded as evidence, the open session shows a chunk that reached only the transcript within the same window', async () => {
    const h = await harness();
    const { tap, record, close } = await tapClient(h);
    try {
      const [started, ...rest] = opening();
      await record([{ ...started!, detail: { ...(started!.detail as object), record: 'evidence' } }, ...rest]);
      await journalCaughtUp(h);
      h.store.getState().navigate({ section: 'acp', runId: RUN });
      await h.settle();
      const head = (await h.plane.journal.head()).seq;
      // A chunk as the tap sends it when recording evidence: a transcript line, no record.
      const line = chunk('Hel').detail;
      const sent = await tap.tryCall('acp.record', { runId: RUN, sessionId: SESSION, observations: [], transcript: [{ wire: line.wire, dir: line.dir, at: line.at, kind: 'agent_message_chunk', message: line.message }] });
      expect(sent.ok).toBe(true);
      expect((await h.plane.journal.head()).seq).toBe(head);
      await h.until(() => h.env.clock.pending() > 0, 'a re-read scheduled by acp.transcript');
      h.env.clock.advance(40);
      await h.settle();
      expect(h.store.getState().acpOpen.view?.conversation.at(-1)).toMatchObject({ kind: 'message', text: 'Hel' });
      expect(h.store.getState().acpOpen.view?.transcript).toEqual({ leftOut: {}, kept: 1, retentionDays: 30 });

      // Erased from the page: the line goes, the evidence stays, and the view says so at once.
      expect(await h.store.getState().eraseAcpTranscript(SESSION)).toBe(true);
      expect(h.store.getState().acpOpen.view?.conversation.map((i) => i.kind)).toEqual(['prompt']);
      expect(h.store.getState().acpOpen.view?.transcript).toEqual({ leftOut: {}, kept: 0, retentionDays: 30 });
      expect((await h.plane.journal.head()).seq).toBe(head);
      expect(await h.store.getState().eraseAcpTranscript('sess-none')).toBe(false);
    } finally {
      close();
    }
  });

  it('leaving the session lets it go: its changes are no longer read', async () => {
    const h = await harness();
    const { record, close } = await tapClient(h);
    try {
      await record(opening());
      await journalCaughtUp(h);
      h.store.getState().navigate({ section: 'acp', runId: RUN });
      await h.settle();
      h.store.getState().navigate({ section: 'acp' });
      expect(h.store.getState().acpOpen.runId).toBeNull();
      const before = h.wire.requests.length;
      await record([chunk('unseen')]);
      await journalCaughtUp(h);
      h.env.clock.advance(1000);
      await h.settle();
      expect(count(h.wire.requests.slice(before), 'acp.session')).toBe(0);
    } finally {
      close();
    }
  });

  it('switching sessions while a read is in flight shows the one opened last, view and wire', async () => {
    const h = await harness();
    const { record, close } = await tapClient(h);
    const OTHER = `run-${'f'.repeat(20)}`;
    try {
      await record(opening());
      await record([...opening(), chunk('other session')], OTHER);
      await journalCaughtUp(h);
      h.store.getState().navigate({ section: 'acp', runId: RUN });
      void h.store.getState().loadAcpWire();
      // No settling: the first session's reads are still in flight.
      h.store.getState().navigate({ section: 'acp', runId: OTHER });
      void h.store.getState().loadAcpWire();
      await h.settle();
      const state = h.store.getState();
      expect(state.acpOpen).toMatchObject({ runId: OTHER, error: null });
      expect(state.acpOpen.view?.runId).toBe(OTHER);
      expect(state.acpOpen.view?.conversation.at(-1)).toMatchObject({ kind: 'message', text: 'other session' });
      expect(state.acpWire).toMatchObject({ runId: OTHER, complete: true });
      expect(state.acpWire.records).toHaveLength(7);
      expect(state.acpWire.records.every((r) => r.runId === OTHER)).toBe(true);
    } finally {
      close();
    }
  });

  it('under the inbox policy, a person answers an open permission request with one of its options', async () => {
    const h = await harness();
    const { record, close } = await tapClient(h);
    try {
      await record([
        ...opening('inbox'),
        message('toEditor', {
          id: 0,
          method: 'session/request_permission',
          params: {
            sessionId: SESSION,
            toolCall: { toolCallId: 'call-1', title: 'Edit notes.txt' },
            options: [
              { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
              { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
            ],
          },
        }),
      ]);
      await journalCaughtUp(h);
      h.store.getState().navigate({ section: 'acp', runId: RUN });
      await h.settle();
      const [permission] = h.store.getState().acpOpen.view!.permissions;
      expect(permission).toMatchObject({ outcome: null });
      expect(h.store.getState().acpOpen.view).toMatchObject({ policy: 'inbox', state: 'waiting' });

      expect(await h.store.getState().answerPermission(RUN, permission!, 'allow')).toBe(true);
      await journalCaughtUp(h);
      h.env.clock.advance(150);
      await h.settle();
      expect(h.store.getState().acpOpen.view!.permissions[0]!.outcome).toMatchObject({ outcome: 'selected', optionId: 'allow' });
      expect(h.store.getState().acpOpen.view!.permissions[0]!.outcome!.by).toMatch(/^plane:/);

      // Answered already: a second answer is refused by the plane, and the card says why.
      expect(await h.store.getState().answerPermission(RUN, permission!, 'reject')).toBe(false);
      expect(h.store.getState().acpPermissionErrors[permission!.requestKey]).toMatch(/already answered/);
    } finally {
      close();
    }
  });

  it('under the inbox policy, an open permission request waits in Approvals live, and is answered from there', async () => {
    const h = await harness();
    const { tap, record, close } = await tapClient(h);
    try {
      await record(opening('inbox'));
      await journalCaughtUp(h);
      h.env.clock.advance(1500);
      await h.settle();
      expect(h.store.getState().waiting).toEqual([]);

      await record([
        message('toEditor', {
          id: 7,
          method: 'session/request_permission',
          params: {
            sessionId: SESSION,
            toolCall: { toolCallId: 'call-1', title: 'Edit notes.txt', kind: 'edit', locations: [{ path: '/work/project/notes.txt', line: 2 }] },
            options: [
              { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
              { optionId: 'reject', name: 'Reject', kind: 'reject_once' },
            ],
          },
        }),
      ]);
      await journalCaughtUp(h);
      h.env.clock.advance(1500);
      await h.settle();
      const [waiting] = h.store.getState().waiting;
      expect(waiting).toMatchObject({ runId: RUN, agent: 'acp:demo-agent', status: 'suspended', pending: { reason: 'permission', subject: { toolCall: { title: 'Edit notes.txt', toolKind: 'edit' } } } });

      expect(await h.store.getState().decide(RUN, 'approve', { value: { kind: 'permission', optionId: 'reject' } })).toBe(true);
      await journalCaughtUp(h);
      h.env.clock.advance(1500);
      await h.settle();
      expect(h.store.getState().waiting).toEqual([]);
      const session = await tap.call('acp.session', { runId: RUN });
      expect(session.permissions[0]!.outcome).toMatchObject({ by: 'plane:user:local', outcome: 'selected', optionId: 'reject' });
    } finally {
      close();
    }
  });
});
