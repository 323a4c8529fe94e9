/**
 * Following a remote task for longer than one request may take (a2a-client.ts): the official
 * @a2a-js/sdk 1.3 server (tests/doubles/sdk-a2a-remote.ts: DefaultRequestHandler +
 * JsonRpcTransportHandler on node:http, 127.0.0.1) with a slow executor, our client through
 * netguard with the origin allowed. The per-request deadline, the idle bound and the overall
 * bound are injected small so the test is fast; the shapes are the real ones (a task quiet for longer than the deadline, a subscription
 * cut by the far side, a task that never ends).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startSdkRemote, type SdkRemote } from '../../../../tests/doubles/sdk-a2a-remote';
import { createNetguard, staticAllowList, type Netguard } from '../../../net/netguard';
import { EffectFailure } from '../../../runtime/run-signals';
import { useTempFolders } from '../../../../tests/helpers/temp-folders';
import { createA2aClient, type A2aClientOptions } from './a2a-client';

const tempDir = useTempFolders('agentplane-a2a-follow-');
const remotes: SdkRemote[] = [];
const guards: Netguard[] = [];
afterEach(async () => {
  for (const g of guards.splice(0)) await g.close();
  for (const r of remotes.splice(0)) await r.close();
});

/** A remote agent whose task works `workMs` in silence, then completes with one data artifact. */
async function slowRemote(options: { workMs: number; cutSubscriptionsAfterMs?: number }) {
  const remote = await startSdkRemote({ ...options, streaming: true, name: 'slow', description: 'works for a while', skill: 'slow', answer: () => ({ done: true }) });
  remotes.push(remote);
  return remote;
}

function client(origin: string, extra: Partial<A2aClientOptions>) {
  const netguard = createNetguard({ allow: staticAllowList([origin]) });
  guards.push(netguard);
  return createA2aClient({ dataDir: tempDir(), dispatcher: netguard.dispatcher, poll: { initialMs: 20, maxMs: 100 }, requestDeadlineMs: 200, ...extra });
}

const at = { runId: 'run-00000000000000000000', step: 1 };

describe('following a remote task longer than one request deadline', () => {
  it('a task silent for several request deadlines is followed by its subscription to the end', async () => {
    const remote = await slowRemote({ workMs: 1_200 });
    const a2a = client(remote.origin, {});
    const answer = await a2a.call({ card: remote.cardUrl, skill: 'slow', message: { go: true } }, at, new AbortController().signal);
    expect(answer.value).toEqual({ done: true });
    expect(remote.methods.filter((m) => m === 'SubscribeToTask')).toHaveLength(1);
    expect(remote.methods).not.toContain('CancelTask');
  });

  it('a subscription cut by the far side is opened again (it opens with the task as it stands) until the task ends', async () => {
    const remote = await slowRemote({ workMs: 1_500, cutSubscriptionsAfterMs: 300 });
    const a2a = client(remote.origin, {});
    const answer = await a2a.call({ card: remote.cardUrl, skill: 'slow', message: { go: true } }, at, new AbortController().signal);
    expect(answer.value).toEqual({ done: true });
    // Several cuts, each followed by a new subscription; never a fallback to polling needed.
    expect(remote.methods.filter((m) => m === 'SubscribeToTask').length).toBeGreaterThanOrEqual(3);
  });

  it('a quiet subscription is opened again after streamIdleMs (a half-open connection never errors)', async () => {
    const remote = await slowRemote({ workMs: 1_000 });
    const a2a = client(remote.origin, { streamIdleMs: 250 });
    const answer = await a2a.call({ card: remote.cardUrl, skill: 'slow', message: { go: true } }, at, new AbortController().signal);
    expect(answer.value).toEqual({ done: true });
    expect(remote.methods.filter((m) => m === 'SubscribeToTask').length).toBeGreaterThanOrEqual(3);
  });

  it('past the overall bound the effect is in doubt naming the task, and the remote task is not cancelled', async () => {
    const remote = await slowRemote({ workMs: 5_000, cutSubscriptionsAfterMs: 250 });
    const a2a = client(remote.origin, { followMaxMs: 900 });
    const failure = await a2a.call({ card: remote.cardUrl, skill: 'slow', message: { go: true } }, at, new AbortController().signal).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(EffectFailure);
    expect(failure).toMatchObject({ code: 'A2aFollowExpired', disposition: 'InDoubt' });
    expect((failure as Error).message).toMatch(/remote task .+ had not ended after 900 ms/);
    expect(remote.methods).not.toContain('CancelTask');
  });
});
