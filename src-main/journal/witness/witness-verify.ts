/**
 * `journal verify --witness-key`: the records must agree with what an outside witness
 * cosigned (docs/WITNESS.md). The plane's own checkpoints prove nothing against the plane
 * itself: one that rewrites its records can recompute every hash and sign new checkpoints with
 * its own key. A witness's cosignature over (origin, size, root) was made when the witness saw
 * the log, with a key the plane does not hold, so records rewritten or removed afterwards no
 * longer give that root at that size.
 *
 * What is checked, after the ordinary verification passed: every cosignature by the given
 * witness key on this journal's origin verifies (one that names the key and fails is a failure,
 * as the signed-note format asks); at least one exists; the largest cosigned size is not beyond
 * the records (a truncated journal); and the Merkle root of the first `size` records equals the
 * cosigned root. Records after that size are reported as vouched for by the plane alone.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fromHex, toHex } from '../hex';
import { leafHash, MerkleAccumulator } from '../merkle';
import { journalStoreOf, type Journal } from '../journal';
import { CHECKPOINT_LINE, parseRecordLine, type BundleHeader } from '../bundle-format';
import { logOriginOf, readCosignatureFile, type CosignatureEntry } from './cosignature-log';
import { checkCosignature, COSIGNATURE_ED25519, NoteError, parseCheckpointText, parseSignatureLines, parseVerifierKey, type NoteKey } from './signed-note';

export type WitnessReport =
  | {
      ok: true;
      witness: string;
      /** The largest tree size the witness cosigned, whose root the records were checked against. */
      cosignedSize: number;
      /** When the witness cosigned it (ISO 8601, from the cosignature's timestamp). */
      cosignedAt: string;
      /** Records after it: vouched for only by the plane's own signature. */
      beyond: number;
    }
  | { ok: false; reason: string };

/** Reads a witness verifier key file (`witness.vkey`); an error names what is wrong with it. */
export function readWitnessKey(text: string, file: string): NoteKey {
  try {
    return parseVerifierKey(text, COSIGNATURE_ED25519);
  } catch (error) {
    throw new NoteError(`${file} is not a witness key: ${(error as Error).message}`);
  }
}

/** The largest valid cosignature by `key` on `origin`, or the failure of one that names the key and does not verify. */
export function largestCosigned(key: NoteKey, origin: string, entries: readonly CosignatureEntry[]): { size: number; root: Buffer; time: number } | { reason: string } | null {
  let best: { size: number; root: Buffer; time: number } | null = null;
  for (const entry of entries) {
    let text;
    let signatures;
    try {
      text = parseCheckpointText(entry.checkpoint);
      signatures = parseSignatureLines(entry.cosignatures);
    } catch {
      continue; // Not a cosignature at all: it vouches for nothing and names no key.
    }
    if (text.origin !== origin) continue;
    for (const sig of signatures) {
      const check = checkCosignature(key, entry.checkpoint, sig);
      if (check.ok === null) continue;
      if (!check.ok) return { reason: `the cosignature at tree size ${text.size}: ${check.reason}` };
      if (!best || text.size > best.size) best = { size: text.size, root: text.root, time: check.time };
    }
  }
  return best;
}

/**
 * Holds `records` (how many the ordinary verification found chained and hashed) to the
 * witness's largest cosignature, with `rootAt(size)` the Merkle root of the first `size` records.
 */
export async function checkAgainstWitness(
  key: NoteKey,
  journalId: string,
  entries: readonly CosignatureEntry[],
  records: number,
  rootAt: (size: number) => Promise<Uint8Array>,
): Promise<WitnessReport> {
  const best = largestCosigned(key, logOriginOf(journalId), entries);
  if (best === null) return { ok: false, reason: `no cosignature by witness ${key.name} on this journal (origin ${logOriginOf(journalId)}): nothing outside the plane vouches for its records` };
  if ('reason' in best) return { ok: false, reason: best.reason };
  if (best.size > records) {
    return { ok: false, reason: `witness ${key.name} cosigned tree size ${best.size}, but only ${records} records are here: records the witness saw were removed` };
  }
  const root = Buffer.from(await rootAt(best.size));
  if (!root.equals(best.root)) {
    return {
      ok: false,
      reason: `witness ${key.name} cosigned root ${toHex(best.root)} at tree size ${best.size}, but the records give root ${toHex(root)}: the journal was rewritten after the witness saw it`,
    };
  }
  return { ok: true, witness: key.name, cosignedSize: best.size, cosignedAt: new Date(best.time * 1000).toISOString(), beyond: records - best.size };
}

/** The witness check of a data dir's journal, read through its own store. */
export async function witnessCheckOfJournal(journal: Journal, key: NoteKey, records: number): Promise<WitnessReport> {
  const entries = readCosignatureFile(join(journal.dataDir, 'checkpoints', 'cosignatures.jsonl'));
  const store = journalStoreOf(journal);
  return checkAgainstWitness(key, journal.journalId, entries, records, async (size) => {
    const tree = new MerkleAccumulator();
    for (let from = 1; from <= size; from += 10_000) {
      for (const hex of await store.readHashes(from, Math.min(size, from + 9_999))) tree.append(leafHash(fromHex(hex)));
    }
    return tree.root();
  });
}

/** The witness check of a full bundle: its header's cosignatures against its record lines' hashes. */
export async function witnessCheckOfBundle(file: string, header: BundleHeader, key: NoteKey, records: number): Promise<WitnessReport> {
  if (header.scope.kind !== 'full') {
    return { ok: false, reason: `a ${header.scope.kind} bundle cannot be checked against a witness yet: its records prove inclusion in the export's own checkpoint, which no witness had cosigned when it was written; export the whole journal` };
  }
  return checkAgainstWitness(key, header.journalId, header.cosignatures ?? [], records, async (size) => {
    const tree = new MerkleAccumulator();
    const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity });
    let first = true;
    for await (const line of lines) {
      if (first) {
        first = false;
        continue;
      }
      if (tree.size >= size) break;
      if (line.startsWith(CHECKPOINT_LINE) || line.length === 0) continue;
      tree.append(leafHash(fromHex(parseRecordLine(line).hash)));
    }
    return tree.root();
  });
}
