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
import { costOf, ModelError, pricingOf, type Completion, type ModelProvider, type ModelRequest, type ModelUsage } from './model-provider';
import { journaledText } from './large-values';
import type { RunContext } from './run-context';
import { EffectFailure } from './run-signals';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';

/** Rough token estimate for a ceiling check before the call: words plus a margin. */
export function estimateTokens(text: string): number {
  const words = text.split(/\s+/).filter(Boolean).length;
  return Math.ceil(words * 1.3) + 4;
}

/**
 * What a call consumed, priced with the model that ANSWERED (Completion.model, the provider's
 * own word; else the one requested): an alias that resolved to a pricier model is billed as
 * that model. A model with no price is never free (seed 002): its tokens are counted and its
 * spend marked `unaccounted`, as for a bill the wire never gave. Cache tokens are not in
 * Spend's token fields' vocabulary, so they are added to inputTokens (every token counted
 * against a token ceiling) after being priced at their own rates.
 */
export function spendOf(usage: ModelUsage | null, provider: ModelProvider, unaccounted = false, model = ''): Spend {
  if (!usage) return { ...NO_SPEND, effects: 1, ...(unaccounted ? { unaccounted: true } : {}) };
  const pricing = pricingOf(provider, model);
  const inputTokens = usage.inputTokens + (usage.cacheReadTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
  return {
    effects: 1,
    inputTokens,
    outputTokens: usage.outputTokens,
    reasoningTokens: usage.reasoningTokens,
    costMicros: pricing ? costOf(usage, pricing) : 0,
    ...(unaccounted || !pricing ? { unaccounted: true } : {}),
  };
}

/** The model a request names, as priced: the request's, else the provider's default. */
function requestedModel(provider: ModelProvider, request: ModelRequest): string {
  return request.model || provider.profile.defaultModel || '';
}

export async function callModel(cx: RunContext, provider: ModelProvider, request: ModelRequest): Promise<Completion> {
  const promptTokens = request.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
  const estimateUsage = { inputTokens: promptTokens, outputTokens: request.maxTokens, reasoningTokens: 0 };
  const requested = requestedModel(provider, request);
  // The estimate prices the requested model; unpriced, it estimates zero money (the tokens still
  // count against a token ceiling) and the spend that follows says unaccounted.
  const estimatePricing = pricingOf(provider, requested);
  const result = await cx.effect({
    effect: 'model',
    name: provider.id,
    request: {
      provider: { id: provider.id, label: provider.profile.label },
      model: request.model,
      messages: request.messages.map((m) => ({ ...m, content: journaledText(m.content) })),
      maxTokens: request.maxTokens,
      // Only when offered, so a plain call's key is what it always was; the conversation's tool
      // calls, results and continuations are in `messages` above, so the key covers the loop.
      ...(request.tools?.length ? { tools: request.tools } : {}),
      ...(request.toolChoice ? { toolChoice: request.toolChoice } : {}),
    },
    destination: provider.profile.endpoint,
    identity: provider.profile,
    grant: `model:${provider.id}`,
    estimate: { effects: 1, ...estimateUsage, costMicros: estimatePricing ? costOf(estimateUsage, estimatePricing) : 0 },
    async perform() {
      try {
        const completion = await provider.complete(request);
        return { result: completion, spend: spendOf(completion.usage, provider, false, completion.model ?? requested), provenance: `model:${provider.id}` };
      } catch (error) {
        if (error instanceof ModelError) {
          const billed =
            error.kind === 'refused' || error.kind === 'unavailable' ? NO_SPEND : spendOf(error.usage, provider, error.kind === 'unaccounted', requested);
          throw Object.assign(new EffectFailure(`Model${error.kind[0]!.toUpperCase()}${error.kind.slice(1)}`, error.message, error.disposition), { spend: billed });
        }
        throw error;
      }
    },
  });
  return result as Completion;
}
