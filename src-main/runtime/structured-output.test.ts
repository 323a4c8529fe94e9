/**
 * Structured output: the schema is compiled at manifest load (a non-local `$ref` refused there,
 * naming it), the answer is parsed and validated locally against the exact schema whatever the
 * provider promised, a refusal names the rule that failed and is billed (Landed, with the
 * completion's spend), and a valid answer becomes the step's result, so later templates read
 * its fields. End to end once against the Anthropic fake, whose forced tool carries the answer.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, testPlane } from '../../tests/support/runtime-support';
import { type FakeAnthropicServer, FAKE_STRUCTURED, startFakeAnthropicServer } from '../../tests/doubles/fake-anthropic-server';
import type { Plane } from '../plane/plane';
import { ANSWER_TOOL_NAME, createAnthropicProvider } from '../providers/anthropic-messages';
import { createLocalProvider } from '../providers/local-provider';
import { ManifestError } from './manifest';
import type { Completion, ModelProvider, ModelRequest, Pricing } from './model-provider';
import { AnswerSchemaError, checkStructuredAnswer, compileAnswerSchema } from './structured-output';

const SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'number' }, reason: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
};
const PRICE: Pricing = { inputPerMTokMicros: 3_000_000, outputPerMTokMicros: 15_000_000 };

describe('compiling a step schema', () => {
  it('refuses a non-local $ref, naming where it is and what it points at', () => {
    const remote = { type: 'object', properties: { a: { $ref: 'http://schemas.example/thing.json' } } };
    expect(() => compileAnswerSchema(remote)).toThrow(AnswerSchemaError);
    expect(() => compileAnswerSchema(remote)).toThrow(/only local references.*\/properties\/a: \$ref "http:\/\/schemas\.example\/thing\.json"/);
    expect(() => compileAnswerSchema({ type: 'object', $defs: { x: { $dynamicRef: 'file:///etc/passwd' } } })).toThrow(/file:\/\/\/etc\/passwd/);
  });

  it('accepts local references; refuses a non-object root and an unknown keyword, naming them', () => {
    const local = { type: 'object', properties: { when: { $ref: '#/$defs/day' } }, required: ['when'], $defs: { day: { type: 'string', enum: ['mon', 'tue'] } } };
    expect(checkStructuredAnswer({ text: '{"when":"mon"}', truncated: false }, local)).toEqual({ ok: true, value: { when: 'mon' } });
    expect(checkStructuredAnswer({ text: '{"when":"sun"}', truncated: false }, local)).toEqual({ ok: false, problem: "the answer does not match the step's schema: /when must be equal to one of the allowed values (enum)" });
    expect(() => compileAnswerSchema({ type: 'array', items: { type: 'string' } })).toThrow(/root must be an object schema/);
    expect(() => compileAnswerSchema({ type: 'object', requried: ['a'] })).toThrow(/unknown keyword: "requried"/);
  });

  it('refuses at manifest load a schema with a remote $ref, and a reasoningEffort that is not low, medium or high', () => {
    const withSchema = (schema: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      agent({ name: 'typed', steps: [{ model: { provider: 'local', prompt: 'p', schema, ...extra } }], grants: [{ kind: 'model', name: 'local' }] });
    expect(() => withSchema({ type: 'object', properties: { a: { $ref: 'https://evil.example/s.json#/x' } } })).toThrow(ManifestError);
    expect(() => withSchema({ type: 'object', properties: { a: { $ref: 'https://evil.example/s.json#/x' } } })).toThrow(/steps\.0\.model\.schema: only local references.*https:\/\/evil\.example\/s\.json#\/x/);
    expect(() => withSchema(SCHEMA, { reasoningEffort: 'extreme' })).toThrow(/reasoningEffort must be low, medium or high/);
    expect(withSchema(SCHEMA, { reasoningEffort: 'high' }).manifest.steps[0]).toMatchObject({ model: { schema: SCHEMA, reasoningEffort: 'high' } });
  });
});

describe('checking an answer', () => {
  it('names the rule that failed: type, required, an extra property (clipped)', () => {
    expect(checkStructuredAnswer({ text: '{"answer":"seven"}', truncated: false }, SCHEMA)).toEqual({ ok: false, problem: "the answer does not match the step's schema: /answer must be number (type)" });
    expect(checkStructuredAnswer({ text: '{"reason":"x"}', truncated: false }, SCHEMA)).toEqual({ ok: false, problem: "the answer does not match the step's schema: / must have required property 'answer' (required)" });
    const extra = checkStructuredAnswer({ text: `{"answer":1,"${'x'.repeat(100)}":2}`, truncated: false }, SCHEMA);
    expect(extra).toEqual({ ok: false, problem: `the answer does not match the step's schema: / must NOT have additional properties (additionalProperties: "${'x'.repeat(40)}")` });
  });

  it('says why an answer is not JSON without quoting it; a cut answer says to raise maxTokens', () => {
    const prose = checkStructuredAnswer({ text: 'Seven, because the invoice NIGHTJAR-7731 says so.', truncated: false }, SCHEMA);
    expect(prose).toEqual({ ok: false, problem: "the answer is not JSON (a syntax error), but the step's schema asks for a JSON object" });
    expect(checkStructuredAnswer({ text: '', truncated: false }, SCHEMA)).toMatchObject({ ok: false, problem: expect.stringContaining('it is empty') as unknown });
    expect(checkStructuredAnswer({ text: '{"answer": 4', truncated: true }, SCHEMA)).toEqual({ ok: false, problem: "the answer was cut off at maxTokens before it was whole JSON: raise the step's maxTokens" });
    expect(checkStructuredAnswer({ text: '{"answer":', truncated: false }, SCHEMA)).toMatchObject({ ok: false, problem: expect.stringContaining('it ends before the JSON is complete') as unknown });
    expect(checkStructuredAnswer({ text: '{answer: 4}', truncated: false }, SCHEMA)).toMatchObject({ ok: false, problem: expect.stringContaining('a syntax error at position 1') as unknown });
  });
});

/** A provider answering `text` (usage 100 in, 20 out), recording every request it is sent. */
function scripted(text: string): ModelProvider & { seen: ModelRequest[] } {
  const seen: ModelRequest[] = [];
  return {
    id: 'typed',
    seen,
    profile: { provider: 'typed', driver: 'scripted/1', endpoint: 'in-test', streaming: false, label: 'scripted', defaultModel: 'typed-default' },
    pricing: PRICE,
    complete(request: ModelRequest): Promise<Completion> {
      seen.push(request);
      return Promise.resolve({ text, usage: { inputTokens: 100, outputTokens: 20, reasoningTokens: 0 }, model: 'typed-default-2025', truncated: false, toolCalls: [], stopReason: 'end' });
    },
  };
}

function typedAgent(provider: string, extra: Record<string, unknown> = {}) {
  return agent({
    name: 'typed',
    steps: [
      { as: 'verdict', model: { provider, prompt: 'How many invoices are overdue?', schema: SCHEMA, ...extra } },
      { output: 'overdue: {{steps.verdict.answer}}' },
    ],
    grants: [{ kind: 'model', name: provider }],
  });
}

const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close().catch(() => undefined);
});

async function open(provider: ModelProvider, extra: Record<string, unknown> = {}): Promise<Plane> {
  const p = await testPlane({ dataDir: tempDataDir('ap-structured-'), agents: [typedAgent(provider.id, extra)], providers: new Map([[provider.id, provider]]) });
  planes.push(p);
  return p;
}

async function modelRecords(p: Plane, runId: string) {
  const records = await p.journal.readRun(runId, 1, 1_000);
  return { started: records.find((r) => r.kind === 'EffectStarted' && r.body.effect === 'model'), outcome: records.find((r) => (r.kind === 'EffectDone' || r.kind === 'EffectFailed') && r.body.step === 0) };
}

describe('a model step with a schema', () => {
  it('runs keyless: the local model answers JSON the schema accepts, and the step result is the parsed object', async () => {
    const p = await open(createLocalProvider());
    const run = await call(p, 'runs.start', { agent: 'typed', input: {}, wait: true });
    // `answer` is a number: the local model puts its answer's word count there ("[local model]
    // Summary: How many invoices are overdue?" is 8 words).
    expect(run).toMatchObject({ status: 'sealed', outcome: 'succeeded', result: 'overdue: 8' });
  });

  it('sends the schema and effort, journals the model asked, and makes the parsed answer the step result', async () => {
    const provider = scripted('{"answer": 7, "reason": "three are past due"}');
    const p = await open(provider, { reasoningEffort: 'high' });
    const run = await call(p, 'runs.start', { agent: 'typed', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'succeeded', result: 'overdue: 7' });
    expect(provider.seen[0]).toMatchObject({ responseSchema: SCHEMA, reasoningEffort: 'high', model: '' });
    const { started } = await modelRecords(p, run.runId);
    // The record names the model that was asked (the provider's default here), and the key covers schema and effort.
    expect(started?.body.request).toMatchObject({ provider: { id: 'typed' }, model: 'typed-default', responseSchema: SCHEMA, reasoningEffort: 'high' });
  });

  it('refuses an answer that breaks the schema, naming the rule, and bills it (Landed)', async () => {
    const p = await open(scripted('{"answer": "seven"}'));
    const run = await call(p, 'runs.start', { agent: 'typed', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'failed' });
    expect(run.error?.message).toContain("the answer does not match the step's schema: /answer must be number (type)");
    const { outcome } = await modelRecords(p, run.runId);
    expect(outcome?.kind).toBe('EffectFailed');
    expect(outcome?.body).toMatchObject({ disposition: 'Landed', error: { code: 'StructuredOutputInvalid' }, spend: { effects: 1, inputTokens: 100, outputTokens: 20, costMicros: 600 } });
    expect(run.spend).toMatchObject({ inputTokens: 100, outputTokens: 20, costMicros: 600 });
  });

  it('refuses an answer that is not JSON, billed too', async () => {
    const p = await open(scripted('Seven of them.'));
    const run = await call(p, 'runs.start', { agent: 'typed', input: {}, wait: true });
    expect(run.error?.message).toContain('the answer is not JSON');
    expect(run.spend.costMicros).toBe(600);
  });
});

describe('a schema in a tool loop', () => {
  it('checks only the final answer: a turn asking for a tool is not the answer yet', async () => {
    const turns: Completion[] = [
      { text: '', usage: { inputTokens: 50, outputTokens: 5, reasoningTokens: 0 }, model: null, truncated: false, toolCalls: [{ id: 'call-1', name: 'not_a_tool', arguments: {} }], stopReason: 'tool_calls' },
      { text: '{"answer": 3}', usage: { inputTokens: 80, outputTokens: 6, reasoningTokens: 0 }, model: null, truncated: false, toolCalls: [], stopReason: 'end' },
    ];
    const provider: ModelProvider = { ...scripted(''), complete: () => Promise.resolve(turns.shift()!) };
    const looped = agent({
      name: 'typed',
      steps: [{ as: 'verdict', model: { provider: provider.id, prompt: 'Count them.', schema: SCHEMA, tools: ['peer:beta/ask'] } }, { output: 'overdue: {{steps.verdict.answer}}' }],
      grants: [{ kind: 'model', name: provider.id }, { kind: 'peer', name: 'beta', skills: ['ask'] }],
    });
    const p = await testPlane({ dataDir: tempDataDir('ap-structured-'), agents: [looped], providers: new Map([[provider.id, provider]]) });
    planes.push(p);
    const run = await call(p, 'runs.start', { agent: 'typed', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'succeeded', result: 'overdue: 3' });
    expect(turns).toHaveLength(0);
  });
});

describe('structured output through Anthropic’s forced tool (the fake)', () => {
  let fake: FakeAnthropicServer;
  beforeAll(async () => {
    fake = await startFakeAnthropicServer();
  });
  afterAll(() => fake.close());

  const KEY = 'sk-ant-structured-test-0123456789';

  it('forces the answer tool on the wire and returns the validated object as the step result', async () => {
    const provider = createAnthropicProvider({ baseUrl: fake.baseUrl, apiKey: KEY, model: 'structured' });
    const p = await open(provider);
    const from = fake.requests.length;
    const run = await call(p, 'runs.start', { agent: 'typed', input: {}, wait: true });
    expect(run).toMatchObject({ status: 'sealed', outcome: 'succeeded', result: `overdue: ${FAKE_STRUCTURED.answer}` });
    const body = fake.requests.slice(from).at(-1)?.body as Record<string, unknown>;
    expect(body.tool_choice).toEqual({ type: 'tool', name: ANSWER_TOOL_NAME });
    expect(body.tools).toEqual([expect.objectContaining({ name: ANSWER_TOOL_NAME, input_schema: SCHEMA })]);
    // The key went in its header and nowhere the run's record could carry it.
    expect(JSON.stringify(await p.journal.readRun(run.runId, 1, 1_000))).not.toContain(KEY);
  });
});
