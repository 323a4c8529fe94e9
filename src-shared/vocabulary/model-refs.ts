/**
 * Model references as people read them: `provider:model` (`anthropic:claude-sonnet-4-5`), the
 * same words in the UI's timeline and waits and in the CLI, from what the journal holds.
 *
 * A model effect's EffectStarted request names the provider (`provider.id`) and the model that
 * was asked (the step's, else the provider's default); its EffectDone result is the Completion,
 * whose `model` is the provider's own word on which model answered. The two differ whenever an
 * alias resolves (`claude-sonnet-4-5` answered by `claude-sonnet-4-5-20250929`) or a deployment
 * moves under a pinned name, and then both are shown: `anthropic:claude-sonnet-4-5 →
 * claude-sonnet-4-5-20250929`. A wire that names no model (null) shows only what was asked:
 * filling the answer in from the request would claim a substitution was ruled out when nothing
 * looked. Records written before the request named the default model carry `model: ''`; they
 * read as the provider alone.
 */
import { z } from 'zod';

/** `anthropic:claude-sonnet-4-5`; the provider alone when no model is named. */
export function modelRef(provider: string, model?: string | null): string {
  return model ? `${provider}:${model}` : provider;
}

/** Gemini answers `models/<name>` for `<name>`: the same model, not a substitution. */
function bare(model: string): string {
  return model.startsWith('models/') ? model.slice('models/'.length) : model;
}

/**
 * The call in words: `anthropic:claude-sonnet-4-5`, or `anthropic:claude-sonnet-4-5 →
 * claude-sonnet-4-5-20250929` when another model answered.
 */
export function modelCallWords(provider: string, requested: string | null | undefined, answered?: string | null): string {
  // Nothing named (an older record, or a provider without a default): the model that answered is the model.
  if (!requested) return modelRef(provider, answered);
  const asked = modelRef(provider, requested);
  if (!answered || bare(answered) === bare(requested)) return asked;
  return `${asked} → ${answered}`;
}

const ModelRequestSchema = z.object({ provider: z.object({ id: z.string() }), model: z.string().optional() });

/** A model effect's provider and requested model, from its journaled request; null for any other effect. */
export function readModelRequest(effect: unknown, request: unknown): { provider: string; model: string } | null {
  if (effect !== 'model') return null;
  const parsed = ModelRequestSchema.safeParse(request);
  return parsed.success ? { provider: parsed.data.provider.id, model: parsed.data.model ?? '' } : null;
}

/** The model that answered, from a model effect's journaled result (Completion.model); null where the wire named none. */
export function answeredModelOf(result: unknown): string | null {
  if (result === null || typeof result !== 'object') return null;
  const model = (result as { model?: unknown }).model;
  return typeof model === 'string' && model !== '' ? model : null;
}

export interface ModelCall {
  step: number;
  provider: string;
  requested: string;
  /** Null until it answered, or where the wire named no model. */
  answered: string | null;
  /** The failure's `code: message`, when the latest attempt failed. */
  error: string | null;
}

interface RecordLike {
  kind: string;
  body: unknown;
}

/** Every model call among a run's records (in order), with the model that answered where one did. */
export function modelCallsOf(records: readonly RecordLike[]): ModelCall[] {
  const byStep = new Map<number, ModelCall>();
  for (const record of records) {
    const body = (record.body ?? {}) as { step?: unknown; effect?: unknown; request?: unknown; result?: unknown; error?: { code?: unknown; message?: unknown } };
    if (typeof body.step !== 'number') continue;
    if (record.kind === 'EffectStarted') {
      const asked = readModelRequest(body.effect, body.request);
      if (asked) byStep.set(body.step, { step: body.step, provider: asked.provider, requested: asked.model, answered: null, error: null });
      continue;
    }
    const call = byStep.get(body.step);
    if (!call) continue;
    if (record.kind === 'EffectDone') Object.assign(call, { answered: answeredModelOf(body.result), error: null });
    else if (record.kind === 'EffectFailed') call.error = `${String(body.error?.code ?? '')}: ${String(body.error?.message ?? '')}`;
  }
  return [...byStep.values()];
}
