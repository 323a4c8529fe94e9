/**
 * Where a timeline record's value came from, for the row's hover (docs/GOVERNED-RUNTIME.md,
 * "Provenance at protected sinks" and "Sensitivity"). Apart from record-summary.ts, which the
 * page's first load carries: only a run's timeline shows this.
 */
import type { RecordView } from '../../../src-shared/ipc/contract';
import { trustClass } from '../../../src-shared/vocabulary/trust';
import { oneLineJson } from './display-format';
import { originLine, reusedSteps } from './record-summary';

type Body = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : v === undefined ? '' : oneLineJson(v, 80));

/** `peer:beta (untrusted: an outside party could have chosen it)`: one provenance label in words. */
function provenanceWords(provenance: string): string {
  const trust = trustClass(provenance);
  return `${provenance} (${trust === null ? 'untrusted: an outside party could have chosen it' : trust === 'plane' ? 'trusted: made by the plane' : 'trusted: the operator'})`;
}

/**
 * A value's sensitivity label, when its record holds one (docs/GOVERNED-RUNTIME.md,
 * "Sensitivity"): a record writes it only above the lowest label, so absent says nothing.
 */
function labelWords(body: Body): string {
  return typeof body.sensitivity === 'string' ? `, labelled ${body.sensitivity}` : '';
}

/**
 * Where a record's value came from, for the timeline row's hover (docs/GOVERNED-RUNTIME.md,
 * "Provenance at protected sinks"), with its sensitivity label when it has one: an effect's answer,
 * each step a fork took from its parent, a labelled input, a provenance verdict's fields. Null for
 * a record that carries no value from anywhere.
 */
export function provenanceHint(record: Pick<RecordView, 'kind' | 'body' | 'known'>): string | null {
  if (!record.known) return null;
  const body = record.body as Body;
  if (record.kind === 'EffectDone' && typeof body.provenance === 'string') return `This value came from ${provenanceWords(body.provenance)}${labelWords(body)}`;
  if (record.kind === 'EffectReused') {
    const steps = reusedSteps(body).filter((step) => typeof step.provenance === 'string');
    return steps.length > 0 ? steps.map((step) => `step ${str(step.step)}: from ${provenanceWords(step.provenance as string)}${labelWords(step)}`).join('\n') : null;
  }
  if (record.kind === 'RunAdmitted' && typeof body.inputSensitivity === 'string') return `The input came from ${provenanceWords(str(body.inputProvenance))}${labelWords({ sensitivity: body.inputSensitivity })}`;
  if (record.kind === 'ProvenanceVerdict' && Array.isArray(body.fields)) return (body.fields as Body[]).map(originLine).join('\n');
  return null;
}
