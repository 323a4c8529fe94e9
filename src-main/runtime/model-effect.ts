/**
 * A model call as an effect. The prompt and the provider's request profile are in the key, so
 * an edited template or a reconfigured provider shows up on replay as divergence. The record
 * names the provider and its label (the local deterministic model says so in every record).
 * A failure is billed for what it consumed (see providers/model-provider.ts for the ladder).
 * A message longer than LARGE_VALUE_BYTES is journaled as its digest and size (see
 * large-values.ts): the key still covers it, through the digest, and the journal does not grow
 * by a document per call.
 */
import type { FailureCode } from '../../src-shared/vocabulary/failures';
import type { Spend } from '../../src-shared/vocabulary/spend';
import { costOf, ModelError, pricingOf, type Completion, type ModelErrorKind, type ModelProvider, type ModelRequest, type ModelUsage } from './model-provider';
import { journaledText } from './large-values';
import { liveModelText } from './model-stream';
import type { RunContext } from './run-context';
import { EffectFailure } from './run-signals';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import { modelRef } from '../../src-shared/vocabulary/model-refs';
import { checkStructuredAnswer } from './structured-output';

/** The failure code of each way a provider call fails (ModelError's kind). */
const MODEL_FAILURE: { readonly [K in ModelErrorKind]: FailureCode } = {
  refused: 'ModelRefused',
  unavailable: 'ModelUnavailable',
  interrupted: 'ModelInterrupted',
  unaccounted: 'ModelUnaccounted',
};

/** Rough token estimate for a ceiling check before the call: words plus a margin. */
export function estimateTokens(text: string): number {
  const words = text.split(/\s+/).filter(Boolean).length;
  return Math.ceil(words * 1.3) + 4;
}

/**
 * What a call consumed, priced with the model that ANSWERED (Completion.model, the provider's own
 * word; else the one requested): an alias that resolved to a pricier model is billed as that model.
 * A model with no price is never free (docs/GOVERNED-RUNTIME.md, "Model providers"): its tokens are
 * counted and its spend marked `unaccounted`, as for a bill the wire never gave. Cache tokens are
 * not in Spend's token fields' vocabulary, so they are added to inputTokens (every token counted
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

/** `anthropic:claude-x has no price` (the model as asked; `(default)` when nothing names one). */
export function unpricedModelWords(provider: string, model: string): string {
  return `${modelRef(provider, model || '(default)')} has no price`;
}

/** What to do about an unpriced model under a money ceiling. */
export const UNPRICED_REMEDY = 'add the model to <data dir>/prices.json (see resources/prices.json for the shape), or remove the money ceiling (maxCostUsd / maxCostMicros) from the budget';

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
      // The model that will be asked: the request's, else the provider's default (also in the
      // profile), so the record says which model was asked even when the step named none.
      model: requested,
      messages: request.messages.map((m) => ({ ...m, content: journaledText(m.content) })),
      maxTokens: request.maxTokens,
      // Only when offered, so a plain call's key is what it always was; the conversation's tool
      // calls, results and continuations are in `messages` above, so the key covers the loop.
      ...(request.tools?.length ? { tools: request.tools } : {}),
      ...(request.toolChoice ? { toolChoice: request.toolChoice } : {}),
      // They change the wire, so they are in the key; only when set, as tools are.
      ...(request.responseSchema ? { responseSchema: request.responseSchema } : {}),
      ...(request.reasoningEffort ? { reasoningEffort: request.reasoningEffort } : {}),
    },
    destination: provider.profile.endpoint,
    identity: provider.profile,
    grant: `model:${provider.id}`,
    estimate: { effects: 1, ...estimateUsage, costMicros: estimatePricing ? costOf(estimateUsage, estimatePricing) : 0 },
    async perform(at) {
      // Checked when the call is performed (not on replay of one already journaled): a model
      // with no price under a money ceiling is refused before any token is spent.
      if (cx.ceilings.maxCostMicros !== undefined && !estimatePricing) {
        throw new EffectFailure('ModelUnpriced', `${unpricedModelWords(provider.id, requested)}, and this run has a money ceiling its spend could not be held under: ${UNPRICED_REMEDY}`, 'DidNotHappen');
      }
      // Watched only here, where the call is really performed: a replayed step is answered from
      // its record and never gets this far, so strict replay shows nothing live.
      const live = cx.modelText ? liveModelText(cx.modelText, at) : null;
      try {
        const completion = await provider.complete(request, undefined, live?.observer);
        const spend = spendOf(completion.usage, provider, false, completion.model ?? requested);
        // A structured answer is validated here, inside the effect: a non-conforming one happened
        // and is billed (Landed, with this spend), and the record names the rule that failed.
        // A turn asking for tools is not the answer yet (the loop goes on), so it is not checked.
        if (request.responseSchema && !completion.toolCalls?.length) {
          const checked = checkStructuredAnswer(completion, request.responseSchema);
          if (!checked.ok) throw Object.assign(new EffectFailure('StructuredOutputInvalid', checked.problem, 'Landed'), { spend });
        }
        return { result: completion, spend, provenance: `model:${provider.id}` };
      } catch (error) {
        if (error instanceof ModelError) {
          const billed =
            error.kind === 'refused' || error.kind === 'unavailable' ? NO_SPEND : spendOf(error.usage, provider, error.kind === 'unaccounted', requested);
          throw Object.assign(new EffectFailure(MODEL_FAILURE[error.kind], error.message, error.disposition), { spend: billed });
        }
        throw error;
      } finally {
        // The last view, marked done; the sealed effect (EffectDone or EffectFailed) follows.
        live?.finish();
      }
    },
  });
  return result as Completion;
}
