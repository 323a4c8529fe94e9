/**
 * Time travel in words: a dry replay's answer, where two runs part, values by digest, the spend
 * difference, and the time-travel records (RunForked, EffectReused) in the timeline.
 */
import { describe, expect, it } from 'vitest';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { stepHeading, stepOf } from './effect-timing';
import { KIND_LABELS, summarizeRecord } from './record-summary';
import { byteSize, diffDivergenceWords, modelOverrideProblem, parseOptionalJson, replayWords, sideOutcome, spendDifferenceWords, valueWords } from './run-diff';

const PARENT = `run-${'a'.repeat(20)}`;
const NO = { effects: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 };
const record = (seq: number, kind: string, body: Record<string, unknown>): RecordView =>
  ({ seq, kind, v: 1, runId: 'run-1', time: '2026-01-01T00:00:00.000Z', body, prevHash: '', hash: '', known: true }) as unknown as RecordView;

describe('dry replay and comparison in words', () => {
  it('a replay says there is no divergence across its steps, or where, why and what', () => {
    expect(replayWords({ divergesAt: null, steps: 3 })).toBe('No divergence across 3 steps');
    expect(replayWords({ divergesAt: null, steps: 1 })).toBe('No divergence across 1 step');
    expect(replayWords({ divergesAt: { step: 1, reason: 'arguments', message: 'the prompt differs' }, steps: 3 })).toBe('Would diverge at step 1 (arguments): the prompt differs');
  });

  it('a comparison says where two runs part, or that every step is the same', () => {
    expect(diffDivergenceWords(null, 10_000)).toBe('The same across all 10,000 steps');
    expect(diffDivergenceWords({ step: 2, reason: 'missing', message: 'b has no step 2' }, 3)).toBe('They part at step 2 (missing): b has no step 2');
  });

  it('a small value is shown; a large one by digest and size, to open', () => {
    expect(valueWords({ digest: 'f'.repeat(64), size: 9, value: { a: 1 } })).toEqual({ text: '{"a":1}', large: false });
    // A value that is JSON null is a value, not an absent one.
    expect(valueWords({ digest: 'f'.repeat(64), size: 4, value: null })).toEqual({ text: 'null', large: false });
    expect(valueWords({ digest: `0123abcd${'e'.repeat(52)}9876`, size: 48_213 })).toEqual({ text: 'sha256 0123abcd…9876 · 48.2 kB', large: true });
    expect(byteSize(812)).toBe('812 B');
    expect(byteSize(2_500_000)).toBe('2.5 MB');
  });

  it('a side ends with its result, its failure, or not yet', () => {
    const side = { effect: 'model', name: 'local', key: 'k', request: { digest: 'd', size: 2, value: {} }, spend: NO, fromParent: false, seq: 4 };
    expect(sideOutcome({ ...side, result: { digest: 'd', size: 4, value: 'hi' }, failed: null }).text).toBe('"hi"');
    expect(sideOutcome({ ...side, result: null, failed: { code: 'AP_MODEL', disposition: 'Landed', message: 'stream died' } }).text).toBe('failed (Landed) AP_MODEL: stream died');
    expect(sideOutcome({ ...side, result: null, failed: null }).text).toBe('not ended');
  });

  it('the spend difference is signed, field by field', () => {
    expect(spendDifferenceWords({ ...NO })).toBe('no difference');
    expect(spendDifferenceWords({ effects: -1, inputTokens: 10, outputTokens: 2, reasoningTokens: 0, costMicros: 0 })).toBe('+12 tokens, −1 effect, $0');
  });

  it('the fork and replay forms check the model as provider:model and the input as JSON, empty meaning unchanged', () => {
    expect(modelOverrideProblem('')).toBeNull();
    expect(modelOverrideProblem('local:tiny')).toBeNull();
    expect(modelOverrideProblem('gpt-4o')).toMatch(/provider:model/);
    expect(parseOptionalJson('  ')).toEqual({ ok: true, value: undefined });
    expect(parseOptionalJson('{"topic":"boats"}')).toEqual({ ok: true, value: { topic: 'boats' } });
    expect(parseOptionalJson('{topic')).toMatchObject({ ok: false, error: expect.stringMatching(/^The input is not JSON/) });
  });
});

describe('time-travel records in the timeline', () => {
  it('a fork’s RunForked says whose fork it is, where, and what changed', () => {
    expect(KIND_LABELS.RunForked).toBe('Forked');
    expect(summarizeRecord(record(2, 'RunForked', { parent: PARENT, step: 1, changed: { input: true, manifest: false, model: 'local:tiny' } }))).toBe(
      `fork of ${PARENT} at step 1 · changed: input, model local:tiny`,
    );
    expect(summarizeRecord(record(2, 'RunForked', { parent: PARENT, step: 0, changed: { input: false, manifest: false, model: null } }))).toBe(`fork of ${PARENT} at step 0 · nothing changed`);
    // It is the run's record, not its fork step's: it heads no step group and offers no fork.
    expect(stepOf(record(2, 'RunForked', { parent: PARENT, step: 1, changed: {} }))).toBeNull();
  });

  it('a reused step says it was taken from the parent and nothing was performed, in its row and its heading', () => {
    const step = (n: number) => ({ step: n, effect: 'tool', name: 'file.read', key: `k${n}`, request: { path: 'a.txt' }, result: { text: 'hello' }, provenance: 'tool:file.read', from: { runId: PARENT, seq: 7 + n, hash: 'h' } });
    const reused = record(3, 'EffectReused', { steps: [step(0)] });
    expect(KIND_LABELS.EffectReused).toBe('Taken from parent');
    expect(summarizeRecord(reused)).toBe(`tool file.read · taken from ${PARENT} (nothing performed), its seq 7 · {"text":"hello"}`);
    expect(stepOf(reused)).toBe(0);
    expect(stepHeading({ 0: [reused] }, reused)).toBe(`tool file.read · taken from ${PARENT} (nothing performed)`);
    // Several reused steps share one record, which belongs to the run and says which steps it holds.
    const many = record(4, 'EffectReused', { steps: [step(0), step(1), step(2)] });
    expect(stepOf(many)).toBeNull();
    expect(summarizeRecord(many)).toBe(`steps 0–2, 3 effects · taken from ${PARENT} (nothing performed)`);
  });
});
