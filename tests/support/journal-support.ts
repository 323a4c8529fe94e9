/**
 * Shared by the journal's tests: temporary data dirs and well-formed drafts. Lives beside the
 * code it serves (not under tests/) because several test files in src-main import it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyRecordDraft } from '../../src-shared/journal/records';

export function tempDataDir(prefix = 'ap-journal-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export const ZERO_SPEND = { effects: 0, inputTokens: 0, outputTokens: 0, reasoningTokens: 0, costMicros: 0 };

/** A run's worth of plausible drafts: admitted, n effects (started + done), sealed. */
export function runDrafts(runId: string, effects: number): AnyRecordDraft[] {
  const drafts: AnyRecordDraft[] = [
    {
      runId,
      kind: 'RunAdmitted',
      body: {
        agent: 'echo',
        owner: 'user:local',
        chain: ['user:local'],
        input: { text: `hello ${runId}` },
        inputProvenance: 'user:local',
        budget: { maxEffects: 100 },
        trigger: { via: 'cli', by: 'user:local' },
      },
    },
  ];
  for (let step = 0; step < effects; step++) {
    const key = (step + 1).toString(16).padStart(64, '0');
    drafts.push({ runId, kind: 'EffectStarted', body: { step, effect: 'tool', name: 'echo', key, request: { n: step } } });
    drafts.push({
      runId,
      kind: 'EffectDone',
      body: { step, key, result: { echoed: step }, spend: { ...ZERO_SPEND, effects: 1 }, provenance: 'plane' },
    });
  }
  drafts.push({ runId, kind: 'RunSealed', body: { outcome: 'succeeded', spend: { ...ZERO_SPEND, effects }, records: drafts.length } });
  return drafts;
}

/** mulberry32: a small seedable PRNG, so a randomised test prints its seed and can be replayed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
