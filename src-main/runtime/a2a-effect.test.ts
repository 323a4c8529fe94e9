/**
 * The `a2a` effect's governance, with a scripted A2aCaller standing in for the wire (the wire
 * itself is tested against the official SDK server in protocols/a2a/client/a2a-client.test.ts):
 * the grant is required at load, for the step and the model tool `a2a:<card>`, and its
 * `signed: true` reaches the caller for both; one send effect per call (a scripted answer comes
 * at once, so nothing is followed), replayed without calling again; an `approve` grant suspends
 * before the send; each disposition the caller reports is what the journal keeps; a cancel
 * between the send and the follow reaches the accepted task.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, testPlane } from '../../tests/support/runtime-support';
import { agentToolProviders } from '../../tests/support/agent-tools-support';
import type { Plane } from '../plane/plane';
import type { A2aClient } from '../protocols/a2a/client/a2a-client';
import { A2aPins } from '../protocols/a2a/client/a2a-pins';
import type { A2aAnswer, A2aSendRequest } from './a2a-effect';
import { ManifestError } from './manifest';
import { modelToolName, parseToolRef } from './model-tools';
import { EffectFailure } from './run-signals';

const CARD = 'https://agents.example.com/a2a/echo/.well-known/agent-card.json';
const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

/** Answers every send at once from a script: a value, or an EffectFailure to throw. Counts the sends. */
function scripted(dataDir: string, answer: (request: A2aSendRequest) => A2aAnswer | EffectFailure) {
  const calls: A2aSendRequest[] = [];
  const client: A2aClient = {
    pins: new A2aPins(dataDir),
    destinationOf: (card) => new URL(card).origin,
    async send(request) {
      calls.push(request);
      const result = answer(request);
      if (result instanceof EffectFailure) throw result;
      return result;
    },
    follow: () => Promise.reject(new Error('a scripted answer is never followed')),
    cancel: async () => 'not cancelled',
    call: () => Promise.reject(new Error('a run sends and follows; it never calls')),
    close: () => undefined,
  };
  return { client, calls };
}

const ok = (value: unknown): A2aAnswer => ({ taskId: 't1', artifacts: [{ artifactId: 'a1', parts: [value] }], value, card: { verified: false } });

function stepAgent(approve = false) {
  return agent({
    name: 'asker',
    input: { type: 'object', properties: { q: { type: 'string' } } },
    steps: [{ as: 'remote', a2a: { card: CARD, skill: 'echo', message: 'please answer {{input.q}}' } }, { as: 'more', input: { prompt: 'more?' } }, { output: { remote: '{{steps.remote.value}}', more: '{{steps.more}}' } }],
    grants: [{ kind: 'a2a', name: CARD, approve }],
  });
}

describe('the a2a effect', () => {
  it('refuses at load a step or a model tool whose a2a grant is absent, and a card that is not an http(s) URL', () => {
    expect(() => agent({ name: 'x', steps: [{ a2a: { card: CARD, message: 'hi' } }] })).toThrow(ManifestError);
    expect(() => agent({ name: 'x', steps: [{ a2a: { card: CARD, message: 'hi' } }] })).toThrow(`needs the grant a2a:${CARD}`);
    expect(() => agent({ name: 'x', steps: [{ model: { provider: 'local', prompt: 'p', tools: [`a2a:${CARD}`] } }], grants: [{ kind: 'model', name: 'local' }] })).toThrow(`tool a2a:${CARD} needs the grant a2a:${CARD}`);
    expect(() => agent({ name: 'x', steps: [{ a2a: { card: 'file:///etc/passwd', message: 'hi' } }], grants: [] })).toThrow('an A2A card as its http(s) URL');
    const tool = parseToolRef(`a2a:${CARD}`);
    expect(tool).toEqual({ kind: 'a2a', ref: `a2a:${CARD}`, card: CARD });
    expect(modelToolName(tool)).toMatch(/^a2a__agents_example_com__[0-9a-f]{12}$/);
    expect(modelToolName(parseToolRef(`a2a:${CARD.replace('echo', 'other')}`))).not.toBe(modelToolName(tool));
  });

  it('journals one a2a effect (text message, skill, destination the origin) and replays it without calling again', async () => {
    const dataDir = tempDataDir('ap-a2a-effect-');
    const remote = scripted(dataDir, (r) => ok(`remote says: ${String(r.message)}`));
    const p = await testPlane({ dataDir, agents: [stepAgent()], a2a: remote.client });
    planes.push(p);
    const run = await call(p, 'runs.start', { agent: 'asker', input: { q: 'why' }, wait: true });
    expect(run.pending).toMatchObject({ reason: 'input' });
    expect(remote.calls).toEqual([{ card: CARD, skill: 'echo', message: 'please answer why', agent: 'asker' }]);
    const started = (await p.journal.readRun(run.runId, 1, 100)).find((r) => r.kind === 'EffectStarted');
    expect(started?.body).toMatchObject({ effect: 'a2a', name: 'echo', destination: 'https://agents.example.com', request: { card: CARD, skill: 'echo', message: 'please answer why' } });
    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash, value: { kind: 'input', input: 'no' } });
    await p.runtime.settled(run.runId);
    expect(await call(p, 'runs.get', { runId: run.runId })).toMatchObject({ outcome: 'succeeded', result: { remote: 'remote says: please answer why', more: 'no' } });
    expect(remote.calls).toHaveLength(1);
  });

  it('an approve grant suspends before anything is sent', async () => {
    const dataDir = tempDataDir('ap-a2a-approve-');
    const remote = scripted(dataDir, () => ok('x'));
    const p = await testPlane({ dataDir, agents: [stepAgent(true)], a2a: remote.client });
    planes.push(p);
    const run = await call(p, 'runs.start', { agent: 'asker', input: { q: 'why' }, wait: true });
    expect(run.pending).toMatchObject({ reason: 'approval' });
    expect(remote.calls).toEqual([]);
  });

  it.each([
    ['DidNotHappen', 'failed'],
    ['Landed', 'failed'],
    ['InDoubt', 'waiting'],
  ] as const)('a %s failure is journaled as such (the run %s)', async (disposition, status) => {
    const dataDir = tempDataDir('ap-a2a-fail-');
    const remote = scripted(dataDir, () => new EffectFailure('A2aRemoteError', 'what went wrong', disposition));
    const p = await testPlane({ dataDir, agents: [stepAgent()], a2a: remote.client });
    planes.push(p);
    const run = await call(p, 'runs.start', { agent: 'asker', input: { q: 'why' }, wait: true });
    const failed = (await p.journal.readRun(run.runId, 1, 100)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition, error: { code: 'A2aRemoteError', message: 'what went wrong' } });
    if (status === 'waiting') expect(run.pending).toMatchObject({ reason: 'recovery' });
    else expect(run.outcome).toBe('failed');
  });

  it('a grant with signed: true reaches the caller as requireSigned, for the step and the model tool alike; a bad value is refused at load', async () => {
    const dataDir = tempDataDir('ap-a2a-signed-');
    const remote = scripted(dataDir, () => ok('x'));
    const other = CARD.replace('echo', 'other');
    const tool = modelToolName(parseToolRef(`a2a:${CARD}`));
    const strict = agent({
      name: 'strict',
      steps: [{ a2a: { card: CARD, message: 'step' } }, { a2a: { card: other, message: 'lenient' } }, { model: { provider: 'scripted', prompt: `Work. call ${tool} {"q":"tool"}`, tools: [`a2a:${CARD}`] } }],
      grants: [{ kind: 'model', name: 'scripted' }, { kind: 'a2a', name: CARD, signed: true }, { kind: 'a2a', name: other }],
    });
    const p = await testPlane({ dataDir, agents: [strict], providers: agentToolProviders(), a2a: remote.client });
    planes.push(p);
    expect((await call(p, 'runs.start', { agent: 'strict', input: {}, wait: true })).outcome).toBe('succeeded');
    expect(remote.calls).toEqual([
      { card: CARD, message: 'step', requireSigned: true, agent: 'strict' },
      { card: other, message: 'lenient', agent: 'strict' },
      { card: CARD, message: { q: 'tool' }, requireSigned: true, agent: 'strict' },
    ]);
    // The option is authority, not what is sent: the effect's request (and key) does not hold it.
    const run = (await call(p, 'runs.list', {})).runs[0]!;
    const started = (await p.journal.readRun(run.runId, 1, 100)).filter((r) => r.kind === 'EffectStarted' && (r.body as { effect: string }).effect === 'a2a');
    expect(started.map((r) => (r.body as { request: unknown }).request)).toEqual([{ card: CARD, message: 'step' }, { card: other, message: 'lenient' }, { card: CARD, message: { q: 'tool' } }]);
    expect(() => agent({ name: 'x', steps: [{ a2a: { card: CARD, message: 'hi' } }], grants: [{ kind: 'a2a', name: CARD, signed: 'yes' }] })).toThrow(/grants\.0\.signed/);
  });

  it('a run cancelled between the send and the follow passes the cancel on to the accepted task, and never follows it', async () => {
    const dataDir = tempDataDir('ap-a2a-cancel-gap-');
    const cancelled: string[] = [];
    let followed = 0;
    const plane: { current?: Plane } = {};
    const client: A2aClient = {
      pins: new A2aPins(dataDir),
      destinationOf: (card) => new URL(card).origin,
      async send(_request, at) {
        // The person cancels while SendMessage is answered: the next boundary is the follow's.
        // (runs.cancel resolves when the run has settled, so it is not awaited here.)
        const cancelling = call(plane.current!, 'runs.cancel', { runId: at.runId });
        void cancelling.catch(() => undefined);
        for (let i = 0; i < 100 && !(await plane.current!.journal.readRun(at.runId, 1, 100)).some((r) => r.kind === 'Cancelled'); i++) await new Promise((r) => setTimeout(r, 10));
        return { taskId: 't-accepted', card: { verified: false }, following: { url: 'https://agents.example.com/rpc', streaming: false } };
      },
      follow: async () => {
        followed += 1;
        throw new Error('never followed');
      },
      cancel: async (task) => (cancelled.push(task.taskId), 'CancelTask answered TASK_STATE_CANCELED'),
      call: () => Promise.reject(new Error('a run sends and follows; it never calls')),
      close: () => undefined,
    };
    const p = (plane.current = await testPlane({ dataDir, agents: [stepAgent()], a2a: client }));
    planes.push(p);
    const run = await call(p, 'runs.start', { agent: 'asker', input: { q: 'why' }, wait: true });
    expect(run.outcome).toBe('cancelled');
    expect(cancelled).toEqual(['t-accepted']);
    expect(followed).toBe(0);
  });

  it('a model calls the remote agent as the tool a2a:<card>: its arguments are the data part', async () => {
    const dataDir = tempDataDir('ap-a2a-tool-');
    const remote = scripted(dataDir, (r) => ok({ got: r.message }));
    const tool = modelToolName(parseToolRef(`a2a:${CARD}`));
    const modeller = agent({
      name: 'modeller',
      steps: [{ as: 'answer', model: { provider: 'scripted', prompt: `Work. call ${tool} {"q":"hello"}`, tools: [`a2a:${CARD}`] } }, { output: '{{steps.answer.text}}' }],
      grants: [{ kind: 'model', name: 'scripted' }, { kind: 'a2a', name: CARD }],
    });
    const p = await testPlane({ dataDir, agents: [modeller], providers: agentToolProviders(), a2a: remote.client });
    planes.push(p);
    const run = await call(p, 'runs.start', { agent: 'modeller', input: {}, wait: true });
    expect(run.outcome).toBe('succeeded');
    expect(remote.calls).toEqual([{ card: CARD, message: { q: 'hello' }, agent: 'modeller' }]);
    expect(run.result).toContain('"got":{"q":"hello"}');
  });
});
