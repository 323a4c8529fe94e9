/**
 * What a legal hold stands on (docs/ERASURE.md): a subject (a principal) or a case. Written in
 * HoldPlaced and HoldLifted records and in the holds commands.
 */
import { z } from 'zod';

export const HoldTargetKindSchema = z.enum(['subject', 'case']);
export type HoldTargetKind = z.infer<typeof HoldTargetKindSchema>;
