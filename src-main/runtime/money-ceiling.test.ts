/**
 * Dollar ceilings against unpriced models. A model with no price costs 0 in the meter (its
 * spend is marked unaccounted), so a money ceiling cannot hold it:
 *
 * - a run whose model step names an unpriced model under a money ceiling is refused at
 *   admission, naming the model and the two ways out, before anything is journaled; without a
 *   money ceiling the same run goes (its spend says unaccounted);
 * - a model that lost its price after admission is refused in callModel before any call
 *   (DidNotHappen);
 * - a model that ANSWERED unpriced (an alias resolving elsewhere) makes the run's next
 *   money-costing effect stop at the budget check, as the cost ceiling, with `unaccounted` in
 *   what the person is shown; their approval lets that effect go.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, failure, testPlane } from '../../tests/support/runtime-support';
import type { Plane } from '../plane/plane';
import type { Completion, ModelProvider, ModelRequest, Pricing } from './model-provider';

const PRICE: Pricing = { inputPerMTokMicros: 1_000_000, outputPerMTokMicros: 2_000_000 };

interface Priced extends ModelProvider {
  calls: number;
  /** Models with a price; anything else is unpriced. */
  priced: Set<string>;
}

/** A provider answering as `answeredBy` (default: the model asked), priced per model from `priced`. */
function metered(priced: string[], answeredBy?: string): Priced {
  const provider: Priced = {
    id: 'metered',
    calls: 0,
    priced: new Set(priced),
    profile: { provider: 'metered', driver: 'scripted/1', endpoint: 'in-test', streaming: false, label: 'metered', defaultModel: 'house-model' },
    pricing: PRICE,
    pricingFor: (model: string) => (provider.priced.has(model) ? PRICE : null),
    complete(request: ModelRequest): Promise<Completion> {
      provider.calls += 1;
      return Promise.resolve({ text: 'fine', usage: { inputTokens: 10, outputTokens: 5, reasoningTokens: 0 }, model: answeredBy ?? (request.model || 'house-model'), truncated: false });
    },
  };
  return provider;
}

function spender(name: string, steps: unknown[], budget: Record<string, unknown>) {
  return agent({ name, steps, grants: [{ kind: 'model', name: 'metered' }], budget });
}

const ask = (model?: string) => ({ model: { provider: 'metered', prompt: 'Sum it up.', ...(model ? { model } : {}) } });

const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

async function open(provider: Priced, agents: ReturnType<typeof agent>[]): Promise<Plane> {
  const p = await testPlane({ dataDir: tempDataDir('ap-money-'), agents, providers: new Map([[provider.id, provider]]) });
  planes.push(p);
  return p;
}

describe('a money ceiling and a model with no price', () => {
  it('refuses the run at admission, naming the model (or the default) and the ways out; without a money ceiling it runs, unaccounted', async () => {
    const provider = metered(['priced-model']);
    const p = await open(provider, [
      spender('capped', [ask('mystery-model')], { maxCostUsd: 1 }),
      spender('capped-default', [ask()], { maxCostMicros: 500_000 }),
      spender('uncapped', [ask('mystery-model')], { maxTokens: 10_000 }),
      spender('capped-priced', [ask('priced-model')], { maxCostUsd: 1 }),
    ]);
    const before = (await p.journal.head()).seq;
    const refused = await failure(p, 'runs.start', { agent: 'capped', input: {} });
    expect(refused.code).toBe('AP_BAD_REQUEST');
    expect(refused.message).toBe(
      'agent capped has a money ceiling, but metered:mystery-model has no price, so its spend could not be held under it: add the model to <data dir>/prices.json (see resources/prices.json for the shape), or remove the money ceiling (maxCostUsd / maxCostMicros) from the budget',
    );
    expect((await failure(p, 'runs.start', { agent: 'capped-default', input: {} })).message).toContain('metered:house-model has no price');
    expect((await p.journal.head()).seq).toBe(before);
    expect(provider.calls).toBe(0);

    const uncapped = await call(p, 'runs.start', { agent: 'uncapped', input: {}, wait: true });
    expect(uncapped).toMatchObject({ outcome: 'succeeded', spend: { inputTokens: 10, outputTokens: 5, costMicros: 0, unaccounted: true } });
    const priced = await call(p, 'runs.start', { agent: 'capped-priced', input: {}, wait: true });
    expect(priced).toMatchObject({ outcome: 'succeeded', spend: { costMicros: 20 } });
    expect(priced.spend.unaccounted).toBeUndefined();
  });

  it('refuses the call (DidNotHappen, nothing sent) when the model lost its price after admission', async () => {
    const provider = metered(['priced-model']);
    const p = await open(provider, [spender('asks-first', [{ input: { prompt: 'Go ahead?' } }, ask('priced-model')], { maxCostUsd: 1 })]);
    const run = await call(p, 'runs.start', { agent: 'asks-first', input: {}, wait: true });
    expect(run.pending?.reason).toBe('input');
    provider.priced.clear(); // as a prices.json edited while the run waited for a person
    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash, value: { kind: 'input', input: 'yes' } });
    await p.runtime.settled(run.runId);
    const done = await call(p, 'runs.get', { runId: run.runId });
    expect(done).toMatchObject({ outcome: 'failed', error: { code: 'ModelUnpriced' } });
    expect(done.error?.message).toContain('metered:priced-model has no price, and this run has a money ceiling');
    const failed = (await p.journal.readRun(run.runId, 1, 1_000)).find((r) => r.kind === 'EffectFailed');
    expect(failed?.body).toMatchObject({ disposition: 'DidNotHappen', error: { code: 'ModelUnpriced' } });
    expect(provider.calls).toBe(0);
  });

  it('stops the next money-costing effect when the model that answered had no price; an approval lets it go', async () => {
    const provider = metered(['priced-model'], 'priced-model-rerouted-elsewhere');
    const p = await open(provider, [spender('rerouted', [ask('priced-model'), ask('priced-model')], { maxCostUsd: 1 })]);
    const run = await call(p, 'runs.start', { agent: 'rerouted', input: {}, wait: true });
    expect(provider.calls).toBe(1);
    expect(run.pending).toMatchObject({ reason: 'budget', subject: { kind: 'budget', ceiling: 'cost', spent: { costMicros: 0, unaccounted: true }, next: { effect: 'model', name: 'metered' } } });
    const verdict = (await p.journal.readRun(run.runId, 1, 1_000)).find((r) => r.kind === 'BudgetVerdict');
    expect(verdict?.body).toMatchObject({ verdict: 'ceilingReached', ceiling: 'cost', spent: { unaccounted: true } });

    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash, value: { kind: 'budget', budget: { maxCostMicros: 1_000_000 } } });
    await p.runtime.settled(run.runId);
    expect(await call(p, 'runs.get', { runId: run.runId })).toMatchObject({ outcome: 'succeeded', spend: { effects: 2, unaccounted: true } });
    expect(provider.calls).toBe(2);
  });
});
