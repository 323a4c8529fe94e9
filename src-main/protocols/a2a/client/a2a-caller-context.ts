/**
 * The caller-context extension this plane's client declares on every message it sends
 * (docs/GOVERNED-RUNTIME.md, "A2A, being called"): the URI in the message's `extensions` and in
 * the `A2A-Extensions` request header, and under the same URI in the message's metadata the
 * sender's own account of its request, `{caller: {runId, agent, step}}`. Declared rather than
 * put in a free-form field, so a peer that does not know it still receives a well-formed message.
 *
 * What is under `caller` is the sender's word, not authority: a receiver may log it and must not
 * authorize on it. The delegation chain is not sent (the peer derives its own from the
 * credential), nor anything secret.
 */
import type { EffectAt } from '../../../runtime/run-context';

export const CALLER_CONTEXT_EXTENSION = 'https://agentplane.io/a2a/ext/caller-context/v1';
/** The request header naming the extensions a request uses (A2A 1.0, "Extensions"). */
export const EXTENSIONS_HEADER = 'a2a-extensions';

export interface CallerContext {
  caller: { runId: string; agent: string; step: number };
}

/** The metadata entry and the extension list for a message sent by `agent`'s run at `at`. */
export function callerContextOf(at: EffectAt, agent: string): { extensions: string[]; metadata: Record<string, CallerContext> } {
  return { extensions: [CALLER_CONTEXT_EXTENSION], metadata: { [CALLER_CONTEXT_EXTENSION]: { caller: { runId: at.runId, agent, step: at.step } } } };
}
