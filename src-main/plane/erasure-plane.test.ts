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
import { call, failure, testPlane } from '../../tests/support/runtime-support';
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

    const path = journalPath(dataDir);
    for (const file of [path, `${path}-wal`, `${path}-shm`].filter((f) => existsSync(f))) expect(readFileSync(file).includes(SECRET), file).toBe(false);
  });
});
