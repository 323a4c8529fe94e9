/**
 * Where an A2A message may go: only to an interface on the granted card's own origin (scheme,
 * host, port). The grant is `a2a:<card URL>` and names one origin; a card is the far side's
 * description and can never widen that, so an (unsigned) card on an allowed origin that names an
 * interface on ANOTHER origin, even one netguard also allows, gets nothing sent there. Two real
 * @a2a-js/sdk servers on loopback (tests/doubles/sdk-a2a-remote.ts), both on netguard's allow
 * list, through a real plane; what each server received is asserted directly.
 */
import { describe, expect, it } from 'vitest';
import { useA2aTeardown } from '../../../../tests/support/a2a-support';
import { startSdkRemote, type SdkRemote, type SdkRemoteOptions } from '../../../../tests/doubles/sdk-a2a-remote';
import { agent, call, testPlane } from '../../../../tests/support/runtime-support';
import { tempDataDir } from '../../../../tests/support/journal-support';
import type { Plane } from '../../../plane/plane';
import type { LoadedAgent } from '../../../runtime/manifest';
import { createNetguard, staticAllowList } from '../../../net/netguard';
import { createA2aClient } from './a2a-client';

const { planes, remotes, guards } = useA2aTeardown();

async function remote(options: SdkRemoteOptions = {}): Promise<SdkRemote> {
  const started = await startSdkRemote({ behaviour: 'complete', streaming: false, ...options });
  remotes.push(started);
  return started;
}

function caller(name: string, card: string, extraGrants: string[] = []): LoadedAgent {
  return agent({
    name,
    input: { type: 'object', properties: { text: { type: 'string' } } },
    steps: [{ as: 'remote', a2a: { card, skill: 'echo', message: { said: '{{input.text}}' } } }, { output: '{{steps.remote.value}}' }],
    grants: [{ kind: 'a2a', name: card }, ...extraGrants.map((name) => ({ kind: 'a2a', name }))],
  });
}

/** A plane whose netguard allows every given origin (as an operator's allow list would). */
async function plane(allowed: string[], agents: LoadedAgent[]): Promise<Plane> {
  const dataDir = tempDataDir('ap-a2a-origin-');
  const netguard = createNetguard({ allow: staticAllowList(allowed) });
  guards.push(netguard);
  const client = createA2aClient({ dataDir, dispatcher: netguard.dispatcher, poll: { initialMs: 50, maxMs: 200 } });
  const p = await testPlane({ dataDir, agents, a2a: client });
  planes.push(p);
  return p;
}

async function failedA2a(p: Plane, runId: string) {
  const records = await p.journal.readRun(runId, 1, 1_000);
  return records.find((r) => r.kind === 'EffectFailed');
}

describe('an A2A call goes only to an interface on the card’s own origin', () => {
  it('an unsigned card naming an interface on another allowed origin: nothing reaches it, and the error names both', async () => {
    const second = await remote();
    const first = await remote({ interfaceUrl: `${second.origin}/rpc` });
    // Both origins are allowed by netguard: only the grant's origin decides.
    const p = await plane([first.origin, second.origin], [caller('caller', first.cardUrl)]);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'the user’s private words' }, wait: true });

    expect(second.methods).toEqual([]);
    expect(second.received).toEqual([]);
    expect(first.methods).toEqual(['GET card']);
    expect(run.outcome).toBe('failed');
    const failed = await failedA2a(p, run.runId);
    expect(failed?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aInterfaceOffOrigin' } });
    const said = JSON.stringify(failed?.body);
    expect(said).toContain(`the card at ${first.cardUrl}`);
    expect(said).toContain(`${second.origin}/rpc`);
    expect(said).toContain(`not on the card's origin ${first.origin}`);
  });

  it('an interface on the same host and port but another scheme is another origin: refused before connecting', async () => {
    const port = await remote();
    const first = await remote({ interfaceUrl: `${port.origin.replace('http:', 'https:')}/rpc` });
    const p = await plane([first.origin, port.origin.replace('http:', 'https:')], [caller('caller', first.cardUrl)]);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
    expect(port.methods).toEqual([]);
    expect((await failedA2a(p, run.runId))?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aInterfaceOffOrigin' } });
  });

  it('an interface on the card’s own origin still works', async () => {
    const same = await remote();
    const p = await plane([same.origin], [caller('caller', same.cardUrl)]);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'hi' }, wait: true });
    expect(run).toMatchObject({ outcome: 'succeeded', result: { echoed: { said: 'hi' }, skill: 'echo' } });
    expect(same.methods.slice(0, 2)).toEqual(['GET card', 'SendMessage']);
    expect(same.received).toEqual([{ said: 'hi' }]);
  });

  it('a grant for the second origin’s own card does not let the first card route there (each grant keeps its own approve and signed)', async () => {
    // Grants name cards (a2a:<card URL>), not interface origins: holding a2a:<second card> means
    // "this agent may call the agent that card describes", under that grant's approve/signed;
    // letting another card borrow it would skip them.
    const second = await remote();
    const first = await remote({ interfaceUrl: `${second.origin}/rpc` });
    const p = await plane([first.origin, second.origin], [caller('caller', first.cardUrl, [second.cardUrl]), caller('direct', second.cardUrl)]);
    const run = await call(p, 'runs.start', { agent: 'caller', input: { text: 'x' }, wait: true });
    expect(second.methods).toEqual([]);
    expect((await failedA2a(p, run.runId))?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'A2aInterfaceOffOrigin' } });
    // Through its own card, the second agent is reached as usual.
    const direct = await call(p, 'runs.start', { agent: 'direct', input: { text: 'hi' }, wait: true });
    expect(direct).toMatchObject({ outcome: 'succeeded', result: { echoed: { said: 'hi' }, skill: 'echo' } });
    expect(second.methods.slice(0, 2)).toEqual(['GET card', 'SendMessage']);
  });
});
