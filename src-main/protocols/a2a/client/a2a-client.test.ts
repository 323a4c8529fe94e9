/**
 * Our A2A client against the official @a2a-js/sdk 1.3 server (tests/doubles/sdk-a2a-remote.ts:
 * its DefaultRequestHandler and JsonRpcTransportHandler with a scripted AgentExecutor, served by
 * node:http on 127.0.0.1), through a real plane: an agent whose `a2a` step calls it completes
 * with the remote artifact (a send effect, then a follow effect keyed by the remote task); polled
 * and streamed; a cancelled run cancels the remote task; a closed plane's follow is re-attached
 * by the next plane; a grant with `signed: true` refuses an unsigned card; a large message and a
 * large answer are journaled as digest and size; bad cards, a changed key, oversized answers and
 * a redirect are refused, each naming why.
 *
 * Signatures: cards are signed with card-signature.ts signAgentCard (Ed25519, the key in the
 * protected header) under keys made here, and verified by the client's default verifier.
 */
import { describe, expect, it } from 'vitest';
import { useA2aTeardown } from '../../../../tests/support/a2a-support';
import { createHash, generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { JWK } from 'jose';
import { startSdkRemote, type SdkRemote, type SdkRemoteOptions } from '../../../../tests/doubles/sdk-a2a-remote';
import { agent, call, testPlane } from '../../../../tests/support/runtime-support';
import { tempDataDir } from '../../../../tests/support/journal-support';
import type { Plane } from '../../../plane/plane';
import { keyIdOf, type PlaneKey } from '../../../journal/plane-key';
import { createNetguard, staticAllowList } from '../../../net/netguard';
import { createA2aClient } from './a2a-client';
import type { LoadedAgent } from '../../../runtime/manifest';
import { LARGE_VALUE_BYTES } from '../../../runtime/large-values';
import { journalPath } from '../../../journal/sqlite-store';

const { planes, remotes, guards } = useA2aTeardown();

type Remote = SdkRemote;
type Behaviour = 'echo' | 'slow' | 'forever' | 'fail' | 'message';

/** The SDK test remote (tests/doubles/sdk-a2a-remote.ts); `slow` and `fail` work 300 ms first. */
async function startRemote(options: Omit<SdkRemoteOptions, 'behaviour'> & { behaviour: Behaviour }): Promise<Remote> {
  const { behaviour, ...rest } = options;
  const remote = await startSdkRemote({ ...rest, behaviour: behaviour === 'echo' || behaviour === 'slow' ? 'complete' : behaviour, ...(behaviour === 'slow' || behaviour === 'fail' ? { workMs: 300 } : {}) });
  remotes.push(remote);
  return remote;
}

async function ed25519(): Promise<PlaneKey> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
  return { privateKey, publicKey, publicJwk, keyId: await keyIdOf(publicJwk) };
}

function caller(card: string, grant: { signed?: boolean } = {}) {
  return agent({
    name: 'caller',
    input: { type: 'object', properties: { text: { type: 'string' } } },
    steps: [{ as: 'remote', a2a: { card, skill: 'echo', message: { said: '{{input.text}}' } } }, { output: '{{steps.remote.value}}' }],
    grants: [{ kind: 'a2a', name: card, ...grant }],
  });
}

async function plane(card: string, dataDir = tempDataDir('ap-a2a-client-'), extra: { cardMaxBytes?: number; answerMaxBytes?: number; agents?: LoadedAgent[] } = {}) {
  // netguard as the plane has it, with the test server's origin allowed explicitly.
  const netguard = createNetguard({ allow: staticAllowList([new URL(card).origin]) });
  guards.push(netguard);
  const { agents, ...limits } = extra;
  const client = createA2aClient({ dataDir, dispatcher: netguard.dispatcher, poll: { initialMs: 50, maxMs: 200 }, ...limits });
  const p = await testPlane({ dataDir, agents: agents ?? [caller(card)], a2a: client });
  planes.push(p);
  return p;
}

async function a2aRecords(p: Plane, runId: string) {
  const records = await p.journal.readRun(runId, 1, 1_000);
  return records.filter((r) => (r.kind === 'EffectStarted' && (r.body as { effect: string }).effect === 'a2a') || r.kind === 'EffectDone' || r.kind === 'EffectFailed');
}

describe('an agent calling a remote A2A agent (the @a2a-js/sdk server)', () => {
  for (const streaming of [false, true]) {
    it(`completes with the remote artifact, the task ${streaming ? 'streamed (SubscribeToTask)' : 'polled (GetTask)'}`, async () => {
      const remote = await startRemote({ streaming, behaviour: 'slow' });
      const p = await plane(remote.cardUrl);
      const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
      expect(run.outcome).toBe('succeeded');
      expect(run.result).toEqual({ echoed: { said: 'hi' }, skill: 'echo' });
      // Two effects: the send, whose result journals the accepted task and where it lives, and
      // the follow, keyed by that task's id, whose result is the answer.
      const [started, sent, following, done, ...rest] = await a2aRecords(p, run.runId);
      expect(rest).toEqual([]);
      expect(started).toMatchObject({ body: { effect: 'a2a', name: 'echo', destination: remote.origin, request: { card: remote.cardUrl, skill: 'echo', message: { said: 'hi' } } } });
      const taskId = (sent?.body as { result: { taskId: string } }).result.taskId;
      expect(sent).toMatchObject({ kind: 'EffectDone', body: { provenance: `a2a:${remote.origin}`, result: { taskId: expect.stringMatching(/\S/), card: { verified: false }, following: { url: `${remote.origin}/rpc`, streaming } } } });
      expect(following).toMatchObject({ kind: 'EffectStarted', body: { effect: 'a2a', name: `follow:${taskId}`, destination: remote.origin, request: { card: remote.cardUrl, follow: taskId } } });
      expect(done).toMatchObject({ kind: 'EffectDone', body: { provenance: `a2a:${remote.origin}`, result: { taskId, artifacts: [{ artifactId: 'a1', name: 'answer' }] } } });
      expect(remote.methods.slice(0, 2)).toEqual(['GET card', 'SendMessage']);
      expect(remote.methods).toContain(streaming ? 'SubscribeToTask' : 'GetTask');
      if (!streaming) expect(remote.methods).not.toContain('SubscribeToTask');
    });
  }

  it('a peer answering with a message (no task): its text part is the value', async () => {
    const remote = await startRemote({ streaming: false, behaviour: 'message' });
    const p = await plane(remote.cardUrl);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
    expect(run).toMatchObject({ outcome: 'succeeded', result: 'hello, {"said":"hi"}' });
    expect(remote.methods).toEqual(['GET card', 'SendMessage']);
  });

  it('a remote task that failed is a Landed failure naming its state and message', async () => {
    const remote = await startRemote({ streaming: false, behaviour: 'fail' });
    const p = await plane(remote.cardUrl);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
    expect(run.outcome).toBe('failed');
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'Landed', error: { code: 'RemoteTaskFailed' } });
    expect(JSON.stringify(failed?.body)).toContain('TASK_STATE_FAILED: the remote agent gave up');
  });

  for (const streaming of [true, false]) {
  it(`a run cancelled while following the remote task (${streaming ? 'streamed' : 'polled'}) cancels it there (CancelTask observed), recorded`, async () => {
    const remote = await startRemote({ streaming, behaviour: 'forever' });
    const p = await plane(remote.cardUrl);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' } });
    const following = streaming ? 'SubscribeToTask' : 'GetTask';
    for (let i = 0; i < 100 && !remote.methods.includes(following); i++) await new Promise((r) => setTimeout(r, 20));
    expect(remote.methods).toContain(following);
    await call(p, 'runs.cancel', { runId: run.runId });
    await p.runtime.settled(run.runId);
    const finished = await call(p, 'runs.get', { runId: run.runId });
    expect(finished.outcome).toBe('cancelled');
    expect(remote.cancels).toHaveLength(1);
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'Landed', error: { code: 'RemoteTaskCancelled' } });
    expect(JSON.stringify(failed?.body)).toContain('CancelTask answered TASK_STATE_CANCELED');
  });
  }

  it('a signed card is verified and its key pinned; a changed key is refused until a2a.pins.accept, then works', async () => {
    const dataDir = tempDataDir('ap-a2a-pins-');
    const firstKey = await ed25519();
    const newKey = await ed25519();
    const first = await startRemote({ streaming: false, behaviour: 'echo', sign: firstKey });
    const p = await plane(first.cardUrl, dataDir);
    const ok = await call(p, 'runs.start', { agent: 'caller', input: { text: 'one' }, wait: true });
    expect(ok.outcome).toBe('succeeded');
    const done = (await a2aRecords(p, ok.runId)).find((r) => r.kind === 'EffectDone');
    expect(done?.body).toMatchObject({ result: { card: { verified: true, keyId: firstKey.keyId } } });
    expect((await call(p, 'a2a.pins.list', {})).pins).toEqual([expect.objectContaining({ origin: first.origin, keyId: firstKey.keyId })]);
    await p.close();
    planes.splice(0);

    // The same origin now signs with another key: a new server on the same port.
    const port = new URL(first.origin).port;
    await remotes.splice(0)[0]!.close();
    const rotated = await startRemote({ streaming: false, behaviour: 'echo', sign: newKey, port: Number(port) });
    const q = await plane(rotated.cardUrl, dataDir);
    const refused = await call(q, 'runs.start', { agent: 'caller', input: { text: 'two' }, wait: true });
    expect(refused.outcome).toBe('failed');
    const failed = (await a2aRecords(q, refused.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aPinnedKeyChanged' } });
    expect(rotated.methods).toEqual(['GET card']);
    expect((await call(q, 'a2a.pins.list', {})).pins[0]).toMatchObject({ keyId: firstKey.keyId, pending: { keyId: newKey.keyId } });
    expect(JSON.stringify(failed?.body)).toContain(`signed with key ${newKey.keyId}, but ${rotated.origin} is pinned to key ${firstKey.keyId}`);
    await call(q, 'a2a.pins.accept', { origin: rotated.origin });
    const again = await call(q, 'runs.start', { agent: 'caller', input: { text: 'three' }, wait: true });
    expect(again.outcome).toBe('succeeded');
    expect((await call(q, 'a2a.pins.list', {})).pins).toEqual([{ origin: rotated.origin, keyId: newKey.keyId, pinnedAt: expect.any(String) }]);
    await expect(call(q, 'a2a.pins.accept', { origin: rotated.origin })).rejects.toMatchObject({ code: 'AP_CONFLICT' });

    // The pinned origin now serves its card unsigned: a stripped signature is refused.
    await remotes.splice(0)[0]!.close();
    const stripped = await startRemote({ streaming: false, behaviour: 'echo', port: Number(port) });
    const downgraded = await call(q, 'runs.start', { agent: 'caller', input: { text: 'four' }, wait: true });
    const refusal = (await a2aRecords(q, downgraded.runId)).find((r) => r.kind === 'EffectFailed');
    expect(refusal?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aCardUnsigned' } });
    expect(stripped.methods).toEqual(['GET card']);
  });

  it('a grant with signed: true refuses an unsigned card before anything is sent, naming the card and the grant; a signed card goes through', async () => {
    const unsigned = await startRemote({ streaming: false, behaviour: 'echo' });
    const p = await plane(unsigned.cardUrl, undefined, { agents: [caller(unsigned.cardUrl, { signed: true })] });
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
    expect(run.outcome).toBe('failed');
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aCardUnsigned' } });
    expect(JSON.stringify(failed?.body)).toContain(`the card at ${unsigned.cardUrl} is unsigned, and the grant a2a:${unsigned.cardUrl} requires a signed card`);
    expect(unsigned.methods).toEqual(['GET card']);
    expect(unsigned.received).toEqual([]);

    // The same grant, the card now signed: verified (and pinned) as without the option.
    const key = await ed25519();
    await unsigned.sign(key);
    const ok = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
    expect(ok).toMatchObject({ outcome: 'succeeded', result: { echoed: { said: 'hi' }, skill: 'echo' } });
    const done = (await a2aRecords(p, ok.runId)).find((r) => r.kind === 'EffectDone');
    expect(done?.body).toMatchObject({ result: { card: { verified: true, keyId: key.keyId } } });
  });

  it('a message and an answer larger than LARGE_VALUE_BYTES: the remote receives the whole message, the journal holds digest and size only, and replay answers from the record', async () => {
    const marker = 'A2A-LARGE-MESSAGE-MARKER';
    const answerMarker = 'A2A-LARGE-ANSWER-MARKER';
    const blob = `${marker}${'m'.repeat(LARGE_VALUE_BYTES)}`;
    // One remote answers how much it received (small); the other answers with a large artifact.
    const remote = await startRemote({ streaming: false, behaviour: 'echo', answer: (input) => ({ received: JSON.stringify(input).length }) });
    const big = await startSdkRemote({ answer: () => ({ text: `${answerMarker}${'a'.repeat(LARGE_VALUE_BYTES)}` }) });
    remotes.push(big);
    // The message is in the manifest (reviewed configuration, never journaled), not the input
    // (which RunAdmitted journals whole); then a wait, so the run is executed again from its record.
    const sender = agent({
      name: 'sender',
      steps: [{ as: 'remote', a2a: { card: remote.cardUrl, skill: 'echo', message: { blob } } }, { as: 'answer', a2a: { card: big.cardUrl, message: 'short' } }, { as: 'more', input: { prompt: 'more?' } }, { output: { said: '{{steps.remote.value}}', answer: '{{steps.answer.value}}' } }],
      grants: [
        { kind: 'a2a', name: remote.cardUrl },
        { kind: 'a2a', name: big.cardUrl },
      ],
    });
    const netguard = createNetguard({ allow: staticAllowList([remote.origin, big.origin]) });
    guards.push(netguard);
    const dataDir = tempDataDir('ap-a2a-large-');
    const p = await testPlane({ dataDir, agents: [sender], a2a: createA2aClient({ dataDir, dispatcher: netguard.dispatcher, poll: { initialMs: 20, maxMs: 100 } }) });
    planes.push(p);
    const run = await call(p, 'runs.start', { agent: 'sender', input: {}, wait: true });
    expect(run.pending).toMatchObject({ reason: 'input' });
    expect(remote.received).toEqual([{ blob }]);

    const records = await p.journal.readRun(run.runId, 1, 100);
    const sends = records.filter((r) => r.kind === 'EffectStarted' && 'message' in (r.body as { request: object }).request).map((r) => r.body as { request: { message: unknown } });
    expect(sends.map((b) => b.request.message)).toEqual([{ large: { sha256: createHash('sha256').update(JSON.stringify({ blob })).digest('hex'), bytes: Buffer.byteLength(JSON.stringify({ blob })) } }, 'short']);
    type Answered = { result: { taskId?: string; artifacts: unknown[]; value: { large?: { bytes: number }; note?: string } | null } };
    const answered = records.filter((r) => r.kind === 'EffectDone').map((r) => r.body as Answered);
    const large = answered.filter((b) => b.result.value?.large !== undefined);
    expect(large).toHaveLength(1);
    expect(large[0]!.result).toMatchObject({ taskId: expect.any(String), artifacts: [], value: { large: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) }, note: expect.stringContaining(big.cardUrl) } });
    const largeBytes = large[0]!.result.value!.large!.bytes;
    expect(largeBytes).toBeGreaterThan(LARGE_VALUE_BYTES);
    // Neither value is in any byte of the journal, its write-ahead log included.
    for (const file of [journalPath(dataDir), `${journalPath(dataDir)}-wal`]) {
      if (!existsSync(file)) continue;
      const bytes = readFileSync(file);
      expect(bytes.includes(marker), file).toBe(false);
      expect(bytes.includes(answerMarker), file).toBe(false);
    }

    // Executed again from its record: the digest keys match, nothing is sent twice.
    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash, value: { kind: 'input', input: 'no' } });
    await p.runtime.settled(run.runId);
    const finished = await call(p, 'runs.get', { runId: run.runId });
    expect(finished).toMatchObject({ outcome: 'succeeded', result: { said: { received: JSON.stringify({ blob }).length }, answer: { large: { bytes: largeBytes } } } });
    expect(remote.methods.filter((m) => m === 'SendMessage')).toHaveLength(1);
    expect(big.methods.filter((m) => m === 'SendMessage')).toHaveLength(1);
  });

  it('a plane closing while a run follows a remote task parks the follow; the next plane re-attaches to the task by its id and completes without a person', async () => {
    const dataDir = tempDataDir('ap-a2a-close-');
    const remote = await startRemote({ streaming: false, behaviour: 'forever' });
    const first = await plane(remote.cardUrl, dataDir);
    const run = await call(first, 'runs.start', { agent: 'caller', input: { text: 'hi' } });
    for (let i = 0; i < 100 && !remote.methods.includes('GetTask'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(remote.methods).toContain('GetTask');
    await first.close();
    planes.splice(0);
    const polledBefore = remote.methods.filter((m) => m === 'GetTask').length;

    const second = await plane(remote.cardUrl, dataDir);
    // Following again (nothing in doubt, nobody asked), by the journaled task id.
    for (let i = 0; i < 100 && remote.methods.filter((m) => m === 'GetTask').length <= polledBefore; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await call(second, 'runs.get', { runId: run.runId })).pending).toBeFalsy();
    remote.release();
    await second.runtime.settled(run.runId);
    const finished = await call(second, 'runs.get', { runId: run.runId });
    expect(finished).toMatchObject({ outcome: 'succeeded', result: { echoed: { said: 'hi' }, skill: 'echo' } });
    expect(remote.methods.filter((m) => m === 'SendMessage')).toHaveLength(1);
    expect(remote.methods.filter((m) => m === 'GET card')).toHaveLength(1);
    const records = await a2aRecords(second, run.runId);
    expect(records.filter((r) => r.kind === 'EffectFailed')).toEqual([]);
    // The open follow was continued, not started again: one EffectStarted per step.
    expect(records.filter((r) => r.kind === 'EffectStarted').map((r) => (r.body as { name: string }).name)).toEqual(['echo', expect.stringMatching(/^follow:/)]);
  });

  it('a follow that loses the remote task is in doubt naming it; a person resolves it', async () => {
    const dataDir = tempDataDir('ap-a2a-lost-');
    const remote = await startRemote({ streaming: false, behaviour: 'forever' });
    const p = await plane(remote.cardUrl, dataDir);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' } });
    for (let i = 0; i < 100 && !remote.methods.includes('GetTask'); i++) await new Promise((r) => setTimeout(r, 20));
    // The remote goes away for good while being followed.
    await remotes.splice(0)[0]!.close();
    for (let i = 0; i < 200 && !(await call(p, 'runs.get', { runId: run.runId })).pending; i++) await new Promise((r) => setTimeout(r, 20));
    const waiting = await call(p, 'runs.get', { runId: run.runId });
    expect(waiting.pending).toMatchObject({ reason: 'recovery' });
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'InDoubt', error: { code: 'A2aFollowLost' } });
    expect(JSON.stringify(failed?.body)).toMatch(/remote task [0-9a-f-]{36} was created/);
    await call(p, 'approvals.decide', { runId: run.runId, waitId: waiting.pending!.waitId, decision: 'approve', subjectHash: waiting.pending!.subjectHash, value: { kind: 'recovery', resolution: 'landed', result: { value: 'checked by hand' } } });
    await p.runtime.settled(run.runId);
    expect(await call(p, 'runs.get', { runId: run.runId })).toMatchObject({ outcome: 'succeeded', result: 'checked by hand' });
    expect(remote.methods.filter((m) => m === 'SendMessage')).toHaveLength(1);
  });

  it('refuses, before sending, a wrongly signed card, an oversized card and a redirect, each naming why', async () => {
    const tampered = await startRemote({ streaming: false, behaviour: 'echo', sign: await ed25519(), tamper: true });
    const big = await startRemote({ streaming: false, behaviour: 'echo', cardPadding: 300_000 });
    const redirect = await startRemote({ streaming: false, behaviour: 'echo', redirectCard: true });
    const cases: [Remote, string, string][] = [
      [tampered, 'A2aCardSignatureInvalid', 'signature does not verify'],
      [big, 'A2aAnswerTooLarge', 'larger than 262144 bytes'],
      [redirect, 'A2aRedirectRefused', 'redirecting to http://169.254.169.254/latest/meta-data/'],
    ];
    for (const [remote, code, words] of cases) {
      const p = await plane(remote.cardUrl);
      const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
      const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
      expect(failed?.body, code).toMatchObject({ disposition: 'DidNotHappen', error: { code } });
      expect(JSON.stringify(failed?.body)).toContain(words);
      expect(remote.methods).toEqual(['GET card']);
    }
  });

  it('an oversized answer to SendMessage is refused and in doubt (the message had left)', async () => {
    const remote = await startRemote({ streaming: false, behaviour: 'echo' });
    const p = await plane(remote.cardUrl, undefined, { answerMaxBytes: 64 });
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
    expect(run.pending).toMatchObject({ reason: 'recovery' });
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'InDoubt', error: { code: 'A2aAnswerTooLarge' } });
  });

  it('netguard refuses a card on 127.0.0.1 without an allow entry, and an allowed card naming an interface on another loopback port: nothing is sent', async () => {
    const remote = await startRemote({ streaming: false, behaviour: 'echo' });
    // The plane's own client, through the plane's netguard: nothing is allowed.
    const p = await testPlane({ dataDir: tempDataDir('ap-a2a-netguard-'), agents: [caller(remote.cardUrl)] });
    planes.push(p);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
    expect(run.outcome).toBe('failed');
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aCardUnreachable' } });
    expect(JSON.stringify(failed?.body)).toContain(`netguard refused ${remote.origin}`);
    expect(remote.methods).toEqual([]);

    // The card's origin is allowed; the interface it names (the other server) is not. It is
    // refused before netguard has a say: an interface off the card's origin never is called
    // (a2a-client-interface-origin.test.ts has the case where netguard allows both).
    const inner = await startRemote({ streaming: false, behaviour: 'echo' });
    const outer = await startRemote({ streaming: false, behaviour: 'echo', interfaceUrl: `${inner.origin}/rpc` });
    const q = await plane(outer.cardUrl);
    const second = await call(q, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
    const refused = (await a2aRecords(q, second.runId)).find((r) => r.kind === 'EffectFailed');
    expect(refused?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aInterfaceOffOrigin' } });
    expect(JSON.stringify(refused?.body)).toContain(`${inner.origin}/rpc`);
    expect(outer.methods).toEqual(['GET card']);
    expect(inner.methods).toEqual([]);
  });

  it('a SendMessage whose connection was refused did not happen', async () => {
    const p = await plane('http://127.0.0.1:1/.well-known/agent-card.json');
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
    const failed = (await a2aRecords(p, run.runId)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aCardUnreachable' } });
  });
});
