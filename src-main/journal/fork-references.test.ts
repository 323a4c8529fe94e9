/**
 * Offline verify holds a fork's reused steps to its parent's records (fork-references.ts): a
 * real fork verifies, in the data dir and as a bundle (full, and run-scoped without its
 * parent); a fork record the plane itself signed but whose reference does not hold (another
 * hash, another result, a record that is not an answer) fails, naming its seq and why.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';
import { agent, call, testPlane } from '../../tests/support/runtime-support';
import type { Plane } from '../plane/plane';
import { exportBundle } from './bundle-export';
import { verifyBundleFile, verifyBundleFileInThread } from './bundle-verify';

const open: Plane[] = [];
afterEach(async () => {
  for (const p of open.splice(0).reverse()) await p.close().catch(() => undefined);
});

const TWO_DRAFTS = agent({
  name: 'two-drafts',
  steps: [
    { as: 'first', model: { provider: 'local', prompt: 'First draft', maxTokens: 20 } },
    { as: 'second', model: { provider: 'local', prompt: 'Second: {{steps.first.text}}', maxTokens: 20 } },
    { output: '{{steps.second.text}}' },
  ],
  grants: [{ kind: 'model', name: 'local' }],
});

async function forked() {
  const dataDir = tempDataDir('ap-fork-verify-');
  const plane = await testPlane({ dataDir, agents: [TWO_DRAFTS] });
  open.push(plane);
  const parent = await call(plane, 'runs.start', { agent: 'two-drafts', input: {}, wait: true });
  const fork = await call(plane, 'runs.fork', { runId: parent.runId, at: 1, wait: true });
  expect(fork).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
  const parentRecords = await plane.journal.readRun(parent.runId, 1, 100);
  const reused = (await plane.journal.readRun(fork.runId, 1, 100)).find((r) => r.kind === 'EffectReused')!;
  return { dataDir, plane, parent, fork, parentRecords, reused };
}

describe("offline verify and a fork's references to its parent", () => {
  it('a real fork verifies in its data dir, as a full bundle, and as a bundle of the fork alone', async () => {
    const { dataDir, plane, fork } = await forked();
    expect(await call(plane, 'journal.verify', {})).toMatchObject({ ok: true });
    const full = join(dataDir, 'full.jsonl');
    await exportBundle(plane.journal, { kind: 'full' }, full);
    expect(await verifyBundleFile(full)).toMatchObject({ ok: true });
    const run = join(dataDir, 'run.jsonl');
    await exportBundle(plane.journal, { kind: 'run', runId: fork.runId }, run);
    expect(await verifyBundleFile(run)).toMatchObject({ ok: true });
  });

  it("a fork of a fork names its parent's reused record, and verifies against the step inside it", async () => {
    const { dataDir, plane, fork } = await forked();
    const grandchild = await call(plane, 'runs.fork', { runId: fork.runId, at: 1, wait: true });
    expect(grandchild).toMatchObject({ status: 'sealed', outcome: 'succeeded' });
    const reused = (await plane.journal.readRun(grandchild.runId, 1, 100)).find((r) => r.kind === 'EffectReused')!;
    const from = (reused.body as { steps: Array<{ from: { runId: string; seq: number } }> }).steps[0]!.from;
    const named = (await plane.journal.readRun(fork.runId, 1, 100)).find((r) => r.seq === from.seq)!;
    expect(named.kind).toBe('EffectReused');
    expect(from.runId).toBe(fork.runId);
    expect(await call(plane, 'journal.verify', {})).toMatchObject({ ok: true });
    const full = join(dataDir, 'grandchild.jsonl');
    await exportBundle(plane.journal, { kind: 'full' }, full);
    expect(await verifyBundleFile(full)).toMatchObject({ ok: true });
  });

  const tampered = [
    ['another hash', (from: { runId: string; seq: number; hash: string }) => ({ ...from, hash: 'f'.repeat(64) }), null, /with hash ffffffffffffffff…, but that record's hash is/],
    ['another result', null, 'a result the parent never had', /but its result is not that record's/],
    ['a record that is not an answer', (from: { runId: string; seq: number; hash: string }, admitted: { seq: number; hash: string }) => ({ ...from, seq: admitted.seq, hash: admitted.hash }), null, /but that record is a RunAdmitted of run-[0-9a-f]+, not an answer of that run/],
  ] as const;
  for (const [what, from, result, reason] of tampered) {
    it(`a reused step naming ${what} fails verify, naming its seq`, async () => {
      const { dataDir, plane, parentRecords, reused } = await forked();
      const body = (reused.body as { steps: Array<{ from: { runId: string; seq: number; hash: string }; result: unknown }> }).steps[0]!;
      const admitted = parentRecords.find((r) => r.kind === 'RunAdmitted')!;
      // Signed by the plane itself: the chain and the checkpoints hold; only the reference does not.
      const bad = await plane.journal.append({
        runId: reused.runId,
        kind: 'EffectReused',
        body: { steps: [{ ...body, step: 0, from: from ? from(body.from, admitted) : body.from, result: (result ?? body.result) as never }] } as never,
      });
      const local = await call(plane, 'journal.verify', {});
      expect(local).toMatchObject({ ok: false, seq: bad.seq });
      expect((local as { reason: string }).reason).toMatch(reason);
      const full = join(dataDir, 'tampered.jsonl');
      await exportBundle(plane.journal, { kind: 'full' }, full);
      for (const verify of [verifyBundleFile, verifyBundleFileInThread]) {
        const report = await verify(full);
        expect(report).toMatchObject({ ok: false, seq: bad.seq });
        expect((report as { reason: string }).reason).toMatch(reason);
      }
    });
  }
});
