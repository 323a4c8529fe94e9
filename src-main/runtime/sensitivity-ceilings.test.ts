/**
 * Sensitivity labels and egress ceilings (docs/GOVERNED-RUNTIME.md, "Sensitivity"), on a real
 * plane with the demo peer beta and the local model counted at the provider: a confidential
 * input is refused before it reaches a model whose ceiling is internal; a peer's secret answer
 * is refused before it is sent on to a public-ceiling peer; the same flows within their ceilings
 * pass; a bad configuration is refused naming what is wrong; the labels come from the journal,
 * so a restarted plane and a fork give the same verdict after the configuration changed.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, callsIn, countingProvider, failure, testPlane } from '../../tests/support/runtime-support';
import type { Plane } from '../plane/plane';
import { Sensitivity, SensitivityConfigError, type SensitivityConfig } from '../../src-shared/vocabulary/sensitivity';

const open: Plane[] = [];
afterEach(async () => {
  for (const p of open.splice(0).reverse()) await p.close().catch(() => undefined);
});

/** Sends its input's text to the local model. */
const SUMMARISE = {
  name: 'summarise',
  steps: [{ as: 'summary', model: { provider: 'local', prompt: 'Summarise: {{input.text}}', maxTokens: 8 } }, { output: '{{steps.summary.text}}' }],
  grants: [{ kind: 'model', name: 'local' }],
};

/** The same, its input declared confidential by the manifest. */
const SUMMARISE_DECLARED = { ...SUMMARISE, name: 'summarise-declared', sensitivity: { input: 'confidential' } };

/** Asks beta, then sends beta's answer back to beta. */
const RELAY = {
  name: 'relay',
  steps: [
    { as: 'quote', peer: { name: 'beta', skill: 'ask', args: { query: 'quote me a price' } } },
    { as: 'again', peer: { name: 'beta', skill: 'ask', args: { query: 'check: {{steps.quote.response}}' } } },
    { output: '{{steps.again.response}}' },
  ],
  grants: [{ kind: 'peer', name: 'beta', skills: ['ask'] }],
};

/** Asks the model, waits for a person, then sends the model's answer back to the model. */
const REDRAFT_AFTER_QUESTION = {
  name: 'redraft-after-question',
  steps: [
    { as: 'draft', model: { provider: 'local', prompt: 'draft a note', maxTokens: 8 } },
    { as: 'ok', input: { prompt: 'go on?' } },
    { as: 'again', model: { provider: 'local', prompt: 'Improve: {{steps.draft.text}}', maxTokens: 8 } },
    { output: '{{steps.again.text}}' },
  ],
  grants: [{ kind: 'model', name: 'local' }],
};

async function plane(dataDir: string, config: SensitivityConfig | null, counter?: string): Promise<Plane> {
  if (config) writeFileSync(join(dataDir, 'sensitivity.json'), JSON.stringify(config));
  const providers = counter ? { providers: new Map([['local', countingProvider(counter)]]) } : {};
  const p = await testPlane({ dataDir, demoPeers: true, agents: [SUMMARISE, SUMMARISE_DECLARED, RELAY, REDRAFT_AFTER_QUESTION].map(agent), ...providers });
  open.push(p);
  return p;
}

const records = (p: Plane, runId: string) => p.journal.readRun(runId, 1, 1000);
const peerStarts = async (p: Plane, runId: string) => (await records(p, runId)).filter((r) => r.kind === 'EffectStarted' && (r.body as { effect: string }).effect === 'peer');

describe('sensitivity and egress ceilings', () => {
  it('a confidential input is refused before it reaches a model whose ceiling is internal; within the ceiling it is sent', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-sensitivity-');
    const counter = join(dataDir, 'model-calls.txt');
    const p = await plane(dataDir, { destinations: { 'model:local': { ceiling: 'internal' } } }, counter);

    const refused = await call(p, 'runs.start', { agent: 'summarise', input: { text: 'the merger terms' }, sensitivity: 'confidential', wait: true });
    expect(refused).toMatchObject({ status: 'sealed', outcome: 'failed', error: { code: 'SensitivityCeiling' } });
    expect(refused.error!.message).toContain('confidential value from input');
    expect(refused.error!.message).toContain("model:local's ceiling internal");
    expect(callsIn(counter)).toBe(0);
    const admitted = (await records(p, refused.runId))[0]!;
    expect(admitted.body).toMatchObject({ inputSensitivity: 'confidential' });
    expect((await records(p, refused.runId)).some((r) => r.kind === 'EffectStarted')).toBe(false);

    // The manifest's declared label holds as well when the starter gives none.
    const declared = await call(p, 'runs.start', { agent: 'summarise-declared', input: { text: 'the merger terms' }, wait: true });
    expect(declared).toMatchObject({ outcome: 'failed', error: { code: 'SensitivityCeiling' } });
    expect(callsIn(counter)).toBe(0);

    // Internal is within the ceiling; and an unlabelled input is the lowest label, as before labels.
    expect(await call(p, 'runs.start', { agent: 'summarise', input: { text: 'the lunch menu' }, sensitivity: 'internal', wait: true })).toMatchObject({ outcome: 'succeeded' });
    const unlabelled = await call(p, 'runs.start', { agent: 'summarise', input: { text: 'the lunch menu' }, wait: true });
    expect(unlabelled).toMatchObject({ outcome: 'succeeded' });
    expect((await records(p, unlabelled.runId))[0]!.body).not.toHaveProperty('inputSensitivity');
    expect(callsIn(counter)).toBe(2);

    // A label the plane does not hold is refused at the door, naming the labels.
    const bad = await failure(p, 'runs.start', { agent: 'summarise', input: { text: 'x' }, sensitivity: 'top-secret' });
    expect(bad.message).toContain('top-secret is not one of this plane\'s labels (public < internal < confidential < secret)');
  });

  it("an agent's own ceiling refuses as a destination's does", { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-sensitivity-');
    const counter = join(dataDir, 'model-calls.txt');
    const p = await plane(dataDir, { agents: { summarise: 'public' } }, counter);
    const refused = await call(p, 'runs.start', { agent: 'summarise', input: { text: 'x' }, sensitivity: 'internal', wait: true });
    expect(refused).toMatchObject({ outcome: 'failed', error: { code: 'SensitivityCeiling' } });
    expect(refused.error!.message).toContain("agent summarise's ceiling public");
    expect(callsIn(counter)).toBe(0);
  });

  it("a peer's secret answer is refused before it is sent to a public-ceiling peer; within the ceiling it is sent", { timeout: 60_000 }, async () => {
    const p = await plane(tempDataDir('ap-sensitivity-'), { destinations: { 'peer:beta': { ceiling: 'public', result: 'secret' } } });
    await call(p, 'peers.start', { id: 'beta' });
    const run = await call(p, 'runs.start', { agent: 'relay', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'failed', error: { code: 'SensitivityCeiling' } });
    expect(run.error!.message).toBe("peer beta/ask: the request carries a secret value from steps.quote.response, above peer:beta's ceiling public; refused before it was sent to peer:beta");
    // The first call (a literal: public) went; the second never started.
    expect((await peerStarts(p, run.runId)).map((r) => (r.body as { step: number }).step)).toEqual([0]);
    const done = (await records(p, run.runId)).find((r) => r.kind === 'EffectDone')!;
    expect(done.body).toMatchObject({ provenance: 'peer:beta', sensitivity: 'secret' });
    await p.close();

    // The same flow under a ceiling of secret goes through.
    const within = await plane(tempDataDir('ap-sensitivity-'), { destinations: { 'peer:beta': { ceiling: 'secret', result: 'secret' } } });
    await call(within, 'peers.start', { id: 'beta' });
    const passed = await call(within, 'runs.start', { agent: 'relay', input: {}, wait: true });
    expect(passed).toMatchObject({ outcome: 'succeeded' });
    expect(await peerStarts(within, passed.runId)).toHaveLength(2);
  });

  it('the labels come from the journal: a restarted plane and a fork refuse as before after the configuration changed', { timeout: 90_000 }, async () => {
    const dataDir = tempDataDir('ap-sensitivity-');
    const counter = join(dataDir, 'model-calls.txt');
    const first = await plane(dataDir, { destinations: { 'model:local': { ceiling: 'internal', result: 'secret' } } }, counter);
    const run = await call(first, 'runs.start', { agent: 'redraft-after-question', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'suspended', pending: { reason: 'input', step: 1 } });
    expect(callsIn(counter)).toBe(1);
    await first.close();

    // The model's answers would now be public: recomputed, the redraft would pass; read from the record it does not.
    const second = await plane(dataDir, { destinations: { 'model:local': { ceiling: 'internal', result: 'public' } } }, counter);
    await call(second, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'approve', subjectHash: run.pending!.subjectHash, value: { kind: 'input', input: 'yes' } });
    await second.runtime.settled(run.runId);
    const resumed = await call(second, 'runs.get', { runId: run.runId });
    expect(resumed).toMatchObject({ outcome: 'failed', error: { code: 'SensitivityCeiling' } });
    expect(resumed.error!.message).toBe("model local: the request carries a secret value from steps.draft.text, above model:local's ceiling internal; refused before it was sent to model:local");
    expect(callsIn(counter)).toBe(1);

    // A fork taking the model's answer from its parent takes its label too, and refuses the same way.
    const fork = await call(second, 'runs.fork', { runId: run.runId, at: 2, wait: true });
    expect(fork).toMatchObject({ outcome: 'failed', error: { code: 'SensitivityCeiling', message: resumed.error!.message } });
    const reused = (await records(second, fork.runId)).find((r) => r.kind === 'EffectReused')!;
    expect((reused.body as { steps: Array<{ step: number; sensitivity?: string }> }).steps[0]).toMatchObject({ step: 0, sensitivity: 'secret' });
    expect(callsIn(counter)).toBe(1);
  });
});

describe('sensitivity configuration', () => {
  it('refuses an unknown label, a label given twice, a bad destination and an unknown setting, naming each', () => {
    const error = (raw: unknown) => {
      try {
        Sensitivity.parse(raw, 'sensitivity.json');
      } catch (e) {
        expect(e).toBeInstanceOf(SensitivityConfigError);
        return (e as Error).message;
      }
      throw new Error('expected a refusal');
    };
    expect(error({ destinations: { 'model:local': { ceiling: 'restricted' } } })).toBe('sensitivity.json: destinations.model:local.ceiling: "restricted" is not a configured label (the labels are public < internal < confidential < secret)');
    expect(error({ labels: ['low', 'high', 'low'] })).toBe('sensitivity.json: labels.2: low appears twice; the labels are an order, lowest first, each once');
    expect(error({ labels: [] })).toContain('labels must be a list of labels, lowest first');
    expect(error({ labels: 'public,secret' })).toContain('labels must be a list of labels, lowest first');
    expect(error({ labels: ['low', 'high'], agents: { summarise: 'secret' } })).toBe('sensitivity.json: agents.summarise: "secret" is not a configured label (the labels are low < high)');
    expect(error({ destinations: { beta: { ceiling: 'public' } } })).toContain('destinations.beta: not a destination (kind:name');
    expect(error({ destinations: { 'peer:beta': { max: 'public' } } })).toBe('sensitivity.json: destinations.peer:beta.max is not a setting (a destination has ceiling and result)');
    expect(error({ ceilings: {} })).toBe('sensitivity.json: ceilings is not a setting (the settings are labels, agents, destinations)');
  });

  it('an operator order, patterns and the defaults: ceilings the highest, results the lowest', () => {
    const s = Sensitivity.parse({ labels: ['open', 'team', 'vault'], destinations: { 'peer:*': { ceiling: 'team' }, 'peer:beta': { result: 'vault' } } });
    expect([s.lowest, s.highest]).toEqual(['open', 'vault']);
    expect(s.ceilingOf('peer:alpha')).toBe('team');
    expect(s.ceilingOf('model:local')).toBe('vault');
    expect(s.resultOf('peer:beta')).toBe('vault');
    expect(s.resultOf('peer:alpha')).toBe('open');
    expect(s.join({ label: 'team', from: ['input'] }, { label: 'vault', from: ['steps.a'] })).toEqual({ label: 'vault', from: ['steps.a'] });
    // A label from another configuration ranks above every label: kept in.
    expect(s.rank('secret')).toBeGreaterThan(s.rank('vault'));
  });

  it('a plane with a bad sensitivity.json does not start, naming the file and the field', async () => {
    const dataDir = tempDataDir('ap-sensitivity-');
    writeFileSync(join(dataDir, 'sensitivity.json'), JSON.stringify({ agents: { summarise: 'restricted' } }));
    await expect(testPlane({ dataDir, agents: [agent(SUMMARISE)] })).rejects.toThrow(`${join(dataDir, 'sensitivity.json')}: agents.summarise: "restricted" is not a configured label`);
  });
});
