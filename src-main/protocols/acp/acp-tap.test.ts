/**
 * The tap end to end, with real processes: the CLI from source as the tap, a scripted fake
 * agent behind it, the test as the editor. What is proved: bytes pass unchanged both ways; the
 * journal holds every message in wire order, redacted and capped, under one observed run per
 * session that verifies and does not disturb runs.list or spend; and every fault (a line that
 * is not JSON, an agent crash, the editor going away, a queue overflow) ends in a record rather
 * than a hang or a lost session.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Journal } from '../../journal/journal';
import type { StoredRecord } from '../../journal/journal-store';
import { createPlane } from '../../plane/plane';
import { useTempFolders } from '../../../tests/helpers/temp-folders';
import { REPO_ROOT, startTapProcess, type TapProcess } from '../../../tests/helpers/acp-tap-process';
import { runningPlaneClient } from '../../cli/running-plane';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';

const tempDir = useTempFolders('agentplane-acp-tap-');
const running: TapProcess[] = [];
/** Planes serve() started: one a test left running (it failed or timed out) is ended after it. */
const planes: ChildProcess[] = [];
afterEach(() => {
  for (const tap of running.splice(0)) tap.child.kill('SIGKILL');
  for (const plane of planes.splice(0)) if (plane.exitCode === null && plane.signalCode === null) plane.kill('SIGKILL');
});

function tap(dataDir: string, tapArgs: string[], agentArgs: string[]): TapProcess {
  const t = startTapProcess(dataDir, tapArgs, agentArgs);
  running.push(t);
  return t;
}

async function journalRuns(dataDir: string): Promise<Array<{ runId: string; sessionId: string; records: StoredRecord[] }>> {
  const journal = await Journal.open({ dataDir, readOnly: true });
  try {
    const rows = await journal.observedRuns(100);
    const out = [];
    for (const row of rows.reverse()) out.push({ runId: row.runId, sessionId: row.sessionId, records: await journal.readRun(row.runId, 1, 100_000) });
    return out;
  } finally {
    await journal.close();
  }
}

const updates = (records: StoredRecord[]) => records.map((r) => (r.kind === 'Observation' ? String(r.body.update) : r.kind));
const detailOf = (r: StoredRecord) => r.body.detail as Record<string, unknown>;

describe('acp tap', () => {
  it('forwards every byte unchanged both ways and journals the evidence of the session in order, naming the chunk it left out', async () => {
    const dataDir = tempDir();
    const dir = tempDir();
    const inFile = join(dir, 'agent-in');
    const outFile = join(dir, 'agent-out');
    const bareKey = 'sk-proj-Q3x9TzLm2Vb7Nc4Rk8Wp1Ys6';
    const t = tap(dataDir, ['--name', 'fake'], ['--in', inFile, '--out', outFile, '--api-key', 'k-123', '--bearer', 'b-456', 'OPENAI_API_KEY=e-789', bareKey]);
    const init = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}\r\n';
    t.send(init.slice(0, 20));
    await new Promise((r) => setTimeout(r, 50));
    t.send(init.slice(20));
    await t.next((m) => m.id === 1);
    t.send('this is not json\n');
    t.send(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'session/new', params: { cwd: '/tmp', mcpServers: [{ name: 'm', command: 'x', args: ['--token', 's3cret-arg'], env: [{ name: 'API_KEY', value: 's3cret-env' }] }] } })}\n`);
    const created = await t.next((m) => m.id === 2);
    const sessionId = (created.result as { sessionId: string }).sessionId;
    const image = Buffer.alloc(3000, 7).toString('base64');
    t.send(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'hi' }, { type: 'image', mimeType: 'image/png', data: image }] } })}\n`);
    const read = await t.next((m) => m.method === 'fs/read_text_file');
    const body = 'x'.repeat(20_000);
    t.send(`${JSON.stringify({ jsonrpc: '2.0', id: read.id, result: { content: body } })}\n`);
    await t.next((m) => m.id === 3);
    t.closeStdin();
    const exit = await t.exited;
    // The editor went away: the agent was ended with SIGTERM, and the tap says so in its status.
    expect(exit.code).toBe(128 + 15);

    expect(readFileSync(inFile).equals(t.sent())).toBe(true);
    expect(t.stdout().equals(readFileSync(outFile))).toBe(true);
    expect(t.stderr().match(/no plane is running/g)).toHaveLength(1);

    const runs = await journalRuns(dataDir);
    expect(runs).toHaveLength(1);
    const { records, sessionId: journaled } = runs[0]!;
    expect(journaled).toBe(sessionId);
    expect(updates(records)).toEqual([
      'tap/started',
      'message', // initialize
      'message', // its response
      'malformed',
      'message', // session/new
      'message', // its response
      'message', // session/prompt
      // (the agent_message_chunk is presentation: in the transcript store, named below)
      'message', // fs/read_text_file
      'message', // its response
      'message', // prompt response
      'tap/ended',
      'RunSealed',
    ]);
    const wires = records.filter((r) => r.kind === 'Observation' && ['message', 'malformed'].includes(String(r.body.update))).map((r) => detailOf(r).wire);
    expect(wires).toEqual([1, 2, 3, 4, 5, 6, 8, 9, 10]);
    // The record after the chunk names it by the wire's own word.
    expect(detailOf(records[7]!)).toMatchObject({ wire: 8, omitted: { agent_message_chunk: 1 } });
    expect(records.filter((r) => r.kind === 'Observation' && 'omitted' in detailOf(r))).toHaveLength(1);
    const started = detailOf(records[0]!);
    expect(started).toMatchObject({ tapName: 'fake', policy: 'observe', record: 'evidence' });
    expect(started.command).toContain('[redacted: value of --api-key]');
    const malformed = detailOf(records[3]!);
    expect(malformed).toMatchObject({ dir: 'toAgent', size: 16, preview: 'this is not json' });
    const text = records.map((r) => r.bodyText).join('\n');
    expect(text).not.toContain('s3cret-env');
    for (const secret of ['k-123', 'b-456', 'e-789', bareKey, 's3cret-arg']) expect(text).not.toContain(secret);
    expect(started.command).toEqual(expect.arrayContaining(['[redacted: value of --bearer]', 'OPENAI_API_KEY=[redacted: value of OPENAI_API_KEY]', '[redacted: OpenAI-style key]']));
    expect(text).not.toContain(image);
    expect(text).not.toContain(body);
    const readResponse = detailOf(records[8]!).message as { result: { content: { $size: number; $omitted: string } } };
    expect(readResponse.result.content.$size).toBe(20_000);
    const ended = detailOf(records[10]!);
    expect(ended).toMatchObject({ reason: 'editor-disconnect', exitCode: null, signal: 'SIGTERM' });
    expect(ended.omitted).toBeUndefined();
    const sealed = records[11]!;
    expect(sealed.body).toMatchObject({ outcome: 'observed', records: 11 });

    // The rest of the plane reads a journal holding an observed session without tripping on it.
    const plane = await createPlane({ dataDir, version: 'test', host: 'headless' });
    try {
      const ctx = { transport: 'local' as const };
      const list = await plane.dispatch('runs.list', {}, ctx);
      expect(list.ok).toBe(true);
      const spend = await plane.dispatch('spend.summary', {}, ctx);
      expect(spend.ok).toBe(true);
      const verify = await plane.dispatch('journal.verify', {}, ctx);
      expect(verify).toMatchObject({ ok: true, value: { ok: true } });
      const sessions = await plane.dispatch('acp.sessions', {}, ctx);
      expect(sessions).toMatchObject({ ok: true, value: { sessions: [{ runId: runs[0]!.runId, sessionId, tapName: 'fake', state: 'ended' }] } });
      const view = await plane.dispatch('acp.session', { runId: runs[0]!.runId }, ctx);
      expect(view).toMatchObject({ ok: true, value: { runId: runs[0]!.runId, counts: { prompts: 1, malformed: 1 } } });
      // The chunk is read back from the transcript, in its place, and marked as such.
      expect(view).toMatchObject({ ok: true, value: { transcript: { leftOut: { agent_message_chunk: 1 }, kept: 1, retentionDays: 30 } } });
      const conversation = view.ok ? (view.value as { conversation: Array<{ kind: string; text?: string }> }).conversation : [];
      expect(conversation.map((i) => i.kind)).toEqual(['prompt', 'message', 'turnEnd']);
      expect(conversation[1]!.text).toBe('reading');
      // Read as a run (for the inbox), it is the tap's, acting for the editor, sealed as observed.
      const asRun = await plane.dispatch('runs.get', { runId: runs[0]!.runId }, ctx);
      expect(asRun).toMatchObject({ ok: true, value: { agent: 'acp:fake', host: 'acp:fake', status: 'sealed', outcome: 'observed', pending: null } });
      expect(list).toMatchObject({ ok: true, value: { runs: [] } });
    } finally {
      await plane.close();
    }
  }, 60_000);

  it('ends the session with the exit code and stderr tail when the agent crashes', async () => {
    const dataDir = tempDir();
    const t = tap(dataDir, [], ['--mode', 'crash']);
    t.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
    const exit = await t.exited;
    expect(exit.code).toBe(3);
    expect(t.stderr()).toContain('fatal: boom');
    const runs = await journalRuns(dataDir);
    expect(runs).toHaveLength(1);
    // No session was ever opened: the connection still gets its run, so nothing is lost.
    expect(runs[0]!.sessionId).toBe('');
    expect(updates(runs[0]!.records)).toEqual(['tap/started', 'message', 'message', 'tap/ended', 'RunSealed']);
    const ended = detailOf(runs[0]!.records[3]!);
    expect(ended).toMatchObject({ reason: 'agent-exit', exitCode: 3, signal: null });
    expect(ended.stderrTail).toContain('fatal: boom');
  }, 30_000);

  it("kills the agent's whole process group when the editor disconnects", async () => {
    const dataDir = tempDir();
    const t = tap(dataDir, ['--kill-grace-ms', '300'], ['--mode', 'grandchild']);
    const deadline = Date.now() + 15_000;
    while (!/GRANDCHILD \d+/.test(t.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const grandchild = Number(/GRANDCHILD (\d+)/.exec(t.stderr())![1]);
    expect(alive(grandchild)).toBe(true);
    t.closeStdin();
    const exit = await t.exited;
    // The agent ignored SIGTERM: only the SIGKILL after the grace ended it.
    expect(exit.code).toBe(128 + 9);
    await new Promise((r) => setTimeout(r, 200));
    expect(alive(grandchild)).toBe(false);
    const runs = await journalRuns(dataDir);
    expect(detailOf(runs[0]!.records.at(-2)!)).toMatchObject({ reason: 'editor-disconnect', signal: 'SIGKILL' });
  }, 30_000);

  it('records a gap, never blocks, when the journal falls behind', async () => {
    const dataDir = tempDir();
    const dir = tempDir();
    const outFile = join(dir, 'agent-out');
    const flood = 400;
    // Room for two or three of the flood's lines (about 150 bytes, plus 64 each) at a time.
    // Every message journaled (--record full): the journal itself must fall behind.
    const t = tap(dataDir, ['--queue-bytes', '600', '--record', 'full'], ['--mode', 'flood', '--flood', String(flood), '--out', outFile]);
    t.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
    await t.next((m) => (m.params as { update?: { content?: { text?: string } } } | undefined)?.update?.content?.text === `chunk ${flood - 1}`);
    t.closeStdin();
    await t.exited;
    expect(t.stdout().equals(readFileSync(outFile))).toBe(true);
    const records = (await journalRuns(dataDir))[0]!.records;
    const gaps = records.filter((r) => r.body.update === 'gap').map(detailOf);
    expect(gaps.length).toBeGreaterThan(0);
    const dropped = gaps.reduce((sum, g) => sum + (g.dropped as number), 0);
    const messages = records.filter((r) => r.body.update === 'message').length;
    // Every wire message is either journaled or counted in a gap.
    expect(messages + dropped).toBe(flood + 2);
    for (const g of gaps) expect(g.toWire as number).toBeGreaterThanOrEqual(g.fromWire as number);
  }, 30_000);

  it('journals a burst larger than any item count would allow, with no gap, before it exits', async () => {
    const dataDir = tempDir();
    const dir = tempDir();
    const outFile = join(dir, 'agent-out');
    // More messages at once than the old 10,000-item bound held; the default byte bound (64 MB) takes them whole.
    const flood = 12_000;
    const t = tap(dataDir, ['--record', 'full'], ['--mode', 'flood', '--flood', String(flood), '--out', outFile]);
    t.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
    await t.next((m) => (m.params as { update?: { content?: { text?: string } } } | undefined)?.update?.content?.text === `chunk ${flood - 1}`, 30_000);
    t.closeStdin();
    await t.exited;
    expect(t.stdout().equals(readFileSync(outFile))).toBe(true);
    // The tap exited only once its worker had committed everything and sealed the run.
    const records = (await journalRuns(dataDir))[0]!.records;
    expect(records.filter((r) => r.body.update === 'gap')).toEqual([]);
    expect(records.filter((r) => r.body.update === 'message')).toHaveLength(flood + 2);
    expect(records.at(-1)!.kind).toBe('RunSealed');
  }, 90_000);

  it("writes through the running plane's API when a plane runs for the data dir", async () => {
    const dataDir = tempDir();
    const plane = await serve(dataDir);
    try {
      const t = tap(dataDir, [], []);
      t.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
      await t.next((m) => m.id === 1);
      t.send('{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}\n');
      await t.next((m) => m.id === 2);
      t.closeStdin();
      await t.exited;
      // Nothing said about the journal: the plane took every observation.
      expect(t.stderr()).not.toMatch(/journal/);
      const client = runningPlaneClient(dataDir)!;
      expect(client).not.toBeNull();
      const { sessions } = await client.call('acp.sessions', { limit: 10 });
      expect(sessions).toHaveLength(1);
      expect(sessions[0]).toMatchObject({ sessionId: 'sess-1', state: 'ended', cwd: '/w', agent: { name: 'fake-agent' } });
      const view = await client.call('acp.session', { runId: sessions[0]!.runId });
      expect(view.ended).toMatchObject({ reason: 'editor-disconnect' });
      expect(await client.call('journal.verify', {})).toMatchObject({ ok: true });
      // The plane refuses writes into a run the tap did not begin, and decisions from a tap.
      const refused = await client.tryCall('acp.record', { runId: sessions[0]!.runId, sessionId: 'sess-1', observations: [{ update: 'message', detail: {} }] });
      expect(refused).toMatchObject({ ok: false, error: { code: 'AP_CONFLICT' } });
      const forged = await client.tryCall('acp.record', { runId: 'run-00000000000000000000', sessionId: 'x', observations: [{ update: 'tap/started', detail: {} }, { update: 'decision', detail: {} }] });
      expect(forged).toMatchObject({ ok: false, error: { code: 'AP_FORBIDDEN' } });
      const unstarted = await client.tryCall('acp.record', { runId: 'run-00000000000000000001', sessionId: 'x', observations: [{ update: 'message', detail: {} }] });
      expect(unstarted).toMatchObject({ ok: false, error: { code: 'AP_BAD_REQUEST' } });
    } finally {
      plane.kill('SIGTERM');
      await new Promise((r) => plane.once('exit', r));
    }
  }, 60_000);

  it('--policy inbox: a person answers at the plane, the agent gets that answer and the editor is told the request is withdrawn', async () => {
    const dataDir = tempDir();
    const inFile = join(tempDir(), 'agent-in');
    const plane = await serve(dataDir);
    try {
      const t = tap(dataDir, ['--policy', 'inbox'], ['--mode', 'permission', '--in', inFile]);
      t.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
      await t.next((m) => m.id === 1);
      t.send('{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}\n');
      await t.next((m) => m.id === 2);
      t.send('{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"sess-1","prompt":[{"type":"text","text":"go"}]}}\n');
      await t.next((m) => m.method === 'session/request_permission');
      const client = runningPlaneClient(dataDir)!;
      let runId = '';
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const { sessions } = await client.call('acp.sessions', { limit: 5 });
        if (sessions[0]) {
          const view = await client.call('acp.session', { runId: sessions[0].runId });
          if (view.permissions.length > 0) {
            runId = view.runId;
            break;
          }
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(runId).not.toBe('');
      const wrong = await client.tryCall('acp.answer', { runId, requestKey: 'toEditor:200', outcome: 'selected', optionId: 'nope' });
      expect(wrong).toMatchObject({ ok: false, error: { code: 'AP_BAD_REQUEST' } });
      await client.call('acp.answer', { runId, requestKey: 'toEditor:200', outcome: 'selected', optionId: 'allow' });
      expect(await t.next((m) => m.method === '$/cancel_request')).toMatchObject({ params: { requestId: 200 } });
      const chose = await t.next((m) => (m.params as { update?: unknown } | undefined)?.update !== undefined);
      expect(chose).toMatchObject({ params: { update: { content: { text: 'chose allow' } } } });
      await t.next((m) => m.id === 3);
      const again = await client.tryCall('acp.answer', { runId, requestKey: 'toEditor:200', outcome: 'cancelled' });
      expect(again).toMatchObject({ ok: false, error: { code: 'AP_CONFLICT' } });
      t.send('{"jsonrpc":"2.0","id":200,"result":{"outcome":{"outcome":"selected","optionId":"reject"}}}\n');
      t.closeStdin();
      await t.exited;
      expect(readFileSync(inFile, 'utf8')).not.toContain('reject');
      const view = await client.call('acp.session', { runId });
      expect(view.permissions[0]).toMatchObject({ requestKey: 'toEditor:200', outcome: { by: 'plane:user:local', outcome: 'selected', optionId: 'allow' } });
    } finally {
      plane.kill('SIGTERM');
      await new Promise((r) => plane.once('exit', r));
    }
  }, 60_000);

  it('goes on into the journal, and says so once, when the plane stops answering mid-session', async () => {
    // Each wait is for an event, bounded generously: on a loaded 2-core machine the plane and the
    // tap (both from source) take many times their usual seconds to start. With 36 busy loops on
    // the test's core the whole test took 64 s (5 s unloaded).
    const WAIT = 90_000;
    const dataDir = tempDir();
    const plane = await serve(dataDir);
    const t = tap(dataDir, [], []);
    t.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
    await t.next((m) => m.id === 1, WAIT);
    t.send('{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}\n');
    await t.next((m) => m.id === 2, WAIT);
    // Mid-session: once the plane has committed the session's start (tap/started and the four
    // messages), it dies. This used to be a 300 ms sleep, and on a loaded machine the kill could
    // land after the plane's commit but before its answer reached the tap: the tap then wrote
    // that whole batch again into the journal directly (a second tap/started, every message
    // twice). Waiting for the commit lands the kill in that window most times, so this test now
    // proves the tap writes nothing twice (FallbackSink's writeRest) whenever the plane dies.
    await until(async () => ((await journalRuns(dataDir).catch(() => []))[0]?.records.length ?? 0) >= 5);
    plane.kill('SIGKILL');
    await new Promise((r) => plane.once('exit', r));
    for (let id = 3; id <= 5; id++) {
      t.send(`{"jsonrpc":"2.0","id":${id},"method":"session/set_mode","params":{"sessionId":"sess-1","modeId":"m"}}\n`);
      await t.next((m) => m.id === id, WAIT);
    }
    t.closeStdin();
    await t.exited;
    expect(t.stderr().match(/did not take the observations/g)).toHaveLength(1);
    const runs = await journalRuns(dataDir);
    expect(runs).toHaveLength(1);
    expect(updates(runs[0]!.records)).toEqual(['tap/started', ...Array(10).fill('message'), 'tap/ended', 'RunSealed']);
    expect(runs[0]!.records.at(-1)!.body).toMatchObject({ outcome: 'observed', records: 12 });
  }, 180_000);

  it('starts a run of its own, with the initialize exchange, for a second session', async () => {
    const dataDir = tempDir();
    const t = tap(dataDir, [], []);
    t.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
    await t.next((m) => m.id === 1);
    t.send('{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n');
    await t.next((m) => m.id === 2);
    t.send('{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}\n');
    await t.next((m) => m.id === 3);
    t.closeStdin();
    await t.exited;
    const runs = await journalRuns(dataDir);
    expect(runs.map((r) => r.sessionId).sort()).toEqual(['sess-1', 'sess-2']);
    for (const run of runs) {
      expect(updates(run.records)).toEqual(['tap/started', 'message', 'message', 'message', 'message', 'tap/ended', 'RunSealed']);
      const methods = run.records.slice(1, 5).map((r) => (detailOf(r).message as { method?: string }).method ?? 'response');
      expect(methods).toEqual(['initialize', 'response', 'session/new', 'response']);
    }
    expect(existsSync(join(dataDir, 'plane.lock'))).toBe(false);
  }, 30_000);
});

/**
 * The observed party must never choose what the record keeps: one hostile line from the agent
 * (nested past any parser's limit, or JSON with no UTF-8 form) is recorded as what it is, and
 * every message before and after it is journaled, with or without a plane.
 */
describe('acp tap: a hostile agent cannot blind the record', () => {
  /** Editor side of one prompt turn against `--mode hostile`; returns the session id. */
  async function hostileTurn(t: TapProcess): Promise<string> {
    t.send('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}\n');
    await t.next((m) => m.id === 1);
    t.send('{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}\n');
    const created = await t.next((m) => m.id === 2);
    const sessionId = (created.result as { sessionId: string }).sessionId;
    t.send(`${JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'session/prompt', params: { sessionId, prompt: [{ type: 'text', text: 'go' }] } })}\n`);
    await t.next((m) => m.id === 3);
    t.closeStdin();
    const exit = await t.exited;
    // The tap lived to the end of the session: the editor's disconnect ended the agent.
    expect(exit.code).toBe(128 + 15);
    return sessionId;
  }

  function expectWholeSession(records: StoredRecord[], why: RegExp, outFile: string): void {
    expect(updates(records)).toEqual([
      'tap/started',
      'message', // initialize
      'message', // its response
      'message', // session/new
      'message', // its response
      'message', // session/prompt
      'message', // chunk "before"
      'malformed', // the hostile line
      'message', // chunk "after"
      'message', // the prompt's response
      'tap/ended',
      'RunSealed',
    ]);
    const texts = records.filter((r) => r.body.update === 'message').map((r) => JSON.stringify(detailOf(r).message));
    expect(texts.some((t) => t.includes('"before"'))).toBe(true);
    expect(texts.some((t) => t.includes('"after"'))).toBe(true);
    // Recorded as what it is: its size and digest (of the bytes the agent wrote), and why it was not parsed.
    const lines = readFileSync(outFile).toString('utf8').split('\n');
    const hostileLine = Buffer.from(lines[3]!, 'utf8');
    const malformed = detailOf(records[7]!);
    expect(malformed).toMatchObject({ dir: 'toEditor', wire: 7, size: hostileLine.length, digest: createHash('sha256').update(hostileLine).digest('hex') });
    expect(String(malformed.why)).toMatch(why);
    expect(records.at(-1)!.body).toMatchObject({ outcome: 'observed', records: records.length - 1 });
  }

  const cases = [
    { name: 'nested 1,000 deep', args: ['--hostile', 'deep', '--depth', '1000'], why: /nested deeper than \d+ levels/ },
    { name: 'nested 5,000 deep', args: ['--hostile', 'deep', '--depth', '5000'], why: /nested deeper than \d+ levels/ },
    { name: 'holding a lone surrogate', args: ['--hostile', 'surrogate'], why: /lone surrogate/ },
  ];

  for (const c of cases) {
    it(`journals the whole session around a line ${c.name}, with no plane running`, async () => {
      const dataDir = tempDir();
      const outFile = join(tempDir(), 'agent-out');
      // --record full: the chunks around the hostile line are journaled too, so its neighbours are checked.
      const t = tap(dataDir, ['--record', 'full'], ['--mode', 'hostile', '--out', outFile, ...c.args]);
      await hostileTurn(t);
      expect(t.stderr()).not.toMatch(/could not be journaled|unrecorded/);
      const runs = await journalRuns(dataDir);
      expect(runs).toHaveLength(1);
      expectWholeSession(runs[0]!.records, c.why, outFile);
    }, 60_000);

    it(`journals the whole session around a line ${c.name}, through a running plane`, async () => {
      const dataDir = tempDir();
      const outFile = join(tempDir(), 'agent-out');
      const plane = await serve(dataDir);
      try {
        const t = tap(dataDir, ['--record', 'full'], ['--mode', 'hostile', '--out', outFile, ...c.args]);
        await hostileTurn(t);
        // The plane took every observation: no fallback, nothing unrecorded.
        expect(t.stderr()).not.toMatch(/journal|unrecorded/);
      } finally {
        plane.kill('SIGTERM');
        await new Promise((r) => plane.once('exit', r));
      }
      const runs = await journalRuns(dataDir);
      expect(runs).toHaveLength(1);
      expectWholeSession(runs[0]!.records, c.why, outFile);
    }, 60_000);
  }
});

/** `agentplane serve` from source, resolved once it printed its URL (it has written plane.json by then). */
async function serve(dataDir: string): Promise<ChildProcess> {
  const env: NodeJS.ProcessEnv = { ...process.env, AGENTPLANE_DEMO_PEERS: '0' };
  delete env.AGENTPLANE_DATA_DIR;
  const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src-main', 'cli', 'main.ts'), 'serve', '--data-dir', dataDir, '--no-open', '--ui-port', '0'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  planes.push(child);
  // Until the URL line, or the process's exit: no deadline of its own (a loaded machine once
  // took more than the 20 s this had), the calling test's timeout bounds it.
  await new Promise<void>((resolveUrl, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('AGENTPLANE_UI_URL=')) resolveUrl();
    });
    child.once('exit', (code, signal) => reject(new Error(`serve exited (${code ?? signal}) before printing its URL`)));
  });
  return child;
}

/** Resolves once `condition` holds, asked again as soon as each answer comes back (the test's own timeout bounds the wait). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setImmediate(r));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
