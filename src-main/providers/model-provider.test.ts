import { describe, expect, it } from 'vitest';
import { costOf, ModelError, scrubEchoes, trimProviderError } from '../runtime/model-provider';

describe('provider error text', () => {
  const prompt = 'Please summarise the confidential merger memo between Acme and Globex dated March';

  it('removes an echoed prompt wherever the echo starts, and bounds the length', () => {
    for (let offset = 0; offset < 20; offset++) {
      const echo = prompt.slice(offset, offset + 30);
      const text = `invalid request: "${echo}" is too long`;
      const trimmed = trimProviderError(text, [prompt]);
      expect(trimmed).not.toContain(echo.slice(0, 12));
      expect(trimmed).toContain('[prompt]');
    }
    expect(trimProviderError('x'.repeat(10_000)).length).toBeLessThanOrEqual(201);
    expect(trimProviderError('line one\n  line two')).toBe('line one line two');
  });

  it('leaves text alone that shares nothing long with the prompt', () => {
    expect(trimProviderError('model not found', [prompt])).toBe('model not found');
    expect(scrubEchoes('abc', ['abcdefghijklmnop'], '*')).toBe('abc');
  });
});

describe('metering', () => {
  it('rounds cost up, so nothing is billed below what was consumed', () => {
    expect(costOf({ inputTokens: 1, outputTokens: 0, reasoningTokens: 0 }, { inputPerMTokMicros: 1, outputPerMTokMicros: 1 })).toBe(1);
    expect(costOf({ inputTokens: 1_000_000, outputTokens: 500_000, reasoningTokens: 500_000 }, { inputPerMTokMicros: 2, outputPerMTokMicros: 10 })).toBe(12);
  });

  it('maps error kinds to dispositions', () => {
    expect(new ModelError('refused', 'x').disposition).toBe('DidNotHappen');
    expect(new ModelError('unavailable', 'x').disposition).toBe('DidNotHappen');
    expect(new ModelError('interrupted', 'x').disposition).toBe('Landed');
    expect(new ModelError('unaccounted', 'x').disposition).toBe('Landed');
  });
});
