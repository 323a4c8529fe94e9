/**
 * Crypto-erasure on real SQLite files (docs/ERASURE.md): sealed payloads never reach the
 * journal's files (main db, -wal, -shm), an erased subject's payloads read as erased with when,
 * who and why, every verify (chain, checkpoints, a bundle offline) still passes, the key bytes
 * are gone from the key store's files, a hold refuses erasure naming itself, and retention
 * erases old unheld months only.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { commands } from '../../src-shared/ipc/contract';
import type { AnyRecordDraft } from '../../src-shared/journal/records';
import { exportBundle } from '../journal/bundle-export';
import { verifyBundleFile } from '../journal/bundle-verify';
import { Journal } from '../journal/journal';
import { verifyJournalStore } from '../journal/journal-workers';
import { journalPath } from '../journal/sqlite-store';
import { subjectKeysPath } from '../journal/subject-keys';
import { tempDataDir, ZERO_SPEND } from '../../tests/support/journal-support';
import { PlaneError } from '../base/plane-error';
import { erasureHandlers } from './erasure-handlers';
import { recordView } from './journal-handlers';
import { recordPreimage } from '../../src-shared/journal/record-hash';

const SECRET = 'ZEBRA-QUARTZ-7741';
const journals: Journal[] = [];
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close().catch(() => undefined);
});

function drafts(runId: string, owner: string, text: string): AnyRecordDraft[] {
  const key = '1'.padStart(64, '0');
  return [
    { runId, kind: 'RunAdmitted', body: { agent: 'echo', owner, chain: [owner], input: { text }, inputProvenance: owner, budget: { maxEffects: 10 }, trigger: { via: 'cli', by: owner } } },
    { runId, kind: 'EffectStarted', body: { step: 0, effect: 'tool', name: 'echo', key, request: { text } } },
    { runId, kind: 'EffectDone', body: { step: 0, key, result: { echoed: text }, spend: { ...ZERO_SPEND, effects: 1 }, provenance: 'plane' } },
    { runId, kind: 'RunSealed', body: { outcome: 'succeeded', result: { answer: text }, spend: { ...ZERO_SPEND, effects: 1 }, records: 3 } },
  ];
}

async function open(options: { seal: boolean; now?: () => number; dataDir?: string }): Promise<Journal> {
  const journal = await Journal.open({ dataDir: options.dataDir ?? tempDataDir(), sealPayloads: options.seal, checkpointEvery: 3, ...(options.now ? { now: options.now } : {}) });
  journals.push(journal);
  return journal;
}

/** The raw bytes of the journal's database files as they are on disk now (main, -wal, -shm). */
function journalBytes(dataDir: string): Buffer {
  const path = journalPath(dataDir);
  return Buffer.concat([path, `${path}-wal`, `${path}-shm`].filter((f) => existsSync(f)).map((f) => readFileSync(f)));
}

function keyStoreBytes(dataDir: string): Buffer {
  const path = subjectKeysPath(dataDir);
  return Buffer.concat([path, `${path}-journal`, `${path}-wal`].filter((f) => existsSync(f)).map((f) => readFileSync(f)));
}

const call = <T>(p: T | Promise<T>): Promise<T> => Promise.resolve(p);
const ctx = {} as never;

describe('crypto-erasure', () => {
  it('without sealing the input is plaintext in the database files (the control the next test is measured against)', async () => {
    const journal = await open({ seal: false });
    await journal.appendBatch(drafts('run-00000000000000000001', 'user:alice', SECRET));
    expect(journalBytes(journal.dataDir).includes(SECRET)).toBe(true);
  });

  it('seals payloads: no plaintext in the database files; erase reads as erased and every verify stays valid; the key bytes leave the key store', async () => {
    const journal = await open({ seal: true });
    const runId = 'run-00000000000000000002';
    await journal.appendBatch(drafts(runId, 'user:alice', SECRET));
    await journal.appendBatch(drafts('run-00000000000000000003', 'user:bob', 'bob keeps this'));
    await journal.checkpoint();
    expect(journalBytes(journal.dataDir).includes(SECRET)).toBe(false);

    const read = await journal.readRun(runId, 1, 100);
    expect(read.map((r) => r.v)).toEqual([3, 3, 3, 3]);
    expect(read[0]!.body.input).toEqual({ text: SECRET });
    expect(read[2]!.body.result).toEqual({ echoed: SECRET });
    expect(read[0]!.bodyText.includes(SECRET)).toBe(false);

    const keyBytes = (new Database(subjectKeysPath(journal.dataDir), { readonly: true }).prepare("SELECT key FROM keys WHERE subject = 'user:alice'").all() as Array<{ key: Buffer }>).map((r) => r.key);
    expect(keyBytes).toHaveLength(1);
    expect(keyStoreBytes(journal.dataDir).includes(keyBytes[0]!)).toBe(true);

    const handlers = erasureHandlers(journal, 'user:dpo');
    const erased = await call(handlers['erasure.erase']({ subject: 'user:alice', reason: 'GDPR art. 17 request #12' }, ctx));
    expect(erased).toMatchObject({ subject: 'user:alice', by: 'user:dpo', reason: 'GDPR art. 17 request #12' });

    const after = await journal.readRun(runId, 1, 100);
    expect(after[0]!.body.input).toBeUndefined();
    for (const record of after) expect(record.body.erased).toEqual({ at: erased.at, by: 'user:dpo', reason: 'GDPR art. 17 request #12' });
    // Structural fields stay readable; another subject's payloads are untouched.
    expect(after[0]!.body.owner).toBe('user:alice');
    expect(after[1]!.body.step).toBe(0);
    expect((await journal.readRun('run-00000000000000000003', 1, 1))[0]!.body.input).toEqual({ text: 'bob keeps this' });
    // The UI's record view carries the stored body, which the hash covers.
    const view = recordView(after[0]!);
    expect(createHash('sha256').update(recordPreimage({ ...view, body: view.stored! })).digest('hex')).toBe(after[0]!.hash);

    await journal.checkpoint();
    expect(await verifyJournalStore(journal)).toMatchObject({ ok: true, unknownKinds: 0 });
    const file = join(tempDataDir('ap-bundle-'), 'journal.jsonl');
    await exportBundle(journal, { kind: 'full' }, file);
    expect(readFileSync(file, 'utf8').includes(SECRET)).toBe(false);
    expect(await verifyBundleFile(file)).toMatchObject({ ok: true, root: journal.rootHex() });

    expect(journalBytes(journal.dataDir).includes(SECRET)).toBe(false);
    expect(keyStoreBytes(journal.dataDir).includes(keyBytes[0]!)).toBe(false);

    // A second erase has nothing left to destroy; an unknown subject is named.
    await expect(call(handlers['erasure.erase']({ subject: 'user:alice' }, ctx))).rejects.toThrow(/erased already/);
    await expect(call(handlers['erasure.erase']({ subject: 'user:nobody' }, ctx))).rejects.toThrow(/no payload of subject "user:nobody"/);

    // A reader opened later (a CLI on the same data dir) reads the same erasure.
    const dataDir = journal.dataDir;
    await journal.close();
    const reader = await Journal.open({ dataDir, readOnly: true });
    journals.push(reader);
    expect((await reader.readRun(runId, 1, 1))[0]!.body.erased).toMatchObject({ by: 'user:dpo' });
    expect((await reader.readRun('run-00000000000000000003', 1, 1))[0]!.body.input).toEqual({ text: 'bob keeps this' });
  });

  it('refuses to erase a held subject, naming the hold; erases once the hold is lifted', async () => {
    const journal = await open({ seal: true });
    await journal.appendBatch(drafts('run-00000000000000000004', 'user:carol', SECRET));
    const handlers = erasureHandlers(journal, 'user:dpo');
    const hold = await call(handlers['holds.add']({ subject: 'user:carol', reason: 'litigation 2026-17' }, ctx));
    const refused = await call(handlers['erasure.erase']({ subject: 'user:carol' }, ctx)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(PlaneError);
    expect((refused as Error).message).toContain(hold.holdId);
    expect((refused as Error).message).toContain('litigation 2026-17');
    expect((await journal.readRun('run-00000000000000000004', 1, 1))[0]!.body.input).toEqual({ text: SECRET });
    expect((await call(handlers['holds.list']({}, ctx))).holds).toHaveLength(1);
    await call(handlers['holds.remove']({ subject: 'user:carol' }, ctx));
    await call(handlers['erasure.erase']({ subject: 'user:carol' }, ctx));
    expect((await journal.readRun('run-00000000000000000004', 1, 1))[0]!.body.erased).toBeDefined();
    const kinds = (await journal.readRange(1, null, 100)).map((r) => r.kind);
    expect(kinds).toEqual(expect.arrayContaining(['HoldPlaced', 'HoldLifted', 'SubjectErased']));
  });

  it('retention erases the months older than its days, unless held, and journals it', async () => {
    let nowMs = Date.UTC(2026, 0, 15);
    const journal = await open({ seal: true, now: () => nowMs });
    await journal.appendBatch(drafts('run-00000000000000000005', 'user:dave', 'old dave'));
    await journal.appendBatch(drafts('run-00000000000000000006', 'user:erin', 'old erin'));
    nowMs = Date.UTC(2026, 2, 15);
    await journal.appendBatch([drafts('run-00000000000000000007', 'user:dave', 'new dave')[0]!]);
    const handlers = erasureHandlers(journal, 'user:dpo', () => nowMs);
    await call(handlers['erasure.settings']({ retentionDays: 30 }, ctx));
    await call(handlers['holds.add']({ subject: 'user:erin' }, ctx));
    const pass = await call(handlers['erasure.retentionApply']({}, ctx));
    expect(pass.erased.map((e) => [e.subject, e.keys.map((k) => k.period)])).toEqual([['user:dave', ['2026-01']]]);
    expect(pass.held).toMatchObject([{ subject: 'user:erin', period: '2026-01' }]);
    expect((await journal.readRun('run-00000000000000000005', 1, 1))[0]!.body.erased).toMatchObject({ by: 'plane:retention' });
    expect((await journal.readRun('run-00000000000000000006', 1, 1))[0]!.body.input).toEqual({ text: 'old erin' });
    expect((await journal.readRun('run-00000000000000000007', 1, 1))[0]!.body.input).toEqual({ text: 'new dave' });
    await journal.checkpoint();
    expect(await verifyJournalStore(journal)).toMatchObject({ ok: true });
  });

  it('the contract refuses bad days and a hold naming neither or both targets', () => {
    const settings = commands['erasure.settings'].request;
    expect(settings.safeParse({ retentionDays: 0 }).error?.issues[0]?.message).toMatch(/at least 1 day/);
    expect(settings.safeParse({ retentionDays: 1.5 }).error?.issues[0]?.message).toMatch(/whole number/);
    expect(settings.safeParse({ retentionDays: 30 }).success).toBe(true);
    expect(commands['erasure.erase'].request.safeParse({ subject: '' }).success).toBe(false);
  });
});
