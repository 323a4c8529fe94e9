/**
 * A model call as an effect. The prompt and the provider's request profile are in the key, so
 * an edited template or a reconfigured provider shows up on replay as divergence. The record
 * names the provider and its label (the local deterministic model says so in every record).
 * A failure is billed for what it consumed (see providers/model-provider.ts for the ladder).
 * A message longer than LARGE_VALUE_BYTES is journaled as its digest and size (see
 * large-values.ts): the key still covers it, through the digest, and the journal does not grow
 * by a document per call.
 */
import type { Spend } from '../../src-shared/vocabulary/spend';
import { costOf, ModelError, type Completion, type ModelProvider, type ModelRequest, type ModelUsage } from './model-provider';
import { journaledText } from './large-values';
import type { RunContext } from './run-context';
import { EffectFailure } from './run-signals';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';

/** Rough token estimate for a ceiling check before the call: words plus a margin. */
export function estimateTokens(text: string): number {
  const words = text.split(/\s+/).filter(Boolean).length;
  return Math.ceil(words * 1.3) + 4;
}

export function spendOf(usage: ModelUsage | null, provider: ModelProvider, unaccounted = false): Spend {
  if (!usage) return { ...NO_SPEND, effects: 1, ...(unaccounted ? { unaccounted: true } : {}) };
  return { effects: 1, ...usage, costMicros: costOf(usage, provider.pricing), ...(unaccounted ? { unaccounted: true } : {}) };
}

export async function callModel(cx: RunContext, provider: ModelProvider, request: ModelRequest): Promise<Completion> {
  const promptTokens = request.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
  const estimateUsage = { inputTokens: promptTokens, outputTokens: request.maxTokens, reasoningTokens: 0 };
  const result = await cx.effect({
    effect: 'model',
    name: provider.id,
    request: {
      provider: { id: provider.id, label: provider.profile.label },
      model: request.model,
      messages: request.messages.map((m) => ({ ...m, content: journaledText(m.content) })),
      maxTokens: request.maxTokens,
    },
    destination: provider.profile.endpoint,
    identity: provider.profile,
    grant: `model:${provider.id}`,
    estimate: { effects: 1, ...estimateUsage, costMicros: costOf(estimateUsage, provider.pricing) },
    async perform() {
      try {
        const completion = await provider.complete(request);
        return { result: completion, spend: spendOf(completion.usage, provider), provenance: `model:${provider.id}` };
      } catch (error) {
        if (error instanceof ModelError) {
          const billed =
            error.kind === 'refused' || error.kind === 'unavailable' ? NO_SPEND : spendOf(error.usage, provider, error.kind === 'unaccounted');
          throw Object.assign(new EffectFailure(`Model${error.kind[0]!.toUpperCase()}${error.kind.slice(1)}`, error.message, error.disposition), { spend: billed });
        }
        throw error;
      }
    },
  });
  return result as Completion;
}
