/**
 * The open timeline never lists a record twice. A live run's first page can come back longer
 * than the run's view said it was (records committed between the view and the page read); the
 * live tail then reads from the view's last seq and must merge by seq, not append blindly.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runDrafts } from '../../../tests/support/journal-support';
import { testPlane } from '../../../tests/support/runtime-support';
import { storeHarness, type StoreHarness } from './testing/store-harness';

const harnesses: StoreHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

const RUN = `run-${'7'.padStart(20, '0')}`;

describe('the timeline merges records by seq', () => {
  it('a page read after the run grew, then the live tail, shows each seq once', async () => {
    const h = await storeHarness({ plane: await testPlane({ agents: [] }) });
    harnesses.push(h);
    await h.until(() => h.store.getState().runsLoaded && h.store.getState().connection === 'connected', 'the first sync');
    const drafts = runDrafts(RUN, 3);
    await h.plane.journal.appendBatch(drafts.slice(0, 2));
    const head = (await h.plane.journal.head()).seq;
    await h.until(() => h.store.getState().journalHead === head, `journal head ${head}`);
    await h.settle();
    h.env.clock.advance(1000);
    await h.settle();
    expect(h.store.getState().runs[RUN]).toMatchObject({ records: 2 });

    // Two more records are committed; the run's view (2 records) is not re-read yet.
    await h.plane.journal.appendBatch(drafts.slice(2, 4));
    await h.settle();
    h.store.getState().openTimeline(RUN);
    await h.until(() => (h.store.getState().timeline.pages[0]?.length ?? 0) >= 4, 'page 0 with the new records');
    // A journal notification for the open run reads its tail.
    await h.store.getState().followTimeline();
    await h.settle();

    const t = h.store.getState().timeline;
    const seqs = Object.values(t.pages).flat().map((r) => r.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).toHaveLength(4);
    expect(t.count).toBe(4);
  });
});
