/**
 * Sealed payloads as slices of one stream a key (docs/ERASURE.md): each record opens alone from
 * its own slice, across appends and within one, in any script; slices of one stream never
 * overlap; the stored text is exactly RFC 8785's; records sealed in the older per-payload form
 * still open; an erasure ends its key's stream; a body with no canonical form is refused alone.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalize } from '../../src-shared/journal/canonical-json';
import type { AnyRecordDraft, SealedSlice } from '../../src-shared/journal/records';
import { SEALED_VERSION } from '../../src-shared/journal/records';
import { tempDataDir, ZERO_SPEND } from '../../tests/support/journal-support';
import { Journal } from './journal';
import { verifyJournalStore } from './journal-workers';
import { decryptSlice, encryptPayload, joinTexts, periodOf, SealStream } from './payload-sealer';
import { prepareSealed } from './prepare-draft';

const journals: Journal[] = [];
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close().catch(() => undefined);
});

async function open(): Promise<Journal> {
  const journal = await Journal.open({ dataDir: tempDataDir(), sealPayloads: true, checkpointEvery: 5 });
  journals.push(journal);
  return journal;
}

const KEY = '1'.padStart(64, '0');

function admitted(runId: string, owner: string, input: unknown): AnyRecordDraft {
  return { runId, kind: 'RunAdmitted', body: { agent: 'echo', owner, chain: [owner], input, inputProvenance: owner, budget: { maxEffects: 10 }, trigger: { via: 'cli', by: owner } } } as AnyRecordDraft;
}

function effect(runId: string, step: number, request: unknown, result: unknown): AnyRecordDraft[] {
  return [
    { runId, kind: 'EffectStarted', body: { step, effect: 'tool', name: 'echo', key: KEY, request } } as AnyRecordDraft,
    { runId, kind: 'EffectDone', body: { step, key: KEY, result, spend: { ...ZERO_SPEND, effects: 1 }, provenance: 'plane' } } as AnyRecordDraft,
  ];
}

describe('payload sealing as stream slices', () => {
  it('each record opens alone, in any script, across single appends and group commits; slices of one stream never overlap', async () => {
    const journal = await open();
    const runId = 'run-00000000000000000001';
    const texts = ['plain ascii', 'café crème', '東京の天気', 'emoji 🦓🔑 and a "quote" \\ and a\nnewline', ''];
    await journal.append(admitted(runId, 'user:alice', { text: texts[0] }));
    // One at a time, then several in one commit: both continue the key's stream.
    await journal.appendBatch(effect(runId, 0, { text: texts[1] }, { echoed: texts[2] }));
    await journal.append(effect(runId, 1, { text: texts[3] }, { echoed: texts[4] })[0]!);
    await journal.append(effect(runId, 1, { text: texts[3] }, { echoed: texts[4] })[1]!);

    const records = await journal.readRun(runId, 1, 100);
    expect(records.map((r) => r.v)).toEqual([SEALED_VERSION.RunAdmitted.v, 3, 3, 3, 3]);
    expect(records[0]!.body.input).toEqual({ text: texts[0] });
    expect(records[1]!.body.request).toEqual({ text: texts[1] });
    expect(records[2]!.body.result).toEqual({ echoed: texts[2] });
    expect(records[3]!.body.request).toEqual({ text: texts[3] });
    expect(records[4]!.body.result).toEqual({ echoed: texts[4] });

    // Read one record alone, not with its neighbours: its slice is all it needs.
    const [third] = await journal.readRange(records[2]!.seq, records[2]!.seq, 1);
    expect(third!.body.result).toEqual({ echoed: texts[2] });

    const slices = records.map((r) => (JSON.parse(r.bodyText) as { sealed: SealedSlice }).sealed);
    // One stream (this process kept it open across appends): one nonce, slices one after another.
    expect(new Set(slices.map((s) => s.nonce)).size).toBe(1);
    let end = 0;
    for (const slice of slices) {
      expect(slice.at).toBe(end);
      end = slice.at + Buffer.from(slice.data, 'base64').length;
    }
    for (const record of records) {
      expect(record.bodyText.includes('crème')).toBe(false);
      // The stored text is RFC 8785's own form of itself.
      expect(canonicalize(JSON.parse(record.bodyText))).toBe(record.bodyText);
    }
    await journal.checkpoint();
    expect(await verifyJournalStore(journal)).toMatchObject({ ok: true });
  });

  it('writes the canonical text of a body whose member names and subject need escaping and sorting', async () => {
    const journal = await open();
    const runId = 'run-00000000000000000002';
    const owner = 'user:"odd"\\name\u0001 ünïcode';
    await journal.append(admitted(runId, owner, { z: 1, a: { 'é': 2, 'A': [1, 'x'] } }));
    const [record] = await journal.readRun(runId, 1, 1);
    expect(record!.v).toBe(3);
    expect(canonicalize(JSON.parse(record!.bodyText))).toBe(record!.bodyText);
    expect(record!.body.input).toEqual({ z: 1, a: { 'é': 2, 'A': [1, 'x'] } });
    expect(record!.body.owner).toBe(owner);
  });

  it('a slice opens from its own offset in the middle of a block, and a wrong key does not open it', () => {
    const key = Buffer.alloc(32, 7);
    const stream = new SealStream(key, { subject: 'user:a', period: '2026-12', key: 'a'.repeat(32) });
    const texts = ['{"a":1}', '{"b":"ünï"}', '{"c":"a longer text that spans more than one sixteen-byte block"}'];
    const first = stream.seal(joinTexts(texts.slice(0, 1)).plain, joinTexts(texts.slice(0, 1)).lengths);
    const rest = joinTexts(texts.slice(1));
    const later = stream.seal(rest.plain, rest.lengths);
    const slices = [...first, ...later].map((t) => JSON.parse(t) as SealedSlice);
    expect(slices.map((s) => s.at)).toEqual([0, 7, 7 + Buffer.byteLength(texts[1]!)]);
    slices.forEach((slice, i) => expect(decryptSlice(key, slice)).toBe(texts[i]));
    expect(decryptSlice(Buffer.alloc(32, 8), slices[2]!)).not.toBe(texts[2]);
  });

  it('still opens a record sealed in the per-payload form (version 2)', async () => {
    const journal = await open();
    const runId = 'run-00000000000000000003';
    const sealer = journal.erasure();
    const period = periodOf(Date.now());
    const { id, keyObject } = sealer.keys.keyFor('user:old', period);
    const sealed = encryptPayload(keyObject, { subject: 'user:old', period, key: id }, canonicalize({ input: { text: 'sealed the older way' } }));
    const body = { agent: 'echo', owner: 'user:old', chain: ['user:old'], inputProvenance: 'user:old', budget: { maxEffects: 10 }, trigger: { via: 'cli', by: 'user:old' }, sealed };
    await journal.appendBatch([prepareSealed({ runId, kind: 'RunAdmitted', v: 2, body })]);
    const [record] = await journal.readRun(runId, 1, 1);
    expect(record!.v).toBe(2);
    expect(record!.body.input).toEqual({ text: 'sealed the older way' });
  });

  it('an erasure ends its key’s stream: the subject’s next payload is sealed under a new key and a new nonce', async () => {
    const journal = await open();
    const sealer = journal.erasure();
    await journal.append(admitted('run-00000000000000000004', 'user:bob', { text: 'before' }));
    const keys = sealer.keys.keysOf('user:bob');
    expect(keys).toHaveLength(1);
    const [erasure] = await journal.appendBatch([{ runId: null, kind: 'SubjectErased', body: { subject: 'user:bob', keys: keys.map((k) => ({ key: k.key, period: k.period })), by: 'user:dpo', reason: 'test' } }]);
    sealer.destroyKeys(keys, { at: erasure!.time, by: 'user:dpo', reason: 'test', seq: erasure!.seq });
    await journal.append(admitted('run-00000000000000000005', 'user:bob', { text: 'after' }));

    const [before] = await journal.readRun('run-00000000000000000004', 1, 1);
    const [after] = await journal.readRun('run-00000000000000000005', 1, 1);
    expect(before!.body.erased).toMatchObject({ by: 'user:dpo', reason: 'test' });
    expect(after!.body.input).toEqual({ text: 'after' });
    const slice = (r: typeof before) => (JSON.parse(r!.bodyText) as { sealed: SealedSlice }).sealed;
    expect(slice(after).key).not.toBe(slice(before).key);
    expect(slice(after).nonce).not.toBe(slice(before).nonce);
  });

  it('refuses a body with no canonical form alone, naming where it is; the journal and the other appends go on', async () => {
    const journal = await open();
    const runId = 'run-00000000000000000006';
    await journal.append(admitted(runId, 'user:carol', { text: 'ok' }));
    const head = (await journal.head()).seq;
    const [bad] = effect(runId, 0, { n: Number.NaN }, {});
    const good = effect(runId, 0, { n: 1 }, { echoed: 1 });
    const results = await Promise.allSettled([journal.append(bad!), journal.appendBatch(good)]);
    expect(results[0]).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/EffectStarted body cannot canonicalize \$\.request\.n/) } });
    expect(results[1].status).toBe('fulfilled');
    expect((await journal.head()).seq).toBe(head + 2);
    // A run nobody admitted here has no owner to seal under: its record is written clear, and still refused alone when bad.
    await expect(journal.append(effect('run-00000000000000000007', 0, { n: Number.POSITIVE_INFINITY }, {})[0]!)).rejects.toThrow(/cannot canonicalize \$\.request\.n/);
    expect((await journal.head()).seq).toBe(head + 2);
  });
});
