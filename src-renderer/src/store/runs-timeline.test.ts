/**
 * Runs and the open timeline as a view of the journal: a notification names the runs a commit
 * touched; their status shows at once, each is re-read once its burst goes quiet, and the open
 * timeline reads only its own new records. Requests are counted where they leave the client.
 */
import { describe, expect, it } from 'vitest';
import type { CommandName } from '../../../src-shared/ipc/contract';
import { runDrafts } from '../../../tests/support/journal-support';
import { useSyncedHarnesses, type StoreHarness } from './testing/store-harness';

const harness = useSyncedHarnesses();

const runId = (n: number) => `run-${n.toString(16).padStart(20, '0')}`;
const count = (requests: CommandName[], name: CommandName) => requests.filter((r) => r === name).length;

async function journalCaughtUp(h: StoreHarness) {
  const head = (await h.plane.journal.head()).seq;
  await h.until(() => h.store.getState().journalHead === head, `journal head ${head}`);
  await h.settle();
}

describe('the runs and timeline slices follow the journal by notification', () => {
  it('a 1,000-record burst across 10 runs costs at most runs touched + 1 requests', async () => {
    const h = await harness();
    const ids = Array.from({ length: 10 }, (_, i) => runId(i + 1));
    // 102 records a run: admitted and a first effect before the burst, 100 in it (sealed last).
    const drafts = ids.map((id) => runDrafts(id, 50));
    await h.plane.journal.appendBatch(drafts.flatMap((d) => d.slice(0, 2)));
    await journalCaughtUp(h);
    h.env.clock.advance(100);
    await h.settle();
    expect(Object.keys(h.store.getState().runs).sort()).toEqual(ids);
    h.store.getState().openTimeline(ids[0]!);
    await h.settle();
    expect(h.store.getState().timeline).toMatchObject({ runId: ids[0], count: 2 });

    const before = h.wire.requests.length;
    // The burst: 100 commits, each one record of every run.
    for (let k = 2; k < 102; k++) await h.plane.journal.appendBatch(drafts.map((d) => d[k]!));
    await journalCaughtUp(h);
    // A thousand records and a hundred notifications later, nothing has been read yet...
    expect(h.wire.requests.slice(before)).toEqual([]);
    // ...but every run already shows the status its last commit left it in.
    for (const id of ids) expect(h.store.getState().runs[id]).toMatchObject({ status: 'sealed', outcome: 'succeeded' });

    h.env.clock.advance(80);
    await h.settle();
    const burst = h.wire.requests.slice(before);
    expect(burst.length).toBeLessThanOrEqual(ids.length + 1);
    expect(count(burst, 'runs.get')).toBe(ids.length);
    expect(count(burst, 'journal.records')).toBe(1);

    const state = h.store.getState();
    for (const id of ids) expect(state.runs[id]).toMatchObject({ status: 'sealed', records: 102 });
    expect(state.timeline).toMatchObject({ count: 102, lastSeq: state.runs[ids[0]!]!.lastSeq });
    const page = state.timeline.pages[0]!;
    expect(page).toHaveLength(102);
    expect(page.every((r) => r.runId === ids[0])).toBe(true);
    expect(page.at(-1)!.kind).toBe('RunSealed');
    expect(h.env.clock.pending()).toBe(0);
  });

  it('a run busy for longer than the coalescing window is re-read about once a second, not per commit', async () => {
    const h = await harness();
    const drafts = runDrafts(runId(1), 40);
    const before = h.wire.requests.length;
    for (let k = 0; k < drafts.length; k++) {
      await h.plane.journal.appendBatch([drafts[k]!]);
      await journalCaughtUp(h);
      h.env.clock.advance(50); // a commit every 50 ms: never quiet for 80 ms
    }
    h.env.clock.advance(80);
    await h.settle();
    // 82 commits over 4.1 s: one read per second of activity and one at the end.
    const reads = count(h.wire.requests.slice(before), 'runs.get');
    expect(reads).toBeGreaterThanOrEqual(4);
    expect(reads).toBeLessThanOrEqual(6);
    expect(h.store.getState().runs[runId(1)]).toMatchObject({ status: 'sealed', records: 82 });
  });

  it('a notification for a run it has not seen adds it; one touching no run reads nothing', async () => {
    const h = await harness();
    const before = h.wire.requests.length;
    await h.plane.journal.appendBatch([{ runId: null, kind: 'HaltApplied', body: { scope: 'agent:nobody', lifted: false, by: 'user:local' } }]);
    await journalCaughtUp(h);
    h.env.clock.advance(100);
    await h.settle();
    expect(h.wire.requests.slice(before)).toEqual([]);
    await h.plane.journal.appendBatch(runDrafts(runId(7), 1).slice(0, 2));
    await journalCaughtUp(h);
    h.env.clock.advance(100);
    await h.settle();
    expect(h.wire.requests.slice(before)).toEqual(['runs.get']);
    expect(h.store.getState().runs[runId(7)]).toMatchObject({ status: 'running', records: 2, host: 'plane' });
    expect(h.store.getState().runHosts[runId(7)]).toBe('plane');
  });
});
