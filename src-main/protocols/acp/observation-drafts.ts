/**
 * The journal records of a batch of ACP observations, written the same way whichever door they
 * came through (the plane's `acp.record`, or the tap's direct journal when no plane runs), so a
 * session's run reads the same either way. An observed run is never admitted (no RunAdmitted:
 * the observed party's account authorizes nothing) and seals with the outcome `observed`, no
 * spend of its own, and the count of every record the run wrote before the seal.
 */
import type { AnyRecordDraft } from '../../../src-shared/journal/records';
import { NO_SPEND } from '../../../src-shared/vocabulary/spend';

export interface ObservationBatch {
  runId: string;
  sessionId: string;
  observations: ReadonlyArray<{ update: string; detail: unknown }>;
  seal?: { result: unknown };
}

/** `recordsBefore`: how many records the run already holds (counted only when sealing). */
export function observationDrafts(batch: ObservationBatch, recordsBefore: number): AnyRecordDraft[] {
  const drafts: AnyRecordDraft[] = batch.observations.map((o) => ({
    runId: batch.runId,
    kind: 'Observation',
    body: { source: 'acp', sessionId: batch.sessionId, update: o.update, detail: o.detail },
  }));
  if (batch.seal) {
    drafts.push({
      runId: batch.runId,
      kind: 'RunSealed',
      body: { outcome: 'observed', result: batch.seal.result, spend: NO_SPEND, records: recordsBefore + drafts.length },
    });
  }
  return drafts;
}
