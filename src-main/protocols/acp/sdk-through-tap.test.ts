/**
 * The official SDK on both sides of the tap: the demo editor (an SDK client) starts
 * `agentplane acp tap` (the CLI, from source) with the demo agent (an SDK agent) behind it, and
 * a recorder (tests/doubles/stdio-recorder.mjs) between the tap and the agent keeps exactly what
 * the agent received and sent. Every byte the editor sent reaches the agent and every byte the
 * agent sent reaches the editor, unchanged, in one observed run that is sealed and verifies.
 *
 * Recorded as evidence (the default), the demo's one turn is 28 message records where it was 38
 * (31 records in the run, with tap/started, tap/ended and the seal, where it was 41): its 3
 * thought chunks, 4 plans and 3 message chunks are in the transcript store, named by the
 * records after them, and the session reads as before. With `--record full` the journal holds
 * every message, in wire order, as it was on the wire.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../tests/helpers/acp-tap-process';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { Journal } from '../../journal/journal';
import { demoAgentCommand } from './demo/demo-agent-command';
import { runDemoClient } from './demo/demo-client';
import { verifyJournalStore } from '../../journal/journal-workers';
import { TranscriptStore } from '../../journal/transcript-store';
import type { StoredRecord } from '../../journal/journal-store';

const tempDir = useTempFolders('agentplane-acp-sdk-tap-');
const CLI_SOURCE = join(REPO_ROOT, 'src-main', 'cli', 'main.ts');
const RECORDER = join(REPO_ROOT, 'tests', 'doubles', 'stdio-recorder.mjs');

/** The demo's one turn through the tap (with `tapArgs`); what each side sent, and the observed run's records. */
async function demoTurn(tapArgs: string[]) {
    const dataDir = tempDir();
    const workspace = tempDir();
    const agentIn = join(tempDir(), 'agent-in');
    const agentOut = join(tempDir(), 'agent-out');
    const editorSent: string[] = [];
    const editorGot: string[] = [];
    const tap = [process.execPath, '--import', 'tsx', CLI_SOURCE, 'acp', 'tap', '--name', 'sdk-demo', '--data-dir', dataDir, ...tapArgs, '--', process.execPath, RECORDER, '--in', agentIn, '--out', agentOut, '--', ...demoAgentCommand()];
    const result = await runDemoClient({
      command: tap,
      cwd: workspace,
      permission: 'allow',
      log: () => undefined,
      onWire: (direction, line) => (direction === 'to-agent' ? editorSent : editorGot).push(line),
    });
    expect(result.stopReason).toBe('end_turn');
    expect(editorSent.length).toBeGreaterThan(5);
    expect(editorGot.length).toBeGreaterThan(20);

    // Unchanged, byte for byte, both ways.
    expect(readFileSync(agentIn, 'utf8')).toBe(editorSent.map((l) => `${l}\n`).join(''));
    expect(readFileSync(agentOut, 'utf8')).toBe(editorGot.map((l) => `${l}\n`).join(''));

    const journal = await Journal.open({ dataDir });
    let run: StoredRecord[];
    try {
      expect(await verifyJournalStore(journal)).toMatchObject({ ok: true });
      const records = await journal.readRange(1, null, 100_000);
      const runIds = [...new Set(records.filter((r) => r.kind === 'Observation').map((r) => r.runId))];
      expect(runIds).toHaveLength(1);
      run = records.filter((r) => r.runId === runIds[0]);
      expect(run[0]).toMatchObject({ kind: 'Observation', body: { source: 'acp', update: 'tap/started', detail: { tapName: 'sdk-demo', policy: 'observe' } } });
      expect(run.at(-2)).toMatchObject({ kind: 'Observation', body: { update: 'tap/ended', detail: { reason: 'editor-disconnect' } } });
      expect(run.at(-1)).toMatchObject({ kind: 'RunSealed', body: { outcome: 'observed', records: run.length - 1 } });
    } finally {
      await journal.close();
    }
    const cli = (...args: string[]) => execFileSync(process.execPath, ['--import', 'tsx', CLI_SOURCE, ...args, '--data-dir', dataDir], { cwd: REPO_ROOT, encoding: 'utf8', env: { ...process.env, AGENTPLANE_DEMO_PEERS: '0' } });
    return { dataDir, editorSent, editorGot, run, cli };
}

const messagesOf = (run: StoredRecord[]) => run.filter((r) => r.body.update === 'message').map((r) => r.body.detail as { dir: string; wire: number; message: unknown; omitted?: Record<string, number> });
/** A message's wire name: its session/update kind, its method, or `response`. */
const wireName = (message: unknown) => {
  const m = message as { method?: string; params?: { update?: { sessionUpdate?: string } } };
  return m.method === 'session/update' ? m.params!.update!.sessionUpdate! : (m.method ?? 'response');
};

/** The session from the CLI: listed, and shown as a person reads it. */
function expectShownAsBefore(cli: (...args: string[]) => string): string {
    const listed = JSON.parse(cli('acp', 'sessions', '--json')) as { ok: boolean; result: { sessions: Array<{ runId: string; tapName: string; state: string; counts: { prompts: number; permissions: number } }> } };
    expect(listed).toMatchObject({ ok: true, result: { sessions: [{ tapName: 'sdk-demo', state: 'ended', counts: { prompts: 1, permissions: 1 } }] } });
    const shown = cli('acp', 'show', listed.result.sessions[0]!.runId);
    expect(shown).toContain('editor AgentPlane demo client');
    expect(shown).toMatch(/you: Make the greeting in greeting\.ts friendlier/);
    expect(shown).toMatch(/permission for Edit greeting\.ts \[allow_once, allow_always, reject_once\]: editor selected allow_once/);
    expect(shown).toMatch(/agent: I changed greeting\.ts/);
    expect(shown).toMatch(/plan \[completed\]/);
    expect(shown).toContain('turn ended: end_turn');
    expect(() => cli('acp', 'show', 'run-nope')).toThrow(/no editor session run-nope/);
    return listed.result.sessions[0]!.runId;
}

describe('the SDK client and the SDK agent through the tap', () => {
  it('recorded as evidence: 28 message records where every message made 38, the rest in the transcript, named, and the session reads the same', { timeout: 90_000 }, async () => {
    const { dataDir, editorSent, editorGot, run, cli } = await demoTurn([]);
    const messages = messagesOf(run);
    // Before: one record per wire message, 38, and 41 in the run; after: exactly these.
    expect(editorSent.length + editorGot.length).toBe(38);
    expect(messages).toHaveLength(28);
    expect(run).toHaveLength(31);
    expect(run.length).toBeLessThan(41);
    expect(messages.map((m) => wireName(m.message))).toEqual([
      'initialize', 'response', 'session/new', 'response', 'session/prompt',
      'tool_call', 'fs/read_text_file', 'response', 'tool_call_update',
      'tool_call', 'session/request_permission', 'response', 'tool_call_update', 'fs/write_text_file', 'response', 'tool_call_update',
      'tool_call', 'terminal/create', 'response', 'tool_call_update', 'terminal/wait_for_exit', 'response', 'terminal/output', 'response', 'terminal/release', 'response', 'tool_call_update',
      'response',
    ]);
    // What was left out, named by the wire's own words on the records after it: all of it, once.
    const named: Record<string, number> = {};
    for (const m of messages) for (const [kind, n] of Object.entries(m.omitted ?? {})) named[kind] = (named[kind] ?? 0) + n;
    expect(named).toEqual({ agent_thought_chunk: 3, plan: 4, agent_message_chunk: 3 });
    expect(run.at(-2)!.body.detail).not.toHaveProperty('omitted');
    // The transcript store holds exactly those ten, each as it was on the wire.
    const store = TranscriptStore.open(dataDir);
    try {
      const lines = store.lines(run[0]!.runId!);
      expect(lines.map((l) => l.kind).sort()).toEqual(['agent_message_chunk', 'agent_message_chunk', 'agent_message_chunk', 'agent_thought_chunk', 'agent_thought_chunk', 'agent_thought_chunk', 'plan', 'plan', 'plan', 'plan']);
      expect(lines.map((l) => l.message)).toEqual(editorGot.map((l) => JSON.parse(l) as unknown).filter((m) => (m as { method?: string }).method === 'session/update' && ['agent_message_chunk', 'agent_thought_chunk', 'plan'].includes(wireName(m))));
    } finally {
      store.close();
    }
    const runId = expectShownAsBefore(cli);
    expect(cli('acp', 'show', runId)).toMatch(/recorded as evidence: left out of the journal agent_thought_chunk 3, plan 4, agent_message_chunk 3; transcript, not evidence: 10 lines kept 30 days/);

    // Erased, the conversation goes; the evidence and the count of what was left out stay.
    const sessionId = (run[0]!.body.sessionId as string);
    const erased = JSON.parse(cli('acp', 'transcripts', 'erase', '--session', sessionId, '--json')) as unknown;
    expect(erased).toEqual({ ok: true, result: { sessionId, runIds: [runId], lines: 10 } });
    const after = cli('acp', 'show', runId);
    expect(after).not.toMatch(/agent: I changed greeting/);
    expect(after).toMatch(/permission for Edit greeting\.ts/);
    expect(after).toMatch(/transcript, not evidence: 0 lines kept/);
    expect(() => cli('acp', 'transcripts', 'erase', '--session', 'no-such-session')).toThrow(/no observed ACP session has the session id "no-such-session"/);
    expect(JSON.parse(cli('acp', 'transcripts', 'retention', '--days', '7', '--json'))).toEqual({ ok: true, result: { days: 7, removed: 0 } });

    // The session bound to a case by its session id, and the audit listing it as unadmitted.
    expect(() => cli('cases', 'bind', 'no spaces', '--session', sessionId)).toThrow(/"no spaces" is not a case id: a case id is 1 to 128 letters/);
    const bound = JSON.parse(cli('cases', 'bind', 'M-42', '--session', sessionId, '--json')) as { ok: boolean; result: { seq: number } };
    expect(bound).toMatchObject({ ok: true, result: { caseId: 'M-42', sessionId, runIds: [runId], by: 'user:local' } });
    expect(JSON.parse(cli('cases', 'show', 'M-42', '--json'))).toEqual({ ok: true, result: { caseId: 'M-42', bindings: [bound.result] } });
    expect(JSON.parse(cli('cases', 'list', '--json'))).toMatchObject({ ok: true, result: { cases: [{ caseId: 'M-42', sessions: 1, bindings: 1 }] } });
    expect(JSON.parse(cli('audit', '--json'))).toMatchObject({ ok: true, result: { admitted: { runs: 0, sealed: 0 }, unadmitted: [{ runId, sessionId, admission: 'unadmitted', sealed: true, records: 31, cases: ['M-42'] }] } });
    expect(cli('audit')).toMatch(new RegExp(`${runId}  unadmitted  session ${sessionId}  sealed  31 records  cases M-42`));
  });

  it('--record full: passes every byte both ways unchanged and journals every message in order', { timeout: 90_000 }, async () => {
    const { editorSent, editorGot, run, cli } = await demoTurn(['--record', 'full']);
    expect(run[0]!.body.detail).toMatchObject({ record: 'full' });
    {
      const messages = messagesOf(run);
      // Every message, in the order the tap saw it, as it was (the demo's are under every cap).
      expect(messages.map((m) => m.wire)).toEqual([...messages.keys()].map((i) => i + 1));
      expect(messages.filter((m) => m.dir === 'toAgent').map((m) => m.message)).toEqual(editorSent.map((l) => JSON.parse(l) as unknown));
      expect(messages.filter((m) => m.dir === 'toEditor').map((m) => m.message)).toEqual(editorGot.map((l) => JSON.parse(l) as unknown));
      expect(messages).toHaveLength(editorSent.length + editorGot.length);
      expect(messages.filter((m) => m.omitted !== undefined)).toEqual([]);
    }
    const runId = expectShownAsBefore(cli);
    expect(cli('acp', 'show', runId)).not.toMatch(/recorded as evidence/);
  });
});
