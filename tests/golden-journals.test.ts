/**
 * Every golden journal (tests/fixtures/journals/, README.md there) is still readable by this
 * build: it verifies offline with a clean report, every body checks against its kind's schema
 * at its version, its runs fold to the views the build that made it showed, and each run the
 * plane admitted replays from its record with no divergence and nothing performed again. And
 * every record version this build writes has a golden journal holding it, so a version bump
 * cannot land without one.
 */
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CURRENT_VERSION, SEALED_VERSION, checkRecordBody, type JournalRecord, type RecordBody } from '../src-shared/journal/records';
import { canonicalize } from '../src-shared/journal/canonical-json';
import { verifyBundleFile } from '../src-main/journal/bundle-verify';
import type { Plane } from '../src-main/plane/plane';
import { tempDataDir } from './support/journal-support';
import { call, testPlane } from './support/runtime-support';
import { agentsOf, GOLDEN_DIR, GOLDEN_KINDS, importBundle, isPlaneHost, payloadSealed, readBundle, readViews, replayableRuns, replayRuntime, runsOf, type GoldenViews } from './support/golden-journals';

const BUNDLES = readdirSync(GOLDEN_DIR)
  .filter((name) => name.endsWith('.jsonl'))
  .sort();
const viewFileOf = (bundle: string) => join(GOLDEN_DIR, bundle.replace(/\.jsonl$/, '.view.json'));

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close().catch(() => undefined);
});

/** The views a plane over the bundle's records shows, as `views` lists them (runs.get, acp.session). */
async function foldedViews(records: readonly JournalRecord[], views: GoldenViews, options: { checkHashes?: boolean } = {}): Promise<Pick<GoldenViews, 'runs' | 'sessions'>> {
  const dataDir = tempDataDir('ap-golden-fold-');
  const journal = await importBundle(records, dataDir, options);
  await journal.close();
  const plane: Plane = await testPlane({ dataDir, agents: agentsOf(views.agents) });
  open.push(plane);
  const out: Pick<GoldenViews, 'runs' | 'sessions'> = { runs: {}, sessions: {} };
  for (const runId of Object.keys(views.runs)) out.runs[runId] = await call(plane, 'runs.get', { runId });
  for (const runId of Object.keys(views.sessions)) out.sessions[runId] = await call(plane, 'acp.session', { runId });
  await plane.close();
  return out;
}

/**
 * Replays each of the bundle's replayable runs (replayableRuns), one at a time: the bundle's
 * records without that run's seal are written to a fresh journal, and a runtime whose every
 * outward door refuses (replayRuntime) resumes the run, as after a restart. A run cancelled
 * while it waited for a person is not resumed at start-up (it still waits), so its Cancelled
 * record is held back and appended once the runtime runs, as another process's cancel is, and
 * the runtime's follower resumes it. Answers what went wrong: a door used, a record other than
 * the seal written, a seal unlike the recorded one (a divergence seals `failed`, code Divergence).
 */
async function replayProblems(records: readonly JournalRecord[], views: GoldenViews): Promise<string[]> {
  const problems: string[] = [];
  for (const runId of replayableRuns(records)) {
    const seal = records.find((r) => r.kind === 'RunSealed' && r.runId === runId)!;
    const held = records.filter((r) => r.kind === 'Cancelled' && r.runId === runId);
    const kept = records.filter((r) => r !== seal && !held.includes(r));
    const journal = await importBundle(kept, tempDataDir('ap-golden-replay-'), { checkHashes: false });
    open.push(journal);
    const { runtime, doors } = await replayRuntime(
      journal,
      agentsOf(views.agents),
      records.filter((r) => r.runId === runId),
    );
    open.push(runtime);
    for (const r of held) await journal.append({ runId, kind: 'Cancelled', body: r.body as RecordBody<'Cancelled'> });
    const deadline = Date.now() + 5_000;
    while ((await runtime.settled(runId)).status !== 'sealed' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const before = kept.filter((r) => r.runId === runId).length + held.length;
    const added = (await journal.readRun(runId, 1, 10_000)).slice(before);
    if (added.length !== 1 || added[0]!.kind !== 'RunSealed') {
      problems.push(`${runId}: the replay wrote ${added.map((r) => r.kind).join(', ') || 'nothing'}, not only its seal`);
    } else if (canonicalize(added[0]!.body) !== canonicalize(seal.body)) {
      problems.push(`${runId}: sealed ${JSON.stringify(added[0]!.body)} on replay, not the recorded ${JSON.stringify(seal.body)}`);
    }
    problems.push(...doors.calls.map((what) => `${runId}: the replay performed ${what}`));
  }
  return problems;
}

/** The record versions this build writes (CURRENT_VERSION) that none of these bundles holds. */
function versionsWithoutGolden(bundles: readonly string[]): string[] {
  const present = new Set(bundles.flatMap((name) => readBundle(join(GOLDEN_DIR, name)).records.map((r) => `${r.kind} v${r.v}`)));
  // The versions written clear, and those a data dir that seals payloads writes (docs/ERASURE.md).
  return [...Object.entries(CURRENT_VERSION), ...Object.entries(SEALED_VERSION).map(([kind, sealed]) => [kind, sealed.v] as const)]
    .map(([kind, v]) => `${kind} v${v}`)
    .filter((version) => !present.has(version));
}

describe('golden journals', () => {
  it('there is one for every kind of run, each with its view file', () => {
    const kinds = new Set(BUNDLES.map((name) => readViews(viewFileOf(name)).kind));
    expect([...kinds].sort()).toEqual([...GOLDEN_KINDS].sort());
  });

  it('every record version this build writes is in a golden journal', () => {
    // A version written today with no golden journal: make one (README.md), keeping the old ones.
    expect(versionsWithoutGolden(BUNDLES)).toEqual([]);
    // And the check bites: without the observed sessions' journals, Observation v1 has none, and
    // without the case's, CaseBound v1 has none.
    expect(versionsWithoutGolden(BUNDLES.filter((name) => !name.startsWith('acp-')))).toContain(`Observation v${CURRENT_VERSION.Observation}`);
    expect(versionsWithoutGolden(BUNDLES.filter((name) => !name.startsWith('acp-case.')))).toEqual([`CaseBound v${CURRENT_VERSION.CaseBound}`]);
  });

  describe.each(BUNDLES)('%s', (name) => {
    const file = join(GOLDEN_DIR, name);
    const bundle = readBundle(file);
    const views = readViews(viewFileOf(name));

    it('verifies offline with a clean report, and every body checks against its kind and version', async () => {
      const report = await verifyBundleFile(file);
      expect(report).toMatchObject({ ok: true, count: bundle.records.length, unsigned: 0, unknownKinds: 0 });
      const bad = bundle.records.flatMap((r) => {
        const check = checkRecordBody(r.kind, r.v, r.body);
        return 'body' in check ? [] : [`seq ${r.seq} ${r.kind} v${r.v}: ${'why' in check ? check.why : check.invalid}`];
      });
      expect(bad).toEqual([]);
    });

    it('folds every run to the view the plane showed when it was made', async () => {
      const { admitted, observed } = runsOf(bundle.records);
      expect(Object.keys(views.runs).sort()).toEqual([...admitted, ...observed].sort());
      expect(Object.keys(views.sessions).sort()).toEqual([...observed].sort());
      expect(await foldedViews(bundle.records, views)).toEqual({ runs: views.runs, sessions: views.sessions });
    });

    it('replays every run the plane admitted from its record: no divergence, nothing performed, the same seal', async () => {
      // Not replayed: an observed ACP session (no admission, nothing the runtime executes: its
      // records are the observation itself) and a peer's skill run (host peer:<id>; its program
      // lives in the peer process). Both are verified and folded above. Nor a run whose payloads
      // are sealed (docs/ERASURE.md): their keys are in no bundle.
      const runs = replayableRuns(bundle.records);
      const sealedRuns = new Set(bundle.records.filter((r) => r.kind === 'RunAdmitted' && payloadSealed(r)).map((r) => r.runId));
      const expected = Object.values(views.runs).filter((v) => isPlaneHost(v.host) && v.agent in Object.fromEntries(views.agents.map((a) => [a.name, 1])) && !sealedRuns.has(v.runId));
      expect(runs.sort()).toEqual(expected.map((v) => v.runId).sort());
      expect(await replayProblems(bundle.records, views)).toEqual([]);
    });
  });

  describe('the checks can fail', () => {
    const name = BUNDLES.find((n) => n.startsWith('approval.'))!;
    const bundle = readBundle(join(GOLDEN_DIR, name));
    const views = readViews(viewFileOf(name));

    it('one byte changed in a record of a copy fails verification', async () => {
      const copy = join(tempDataDir('ap-golden-copy-'), name);
      copyFileSync(join(GOLDEN_DIR, name), copy);
      const lines = readFileSync(copy, 'utf8').split('\n');
      const at = lines.findIndex((line) => line.includes('"agent":"approve-echo"'));
      lines[at] = lines[at]!.replace('"agent":"approve-echo"', '"agent":"approve-ecHo"');
      writeFileSync(copy, lines.join('\n'));
      const report = await verifyBundleFile(copy);
      expect(report.ok).toBe(false);
    });

    it('a record that folds differently fails the view comparison', async () => {
      const changed = bundle.records.map((r) => (r.kind === 'EffectDone' ? { ...r, body: { ...r.body, spend: { ...(r.body.spend as object), outputTokens: 999 } } } : r));
      const folded = await foldedViews(changed, views, { checkHashes: false });
      expect(folded).not.toEqual({ runs: views.runs, sessions: views.sessions });
    });

    it('a changed input diverges on replay, and a changed result seals differently', async () => {
      // Another topic makes another prompt: the model call's key is not the recorded one.
      const diverging = bundle.records.map((r) => (r.kind === 'RunAdmitted' ? { ...r, body: { ...r.body, input: { topic: 'something else' } } } : r));
      expect((await replayProblems(diverging, views)).join('\n')).toContain('Divergence');
      const lastDone = bundle.records.filter((r) => r.kind === 'EffectDone').at(-1)!;
      const otherResult = bundle.records.map((r) => (r === lastDone ? { ...r, body: { ...r.body, result: { line: 'not what was recorded' } } } : r));
      expect((await replayProblems(otherResult, views)).join('\n')).toContain('not the recorded');
    });
  });
});
