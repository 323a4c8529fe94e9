/**
 * Provenance at protected sinks (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks"), on a
 * real plane with the demo peer beta and the local model: a payment whose amount and payee a
 * peer's answer chose is put to a person with its origin, and pays once approved; a file path a
 * model's output chose is refused where the grant says refuse; the manifest's own literals pass;
 * a fork of the run asks again, as the parent did; a bad `protect:` is refused at load.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeChatServer, type FakeChatServer } from '../../tests/doubles/fake-chat-server';
import { createOpenAiCompatibleProvider } from '../providers/openai-compatible';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, approvePending as approve, call, testPlane } from '../../tests/support/runtime-support';
import type { Plane } from '../plane/plane';
import { ManifestError } from './manifest';

const open: Plane[] = [];
afterEach(async () => {
  for (const p of open.splice(0).reverse()) await p.close().catch(() => undefined);
});

/** Asks beta for a quote, then pays the amount and payee its answer gave. */
const PAY_FROM_PEER = {
  name: 'pay-from-peer',
  steps: [
    { as: 'quote', peer: { name: 'beta', skill: 'ask', args: { query: 'quote me a price' } } },
    { as: 'payment', pay: { amount: '{{steps.quote.usage.outputTokens}}', currency: 'USD', payee: '{{steps.quote.response}}' } },
    { output: '{{steps.payment}}' },
  ],
  grants: [
    { kind: 'peer', name: 'beta', skills: ['ask'] },
    { kind: 'payment', name: 'request', approve: true },
  ],
};

/** The manifest's own amount and payee: the operator's. */
const PAY_LITERAL = {
  name: 'pay-literal',
  steps: [{ as: 'payment', pay: { amount: 5, currency: 'USD', payee: 'ACME' } }, { output: '{{steps.payment}}' }],
  grants: [{ kind: 'payment', name: 'request', approve: true }],
};

/** Writes to the path a model's output names; the grant refuses a path anyone but the operator chose. */
const WRITE_WHERE_MODEL_SAYS = {
  name: 'write-where-told',
  steps: [
    { as: 'where', model: { provider: 'local', prompt: 'name a file', maxTokens: 4 } },
    { tool: { name: 'file.write', args: { path: '{{steps.where.text}}', content: 'from the operator' } } },
    { output: 'done' },
  ],
  grants: [
    { kind: 'model', name: 'local' },
    { kind: 'tool', name: 'file.write', protect: { path: { accept: ['operator', 'plane'], otherwise: 'refuse' } } },
  ],
};

/** The same write to the operator's own path. */
const WRITE_LITERAL = {
  ...WRITE_WHERE_MODEL_SAYS,
  name: 'write-literal',
  steps: [{ as: 'where', model: { provider: 'local', prompt: 'say anything', maxTokens: 4 } }, { tool: { name: 'file.write', args: { path: 'notes/fixed.md', content: '{{steps.where.text}}' } } }, { output: 'done' }],
};

async function plane(): Promise<Plane> {
  const p = await testPlane({ dataDir: tempDataDir('ap-sinks-'), demoPeers: true, agents: [PAY_FROM_PEER, PAY_LITERAL, WRITE_WHERE_MODEL_SAYS, WRITE_LITERAL].map(agent) });
  open.push(p);
  return p;
}

const records = (p: Plane, runId: string) => p.journal.readRun(runId, 1, 1000);

describe('provenance at protected sinks', () => {
  it("a payment whose amount and payee a peer's answer chose waits for a person, showing where each came from; approved, it pays", { timeout: 60_000 }, async () => {
    const p = await plane();
    await call(p, 'peers.start', { id: 'beta' });
    const run = await call(p, 'runs.start', { agent: 'pay-from-peer', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'suspended', pending: { reason: 'provenance', step: 1 } });
    const subject = run.pending!.subject as { kind: string; grant: string; fields: Array<{ field: string; value: unknown; provenance: string[]; via: string[] }> };
    expect(subject.grant).toBe('payment:request');
    expect(subject.fields.map((f) => f.field)).toEqual(['amount', 'payee']);
    expect(subject.fields[0]).toMatchObject({ provenance: expect.arrayContaining(['peer:beta']), via: ['steps.quote.usage.outputTokens'] });
    expect(subject.fields[1]).toMatchObject({ provenance: expect.arrayContaining(['peer:beta']), via: ['steps.quote.response'] });
    expect(typeof subject.fields[0]!.value).toBe('number');
    const verdicts = (await records(p, run.runId)).filter((r) => r.kind === 'ProvenanceVerdict');
    expect(verdicts.map((r) => r.body)).toEqual([{ step: 1, grant: 'payment:request', verdict: 'asked', fields: subject.fields }]);
    expect((await records(p, run.runId)).some((r) => r.kind === 'EffectStarted' && (r.body as { effect: string }).effect === 'payment')).toBe(false);

    // Accepting the origin is not approving the payment: the payment grant still asks.
    const next = await approve(p, run.runId);
    expect(next).toMatchObject({ status: 'suspended', pending: { reason: 'payment', step: 1 } });
    const done = await approve(p, run.runId);
    expect(done).toMatchObject({ status: 'sealed', outcome: 'succeeded', result: { status: 'approved-intent', moved: false, payee: subject.fields[1]!.value } });
    // One verdict, written once though the run was resumed twice.
    expect((await records(p, run.runId)).filter((r) => r.kind === 'ProvenanceVerdict')).toHaveLength(1);

    // A fork at the payment takes the peer's answer from the parent, with its provenance, and asks again.
    const fork = await call(p, 'runs.fork', { runId: run.runId, at: 1, wait: true });
    expect(fork).toMatchObject({ status: 'suspended', pending: { reason: 'provenance', step: 1 } });
    expect((fork.pending!.subject as { fields: unknown }).fields).toEqual(subject.fields);
    // A dry replay of the parent answers every step from its record: nothing asked, nothing written.
    const replay = await call(p, 'runs.replay', { runId: run.runId });
    expect(replay).toMatchObject({ divergesAt: null, replayed: 2, steps: 2 });
  });

  it('a denied provenance wait ends the run denied, and nothing is paid', { timeout: 60_000 }, async () => {
    const p = await plane();
    await call(p, 'peers.start', { id: 'beta' });
    const run = await call(p, 'runs.start', { agent: 'pay-from-peer', input: {}, wait: true });
    await call(p, 'approvals.decide', { runId: run.runId, waitId: run.pending!.waitId, decision: 'deny', subjectHash: run.pending!.subjectHash, reason: 'not from a peer' });
    const done = await p.runtime.settled(run.runId);
    expect(done).toMatchObject({ status: 'sealed', outcome: 'denied' });
    expect((await records(p, run.runId)).some((r) => r.kind === 'EffectStarted' && (r.body as { effect: string }).effect === 'payment')).toBe(false);
  });

  it("the manifest's own amount and payee pass: only the payment's own approval is asked, and no verdict is written", async () => {
    const p = await plane();
    const run = await call(p, 'runs.start', { agent: 'pay-literal', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'suspended', pending: { reason: 'payment', step: 0 } });
    expect((await records(p, run.runId)).some((r) => r.kind === 'ProvenanceVerdict')).toBe(false);
  });

  it("a file path a model's output chose is refused where the grant says refuse, naming the field and its origin; nothing is written", async () => {
    const p = await plane();
    const run = await call(p, 'runs.start', { agent: 'write-where-told', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'failed', error: { code: 'ProvenanceRefused' } });
    expect(run.error!.message).toMatch(/^tool file\.write: path ".*" came from model:local via steps\.where\.text, which its grant does not accept$/);
    const all = await records(p, run.runId);
    expect(all.filter((r) => r.kind === 'ProvenanceVerdict').map((r) => r.body)).toEqual([
      { step: 1, grant: 'tool:file.write', verdict: 'refused', fields: [{ field: 'path', value: expect.any(String), provenance: expect.arrayContaining(['model:local']), via: ['steps.where.text'] }] },
    ]);
    expect(all.some((r) => r.kind === 'EffectStarted' && (r.body as { name: string }).name === 'file.write')).toBe(false);
  });

  it("the operator's own path passes, whatever the model wrote into the file (content is not protected)", async () => {
    const p = await plane();
    const run = await call(p, 'runs.start', { agent: 'write-literal', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    expect(existsSync(join(p.dataDir, 'workspace', 'notes', 'fixed.md'))).toBe(true);
  });
});

describe("a peer call's target chosen by a model", () => {
  let fake: FakeChatServer;
  beforeAll(async () => {
    fake = await startFakeChatServer();
  });
  afterAll(() => fake.close());

  it("waits for a person when the grant accepts only the operator's target: the model picked the tool", async () => {
    const chooser = {
      name: 'model-picks-peer',
      steps: [{ as: 'answer', model: { provider: 'chat', prompt: 'Ping somebody.', tools: ['peer:beta/ping'] } }, { output: '{{steps.answer.text}}' }],
      grants: [
        { kind: 'model', name: 'chat' },
        { kind: 'peer', name: 'beta', skills: ['ping'], protect: { target: { accept: ['operator'], otherwise: 'ask' } } },
      ],
    };
    const providers = new Map([['chat', createOpenAiCompatibleProvider({ id: 'chat', baseUrl: fake.baseUrl, apiKey: 'sk-sinks-test', model: 'tool-call' })]]);
    const p = await testPlane({ dataDir: tempDataDir('ap-sinks-tools-'), demoPeers: true, agents: [agent(chooser)], providers });
    open.push(p);
    const run = await call(p, 'runs.start', { agent: 'model-picks-peer', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'suspended', pending: { reason: 'provenance', step: 1 } });
    const fields = (run.pending!.subject as { fields: Array<{ field: string; value: unknown; provenance: string[] }> }).fields;
    expect(fields.map((f) => [f.field, f.value])).toEqual([['target', 'peer:beta/ping']]);
    expect(fields[0]!.provenance).toContain('model:chat');
  });
});

describe('protect: in a manifest', () => {
  const load = (grant: Record<string, unknown>) => () => agent({ name: 'bad-protect', steps: [{ pay: { amount: 1, currency: 'USD', payee: 'x' } }], grants: [grant] });
  const error = (grant: Record<string, unknown>): ManifestError => {
    try {
      load(grant)();
    } catch (e) {
      return e as ManifestError;
    }
    throw new Error('the manifest loaded');
  };

  it('refuses a field the grant cannot protect, naming it and the fields it can', () => {
    const e = error({ kind: 'payment', name: 'request', approve: true, protect: { amonut: { accept: ['operator'], otherwise: 'ask' } } });
    expect(e).toBeInstanceOf(ManifestError);
    expect(e.field).toBe('grants.0.protect.amonut');
    expect(e.problem).toContain('amonut is not a field this grant can protect (it can protect amount, payee, currency)');
  });

  it("refuses a protected argument a built-in tool does not take, naming it and the tool's arguments", () => {
    let e: ManifestError | null = null;
    try {
      agent({ name: 'bad-path', steps: [{ tool: { name: 'file.write', args: { path: 'a', content: 'b' } } }], grants: [{ kind: 'tool', name: 'file.write', protect: { pth: { accept: ['operator'], otherwise: 'refuse' } } }] });
    } catch (error) {
      e = error as ManifestError;
    }
    expect(e).toBeInstanceOf(ManifestError);
    expect(e!.field).toBe('grants.0.protect.pth');
    expect(e!.problem).toBe('pth is not an argument of the tool file.write (it takes path, content)');
  });

  it('refuses an unknown otherwise and a malformed accept entry, naming the field', () => {
    const otherwise = error({ kind: 'payment', name: 'request', approve: true, protect: { amount: { accept: ['operator'], otherwise: 'maybe' } } });
    expect(otherwise.field).toBe('grants.0.protect.amount.otherwise');
    expect(otherwise.problem).toContain('otherwise must be ask or refuse');
    const accept = error({ kind: 'payment', name: 'request', approve: true, protect: { payee: { accept: ['anyone at all'], otherwise: 'refuse' } } });
    expect(accept.field).toBe('grants.0.protect.payee.accept.0');
    expect(accept.problem).toContain('an accept entry is operator, plane, * or a provenance');
    const empty = error({ kind: 'payment', name: 'request', approve: true, protect: { payee: { accept: [], otherwise: 'refuse' } } });
    expect(empty.field).toBe('grants.0.protect.payee.accept');
  });

  it('loads a well-formed protect', () => {
    expect(load({ kind: 'payment', name: 'request', approve: true, protect: { amount: { accept: ['operator', 'peer:beta'], otherwise: 'refuse' } } })).not.toThrow();
  });
});
