/**
 * A manifest whose model step names a provider the plane has not configured is refused at run
 * admission, with the variable to set, before anything is journaled; the plane itself still
 * starts and runs every other agent.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Plane } from '../plane/plane';
import { loadAgents } from '../plane/plane-config';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, failure, testPlane } from '../../tests/support/runtime-support';
import { createLocalProvider } from '../providers/local-provider';

const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

describe('provider admission', () => {
  it('refuses a run whose model step names an unconfigured provider, naming the variable; other agents run', async () => {
    const dir = tempDataDir('ap-admission-');
    const claude = agent({ name: 'claude-writer', steps: [{ model: { provider: 'anthropic', model: 'claude-sonnet-4-5', prompt: 'hi' } }], grants: [{ kind: 'model', name: 'anthropic' }] });
    const local = createLocalProvider();
    const p = await testPlane({ dataDir: dir, agents: [...loadAgents(dir), claude], providers: new Map([[local.id, local]]) });
    planes.push(p);
    const before = (await p.journal.head()).seq;
    const refused = await failure(p, 'runs.start', { agent: 'claude-writer', input: {} });
    expect(refused).toEqual({ code: 'AP_BAD_REQUEST', message: 'agent claude-writer uses provider anthropic, which is not configured: set AGENTPLANE_ANTHROPIC_API_KEY, or save it in Settings (agentplane providers set anthropic --key-stdin)' });
    expect((await p.journal.head()).seq).toBe(before);
    const run = await call(p, 'runs.start', { agent: 'summarize', input: { text: 'Foxes are quick.' }, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
  });
});
