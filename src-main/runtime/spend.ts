/**
 * Spend arithmetic and budget ceilings. Spend is derived from the journal (the sum of every
 * EffectDone and EffectFailed's spend), never kept beside it: a failed call is billed for what
 * it burned, and a replayed run reaches the same verdict as the original because the record of
 * what each failure consumed is in the journal too.
 *
 * Ceilings are checked before each effect against what has been spent plus what the next
 * effect may cost (a model call's prompt and its max_tokens), so a ceiling holds rather than
 * being noticed one call too late.
 */
import type { Spend } from '../../src-shared/journal/records';

export type Budget = { maxEffects?: number; maxTokens?: number; maxCostMicros?: number };
export type Ceiling = 'effects' | 'tokens' | 'cost';

export const NO_SPEND: Spend = { effects: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 };

export function addSpend(a: Spend, b: Spend): Spend {
  const sum: Spend = {
    effects: a.effects + b.effects,
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    reasoningTokens: a.reasoningTokens + b.reasoningTokens,
    costMicros: a.costMicros + b.costMicros,
  };
  if (a.unaccounted || b.unaccounted) sum.unaccounted = true;
  return sum;
}

export const tokensOf = (s: Spend): number => s.inputTokens + s.outputTokens + s.reasoningTokens;

/** The first ceiling that `spent + next` would pass, or null when it stays within the budget. */
export function ceilingCrossed(spent: Spend, next: Spend, budget: Budget): Ceiling | null {
  const after = addSpend(spent, next);
  if (budget.maxEffects !== undefined && after.effects > budget.maxEffects) return 'effects';
  if (budget.maxTokens !== undefined && tokensOf(after) > budget.maxTokens) return 'tokens';
  if (budget.maxCostMicros !== undefined && after.costMicros > budget.maxCostMicros) return 'cost';
  return null;
}
