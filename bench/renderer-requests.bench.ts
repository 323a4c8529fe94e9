/**
 * What a burst of journal activity costs the renderer in requests. Subject: the renderer's
 * store (createAppStore, as the app builds it, with the window's real timers) following a
 * plane through the contract client, with one run's timeline open, while 1,000 records are
 * committed across 10 runs: 100 commits of 10 records, each commit touching every run, each
 * awaited before the next (as runs writing effect after effect do). Counted where requests
 * leave the client, from the first commit until everything has settled.
 *
 * Goal (docs/PERFORMANCE.md): at most runs touched + 1 requests (a re-read per run, one read of the open
 * timeline's new records), judged as a ratio against that number.
 *
 * Shown beside it: the previous store's follower, replayed against the same kind of plane in
 * the same run — it read every new record with `journal.records` (runId null, 1,000 a page)
 * each time the head moved, and re-read with `runs.get` every run those records named,
 * coalesced over 80 ms. (Measured on the previous build itself, commit 027e129, the same
 * burst cost 170 requests; a single group commit of 1,000 records cost 11.)
 */
import type { ConnectionState, PlaneClient } from '../src-shared/ipc/client';
import { createPlaneClient } from '../src-shared/ipc/client';
import type { CommandName } from '../src-shared/ipc/contract';
import type { AnyRecordDraft } from '../src-shared/journal/records';
import { createAppStore } from '../src-renderer/src/store/app-store';
import type { StoreEnv } from '../src-renderer/src/store/store-types';
import { testTransport, type TestTransport } from '../tests/support/contract-support';
import { runDrafts } from '../tests/support/journal-support';
import { testPlane } from '../tests/support/runtime-support';
import type { Benchmark } from './bench-types';

const RUNS = 10;
const COMMITS = 100;
const ROUNDS = 3;
/** Past the store's longest coalescing wait (1 s), so every read the burst causes is counted. */
const QUIET_MS = 1500;

type Plane = Awaited<ReturnType<typeof testPlane>>;

const runId = (round: number, n: number) => `run-${(round * 100 + n).toString(16).padStart(20, '0')}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** Waits until nothing is in flight and nothing new was sent for QUIET_MS. */
async function quiet(wire: TestTransport): Promise<void> {
  let seen = -1;
  while (seen !== wire.requests.length || wire.inFlight > 0) {
    seen = wire.requests.length;
    await sleep(QUIET_MS);
  }
}

/** 102 drafts a run: admitted and a first effect before the burst, 100 in it (sealed last). */
function burstOf(round: number): { before: AnyRecordDraft[]; commits: AnyRecordDraft[][]; ids: string[] } {
  const ids = Array.from({ length: RUNS }, (_, n) => runId(round, n + 1));
  const drafts = ids.map((id) => runDrafts(id, 50));
  const commits = Array.from({ length: COMMITS }, (_, k) => drafts.map((d) => d[k + 2]!));
  return { before: drafts.flatMap((d) => d.slice(0, 2)), commits, ids };
}

const windowEnv: StoreEnv = {
  now: () => Date.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  saveFile: () => undefined,
  notifications: { permission: () => 'unsupported', request: async () => 'unsupported', show: () => undefined },
  storage: null,
};

async function commitBurst(plane: Plane, commits: AnyRecordDraft[][]): Promise<number> {
  for (const commit of commits) await plane.journal.appendBatch(commit);
  return (await plane.journal.head()).seq;
}

/** The subject: the store as the app runs it. Returns the requests the burst cost. */
async function storeRound(round: number): Promise<{ requests: CommandName[]; burstMs: number }> {
  const plane = await testPlane({ agents: [] });
  const wire = testTransport(plane);
  const store = createAppStore(createPlaneClient(wire.transport), windowEnv);
  const stop = store.getState().start();
  try {
    const { before, commits, ids } = burstOf(round);
    await until(() => store.getState().runsLoaded, 'the first sync');
    await plane.journal.appendBatch(before);
    await until(() => ids.every((id) => store.getState().runs[id]), 'the runs');
    store.getState().openTimeline(ids[0]!);
    await quiet(wire);
    const from = wire.requests.length;
    const started = performance.now();
    const head = await commitBurst(plane, commits);
    const burstMs = performance.now() - started;
    await until(() => store.getState().journalHead === head, 'the last notification');
    await quiet(wire);
    const state = store.getState();
    // A count is only worth printing if the view it bought is right.
    for (const id of ids) if (state.runs[id]?.status !== 'sealed' || state.runs[id]?.records !== 102) throw new Error(`run ${id} is not current in the store`);
    if (state.timeline.count !== 102 || state.timeline.pages[0]?.length !== 102) throw new Error('the open timeline is not current in the store');
    return { requests: wire.requests.slice(from), burstMs };
  } finally {
    stop();
    wire.drop();
    await plane.close();
  }
}

/** The previous store's follower, as it was: every new record read, then the runs they name. */
function previousFollower(client: PlaneClient): () => void {
  let head = 0;
  let target = 0;
  let following: Promise<void> | null = null;
  const touched = new Set<string>();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const touch = (id: string) => {
    touched.add(id);
    if (timer !== null) return;
    timer = setTimeout(() => {
      timer = null;
      const ids = [...touched];
      touched.clear();
      for (const runId of ids) void client.tryCall('runs.get', { runId });
    }, 80);
  };
  const follow = async () => {
    while (head < target) {
      const result = await client.tryCall('journal.records', { runId: null, fromSeq: head + 1, limit: 1000 });
      if (!result.ok) return;
      const records = result.value.records;
      if (records.length === 0) return;
      head = records[records.length - 1]!.seq;
      for (const record of records) if (record.runId) touch(record.runId);
    }
  };
  const moved = (seq: number) => {
    target = Math.max(target, seq);
    if (following) return;
    following = follow().finally(() => {
      following = null;
      if (head < target) moved(target);
    });
  };
  return client.events({
    onEvent: (event) => {
      if (event.name === 'journal.appended') moved(event.payload.seq);
    },
    onSync: (sync) => {
      head = sync.head;
      target = Math.max(target, sync.head);
    },
    onState: (_state: ConnectionState) => undefined,
  });
}

async function previousRound(round: number): Promise<CommandName[]> {
  const plane = await testPlane({ agents: [] });
  const wire = testTransport(plane);
  const stop = previousFollower(createPlaneClient(wire.transport));
  try {
    const { before, commits } = burstOf(round);
    await until(() => wire.requests.includes('journal.changes'), 'the first sync');
    await plane.journal.appendBatch(before);
    await quiet(wire);
    const from = wire.requests.length;
    await commitBurst(plane, commits);
    await quiet(wire);
    return wire.requests.slice(from);
  } finally {
    stop();
    wire.drop();
    await plane.close();
  }
}

const tally = (requests: CommandName[]) =>
  Object.entries(requests.reduce<Record<string, number>>((n, r) => ({ ...n, [r]: (n[r] ?? 0) + 1 }), {}))
    .map(([name, n]) => `${n} ${name}`)
    .join(', ');

const benchmark: Benchmark = {
  name: 'renderer-requests',
  goal: { maxRatio: 1, text: `a 1,000-record burst across ${RUNS} runs costs at most runs touched + 1 = ${RUNS + 1} requests` },
  async run() {
    const subject: Array<{ requests: CommandName[]; burstMs: number }> = [];
    const previous: CommandName[][] = [];
    for (let round = 0; round < ROUNDS; round++) {
      subject.push(await storeRound(round));
      previous.push(await previousRound(round));
    }
    const worst = subject.reduce((a, b) => (b.requests.length > a.requests.length ? b : a));
    const previousWorst = previous.reduce((a, b) => (b.length > a.length ? b : a));
    return {
      subject: `the renderer store (createAppStore) over the contract client, one timeline open, ${COMMITS} commits × ${RUNS} records`,
      baseline: `the goal, runs touched + 1 = ${RUNS + 1}; shown: the previous store's follower on the same burst`,
      measurements: [
        { metric: 'requests per burst (worst round)', unit: 'req', subject: worst.requests.length, baseline: RUNS + 1, better: 'lower', judged: true },
        { metric: 'vs the previous follower (worst round)', unit: 'req', subject: worst.requests.length, baseline: previousWorst.length, better: 'lower', judged: false },
      ],
      notes: [
        `store, per round: ${subject.map((s) => `${s.requests.length} (${tally(s.requests)}; burst took ${s.burstMs.toFixed(0)} ms)`).join(' | ')}`,
        `previous follower, per round: ${previous.map((p) => `${p.length} (${tally(p)})`).join(' | ')}`,
        'the store coalesces a run\'s re-read until it has been quiet 80 ms, or for at most 1 s while it stays busy: a burst longer than 1 s costs one more read per run per second',
        'measured on the previous build itself (commit 027e129), the same burst cost 170 requests (100 journal.records, 70 runs.get) and 1,100 events',
      ],
    };
  },
};

export default benchmark;
