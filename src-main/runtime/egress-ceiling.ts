/**
 * Egress ceilings (docs/GOVERNED-RUNTIME.md, "Sensitivity"): an effect whose request carries a
 * value above its destination's ceiling, or above its agent's, is refused before it is sent. A
 * refusal after sending protects nothing: the value has left.
 */
import type { EffectKind } from '../../src-shared/vocabulary/effects';
import { SENSITIVITY_CEILING, type Labelled, type Sensitivity } from '../../src-shared/vocabulary/sensitivity';
import type { EffectSpec } from './effect-spec';
import { EffectFailure } from './run-signals';

/**
 * The destination an effect sends to, spelled as the provenance its answer carries
 * (`model:local`, `peer:beta`, `mcp:files`, `a2a:<card>`, `agent:<name>`, `tool:file.read`):
 * the name a ceiling and a result label are configured under. Null for what sends nothing
 * anywhere: a clock read, a random draw, a payment intent (recorded, nothing leaves).
 */
export function egressOf(spec: Pick<EffectSpec, 'effect' | 'name' | 'request'>): string | null {
  const kind: EffectKind = spec.effect;
  switch (kind) {
    case 'model':
    case 'agent':
    case 'tool':
      return `${kind}:${spec.name}`;
    case 'peer':
      return `peer:${spec.name.split('/')[0]}`;
    case 'mcp':
      // A model's look at a tool's schema (`schema:<server>/<tool>`) goes to the same server.
      return `mcp:${spec.name.replace(/^schema:/, '').split('/')[0]}`;
    case 'a2a': {
      const card = (spec.request as { card?: unknown } | null)?.card;
      return typeof card === 'string' ? `a2a:${card}` : null;
    }
    default:
      return null;
  }
}

/**
 * Throws the refusal when `carried` is above the destination's ceiling or the agent's: a
 * DidNotHappen failure naming the label, the ceiling, the destination and where the value came
 * from. Nothing when the effect sends nowhere or stays within both.
 */
export function assertWithinCeiling(spec: EffectSpec, carried: Labelled, agent: string, sensitivity: Sensitivity): void {
  const destination = egressOf(spec);
  if (destination === null) return;
  const rank = sensitivity.rank(carried.label);
  const own = sensitivity.ceilingOf(destination);
  const agents = sensitivity.agentCeiling(agent);
  const whose = rank > sensitivity.rank(own) ? `${destination}'s ceiling ${own}` : rank > sensitivity.rank(agents) ? `agent ${agent}'s ceiling ${agents}` : null;
  if (whose === null) return;
  const from = carried.from.length > 0 ? ` from ${carried.from.join(', ')}` : '';
  throw new EffectFailure(SENSITIVITY_CEILING, `${spec.effect} ${spec.name}: the request carries a ${carried.label} value${from}, above ${whose}; refused before it was sent to ${destination}`, 'DidNotHappen');
}
