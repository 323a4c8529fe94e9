/**
 * A journal record's envelope (seq, runId, kind, v, time, body, prevHash, hash), apart from the
 * body schemas of records.ts: what a reader of any record checks before it knows the kind, and
 * all the page's contract needs (its RecordView is this envelope). Kept in its own module so the
 * page's first load does not carry every kind's body schema (docs/PERFORMANCE.md, the renderer's
 * initial JavaScript budget).
 */
import { z } from 'zod';

export const HASH_HEX = /^[0-9a-f]{64}$/;
export const HashHexSchema = z.string().regex(HASH_HEX, 'a SHA-256 hash as 64 lowercase hex digits');

export const JournalRecordSchema = z.object({
  seq: z.number().int().positive(),
  runId: z.string().nullable(),
  kind: z.string().regex(/^[A-Z][A-Za-z0-9]*$/, 'a PascalCase record kind'),
  v: z.number().int().positive(),
  time: z.string().min(1),
  body: z.record(z.string(), z.unknown()),
  prevHash: HashHexSchema,
  hash: HashHexSchema,
});
export type JournalRecord = z.infer<typeof JournalRecordSchema>;
