/**
 * The outside witness (docs/WITNESS.md) over real HTTP on loopback: the tlog-witness answers
 * (200 with a cosignature, 409 with the size it holds, 422 for a non-extension, 400/403/404 for
 * bad input), a plane's journal submitting its checkpoints to a witness run as a real child
 * process, a journal rewritten and re-signed with the plane's own key failing
 * `journal verify --witness-key`, and a plane whose witness is down going on appending and
 * catching up when it returns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordPreimageFromBodyText } from '../../../src-shared/journal/record-hash';
import { journalCli } from '../../../tests/support/journal-cli';
import { runDrafts, tempDataDir } from '../../../tests/support/journal-support';
import { exportBundle } from '../bundle-export';
import { Journal } from '../journal';
import { consistencyProof, emptyRoot, leafHash, rootFromLeafHashes } from '../merkle';
import { journalPath } from '../sqlite-store';
import type { RecordRow } from '../sqlite-reader';
import { sha256HexOf } from '../verify';
import { checkAgainstWitness } from './witness-verify';
import { cosignatureLine, checkpointText, encodeVerifierKey, NOTE_ED25519, noteSigner, parseVerifierKey, signNote, checkCosignature, parseSignatureLines, COSIGNATURE_ED25519 } from './signed-note';
import { planeLogKey, WitnessSubmitter } from './witness-client';
import { startWitness, type RunningWitness } from './witness-server';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const logSigner = noteSigner('example.test/log', NOTE_ED25519, generateKeyPairSync('ed25519').privateKey);
const leaves = Array.from({ length: 40 }, () => leafHash(randomBytes(32)));

function submission(old: number, size: number, options: { signer?: typeof logSigner; origin?: string; root?: Uint8Array; proofFrom?: number } = {}): string {
  const signer = options.signer ?? logSigner;
  const root = options.root ?? rootFromLeafHashes(leaves.slice(0, size));
  const from = options.proofFrom ?? old;
  const proof = from > 0 && from < size ? consistencyProof(leaves, from, size) : [];
  return `old ${old}\n${proof.map((h) => `${Buffer.from(h).toString('base64')}\n`).join('')}\n${signNote(signer, checkpointText(options.origin ?? signer.name, size, root))}`;
}

async function post(witness: RunningWitness, body: string, offeredKey?: string): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(`${witness.url}/add-checkpoint`, { method: 'POST', body, ...(offeredKey !== undefined ? { headers: { 'agentplane-log-key': offeredKey } } : {}) });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
}

async function inProcessWitness(dir = tempDataDir('ap-witness-'), port?: number): Promise<RunningWitness> {
  const witness = await startWitness({ dataDir: dir, logKeys: [encodeVerifierKey(logSigner)], ...(port !== undefined ? { port } : {}) });
  cleanups.push(() => witness.close());
  return witness;
}

describe('the witness (tlog-witness over HTTP)', () => {
  it('cosigns a sequence of extensions, each cosignature verifying with its published key', async () => {
    const witness = await inProcessWitness();
    const key = parseVerifierKey(readFileSync(witness.vkeyFile, 'utf8'), COSIGNATURE_ED25519);
    let old = 0;
    for (const size of [3, 8, 8, 21, 40]) {
      const answer = await post(witness, submission(old, size));
      expect(answer.status, answer.text).toBe(200);
      const [line] = parseSignatureLines(answer.text);
      const check = checkCosignature(key, checkpointText(logSigner.name, size, rootFromLeafHashes(leaves.slice(0, size))), line!);
      expect(check.ok).toBe(true);
      old = size;
    }
    const state = JSON.parse(readFileSync(join(witness.files.dir, 'witness-state.json'), 'utf8')) as { logs: Record<string, { size: number }> };
    expect(state.logs[logSigner.name]!.size).toBe(40);
  });

  it('answers 409 with its size for a stale old size, and 422 for a checkpoint that is not an extension', async () => {
    const witness = await inProcessWitness();
    expect((await post(witness, submission(0, 10))).status).toBe(200);
    const stale = await post(witness, submission(4, 20, { proofFrom: 4 }));
    expect(stale).toEqual({ status: 409, type: 'text/x.tlog.size', text: '10\n' });
    // Same size, another root; and a larger tree whose proof does not lead from the cosigned root.
    const forkedRoot = rootFromLeafHashes([...leaves.slice(0, 9), leafHash(Buffer.from('rewritten'))]);
    expect((await post(witness, submission(10, 10, { root: forkedRoot }))).status).toBe(422);
    const rewritten = [...leaves.slice(0, 5), leafHash(Buffer.from('rewritten')), ...leaves.slice(6, 20)];
    const body = `old 10\n${consistencyProof(rewritten, 10, 20).map((h) => `${Buffer.from(h).toString('base64')}\n`).join('')}\n${signNote(logSigner, checkpointText(logSigner.name, 20, rootFromLeafHashes(rewritten)))}`;
    const refused = await post(witness, body);
    expect(refused.status).toBe(422);
    expect(refused.text).toMatch(/not an extension of the one cosigned at size 10/);
    expect((await post(witness, submission(0, 0, { root: emptyRoot() }))).status).toBe(409);
  });

  it('refuses bad input with a status and a message naming what was wrong', async () => {
    const witness = await inProcessWitness();
    const cases: Array<[string, number, RegExp]> = [
      ['nonsense', 400, /"old <size>"/],
      ['old 01\n\n', 400, /decimal size/],
      ['old 0\nnot base64!\n\n' + signNote(logSigner, checkpointText(logSigner.name, 1, leaves[0]!)), 400, /proof line 1 is not base64/],
      ['old 0\n\nexample.test/log\n1\n', 400, /no blank line between its text and its signatures/],
      ['old 0\n\nexample.test/log\n1\nAAAA\n\n\u2014 example.test/log AAAAAAAA\n', 400, /root hash is 3 bytes/],
      [submission(0, 3, { origin: 'example.test/unknown' }), 404, /unknown log origin "example.test\/unknown"/],
      [submission(0, 3, { signer: noteSigner('example.test/log', NOTE_ED25519, generateKeyPairSync('ed25519').privateKey) }), 403, /no signature by the key this witness knows/],
      [submission(5, 3), 400, /old size 5 is larger than the checkpoint's size 3/],
    ];
    for (const [body, status, message] of cases) {
      const answer = await post(witness, body);
      expect(answer.status, body).toBe(status);
      expect(answer.text).toMatch(message);
    }
    // A page on another site reaching the loopback witness through DNS rebinding names its own host.
    const rebound = await new Promise<number>((done, fail) => {
      const req = request(`${witness.url}/add-checkpoint`, { method: 'POST', headers: { host: 'evil.example' } }, (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      });
      req.on('error', fail);
      req.end(submission(0, 3));
    });
    expect(rebound).toBe(403);
    // A signature by the known key name and ID that does not verify is a 403 too.
    const good = submission(0, 3);
    const tampered = good.replace(/\n3\n/, '\n4\n');
    expect((await post(witness, tampered)).status).toBe(403);
  });
});

describe('a log introducing its key with its first checkpoint (first use)', () => {
  it('keeps the key a new origin offers, and from then on refuses checkpoints not signed by it; --known-logs-only refuses it', async () => {
    const witness = await startWitness({ dataDir: tempDataDir('ap-witness-tofu-') });
    cleanups.push(() => witness.close());
    const newcomer = noteSigner('example.test/newcomer', NOTE_ED25519, generateKeyPairSync('ed25519').privateKey);
    const other = noteSigner('example.test/newcomer', NOTE_ED25519, generateKeyPairSync('ed25519').privateKey);
    // Offered under another name, or malformed: refused, and nothing is kept.
    expect(await post(witness, submission(0, 3, { signer: newcomer }), encodeVerifierKey(logSigner))).toMatchObject({ status: 403, text: expect.stringMatching(/offered log key is named "example.test\/log", not the checkpoint's origin "example.test\/newcomer"/) });
    expect(await post(witness, submission(0, 3, { signer: newcomer }), 'garbage')).toMatchObject({ status: 400, text: expect.stringMatching(/offered log key is malformed/) });
    // Offered with a checkpoint its key did not sign: refused, and still not kept.
    expect((await post(witness, submission(0, 3, { signer: other }), encodeVerifierKey(newcomer))).status).toBe(403);
    // The newcomer's own key with its own checkpoint: cosigned, and kept.
    expect((await post(witness, submission(0, 3, { signer: newcomer }), encodeVerifierKey(newcomer))).status).toBe(200);
    // Another key for the same origin, offered or not, can no longer take it over.
    expect(await post(witness, submission(3, 5, { signer: other }), encodeVerifierKey(other))).toMatchObject({ status: 403, text: expect.stringMatching(/no signature by the key this witness knows/) });
    expect((await post(witness, submission(3, 5, { signer: newcomer }))).status).toBe(200);

    const strict = await startWitness({ dataDir: tempDataDir('ap-witness-strict-'), firstUse: false });
    cleanups.push(() => strict.close());
    expect(await post(strict, submission(0, 3, { signer: newcomer }), encodeVerifierKey(newcomer))).toMatchObject({ status: 404, text: expect.stringMatching(/unknown log origin "example.test\/newcomer"/) });
  });
});

describe('holding records to a witness (checkAgainstWitness)', () => {
  const witnessSigner = noteSigner('witness.test/w', COSIGNATURE_ED25519, generateKeyPairSync('ed25519').privateKey);
  const other = noteSigner('witness.test/other', COSIGNATURE_ED25519, generateKeyPairSync('ed25519').privateKey);
  const origin = 'agentplane/j1';
  const entry = (size: number, signer = witnessSigner) => {
    const text = checkpointText(origin, size, rootFromLeafHashes(leaves.slice(0, size)));
    return { checkpoint: text, cosignatures: cosignatureLine(signer, text, 1_700_000_000) };
  };
  const rootAt = (size: number) => Promise.resolve(rootFromLeafHashes(leaves.slice(0, size)));

  it('passes on the largest cosigned size and counts the records after it', async () => {
    expect(await checkAgainstWitness(witnessSigner, 'j1', [entry(10), entry(30), entry(35, other)], 40, rootAt)).toEqual({
      ok: true, witness: 'witness.test/w', cosignedSize: 30, cosignedAt: '2023-11-14T22:13:20.000Z', beyond: 10,
    });
  });

  it('fails a journal shorter than what the witness saw, one with no cosignature by the key, and a cosignature that does not verify', async () => {
    expect(await checkAgainstWitness(witnessSigner, 'j1', [entry(30)], 25, rootAt)).toEqual({ ok: false, reason: 'witness witness.test/w cosigned tree size 30, but only 25 records are here: records the witness saw were removed' });
    expect(await checkAgainstWitness(witnessSigner, 'j1', [entry(30, other)], 40, rootAt)).toMatchObject({ ok: false, reason: expect.stringMatching(/^no cosignature by witness witness\.test\/w on this journal \(origin agentplane\/j1\)/) });
    const forged = entry(30);
    forged.checkpoint = checkpointText(origin, 30, rootFromLeafHashes(leaves.slice(1, 31)));
    expect(await checkAgainstWitness(witnessSigner, 'j1', [forged], 40, rootAt)).toEqual({ ok: false, reason: 'the cosignature at tree size 30: the cosignature by witness.test/w does not verify with its key over this checkpoint' });
  });
});

/** `agentplane witness serve` as a real child process: its two lines, and a stop. */
async function childWitness(dir: string, logKey?: string): Promise<{ url: string; keyFile: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src-main', 'cli', 'main.ts'), 'witness', 'serve', '--data-dir', dir, ...(logKey ? ['--log-key', logKey] : [])], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((done) => child.once('exit', done));
  cleanups.push(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  const values: Record<string, string> = {};
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  for await (const line of createInterface({ input: child.stdout! })) {
    const [name, value] = line.split(/=(.*)/s) as [string, string];
    values[name] = value;
    if (Object.keys(values).length === 2) break;
  }
  if (!values.AGENTPLANE_WITNESS_URL) throw new Error(`witness serve printed no URL: ${stderr}`);
  return { url: values.AGENTPLANE_WITNESS_URL, keyFile: values.AGENTPLANE_WITNESS_KEY_FILE!, child };
}

/** Rewrites record `seq`'s body and re-links every later hash, as a forger with the file would. */
function rewriteRecord(dataDir: string, seq: number): void {
  const db = new Database(journalPath(dataDir));
  db.exec('DROP TRIGGER records_append_only_update; DROP TRIGGER records_append_only_delete; DROP TRIGGER records_chain;');
  const rows = db.prepare('SELECT * FROM records ORDER BY seq').all() as RecordRow[];
  let prev = rows[seq - 2]!.hash;
  const next = rows.map((row) => {
    if (row.seq < seq) return row;
    const body = row.seq === seq ? row.body.replace('"echo"', '"evil"') : row.body;
    const fields = { seq: row.seq, runId: row.run_id, kind: row.kind, v: row.v, time: row.time, prevHash: prev };
    const hash = sha256HexOf(recordPreimageFromBodyText(fields, body));
    prev = hash;
    return { ...row, body, prev_hash: prev === hash ? fields.prevHash : prev, hash };
  });
  expect(next[seq - 1]!.body).not.toBe(rows[seq - 1]!.body);
  db.transaction(() => {
    db.exec('DELETE FROM records');
    const insert = db.prepare('INSERT INTO records (seq, run_id, kind, v, time, body, prev_hash, hash) VALUES (@seq, @run_id, @kind, @v, @time, @body, @prev_hash, @hash)');
    for (const row of next) insert.run(row);
  })();
  db.close();
}

describe("a plane's journal and its witness", () => {
  it('submits its checkpoints to a witness process; a journal rewritten and re-signed with its own key fails verify --witness-key', async () => {
    const dataDir = tempDataDir();
    let journal = await Journal.open({ dataDir, checkpointEvery: 12 });
    // Started as the issue's reader would: no --log-key; the plane introduces its key with its first checkpoint.
    const witness = await childWitness(tempDataDir('ap-witness-'));
    const submitter = new WitnessSubmitter(journal, witness.url);
    for (const run of ['run-1', 'run-2', 'run-3']) {
      await journal.appendBatch(runDrafts(run, 5));
      await submitter.idle();
    }
    await journal.checkpoint();
    await submitter.idle();
    expect(submitter.status()).toMatchObject({ cosigned: { size: 36 }, lastError: null });
    const bundle = join(tempDataDir('ap-witness-bundle-'), 'journal.jsonl');
    await exportBundle(journal, { kind: 'full' }, bundle);
    await submitter.close();
    await journal.close();

    const honest = await journalCli('verify', '--data-dir', dataDir, '--witness-key', witness.keyFile);
    expect(honest.error).toBeNull();
    expect(honest.lines[1]).toMatch(/^WITNESS agentplane-witness\/[0-9a-f]{16} cosigned tree size 36 at /);
    expect(honest.code).toBe(0);
    const honestBundle = await journalCli('verify', bundle, '--witness-key', witness.keyFile);
    expect(honestBundle.code).toBe(0);
    expect(honestBundle.lines[1]).toMatch(/cosigned tree size 36/);

    // The forger: rewrite record 20, re-link every later hash, drop the old checkpoints and let
    // the plane's own key sign the new head (what opening the data dir for writing does).
    rewriteRecord(dataDir, 20);
    rmSync(join(dataDir, 'checkpoints', 'checkpoints.jsonl'));
    journal = await Journal.open({ dataDir, checkpointEvery: 12 });
    // Submitted to the witness, with the plane's own key, the rewritten history is refused: it is
    // not an extension of the tree the witness cosigned.
    const forged = new WitnessSubmitter(journal, witness.url);
    await journal.appendBatch(runDrafts('run-4', 5));
    await journal.checkpoint();
    await forged.idle();
    expect(forged.status().lastError).toMatch(/\(422: the checkpoint at size 48 is not an extension of the one cosigned at size 36/);
    expect(forged.status().cosigned).toMatchObject({ size: 36 });
    await forged.close();
    await journal.close();

    const own = await journalCli('verify', '--data-dir', dataDir);
    expect(own).toMatchObject({ code: 0 });
    expect(own.lines[0]).toMatch(/^OK 48 records/);
    const witnessed = await journalCli('verify', '--data-dir', dataDir, '--witness-key', witness.keyFile);
    expect(witnessed.code).toBe(1);
    expect(witnessed.lines[0]).toMatch(/^FAIL witness check: witness agentplane-witness\/[0-9a-f]{16} cosigned root [0-9a-f]{64} at tree size 36, but the records give root [0-9a-f]{64}: the journal was rewritten after the witness saw it$/);

    // A key file that is not a witness key is named as such, before anything is verified.
    const notAKey = join(tempDataDir('ap-witness-key-'), 'plane.vkey');
    writeFileSync(notAKey, `${planeLogKey(journal)}\n`);
    expect((await journalCli('verify', '--data-dir', dataDir, '--witness-key', notAKey)).error).toMatch(/plane\.vkey is not a witness key: the verifier key's type is 0x01, expected 0x04$/);
    writeFileSync(notAKey, 'garbage\n');
    expect((await journalCli('verify', '--data-dir', dataDir, '--witness-key', notAKey)).error).toMatch(/is not a witness key: a verifier key is <name>\+<hex key ID>\+<base64 key>/);

    // Without the cosignatures nothing outside the plane vouches for it: that fails too.
    rmSync(join(dataDir, 'checkpoints', 'cosignatures.jsonl'));
    const bare = await journalCli('verify', '--data-dir', dataDir, '--witness-key', witness.keyFile);
    expect(bare.lines[0]).toMatch(/^FAIL witness check: no cosignature by witness/);
  }, 60_000);

  it('goes on appending while its witness is down, and catches up when it returns', async () => {
    const witnessDir = tempDataDir('ap-witness-');
    const dataDir = tempDataDir();
    const journal = await Journal.open({ dataDir, checkpointEvery: 10 });
    cleanups.push(() => journal.close());
    const first = await startWitness({ dataDir: witnessDir, logKeys: [planeLogKey(journal)] });
    const port = Number(new URL(first.url).port);
    await first.close();
    const logged: string[] = [];
    const submitter = new WitnessSubmitter(journal, first.url, (_level, message) => logged.push(message), 20);
    cleanups.push(() => submitter.close());
    for (const run of ['run-1', 'run-2']) await journal.appendBatch(runDrafts(run, 5));
    await submitter.idle();
    expect(journal.size).toBe(24);
    expect(submitter.status().cosigned).toBeNull();
    expect(submitter.status().lastError).toMatch(/^the witness at http:\/\/127\.0\.0\.1:\d+ is unreachable/);
    expect(logged).toHaveLength(1);

    const again = await startWitness({ dataDir: witnessDir, port });
    cleanups.push(() => again.close());
    await vi.waitFor(() => expect(submitter.status()).toMatchObject({ cosigned: { size: 24 }, lastError: null }), { timeout: 10_000, interval: 20 });
    await journal.appendBatch(runDrafts('run-3', 5));
    await submitter.idle();
    expect(submitter.status().cosigned?.size).toBe(36);
  });
});
