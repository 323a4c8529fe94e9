/**
 * One verification split across workers (verify-chunks.ts) answers exactly what the
 * single-thread verifier answers, for good journals and for each way of breaking one near or at
 * a chunk's edge: a record altered inside the second chunk, a broken link at the border, a
 * validly signed checkpoint over the wrong root (inside a chunk and at the border), a
 * checkpoint signed by another key. A worker that dies mid-verify fails it. Real SQLite
 * journals, real bundles, real worker threads.
 */
import { generateKeyPairSync } from 'node:crypto';
import { appendFileSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyRecordDraft } from '../../src-shared/journal/records';
import { recordPreimageFromBodyText } from '../../src-shared/journal/record-hash';
import { runDrafts, seededRandom, tempDataDir } from '../../tests/support/journal-support';
import { exportBundle } from './bundle-export';
import { verifyBundleChunk, verifyBundleFile, verifyBundleFileInThread, verifyBundleInParallel } from './bundle-verify';
import { storeVerifyPlan } from './store-verify';
import { peekCheckpoint, signCheckpoint, type SignedCheckpoint } from './checkpoints';
import { toHex } from './hex';
import { Journal } from './journal';
import { JournalError } from './journal-error';
import { JournalWorkers } from './journal-worker-pool';
import { verifyJournalStore, verifyJournalStoreInWorker, verifyStoreInParallel } from './journal-workers';
import { leafHash, MerkleAccumulator, rootFromLeafHashes, sha256Hex } from './merkle';
import { journalPath } from './sqlite-store';
import type { RecordRow } from './sqlite-reader';
import { alignedSubtrees, chunkCount, type ChunkPlan } from './verify-chunks';
import { BROKEN_LINK } from './verify';

const RECORDS = 4000;
/** Two workers cut a data dir of RECORDS records into chunks of this many seqs. */
const CHUNK = RECORDS / chunkCount(RECORDS, 2);
const journals: Journal[] = [];
const pools: JournalWorkers[] = [];
afterEach(async () => {
  for (const pool of pools.splice(0)) await pool.close();
  for (const j of journals.splice(0)) {
    await j.close().catch(() => undefined);
    rmSync(j.dataDir, { recursive: true, force: true });
  }
});

/** A journal of RECORDS records (whole runs), signed every `checkpointEvery` and at its head. */
async function filled(checkpointEvery = 500, runPrefix = 'run-'): Promise<Journal> {
  const journal = await Journal.open({ dataDir: tempDataDir('ap-chunks-'), checkpointEvery });
  journals.push(journal);
  let pending: AnyRecordDraft[] = [];
  let run = 0;
  for (let written = 0; written < RECORDS; written += 1000) {
    while (pending.length < 1000) pending = pending.concat(runDrafts(`${runPrefix}${++run}`, 5));
    await journal.appendBatch(pending.splice(0, 1000));
  }
  await journal.checkpoint();
  return journal;
}

function storePool(journal: Journal, size = 2): JournalWorkers {
  const pool = new JournalWorkers({ databasePath: journalPath(journal.dataDir), size });
  pools.push(pool);
  return pool;
}

function bundlePool(size = 2): JournalWorkers {
  const pool = new JournalWorkers({ size });
  pools.push(pool);
  return pool;
}

async function inParallel(journal: Journal, pool: JournalWorkers, faultAtSeq?: number) {
  const head = await journal.head();
  return verifyStoreInParallel(pool, storeVerifyPlan(journal), head.seq, { publicKey: journal.key.publicKey, ...(faultAtSeq !== undefined ? { faultAtSeq } : {}) });
}

/** Edits one row as someone with the database file could (triggers dropped). */
function rewriteRow(journal: Journal, seq: number, edit: (row: RecordRow) => RecordRow): void {
  const db = new Database(journalPath(journal.dataDir));
  db.exec('DROP TRIGGER IF EXISTS records_append_only_update; DROP TRIGGER IF EXISTS records_append_only_delete; DROP TRIGGER IF EXISTS records_chain;');
  const row = db.prepare('SELECT * FROM records WHERE seq = ?').get(seq) as RecordRow;
  const next = edit({ ...row });
  db.prepare('UPDATE records SET body = @body, time = @time, prev_hash = @prev_hash, hash = @hash WHERE seq = @seq').run(next);
  db.close();
}

/** The first seq at or after `seq` whose body says "echo" (what the tamperings below change). */
function echoSeqFrom(journal: Journal, seq: number): number {
  const db = new Database(journalPath(journal.dataDir), { readonly: true });
  const found = db.prepare(`SELECT seq FROM records WHERE seq >= ? AND body LIKE '%"echo"%' ORDER BY seq LIMIT 1`).get(seq) as { seq: number };
  db.close();
  return found.seq;
}

/** A time moved by a millisecond: the same length, still a time. */
const shifted = (time: string) => time.replace(/(\d)Z$/, (_, d: string) => `${(Number(d) + 1) % 10}Z`);

/** The time altered and the hash recomputed over it: the record hashes right, the next one's link breaks. */
function alteredAndRehashed(row: RecordRow): RecordRow {
  const time = shifted(row.time);
  const hash = sha256Hex(recordPreimageFromBodyText({ seq: row.seq, runId: row.run_id, kind: row.kind, v: row.v, time, prevHash: row.prev_hash }, row.body));
  return { ...row, time, hash };
}

/** A checkpoint the plane's own key signs over a root that is not the journal's at that size. */
function signWrongRoot(journal: Journal, treeSize: number): SignedCheckpoint {
  return signCheckpoint(journal.key, { journalId: journal.journalId, treeSize, rootHash: sha256Hex(`not the root at ${treeSize}`), time: new Date().toISOString() });
}

/** A checkpoint signed by a key that is not the plane's, naming the plane's key. */
function signByAnother(journal: Journal, treeSize: number): SignedCheckpoint {
  const other = generateKeyPairSync('ed25519');
  return signCheckpoint({ ...journal.key, privateKey: other.privateKey }, { journalId: journal.journalId, treeSize, rootHash: sha256Hex('x'), time: new Date().toISOString() });
}

/**
 * Where verifyBundleInParallel cuts a bundle of its record lines into `parts` byte ranges: the
 * 0-based index (among record lines) of each range's first line after the first.
 */
function bundleBorders(file: string, parts: number): number[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const starts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    starts.push(offset);
    offset += Buffer.byteLength(line) + 1;
  }
  const first = 1;
  const afterRecords = lines.findIndex((l) => l.startsWith('{"checkpoint":'));
  const recordsStart = starts[first]!;
  const recordsEnd = starts[afterRecords]!;
  const borders: number[] = [];
  for (let part = 1; part < parts; part++) {
    const target = recordsStart + Math.floor(((recordsEnd - recordsStart) * part) / parts);
    // The range ends at the end of the line holding byte target - 1.
    const holding = starts.findIndex((s, i) => s <= target - 1 && (starts[i + 1] ?? Infinity) > target - 1);
    borders.push(holding + 1 - first);
  }
  return borders;
}

/** Rewrites record line `index` (0-based among record lines) of a bundle. */
function editBundleLine(file: string, index: number, edit: (line: string) => string): void {
  const lines = readFileSync(file, 'utf8').split('\n');
  lines[index + 1] = edit(lines[index + 1]!);
  writeFileSync(file, lines.join('\n'));
}

async function bundleOf(journal: Journal): Promise<string> {
  const file = join(journal.dataDir, 'full.bundle.jsonl');
  await exportBundle(journal, { kind: 'full' }, file);
  return file;
}

describe('a data dir verified in chunks', () => {
  it('a good journal, with and without an unsigned tail, on two and three workers: the single-thread report', async () => {
    const journal = await filled();
    const expected = await verifyJournalStore(journal);
    expect(expected).toMatchObject({ ok: true, count: RECORDS, unsigned: 0 });
    const two = storePool(journal, 2);
    expect(await inParallel(journal, two)).toEqual(expected);
    expect(two.stats().started).toBe(2);
    expect(await inParallel(journal, storePool(journal, 3))).toEqual(expected);

    await journal.appendBatch(runDrafts('tail', 3));
    const withTail = await verifyJournalStore(journal);
    expect(withTail).toMatchObject({ ok: true, count: RECORDS, unsignedTail: { fromSeq: RECORDS + 1, toSeq: RECORDS + 8 } });
    expect(await inParallel(journal, two)).toEqual(withTail);
  }, 60_000);

  it('a record altered in the middle of the second chunk', async () => {
    const journal = await filled();
    const seq = echoSeqFrom(journal, CHUNK * 1.5);
    expect(seq).toBeLessThan(CHUNK * 2);
    rewriteRow(journal, seq, (row) => ({ ...row, body: row.body.replace('"echo"', '"evil"') }));
    const expected = await verifyJournalStore(journal);
    expect(expected).toEqual({ ok: false, seq, reason: 'its content does not match its hash (the record was altered)', count: seq - 1 });
    expect(await inParallel(journal, storePool(journal))).toEqual(expected);
  }, 60_000);

  it('a link broken exactly at the chunk border', async () => {
    // Signed only at the head, so the first failure is the link, not a checkpoint.
    const journal = await filled(1_000_000);
    const border = CHUNK; // the first chunk's last seq
    rewriteRow(journal, border, alteredAndRehashed);
    const expected = await verifyJournalStore(journal);
    expect(expected).toEqual({ ok: false, seq: border + 1, reason: BROKEN_LINK, count: border });
    expect(await inParallel(journal, storePool(journal))).toEqual(expected);
  }, 60_000);

  it('a validly signed checkpoint over the wrong root, inside the second chunk and at the border; one signed by another key', async () => {
    const journal = await filled();
    const pool = storePool(journal);
    // Batches of 1000 are each signed as they commit: the checkpoints before these are at 1000s.
    const inside = CHUNK + CHUNK / 2 + 33;
    journal.checkpoints.append(signWrongRoot(journal, inside));
    const insideReport = await verifyJournalStore(journal);
    expect(insideReport).toMatchObject({ ok: false, seq: 1, reason: expect.stringMatching(new RegExp(`^records 1\\.\\.${inside} are not the records the checkpoint at tree size ${inside} signed`)) as unknown, count: inside - 1 });
    expect(await inParallel(journal, pool)).toEqual(insideReport);

    // A fresh journal, so the one above does not come first: a wrong root at a chunk's end.
    const second = await filled();
    const atBorderSize = CHUNK * 3;
    second.checkpoints.append(signWrongRoot(second, atBorderSize));
    const atBorder = await verifyJournalStore(second);
    expect(atBorder).toMatchObject({ ok: false, seq: 1001, reason: expect.stringMatching(new RegExp(`^records 1001\\.\\.${atBorderSize} are not`)) as unknown, count: atBorderSize - 1 });
    expect(await inParallel(second, storePool(second))).toEqual(atBorder);

    journal.checkpoints.append(signByAnother(journal, 10));
    const forged = await verifyJournalStore(journal);
    expect(forged).toMatchObject({ ok: false, seq: 10, reason: expect.stringMatching(/signature does not verify/) as unknown });
    expect(await inParallel(journal, pool)).toEqual(forged);
  }, 60_000);

  it('a record missing at a chunk edge: the chunks decline, and the plane\'s path answers the single-thread report', async () => {
    const journal = await filled();
    const db = new Database(journalPath(journal.dataDir));
    db.exec('DROP TRIGGER IF EXISTS records_append_only_delete;');
    db.prepare('DELETE FROM records WHERE seq = ?').run(CHUNK);
    db.close();
    const expected = await verifyJournalStore(journal);
    expect(expected).toEqual({ ok: false, seq: CHUNK, reason: `expected seq ${CHUNK} here: a record is missing (the next one present is seq ${CHUNK + 1})`, count: CHUNK - 1 });
    expect(await inParallel(journal, storePool(journal))).toBeNull();
    expect(await verifyJournalStoreInWorker(journal)).toEqual(expected);
  }, 60_000);

  it('a worker that dies mid-verify fails it with WorkerCrashed, never an "ok"', async () => {
    const journal = await filled();
    const pool = storePool(journal);
    const crashed = inParallel(journal, pool, CHUNK * 1.5);
    await expect(crashed).rejects.toSatisfy((error: unknown) => error instanceof JournalError && error.code === 'WorkerCrashed');
    await expect(crashed).rejects.toThrow(/died while running verifyStoreChunk \(it exited with code 70\)/);
    // The pool recovers: the next verification gets a new worker.
    expect(await inParallel(journal, pool)).toEqual(await verifyJournalStore(journal));
  }, 60_000);
});

describe('a bundle verified in chunks', () => {
  it('a good bundle, on two and three workers: the single-thread report', async () => {
    const journal = await filled();
    const file = await bundleOf(journal);
    const expected = await verifyBundleFileInThread(file);
    expect(expected).toMatchObject({ ok: true, count: RECORDS });
    const two = bundlePool(2);
    expect(await verifyBundleInParallel(file, {}, two)).toEqual(expected);
    expect(two.stats().started).toBe(2);
    expect(await verifyBundleInParallel(file, {}, bundlePool(3))).toEqual(expected);
  }, 60_000);

  it('a record altered in the middle of the second chunk, and a link broken exactly at the border', async () => {
    const journal = await filled(1_000_000);
    const file = await bundleOf(journal);
    const borders = bundleBorders(file, chunkCount(RECORDS, 2));
    const [border, third] = borders as [number, number];
    expect(border).toBeGreaterThan(0);
    const pool = bundlePool(2);

    const altered = join(journal.dataDir, 'altered.jsonl');
    writeFileSync(altered, readFileSync(file));
    const middle = Math.floor((border + third) / 2);
    let changed = middle;
    while (!readFileSync(altered, 'utf8').split('\n')[changed + 1]!.includes('"echo"')) changed += 1;
    editBundleLine(altered, changed, (line) => line.replace('"echo"', '"evil"'));
    const alteredReport = await verifyBundleFileInThread(altered);
    expect(alteredReport).toMatchObject({ ok: false, seq: changed + 1, reason: 'its content does not match its hash (the record was altered)' });
    expect(await verifyBundleInParallel(altered, {}, pool)).toEqual(alteredReport);

    // The last line of the first chunk altered with its hash recomputed: same length, so the
    // border stays; the first line of the second chunk no longer links to it.
    const linked = join(journal.dataDir, 'linked.jsonl');
    writeFileSync(linked, readFileSync(file));
    editBundleLine(linked, border - 1, (line) => {
      const preimage = line.slice(line.indexOf(',"record":') + ',"record":'.length, -1).replace(/"time":"([^"]*)"/, (_, time: string) => `"time":"${shifted(time)}"`);
      return `{"hash":"${sha256Hex(preimage)}","record":${preimage}}`;
    });
    expect(bundleBorders(linked, chunkCount(RECORDS, 2))).toEqual(borders);
    const linkReport = await verifyBundleFileInThread(linked);
    expect(linkReport).toMatchObject({ ok: false, seq: border + 1, reason: BROKEN_LINK, count: border });
    expect(await verifyBundleInParallel(linked, {}, pool)).toEqual(linkReport);
  }, 60_000);

  it('a validly signed checkpoint over the wrong root inside the second chunk, and one signed by another key', async () => {
    const journal = await filled();
    const file = await bundleOf(journal);
    const pool = bundlePool(2);
    const [border, third] = bundleBorders(file, chunkCount(RECORDS, 2)) as [number, number];
    const inside = Math.floor((border + third) / 2);
    const wrong = join(journal.dataDir, 'wrong-root.jsonl');
    writeFileSync(wrong, readFileSync(file));
    appendFileSync(wrong, `${JSON.stringify({ checkpoint: signWrongRoot(journal, inside).jws })}\n`);
    const expected = await verifyBundleFileInThread(wrong);
    expect(expected).toMatchObject({ ok: false, seq: 1, reason: expect.stringMatching(new RegExp(`^records 1\\.\\.${inside} are not`)) as unknown });
    expect(await verifyBundleInParallel(wrong, {}, pool)).toEqual(expected);

    const forged = join(journal.dataDir, 'forged.jsonl');
    writeFileSync(forged, readFileSync(file));
    appendFileSync(forged, `${JSON.stringify({ checkpoint: signByAnother(journal, RECORDS).jws })}\n`);
    const forgedReport = await verifyBundleFileInThread(forged);
    expect(forgedReport).toMatchObject({ ok: false, reason: expect.stringMatching(/signature does not verify/) as unknown });
    expect(await verifyBundleInParallel(forged, {}, pool)).toEqual(forgedReport);
  }, 60_000);

  it('declines what it does not split (a small bundle, a CR in it), so the caller verifies on one thread', async () => {
    const journal = await filled();
    const file = await bundleOf(journal);
    const pool = bundlePool(2);
    const crlf = join(journal.dataDir, 'crlf.jsonl');
    writeFileSync(crlf, readFileSync(file, 'utf8').replace(/\n/g, '\r\n'));
    expect(await verifyBundleInParallel(crlf, {}, pool)).toBeNull();
    const small = join(journal.dataDir, 'run.jsonl');
    await exportBundle(journal, { kind: 'range', fromSeq: 1, toSeq: 10 }, small);
    expect(await verifyBundleInParallel(small, {}, pool)).toBeNull();
    // Both are refused from the header, read here: no worker started.
    expect(pool.stats().started).toBe(0);
  }, 60_000);

  it('a chunk that meets bytes the single-thread reader reads differently declines, wherever they are: a lone CR, bytes that are not UTF-8, a checkpoint line among the records', async () => {
    const journal = await filled();
    const file = await bundleOf(journal);
    const pool = bundlePool(2);
    const [, third] = bundleBorders(file, chunkCount(RECORDS, 2)) as [number, number];
    const variants: Array<[string, (line: string) => string]> = [
      // A lone CR inside a string of the third chunk's body: readline ends a line there.
      ['cr', (line) => line.replace('"echo"', '"ec\rho"')],
      // A byte that is not UTF-8: a decoder replaces it, so the text hashed is not the bytes.
      ['latin1', (line) => line.replace('"echo"', '"ech\u00ff"')],
      // A checkpoint line among the records (the single-thread reader takes it as a checkpoint).
      ['stray', (line) => `${JSON.stringify({ checkpoint: readFileSync(file, 'utf8').split('\n').find((l) => l.startsWith('{"checkpoint":'))!.slice(15, -2) })}\n${line}`],
    ];
    for (const [name, edit] of variants) {
      const broken = join(journal.dataDir, `${name}.jsonl`);
      const lines = readFileSync(file, 'utf8').split('\n');
      let at = third + 1;
      while (!lines[at]!.includes('"echo"')) at += 1;
      lines[at] = edit(lines[at]!);
      // 'latin1' writes U+00FF as the single byte 0xFF, which is not UTF-8.
      writeFileSync(broken, name === 'latin1' ? Buffer.from(lines.join('\n'), 'latin1') : lines.join('\n'));
      expect(await verifyBundleInParallel(broken, {}, pool), name).toBeNull();
      // The path the CLI takes then answers the single-thread report.
      expect(await verifyBundleFile(broken), name).toEqual(await verifyBundleFileInThread(broken));
    }
  }, 60_000);

  it('records whose run ids and bodies are not ASCII: hashed as the file holds them, the single-thread report', async () => {
    const journal = await filled(500, 'прогон-☃-');
    const file = await bundleOf(journal);
    const expected = await verifyBundleFileInThread(file);
    expect(expected).toMatchObject({ ok: true, count: RECORDS });
    expect(await verifyBundleInParallel(file, {}, bundlePool(2))).toEqual(expected);
    const altered = join(journal.dataDir, 'altered.jsonl');
    writeFileSync(altered, readFileSync(file, 'utf8').replace('прогон-☃-201"', 'прогон-☂-201"'));
    const alteredReport = await verifyBundleFileInThread(altered);
    expect(alteredReport).toMatchObject({ ok: false, reason: 'its content does not match its hash (the record was altered)' });
    expect(await verifyBundleInParallel(altered, {}, bundlePool(2))).toEqual(alteredReport);
  }, 60_000);

  it('one chunk read through a window smaller than a line, and ranges cut anywhere in a line, check the same records', async () => {
    const journal = await filled();
    const file = await bundleOf(journal);
    const text = readFileSync(file, 'utf8');
    const recordsStart = text.indexOf('\n') + 1;
    const recordsEnd = Buffer.byteLength(text.slice(0, text.indexOf('\n{"checkpoint":') + 1));
    const checkpoints = text.split('\n').filter((l) => l.startsWith('{"checkpoint":')).map((l) => peekCheckpoint((JSON.parse(l) as { checkpoint: string }).checkpoint)!);
    const plan: ChunkPlan = { signed: { keyId: journal.key.keyId, checkpoints: checkpoints.sort((a, b) => a.treeSize - b.treeSize) }, uncovered: 'fail', startSeq: null };
    const whole = verifyBundleChunk(file, recordsStart, recordsEnd, recordsEnd, plan);
    expect(whole.summary).toMatchObject({ startSeq: 1, records: RECORDS, passed: RECORDS, failure: null });
    expect(whole.summary.declined).toBeUndefined();
    // A 64-byte window is shorter than every record line: each line is read by growing it.
    expect(verifyBundleChunk(file, recordsStart, recordsEnd, recordsEnd, plan, 64)).toEqual(whole);
    // Cut at random bytes, the ranges together hold every record once, in order.
    const random = seededRandom(1603);
    for (let trial = 0; trial < 5; trial++) {
      const cuts = [recordsStart, ...Array.from({ length: 6 }, () => recordsStart + Math.floor(random() * (recordsEnd - recordsStart))).sort((a, b) => a - b), recordsEnd];
      let next = 1;
      for (let i = 0; i + 1 < cuts.length; i++) {
        const part = verifyBundleChunk(file, cuts[i]!, cuts[i + 1]!, recordsEnd, plan, 256);
        if (part.summary.records === 0) continue;
        expect(part.summary.startSeq, `trial ${trial}, range ${i}`).toBe(next);
        expect(part.summary.failure).toBeNull();
        next += part.summary.records;
      }
      expect(next).toBe(RECORDS + 1);
    }
  }, 60_000);
});

describe('aligned subtrees', () => {
  it('folding their roots gives the same tree as appending every leaf, cut at every checkpoint size', () => {
    const random = seededRandom(16);
    const leaves = Array.from({ length: 300 }, (_, i) => leafHash(new TextEncoder().encode(`leaf ${i}`)));
    for (let trial = 0; trial < 200; trial++) {
      const from = Math.floor(random() * 150);
      const to = from + Math.floor(random() * 150);
      const cuts = Array.from({ length: Math.floor(random() * 4) }, () => Math.floor(random() * 300));
      const byLeaf = new MerkleAccumulator();
      for (let i = 0; i < from; i++) byLeaf.append(leaves[i]!);
      const bySubtree = MerkleAccumulator.deserialize(byLeaf.serialize());
      const sizes: number[] = [];
      let at = from;
      for (const height of alignedSubtrees(from, to, cuts)) {
        const width = 2 ** height;
        expect(at % width).toBe(0);
        bySubtree.appendSubtree(rootFromLeafHashes(leaves.slice(at, at + width)), height);
        at += width;
        sizes.push(at);
      }
      for (let i = from; i < to; i++) byLeaf.append(leaves[i]!);
      expect(at).toBe(to);
      expect(toHex(bySubtree.root())).toBe(toHex(byLeaf.root()));
      // Every cut inside the range is the end of a subtree.
      for (const cut of cuts) if (cut > from && cut < to) expect(sizes).toContain(cut);
    }
  });
});
