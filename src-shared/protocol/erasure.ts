/**
 * Crypto-erasure, legal holds and retention (docs/ERASURE.md): the plane commands' shapes. A
 * subject is a principal (a run's owner); its payloads are sealed under its data keys, and
 * erasing it destroys them, so every payload sealed under them reads as erased while every hash,
 * checkpoint and export stays valid. A hold (on a subject, or a case) refuses erasure, by a
 * person or by retention, until it is lifted.
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';
import { HoldTargetKindSchema } from '../vocabulary/holds';
import { CaseIdSchema } from './acp/cases';

/** A subject: a principal as a run's admission names its owner (`user:alice`, `peer:beta`, …). */
export const SubjectIdSchema = z.string().trim().min(1, 'a subject id (a run owner, e.g. user:alice)').max(256, 'a subject id is at most 256 characters');
/** Why a person erases, holds or lifts: kept in the journal. */
export const ErasureReasonSchema = z.string().max(500, 'a reason is at most 500 characters');
/** Retention in days: payloads are erased once the month they were written in ended this long ago. */
export const RetentionDaysSchema = z.number().int('retention is a whole number of days').min(1, 'retention is at least 1 day').max(36_500, 'retention is at most 36500 days (100 years)');


export const HoldSchema = deferred(() => z.object({
  holdId: z.string(),
  target: z.object({ kind: HoldTargetKindSchema, id: z.string() }),
  by: z.string(),
  reason: z.string().optional(),
  /** The HoldPlaced record's time and seq. */
  at: z.string(),
  seq: z.number().int().positive(),
}));
export type HoldView = z.infer<typeof HoldSchema>;

/** One erasure: the subject, the keys destroyed (each with the month it served), and its SubjectErased record. */
export const ErasureSchema = deferred(() => z.object({
  subject: z.string(),
  keys: z.array(z.object({ key: z.string(), period: z.string() })),
  by: z.string(),
  reason: z.string(),
  at: z.string(),
  seq: z.number().int().positive(),
}));
export type ErasureView = z.infer<typeof ErasureSchema>;

export const ErasureSettingsSchema = deferred(() => z.object({
  /** Whether new payloads are sealed under their subject's key (only sealed payloads can be erased). */
  sealPayloads: z.boolean(),
  retentionDays: z.number().int().positive().nullable(),
}));

/** What a retention pass did: the subjects whose old keys it destroyed, and the keys a hold kept. */
export const RetentionPassSchema = deferred(() => z.object({
  days: z.number().int().positive().nullable(),
  erased: z.array(ErasureSchema),
  held: z.array(z.object({ subject: z.string(), period: z.string(), holdId: z.string() })),
}));
export type RetentionPass = z.infer<typeof RetentionPassSchema>;

/** A hold's target: exactly one of a subject or a case. */
export const HoldTargetRequestSchema = z
  .object({ subject: SubjectIdSchema.optional(), caseId: CaseIdSchema.optional() })
  .strict()
  .refine((t) => (t.subject === undefined) !== (t.caseId === undefined), { message: 'name exactly one of subject or caseId' });

