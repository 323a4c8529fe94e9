/**
 * Halts at the outside hop for MCP and A2A calls, through a real plane on loopback: a halt placed
 * while the call's preliminary step is in flight (an MCP server's initialize, held by a proxy in
 * front of server-everything; an A2A agent's card, held by the SDK remote) stops the call right
 * before its request leaves. Counted at the far side: no tools/call, no SendMessage. The attempt
 * is journaled `HaltedAtHop` (DidNotHappen), the run waits on the halt, and once the halt is
 * lifted the call is performed, once. docs/GOVERNED-RUNTIME.md, "Halts at the hop".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startEverythingHttp, type RunningServer } from '../../tests/doubles/everything-server';
import { startHoldingProxy, type HoldingProxy } from '../../tests/doubles/holding-proxy';
import { startSdkRemote, type SdkRemote } from '../../tests/doubles/sdk-a2a-remote';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, testPlane } from '../../tests/support/runtime-support';
import { createNetguard, staticAllowList, type Netguard } from '../net/netguard';
import type { Plane } from '../plane/plane';
import { createA2aClient } from '../protocols/a2a/client/a2a-client';
import { writeMcpServersFile } from '../protocols/mcp/client/mcp-servers-file';

const OWNER = 'user:local';
const open: Array<Plane | Netguard | HoldingProxy | SdkRemote | RunningServer> = [];
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await ('stop' in thing ? thing.stop() : thing.close());
});

/** Starts `agentName` held by a halt placed once `inFlight` resolves and before `release`; answers the run as the halt left it. */
async function haltedMidHop(p: Plane, agentName: string, inFlight: Promise<void>, release: () => void) {
  const { runId } = await p.runtime.start({ agent: agentName, input: {}, chain: [OWNER], via: 'cli' });
  await inFlight;
  await p.runtime.halt(`agent:${agentName}`, OWNER, 'test');
  release();
  const waiting = await p.runtime.settled(runId);
  const failed = (await p.journal.readRun(runId, 1, 100)).filter((r) => r.kind === 'EffectFailed');
  return { runId, waiting, failed };
}

describe('halts at the outside hop', () => {
  it('an MCP call whose server was being connected to when the halt came never sends tools/call; after the lift it is called once', async () => {
    const server = await startEverythingHttp();
    open.push(server);
    const proxy = await startHoldingProxy(server.url);
    open.push(proxy);
    const dataDir = tempDataDir('ap-hop-halts-mcp-');
    writeMcpServersFile(dataDir, { servers: { everything: { transport: 'http', url: proxy.url, headers: {} } } });
    const echoer = agent({ name: 'echoer', steps: [{ as: 'echoed', mcp: { server: 'everything', tool: 'echo', args: { message: 'held' } } }, { output: '{{steps.echoed.content.0.text}}' }], grants: [{ kind: 'mcp', name: 'everything/echo' }] });
    const p = await testPlane({ dataDir, agents: [echoer] });
    open.push(p);
    const toolCalls = () => proxy.methods.filter((m) => m === 'tools/call').length;

    proxy.hold('initialize');
    const { runId, waiting, failed } = await haltedMidHop(p, 'echoer', proxy.arrived('initialize'), () => proxy.release());
    expect(waiting.pending?.reason).toBe('halt');
    expect(toolCalls()).toBe(0);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.body).toMatchObject({ step: 0, disposition: 'DidNotHappen', error: { code: 'HaltedAtHop' } });

    await p.runtime.liftHalt('agent:echoer', OWNER);
    const done = await p.runtime.settled(runId);
    expect(done).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    expect(done.result).toBe('Echo: held');
    expect(toolCalls()).toBe(1);
  });

  it('an A2A send whose card was being fetched when the halt came never sends SendMessage; after the lift it is sent once', async () => {
    const remote = await startSdkRemote({ answer: (input) => ({ echoed: input }) });
    open.push(remote);
    const netguard = createNetguard({ allow: staticAllowList([remote.origin]) });
    open.push(netguard);
    const dataDir = tempDataDir('ap-hop-halts-a2a-');
    const asker = agent({ name: 'asker', steps: [{ as: 'remote', a2a: { card: remote.cardUrl, skill: 'echo', message: { said: 'held' } } }, { output: '{{steps.remote.value}}' }], grants: [{ kind: 'a2a', name: remote.cardUrl }] });
    const p = await testPlane({ dataDir, agents: [asker], a2a: createA2aClient({ dataDir, dispatcher: netguard.dispatcher, poll: { initialMs: 20, maxMs: 100 } }) });
    open.push(p);
    const sends = () => remote.methods.filter((m) => m === 'SendMessage').length;

    remote.holdCards();
    const { runId, waiting, failed } = await haltedMidHop(p, 'asker', remote.cardRequested(), () => remote.releaseCards());
    expect(waiting.pending?.reason).toBe('halt');
    expect(remote.methods).toEqual(['GET card']);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.body).toMatchObject({ step: 0, disposition: 'DidNotHappen', error: { code: 'HaltedAtHop' } });

    await p.runtime.liftHalt('agent:asker', OWNER);
    const done = await p.runtime.settled(runId);
    expect(done).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    expect(done.result).toEqual({ echoed: { said: 'held' } });
    expect(sends()).toBe(1);
  });
});
