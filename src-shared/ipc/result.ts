/**
 * The envelope every command answer travels in, on both transports. Plain JSON only:
 * `{ok: true, value}` or `{ok: false, error: {code, message}}`.
 */
import { z } from 'zod';
import { ErrorBodySchema, type ErrorBody } from './errors';

export type Result<T> = { ok: true; value: T } | { ok: false; error: ErrorBody };

export const FailureSchema = z.object({ ok: z.literal(false), error: ErrorBodySchema });

export function resultSchemaOf<T extends z.ZodType>(value: T) {
  return z.discriminatedUnion('ok', [z.object({ ok: z.literal(true), value }), FailureSchema]);
}
