/**
 * Export: a journal's records, or one run's, or a seq range, written as a bundle
 * (bundle-format.ts).
 *
 * Export first issues a checkpoint over the current head, then writes only records that
 * checkpoint covers, and always writes that checkpoint: a bundle is always fully anchored, even
 * while other writers append. That is what lets a verifier refuse every record no signed
 * checkpoint covers (see verify.ts): a genuine bundle never has one. It is written to a
 * temporary file and renamed, so a failed export leaves no half bundle behind.
 */
import { closeSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { BUNDLE_FORMAT, recordLine, type BundleHeader, type ExportPlan, type ExportResult } from './bundle-format';
import { BundleError } from './bundle-error';
import { peekCheckpoint } from './checkpoints';
import { fromHex } from './hex';
import { journalStoreOf, type Journal } from './journal';
import type { JournalReads, StoredRecord } from './journal-store';
import { Keyring, readKeyringRecords } from './keyring';
import { MerkleLevels } from './merkle-levels';
import { leafHash } from './merkle';
import { readCosignatureFile, type CosignatureEntry } from './witness/cosignature-log';
import type { VerifyScope } from './verify';

export type ExportProgress = (written: number, total: number) => void;

/** Signs the anchor and checks the scope against it; the first half of `exportBundle`. */
export async function planExport(journal: Journal, scope: VerifyScope): Promise<ExportPlan> {
  const anchor = await journal.checkpoint();
  const treeSize = anchor.checkpoint.treeSize;
  if (scope.kind === 'range') {
    if (scope.fromSeq > scope.toSeq) throw new BundleError(`--from ${scope.fromSeq} is after --to ${scope.toSeq}`);
    if (scope.toSeq > treeSize) throw new BundleError(`--to ${scope.toSeq} is beyond the journal's last record (seq ${treeSize})`);
  }
  // The anchor (signed above, over exactly the records written) is carried whatever the log
  // holds: it is the signature that covers the bundle's last record.
  const own = journal.checkpoints.readAll().filter((jws) => {
    const c = peekCheckpoint(jws);
    return jws !== anchor.jws && c !== null && c.journalId === journal.journalId && c.keyId === journal.key.keyId && c.treeSize <= treeSize;
  });
  const checkpoints = scope.kind === 'full' ? [...own, ...(await keyringCheckpoints(journal, treeSize, new Set([...own, anchor.jws]))), anchor.jws] : [anchor.jws];
  return {
    scope,
    journalId: journal.journalId,
    publicKey: journal.key.publicJwk as Record<string, unknown>,
    keyId: journal.key.keyId,
    treeSize,
    rootHash: anchor.checkpoint.rootHash,
    checkpoints,
    ...(scope.kind === 'full' ? { cosignatures: cosignaturesUpTo(journal, treeSize) } : {}),
  };
}

/**
 * The witnesses' cosignatures (docs/WITNESS.md) the bundle carries: per witness, the newest
 * whose checkpoint the bundle's records reach. One per witness is enough: the witness checked
 * each one extends the one before, and the header stays small (a header past 1 MiB would send a
 * large bundle's verification to the single-thread path, bundle-verify.ts).
 */
function cosignaturesUpTo(journal: Journal, treeSize: number): CosignatureEntry[] {
  const newest = new Map<string, { size: number; entry: CosignatureEntry }>();
  for (const entry of readCosignatureFile(join(journal.dataDir, 'checkpoints', 'cosignatures.jsonl'))) {
    const size = Number(entry.checkpoint.split('\n')[1]);
    if (!Number.isSafeInteger(size) || size > treeSize) continue;
    const witness = `${entry.witness ?? ''} ${entry.cosignatures.split(' ')[1] ?? ''}`;
    if ((newest.get(witness)?.size ?? -1) < size) newest.set(witness, { size, entry });
  }
  return [...newest.values()].map((n) => n.entry);
}

/**
 * The checkpoints other instances of a team plane published over this journal up to `treeSize`
 * (a shared store's; none on SQLite), each by a key the journal's keyring admits and had not
 * retired at that size: what a full bundle carries besides its exporter's own, and what its
 * verifier checks against the same keyring (keyring.ts). Refused when the exporter's own key is
 * retired, since the anchor it signs would be.
 */
async function keyringCheckpoints(journal: Journal, treeSize: number, carried: ReadonlySet<string>): Promise<string[]> {
  const store = journalStoreOf(journal);
  if (!store.readCheckpoints) return [];
  const folded = await Keyring.fold(await readKeyringRecords(store, treeSize));
  if ('failed' in folded) throw new BundleError(`the journal's keyring does not read (seq ${folded.failed.seq}: ${folded.failed.reason})`);
  const { keyring } = folded;
  if (keyring.empty) return [];
  const refused = keyring.refusal(journal.key.keyId, treeSize);
  if (refused) throw new BundleError(`this data dir's key cannot anchor a bundle of this journal: ${refused}`);
  return (await store.readCheckpoints()).filter((jws) => {
    const c = peekCheckpoint(jws);
    return !carried.has(jws) && c !== null && c.journalId === journal.journalId && c.treeSize <= treeSize && keyring.refusal(c.keyId, c.treeSize) === null;
  });
}

/**
 * Writes the bundle a plan describes, reading the records through `reads` (the journal's own
 * store, or a worker's read-only connection); the second half of `exportBundle`.
 */
export async function writeBundle(reads: JournalReads, plan: ExportPlan, file: string, onProgress?: ExportProgress): Promise<ExportResult> {
  const { scope, treeSize } = plan;
  let seqs: number[] | null = null;
  if (scope.kind === 'run') {
    seqs = (await reads.runSeqs(scope.runId)).filter((s) => s <= treeSize);
    if (seqs.length === 0) throw new BundleError(`no run ${scope.runId} in this journal`);
  }
  const total = scope.kind === 'full' ? treeSize : scope.kind === 'range' ? scope.toSeq - scope.fromSeq + 1 : seqs!.length;
  const levels = scope.kind === 'full' ? null : new MerkleLevels((await reads.readHashes(1, treeSize)).map((h) => leafHash(fromHex(h))));

  const header: BundleHeader = {
    format: BUNDLE_FORMAT,
    version: 1,
    journalId: plan.journalId,
    scope,
    publicKey: plan.publicKey,
    keyId: plan.keyId,
    createdAt: new Date().toISOString(),
    records: total,
    ...(plan.cosignatures && plan.cosignatures.length > 0 ? { cosignatures: plan.cosignatures } : {}),
  };
  const temporary = partialFileOf(file);
  const fd = openSync(temporary, 'w', 0o644);
  try {
    writeSync(fd, `${JSON.stringify(header)}\n`);
    let written = 0;
    const emit = (record: StoredRecord) => {
      writeSync(fd, recordLine(record, levels ? levels.inclusionProof(record.seq - 1) : null));
      written += 1;
      if (onProgress && (written % 1000 === 0 || written === total)) onProgress(written, total);
    };
    if (scope.kind === 'run') {
      for (let i = 0; i < seqs!.length; i += 500) {
        const chunk = seqs!.slice(i, i + 500);
        const rows = await reads.readRun(scope.runId, chunk[0]!, chunk.length);
        for (const row of rows) if (row.seq <= treeSize) emit(row);
      }
    } else {
      const from = scope.kind === 'range' ? scope.fromSeq : 1;
      const to = scope.kind === 'range' ? scope.toSeq : treeSize;
      for await (const row of reads.iterate(from, to)) emit(row);
    }
    for (const jws of plan.checkpoints) writeSync(fd, `${JSON.stringify({ checkpoint: jws })}\n`);
    closeSync(fd);
    renameSync(temporary, file);
    return { file, records: written, treeSize, rootHash: plan.rootHash, keyId: plan.keyId };
  } catch (error) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(temporary, { force: true });
    throw error;
  }
}

/** Where a bundle is written before it is renamed into place (removed if the export fails). */
export function partialFileOf(file: string): string {
  return `${file}.partial-${process.pid}`;
}

export async function exportBundle(journal: Journal, scope: VerifyScope, file: string, onProgress?: ExportProgress): Promise<ExportResult> {
  return writeBundle(journalStoreOf(journal), await planExport(journal, scope), file, onProgress);
}
