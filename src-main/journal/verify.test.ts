/**
 * Tampering, each kind caught and named by seq, against both sources the verifier reads: a
 * data dir (an attacker with write access to the database file, triggers dropped) and an
 * exported bundle (an attacker editing the file).
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import { exportBundle } from './bundle-export';
import { verifyBundleFile } from './bundle-verify';
import { signCheckpoint } from './checkpoints';
import { Journal } from './journal';
import { keyIdOf } from './plane-key';
import type { JWK } from 'jose';
import { journalPath } from './sqlite-store';
import type { RecordRow } from './sqlite-reader';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { verifyJournalStore } from './journal-workers';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const journals: Journal[] = [];
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close().catch(() => undefined);
});

/** 3 runs × 12 records = 36, checkpoints at 12, 24 and 36. */
async function populated(): Promise<Journal> {
  const journal = await Journal.open({ dataDir: tempDataDir(), checkpointEvery: 12 });
  journals.push(journal);
  for (const run of ['run-1', 'run-2', 'run-3']) await journal.appendBatch(runDrafts(run, 5));
  await journal.checkpoint();
  return journal;
}

type Row = RecordRow;

/** Rewrites the records table as an attacker with the file would: triggers dropped first. */
function tamperDb(journal: Journal, edit: (rows: Row[]) => Row[]): void {
  const db = new Database(journalPath(journal.dataDir));
  db.exec('DROP TRIGGER records_append_only_update; DROP TRIGGER records_append_only_delete; DROP TRIGGER records_chain;');
  const rows = db.prepare('SELECT * FROM records ORDER BY seq').all() as Row[];
  const next = edit(rows.map((r) => ({ ...r })));
  db.transaction(() => {
    db.exec('DELETE FROM records');
    const insert = db.prepare('INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (@seq, @run_id, @kind, @v, @time, @body, @prev_hash, @hash)');
    for (const row of next) insert.run(row);
  })();
  db.close();
}

function rehash(row: Row): Row {
  const fields = { seq: row.seq, runId: row.run_id, kind: row.kind, v: row.v, time: row.time, prevHash: row.prev_hash };
  return { ...row, hash: sha(recordPreimageFromBodyText(fields, row.body)) };
}

/** Changes record `from`'s body and recomputes every hash after it, so the chain links again. */
function rewriteSuffix(rows: Row[], from: number): Row[] {
  let prev = rows[from - 2]?.hash ?? '0'.repeat(64);
  return rows.map((row) => {
    if (row.seq < from) return row;
    const changed = row.seq === from ? { ...row, body: row.body.replace('"echo"', '"evil"') } : row;
    const fixed = rehash({ ...changed, prev_hash: prev });
    prev = fixed.hash;
    return fixed;
  });
}

async function foreignSignedCheckpoint(journal: Journal, treeSize: number): Promise<string> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
  const signed = await signCheckpoint(
    { privateKey, publicKey, publicJwk, keyId: journal.key.keyId /* claims to be the plane */ },
    { journalId: journal.journalId, treeSize, rootHash: journal.rootHex(), time: new Date().toISOString() },
  );
  expect(await keyIdOf(publicJwk)).not.toBe(journal.key.keyId);
  return signed.jws;
}

describe('verify a data dir', () => {
  it('passes an untouched journal and prints its root', async () => {
    const journal = await populated();
    const report = await verifyJournalStore(journal);
    expect(report).toEqual({ ok: true, count: 36, root: journal.rootHex(), checkpointSize: 36, unsigned: 0, unknownKinds: 0 });
  });

  const cases: Array<[string, (rows: Row[]) => Row[], number, RegExp]> = [
    ['a flipped bit in a body', (rows) => rows.map((r) => (r.seq === 7 ? { ...r, body: r.body.replace('"echoed":2', '"echoed":3') } : r)), 7, /content does not match its hash/],
    ['a flipped bit in a time', (rows) => rows.map((r) => (r.seq === 3 ? { ...r, time: r.time.replace(/\d(?=Z$)/, (d) => String((Number(d) + 1) % 10)) } : r)), 3, /altered/],
    ['a flipped bit in a kind', (rows) => rows.map((r) => (r.seq === 4 ? { ...r, kind: 'EffectDonf' } : r)), 4, /altered/],
    ['a flipped bit in a run id', (rows) => rows.map((r) => (r.seq === 13 ? { ...r, run_id: 'run-X' } : r)), 13, /altered/],
    ['a flipped bit in a stored hash', (rows) => rows.map((r) => (r.seq === 20 ? { ...r, hash: r.hash.replace(/^./, (c) => (c === '0' ? '1' : '0')) } : r)), 20, /does not match its hash/],
    ['a flipped bit in a prevHash', (rows) => rows.map((r) => (r.seq === 21 ? { ...r, prev_hash: r.prev_hash.replace(/^./, (c) => (c === '0' ? '1' : '0')) } : r)), 21, /altered|prevHash/],
    ['a deleted record', (rows) => rows.filter((r) => r.seq !== 9), 9, /a record is missing \(the next one present is seq 10\)/],
    [
      'two swapped records',
      (rows) => rows.map((r) => (r.seq === 15 ? { ...rows[15]!, seq: 15 } : r.seq === 16 ? { ...rows[14]!, seq: 16 } : r)),
      15,
      /altered|prevHash/,
    ],
    [
      'an inserted record (renumbered, its own hash valid)',
      (rows) => {
        const inserted = rehash({ ...rows[10]!, seq: 11, body: '{"by":"mallory"}', kind: 'Cancelled', prev_hash: rows[9]!.hash });
        // The next record is re-linked to it (prev_hash is UNIQUE, so it must be) but cannot be
        // re-hashed without rewriting the suffix, which is the case further down.
        const shifted = rows.slice(10).map((r) => ({ ...r, seq: r.seq + 1 }));
        shifted[0] = { ...shifted[0]!, prev_hash: inserted.hash };
        return [...rows.slice(0, 10), inserted, ...shifted];
      },
      12,
      /prevHash|altered/,
    ],
    ['a truncated tail', (rows) => rows.filter((r) => r.seq <= 30), 31, /covers 36 records but the records end at seq 30 \(the tail was truncated\)/],
    ['a rewritten suffix with recomputed hashes, from a checkpoint boundary', (rows) => rewriteSuffix(rows, 25), 25, /records 25\.\.36 are not the records the checkpoint at tree size 36 signed/],
    ['a rewritten suffix with recomputed hashes, mid-interval', (rows) => rewriteSuffix(rows, 30), 25, /records 25\.\.36 are not the records .* rewritten after it was signed/],
  ];

  for (const [name, edit, seq, reason] of cases) {
    it(`catches ${name}, naming seq ${seq}`, async () => {
      const journal = await populated();
      tamperDb(journal, edit);
      const report = await verifyJournalStore(journal);
      expect(report.ok, JSON.stringify(report)).toBe(false);
      if (!report.ok) {
        expect(report.seq).toBe(seq);
        expect(report.reason).toMatch(reason);
      }
    });
  }

  it('catches a checkpoint signed by another key, naming the seq it covers', async () => {
    const journal = await populated();
    appendFileSync(journal.checkpoints.file, `${JSON.stringify({ jws: await foreignSignedCheckpoint(journal, 36) })}\n`);
    const report = await verifyJournalStore(journal);
    expect(report).toMatchObject({ ok: false, seq: 36 });
    if (!report.ok) expect(report.reason).toMatch(/signature does not verify with the plane's public key/);
  });
});

describe('export and verify a bundle', () => {
  async function exported(scope: Parameters<typeof exportBundle>[1] = { kind: 'full' }) {
    const journal = await populated();
    const file = join(tempDataDir('ap-bundle-'), 'journal.jsonl');
    const result = await exportBundle(journal, scope, file);
    return { journal, file, result, lines: readFileSync(file, 'utf8').trimEnd().split('\n') };
  }

  it('writes a header, one line per record with its seq, and the checkpoints', async () => {
    const { file, lines, result, journal } = await exported();
    expect(result).toMatchObject({ records: 36, treeSize: 36, rootHash: journal.rootHex() });
    const header = JSON.parse(lines[0]!);
    expect(header).toMatchObject({ format: 'agentplane-journal-bundle', version: 1, scope: { kind: 'full' }, records: 36, keyId: journal.key.keyId });
    expect(JSON.parse(lines[1]!).record.seq).toBe(1);
    expect(lines.filter((l) => l.startsWith('{"checkpoint":')).length).toBeGreaterThanOrEqual(3);
    expect(await verifyBundleFile(file)).toMatchObject({ ok: true, count: 36, root: journal.rootHex() });
  });

  it('exports and verifies one run with inclusion proofs, and a seq range', async () => {
    const run = await exported({ kind: 'run', runId: 'run-2' });
    expect(run.result.records).toBe(12);
    expect(JSON.parse(run.lines[1]!).proof.length).toBeGreaterThan(0);
    expect(await verifyBundleFile(run.file)).toMatchObject({ ok: true, count: 12 });

    const range = await exported({ kind: 'range', fromSeq: 5, toSeq: 17 });
    expect(await verifyBundleFile(range.file)).toMatchObject({ ok: true, count: 13 });
  });

  type LineEdit = (lines: string[]) => string[];
  const swapSeq = (line: string, from: number, to: number) => line.replace(`"seq":${from},`, `"seq":${to},`);
  const bundleCases: Array<[string, LineEdit, number | null, RegExp]> = [
    ['a flipped bit in a record', (l) => l.map((x, i) => (i === 9 ? x.replace('"echoed":3', '"echoed":2') : x)), 9, /altered/],
    ['a flipped bit in a seq', (l) => l.map((x, i) => (i === 8 ? swapSeq(x, 8, 9) : x)), 8, /expected seq 8 here/],
    ['a deleted record', (l) => l.filter((_, i) => i !== 5), 5, /a record is missing/],
    ['two swapped records', (l) => l.map((x, i) => (i === 5 ? l[6]! : i === 6 ? l[5]! : x)), 5, /expected seq 5 here/],
    ['a duplicated (inserted) record', (l) => [...l.slice(0, 6), l[5]!, ...l.slice(6)], 6, /expected seq 6 here: seq 5 appears again/],
    ['a truncated tail', (l) => [l[0]!, ...l.slice(1, 31), ...l.filter((x) => x.startsWith('{"checkpoint"'))], 31, /tail was truncated/],
    ['a line that is not JSON', (l) => l.map((x, i) => (i === 3 ? x.slice(0, 40) + '}' : x)), 3, /not valid JSON|not of the form/],
  ];
  for (const [name, edit, seq, reason] of bundleCases) {
    it(`catches ${name}${seq ? `, naming seq ${seq}` : ''}`, async () => {
      const { file, lines } = await exported();
      writeFileSync(file, `${edit(lines).join('\n')}\n`);
      const report = await verifyBundleFile(file);
      expect(report.ok).toBe(false);
      if (!report.ok) {
        expect(report.seq).toBe(seq);
        expect(report.reason).toMatch(reason);
      }
    });
  }

  it('catches a rewritten suffix with recomputed hashes in a bundle', async () => {
    const { file, lines } = await exported();
    let prev = '';
    const rewritten = lines.map((line, i) => {
      if (i < 25 || !line.startsWith('{"hash"')) {
        if (line.startsWith('{"hash"')) prev = JSON.parse(line).hash;
        return line;
      }
      const at = line.indexOf(',"record":');
      let preimage = line.slice(at + 10, -1);
      if (i === 25) preimage = preimage.replace('"echo"', '"evil"');
      preimage = preimage.replace(/"prevHash":"[0-9a-f]{64}"/, `"prevHash":"${prev}"`);
      prev = sha(preimage);
      return `{"hash":"${prev}","record":${preimage}}`;
    });
    writeFileSync(file, `${rewritten.join('\n')}\n`);
    const report = await verifyBundleFile(file);
    expect(report).toMatchObject({ ok: false, seq: 25 });
  });

  it('catches a checkpoint signed by another key in a bundle', async () => {
    const { file, lines, journal } = await exported();
    const forged = await foreignSignedCheckpoint(journal, 36);
    writeFileSync(file, `${[...lines, JSON.stringify({ checkpoint: forged })].join('\n')}\n`);
    expect(await verifyBundleFile(file)).toMatchObject({ ok: false, seq: 36 });
  });

  it('catches a bundle whose public key was swapped for the forger\'s when a key is pinned', async () => {
    const { file, journal } = await exported();
    expect(await verifyBundleFile(file, { expectKeyId: journal.key.keyId })).toMatchObject({ ok: true });
    expect(await verifyBundleFile(file, { expectKeyId: 'someone-else' })).toMatchObject({ ok: false, reason: expect.stringMatching(/not the expected/) });
  });

  it('catches a record removed from a run bundle', async () => {
    const { file, lines } = await exported({ kind: 'run', runId: 'run-1' });
    const header = JSON.parse(lines[0]!);
    header.records -= 1;
    writeFileSync(file, `${[JSON.stringify(header), ...lines.slice(1).filter((_, i) => i !== 3)].join('\n')}\n`);
    const report = await verifyBundleFile(file);
    expect(report).toMatchObject({ ok: false, seq: 12 });
  });

  it('refuses what is not a bundle with a clear error', async () => {
    const dir = tempDataDir('ap-notbundle-');
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    await expect(verifyBundleFile(empty)).rejects.toThrow(/is empty: not a journal bundle/);
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'dear diary\n');
    await expect(verifyBundleFile(text)).rejects.toThrow(/is not an AgentPlane journal bundle/);
    const json = join(dir, 'other.json');
    writeFileSync(json, '{"format":"something-else"}\n');
    await expect(verifyBundleFile(json)).rejects.toThrow(/is not an AgentPlane journal bundle/);
    await expect(verifyBundleFile(join(dir, 'missing.jsonl'))).rejects.toThrow(/does not exist/);
    await expect(verifyBundleFile(dir)).rejects.toThrow(/is a folder/);
  });

  it('refuses a range beyond the journal and an unknown run', async () => {
    const journal = await populated();
    const file = join(tempDataDir(), 'x.jsonl');
    await expect(exportBundle(journal, { kind: 'range', fromSeq: 1, toSeq: 99 }, file)).rejects.toThrow(/beyond the journal's last record \(seq 36\)/);
    await expect(exportBundle(journal, { kind: 'range', fromSeq: 9, toSeq: 3 }, file)).rejects.toThrow(/is after/);
    await expect(exportBundle(journal, { kind: 'run', runId: 'ghost' }, file)).rejects.toThrow(/no run ghost/);
  });
});

describe('verifying on the calling thread', () => {
  it('lets the event loop turn between pages: a plane checking its journal in the background keeps starting and answering', async () => {
    const journal = await Journal.open({ dataDir: tempDataDir('ap-turns-') });
    journals.push(journal);
    for (let run = 0; run < 100; run++) await journal.appendBatch(runDrafts(`turns-${run}`, 5));
    await journal.checkpoint();
    // The store's reads answer at once; without a turn between pages the whole pass ran in
    // microtasks, and a timer or an incoming request waited for its end.
    const order: string[] = [];
    const verified = verifyJournalStore(journal).then((report) => {
      order.push('verified');
      return report;
    });
    setImmediate(() => order.push('turn'));
    expect(await verified).toMatchObject({ ok: true, count: 1200 });
    expect(order).toEqual(['turn', 'verified']);
  });
});
