/**
 * Live state is a view of the journal: one `journal.appended` per commit, carrying the journal's
 * own seqs and the runs the commit touched; other processes' appends are announced in the same
 * chain; and `journal.changes` answers a resuming client from the records.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EventPayload } from '../../src-shared/ipc/contract';
import { Journal } from '../journal/journal';
import { runDrafts } from '../../tests/support/journal-support';
import { call, testPlane } from '../../tests/support/runtime-support';
import { CHANGES_MAX_RECORDS, runChangesOf } from './journal-changes';
import type { Plane } from './plane';

type Appended = EventPayload<'journal.appended'>;

const planes: Plane[] = [];
const journals: Journal[] = [];
afterEach(async () => {
  for (const plane of planes.splice(0)) await plane.close();
  for (const journal of journals.splice(0)) await journal.close();
});

async function plane(journalPollMs = 20): Promise<{ plane: Plane; seen: Appended[] }> {
  const p = await testPlane({ agents: [], journalPollMs });
  planes.push(p);
  const seen: Appended[] = [];
  p.events.subscribe((event) => {
    if (event.name === 'journal.appended') seen.push(event.payload);
  });
  return { plane: p, seen };
}

const runId = (n: number) => `run-${n.toString(16).padStart(20, '0')}`;

/** Every seq from 1 to head covered exactly once, in order. */
function expectChain(seen: Appended[], head: number) {
  let next = 1;
  for (const n of seen) {
    expect(n.fromSeq).toBe(next);
    expect(n.seq).toBeGreaterThanOrEqual(n.fromSeq);
    next = n.seq + 1;
  }
  expect(next - 1).toBe(head);
}

const until = async (condition: () => boolean, ms = 5000) => {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('runChangesOf', () => {
  it('names each run once, with the kind of its last record and the status that record leaves it in', () => {
    const changes = runChangesOf([
      { runId: 'a', kind: 'RunAdmitted', body: {} },
      { runId: null, kind: 'PeerLifecycle', body: {} },
      { runId: 'b', kind: 'Suspended', body: {} },
      { runId: 'a', kind: 'RunSealed', body: { outcome: 'denied' } },
      { runId: 'c', kind: 'Suspended', body: {} },
      { runId: 'c', kind: 'Decision', body: { decision: 'snooze' } },
      { runId: 'd', kind: 'Decision', body: { decision: 'approve' } },
      { runId: 'e', kind: 'RunSealed', body: { outcome: 'from-a-newer-version' } },
    ]);
    expect(changes).toEqual([
      { runId: 'b', kind: 'Suspended', status: 'suspended', outcome: null },
      { runId: 'a', kind: 'RunSealed', status: 'sealed', outcome: 'denied' },
      { runId: 'c', kind: 'Decision', status: 'suspended', outcome: null },
      { runId: 'd', kind: 'Decision', status: 'running', outcome: null },
      { runId: 'e', kind: 'RunSealed', status: 'sealed', outcome: null },
    ]);
  });
});

describe('journal.appended', () => {
  it('is one notification per commit: a group commit of many records and runs is one', async () => {
    const { plane: p, seen } = await plane();
    const head = (await p.journal.head()).seq;
    // Asked for in one turn of the event loop: one transaction, one notification.
    await Promise.all([1, 2, 3].map((n) => p.journal.appendBatch(runDrafts(runId(n), 10))));
    await p.journal.appendBatch(runDrafts(runId(4), 1).slice(0, 2));
    expect(seen).toHaveLength(2);
    expect(seen[0]).toEqual({
      fromSeq: head + 1,
      seq: head + 66,
      runs: [1, 2, 3].map((n) => ({ runId: runId(n), kind: 'RunSealed', status: 'sealed', outcome: 'succeeded' })),
    });
    expect(seen[1]).toEqual({ fromSeq: head + 67, seq: head + 68, runs: [{ runId: runId(4), kind: 'EffectStarted', status: 'running', outcome: null }] });
  });

  it("announces other processes' appends in the same chain as its own: every seq once, in order", async () => {
    const { plane: p, seen } = await plane();
    const other = await Journal.open({ dataDir: p.dataDir });
    journals.push(other);
    await other.appendBatch(runDrafts(runId(1), 2));
    await p.journal.appendBatch(runDrafts(runId(2), 1)); // its first seq is past the foreign records
    await other.appendBatch(runDrafts(runId(3), 1));
    const head = (await p.journal.head()).seq;
    expect(head).toBe(6 + 4 + 4);
    await until(() => seen.at(-1)?.seq === head);
    expectChain(seen, head);
    const touched = seen.flatMap((n) => n.runs.map((r) => r.runId));
    expect(new Set(touched)).toEqual(new Set([runId(1), runId(2), runId(3)]));
  });
});

describe('journal.changes', () => {
  it('lists the runs changed after a seq, and says truncated when it cannot', async () => {
    const { plane: p } = await plane();
    await p.journal.appendBatch(runDrafts(runId(1), 2));
    const middle = (await p.journal.head()).seq;
    await p.journal.appendBatch([...runDrafts(runId(2), 1), ...runDrafts(runId(1), 0).slice(1)]);
    const head = (await p.journal.head()).seq;
    const changes = await call(p, 'journal.changes', { afterSeq: middle });
    expect(changes).toMatchObject({ head, truncated: false, journalId: p.journal.journalId });
    expect(changes.runs.map((r) => r.runId)).toEqual([runId(2), runId(1)]);
    expect(await call(p, 'journal.changes', { afterSeq: head })).toMatchObject({ head, runs: [], truncated: false });
    for (const afterSeq of [null, head + 1]) expect(await call(p, 'journal.changes', { afterSeq })).toMatchObject({ head, runs: [], truncated: true });
  });

  it(`answers truncated past ${CHANGES_MAX_RECORDS} records`, async () => {
    const { plane: p } = await plane();
    await p.journal.appendBatch(runDrafts(runId(1), Math.ceil(CHANGES_MAX_RECORDS / 2)));
    const head = (await p.journal.head()).seq;
    expect(head).toBeGreaterThan(CHANGES_MAX_RECORDS);
    expect(await call(p, 'journal.changes', { afterSeq: 0 })).toMatchObject({ truncated: true, head });
    expect((await call(p, 'journal.changes', { afterSeq: head - CHANGES_MAX_RECORDS })).truncated).toBe(false);
  });
});
