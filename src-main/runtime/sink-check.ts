/**
 * Provenance at protected sinks (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks"): an
 * effect names the values its protected fields are about to take (EffectSpec.sinks: each with
 * the provenances it was made from and the scope paths it was read from), its grant says which
 * provenances each field accepts; a value from anywhere else is put to a person or refused, as
 * the grant says. Values from a peer, a model or any outside party are attacker-controllable: a
 * field that took them would let a prompt-injected model or a malicious peer choose where money
 * and files go.
 */
import { accepts, type ProtectRule, type ProvenanceVerdictKind, type Traced } from '../../src-shared/vocabulary/provenance';
import type { WaitSubject } from '../../src-shared/vocabulary/waits';

/** A protected field given a value it does not accept. */
export interface UnacceptedField {
  field: string;
  value: unknown;
  /** Every provenance the value was made from (the unaccepted ones among them are why it is here). */
  provenance: string[];
  via: string[];
}

export interface SinkVerdict {
  verdict: ProvenanceVerdictKind;
  fields: UnacceptedField[];
}

/**
 * The verdict on an effect's protected fields, null when every one accepts its value. One field
 * whose grant says `refuse` refuses the effect; otherwise any unaccepted field asks.
 */
export function sinkVerdict(sinks: Readonly<Record<string, Traced>> | undefined, protect: Readonly<Record<string, ProtectRule>> | undefined): SinkVerdict | null {
  if (!sinks || !protect) return null;
  const fields: UnacceptedField[] = [];
  let refuse = false;
  for (const [field, traced] of Object.entries(sinks).sort(([a], [b]) => a.localeCompare(b))) {
    const rule = protect[field];
    if (!rule || traced.provenance.every((p) => accepts(rule.accept, p))) continue;
    fields.push({ field, value: traced.value ?? null, provenance: traced.provenance, via: traced.via });
    if (rule.otherwise === 'refuse') refuse = true;
  }
  return fields.length === 0 ? null : { verdict: refuse ? 'refused' : 'asked', fields };
}

/** One line naming each unaccepted field, its value and its origin: `payee "x" from peer:beta via steps.quote.payee`. */
export function describeUnaccepted(fields: readonly UnacceptedField[], protect: Readonly<Record<string, ProtectRule>> | undefined): string {
  return fields
    .map((f) => {
      const outside = f.provenance.filter((p) => !accepts(protect?.[f.field]?.accept ?? [], p));
      const value = JSON.stringify(f.value) ?? 'null';
      return `${f.field} ${value.length > 80 ? `${value.slice(0, 77)}...` : value} came from ${outside.join(', ')}${f.via.length ? ` via ${f.via.join(', ')}` : ''}, which its grant does not accept`;
    })
    .join('; ');
}

export type ProvenanceSubject = Extract<WaitSubject, { kind: 'provenance' }>;
