/**
 * The outside witness's state as the plane knows it (`witness.status`; docs/WITNESS.md): where
 * its checkpoints are submitted, the newest one the witness cosigned, and the last failure.
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';

export const WitnessStatusSchema = deferred(() =>
  z.object({
    /** Whether this plane submits its checkpoints to a witness (`--witness`, AGENTPLANE_WITNESS_URL). */
    configured: z.boolean(),
    /** The witness's scheme, host and port (never a path or credential). */
    url: z.string().nullable(),
    /** The newest checkpoint the witness cosigned: its tree size, when it was received, the witness's key name. */
    cosigned: z.object({ size: z.number().int().nonnegative(), time: z.string(), witness: z.string() }).nullable(),
    /** The size of the journal's newest signed checkpoint. */
    checkpointSize: z.number().int().nonnegative(),
    /** The last submission failure, until one succeeds. */
    lastError: z.string().nullable(),
  }),
);
export type WitnessStatusView = z.infer<typeof WitnessStatusSchema>;
