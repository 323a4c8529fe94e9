/**
 * Spend and budgets: what a run has consumed, the ceilings it is held to, and the arithmetic
 * over both. One home, so the runtime's verdict, the plane's spend summary, the CLI's line and
 * the UI's meters add the same numbers the same way.
 *
 * Spend is derived from the journal (the sum of every EffectDone's and EffectFailed's spend),
 * never kept beside it: a failed call is billed for what it burned, and a replayed run reaches
 * the same verdict as the original because what each failure consumed is recorded too.
 * Costs are integers in micro-units of the currency (no floats in hashed records).
 *
 * Ceilings are checked before each effect against what has been spent plus what the next
 * effect may cost (a model call's prompt and its max_tokens), so a ceiling holds rather than
 * being noticed one call too late.
 */
import { z } from 'zod';

const Count = z.number().int().nonnegative();

export const SpendSchema = z.object({
  effects: Count,
  inputTokens: Count,
  outputTokens: Count,
  reasoningTokens: Count,
  /** Cost in micro-units of `currency` (1 USD = 1,000,000). */
  costMicros: Count,
  /** True when a provider consumed tokens it never reported (a stream cut before usage). */
  unaccounted: z.boolean().optional(),
});
export type Spend = z.infer<typeof SpendSchema>;

/** A run's ceilings; an absent one does not limit. */
export const BudgetSchema = z.object({
  maxEffects: Count.optional(),
  maxTokens: Count.optional(),
  maxCostMicros: Count.optional(),
});
export type Budget = z.infer<typeof BudgetSchema>;

/** Which ceiling a spend reached. */
export const CeilingSchema = z.enum(['effects', 'tokens', 'cost']);
export type Ceiling = z.infer<typeof CeilingSchema>;

/** The budget field that holds each ceiling. */
export const BUDGET_FIELD: { readonly [C in Ceiling]: keyof Budget } = { effects: 'maxEffects', tokens: 'maxTokens', cost: 'maxCostMicros' };

export const NO_SPEND: Spend = { effects: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 };

/** Every token a provider billed: prompt, completion and reasoning. */
export function tokensOf(spend: Pick<Spend, 'inputTokens' | 'outputTokens' | 'reasoningTokens'>): number {
  return spend.inputTokens + spend.outputTokens + spend.reasoningTokens;
}

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

/** What a ceiling measures in a spend: effects, all tokens, or cost in micro-units. */
export function usedAgainst(spend: Spend, ceiling: Ceiling): number {
  switch (ceiling) {
    case 'effects':
      return spend.effects;
    case 'tokens':
      return tokensOf(spend);
    case 'cost':
      return spend.costMicros;
  }
}

/** The first ceiling (in CeilingSchema's order) that `spent + next` would pass, or null when it stays within the budget. */
export function ceilingCrossed(spent: Spend, next: Spend, budget: Budget): Ceiling | null {
  const after = addSpend(spent, next);
  for (const ceiling of CeilingSchema.options) {
    const limit = budget[BUDGET_FIELD[ceiling]];
    if (limit !== undefined && usedAgainst(after, ceiling) > limit) return ceiling;
  }
  return null;
}
