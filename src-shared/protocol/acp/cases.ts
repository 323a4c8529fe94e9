/**
 * Cases (matters) and the audit of observed runs (docs/GOVERNED-RUNTIME.md, "Observing an agent
 * you do not run"). A case is a name a person gives a matter; binding an observed ACP session to
 * it is a journaled CaseBound record naming the session and every run that observed it, found
 * by the session id through one indexed read. The audit lists observed runs as `unadmitted`:
 * nothing here admitted them, so nothing the plane's policy says covers what they did.
 */
import { z } from 'zod';
import { deferred } from '../../deferred-schema';

/** A case id: what a person calls the matter (a ticket, a matter number), 1 to 128 characters of letters, digits and `._:-`. */
export const CaseIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'a case id is 1 to 128 letters, digits, ".", "_", ":" or "-", starting with a letter or digit');

/** One binding, as `cases bind` answers and `cases show` lists it. */
export const CaseBindingSchema = deferred(() => z.object({
  caseId: z.string(),
  sessionId: z.string(),
  /** The observed runs of the session when it was bound. */
  runIds: z.array(z.string()),
  by: z.string(),
  note: z.string().optional(),
  /** The CaseBound record's seq and time. */
  seq: z.number().int().positive(),
  at: z.string(),
}));
export type CaseBinding = z.infer<typeof CaseBindingSchema>;

export const CaseRowSchema = deferred(() => z.object({
  caseId: z.string(),
  /** Distinct sessions bound to it. */
  sessions: z.number().int().nonnegative(),
  bindings: z.number().int().nonnegative(),
  lastSeq: z.number().int().positive(),
  lastAt: z.string(),
}));
export type CaseRow = z.infer<typeof CaseRowSchema>;

/** The admission an observed run lacks: the only word the audit uses for it. */
export const UNADMITTED = 'unadmitted' as const;

export const AuditSchema = deferred(() => z.object({
  admitted: z.object({ runs: z.number().int().nonnegative(), sealed: z.number().int().nonnegative() }),
  unadmitted: z.array(
    z.object({
      runId: z.string(),
      sessionId: z.string(),
      admission: z.literal(UNADMITTED),
      sealed: z.boolean(),
      records: z.number().int().nonnegative(),
      firstSeq: z.number().int().positive(),
      lastSeq: z.number().int().positive(),
      cases: z.array(z.string()),
    }),
  ),
  /** The newest `limit` runs were read: counts cover those. */
  limit: z.number().int().positive(),
}));
export type Audit = z.infer<typeof AuditSchema>;
