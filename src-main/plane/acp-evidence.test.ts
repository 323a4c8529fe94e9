/**
 * What the plane keeps of an ACP session recorded as evidence (docs/GOVERNED-RUNTIME.md,
 * "Observing an agent you do not run"), through the contract as the tap and the UI reach it:
 * `acp.record` puts presentation lines in the transcript store and evidence in the journal;
 * `acp.session` reads both back as one conversation, marked as transcript, live (an
 * `acp.transcript` event when only the transcript grew); erasing the transcript leaves the
 * evidence whole. Then cases: a session bound by its session id, listed and shown; and the
 * audit, listing the observed run as unadmitted beside the runs the plane admitted.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { PlaneEvent } from '../../src-shared/ipc/contract';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { newRunId } from '../base/random-ids';
import type { Plane } from './plane';
import { call, failure, testPlane } from '../../tests/support/runtime-support';

const planes: Plane[] = [];
afterEach(async () => {
  for (const plane of planes.splice(0)) await plane.close();
});

const AT = '2026-12-07T10:00:00.000Z';
const message = (wire: number, dir: 'toAgent' | 'toEditor', body: Record<string, unknown>) => ({ update: 'message', detail: { dir, wire, at: AT, message: { jsonrpc: '2.0', ...body } } });
const chunk = (wire: number, sessionId: string, text: string) => ({
  wire,
  dir: 'toEditor' as const,
  at: AT,
  kind: 'agent_message_chunk',
  message: { jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } },
});

async function planeWithSession(sessionId: string) {
  const plane = await testPlane();
  planes.push(plane);
  const events: PlaneEvent[] = [];
  plane.events.subscribe((event) => events.push(event));
  const runId = newRunId();
  await call(plane, 'acp.record', {
    runId,
    sessionId,
    observations: [
      { update: 'tap/started', detail: { at: AT, tapName: 'fake', policy: 'observe', record: 'evidence', command: ['fake'] } },
      message(1, 'toAgent', { id: 1, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hi' }] } }),
    ],
  });
  return { plane, events, runId };
}

describe('a session recorded as evidence, at the plane', () => {
  it('reads journal and transcript back as one conversation, marked; an erased transcript leaves the evidence', async () => {
    const sessionId = 'sess-evidence';
    const { plane, events, runId } = await planeWithSession(sessionId);
    // Only the transcript grows: no record, an acp.transcript event.
    const before = (await call(plane, 'journal.runs', {})).runs.find((r) => r.runId === runId)!.lastSeq;
    await call(plane, 'acp.record', { runId, sessionId, observations: [], transcript: [chunk(2, sessionId, 'Hel'), chunk(3, sessionId, 'lo')] });
    expect((await call(plane, 'journal.runs', {})).runs.find((r) => r.runId === runId)!.lastSeq).toBe(before);
    expect(events.filter((e) => e.name === 'acp.transcript')).toEqual([{ name: 'acp.transcript', payload: { runId, lastWire: 3 } }]);
    let view = await call(plane, 'acp.session', { runId });
    expect(view.conversation.map((i) => [i.kind, 'text' in i ? i.text : null])).toEqual([
      ['prompt', null],
      ['message', 'Hello'],
    ]);
    // The next record names the two chunks; the view puts them before it.
    await call(plane, 'acp.record', { runId, sessionId, observations: [{ ...message(4, 'toEditor', { id: 1, result: { stopReason: 'end_turn' } }), detail: { ...message(4, 'toEditor', { id: 1, result: { stopReason: 'end_turn' } }).detail, omitted: { agent_message_chunk: 2 } } }] });
    view = await call(plane, 'acp.session', { runId });
    expect(view.conversation.map((i) => i.kind)).toEqual(['prompt', 'message', 'turnEnd']);
    expect(view.transcript).toEqual({ leftOut: { agent_message_chunk: 2 }, kept: 2, retentionDays: 30 });
    const listed = await call(plane, 'acp.sessions', {});
    expect(listed.sessions[0]).not.toHaveProperty('transcript');

    expect(await call(plane, 'acp.transcriptErase', { sessionId })).toEqual({ sessionId, runIds: [runId], lines: 2 });
    view = await call(plane, 'acp.session', { runId });
    expect(view.conversation.map((i) => i.kind)).toEqual(['prompt', 'turnEnd']);
    expect(view.transcript).toEqual({ leftOut: { agent_message_chunk: 2 }, kept: 0, retentionDays: 30 });
    expect(await failure(plane, 'acp.transcriptErase', { sessionId: 'sess-none' })).toMatchObject({ code: ErrorCode.NotFound, message: expect.stringContaining('no observed ACP session has the session id "sess-none"') });

    expect(await call(plane, 'acp.transcriptRetention', {})).toEqual({ days: 30, removed: 0 });
    expect(await call(plane, 'acp.transcriptRetention', { days: 7 })).toEqual({ days: 7, removed: 0 });
    expect((await call(plane, 'acp.session', { runId })).transcript?.retentionDays).toBe(7);
    expect(await failure(plane, 'acp.transcriptRetention', { days: 0 })).toMatchObject({ code: ErrorCode.BadRequest });
  });
});

describe('cases and the audit', () => {
  it('binds a session by its session id, lists and shows the case, and audits the observed run as unadmitted', async () => {
    const sessionId = 'sess-case';
    const { plane, runId } = await planeWithSession(sessionId);
    expect(await failure(plane, 'cases.bind', { caseId: 'M-1', sessionId: 'sess-none' })).toMatchObject({ code: ErrorCode.NotFound, message: expect.stringContaining('no observed ACP session has the session id "sess-none"') });
    expect(await failure(plane, 'cases.bind', { caseId: 'no spaces', sessionId })).toMatchObject({ code: ErrorCode.BadRequest });
    const bound = await call(plane, 'cases.bind', { caseId: 'M-1', sessionId, note: 'the greeting change' });
    expect(bound).toMatchObject({ caseId: 'M-1', sessionId, runIds: [runId], by: 'user:local', note: 'the greeting change' });
    const [record] = (await call(plane, 'journal.records', { runId: null, fromSeq: bound.seq, limit: 1 })).records;
    expect(record).toMatchObject({ kind: 'CaseBound', runId: null, v: 1 });
    expect(await failure(plane, 'cases.bind', { caseId: 'M-1', sessionId })).toMatchObject({ code: ErrorCode.Conflict, message: `session "${sessionId}" is already bound to case M-1` });
    await call(plane, 'cases.bind', { caseId: 'M-2', sessionId });

    expect(await call(plane, 'cases.list', {})).toEqual({
      cases: [
        { caseId: 'M-2', sessions: 1, bindings: 1, lastSeq: bound.seq + 1, lastAt: expect.any(String) },
        { caseId: 'M-1', sessions: 1, bindings: 1, lastSeq: bound.seq, lastAt: bound.at },
      ],
    });
    expect(await call(plane, 'cases.show', { caseId: 'M-1' })).toEqual({ caseId: 'M-1', bindings: [bound] });
    expect(await failure(plane, 'cases.show', { caseId: 'M-9' })).toMatchObject({ code: ErrorCode.NotFound, message: expect.stringContaining('no case M-9') });

    const audit = await call(plane, 'audit.runs', {});
    expect(audit.unadmitted).toEqual([{ runId, sessionId, admission: 'unadmitted', sealed: false, records: 2, firstSeq: expect.any(Number), lastSeq: expect.any(Number), cases: ['M-1', 'M-2'] }]);
    expect(audit.admitted).toEqual({ runs: 0, sealed: 0 });
  });
});
