/**
 * Erasure through a whole plane (docs/ERASURE.md): a run made with sealing on is read in full,
 * then its owner is erased and the same `runs.get` (whose folded view the runtime had cached)
 * says erased and shows no result; the timeline's records say erased and carry the stored body;
 * the plane's own verify stays valid; and the plaintext is in none of the journal's files.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { journalPath } from '../journal/sqlite-store';
import { compileAgent } from '../runtime/manifest';
import { tempDataDir } from '../../tests/support/journal-support';
import { call, failure, testPlane, until } from '../../tests/support/runtime-support';
import type { Plane } from './plane';

const SECRET = 'OKAPI-LANTERN-5531';
const SUMMARIZE = compileAgent(
  {
    name: 'summarize',
    description: 'Summarise a text with the local deterministic model.',
    input: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string', minLength: 1, maxLength: 20000 } } },
    steps: [{ as: 'summary', model: { provider: 'local', system: 'You write one-paragraph summaries.', prompt: 'Summarise: {{input.text}}', maxTokens: 64 } }, { output: { summary: '{{steps.summary.text}}' } }],
    grants: [{ kind: 'model', name: 'local' }],
    budget: { maxEffects: 5, maxTokens: 4000 },
  },
  'test:summarize',
);

/** Echoes its input once a person approves: what the person is asked (the arguments) holds the input. */
const APPROVE_ECHO = compileAgent(
  {
    name: 'approve-echo',
    description: 'Echo a text once a person approves.',
    input: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } },
    steps: [{ as: 'echoed', tool: { name: 'echo', args: { line: '{{input.text}}' } } }, { output: '{{steps.echoed}}' }],
    grants: [{ kind: 'tool', name: 'echo', approve: true }],
    budget: { maxEffects: 5 },
  },
  'test:approve-echo',
);

/** Whether any of the journal's database files (main, -wal, -shm) holds `text`, as they are on disk now. */
function inJournalFiles(dataDir: string, text: string): string[] {
  const path = journalPath(dataDir);
  return [path, `${path}-wal`, `${path}-shm`].filter((f) => existsSync(f) && readFileSync(f).includes(text));
}

const planes: Plane[] = [];
afterEach(async () => {
  for (const p of planes.splice(0)) await p.close();
});

describe('erasure through the plane', () => {
  it('a run read in full before the erase reads as erased after it, and every check stays valid', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-erasure-plane-');
    const plane = await testPlane({ dataDir, agents: [SUMMARIZE] });
    planes.push(plane);
    await call(plane, 'erasure.settings', { sealPayloads: true });
    const { runId } = await call(plane, 'runs.start', { agent: 'summarize', input: { text: SECRET }, wait: true });
    const before = await call(plane, 'runs.get', { runId });
    expect(JSON.stringify(before.result)).toContain(SECRET);
    expect(before.erased).toBeUndefined();
    // A fork of a sealed run takes its answers from the parent's sealed records; the journal still verifies.
    const fork = await call(plane, 'runs.fork', { runId, at: 1, wait: true });
    expect((await call(plane, 'runs.get', { runId: fork.runId })).status).toBe('sealed');
    expect(await call(plane, 'journal.verify', {})).toMatchObject({ ok: true });

    const refused = await failure(plane, 'erasure.erase', { subject: 'user:nobody' });
    expect(refused.message).toMatch(/no payload of subject "user:nobody"/);
    const erased = await call(plane, 'erasure.erase', { subject: before.owner, reason: 'asked to be forgotten' });

    const after = await call(plane, 'runs.get', { runId });
    expect(after.result).toBeUndefined();
    expect(after.erased).toEqual({ at: erased.at, by: erased.by, reason: 'asked to be forgotten' });
    const { records } = await call(plane, 'journal.records', { runId, fromSeq: 1, limit: 100 });
    expect(records.filter((r) => r.stored !== undefined).length).toBeGreaterThanOrEqual(3);
    for (const r of records.filter((r) => r.stored !== undefined)) expect(r.body.erased).toMatchObject({ reason: 'asked to be forgotten' });
    expect(JSON.stringify(records)).not.toContain(SECRET);
    expect(await call(plane, 'journal.verify', {})).toMatchObject({ ok: true });

    expect(inJournalFiles(dataDir, SECRET)).toEqual([]);
  });

  it('what a person is asked and what they answer are sealed too: the inbox shows them, the files hold neither, an erasure takes both', { timeout: 60_000 }, async () => {
    const dataDir = tempDataDir('ap-erasure-approval-');
    const plane = await testPlane({ dataDir, agents: [APPROVE_ECHO] });
    planes.push(plane);
    await call(plane, 'erasure.settings', { sealPayloads: true });
    const REASON = 'PANGOLIN-REASON-9907';
    // `wait` answers once the run has sealed or waits for a person.
    const { runId } = await call(plane, 'runs.start', { agent: 'approve-echo', input: { text: SECRET }, wait: true });
    const wait = (await call(plane, 'approvals.list', {})).waiting.find((r) => r.runId === runId)!.pending!;
    // The inbox reads the sealed question opened: the arguments a person approves are there.
    expect(JSON.stringify(wait.subject)).toContain(SECRET);
    await call(plane, 'approvals.decide', { runId, waitId: wait.waitId, subjectHash: wait.subjectHash, decision: 'approve', reason: REASON });
    const done = await until(async () => {
      const view = await call(plane, 'runs.get', { runId });
      return view.status === 'sealed' ? view : undefined;
    }, 'the approved run to seal', 30_000);
    expect(JSON.stringify(done.result)).toContain(SECRET);

    const { records } = await call(plane, 'journal.records', { runId, fromSeq: 1, limit: 100 });
    const suspended = records.find((r) => r.kind === 'Suspended')!;
    const decision = records.find((r) => r.kind === 'Decision')!;
    expect(suspended.v).toBe(2);
    expect(decision.v).toBe(3);
    expect(JSON.stringify(suspended.body.subject)).toContain(SECRET);
    expect(decision.body.reason).toBe(REASON);
    expect(inJournalFiles(dataDir, SECRET)).toEqual([]);
    expect(inJournalFiles(dataDir, REASON)).toEqual([]);

    await call(plane, 'erasure.erase', { subject: done.owner, reason: 'asked to be forgotten' });
    const after = await call(plane, 'journal.records', { runId, fromSeq: 1, limit: 100 });
    expect(JSON.stringify(after.records)).not.toContain(SECRET);
    expect(JSON.stringify(after.records)).not.toContain(REASON);
    expect(after.records.find((r) => r.kind === 'Suspended')!.body.erased).toMatchObject({ reason: 'asked to be forgotten' });
    expect(after.records.find((r) => r.kind === 'Decision')!.body.erased).toMatchObject({ reason: 'asked to be forgotten' });
    // The run still folds (its question erased) and the journal still verifies.
    expect((await call(plane, 'runs.get', { runId })).status).toBe('sealed');
    expect(await call(plane, 'journal.verify', {})).toMatchObject({ ok: true });
  });
});
