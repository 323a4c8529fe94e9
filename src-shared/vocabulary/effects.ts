/**
 * Effects: what a run does to the outside world, and what is known of one that failed.
 */
import { z } from 'zod';

/**
 * Every kind of effect a run may perform (the journal's EffectStarted names one). `agent` is
 * another agent of the plane called as a model's tool: a child run in the delegation chain
 * (runtime/agent-effect.ts).
 */
export const EffectKindSchema = z.enum(['model', 'tool', 'peer', 'mcp', 'a2a', 'file', 'payment', 'clock', 'random', 'wait', 'agent']);
export type EffectKind = z.infer<typeof EffectKindSchema>;

/** The effects that are another agent's run (here, at a peer, or over A2A), whose own waits its caller inherits. */
export const DELEGATING_EFFECTS: readonly EffectKind[] = EffectKindSchema.extract(['agent', 'peer', 'a2a']).options;

/** The effects that reach the world outside the plane: a fork asks before performing one its parent performed. */
export const OUTSIDE_EFFECTS: readonly EffectKind[] = EffectKindSchema.extract(['payment', 'peer', 'mcp', 'a2a']).options;

/**
 * What a failed effect did on the far side: `DidNotHappen` (safe to retry, costs nothing),
 * `Landed` (it happened; don't repeat it), `InDoubt` (unknown; a person decides in recovery).
 * A model stream that died mid-generation is Landed and billed for what it burned.
 */
export const DispositionSchema = z.enum(['DidNotHappen', 'Landed', 'InDoubt']);
export type Disposition = z.infer<typeof DispositionSchema>;
