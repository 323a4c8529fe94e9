/**
 * The scale journal generator (tests/support/scale-journal-generator.ts): exactly the records
 * asked for, every body one the journal accepts, every run sealed once with its own record
 * count, the long runs interleaved, and a generated data dir that verifies.
 */
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { recordBodyProblem, CURRENT_VERSION, type AnyRecordDraft } from '../src-shared/journal/records';
import { Journal } from '../src-main/journal/journal';
import { verifyJournalStore } from '../src-main/journal/journal-workers';
import { tempDataDir } from './support/journal-support';
import { generateScaleJournal, longRunSizes, scaleDrafts } from './support/scale-journal-generator';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function runsOf(drafts: readonly AnyRecordDraft[]): Map<string, AnyRecordDraft[]> {
  const runs = new Map<string, AnyRecordDraft[]>();
  for (const d of drafts) {
    if (d.runId === null) continue;
    let list = runs.get(d.runId);
    if (!list) runs.set(d.runId, (list = []));
    list.push(d);
  }
  return runs;
}

describe('scaleDrafts', () => {
  it('gives exactly the records asked for, for sizes that do and do not end on a whole run', () => {
    for (const n of [1, 2, 7, 999, 1000, 12_345]) expect([...scaleDrafts(n)].length).toBe(n);
  });

  it('writes only bodies the journal accepts, of many kinds, and seals every run once with its record count', () => {
    const drafts = [...scaleDrafts(20_000)];
    for (const d of drafts) expect(recordBodyProblem(d.kind, CURRENT_VERSION[d.kind], d.body), `${d.kind} of ${d.runId}`).toBeNull();
    const kinds = new Set(drafts.map((d) => d.kind));
    for (const kind of ['RunAdmitted', 'EffectStarted', 'EffectDone', 'EffectFailed', 'Suspended', 'Decision', 'BudgetVerdict', 'Cancelled', 'Observation', 'RunSealed'] as const) {
      expect(kinds.has(kind), kind).toBe(true);
    }
    for (const [runId, records] of runsOf(drafts)) {
      const seals = records.filter((d) => d.kind === 'RunSealed');
      expect(seals, runId).toHaveLength(1);
      expect(records.at(-1)!.kind, runId).toBe('RunSealed');
      expect((seals[0]!.body as { records: number }).records, runId).toBe(records.length - 1);
    }
    // A peer's run names the parent run and step that called it.
    const child = drafts.find((d) => d.kind === 'RunAdmitted' && d.body.parentRunId !== undefined);
    expect(child?.kind === 'RunAdmitted' && child.body.trigger.via).toBe('peer');
  });

  it('interleaves the long runs with the rest from start to end, each of its planned size', () => {
    const n = 50_000;
    const sizes = longRunSizes(n);
    expect(sizes).toEqual([5000, 500, 500, 500]);
    expect(longRunSizes(10_000_000)).toEqual([1_000_000, 100_000, 100_000, 100_000]);
    const drafts = [...scaleDrafts(n)];
    const runs = [...runsOf(drafts).entries()].sort((a, b) => b[1].length - a[1].length);
    expect(runs.slice(0, 4).map(([, records]) => records.length)).toEqual(sizes);
    const longest = runs[0]![0];
    const at = drafts.flatMap((d, i) => (d.runId === longest ? [i] : []));
    // It starts near the beginning and ends near the end, with other runs' records between.
    expect(at[0]!).toBeLessThan(n * 0.05);
    expect(at.at(-1)!).toBeGreaterThan(n * 0.9);
  });
});

describe('generateScaleJournal', () => {
  it('writes a journal that verifies, with every record covered by a signed checkpoint', async () => {
    const dataDir = tempDataDir('ap-scale-');
    dirs.push(dataDir);
    const seen: number[] = [];
    await generateScaleJournal({ records: 2500, dataDir, onProgress: (p) => seen.push(p.written) });
    expect(seen).toEqual([1000, 2000, 2500]);
    const journal = await Journal.open({ dataDir, readOnly: true });
    try {
      const report = await verifyJournalStore(journal);
      expect(report).toMatchObject({ ok: true, count: 2500, unsigned: 0 });
    } finally {
      await journal.close();
    }
  });

  it('refuses a record count that is not a whole number of at least 1, and a data dir that holds a journal', async () => {
    const dataDir = tempDataDir('ap-scale-');
    dirs.push(dataDir);
    await expect(generateScaleJournal({ records: 0, dataDir })).rejects.toThrow(/--records must be a whole number of at least 1, not 0/);
    await expect(generateScaleJournal({ records: 2.5, dataDir })).rejects.toThrow(/not 2.5/);
    await generateScaleJournal({ records: 10, dataDir });
    await expect(generateScaleJournal({ records: 10, dataDir })).rejects.toThrow(/already holds a journal of 10 records: give an empty or new data dir/);
  });
});
