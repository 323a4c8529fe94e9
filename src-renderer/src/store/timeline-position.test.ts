/**
 * A run whose records are interleaved with another's: a page far from any known page start is
 * read by its place in the run (`journal.records`' `position`), one request, not a read forward
 * of every record before it; and the plane answers a position as the run's record there, nothing
 * past its end, and refuses a position without a run or below 0.
 */
import { describe, expect, it } from 'vitest';
import type { CommandName } from '../../../src-shared/ipc/contract';
import { ErrorCode } from '../../../src-shared/ipc/error-codes';
import { runDrafts } from '../../../tests/support/journal-support';
import { call, failure } from '../../../tests/support/runtime-support';
import { PAGE_SIZE, recordAt } from './timeline-slice';
import { useSyncedHarnesses, type StoreHarness } from './testing/store-harness';

const harness = useSyncedHarnesses();

const A = `run-${'a'.repeat(20)}`;
const B = `run-${'b'.repeat(20)}`;
/** 6,000 effects: 12,002 records each, interleaved one for one, so A's page 60 is 12,000 of A's records (24,000 of the journal's) from its start. */
const EFFECTS = 6000;

async function interleavedRuns(h: StoreHarness): Promise<void> {
  const a = runDrafts(A, EFFECTS);
  const b = runDrafts(B, EFFECTS);
  const both = a.flatMap((draft, i) => [draft, b[i]!]);
  for (let i = 0; i < both.length; i += 1000) await h.plane.journal.appendBatch(both.slice(i, i + 1000));
}

const count = (requests: CommandName[], name: CommandName) => requests.filter((r) => r === name).length;

describe('a far place in an interleaved run', () => {
  it('is read by position, none of the pages before it, and the page holds the run\'s records there', async () => {
    const h = await harness();
    await interleavedRuns(h);
    const head = (await h.plane.journal.head()).seq;
    await h.until(() => h.store.getState().journalHead === head, `journal head ${head}`);
    await h.store.getState().refreshRuns();
    h.store.getState().openTimeline(A);
    await h.settle();
    expect(h.store.getState().timeline).toMatchObject({ runId: A, count: 12_002, contiguous: false });

    const before = h.wire.requests.length;
    h.store.getState().wantRange(12_000, 12_001);
    h.env.clock.advance(100);
    await h.settle();
    // The page, and at most one more read as the run's view is re-read with it (reading forward
    // from page 0 took a request for every 5,000 records before it: three here).
    expect(count(h.wire.requests.slice(before), 'journal.records')).toBeLessThanOrEqual(2);
    const t = h.store.getState().timeline;
    const last = recordAt(t, 12_001)!;
    expect(last).toMatchObject({ runId: A, kind: 'RunSealed', seq: head - 1 });
    // The page before it was never read: nothing between page 0 and the end is held.
    expect(Object.keys(t.pages).map(Number).sort((x, y) => x - y)).toEqual([0, 12_000 / PAGE_SIZE]);

    // A page in the middle, by position too: its first record is A's 6,000th (0-based), at journal seq 2 × 6,000 + 1.
    const middle = h.wire.requests.length;
    h.store.getState().wantRange(6000, 6001);
    h.env.clock.advance(100);
    await h.settle();
    expect(count(h.wire.requests.slice(middle), 'journal.records')).toBeLessThanOrEqual(2);
    expect(Object.keys(h.store.getState().timeline.pages).map(Number).sort((x, y) => x - y)).toEqual([0, 6000 / PAGE_SIZE, 12_000 / PAGE_SIZE]);
    expect(recordAt(h.store.getState().timeline, 6000)).toMatchObject({ runId: A, seq: 2 * 6000 + 1 });
  });

  it('is answered by the plane as the run\'s record at that place, none past its end, and refused without a run or below 0', async () => {
    const h = await harness();
    await interleavedRuns(h);
    const at = await call(h.plane, 'journal.records', { runId: B, position: 12_001, limit: 5 });
    expect(at.records.map((r) => [r.seq, r.kind])).toEqual([[24_004, 'RunSealed']]);
    expect(at.nextSeq).toBeNull();
    const first = await call(h.plane, 'journal.records', { runId: B, position: 0, limit: 2 });
    expect(first.records.map((r) => r.seq)).toEqual([2, 4]);
    expect(first.nextSeq).toBe(6);
    expect(await call(h.plane, 'journal.records', { runId: B, position: 12_002, limit: 5 })).toMatchObject({ records: [], nextSeq: null });
    expect(await failure(h.plane, 'journal.records', { runId: null, position: 3, limit: 5 })).toMatchObject({ code: ErrorCode.BadRequest, message: expect.stringMatching(/position is a place in one run: give runId too/) });
    expect(await failure(h.plane, 'journal.records', { runId: B, position: -1, limit: 5 })).toMatchObject({ code: ErrorCode.BadRequest });
  });
});
