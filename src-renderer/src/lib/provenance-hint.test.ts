/**
 * The timeline says where a value came from (docs/GOVERNED-RUNTIME.md, "Provenance at protected
 * sinks"): an effect's answer on hover, trusted or not; a provenance verdict's fields in its row.
 */
import { describe, expect, it } from 'vitest';
import type { RecordView } from '../../../src-shared/ipc/contract';
import { kindTone, summarizeRecord } from './record-summary';
import { provenanceHint } from './provenance-hint';

const record = (kind: string, body: Record<string, unknown>): RecordView => ({ seq: 4, time: '2026-12-07T00:00:00.000Z', kind, v: 1, known: true, body, runId: 'run-1', hash: 'ab'.repeat(32) }) as unknown as RecordView;

describe('provenance in the run timeline', () => {
  it("hovering an effect's answer names where it came from, and whether an outside party could have chosen it", () => {
    const done = (provenance: string) => provenanceHint(record('EffectDone', { step: 0, key: 'k', result: { response: 'hi' }, spend: {}, provenance }));
    expect(done('peer:beta')).toBe('This value came from peer:beta (untrusted: an outside party could have chosen it)');
    expect(done('model:local')).toContain('untrusted');
    expect(done('plane')).toBe('This value came from plane (trusted: made by the plane)');
    expect(done('person:user:local')).toBe('This value came from person:user:local (trusted: the operator)');
    expect(provenanceHint(record('RunSealed', { outcome: 'succeeded' }))).toBeNull();
  });

  it('a provenance verdict reads as what was decided and each field with its value and origin', () => {
    const verdict = record('ProvenanceVerdict', { step: 1, grant: 'payment:request', verdict: 'asked', fields: [{ field: 'payee', value: 'Mallory', provenance: ['operator', 'peer:beta'], via: ['steps.quote.payee'] }] });
    expect(summarizeRecord(verdict)).toBe('asked a person · payment:request · payee "Mallory" from peer:beta via steps.quote.payee');
    expect(provenanceHint(verdict)).toBe('payee "Mallory" from peer:beta via steps.quote.payee');
    expect(kindTone(verdict)).toBe('warn');
    expect(kindTone(record('ProvenanceVerdict', { ...verdict.body as object, verdict: 'refused' }))).toBe('bad');
  });

  it('the hover names the sensitivity label beside the provenance, when the record holds one', () => {
    expect(provenanceHint(record('EffectDone', { step: 0, key: 'k', result: 'x', spend: {}, provenance: 'peer:beta', sensitivity: 'secret' }))).toBe('This value came from peer:beta (untrusted: an outside party could have chosen it), labelled secret');
    const reused = record('EffectReused', { steps: [{ step: 0, provenance: 'model:local', sensitivity: 'confidential' }, { step: 1, provenance: 'plane' }] });
    expect(provenanceHint(reused)).toBe('step 0: from model:local (untrusted: an outside party could have chosen it), labelled confidential\nstep 1: from plane (trusted: made by the plane)');
    expect(provenanceHint(record('RunAdmitted', { inputProvenance: 'user:local', inputSensitivity: 'confidential' }))).toBe('The input came from user:local (trusted: the operator), labelled confidential');
    expect(provenanceHint(record('RunAdmitted', { inputProvenance: 'user:local' }))).toBeNull();
  });
});
