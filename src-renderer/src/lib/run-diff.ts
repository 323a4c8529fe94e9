/**
 * Time travel in words (docs/GOVERNED-RUNTIME.md, "Fork, replay, diff"): where a dry replay or a
 * comparison says two runs part, one step's side of a comparison, a value compared by digest,
 * and the spend difference. Pure: the views (run-diff-view.tsx, replay-form.tsx) only lay these
 * out.
 */
import type { Divergence, ReplayReport, SpendDifference, StepSide, ValueRef } from '../../../src-shared/protocol/time-travel';
import { ModelOverrideSchema } from '../../../src-shared/protocol/time-travel';
import { tokensOf } from '../../../src-shared/vocabulary/spend';
import { count, money, oneLineJson, plural, shortHash } from './display-format';

/** A value the plane sent whole is shown; one it sent by digest is named by digest and size, to open. */
export interface ValueWords {
  text: string;
  /** Only its digest came: the record holding it must be opened to see it. */
  large: boolean;
}

/** `3.2 kB`, `812 B`. */
export function byteSize(bytes: number): string {
  if (bytes < 1000) return `${count(bytes)} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(1)} kB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

export function valueWords(ref: ValueRef, max = 120): ValueWords {
  if ('value' in ref && ref.value !== undefined) return { text: oneLineJson(ref.value, max), large: false };
  return { text: `sha256 ${shortHash(ref.digest)} · ${byteSize(ref.size)}`, large: true };
}

/** `(arguments)`: the reason's own word, as the plane and the CLI name it. */
export function divergenceLine(prefix: string, divergence: Divergence): string {
  return `${prefix} at step ${divergence.step} (${divergence.reason}): ${divergence.message}`;
}

/** A dry replay's answer in one line. */
export function replayWords(report: Pick<ReplayReport, 'divergesAt' | 'steps'>): string {
  if (report.divergesAt === null) return `No divergence across ${plural(report.steps, 'step')}`;
  return divergenceLine('Would diverge', report.divergesAt);
}

/** Where two compared runs part, in one line. */
export function diffDivergenceWords(divergesAt: Divergence | null, steps: number): string {
  if (divergesAt === null) return `The same across all ${plural(steps, 'step')}`;
  return divergenceLine('They part', divergesAt);
}

const signed = (n: number, text: string) => (n > 0 ? `+${text}` : n < 0 ? `−${text.replace(/^-/, '')}` : text);

/** b's spend less a's: `+12 tokens, −1 effect, +$0.0001`; `no difference` when nothing moved. */
export function spendDifferenceWords(d: SpendDifference): string {
  const tokens = tokensOf(d);
  if (tokens === 0 && d.effects === 0 && d.costMicros === 0) return 'no difference';
  return [
    signed(tokens, plural(Math.abs(tokens), 'token')),
    signed(d.effects, plural(Math.abs(d.effects), 'effect')),
    signed(d.costMicros, money(Math.abs(d.costMicros))),
  ].join(', ');
}

/** What one side of a step did: `model local`, or how it ended when it failed. */
export function sideEffect(side: StepSide): string {
  return `${side.effect} ${side.name}`;
}

/** How one side of a step ended: its result (by value or digest), its failure, or not yet. */
export function sideOutcome(side: StepSide): ValueWords {
  if (side.failed) return { text: `failed (${side.failed.disposition}) ${side.failed.code}: ${side.failed.message}`, large: false };
  if (side.result === null) return { text: 'not ended', large: false };
  return valueWords(side.result);
}

/** The model override field: empty (no change), or `provider:model` as the plane accepts it. */
export function modelOverrideProblem(text: string): string | null {
  if (text.trim() === '') return null;
  return ModelOverrideSchema.safeParse(text.trim()).success ? null : 'Write the model as provider:model, for example local:tiny.';
}

/** The optional input field of a replay: empty (no change) or JSON. */
export function parseOptionalJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (e) {
    return { ok: false, error: `The input is not JSON: ${(e as Error).message}` };
  }
}
