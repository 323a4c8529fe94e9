/**
 * Time travel on a real plane (docs/GOVERNED-RUNTIME.md, "Fork, replay, diff"): a four-step run
 * (model, model, a call to the demo peer beta, model) forked, replayed dry and compared. Model
 * calls are counted at the provider; peer calls at the peer (the skill runs it admitted, which
 * the fork's links list).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, callsIn, countingProvider, failure, testPlane } from '../../tests/support/runtime-support';
import type { Plane } from '../plane/plane';
import type { JournalRecord } from '../../src-shared/journal/records';
import { readRunHistory } from './run-history';

const open: Plane[] = [];
afterEach(async () => {
  for (const p of open.splice(0).reverse()) await p.close().catch(() => undefined);
});

const FOUR_STEPS = {
  name: 'four-steps',
  input: { type: 'object', required: ['topic'], properties: { topic: { type: 'string' } } },
  steps: [
    { as: 'first', model: { provider: 'local', prompt: 'First about {{input.topic}}', maxTokens: 20 } },
    { as: 'second', model: { provider: 'local', prompt: 'Second: {{steps.first.text}}', maxTokens: 20 } },
    { as: 'asked', peer: { name: 'beta', skill: 'ask', args: { query: 'Third: {{steps.second.text}}' } } },
    { as: 'fourth', model: { provider: 'local', prompt: 'Fourth: {{steps.asked.response}}', maxTokens: 20 } },
    { output: '{{steps.fourth.text}}' },
  ],
  grants: [
    { kind: 'model', name: 'local' },
    { kind: 'peer', name: 'beta', skills: ['ask'] },
  ],
};

async function plane(dataDir: string): Promise<Plane> {
  const p = await testPlane({ dataDir, demoPeers: true, agents: [agent(FOUR_STEPS)], providers: new Map([['local', countingProvider(join(dataDir, 'model-calls'))]]) });
  open.push(p);
  return p;
}

async function records(p: Plane, runId: string): Promise<JournalRecord[]> {
  return p.journal.readRun(runId, 1, 1000);
}

/** Approves the run's pending wait (its exact subject) and waits for it to settle. */
async function approve(p: Plane, runId: string) {
  const run = await call(p, 'runs.get', { runId });
  await call(p, 'approvals.decide', { runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash });
  return p.runtime.settled(runId);
}

/** A parent run of four steps, sealed, with beta running. */
async function parentRun(dataDir: string) {
  const p = await plane(dataDir);
  await call(p, 'peers.start', { id: 'beta' });
  const parent = await call(p, 'runs.start', { agent: 'four-steps', input: { topic: 'forks' }, wait: true });
  expect(parent).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
  return { p, parent };
}

describe('runs.fork', () => {
  it('a fork at step 2 of a four-step run performs only steps 2 and 3 (counted at the model and at the peer), taking 0 and 1 from the parent', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-fork-');
    const { p, parent } = await parentRun(dataDir);
    const modelCalls = callsIn(join(dataDir, 'model-calls'));
    expect(modelCalls).toBe(3);
    expect((await call(p, 'runs.links', { runId: parent.runId })).calls).toHaveLength(1);

    const fork = await call(p, 'runs.fork', { runId: parent.runId, at: 2, wait: true });
    expect(fork.forkOf).toEqual({ runId: parent.runId, step: 2 });
    // Step 2 calls beta again, as the parent did: the fork asks a person first.
    expect(fork).toMatchObject({ status: 'suspended', pending: { reason: 'approval', step: 2 } });
    expect(callsIn(join(dataDir, 'model-calls'))).toBe(modelCalls);
    const done = await approve(p, fork.runId);
    expect(done).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    expect(done.result).toEqual(parent.result);

    expect(callsIn(join(dataDir, 'model-calls'))).toBe(modelCalls + 1);
    expect((await call(p, 'runs.links', { runId: fork.runId })).calls).toHaveLength(1);
    const forkRecords = await records(p, fork.runId);
    expect(forkRecords.map((r) => r.kind).slice(0, 2)).toEqual(['RunAdmitted', 'RunForked']);
    expect(forkRecords[1]!.body).toMatchObject({ parent: parent.runId, step: 2, changed: { input: false, manifest: false, model: null } });
    // Steps 0 and 1 in one record, each naming the parent's record that held its answer.
    const reused = forkRecords.filter((r) => r.kind === 'EffectReused');
    expect(reused).toHaveLength(1);
    const steps = reused[0]!.body.steps as Array<{ step: number; key: string; result: unknown; from: { runId: string; seq: number; hash: string } }>;
    expect(steps.map((s) => s.step)).toEqual([0, 1]);
    const parentRecords = await records(p, parent.runId);
    for (const step of steps) {
      const original = parentRecords.find((r) => r.seq === step.from.seq)!;
      expect(step.from).toEqual({ runId: parent.runId, seq: original.seq, hash: original.hash });
      expect(original).toMatchObject({ kind: 'EffectDone', body: { step: step.step, key: step.key, result: step.result } });
    }
    expect(forkRecords.filter((r) => r.kind === 'EffectStarted').map((r) => r.body.step)).toEqual([2, 3]);
    // Nothing spent on what was taken: two effects, where the parent spent four.
    expect(done.spend.effects).toBe(2);
    expect(parent.spend.effects).toBe(4);

    const diff = await call(p, 'runs.diff', { a: parent.runId, b: fork.runId });
    expect(diff.steps.map((s) => s.fromParent)).toEqual([true, true, false, false]);
    expect(diff.steps.slice(0, 2).every((s) => s.same)).toBe(true);
    // Beta answered the same question again, its answer naming its own new skill run: the first
    // difference is that answer, an outcome, never the arguments.
    expect(diff.steps[2]!.a!.key).toBe(diff.steps[2]!.b!.key);
    expect(diff.divergesAt === null || (diff.divergesAt.step === 2 && diff.divergesAt.reason === 'outcome')).toBe(true);
    expect(diff.b.forkOf).toEqual({ runId: parent.runId, step: 2 });
    expect(diff.spendDifference.effects).toBe(-2);
  });

  it('a fork with a changed input diverges where the input first reaches an effect, and the diff names that step', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-fork-input-');
    const { p, parent } = await parentRun(dataDir);
    const fork = await call(p, 'runs.fork', { runId: parent.runId, at: 2, input: { topic: 'branches' }, wait: true });
    // Step 0's prompt holds the input: nothing can be taken, and everything is live from step 0.
    const forkRecords = await records(p, fork.runId);
    expect(forkRecords.filter((r) => r.kind === 'EffectReused')).toHaveLength(0);
    expect(forkRecords[1]!.body).toMatchObject({ changed: { input: true } });
    const diff = await call(p, 'runs.diff', { a: parent.runId, b: fork.runId });
    expect(diff.sameInput).toBe(false);
    expect(diff.divergesAt).toMatchObject({ step: 0, reason: 'arguments' });
    expect(diff.steps[0]).toMatchObject({ same: false, fromParent: false });
  });

  it('a fork of a long run keeps its folded history as it seals, equal to a fold of its records, and reads none back to show it', { timeout: 90_000 }, async () => {
    // A fork's reused steps share a few large EffectReused records: reading them back whole just
    // to show the sealed fork cost as much as the rest of the fork (bench/time-travel.bench.ts).
    const dataDir = tempDataDir('ap-fork-long-');
    const steps: unknown[] = [];
    for (let i = 0; i < 1000; i++) steps.push({ as: `s${i}`, tool: { name: 'echo', args: { line: `line ${i}` } } });
    steps.push({ output: '{{steps.s999}}' });
    const p = await testPlane({ dataDir, agents: [agent({ name: 'long-run', input: { type: 'object' }, steps, grants: [{ kind: 'tool', name: 'echo' }] })] });
    open.push(p);
    const parent = await call(p, 'runs.start', { agent: 'long-run', input: {}, wait: true });
    expect(parent.outcome).toBe('succeeded');
    // What the fork's own records read back held (its admission, read as its execution began, is expected).
    const readBack: string[] = [];
    const readRun = p.journal.readRun.bind(p.journal);
    const reads = vi.spyOn(p.journal, 'readRun').mockImplementation(async (...args) => {
      const page = await readRun(...args);
      if (args[0] !== parent.runId) readBack.push(...page.map((r) => r.kind));
      return page;
    });
    const fork = await call(p, 'runs.fork', { runId: parent.runId, at: 999, wait: true });
    expect(fork).toMatchObject({ status: 'sealed', outcome: 'succeeded', result: parent.result });
    expect(fork.spend.effects).toBe(1);
    expect(readBack).not.toContain('EffectReused');
    reads.mockRestore();
    const kept = await p.runtime.history(fork.runId);
    expect(kept).toEqual(readRunHistory(await p.journal.readRun(fork.runId, 1, 100_000)));
    expect([...kept.steps.values()].filter((attempts) => attempts[0]!.reused)).toHaveLength(999);
  });

  it('a fork keeps a changed manifest whole and runs it after a restart; the reused steps are not performed again', { timeout: 90_000 }, async () => {
    const dataDir = tempDataDir('ap-fork-restart-');
    const { p, parent } = await parentRun(dataDir);
    const changed = { ...FOUR_STEPS, description: 'test agent', steps: FOUR_STEPS.steps.map((s, i) => (i === 3 ? { as: 'fourth', model: { provider: 'local', prompt: 'A different fourth: {{steps.asked.response}}', maxTokens: 20 } } : s)) };
    const fork = await call(p, 'runs.fork', { runId: parent.runId, at: 2, manifest: stringify(changed), wait: true });
    expect(fork).toMatchObject({ status: 'suspended', pending: { reason: 'approval' } });
    await p.close();
    open.splice(open.indexOf(p), 1);

    const again = await plane(dataDir);
    await call(again, 'peers.start', { id: 'beta' });
    const before = callsIn(join(dataDir, 'model-calls'));
    const done = await approve(again, fork.runId);
    expect(done).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    expect(callsIn(join(dataDir, 'model-calls'))).toBe(before + 1);
    expect(String(done.result)).not.toEqual(String(parent.result));
    const diff = await call(again, 'runs.diff', { a: parent.runId, b: fork.runId });
    expect(diff.steps.slice(0, 2).every((s) => s.fromParent && s.same)).toBe(true);
    // Step 3's prompt is the changed manifest's (step 2 may part first: beta answers anew).
    expect(diff.steps[3]).toMatchObject({ same: false, fromParent: false });
    expect(diff.steps[3]!.b!.request.value).toMatchObject({ messages: [{ content: expect.stringContaining('A different fourth') }] });
    expect(diff.divergesAt!.step).toBeGreaterThanOrEqual(2);
  });

  it('refuses, naming what was wrong: a step past the run, an unknown run, a manifest of another agent or a broken one, a bad model', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-fork-bad-');
    const { p, parent } = await parentRun(dataDir);
    const past = await failure(p, 'runs.fork', { runId: parent.runId, at: 5 });
    expect(past).toMatchObject({ code: 'AP_BAD_REQUEST' });
    expect(past.message).toContain(`run ${parent.runId} has 4 steps (0 to 3)`);
    expect((await failure(p, 'runs.fork', { runId: 'run-00000000000000000000', at: 0 })).code).toBe('AP_NOT_FOUND');
    const other = await failure(p, 'runs.fork', { runId: parent.runId, at: 1, manifest: stringify({ ...FOUR_STEPS, description: 'test agent', name: 'another' }) });
    expect(other.message).toContain('names agent another, but the run is of four-steps');
    const broken = await failure(p, 'runs.fork', { runId: parent.runId, at: 1, manifest: 'name: four-steps\nsteps: 3\n' });
    expect(broken.code).toBe('AP_BAD_REQUEST');
    expect(broken.message).toMatch(/manifest: .*steps/);
    expect((await failure(p, 'runs.fork', { runId: parent.runId, at: 1, model: 'not a model' })).code).toBe('AP_BAD_REQUEST');
    expect((await failure(p, 'runs.fork', { runId: parent.runId, at: 1, model: 'nowhere:m1' })).message).toContain('nowhere');
    // Nothing was admitted for a refused fork.
    expect((await call(p, 'runs.list', {})).runs.filter((r) => r.forkOf)).toHaveLength(0);
  });
});

describe('runs.replay', () => {
  it('reports no divergence for the unchanged manifest, and the first diverging step and why for a changed one, performing nothing', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-replay-');
    const { p, parent } = await parentRun(dataDir);
    const calls = callsIn(join(dataDir, 'model-calls'));
    const head = (await p.journal.head()).seq;

    const same = await call(p, 'runs.replay', { runId: parent.runId, manifest: stringify({ ...FOUR_STEPS, description: 'test agent' }) });
    expect(same).toMatchObject({ divergesAt: null, replayed: 4, steps: 4 });
    const changedPrompt = { ...FOUR_STEPS, description: 'test agent', steps: FOUR_STEPS.steps.map((s, i) => (i === 1 ? { as: 'second', model: { provider: 'local', prompt: 'Another second: {{steps.first.text}}', maxTokens: 20 } } : s)) };
    const changed = await call(p, 'runs.replay', { runId: parent.runId, manifest: stringify(changedPrompt) });
    expect(changed.divergesAt).toMatchObject({ step: 1, reason: 'arguments' });
    expect(changed.expected).toMatchObject({ effect: 'model', name: 'local' });
    const otherInput = await call(p, 'runs.replay', { runId: parent.runId, input: { topic: 'elsewhere' } });
    expect(otherInput.divergesAt).toMatchObject({ step: 0, reason: 'arguments' });
    const shorter = { ...FOUR_STEPS, description: 'test agent', steps: [FOUR_STEPS.steps[0], FOUR_STEPS.steps[1], { output: '{{steps.second.text}}' }], grants: [{ kind: 'model', name: 'local' }] };
    const ended = await call(p, 'runs.replay', { runId: parent.runId, manifest: stringify(shorter) });
    expect(ended.divergesAt).toMatchObject({ step: 2, reason: 'missing' });

    // Nothing was performed or written.
    expect(callsIn(join(dataDir, 'model-calls'))).toBe(calls);
    expect((await p.journal.head()).seq).toBe(head);
  });
});
