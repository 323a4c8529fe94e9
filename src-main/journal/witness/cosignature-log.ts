/**
 * The cosignatures a plane got from witnesses, one JSON line each, in
 * checkpoints/cosignatures.jsonl beside the checkpoint log and outside the hashed journal
 * (docs/WITNESS.md): a cosignature is evidence about the journal, not an event in it, and a
 * plane that rewrote its journal cannot make a witness's cosignature match the new records.
 * An exported bundle carries them in its header.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { appendPrivateFile } from '../../base/private-files';

export const CosignatureEntrySchema = z.object({
  /** The checkpoint text the witness cosigned (origin, size, base64 root lines). */
  checkpoint: z.string(),
  /** The witness's signature lines, each ending in a newline. */
  cosignatures: z.string(),
  /** Where it came from (scheme, host and port only) and when, for the operator. */
  witness: z.string().optional(),
  receivedAt: z.string().optional(),
});
export type CosignatureEntry = z.infer<typeof CosignatureEntrySchema>;

/** The plane's log origin for a journal (tlog-checkpoint's first line). */
export function logOriginOf(journalId: string): string {
  return `agentplane/${journalId}`;
}

export class CosignatureLog {
  readonly file: string;

  constructor(dataDir: string) {
    const dir = join(dataDir, 'checkpoints');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = join(dir, 'cosignatures.jsonl');
  }

  append(entry: CosignatureEntry): void {
    appendPrivateFile(this.file, `\n${JSON.stringify(entry)}\n`);
  }

  /** Every entry that parses, in file order (a line torn by a crash is skipped). */
  readAll(): CosignatureEntry[] {
    return readCosignatureFile(this.file);
  }
}

export function readCosignatureFile(file: string): CosignatureEntry[] {
  if (!existsSync(file)) return [];
  const out: CosignatureEntry[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const parsed = CosignatureEntrySchema.safeParse(JSON.parse(line));
      if (parsed.success) out.push(parsed.data);
    } catch {
      // A torn line after a crash mid-write: that cosignature is simply not there.
    }
  }
  return out;
}
