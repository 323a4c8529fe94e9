/**
 * What a forger can and cannot get past `agentplane journal verify`, and how a data dir's
 * unsigned tail is reported. Every forged bundle starts from a real export and is re-hashed the
 * way a forger would: each record's preimage rebuilt with the project's own canonical JSON
 * (`recordPreimage`) and hashed with its own SHA-256 helper, every later prevHash re-linked, so
 * the chain is perfect and only a signature can tell. The verdicts are read from the CLI's own
 * command (`journal verify`, in process), as a person would read them.
 *
 * The rule under test: a signature over a Merkle root pins a set of records; a record past the
 * newest signed root is vouched for by nobody. A bundle passes only when a checkpoint signed by
 * its key covers its last record; a data dir may hold an unsigned tail (a writer killed before
 * its next checkpoint), which is reported as such, not counted as verified, and signed at the
 * next open.
 */
import { generateKeyPairSync } from 'node:crypto';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import type { JWK } from 'jose';
import { afterEach, describe, expect, it } from 'vitest';
import { VerifyReportSchema } from '../../src-shared/ipc/contract';
import { recordPreimage, recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import { journalCli } from '../../tests/support/journal-cli';
import { journalHandlers } from '../plane/journal-handlers';
import { exportBundle } from './bundle-export';
import { peekCheckpoint, signCheckpoint } from './checkpoints';
import { fromHex, toHex } from './hex';
import { Journal } from './journal';
import { leafHash, MerkleAccumulator } from './merkle';
import { keyIdOf } from './plane-key';
import { journalPath } from './sqlite-store';
import type { RecordRow } from './sqlite-reader';
import { runDrafts, tempDataDir } from '../../tests/support/journal-support';
import { sha256HexOf, type VerifyScope } from './verify';
import { verifyJournalStore } from './journal-workers';

const CHILD = join(import.meta.dirname, '..', '..', 'tests', 'helpers', 'journal-append-child.ts');

const journals: Journal[] = [];
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close().catch(() => undefined);
});

/** 3 runs × 12 records = 36, checkpoints at 12, 24 and 36. */
async function populated(dataDir = tempDataDir()): Promise<Journal> {
  const journal = await Journal.open({ dataDir, checkpointEvery: 12 });
  journals.push(journal);
  for (const run of ['run-1', 'run-2', 'run-3']) await journal.appendBatch(runDrafts(run, 5));
  await journal.checkpoint();
  return journal;
}

async function exported(scope: VerifyScope = { kind: 'full' }, journal?: Journal) {
  const source = journal ?? (await populated());
  const file = join(tempDataDir('ap-forge-'), 'journal.jsonl');
  const result = await exportBundle(source, scope, file);
  return { journal: source, file, result, lines: readFileSync(file, 'utf8').trimEnd().split('\n') };
}

/** The fields a record's hash covers, as a forger reads them out of a bundle line. */
interface RecordFields {
  seq: number;
  runId: string | null;
  kind: string;
  v: number;
  time: string;
  prevHash: string;
  body: Record<string, unknown>;
}

interface ForgedRecord {
  hash: string;
  proof?: string[];
  record: RecordFields;
}

interface Bundle {
  header: Record<string, unknown> & { records: number; keyId: string; publicKey: Record<string, unknown> };
  records: ForgedRecord[];
  checkpoints: string[];
}

function parseBundle(lines: readonly string[]): Bundle {
  const records: ForgedRecord[] = [];
  const checkpoints: string[] = [];
  for (const line of lines.slice(1)) {
    const parsed = JSON.parse(line) as { checkpoint?: string } & ForgedRecord;
    if (typeof parsed.checkpoint === 'string') checkpoints.push(parsed.checkpoint);
    else records.push(parsed);
  }
  return { header: JSON.parse(lines[0]!) as Bundle['header'], records, checkpoints };
}

/** Re-hashes every record from index `from` on, re-linking each prevHash to the hash before it. */
function rehashFrom(records: ForgedRecord[], from: number): ForgedRecord[] {
  let prev = from > 0 ? records[from - 1]!.hash : records[0]!.record.prevHash;
  return records.map((r, i) => {
    if (i < from) return r;
    const record = { ...r.record, prevHash: prev };
    const hash = sha256HexOf(recordPreimage(record));
    prev = hash;
    return { ...r, record, hash };
  });
}

function writeBundle(file: string, bundle: Bundle): void {
  const recordLine = (r: ForgedRecord) => {
    const proof = r.proof ? `,"proof":${JSON.stringify(r.proof)}` : '';
    return `{"hash":"${r.hash}"${proof},"record":${recordPreimage(r.record)}}`;
  };
  const lines = [JSON.stringify(bundle.header), ...bundle.records.map(recordLine), ...bundle.checkpoints.map((c) => JSON.stringify({ checkpoint: c }))];
  writeFileSync(file, `${lines.join('\n')}\n`);
}

/** `agentplane journal verify ARGS` through the CLI's own command, in process; a command that fails throws, as it would exit 1. */
async function verifyCli(...args: string[]): Promise<{ code: number; lines: string[] }> {
  const { code, lines, error } = await journalCli('verify', ...args);
  if (error !== null) throw new Error(error);
  return { code, lines };
}

function treeSizeOf(jws: string): number {
  return peekCheckpoint(jws)!.treeSize;
}

const NOT_COVERED = 'not covered by a signed checkpoint';

describe('a forged bundle does not verify', () => {
  it('attack (a): one record altered, the chain re-hashed, every checkpoint dropped: FAIL seq 1, also with --key-id pinned', async () => {
    const { journal, file, lines } = await exported();
    const bundle = parseBundle(lines);
    const admitted = bundle.records[12]!;
    expect(admitted.record).toMatchObject({ seq: 13, kind: 'RunAdmitted' });
    admitted.record = { ...admitted.record, body: { ...admitted.record.body, input: { text: 'pay mallory' } } };
    const forged: Bundle = { ...bundle, records: rehashFrom(bundle.records, 12), checkpoints: [] };
    // The forger's chain is perfect: the checkpoints are all the original had against it.
    forged.records.forEach((r, i) => {
      expect(sha256HexOf(recordPreimage(r.record))).toBe(r.hash);
      if (i > 0) expect(r.record.prevHash).toBe(forged.records[i - 1]!.hash);
    });
    writeBundle(file, forged);

    const plain = await verifyCli(file);
    expect(plain.lines[0]).toBe(`FAIL seq 1: ${NOT_COVERED} (the bundle carries none signed by key ${journal.key.keyId})`);
    expect(plain.code).toBe(1);
    const pinned = await verifyCli(file, '--key-id', journal.key.keyId);
    expect(pinned.lines[0]).toMatch(new RegExp(`^FAIL seq 1: ${NOT_COVERED} .*${journal.key.keyId}`));
    expect(pinned.code).toBe(1);
  });

  it('attack (b): a truncated bundle without checkpoints: FAIL seq 1', async () => {
    const { file, lines } = await exported();
    const bundle = parseBundle(lines);
    writeBundle(file, { header: { ...bundle.header, records: 30 }, records: bundle.records.slice(0, 30), checkpoints: [] });
    const report = await verifyCli(file);
    expect(report.lines[0]).toMatch(new RegExp(`^FAIL seq 1: ${NOT_COVERED}`));
    expect(report.code).toBe(1);
  });

  it('attack (b), variant: truncated past its last checkpoint, the earlier ones kept: FAIL seq 25', async () => {
    const { file, lines } = await exported();
    const bundle = parseBundle(lines);
    const kept = bundle.checkpoints.filter((c) => treeSizeOf(c) <= 30);
    expect(kept.map(treeSizeOf).sort((a, b) => a - b)).toEqual([12, 24]);
    writeBundle(file, { header: { ...bundle.header, records: 30 }, records: bundle.records.slice(0, 30), checkpoints: kept });
    const report = await verifyCli(file);
    expect(report.lines[0]).toBe(`FAIL seq 25: ${NOT_COVERED} (the newest one, at tree size 24, ends before it)`);
    expect(report.code).toBe(1);
  });

  it('attack (c): an unsigned record appended after a valid checkpoint: FAIL seq 37', async () => {
    const { file, lines } = await exported();
    const bundle = parseBundle(lines);
    const last = bundle.records.at(-1)!;
    const extra: RecordFields = { seq: 37, runId: 'run-3', kind: 'Cancelled', v: 1, time: last.record.time, prevHash: last.hash, body: { by: 'mallory' } };
    const records = [...bundle.records, { hash: sha256HexOf(recordPreimage(extra)), record: extra }];
    writeBundle(file, { ...bundle, header: { ...bundle.header, records: 37 }, records });
    const report = await verifyCli(file);
    expect(report.lines[0]).toBe(`FAIL seq 37: ${NOT_COVERED} (the newest one, at tree size 36, ends before it)`);
    expect(report.code).toBe(1);
  });

  it('a run bundle whose checkpoint was dropped: FAIL at its first seq', async () => {
    const { file, lines } = await exported({ kind: 'run', runId: 'run-2' });
    const bundle = parseBundle(lines);
    expect(bundle.records[0]!.record.seq).toBe(13);
    writeBundle(file, { ...bundle, checkpoints: [] });
    const report = await verifyCli(file);
    expect(report.lines[0]).toMatch(new RegExp(`^FAIL seq 13: ${NOT_COVERED}`));
    expect(report.code).toBe(1);
  });

  it('a range bundle whose checkpoint was dropped: FAIL at its first seq', async () => {
    const { file, lines } = await exported({ kind: 'range', fromSeq: 5, toSeq: 17 });
    writeBundle(file, { ...parseBundle(lines), checkpoints: [] });
    const report = await verifyCli(file);
    expect(report.lines[0]).toMatch(new RegExp(`^FAIL seq 5: ${NOT_COVERED}`));
    expect(report.code).toBe(1);
  });

  it('a record appended to a run bundle past its anchor: FAIL at that seq', async () => {
    const { file, lines } = await exported({ kind: 'run', runId: 'run-3' });
    const bundle = parseBundle(lines);
    const last = bundle.records.at(-1)!;
    const extra: RecordFields = { seq: 37, runId: 'run-3', kind: 'Cancelled', v: 1, time: last.record.time, prevHash: last.hash, body: { by: 'mallory' } };
    const records = [...bundle.records, { hash: sha256HexOf(recordPreimage(extra)), proof: [], record: extra }];
    writeBundle(file, { ...bundle, header: { ...bundle.header, records: bundle.records.length + 1 }, records });
    const report = await verifyCli(file);
    expect(report.lines[0]).toBe(`FAIL seq 37: ${NOT_COVERED} (the newest one, at tree size 36, ends before it)`);
  });
});

describe('--key-id pins the key', () => {
  it("a bundle re-signed with the forger's own key passes unpinned (it proves only what its key signed) and fails pinned, naming both key ids", async () => {
    const { journal, file, lines } = await exported();
    const bundle = parseBundle(lines);
    const admitted = bundle.records[12]!;
    admitted.record = { ...admitted.record, body: { ...admitted.record.body, input: { text: 'pay mallory' } } };
    const records = rehashFrom(bundle.records, 12);
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const publicJwk = publicKey.export({ format: 'jwk' }) as JWK;
    const forgerKeyId = await keyIdOf(publicJwk);
    const tree = new MerkleAccumulator();
    for (const r of records) tree.append(leafHash(fromHex(r.hash)));
    const signed = signCheckpoint(
      { privateKey, publicKey, publicJwk, keyId: forgerKeyId },
      { journalId: journal.journalId, treeSize: 36, rootHash: toHex(tree.root()), time: new Date().toISOString() },
    );
    writeBundle(file, { header: { ...bundle.header, publicKey: publicJwk as Record<string, unknown>, keyId: forgerKeyId }, records, checkpoints: [signed.jws] });

    expect((await verifyCli(file)).lines[0]).toBe(`OK 36 records, root ${toHex(tree.root())}`);
    const pinned = await verifyCli(file, '--key-id', journal.key.keyId);
    expect(pinned.lines[0]).toBe(`FAIL the bundle is signed by key ${forgerKeyId}, not the expected ${journal.key.keyId}`);
    expect(pinned.code).toBe(1);
  });

  it("another plane's genuine bundle fails --key-id, naming both key ids", async () => {
    const mine = await populated();
    const theirs = await exported();
    expect(theirs.journal.key.keyId).not.toBe(mine.key.keyId);
    expect((await verifyCli(theirs.file, '--key-id', theirs.journal.key.keyId)).code).toBe(0);
    const pinned = await verifyCli(theirs.file, '--key-id', mine.key.keyId);
    expect(pinned.lines[0]).toBe(`FAIL the bundle is signed by key ${theirs.journal.key.keyId}, not the expected ${mine.key.keyId}`);
    expect(pinned.code).toBe(1);
  });

  it("a bundle whose header key was swapped for the forger's, the plane's checkpoints kept, fails naming both key ids", async () => {
    const { journal, file, lines } = await exported();
    const bundle = parseBundle(lines);
    const publicJwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as JWK;
    const forgerKeyId = await keyIdOf(publicJwk);
    writeBundle(file, { ...bundle, header: { ...bundle.header, publicKey: publicJwk as Record<string, unknown>, keyId: forgerKeyId } });
    const report = await verifyCli(file);
    expect(report.lines[0]).toMatch(/^FAIL seq 12: the checkpoint at tree size 12: its signature does not verify/);
    expect(report.lines[0]).toContain(`(it names key ${journal.key.keyId}; the key it was checked with is ${forgerKeyId})`);
    expect(report.code).toBe(1);
  });

  it('a checkpoint signed by the right key whose payload names another key fails', async () => {
    const { journal, file, lines } = await exported();
    const bundle = parseBundle(lines);
    const fields = { journalId: journal.journalId, treeSize: 36, rootHash: journal.rootHex(), time: new Date().toISOString() };
    const misnamed = signCheckpoint(journal.key, { ...fields, keyId: 'someone-else' } as typeof fields);
    expect(peekCheckpoint(misnamed.jws)?.keyId).toBe('someone-else');
    writeBundle(file, { ...bundle, checkpoints: [...bundle.checkpoints, misnamed.jws] });
    expect((await verifyCli(file)).lines[0]).toBe(`FAIL seq 36: the checkpoint at tree size 36 names key someone-else but was signed by key ${journal.key.keyId}`);
  });

  it('an unaltered bundle stripped of its signatures fails --key-id, naming the pinned key', async () => {
    const { journal, file, lines } = await exported();
    writeBundle(file, { ...parseBundle(lines), checkpoints: [] });
    const pinned = await verifyCli(file, '--key-id', journal.key.keyId);
    expect(pinned.lines[0]).toBe(`FAIL seq 1: ${NOT_COVERED} (the bundle carries none signed by key ${journal.key.keyId})`);
    expect(pinned.code).toBe(1);
  });

  it('a data dir whose key is not the pinned one fails, naming both key ids', async () => {
    const journal = await populated();
    await journal.close();
    const other = await populated();
    const pinned = await verifyCli('--data-dir', journal.dataDir, '--key-id', other.key.keyId);
    expect(pinned.lines[0]).toBe(`FAIL the data dir's key is ${journal.key.keyId}, not the expected ${other.key.keyId}`);
    expect(pinned.code).toBe(1);
    expect((await verifyCli('--data-dir', journal.dataDir, '--key-id', journal.key.keyId)).code).toBe(0);
  });
});

describe('valid exports still verify', () => {
  it('export signs the head first: full, run and range bundles taken past the last periodic checkpoint verify, pinned', async () => {
    const journal = await populated();
    // Five records past the checkpoint at 36; the next periodic one would be at 48.
    await journal.appendBatch(runDrafts('run-4', 1).slice(0, 3));
    await journal.appendBatch(runDrafts('run-5', 1).slice(0, 2));
    expect(journal.size).toBe(41);
    expect(Math.max(...journal.checkpoints.readAll().map(treeSizeOf))).toBe(36);

    const full = await exported({ kind: 'full' }, journal);
    expect(full.result).toMatchObject({ records: 41, treeSize: 41 });
    expect(Math.max(...parseBundle(full.lines).checkpoints.map(treeSizeOf))).toBe(41);
    expect(await verifyCli(full.file, '--key-id', journal.key.keyId)).toEqual({ code: 0, lines: [`OK 41 records, root ${journal.rootHex()}`] });

    const run = await exported({ kind: 'run', runId: 'run-4' }, journal);
    const runBundle = parseBundle(run.lines);
    expect(runBundle.records.map((r) => r.record.seq)).toEqual([37, 38, 39]);
    expect(runBundle.checkpoints.map(treeSizeOf)).toEqual([41]);
    expect(await verifyCli(run.file, '--key-id', journal.key.keyId)).toEqual({ code: 0, lines: [`OK 3 records, root ${journal.rootHex()}`] });

    const range = await exported({ kind: 'range', fromSeq: 30, toSeq: 41 }, journal);
    expect(parseBundle(range.lines).checkpoints.map(treeSizeOf)).toEqual([41]);
    expect(await verifyCli(range.file, '--key-id', journal.key.keyId)).toEqual({ code: 0, lines: [`OK 12 records, root ${journal.rootHex()}`] });
  });

  it('an empty journal exports a bundle signed at tree size 0, which verifies', async () => {
    const journal = await Journal.open({ dataDir: tempDataDir() });
    journals.push(journal);
    const { file } = await exported({ kind: 'full' }, journal);
    expect(await verifyCli(file)).toEqual({ code: 0, lines: [`OK 0 records, root ${sha256HexOf('')}`] });
  });
});

/** Rewrites the records table as an attacker with the file would: triggers dropped first. */
function tamperDb(dataDir: string, edit: (rows: RecordRow[]) => RecordRow[]): void {
  const db = new Database(journalPath(dataDir));
  db.exec('DROP TRIGGER records_append_only_update; DROP TRIGGER records_append_only_delete; DROP TRIGGER records_chain;');
  const rows = db.prepare('SELECT * FROM records ORDER BY seq').all() as RecordRow[];
  const next = edit(rows.map((r) => ({ ...r })));
  db.transaction(() => {
    db.exec('DELETE FROM records');
    const insert = db.prepare('INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (@seq, @run_id, @kind, @v, @time, @body, @prev_hash, @hash)');
    for (const row of next) insert.run(row);
  })();
  db.close();
}

/** Starts an appending writer on `dataDir` and SIGKILLs it after `acks` acknowledgements. */
function killWriterAfter(dataDir: string, acks: number): Promise<{ signal: NodeJS.Signals | null; lastAck: number; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', CHILD, 'append', '--data-dir', dataDir, '--run-prefix', 'killed', '--seed', '5', '--checkpoint-every', '1000000', '--yield'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let seen = 0;
    let lastAck = 0;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => (stderr += chunk));
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => {
      const [word, seq] = line.split(' ');
      if (word !== 'ACK') return;
      lastAck = Math.max(lastAck, Number(seq));
      if (++seen === acks) child.kill('SIGKILL');
    });
    const closed = new Promise<void>((done) => lines.on('close', done));
    child.on('error', reject);
    child.on('exit', (_code, signal) => void closed.then(() => resolve({ signal, lastAck, stderr })));
  });
}

describe("a data dir's unsigned tail", () => {
  it('left by a killed writer: reported as records n..m not yet signed, not counted as verified, and signed at the next open', async () => {
    const journal = await populated();
    const signedRoot = journal.rootHex();
    const atSigned = await exported({ kind: 'full' }, journal);
    await journal.close();
    const killed = await killWriterAfter(journal.dataDir, 4);
    expect(killed.signal, killed.stderr).toBe('SIGKILL');

    const reader = await Journal.open({ dataDir: journal.dataDir, readOnly: true });
    const head = (await reader.head()).seq;
    const tail = await reader.readRange(37, head, head);
    try {
      expect(head).toBeGreaterThanOrEqual(killed.lastAck);
      expect(head).toBeGreaterThan(36);
      expect(await verifyJournalStore(reader)).toEqual({
        ok: true,
        count: 36,
        root: signedRoot,
        checkpointSize: 36,
        unsigned: head - 36,
        unsignedTail: { fromSeq: 37, toSeq: head },
        unknownKinds: 0,
      });
    } finally {
      await reader.close();
    }

    const text = await verifyCli('--data-dir', journal.dataDir);
    expect(text.lines).toEqual([
      `OK 36 records, root ${signedRoot}`,
      `UNSIGNED seq 37..${head}: ${NOT_COVERED} yet (chained and hashed, but vouched for by no signature); they are signed at the next open of this data dir`,
    ]);
    expect(text.code).toBe(0);
    const json = await verifyCli('--data-dir', journal.dataDir, '--json');
    expect(JSON.parse(json.lines[0]!)).toMatchObject({ ok: true, count: 36, unsigned: head - 36, unsignedTail: { fromSeq: 37, toSeq: head } });

    // The same records handed over in a bundle (the export signed at 36, the tail added after
    // it) vouch for nothing past 36, and there that is a failure.
    const bundle = parseBundle(atSigned.lines);
    const tailRecords = tail.map((row) => ({ hash: row.hash, record: { seq: row.seq, runId: row.runId, kind: row.kind, v: row.v, time: row.time, prevHash: row.prevHash, body: row.body } }));
    writeBundle(atSigned.file, { ...bundle, header: { ...bundle.header, records: head }, records: [...bundle.records, ...tailRecords] });
    expect(await verifyCli(atSigned.file)).toEqual({ code: 1, lines: [`FAIL seq 37: ${NOT_COVERED} (the newest one, at tree size 36, ends before it)`] });

    // The next writer to open the data dir signs the tail.
    const next = await Journal.open({ dataDir: journal.dataDir });
    const headRoot = next.rootHex();
    await next.close();
    expect(await verifyCli('--data-dir', journal.dataDir)).toEqual({ code: 0, lines: [`OK ${head} records, root ${headRoot}`] });
  }, 30_000);

  it("the UI's journal.verify: the live plane signs its head first, so the badge covers every record it wrote, and its reply fits the contract", async () => {
    const journal = await populated();
    await journal.appendBatch(runDrafts('run-4', 1));
    expect(journal.size).toBe(40);
    const report = await journalHandlers(journal)['journal.verify']({}, { transport: 'local' });
    expect(report).toEqual({ ok: true, count: 40, root: journal.rootHex(), checkpointSize: 40, unsigned: 0, unknownKinds: 0 });
    expect(VerifyReportSchema.parse(report)).toEqual(report);
    // Verifying again with nothing new signs nothing new.
    const before = journal.checkpoints.readAll().length;
    await journalHandlers(journal)['journal.verify']({}, { transport: 'local' });
    expect(journal.checkpoints.readAll()).toHaveLength(before);
  });

  it("the UI's journal.verify catches a record the live plane wrote and someone rewrote in the database before any checkpoint", async () => {
    const journal = await populated();
    await journal.appendBatch(runDrafts('run-4', 1));
    // Record 38 rewritten in the file, every later hash recomputed: nothing signed covers them yet.
    tamperDb(journal.dataDir, (rows) => {
      let prev = rows[36]!.hash;
      return rows.map((row) => {
        if (row.seq < 38) return row;
        const body = row.seq === 38 ? row.body.replace('"echo"', '"evil"') : row.body;
        const fields = { seq: row.seq, runId: row.run_id, kind: row.kind, v: row.v, time: row.time, prevHash: prev };
        const hash = sha256HexOf(recordPreimageFromBodyText(fields, body));
        prev = hash;
        return { ...row, body, prev_hash: fields.prevHash, hash };
      });
    });
    const report = await journalHandlers(journal)['journal.verify']({}, { transport: 'local' });
    expect(report).toMatchObject({ ok: false, seq: 37 });
    if (!report.ok) expect(report.reason).toMatch(/records 37\.\.40 are not the records the checkpoint at tree size 40 signed/);
  });
});
