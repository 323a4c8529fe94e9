/**
 * The plane's A2A client against a remote's admission refusals, and the caller-context extension
 * on its calls out (docs/GOVERNED-RUNTIME.md, "A2A, being called"). The remote is the SDK test
 * remote (tests/doubles/sdk-a2a-remote.ts) on 127.0.0.1, reached through a real plane.
 *
 * - This plane's marked refusals (the code AND its ErrorInfo in the agentplane.io domain) are
 *   refusals before anything happened: DidNotHappen, each under its own failure code, so the
 *   caller knows to wait (quota), stop (halted) or go elsewhere (draining). A quota refusal is
 *   waited out: the same message is sent again after a bounded backoff, and only when every
 *   attempt is refused does the send fail.
 * - A bare -32029 (no ErrorInfo, or another domain) is a foreign server's code meaning something
 *   else: an unknown fault, in doubt as any unrecognised error of a SendMessage.
 */
import { describe, expect, it } from 'vitest';
import { useA2aTeardown } from '../../../../tests/support/a2a-support';
import { startSdkRemote, type SdkRemoteOptions } from '../../../../tests/doubles/sdk-a2a-remote';
import { agent, call, testPlane } from '../../../../tests/support/runtime-support';
import { tempDataDir } from '../../../../tests/support/journal-support';
import type { Plane } from '../../../plane/plane';
import { createNetguard, staticAllowList } from '../../../net/netguard';
import { createA2aClient } from './a2a-client';
import { CALLER_CONTEXT_EXTENSION } from './a2a-caller-context';
import { ERROR_INFO_TYPE, errorDataOf, PLANE_ERROR_DOMAIN, planeRefusal } from '../a2a-wire';

const { planes, remotes, guards } = useA2aTeardown();
/** A quota refusal is tried again twice here, after 10-20 ms (the defaults wait seconds). */
const BUSY = { retries: 2, initialMs: 10, maxMs: 20 };

function caller(card: string) {
  return agent({
    name: 'caller',
    input: { type: 'object', properties: { text: { type: 'string' } } },
    steps: [{ as: 'remote', a2a: { card, skill: 'echo', message: { said: '{{input.text}}' } } }, { output: '{{steps.remote.value}}' }],
    grants: [{ kind: 'a2a', name: card }],
  });
}

async function remoteAndPlane(options: SdkRemoteOptions): Promise<{ plane: Plane; remote: Awaited<ReturnType<typeof startSdkRemote>> }> {
  const remote = await startSdkRemote({ behaviour: 'complete', ...options });
  remotes.push(remote);
  const dataDir = tempDataDir('ap-a2a-pressure-');
  const netguard = createNetguard({ allow: staticAllowList([remote.origin]) });
  guards.push(netguard);
  const client = createA2aClient({ dataDir, dispatcher: netguard.dispatcher, poll: { initialMs: 50, maxMs: 200 }, busy: BUSY });
  const plane = await testPlane({ dataDir, agents: [caller(remote.cardUrl)], a2a: client });
  planes.push(plane);
  return { plane, remote };
}

async function sendFailure(plane: Plane, runId: string) {
  const records = await plane.journal.readRun(runId, 1, 1_000);
  return records.find((r) => r.kind === 'EffectFailed')?.body as { disposition: string; error: { code: string; message: string } } | undefined;
}

/** A marked refusal as this plane's server writes it. */
const marked = (kind: 'quota' | 'halted' | 'draining') => {
  const error = planeRefusal(kind);
  return { code: error.code, message: error.message, data: errorDataOf(error) };
};

describe("the plane's A2A client and a remote's admission refusals", () => {
  const cases = [
    ['quota', 'A2aRemoteBusy'],
    ['halted', 'A2aRemoteHalted'],
    ['draining', 'A2aRemoteDraining'],
  ] as const;
  for (const [kind, code] of cases) {
    const sends = kind === 'quota' ? BUSY.retries + 1 : 1;
    it(`a marked ${kind} refusal, every time, fails the send as DidNotHappen (${code}), sent ${sends} time(s)`, async () => {
      const { plane, remote } = await remoteAndPlane({ refuseSend: marked(kind) });
      const run = await call(plane, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
      expect(run).toMatchObject({ status: 'sealed', outcome: 'failed' });
      const failed = await sendFailure(plane, run.runId);
      expect(failed).toMatchObject({ disposition: 'DidNotHappen', error: { code } });
      expect(remote.methods.filter((m) => m === 'SendMessage')).toHaveLength(sends);
      if (kind === 'quota') expect(failed?.error.message).toContain(`refused SendMessage ${sends} times`);
    });
  }

  it('a quota refusal is waited out: the same message is sent again, and the run goes on once the remote admits it', async () => {
    const { plane, remote } = await remoteAndPlane({ refuseSend: marked('quota'), refuseSendTimes: 2 });
    const run = await call(plane, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    expect(remote.methods.filter((m) => m === 'SendMessage')).toHaveLength(3);
    // One message, refused twice and then admitted: the same messageId each time.
    expect(remote.refusedIds).toHaveLength(2);
    expect(new Set(remote.refusedIds).size).toBe(1);
    expect(remote.sends.map((sent) => sent.messageId)).toEqual([remote.refusedIds[0]]);
    expect(await sendFailure(plane, run.runId)).toBeUndefined();
  });

  it('a bare -32029, or one under another domain, is an unknown fault: in doubt, for a person', async () => {
    const foreign = [
      { code: -32029, message: 'rate limited' },
      { code: -32029, message: 'rate limited', data: [{ '@type': ERROR_INFO_TYPE, reason: 'QUOTA_EXHAUSTED', domain: 'example.com', metadata: {} }] },
      { code: -32030, message: 'something of theirs', data: [{ '@type': ERROR_INFO_TYPE, reason: 'INTERNAL', domain: PLANE_ERROR_DOMAIN, metadata: {} }] },
    ];
    for (const refuseSend of foreign) {
      const { plane } = await remoteAndPlane({ refuseSend });
      const run = await call(plane, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
      expect(run.pending, JSON.stringify(refuseSend)).toMatchObject({ reason: 'recovery' });
      const failed = await sendFailure(plane, run.runId);
      expect(failed).toMatchObject({ disposition: 'InDoubt', error: { code: 'A2aRemoteError' } });
      expect(failed?.error.message).toContain(`${refuseSend.code}`);
    }
  });
});

describe('the caller-context extension on calls out', () => {
  it("the message names the extension in its extensions and the A2A-Extensions header, and carries the run's own account of itself", async () => {
    const { plane, remote } = await remoteAndPlane({});
    const run = await call(plane, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
    expect(run.outcome).toBe('succeeded');
    expect(remote.sends).toHaveLength(1);
    const sent = remote.sends[0]!;
    expect(CALLER_CONTEXT_EXTENSION).toBe('https://agentplane.io/a2a/ext/caller-context/v1');
    expect(sent.headers['a2a-extensions']).toBe(CALLER_CONTEXT_EXTENSION);
    expect(sent.extensions).toEqual([CALLER_CONTEXT_EXTENSION]);
    const metadata = sent.metadata as Record<string, unknown>;
    expect(metadata.skill).toBe('echo');
    // The sender's account of its own request: its run, agent and step. No chain, no credential.
    expect(metadata[CALLER_CONTEXT_EXTENSION]).toEqual({ caller: { runId: run.runId, agent: 'caller', step: 0 } });
    expect(JSON.stringify(sent)).not.toMatch(/chain|user:local|Bearer/);
  });
});
