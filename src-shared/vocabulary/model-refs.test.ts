/**
 * `provider:model`, one way everywhere: the model asked, and the model that answered when the
 * provider's own word names another; pairing a run's records into its model calls.
 */
import { describe, expect, it } from 'vitest';
import { answeredModelOf, modelCallsOf, modelCallWords, modelRef, readModelRequest } from './model-refs';

const started = (step: number, provider: string, model: string) => ({ kind: 'EffectStarted', body: { step, effect: 'model', name: provider, key: `k${step}`, request: { provider: { id: provider, label: 'x' }, model, messages: [] } } });

describe('model references', () => {
  it('reads provider:model, the provider alone when no model is named', () => {
    expect(modelRef('anthropic', 'claude-sonnet-4-5')).toBe('anthropic:claude-sonnet-4-5');
    expect(modelRef('local', '')).toBe('local');
    expect(modelRef('local', null)).toBe('local');
  });

  it('shows the model that answered only when it is another', () => {
    expect(modelCallWords('anthropic', 'claude-sonnet-4-5', 'claude-sonnet-4-5-20250929')).toBe('anthropic:claude-sonnet-4-5 → claude-sonnet-4-5-20250929');
    expect(modelCallWords('anthropic', 'claude-sonnet-4-5', 'claude-sonnet-4-5')).toBe('anthropic:claude-sonnet-4-5');
    // A wire naming no model: only what was asked (nothing looked, so nothing is claimed).
    expect(modelCallWords('gemini', 'gemini-2.5-flash', null)).toBe('gemini:gemini-2.5-flash');
    // Gemini's `models/` prefix is the same model.
    expect(modelCallWords('gemini', 'gemini-2.5-flash', 'models/gemini-2.5-flash')).toBe('gemini:gemini-2.5-flash');
    // Nothing named (an old record, a provider without a default): the model that answered is the model.
    expect(modelCallWords('chat', '', 'llama3.1:8b')).toBe('chat:llama3.1:8b');
    expect(modelCallWords('chat', '', null)).toBe('chat');
  });

  it('reads a model request and an answer, and nothing from other effects', () => {
    expect(readModelRequest('model', { provider: { id: 'openai', label: 'OpenAI' }, model: 'gpt-5' })).toEqual({ provider: 'openai', model: 'gpt-5' });
    expect(readModelRequest('peer', { provider: { id: 'openai' }, model: 'gpt-5' })).toBeNull();
    expect(readModelRequest('model', { model: 'gpt-5' })).toBeNull();
    expect(answeredModelOf({ text: 'hi', model: 'gpt-5-2025-08-07' })).toBe('gpt-5-2025-08-07');
    expect(answeredModelOf({ text: 'hi', model: null })).toBeNull();
    expect(answeredModelOf('hi')).toBeNull();
  });

  it('pairs a run’s records into its model calls: answered, failed, still open; other effects skipped', () => {
    const records = [
      started(0, 'anthropic', 'claude-sonnet-4-5'),
      { kind: 'EffectDone', body: { step: 0, key: 'k0', result: { text: 'a', model: 'claude-sonnet-4-5-20250929' } } },
      { kind: 'EffectStarted', body: { step: 1, effect: 'peer', name: 'beta', key: 'k1', request: {} } },
      { kind: 'EffectDone', body: { step: 1, key: 'k1', result: { model: 'not-a-model-call' } } },
      started(2, 'openai', 'gpt-5'),
      { kind: 'EffectFailed', body: { step: 2, key: 'k2', disposition: 'Landed', error: { code: 'StructuredOutputInvalid', message: '/answer must be number (type)' } } },
      started(3, 'gemini', 'gemini-2.5-flash'),
    ];
    expect(modelCallsOf(records)).toEqual([
      { step: 0, provider: 'anthropic', requested: 'claude-sonnet-4-5', answered: 'claude-sonnet-4-5-20250929', error: null },
      { step: 2, provider: 'openai', requested: 'gpt-5', answered: null, error: 'StructuredOutputInvalid: /answer must be number (type)' },
      { step: 3, provider: 'gemini', requested: 'gemini-2.5-flash', answered: null, error: null },
    ]);
  });
});
