/**
 * `a2a.remotes` through a real plane whose agent's `a2a` step calls the official @a2a-js/sdk
 * server on 127.0.0.1 (tests/doubles/sdk-a2a-remote.ts) (allowed explicitly through netguard): the remote is listed with the name
 * and description its card gave, its verification state from the pins file (unsigned, verified,
 * a changed key pending until a2a.pins.accept), and its tasks linked to the local run and step,
 * newest first, a failed one with its error. A protocol caller and a bad limit are refused.
 */
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useA2aTeardown } from '../../tests/support/a2a-support';
import type { JWK } from 'jose';
import { startSdkRemote, type SdkRemote } from '../../tests/doubles/sdk-a2a-remote';
import { agent, call, failure, testPlane } from '../../tests/support/runtime-support';
import { tempDataDir } from '../../tests/support/journal-support';
import type { Plane } from './plane';
import { keyIdOf, type PlaneKey } from '../journal/plane-key';
import { createNetguard, staticAllowList } from '../net/netguard';
import { createA2aClient } from '../protocols/a2a/client/a2a-client';

const { planes, remotes, guards } = useA2aTeardown();

/** The SDK test remote: its one agent answers `{echoed}` at once, or fails when the input says so; its card signed by `key` (changeable). */
async function startRemote(): Promise<SdkRemote> {
  const remote = await startSdkRemote({ name: 'Echo agent', behaviourFor: (input) => ((input as { said?: unknown } | null)?.said === 'fail' ? 'fail' : undefined), answer: (input) => ({ echoed: input }) });
  remotes.push(remote);
  return remote;
}

async function ed25519(): Promise<PlaneKey> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
  return { privateKey, publicKey, publicJwk, keyId: await keyIdOf(publicJwk) };
}

async function plane(card: string): Promise<Plane> {
  const dataDir = tempDataDir('ap-a2a-remotes-');
  const netguard = createNetguard({ allow: staticAllowList([new URL(card).origin]) });
  guards.push(netguard);
  const client = createA2aClient({ dataDir, dispatcher: netguard.dispatcher, poll: { initialMs: 20, maxMs: 100 } });
  const caller = agent({
    name: 'caller',
    input: { type: 'object', properties: { text: { type: 'string' } } },
    steps: [{ as: 'remote', a2a: { card, skill: 'echo', message: { said: '{{input.text}}' } } }, { output: '{{steps.remote.value}}' }],
    grants: [{ kind: 'a2a', name: card }],
  });
  const p = await testPlane({ dataDir, agents: [caller], a2a: client });
  planes.push(p);
  return p;
}

describe('a2a.remotes', () => {
  it('lists nothing before any run called out', async () => {
    const remote = await startRemote();
    const p = await plane(remote.cardUrl);
    expect(await call(p, 'a2a.remotes', {})).toEqual({ remotes: [] });
  });

  it('lists a remote with its card’s name, its standing and its tasks, newest first, each linked to the local run and step', async () => {
    const remote = await startRemote();
    const p = await plane(remote.cardUrl);
    const first = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
    expect(first.outcome).toBe('succeeded');
    const second = await call(p, 'runs.start', { agent: 'caller', input: { text: 'fail' }, wait: true });
    expect(second.outcome).toBe('failed');

    const { remotes } = await call(p, 'a2a.remotes', {});
    expect(remotes).toHaveLength(1);
    const [listed] = remotes;
    expect(listed).toMatchObject({ card: remote.cardUrl, origin: remote.origin, name: 'Echo agent', description: 'echoes its input', verification: 'unsigned' });
    expect(listed!.keyId).toBeUndefined();
    expect(listed!.tasks.map((t) => [t.runId, t.step, t.state, t.skill, t.agent])).toEqual([
      [second.runId, 0, 'failed', 'echo', 'caller'],
      [first.runId, 0, 'completed', 'echo', 'caller'],
    ]);
    const [failed, completed] = listed!.tasks;
    expect(completed!.taskId).toMatch(/\S/);
    expect(failed).toMatchObject({ error: { code: 'RemoteTaskFailed' }, disposition: 'Landed' });
    // The failure named its remote task; the list reads it back.
    expect(failed!.taskId).toMatch(/\S/);
    expect(failed!.taskId).not.toBe(completed!.taskId);
    for (const task of listed!.tasks) expect(Date.parse(task.at)).not.toBeNaN();
    // Bounded: a limit of one run reads only the newest.
    expect((await call(p, 'a2a.remotes', { limit: 1 })).remotes[0]!.tasks.map((t) => t.runId)).toEqual([second.runId]);
  });

  it('lists a task still being followed as in progress with its id, then as its follow ended (a cancel here)', async () => {
    const remote = await startSdkRemote({ behaviour: 'forever' });
    remotes.push(remote);
    const p = await plane(remote.cardUrl);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' } });
    for (let i = 0; i < 100 && !remote.methods.includes('GetTask'); i++) await new Promise((r) => setTimeout(r, 20));
    const [following] = (await call(p, 'a2a.remotes', {})).remotes[0]!.tasks;
    // One task for the send and its follow together, named by the id the send journaled.
    expect((await call(p, 'a2a.remotes', {})).remotes[0]!.tasks).toHaveLength(1);
    expect(following).toMatchObject({ runId: run.runId, step: 0, state: 'in-progress', taskId: expect.stringMatching(/\S/) });
    await call(p, 'runs.cancel', { runId: run.runId });
    const [ended] = (await call(p, 'a2a.remotes', {})).remotes[0]!.tasks;
    expect(ended).toMatchObject({ runId: run.runId, state: 'failed', taskId: following!.taskId, disposition: 'Landed', error: { code: 'RemoteTaskCancelled' } });
    expect(remote.cancels).toEqual([following!.taskId]);
  });

  it('shows a signed card as verified, a changed key as pending until a person accepts it', async () => {
    const remote = await startRemote();
    const p = await plane(remote.cardUrl);
    const key = await ed25519();
    await remote.sign(key);
    expect((await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true })).outcome).toBe('succeeded');
    expect((await call(p, 'a2a.remotes', {})).remotes[0]).toMatchObject({ verification: 'verified', keyId: key.keyId });

    const next = await ed25519();
    await remote.sign(next);
    expect((await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true })).outcome).toBe('failed');
    const changed = (await call(p, 'a2a.remotes', {})).remotes[0]!;
    expect(changed).toMatchObject({ verification: 'key-changed', keyId: key.keyId, pendingKeyId: next.keyId });
    // Refused before anything was sent: no remote task, nothing happened.
    expect(changed.tasks[0]).toMatchObject({ state: 'failed', disposition: 'DidNotHappen', error: { code: 'A2aPinnedKeyChanged' } });
    expect(changed.tasks[0]!.taskId).toBeUndefined();

    await call(p, 'a2a.pins.accept', { origin: remote.origin });
    expect((await call(p, 'a2a.remotes', {})).remotes[0]).toMatchObject({ verification: 'verified', keyId: next.keyId });
    expect((await call(p, 'a2a.remotes', {})).remotes[0]!.pendingKeyId).toBeUndefined();
  });

  it('is a person’s command: a protocol caller and a bad limit are refused, naming why', async () => {
    const remote = await startRemote();
    const p = await plane(remote.cardUrl);
    expect(await p.dispatch('a2a.remotes', {}, { transport: 'local', caller: { principal: 'mcp:local', via: 'mcp' } })).toMatchObject({ ok: false, error: { code: 'AP_FORBIDDEN', message: expect.stringMatching(/only a person at this plane can list the remote A2A agents/) } });
    expect((await failure(p, 'a2a.remotes', { limit: 0 })).message).toMatch(/limit/);
    expect((await failure(p, 'a2a.remotes', { limit: 1001 } as never)).message).toMatch(/limit/);
  });
});
