/**
 * Another agent as a model's tool (`agent:<name>`, agent-effect.ts): a child run in the
 * delegation chain. In process, with a scripted model that calls the tool its prompt names
 * (tests/support/agent-tools-support.ts), except one test that kills a real plane process with
 * SIGKILL while the child waits for a person and resumes it in a new one.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../src-shared/journal/records';
import type { RunView } from '../../src-shared/ipc/contract';
import { tokensOf, type Spend } from '../../src-shared/vocabulary/spend';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, callsIn, testPlane } from '../../tests/support/runtime-support';
import { agentToolProviders, delegator, helper } from '../../tests/support/agent-tools-support';
import type { Plane } from '../plane/plane';
import { childRunId } from './agent-effect';
import { ManifestError, type LoadedAgent } from './manifest';
import { PlaneBuildError } from './runtime';
import { PolicyEngine } from './policy';

const CHILD = join(import.meta.dirname, '..', '..', 'tests', 'helpers', 'agent-tools-child.ts');
const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

async function open(agents: LoadedAgent[], dataDir = tempDataDir('ap-agent-tools-'), counter?: string): Promise<Plane> {
  const p = await testPlane({ dataDir, agents, providers: agentToolProviders(counter) });
  planes.push(p);
  return p;
}

const recordsOf = (p: Plane, runId: string): Promise<JournalRecord[]> => p.journal.readRun(runId, 1, 10_000);
const effectsOf = async (p: Plane, runId: string) => (await recordsOf(p, runId)).filter((r) => r.kind === 'EffectStarted').map((r) => `${String(r.body.effect)}:${String(r.body.name)}`);
const toolResults = async (p: Plane, runId: string) =>
  (await recordsOf(p, runId))
    .filter((r) => r.kind === 'EffectStarted' && r.body.effect === 'model')
    .map((r) => (r.body.request as { messages: Array<{ role: string; content: unknown; isError?: boolean }> }).messages.find((m) => m.role === 'tool'))
    .filter(Boolean);

async function settled(p: Plane, runId: string): Promise<RunView> {
  await p.runtime.settled(runId);
  return call(p, 'runs.get', { runId });
}

/** Polls until `runId`'s first child run exists and waits for a person; answers that child. */
async function waitingChild(p: Plane, runId: string): Promise<RunView> {
  for (let i = 0; i < 2000; i++) {
    const { calls } = await call(p, 'runs.links', { runId });
    const child = calls[0] ? await call(p, 'runs.get', { runId: calls[0].runId }) : null;
    if (child?.pending) return child;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`no child of ${runId} came to wait for a person`);
}

describe('an agent called as a tool', () => {
  it('runs a child run whose output is the tool result; links both ways; the child is held to what the parent has left, and counted once in the plane total', async () => {
    const p = await open([delegator('boss', 'call agent__helper {"text":"hello"}', ['agent:helper'], { budget: { maxTokens: 2000 } }), helper('helper', { budget: { maxTokens: 50_000 } })]);
    const run = await call(p, 'runs.start', { agent: 'boss', input: {}, wait: true });
    expect(run).toMatchObject({ outcome: 'succeeded', result: 'answer: "answer: helper says hello"' });
    expect(await effectsOf(p, run.runId)).toEqual(['model:scripted', 'agent:helper', 'model:scripted']);

    // The model was offered the helper as its manifest describes it.
    const firstModel = (await recordsOf(p, run.runId)).find((r) => r.kind === 'EffectStarted' && r.body.effect === 'model')!;
    expect((firstModel.body.request as { tools: unknown[] }).tools).toEqual([
      { name: 'agent__helper', description: 'Says something about a text (helper)', inputSchema: expect.objectContaining({ required: ['text'] }) },
    ]);

    // The child: derived id, the parent's chain plus one link naming the parent agent, its parent named.
    const started = (await recordsOf(p, run.runId)).find((r) => r.kind === 'EffectStarted' && r.body.effect === 'agent')!;
    const childId = childRunId(run.runId, started.body.step as number, started.body.key as string);
    const child = await call(p, 'runs.get', { runId: childId });
    expect(child).toMatchObject({ agent: 'helper', outcome: 'succeeded', result: 'answer: helper says hello', chain: ['user:local', 'agent:boss'], owner: 'user:local' });
    const admitted = (await recordsOf(p, childId))[0]!;
    expect(admitted.body).toMatchObject({ parentRunId: run.runId, parentStep: started.body.step, inputProvenance: 'agent:boss', trigger: { via: 'plane', by: 'agent:boss' } });

    // Links both ways, confirmed by the parent's own record.
    expect((await call(p, 'runs.links', { runId: run.runId })).calls).toEqual([expect.objectContaining({ runId: childId, agent: 'helper', step: started.body.step, confirmed: true })]);
    expect((await call(p, 'runs.links', { runId: childId })).calledBy).toMatchObject({ runId: run.runId, agent: 'boss', confirmed: true });

    // Budget: the child's ceiling is the parent's remainder (2000 minus turn 1), not its own 50,000;
    // the parent's spend includes the child's; the plane's total counts the child once.
    const [turn1, agentDone, turn2] = (await recordsOf(p, run.runId)).filter((r) => r.kind === 'EffectDone').map((r) => r.body.spend as Spend);
    expect(child.budget.maxTokens).toBe(2000 - tokensOf(turn1!));
    expect(agentDone).toEqual(child.spend);
    expect(tokensOf(run.spend)).toBe(tokensOf(turn1!) + tokensOf(child.spend) + tokensOf(turn2!));
    expect(child.spend.costMicros).toBeGreaterThan(0);
    const summary = await call(p, 'spend.summary', {});
    expect(summary.total).toEqual(run.spend);
    expect(summary.byAgent.find((row) => row.key === 'helper')?.spend).toEqual(child.spend);
  });

  it("a child that would spend past the parent's remainder stops at it for a person, and the parent waits", async () => {
    const p = await open([delegator('lean', 'call agent__helper {"text":"x"}', ['agent:helper'], { budget: { maxTokens: 600 } }), helper('helper', { maxTokens: 1000 })]);
    const run = await call(p, 'runs.start', { agent: 'lean', input: {} });
    const child = await waitingChild(p, run.runId);
    const turn1 = (await recordsOf(p, run.runId)).find((r) => r.kind === 'EffectDone')!.body.spend as Spend;
    // The helper's own budget has no ceiling; the one it is held to is what the parent had left.
    expect(child.pending).toMatchObject({ reason: 'budget', subject: { ceiling: 'tokens', budget: { maxTokens: 600 - tokensOf(turn1) }, next: { effect: 'model' } } });
    expect((await call(p, 'runs.get', { runId: run.runId })).status).toBe('running');
    expect(await call(p, 'runs.cancel', { runId: run.runId })).toMatchObject({ outcome: 'cancelled' });
  });

  it('a parent at its effect ceiling stops for a person before admitting a child', async () => {
    const p = await open([delegator('tight', 'call agent__helper {"text":"x"}', ['agent:helper'], { budget: { maxEffects: 1 } }), helper()]);
    const run = await call(p, 'runs.start', { agent: 'tight', input: {}, wait: true });
    expect(run.pending).toMatchObject({ reason: 'budget', subject: { ceiling: 'effects', next: { effect: 'agent', name: 'helper' } } });
    expect((await call(p, 'runs.links', { runId: run.runId })).calls).toEqual([]);
  });

  it('a child that fails, or input its schema refuses, is an error result the model reads; the parent goes on', async () => {
    const p = await open([
      delegator('to-broken', 'call agent__broken {"text":"x"}', ['agent:broken']),
      delegator('bad-args', 'call agent__helper {"text":5}', ['agent:helper']),
      helper('broken', { provider: 'local', prompt: '!fail:refused {{input.text}}' }),
      helper(),
    ]);
    const failed = await call(p, 'runs.start', { agent: 'to-broken', input: {}, wait: true });
    expect(failed.outcome).toBe('succeeded');
    const [failedResult] = await toolResults(p, failed.runId);
    expect(failedResult).toMatchObject({ isError: true, content: expect.stringMatching(/^The tool failed \(AgentFailed\): the run run-[0-9a-f]{20} of agent broken ended failed: ModelRefused/) });
    const failure = (await recordsOf(p, failed.runId)).find((r) => r.kind === 'EffectFailed')!;
    expect(failure.body).toMatchObject({ disposition: 'Landed', error: { code: 'AgentFailed' } });
    expect((await call(p, 'runs.links', { runId: failed.runId })).calls).toEqual([expect.objectContaining({ agent: 'broken', outcome: 'failed' })]);

    const bad = await call(p, 'runs.start', { agent: 'bad-args', input: {}, wait: true });
    expect(bad.outcome).toBe('succeeded');
    const [badResult] = await toolResults(p, bad.runId);
    expect(badResult).toMatchObject({ isError: true, content: expect.stringContaining('AgentInputInvalid') });
    expect(String(badResult!.content)).toContain('input.text: must be string');
    expect((await recordsOf(p, bad.runId)).find((r) => r.kind === 'EffectFailed')!.body).toMatchObject({ disposition: 'DidNotHappen' });
    expect((await call(p, 'runs.links', { runId: bad.runId })).calls).toEqual([]);
  });

  it('a cycle of agents is bounded by the delegation depth cap, which fails the call one link too deep', async () => {
    const p = await open([delegator('ping', 'call agent__pong {}', ['agent:pong']), delegator('pong', 'call agent__ping {}', ['agent:ping'])]);
    const run = await call(p, 'runs.start', { agent: 'ping', input: {}, wait: true });
    expect(run.outcome).toBe('succeeded');
    const chain: RunView[] = [run];
    for (;;) {
      const { calls } = await call(p, 'runs.links', { runId: chain.at(-1)!.runId });
      if (!calls[0]) break;
      chain.push(await call(p, 'runs.get', { runId: calls[0].runId }));
    }
    expect(chain.map((r) => r.agent)).toEqual(['ping', 'pong', 'ping', 'pong']);
    expect(chain.at(-1)!.chain).toEqual(['user:local', 'agent:ping', 'agent:pong', 'agent:ping']);
    expect(chain.every((r) => r.outcome === 'succeeded')).toBe(true);
    const deepest = (await recordsOf(p, chain.at(-1)!.runId)).find((r) => r.kind === 'EffectFailed')!;
    expect(deepest.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'DelegationRefused', message: expect.stringContaining('depth cap 4') } });
  });

  it('a child waiting for a person keeps the parent waiting; a plane closed meanwhile parks the parent, and the next one re-attaches', async () => {
    const dataDir = tempDataDir('ap-agent-tools-');
    const counter = join(dataDir, 'calls');
    const agents = [delegator('boss', 'call agent__guarded {"text":"later"}', ['agent:guarded']), helper('guarded', { approve: true })];
    const first = await open(agents, dataDir, counter);
    const run = await call(first, 'runs.start', { agent: 'boss', input: {} });
    const child = await waitingChild(first, run.runId);
    expect(child.pending).toMatchObject({ reason: 'approval', subject: { effect: 'model', name: 'scripted' } });
    expect((await call(first, 'runs.get', { runId: run.runId })).status).toBe('running');
    await first.close(); // must not wait for the child's approval

    const second = await open(agents, dataDir, counter);
    await call(second, 'approvals.decide', { runId: child.runId, waitId: child.pending!.waitId, decision: 'approve', subjectHash: child.pending!.subjectHash });
    const done = await settled(second, run.runId);
    expect(done).toMatchObject({ outcome: 'succeeded', result: 'answer: "answer: helper says later"' });
    const kinds = (await recordsOf(second, run.runId)).map((r) => (r.kind === 'EffectStarted' || r.kind === 'EffectDone' || r.kind === 'EffectFailed' ? `${r.kind}:${r.body.step as number}` : r.kind));
    // One attempt at the agent step, continued across the close: no InDoubt, no second start.
    expect(kinds).toEqual(['RunAdmitted', 'EffectStarted:0', 'EffectDone:0', 'EffectStarted:1', 'EffectDone:1', 'EffectStarted:2', 'EffectDone:2', 'RunSealed']);
    expect(callsIn(counter)).toBe(3);
  });

  it('cancelling the parent cancels its open child', async () => {
    const p = await open([delegator('boss', 'call agent__guarded {"text":"never"}', ['agent:guarded']), helper('guarded', { approve: true })]);
    const run = await call(p, 'runs.start', { agent: 'boss', input: {} });
    const child = await waitingChild(p, run.runId);
    const cancelled = await call(p, 'runs.cancel', { runId: run.runId });
    expect(cancelled.outcome).toBe('cancelled');
    expect(await call(p, 'runs.get', { runId: child.runId })).toMatchObject({ outcome: 'cancelled' });
    expect((await recordsOf(p, child.runId)).find((r) => r.kind === 'Cancelled')!.body).toMatchObject({ reason: `its parent run ${run.runId} was cancelled` });
    // The parent's agent effect failed (the child was cancelled) and nothing after it ran.
    expect(await effectsOf(p, run.runId)).toEqual(['model:scripted', 'agent:guarded']);
  });
});

describe('across a killed process', () => {
  it('the child is admitted exactly once, and the model and the child are each called once', async () => {
    const dataDir = tempDataDir('ap-agent-kill-');
    const counter = join(dataDir, 'calls');
    const proc = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir, counter], { stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: proc.stdout! });
    const [parentId, childId] = await new Promise<[string, string]>((resolve, reject) => {
      lines.on('line', (line) => {
        const m = /^CHILD-WAITING (\S+) (\S+)$/.exec(line);
        if (m) resolve([m[1]!, m[2]!]);
      });
      proc.on('exit', (code) => reject(new Error(`the plane process exited (${code}) before its child run waited`)));
    });
    const exited = new Promise((resolve) => proc.on('exit', resolve));
    proc.kill('SIGKILL');
    await exited;
    expect(callsIn(counter)).toBe(1); // the parent's first turn; the child waits before its model call

    const p = await open([delegator('boss', 'call agent__guarded {"text":"survive"}', ['agent:guarded']), helper('guarded', { approve: true })], dataDir, counter);
    const child = await call(p, 'runs.get', { runId: childId });
    await call(p, 'approvals.decide', { runId: childId, waitId: child.pending!.waitId, decision: 'approve', subjectHash: child.pending!.subjectHash });
    const done = await settled(p, parentId);
    expect(done).toMatchObject({ outcome: 'succeeded', result: 'answer: "answer: helper says survive"' });
    expect(callsIn(counter)).toBe(3); // parent turn 1, the child's call, parent turn 2: each once

    const admissions = await p.journal.readRange(1, (await p.journal.head()).seq, 10_000);
    expect(admissions.filter((r) => r.kind === 'RunAdmitted').map((r) => r.runId)).toEqual([parentId, childId]);
    const parentRecords = await recordsOf(p, parentId);
    expect(parentRecords.filter((r) => r.kind === 'EffectStarted')).toHaveLength(3);
    expect(parentRecords.filter((r) => r.kind === 'EffectFailed')).toEqual([]);
  });
});

describe('agent tools at load', () => {
  const base = (name: string, tools: string[], grants: unknown[]) => agent({ name, steps: [{ model: { provider: 'scripted', prompt: 'p', tools } }], grants: [{ kind: 'model', name: 'scripted' }, ...grants] });

  it('needs the agent grant, naming it', () => {
    expect(() => base('lead', ['agent:helper'], [])).toThrow(/tool agent:helper needs the grant agent:helper, which the manifest does not give/);
    expect(() => base('lead', ['agent:helper'], [{ kind: 'agent', name: 'helper' }])).not.toThrow();
    expect(() => base('lead', ['agent:helper'], [{ kind: 'agent', name: 'Helper!' }])).toThrow(ManifestError);
  });

  it('refuses an agent offering itself (direct recursion)', () => {
    expect(() => base('lead', ['agent:lead'], [{ kind: 'agent', name: 'lead' }])).toThrow(/an agent cannot offer itself as a tool \(direct recursion\)/);
  });

  it("a principal's declared authority must cover the agents a startable agent may call, not only its own grants", async () => {
    const policy = (authority: string[]) =>
      PolicyEngine.parse({ rules: [{ effect: 'allow', principal: 'user:local', action: 'runtime:run.start', resource: 'agent:boss' }], authority: { 'user:local': authority } }, 'test-policy');
    const agents = () => [delegator('boss', 'call agent__helper {"text":"x"}', ['agent:helper']), helper('helper', { provider: 'local' })];
    await expect(testPlane({ agents: agents(), policy: policy(['model:scripted', 'agent:*']), providers: agentToolProviders() })).rejects.toThrow(
      /user:local may start agent boss, whose grants model:local exceed user:local's authority/,
    );
    planes.push(await testPlane({ agents: agents(), policy: policy(['model:*', 'agent:*']), providers: agentToolProviders() }));
  });

  it('the plane refuses to build when an agent tool names no declared agent', async () => {
    await expect(open([base('lead', ['agent:ghost'], [{ kind: 'agent', name: 'ghost' }])])).rejects.toThrow(PlaneBuildError);
    await expect(open([base('lead', ['agent:ghost'], [{ kind: 'agent', name: 'ghost' }])])).rejects.toThrow(/offers the tool agent:ghost, but no agent named ghost is declared/);
  });
});
