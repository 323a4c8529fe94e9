/**
 * The wire shapes of `a2a.remotes` (src-main/plane/a2a-client-handlers.ts): the remote A2A
 * agents this plane's runs called, read from the journal's `a2a` effects (never kept beside the
 * journal), each with its card's verification state from the pins file and its tasks.
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';
import { DispositionSchema } from '../vocabulary/effects';

/** How many of the newest runs `a2a.remotes` reads by default, and at most. */
export const A2A_REMOTES_DEFAULT_RUNS = 200;
export const A2A_REMOTES_MAX_RUNS = 1000;

/**
 * A card's standing: `verified` (signed, its key pinned for its origin), `key-changed` (a
 * different key was seen and refused; a person may accept it), `unsigned` (a card was read, it
 * carried no signature, and the origin has no pin), `unknown` (no call got as far as reading a
 * card, so nothing is known of its signature).
 */
export const A2aVerificationSchema = z.enum(['verified', 'key-changed', 'unsigned', 'unknown']);
export type A2aVerification = z.infer<typeof A2aVerificationSchema>;

export const A2aRemoteTaskSchema = deferred(() => z.object({
  /** The remote task's id; absent when the call failed before a task existed, or the peer answered with a message. */
  taskId: z.string().optional(),
  /**
   * `completed` (the effect's answer was recorded), `failed` (with the effect's error and
   * disposition), `in-progress` (its run is still going and no answer is recorded yet), `unanswered`
   * (its run ended with no answer recorded for this call).
   */
  state: z.enum(['completed', 'failed', 'in-progress', 'unanswered']),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  disposition: DispositionSchema.optional(),
  skill: z.string().optional(),
  runId: z.string(),
  step: z.number().int(),
  agent: z.string(),
  /** When the effect started (the EffectStarted record's time). */
  at: z.string(),
}));
export type A2aRemoteTask = z.infer<typeof A2aRemoteTaskSchema>;

export const A2aRemoteSchema = deferred(() => z.object({
  /** The card URL, exactly as granted. */
  card: z.string(),
  origin: z.string(),
  /** From the last card seen, when a call recorded it. */
  name: z.string().optional(),
  description: z.string().optional(),
  verification: A2aVerificationSchema,
  /** The pinned key's id (never the key), and a changed key waiting for a person. */
  keyId: z.string().optional(),
  pendingKeyId: z.string().optional(),
  /** Newest first. */
  tasks: z.array(A2aRemoteTaskSchema),
}));
export type A2aRemote = z.infer<typeof A2aRemoteSchema>;

export const A2aRemotesRequestSchema = deferred(() => z.object({ limit: z.number().int().min(1).max(A2A_REMOTES_MAX_RUNS).optional() }).strict());
export const A2aRemotesSchema = deferred(() => z.object({ remotes: z.array(A2aRemoteSchema) }));
export type A2aRemotes = z.infer<typeof A2aRemotesSchema>;
