/**
 * A run's state as every view reports it: where it is (`status`) and, once sealed, how it
 * ended (`outcome`).
 */
import { z } from 'zod';

/** `running`, waiting for a person (`suspended`), or ended for good (`sealed`). */
export const RunStatusSchema = z.enum(['running', 'suspended', 'sealed']);
export type RunStatus = z.infer<typeof RunStatusSchema>;

/** How a sealed run ended; `observed` is a session the plane watched rather than ran (ACP). */
export const RunOutcomeSchema = z.enum(['succeeded', 'failed', 'cancelled', 'denied', 'halted', 'observed']);
export type RunOutcome = z.infer<typeof RunOutcomeSchema>;
