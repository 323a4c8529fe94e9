/**
 * The keyring of a team plane (keyring.ts, team-journal.ts): the shared checkpoints table of
 * migration 002, each instance's key admitted when it opens the shared journal, a full export
 * carrying every admitted key's checkpoints, and verification refusing a checkpoint by a key
 * never admitted, or by a retired key over records after its retirement.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportBundle } from './bundle-export';
import { verifyBundleFile, verifyBundleFileInThread } from './bundle-verify';
import { peekCheckpoint, signCheckpoint } from './checkpoints';
import { Journal } from './journal';
import { verifyJournalStore } from './journal-workers';
import { Keyring, KEY_ADMITTED, KEY_RETIRED } from './keyring';
import { loadOrCreatePlaneKey, type PlaneKey } from './plane-key';
import { postgresMigrations, SCHEMA } from './postgres-schema';
import { PostgresJournalStore } from './postgres-store';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { freshDatabase, postgresMissing, postgresUrl, sql } from '../../tests/support/postgres-support';

const journals: Journal[] = [];
const stores: PostgresJournalStore[] = [];
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close().catch(() => undefined);
  for (const s of stores.splice(0)) await s.close().catch(() => undefined);
});

async function open(dataDir: string, url: string): Promise<Journal> {
  const journal = await Journal.open({ dataDir, databaseUrl: url });
  journals.push(journal);
  return journal;
}

async function closeAll(): Promise<void> {
  for (const j of journals.splice(0)) await j.close();
}

function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
}

function checkpointsOf(file: string): string[] {
  return lines(file)
    .filter((l) => l.startsWith('{"checkpoint":'))
    .map((l) => (JSON.parse(l) as { checkpoint: string }).checkpoint);
}

/** The bundle with `jws` carried as a checkpoint line just before the anchor (the last line). */
function withCheckpoint(file: string, jws: string): string {
  const all = lines(file);
  const out = join(tempDataDir('ap-keyring-bundle-'), 'tampered.jsonl');
  writeFileSync(out, [...all.slice(0, -1), JSON.stringify({ checkpoint: jws }), all[all.length - 1]!].join('\n') + '\n');
  return out;
}

/** A valid checkpoint by `key` over the bundle's own anchor (same journal, size and root). */
function cosign(file: string, key: PlaneKey): string {
  const anchor = peekCheckpoint(checkpointsOf(file).at(-1)!)!;
  return signCheckpoint(key, { journalId: anchor.journalId, treeSize: anchor.treeSize, rootHash: anchor.rootHash, time: anchor.time }).jws;
}

/** Two instances (two data dirs, two keys) serving one database, each having appended and closed. */
async function teamOfTwo(): Promise<{ url: string; dirA: string; dirB: string; keyA: string; keyB: string }> {
  const url = await freshDatabase('keyring');
  const dirA = tempDataDir('ap-keyring-a-');
  const dirB = tempDataDir('ap-keyring-b-');
  const a = await open(dirA, url);
  const b = await open(dirB, url);
  await a.appendBatch(runDrafts('run-a', 2));
  await b.appendBatch(runDrafts('run-b', 2));
  await b.checkpoint();
  const keys = { keyA: a.key.keyId, keyB: b.key.keyId };
  await closeAll();
  return { url, dirA, dirB, ...keys };
}

describe('the keyring fold', () => {
  it('refuses a KeyAdmitted whose public key is not the key it names, and treats a key admitted twice as one', async () => {
    const a = await loadOrCreatePlaneKey(tempDataDir());
    const b = await loadOrCreatePlaneKey(tempDataDir());
    const admitted = (seq: number, keyId: string, publicJwk: unknown) => ({ seq, kind: KEY_ADMITTED, v: 1, time: '2026-01-01T00:00:00.000Z', body: { keyId, publicJwk, instance: 'test' } });
    const forged = await Keyring.fold([admitted(3, a.keyId, b.publicJwk)]);
    expect(forged).toEqual({ failed: { seq: 3, reason: `it admits key ${a.keyId}, but the public key it carries is key ${b.keyId}` } });
    const twice = await Keyring.fold([admitted(1, a.keyId, a.publicJwk), admitted(2, a.keyId, a.publicJwk), { seq: 5, kind: KEY_RETIRED, v: 1, time: 't', body: { keyId: a.keyId, by: 'cli:test' } }]);
    if (!('keyring' in twice)) throw new Error('the fold failed');
    expect(twice.keyring.entries()).toHaveLength(1);
    expect(twice.keyring.entries()[0]).toMatchObject({ keyId: a.keyId, admittedSeq: 1, retired: { seq: 5, by: 'cli:test' } });
    expect(twice.keyring.refusal(a.keyId, 4)).toBeNull();
    expect(twice.keyring.refusal(a.keyId, 5)).toMatch(/retired at seq 5/);
    expect(twice.keyring.refusal(b.keyId, 1)).toMatch(new RegExp(`signed by key ${b.keyId}, which the journal never admitted`));
  });

  it('a SQLite bundle holding a forged KeyAdmitted (its key id not its key) fails verification at that record', async () => {
    const dataDir = tempDataDir();
    const journal = await Journal.open({ dataDir });
    journals.push(journal);
    const other = await loadOrCreatePlaneKey(tempDataDir());
    await journal.appendBatch(runDrafts('run-a', 1));
    const forged = await journal.append({ runId: null, kind: KEY_ADMITTED, body: { keyId: journal.key.keyId, publicJwk: other.publicJwk as Record<string, unknown>, instance: 'forger' } });
    const file = join(dataDir, 'bundle.jsonl');
    await exportBundle(journal, { kind: 'full' }, file);
    const report = await verifyBundleFile(file);
    expect(report).toMatchObject({ ok: false, seq: forged.seq, reason: `it admits key ${journal.key.keyId}, but the public key it carries is key ${other.keyId}` });
  });
});

describe.skipIf(!postgresUrl())(`the keyring of a team plane on PostgreSQL${postgresUrl() ? '' : ` (skipped: ${postgresMissing()})`}`, () => {
  it('migration 002 is applied to a database that has only 001, and the checkpoints table refuses rewrites', async () => {
    const url = await freshDatabase('mig');
    await sql(
      url,
      `CREATE SCHEMA ${SCHEMA};
       CREATE TABLE ${SCHEMA}.schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
       ${postgresMigrations[0]!.sql}
       INSERT INTO ${SCHEMA}.schema_migrations (id) VALUES ('001_init');`,
    );
    expect((await sql(url, `SELECT to_regclass('${SCHEMA}.checkpoints') AS t`)).rows[0].t).toBeNull();
    const store = await PostgresJournalStore.open(url);
    stores.push(store);
    expect((await sql(url, `SELECT id FROM ${SCHEMA}.schema_migrations ORDER BY id`)).rows.map((r: { id: string }) => r.id)).toEqual(['001_init', '002_checkpoints', '003_sessions_and_cases']);
    await store.publishCheckpoint({ keyId: 'k', treeSize: 1, jws: 'x.y.z' });
    await expect(sql(url, `UPDATE ${SCHEMA}.checkpoints SET jws = 'forged'`)).rejects.toThrow(/append-only \(UPDATE refused\)/);
    await expect(sql(url, `DELETE FROM ${SCHEMA}.checkpoints`)).rejects.toThrow(/append-only \(DELETE refused\)/);
    await expect(sql(url, `TRUNCATE ${SCHEMA}.checkpoints`)).rejects.toThrow(/append-only \(TRUNCATE refused\)/);
    // Opening again migrates nothing more.
    stores.push(await PostgresJournalStore.open(url));
    expect((await sql(url, `SELECT COUNT(*)::int AS n FROM ${SCHEMA}.schema_migrations`)).rows[0].n).toBe(3);
  });

  it('publishes checkpoints idempotently and reads them back by tree size, then key id', async () => {
    const store = await PostgresJournalStore.open(await freshDatabase('pub'));
    stores.push(store);
    await store.publishCheckpoint({ keyId: 'kb', treeSize: 2, jws: 'b2' });
    await store.publishCheckpoint({ keyId: 'ka', treeSize: 2, jws: 'a2' });
    await store.publishCheckpoint({ keyId: 'kb', treeSize: 1, jws: 'b1' });
    await store.publishCheckpoint({ keyId: 'kb', treeSize: 1, jws: 'b1' });
    expect(await store.readCheckpoints()).toEqual(['b1', 'a2', 'b2']);
  });

  it('two instances on one database each admit their key once, and publish what they sign', async () => {
    const { url, dirA, dirB, keyA, keyB } = await teamOfTwo();
    // Opened again: nothing more admitted.
    await open(dirA, url);
    await open(dirB, url);
    await closeAll();
    const admitted = (await sql(url, `SELECT seq, body FROM ${SCHEMA}.records WHERE kind = 'KeyAdmitted' ORDER BY seq`)).rows.map((r: { body: string }) => JSON.parse(r.body) as { keyId: string; instance: string });
    expect(admitted.map((b) => b.keyId)).toEqual([keyA, keyB]);
    expect(admitted[0]!.instance).toContain(dirA);
    expect(JSON.stringify(admitted)).not.toContain(new URL(url).password);
    const published = (await sql(url, `SELECT DISTINCT key_id FROM ${SCHEMA}.checkpoints`)).rows.map((r: { key_id: string }) => r.key_id).sort();
    expect(published).toEqual([keyA, keyB].sort());
  });

  it("a full export from one instance carries both keys' checkpoints and verifies against the keyring; a data dir verifies too", async () => {
    const { url, dirA, keyA, keyB } = await teamOfTwo();
    const a = await open(dirA, url);
    const file = join(dirA, 'team.jsonl');
    await exportBundle(a, { kind: 'full' }, file);
    const signers = new Set(checkpointsOf(file).map((jws) => peekCheckpoint(jws)!.keyId));
    expect(signers).toEqual(new Set([keyA, keyB]));
    expect(peekCheckpoint(checkpointsOf(file).at(-1)!)!.keyId).toBe(keyA);
    const report = await verifyBundleFileInThread(file);
    expect(report).toMatchObject({ ok: true, count: (await a.head()).seq });
    expect(report.ok && [...report.keys!].sort()).toEqual([keyA, keyB].sort());
    const stored = await verifyJournalStore(a);
    expect(stored).toMatchObject({ ok: true });
    expect(stored.ok && [...stored.keys!].sort()).toEqual([keyA, keyB].sort());
    // A run bundle carries its exporter's checkpoints only, and verifies as before.
    const run = join(dirA, 'run.jsonl');
    await exportBundle(a, { kind: 'run', runId: 'run-b' }, run);
    expect(checkpointsOf(run).map((jws) => peekCheckpoint(jws)!.keyId)).toEqual([keyA]);
    expect(await verifyBundleFile(run)).toMatchObject({ ok: true });
  });

  it('refuses a checkpoint validly signed by a key the journal never admitted, naming it', async () => {
    const url = await freshDatabase('unadmitted');
    const dirA = tempDataDir();
    const a = await open(dirA, url);
    await a.appendBatch(runDrafts('run-a', 2));
    const file = join(dirA, 'a.jsonl');
    await exportBundle(a, { kind: 'full' }, file);
    expect(await verifyBundleFile(file)).toMatchObject({ ok: true, keys: [a.key.keyId] });
    const c = await loadOrCreatePlaneKey(tempDataDir());
    const tampered = withCheckpoint(file, cosign(file, c));
    const report = await verifyBundleFile(tampered);
    expect(report).toMatchObject({ ok: false, reason: expect.stringContaining(`is signed by key ${c.keyId}, which the journal never admitted`) });
  });

  it("refuses a retired key's checkpoint over records after its retirement; what it signed before still verifies", async () => {
    const { url, dirA, dirB, keyB } = await teamOfTwo();
    const a = await open(dirA, url);
    const retired = await a.append({ runId: null, kind: KEY_RETIRED, body: { keyId: keyB, by: 'cli:test', reason: 'laptop lost' } });
    await closeAll();
    // B goes on signing after its retirement: published, but carried by no export.
    const b = await open(dirB, url);
    await b.appendBatch(runDrafts('run-late', 1));
    const late = await b.checkpoint();
    expect(late.checkpoint.treeSize).toBeGreaterThanOrEqual(retired.seq);
    // Nor does B export: the anchor it would sign is one no verifier takes.
    await expect(exportBundle(b, { kind: 'full' }, join(dirB, 'refused.jsonl'))).rejects.toThrow(new RegExp(`this data dir's key cannot anchor a bundle of this journal: .*key ${keyB}, which was retired at seq ${retired.seq}`));
    await closeAll();
    const a2 = await open(dirA, url);
    const file = join(dirA, 'after.jsonl');
    await exportBundle(a2, { kind: 'full' }, file);
    const carried = checkpointsOf(file).map((jws) => peekCheckpoint(jws)!);
    expect(carried.some((c) => c.keyId === keyB && c.treeSize < retired.seq)).toBe(true);
    expect(carried.some((c) => c.keyId === keyB && c.treeSize >= retired.seq)).toBe(false);
    expect(await verifyBundleFile(file)).toMatchObject({ ok: true });
    const tampered = withCheckpoint(file, late.jws);
    expect(await verifyBundleFile(tampered)).toMatchObject({ ok: false, seq: late.checkpoint.treeSize, reason: expect.stringContaining(`signed by key ${keyB}, which was retired at seq ${retired.seq}`) });
  });

  it('--key-id pins the anchor: the exporter\'s key passes, another admitted key does not, and a header naming another key than the anchor\'s is refused', async () => {
    const { url, dirA, keyA, keyB } = await teamOfTwo();
    const a = await open(dirA, url);
    // A record after B's last checkpoint: the newest tree size is signed by A alone.
    await a.appendBatch(runDrafts('run-c', 1));
    const file = join(dirA, 'pin.jsonl');
    await exportBundle(a, { kind: 'full' }, file);
    expect(await verifyBundleFile(file, { expectKeyId: keyA })).toMatchObject({ ok: true });
    expect(await verifyBundleFile(file, { expectKeyId: keyB })).toMatchObject({ ok: false, reason: `the bundle is signed by key ${keyA}, not the expected ${keyB}` });
    // The header rewritten to name B (admitted, with checkpoints in the bundle): the anchor is still A's.
    const all = lines(file);
    const header = JSON.parse(all[0]!) as Record<string, unknown>;
    const keyOfB = (await sql(url, `SELECT body FROM ${SCHEMA}.records WHERE kind = 'KeyAdmitted'`)).rows.map((r: { body: string }) => JSON.parse(r.body) as { keyId: string; publicJwk: unknown }).find((b) => b.keyId === keyB)!;
    const swapped = join(dirA, 'swapped.jsonl');
    writeFileSync(swapped, [JSON.stringify({ ...header, keyId: keyB, publicKey: keyOfB.publicJwk }), ...all.slice(1)].join('\n') + '\n');
    const report = await verifyBundleFile(swapped, { expectKeyId: keyB });
    expect(report).toMatchObject({ ok: false, reason: expect.stringMatching(new RegExp(`^the newest checkpoint \\(tree size \\d+\\) is not signed by the bundle's key ${keyB}$`)) });
  });
});
