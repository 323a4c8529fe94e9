/**
 * The embedded local model: a deterministic function of the messages, honest word-count usage,
 * maxTokens respected and said, and `!fail:` directives that drive every rung of the failure
 * ladder with the right disposition and the right bill.
 */
import { describe, expect, it } from 'vitest';
import type { Disposition } from '../../src-shared/vocabulary/effects';
import { type ModelErrorKind, type ModelRequest, ModelError, costOf } from '../runtime/model-provider';
import { createLocalProvider, LOCAL_MODEL } from './local-provider';

const provider = createLocalProvider();

function ask(content: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model: 'anything',
    maxTokens: 256,
    messages: [
      { role: 'system', content: 'You are a careful reviewer.' },
      { role: 'user', content },
    ],
    ...extra,
  };
}

async function failure(request: ModelRequest): Promise<ModelError> {
  const error = await provider.complete(request).then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

describe('local provider', () => {
  it('describes itself as local, deterministic and free', () => {
    expect(provider.id).toBe('local');
    expect(provider.profile).toEqual({
      provider: 'local',
      driver: 'local-deterministic/1',
      endpoint: 'in-process',
      streaming: false,
      label: 'Local deterministic model (no network, no key)',
    });
    expect(provider.pricing).toEqual({ inputPerMTokMicros: 0, outputPerMTokMicros: 0 });
  });

  it('answers with a prefixed summary of the first sentence, the same bytes every time', async () => {
    const request = ask('Review the pull request for the billing module. It touches the ledger and the invoices.');
    const first = await provider.complete(request);
    const again = await createLocalProvider().complete(structuredClone(request));
    expect(first).toEqual({
      text: '[local model] Summary: Review the pull request for the billing module.',
      // 5 system words + 15 user words in; 3 prefix words + 8 summary words out.
      usage: { inputTokens: 20, outputTokens: 11, reasoningTokens: 0 },
      model: LOCAL_MODEL,
      truncated: false,
    });
    expect(JSON.stringify(again)).toBe(JSON.stringify(first));
    expect(costOf(first.usage, provider.pricing)).toBe(0);
  });

  it('answers from the last user message, and a different input gives a different answer', async () => {
    const request: ModelRequest = {
      model: 'x',
      maxTokens: 100,
      messages: [
        { role: 'user', content: 'First question here.' },
        { role: 'assistant', content: 'An earlier answer.' },
        { role: 'user', content: 'Second   question,\n with odd   spacing' },
      ],
    };
    const completion = await provider.complete(request);
    // A conversation: the answer names its turn and what it remembers of the first one.
    expect(completion.text).toBe('[local model] (turn 2; earlier: First question here.) Summary: Second question, with odd spacing');
    expect(completion.usage.inputTokens).toBe(3 + 3 + 5);
    expect((await provider.complete(ask('Something else entirely.'))).text).not.toBe(completion.text);
  });

  it('caps a long sentence at 24 words and marks the cut with an ellipsis', async () => {
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`);
    const completion = await provider.complete(ask(words.join(' ')));
    expect(completion.text).toBe(`[local model] Summary: ${words.slice(0, 23).join(' ')} w23…`);
    expect(completion.usage.outputTokens).toBe(2 + 1 + 24);
    expect(completion.truncated).toBe(false);
  });

  it('respects maxTokens in words and says the answer was cut', async () => {
    const completion = await provider.complete(ask('Review the pull request for the billing module.', { maxTokens: 4 }));
    expect(completion).toEqual({
      text: '[local model] Summary: Review',
      usage: { inputTokens: 13, outputTokens: 4, reasoningTokens: 0 },
      model: LOCAL_MODEL,
      truncated: true,
    });
    const exact = await provider.complete(ask('One two three.', { maxTokens: 6 }));
    expect(exact.text).toBe('[local model] Summary: One two three.');
    expect(exact.truncated).toBe(false);
  });

  it('says so when there is nothing to summarise', async () => {
    const completion = await provider.complete({ model: 'x', maxTokens: 10, messages: [{ role: 'user', content: '   ' }] });
    expect(completion.text).toBe('[local model] (nothing to summarise)');
    expect(completion.usage).toEqual({ inputTokens: 0, outputTokens: 5, reasoningTokens: 0 });
  });

  it('refuses a request no provider would take: no messages, maxTokens below one', async () => {
    for (const request of [
      { model: 'x', maxTokens: 10, messages: [] },
      ask('hello', { maxTokens: 0 }),
      ask('hello', { maxTokens: 1.5 }),
    ]) {
      const error = await failure(request);
      expect(error.kind).toBe('refused');
      expect(error.disposition).toBe('DidNotHappen');
    }
  });

  it('treats a signal already aborted as a call that never ran', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await provider.complete(ask('hello'), controller.signal).catch((caught: unknown) => caught as ModelError);
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ kind: 'unavailable', usage: null, disposition: 'DidNotHappen' });
  });

  describe('directives', () => {
    const cases: { directive: string; kind: ModelErrorKind; disposition: Disposition }[] = [
      { directive: '!fail:refused', kind: 'refused', disposition: 'DidNotHappen' },
      { directive: '!fail:unavailable', kind: 'unavailable', disposition: 'DidNotHappen' },
      { directive: '!fail:interrupted', kind: 'interrupted', disposition: 'Landed' },
      { directive: '!fail:unaccounted', kind: 'unaccounted', disposition: 'Landed' },
    ];
    for (const { directive, kind, disposition } of cases) {
      it(`${directive} fails as ${kind} (${disposition})`, async () => {
        const error = await failure(ask(`  ${directive} Summarise the incident report.`));
        expect(error.kind).toBe(kind);
        expect(error.disposition).toBe(disposition);
        expect(error.message).toContain(directive);
        expect(error.retryAfterMs).toBeNull();
        if (kind === 'interrupted') {
          // Billed for the 5 + 5 input words (the directive is a word the model read) and the 7 words the answer would have had.
          expect(error.usage).toEqual({ inputTokens: 10, outputTokens: 7, reasoningTokens: 0 });
        } else {
          expect(error.usage).toBeNull();
        }
      });
    }

    it('bills an interrupted call no more than maxTokens of output', async () => {
      const error = await failure(ask('!fail:interrupted Summarise the incident report.', { maxTokens: 3 }));
      expect(error.usage).toEqual({ inputTokens: 10, outputTokens: 3, reasoningTokens: 0 });
    });

    it('refuses an unknown directive rather than quietly answering', async () => {
      const error = await failure(ask('!fail:explode now'));
      expect(error.kind).toBe('refused');
      expect(error.message).toContain('unknown directive !fail:explode');
    });

    it('reads a directive only from the last user message', async () => {
      const completion = await provider.complete({
        model: 'x',
        maxTokens: 50,
        messages: [
          { role: 'user', content: '!fail:refused' },
          { role: 'assistant', content: 'refused' },
          { role: 'user', content: 'Try again please.' },
        ],
      });
      expect(completion.text).toBe('[local model] (turn 2; earlier: !fail:refused) Summary: Try again please.');
      const midMessage = await provider.complete(ask('Please do not !fail:refused here.'));
      expect(midMessage.text).toBe('[local model] Summary: Please do not !fail:refused here.');
    });
  });
  describe('structured output', () => {
    const schema = {
      type: 'object',
      properties: {
        title: { type: 'string' },
        note: { type: 'string' },
        words: { type: 'integer' },
        level: { enum: ['low', 'high'] },
        done: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
      },
      required: ['title', 'words'],
    };

    it('answers with JSON shaped by the schema, the same bytes every time', async () => {
      const request = { ...ask('Summarise the incident report. It was long.'), responseSchema: schema };
      const first = await provider.complete(request);
      expect(JSON.parse(first.text)).toEqual({
        title: '[local model] Summary: Summarise the incident report.',
        note: '[local model]',
        words: 7,
        level: 'low',
        done: false,
        tags: ['[local model]'],
      });
      expect(first.truncated).toBe(false);
      expect((await provider.complete(request)).text).toBe(first.text);
    });

    it('is never cut at maxTokens (half a JSON document is no answer)', async () => {
      const completion = await provider.complete({ ...ask('Summarise the incident report.', { maxTokens: 2 }), responseSchema: schema });
      expect(() => JSON.parse(completion.text)).not.toThrow();
      expect(completion.truncated).toBe(false);
    });
  });
});
