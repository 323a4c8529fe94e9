import { describe, expect, it } from 'vitest';
import { addSpend, ceilingCrossed, NO_SPEND, tokensOf, usedAgainst, type Spend } from './spend';

const spend = (s: Partial<Spend>): Spend => ({ ...NO_SPEND, ...s });

describe('spend arithmetic', () => {
  it('adds every field, and an unaccounted spend stays unaccounted', () => {
    const a = spend({ effects: 1, inputTokens: 10, outputTokens: 5, reasoningTokens: 2, costMicros: 7 });
    const b = spend({ effects: 2, inputTokens: 1, outputTokens: 1, reasoningTokens: 1, costMicros: 1, unaccounted: true });
    expect(addSpend(a, b)).toEqual({ effects: 3, inputTokens: 11, outputTokens: 6, reasoningTokens: 3, costMicros: 8, unaccounted: true });
    expect(addSpend(a, a)).not.toHaveProperty('unaccounted');
    expect(tokensOf(a)).toBe(17);
    expect([usedAgainst(a, 'effects'), usedAgainst(a, 'tokens'), usedAgainst(a, 'cost')]).toEqual([1, 17, 7]);
  });

  it('a ceiling holds at its value and is crossed past it, checked before the effect', () => {
    const spent = spend({ effects: 2, inputTokens: 90 });
    expect(ceilingCrossed(spent, spend({ inputTokens: 10 }), { maxTokens: 100 })).toBeNull();
    expect(ceilingCrossed(spent, spend({ inputTokens: 11 }), { maxTokens: 100 })).toBe('tokens');
    expect(ceilingCrossed(spent, spend({ effects: 1 }), { maxEffects: 2 })).toBe('effects');
    expect(ceilingCrossed(spent, spend({ costMicros: 1 }), { maxCostMicros: 0 })).toBe('cost');
    // Several crossed: the first in CeilingSchema's order (effects, tokens, cost).
    expect(ceilingCrossed(spent, spend({ effects: 1, inputTokens: 50, costMicros: 5 }), { maxEffects: 1, maxTokens: 1, maxCostMicros: 1 })).toBe('effects');
    expect(ceilingCrossed(spent, spend({ effects: 100 }), {})).toBeNull();
  });
});
