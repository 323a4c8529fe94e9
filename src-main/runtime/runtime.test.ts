/**
 * The governed runtime through the plane's own command surface: runs, approvals, budgets,
 * cancellation, halts, policy, replay and its refusals.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JournalRecord } from '../../src-shared/journal/records';
import type { RunView } from '../../src-shared/ipc/contract';
// The background start-up check is held at the store's own first read (a slow disk's stand-in,
// beneath the Journal): the one reach past the journal's door (eslint.config.js) outside it.
// eslint-disable-next-line @typescript-eslint/no-restricted-imports
import { journalPath, SqliteJournalStore } from '../journal/sqlite-store';
import { tempDataDir } from '../../tests/support/journal-support';
import type { Plane } from '../plane/plane';
import { PolicyEngine } from './policy';
import { agent, call, callsIn, clientOf, countingProvider, failure, testPlane } from '../../tests/support/runtime-support';
import { loadAgents } from '../plane/plane-config';

const planes: Plane[] = [];
async function plane(overrides: Parameters<typeof testPlane>[0] = {}): Promise<Plane> {
  const p = await testPlane(overrides);
  planes.push(p);
  return p;
}
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

async function records(p: Plane, runId: string): Promise<JournalRecord[]> {
  return p.journal.readRun(runId, 1, 10_000);
}
const kinds = async (p: Plane, runId: string) => (await records(p, runId)).map((r) => r.kind);
async function settled(p: Plane, runId: string): Promise<RunView> {
  await p.runtime.settled(runId);
  return call(p, 'runs.get', { runId });
}

describe('runs', () => {
  it('runs an agent end to end: admitted, one model effect with tokens, sealed with its result', async () => {
    const p = await plane();
    const run = await call(p, 'runs.start', { agent: 'summarize', input: { text: 'Foxes are quick. Dogs are lazy.' }, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'succeeded', agent: 'summarize', owner: 'user:local' });
    expect(run.result).toMatchObject({ summary: expect.stringContaining('[local model]') });
    expect(run.spend.effects).toBe(1);
    expect(run.spend.inputTokens).toBeGreaterThan(0);
    expect(await kinds(p, run.runId)).toEqual(['RunAdmitted', 'EffectStarted', 'EffectDone', 'RunSealed']);
    const [, started] = await records(p, run.runId);
    expect(started!.body).toMatchObject({ effect: 'model', name: 'local', request: { provider: { id: 'local', label: 'Local deterministic model (no network, no key)' } } });
    const sealed = (await records(p, run.runId)).at(-1)!;
    expect(sealed.body).toMatchObject({ outcome: 'succeeded', records: 3 });
  });

  it('refuses an unknown agent and input that fails the schema, performing nothing', async () => {
    const p = await plane();
    expect(await failure(p, 'runs.start', { agent: 'nobody', input: {} })).toEqual({ code: 'AP_NOT_FOUND', message: 'no agent named nobody (see `agentplane agents list`)' });
    const bad = await failure(p, 'runs.start', { agent: 'summarize', input: { text: 5, extra: true } });
    expect(bad.code).toBe('AP_BAD_REQUEST');
    expect(bad.message).toContain('input.text: must be string');
    expect((await p.journal.head()).seq).toBe(0);
  });

  it('bills a failed model call for what it burned, by disposition', async () => {
    const dir = tempDataDir();
    const echo = agent({ name: 'echo-model', input: { type: 'object', properties: { text: { type: 'string' } } }, steps: [{ model: { provider: 'local', prompt: '{{input.text}}' } }], grants: [{ kind: 'model', name: 'local' }] });
    const p = await plane({ dataDir: dir, agents: [...loadAgents(dir), echo] });
    const interrupted = await call(p, 'runs.start', { agent: 'echo-model', input: { text: '!fail:interrupted please' }, wait: true });
    expect(interrupted).toMatchObject({ outcome: 'failed', error: { code: 'ModelInterrupted' } });
    expect(interrupted.spend.outputTokens).toBeGreaterThan(0);
    const failed = (await records(p, interrupted.runId)).find((r) => r.kind === 'EffectFailed')!;
    expect(failed.body).toMatchObject({ disposition: 'Landed' });

    const refused = await call(p, 'runs.start', { agent: 'echo-model', input: { text: '!fail:refused' }, wait: true });
    expect((await records(p, refused.runId)).find((r) => r.kind === 'EffectFailed')!.body).toMatchObject({ disposition: 'DidNotHappen', spend: { effects: 0, inputTokens: 0, outputTokens: 0, costMicros: 0 } });

    const unaccounted = await call(p, 'runs.start', { agent: 'echo-model', input: { text: '!fail:unaccounted' }, wait: true });
    expect(unaccounted.spend).toMatchObject({ effects: 1, unaccounted: true });
  });
});

describe('approvals', () => {
  async function suspendedNote(p: Plane): Promise<RunView> {
    const run = await call(p, 'runs.start', { agent: 'write-note', input: { title: 'greeting', topic: 'hello' }, wait: true });
    expect(run.status).toBe('suspended');
    return run;
  }

  it('suspends before a grant marked approve, shows exactly what is asked, and runs it once approved', async () => {
    const p = await plane();
    const run = await suspendedNote(p);
    expect(run.pending).toMatchObject({ reason: 'approval', subject: { effect: 'tool', name: 'file.write', request: { path: 'notes/greeting.md' }, agent: 'write-note', owner: 'user:local' } });
    expect(existsSync(join(p.dataDir, 'workspace', 'notes', 'greeting.md'))).toBe(false);
    const { waiting } = await call(p, 'approvals.list', {});
    expect(waiting.map((w) => w.runId)).toEqual([run.runId]);

    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    const done = await settled(p, run.runId);
    expect(done.outcome).toBe('succeeded');
    expect(readFileSync(join(p.dataDir, 'workspace', 'notes', 'greeting.md'), 'utf8')).toContain('# greeting');
    const decision = (await records(p, run.runId)).find((r) => r.kind === 'Decision')!;
    expect(decision.body).toMatchObject({ decision: 'approve', by: 'user:local', subjectHash: run.pending!.subjectHash, waitId: run.pending!.waitId });
  });

  it('refuses approving anything but what was shown, a second approval, and a decision on a run not waiting', async () => {
    const p = await plane();
    const run = await suspendedNote(p);
    const wrongHash = await failure(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: 'f'.repeat(64) });
    expect(wrongHash).toMatchObject({ code: 'AP_CONFLICT', message: expect.stringContaining('what was decided is not what is waiting') });
    const wrongWait = await failure(p, 'approvals.decide', { runId: run.runId, waitId: `${run.runId}/9/approval`, decision: 'approve', subjectHash: run.pending!.subjectHash });
    expect(wrongWait.message).toContain(`is waiting on ${run.pending!.waitId}`);

    const decide = { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve' as const, subjectHash: run.pending!.subjectHash };
    const [first, second] = await Promise.all([clientOf(p).tryCall('approvals.decide', decide), clientOf(p).tryCall('approvals.decide', decide)]);
    expect([first.ok, second.ok].sort()).toEqual([false, true]);
    await p.runtime.settled(run.runId);
    expect((await records(p, run.runId)).filter((r) => r.kind === 'Decision')).toHaveLength(1);
    expect((await records(p, run.runId)).filter((r) => r.kind === 'EffectStarted' && (r.body as { name: string }).name === 'file.write')).toHaveLength(1);
    const ended = await failure(p, 'approvals.decide', decide);
    expect(ended).toMatchObject({ code: 'AP_CONFLICT', message: expect.stringContaining('has ended (succeeded)') });
    expect((await failure(p, 'approvals.decide', { ...decide, runId: 'run-00000000000000000000' })).code).toBe('AP_NOT_FOUND');
  });

  it('deny ends the run denied with the reason; snooze keeps it waiting', async () => {
    const p = await plane();
    const run = await suspendedNote(p);
    const base = { runId: run.runId, waitId: run.pending!.waitId, subjectHash: run.pending!.subjectHash };
    const snoozed = await call(p, 'approvals.decide', { ...base, decision: 'snooze', until: '2099-01-01T00:00:00Z' });
    expect(snoozed).toMatchObject({ status: 'suspended', pending: { snoozedUntil: '2099-01-01T00:00:00Z' } });
    expect((await failure(p, 'approvals.decide', { ...base, decision: 'snooze' })).message).toContain('needs `until`');
    await call(p, 'approvals.decide', { ...base, decision: 'deny', reason: 'not today' });
    const denied = await settled(p, run.runId);
    expect(denied).toMatchObject({ outcome: 'denied', error: { message: 'not today' } });
    expect(existsSync(join(p.dataDir, 'workspace', 'notes', 'greeting.md'))).toBe(false);
  });

  it('a pay request waits as a payment and, approved, records an intent that moves no money', async () => {
    const p = await plane();
    const run = await call(p, 'runs.start', { agent: 'pay-vendor', input: { amount: 12.5, payee: 'ACME' }, wait: true });
    expect(run.pending).toMatchObject({ reason: 'payment', subject: { request: { amount: 12.5, currency: 'USD', payee: 'ACME' } } });
    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    const done = await settled(p, run.runId);
    expect(done.result).toMatchObject({ status: 'approved-intent', moved: false });
  });

  it('an input request waits for a person and continues with their answer', async () => {
    const p = await plane();
    const run = await call(p, 'runs.start', { agent: 'ask-first', input: { question: 'Which colour?' }, wait: true });
    expect(run.pending).toMatchObject({ reason: 'input', subject: { prompt: 'Which colour?' } });
    expect((await failure(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash })).message).toContain('needs value');
    const answer = { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve' as const, subjectHash: run.pending!.subjectHash };
    expect((await failure(p, 'approvals.decide', { ...answer, value: { kind: 'budget', budget: { maxTokens: 5 } } })).message).toContain('a budget value does not answer this input wait');
    await call(p, 'approvals.decide', { ...answer, value: { kind: 'input', input: 'blue' } });
    expect((await settled(p, run.runId)).result).toMatchObject({ answer: 'blue' });
  });
});

describe('budgets', () => {
  it('suspends before the effect that would pass the ceiling, journals the verdict, and continues when raised', async () => {
    const p = await plane();
    const run = await call(p, 'runs.start', { agent: 'thrifty', input: { topic: 'ceilings and floors' }, wait: true });
    expect(run.pending).toMatchObject({ reason: 'budget', subject: { ceiling: 'tokens', budget: { maxTokens: 100 } } });
    const verdict = (await records(p, run.runId)).find((r) => r.kind === 'BudgetVerdict')!;
    expect(verdict.body).toMatchObject({ verdict: 'ceilingReached', ceiling: 'tokens' });
    const spentTokens = run.spend.inputTokens + run.spend.outputTokens;
    expect(spentTokens).toBeLessThanOrEqual(100);
    const base = { runId: run.runId, waitId: run.pending!.waitId, subjectHash: run.pending!.subjectHash };
    expect((await failure(p, 'approvals.decide', { ...base, decision: 'approve' })).message).toContain('raising it');
    expect((await failure(p, 'approvals.decide', { ...base, decision: 'approve', value: { budget: { maxTokens: 1000 } } as never })).code).toBe('AP_BAD_REQUEST');
    await call(p, 'approvals.decide', { ...base, decision: 'approve', value: { kind: 'budget', budget: { maxTokens: 1000 } } });
    const done = await settled(p, run.runId);
    expect(done).toMatchObject({ outcome: 'succeeded', budget: { maxTokens: 1000 } });
    expect((await records(p, run.runId)).map((r) => r.kind)).toContain('BudgetVerdict');
  });

  it('stopping at the ceiling ends the run denied', async () => {
    const p = await plane();
    const run = await call(p, 'runs.start', { agent: 'thrifty', input: { topic: 'ceilings and floors' }, wait: true });
    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, subjectHash: run.pending!.subjectHash, decision: 'deny', reason: 'enough' });
    expect((await settled(p, run.runId)).outcome).toBe('denied');
  });
});

describe('cancellation and halts', () => {
  it('a cancel of a waiting run seals it cancelled; of an ended run is refused', async () => {
    const p = await plane();
    const run = await call(p, 'runs.start', { agent: 'write-note', input: { title: 'c', topic: 'c' }, wait: true });
    const cancelled = await call(p, 'runs.cancel', { runId: run.runId, reason: 'changed my mind' });
    expect(cancelled.outcome).toBe('cancelled');
    expect(await kinds(p, run.runId)).toEqual(['RunAdmitted', 'EffectStarted', 'EffectDone', 'Suspended', 'Cancelled', 'RunSealed']);
    expect((await failure(p, 'runs.cancel', { runId: run.runId })).code).toBe('AP_CONFLICT');
  });

  it('a cancel of a running run is honoured at its next step boundary', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const dir = tempDataDir();
    const p = await plane({ dataDir: dir, providers: new Map([['local', countingProvider(join(dir, 'calls'), () => gate)]]) });
    const { runId } = await call(p, 'runs.start', { agent: 'thrifty', input: { topic: 'slow' } });
    while (callsIn(join(dir, 'calls')) === 0) await new Promise((r) => setTimeout(r, 5));
    const cancelling = call(p, 'runs.cancel', { runId });
    await new Promise((r) => setTimeout(r, 20));
    release();
    const cancelled = await cancelling;
    expect(cancelled.outcome).toBe('cancelled');
    expect(callsIn(join(dir, 'calls'))).toBe(1);
    expect(await kinds(p, runId)).toEqual(['RunAdmitted', 'EffectStarted', 'Cancelled', 'EffectDone', 'RunSealed']);
  });

  it('follows what another writer of the data dir journals: its approval resumes a run hosted here, its halt holds here', async () => {
    // Two planes on one data dir, as the desktop plane and a CLI on the same journal are: each
    // runtime reads the other's Decision, Cancelled and HaltApplied records from the journal
    // (Runtime.follow), with many records of its own in between that it must skip.
    const host = await plane();
    const other = await plane({ dataDir: host.dataDir });
    const run = await call(host, 'runs.start', { agent: 'write-note', input: { title: 'greeting', topic: 'hello' }, wait: true });
    expect(run.status).toBe('suspended');
    for (let i = 0; i < 5; i++) await call(host, 'runs.start', { agent: 'summarize', input: { text: `filler ${i}` }, wait: true });
    await call(other, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    await vi.waitFor(async () => expect((await call(host, 'runs.get', { runId: run.runId })).outcome).toBe('succeeded'), { timeout: 5000 });
    expect(readFileSync(join(host.dataDir, 'workspace', 'notes', 'greeting.md'), 'utf8')).toContain('# greeting');

    await call(other, 'halts.apply', { scope: 'subject:user:local', reason: 'incident' });
    await vi.waitFor(async () => expect(await failure(host, 'runs.start', { agent: 'summarize', input: { text: 'x' } })).toEqual({ code: 'AP_FORBIDDEN', message: 'the plane refused to start this run', reason: 'halted' }), { timeout: 5000 });
    await call(other, 'halts.lift', { scope: 'subject:user:local' });
    await vi.waitFor(async () => expect((await call(host, 'runs.start', { agent: 'summarize', input: { text: 'y' }, wait: true })).outcome).toBe('succeeded'), { timeout: 5000 });
  });

  it('a halt withholds new runs and a suspended run at its next step, until lifted', async () => {
    const p = await plane();
    const run = await call(p, 'runs.start', { agent: 'write-note', input: { title: 'h', topic: 'h' }, wait: true });
    expect(await call(p, 'halts.apply', { scope: 'subject:user:local', reason: 'incident' })).toEqual({ scopes: ['subject:user:local'] });
    const refused = await failure(p, 'runs.start', { agent: 'summarize', input: { text: 'x' } });
    expect(refused).toEqual({ code: 'AP_FORBIDDEN', message: 'the plane refused to start this run', reason: 'halted' });
    const refusal = (await p.journal.readRange(1, null, 100)).find((r) => r.kind === 'AdmissionRefused')!;
    expect(refusal.body).toMatchObject({ reason: 'withheld by halt subject:user:local', action: 'runtime:run.start', resource: 'agent:summarize' });

    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    const withheld = await settled(p, run.runId);
    expect(withheld).toMatchObject({ status: 'suspended', pending: { reason: 'halt' } });
    expect(existsSync(join(p.dataDir, 'workspace', 'notes', 'h.md'))).toBe(false);

    expect(await call(p, 'halts.lift', { scope: 'subject:user:local' })).toEqual({ scopes: [] });
    await new Promise((r) => setTimeout(r, 10));
    expect((await settled(p, run.runId)).outcome).toBe('succeeded');
    expect((await failure(p, 'halts.apply', { scope: 'everyone' })).code).toBe('AP_BAD_REQUEST');
    expect((await failure(p, 'halts.lift', { scope: 'subject:nobody' })).code).toBe('AP_CONFLICT');
  });
});

describe('policy and authority', () => {
  it('what is not granted is denied: a journaled refusal that names action and resource to the operator only', async () => {
    const policy = PolicyEngine.parse({ rules: [{ effect: 'allow', principal: 'user:local', action: 'runtime:run.start', resource: 'agent:summarize' }] }, 'test');
    const p = await plane({ policy });
    const refused = await failure(p, 'runs.start', { agent: 'write-note', input: { title: 'x', topic: 'y' } });
    expect(refused).toEqual({ code: 'AP_FORBIDDEN', message: 'the plane refused to start this run' });
    const [record] = await p.journal.readRange(1, null, 10);
    expect(record).toMatchObject({ kind: 'AdmissionRefused', runId: null, body: { principal: 'user:local', action: 'runtime:run.start', resource: 'agent:write-note', reason: 'no rule allows it' } });
  });

  it('refuses to build a plane that lets a principal start an agent wider than its authority', async () => {
    const policy = PolicyEngine.parse(
      { rules: [{ effect: 'allow', principal: 'peer:*', action: 'runtime:run.start', resource: 'agent:*' }], authority: { 'peer:reviewer': ['model:local'] } },
      'test',
    );
    await expect(testPlane({ policy })).rejects.toThrow(/peer:reviewer may start agent write-note, whose grants tool:file\.write exceed peer:reviewer's authority/);
  });

  it('refuses an effect whose grant the agent lacks (checked when the manifest is compiled)', () => {
    expect(() => agent({ name: 'sneaky', steps: [{ tool: { name: 'file.write', args: {} } }], grants: [] })).toThrow(/steps\.0: needs the grant tool:file\.write/);
  });
});

describe('replay', () => {
  it('replays a suspended run from its record after a restart, performing nothing twice', async () => {
    const dir = tempDataDir();
    const counter = join(dir, 'calls');
    const first = await testPlane({ dataDir: dir, providers: new Map([['local', countingProvider(counter)]]) });
    const run = await call(first, 'runs.start', { agent: 'write-note', input: { title: 'again', topic: 'replay' }, wait: true });
    await first.close();
    const second = await plane({ dataDir: dir, providers: new Map([['local', countingProvider(counter)]]) });
    await call(second, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    expect((await settled(second, run.runId)).outcome).toBe('succeeded');
    expect(callsIn(counter)).toBe(1);
  });

  it('a run whose manifest changed diverges loudly instead of quietly doing something else', async () => {
    const dir = tempDataDir();
    const first = await testPlane({ dataDir: dir });
    const run = await call(first, 'runs.start', { agent: 'write-note', input: { title: 'd', topic: 'd' }, wait: true });
    await first.close();
    const edited = loadAgents(dir).map((a) =>
      a.manifest.name !== 'write-note' ? a : agent({ ...a.manifest, steps: [{ as: 'draft', model: { provider: 'local', prompt: 'An EDITED prompt about {{input.topic}}', maxTokens: 80 } }, ...a.manifest.steps.slice(1)], input: a.manifest.input }),
    );
    const second = await plane({ dataDir: dir, agents: edited });
    await call(second, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    const diverged = await settled(second, run.runId);
    expect(diverged).toMatchObject({ outcome: 'failed', error: { code: 'Divergence', message: expect.stringMatching(/replay diverged at step 0 \(model local\): the journal recorded key [0-9a-f]{16}…, the run now asks for [0-9a-f]{16}…/) } });
  });

  for (const checkJournalInBackground of [false, true]) {
    it(`refuses to replay, decide or start against a journal whose chain does not verify${checkJournalInBackground ? ' (checked in the background)' : ''}`, async () => {
      const dir = tempDataDir();
      const first = await testPlane({ dataDir: dir });
      const run = await call(first, 'runs.start', { agent: 'write-note', input: { title: 't', topic: 't' }, wait: true });
      await first.close();
      const db = new Database(journalPath(dir));
      db.exec('DROP TRIGGER records_append_only_update');
      db.prepare("UPDATE records SET body = replace(body, 'replay', 'REPLAY') WHERE seq = 2").run();
      db.prepare("UPDATE records SET body = replace(body, '\"t\"', '\"T\"') WHERE seq = 1").run();
      db.close();
      // In the background, the plane is built (and answers reads) before the check ends; every write waits for it.
      const second = await plane({ dataDir: dir, checkJournalInBackground });
      expect((await call(second, 'journal.records', { runId: run.runId, fromSeq: 1, limit: 10 })).records.length).toBeGreaterThan(0);
      const refused = await failure(second, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
      expect(refused).toMatchObject({ code: 'AP_UNAVAILABLE', message: expect.stringMatching(/refused: the journal does not verify \(seq 1: .*altered/) });
      expect((await failure(second, 'runs.start', { agent: 'summarize', input: { text: 'x' } })).code).toBe('AP_UNAVAILABLE');
    });
  }
});

describe('the start-up check of the journal, in the background (serve, mcp serve, the desktop app)', () => {
  it('lets the plane answer before the check ends; a start asked meanwhile waits for it', async () => {
    // On a journal of 1M records the check took 5-18 s, all of it before serve printed its URL.
    const dir = tempDataDir();
    const first = await testPlane({ dataDir: dir });
    await call(first, 'runs.start', { agent: 'summarize', input: { text: 'before' }, wait: true });
    await first.close();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const read = SqliteJournalStore.prototype.readRangeText;
    const held = vi.spyOn(SqliteJournalStore.prototype, 'readRangeText').mockImplementation(async function (this: SqliteJournalStore, ...args) {
      await gate;
      return read.apply(this, args);
    });
    try {
      const second = await plane({ dataDir: dir, checkJournalInBackground: true });
      expect((await call(second, 'plane.status', {})).state).toBe('running');
      await new Promise((resolve) => setTimeout(resolve, 20));
      // The check is under way, held at its first read.
      expect(held).toHaveBeenCalled();
      let answered = false;
      const starting = call(second, 'runs.start', { agent: 'summarize', input: { text: 'x' } }).finally(() => (answered = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(answered).toBe(false);
      release();
      expect((await starting).agent).toBe('summarize');
    } finally {
      release();
      held.mockRestore();
    }
  });


  it('holds the halts the journal holds from the first start, and replays a decided run as before', async () => {
    const dir = tempDataDir();
    const counter = join(dir, 'calls');
    const first = await testPlane({ dataDir: dir, providers: new Map([['local', countingProvider(counter)]]) });
    const run = await call(first, 'runs.start', { agent: 'write-note', input: { title: 'bg', topic: 'bg' }, wait: true });
    await call(first, 'halts.apply', { scope: 'agent:summarize', reason: 'incident' });
    await first.close();
    const second = await plane({ dataDir: dir, providers: new Map([['local', countingProvider(counter)]]), checkJournalInBackground: true });
    // Asked at once: the start waits for the check, which restores the halt.
    expect(await failure(second, 'runs.start', { agent: 'summarize', input: { text: 'x' } })).toEqual({ code: 'AP_FORBIDDEN', message: 'the plane refused to start this run', reason: 'halted' });
    expect(await call(second, 'halts.list', {})).toEqual({ scopes: ['agent:summarize'] });
    await call(second, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
    expect((await settled(second, run.runId)).outcome).toBe('succeeded');
    expect(callsIn(counter)).toBe(1);
  });
});
