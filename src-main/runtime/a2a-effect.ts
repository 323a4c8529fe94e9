/**
 * A run calling a remote A2A 1.0 agent: `callA2a`, ONE governed effect (effect kind `a2a`) that
 * sends the message and follows the remote task until it ends. Journaled once, replayed from
 * the record and never performed twice, granted, budgeted, approved when the grant says so.
 *
 * - Authority: the grant is `a2a:<card URL>`, exactly, from the operator's manifest. A card is a
 *   description and never a grant: what a card says about itself (skills, interfaces, security)
 *   cannot widen what this run may send, so a forged card's worst is a wasted request.
 * - Reaching the agent (fetching and verifying the card, the pinned key, choosing the interface,
 *   the wire, netguard, what a failure on it means) is behind `A2aCaller`, an interface this
 *   layer owns and protocols/a2a/client implements: the runtime never imports the SDK or undici.
 * - Disposition ("did the peer act?" is not a detail for long-running, stateful tasks):
 *   refused before anything was sent (card fetch failed, signature refused, a changed key,
 *   netguard refused the address, a clean JSON-RPC refusal) → DidNotHappen; the send left and no
 *   answer came, or the answer was -32603 / -32006 (both can be raised after a peer started
 *   work) → InDoubt, for a person to resolve like any in-doubt effect; a remote task that ended
 *   failed, rejected or canceled → Landed (the peer created it and reported its outcome, so
 *   nothing is left to discover). Following a task that was created and then losing it is
 *   InDoubt too: the task exists, its outcome is unknown.
 * - Cancellation: a run cancelled while its effect follows a remote task asks the peer to cancel
 *   it (CancelTask), best effort, so the peer does not keep spending on an answer nobody reads.
 *   The effect is then recorded as a Landed failure naming the task and what the cancel got, and
 *   the run is sealed cancelled (replay reads the same record and never calls again).
 * - What comes back is labelled `a2a:<origin>`: untrusted.
 */
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import type { EffectAt, RunContext } from './run-context';
import { EffectFailure, RunCancelled } from './run-signals';

/** What is sent: a text part (a string) or a data part (an object, as is). */
export type A2aMessageInput = string | Record<string, unknown>;

export interface A2aSendRequest {
  /** The card's URL, exactly as granted. */
  card: string;
  /** The capability, written to message.metadata.skill (never inferred from prose by the peer). */
  skill?: string;
  message: A2aMessageInput;
}

/** How a remote call ended well: its task (absent when the peer answered with a message) and values. */
export interface A2aAnswer {
  /** The remote task's id; absent when the peer answered with a message and made no task. */
  taskId?: string;
  /** The artifacts, each part as a value: a data part its object, a text part its string. */
  artifacts: { artifactId: string; name?: string; parts: unknown[] }[];
  /** The one value when there is exactly one part in all, else every part's value in order. */
  value: unknown;
  /**
   * Whether the card was signed and verified, and under which key (never the key material); the
   * card's own name and description, shortened, so the plane's list of remote agents can say
   * what each one called itself without fetching its card again (a2a.remotes).
   */
  card: { verified: boolean; keyId?: string; name?: string; description?: string };
}

/**
 * How runs reach remote A2A agents. Implemented in protocols/a2a/client, wired in plane/.
 * Every failure is an `EffectFailure` whose disposition follows the rules above.
 */
export interface A2aCaller {
  /** Where a call goes, for the effect's key: the card URL's origin. */
  destinationOf(card: string): string;
  /**
   * Sends and follows until the remote task ends (streaming or polling, as the card allows).
   * `signal` aborts the follow when the run is cancelled: the caller then sends CancelTask (best
   * effort) and fails with code `RemoteTaskCancelled` (Landed), naming what the cancel got.
   */
  call(request: A2aSendRequest, at: EffectAt, signal: AbortSignal): Promise<A2aAnswer>;
}

/** How often a following effect looks whether its run was cancelled, ms. */
const CANCEL_POLL_MS = 100;

export async function callA2a(cx: RunContext, caller: A2aCaller, request: A2aSendRequest): Promise<A2aAnswer> {
  const { card, skill, message } = request;
  try {
    return (await cx.effect({
      effect: 'a2a',
      name: skill ?? 'message',
      request: { card, ...(skill !== undefined ? { skill } : {}), message },
      destination: caller.destinationOf(card),
      grant: `a2a:${card}`,
      estimate: { ...NO_SPEND, effects: 1 },
      async perform(at) {
        // The run's cancel is noticed here, between the far side's events: it aborts the follow,
        // and the caller turns that into a CancelTask on the peer.
        const abort = new AbortController();
        const watch = setInterval(() => {
          if (cx.cancelRequested()) abort.abort(new RunCancelled('cancelled'));
        }, CANCEL_POLL_MS);
        try {
          const answer = await caller.call({ card, ...(skill !== undefined ? { skill } : {}), message }, at, abort.signal);
          return { result: answer, spend: { ...NO_SPEND, effects: 1 }, provenance: `a2a:${caller.destinationOf(card)}` };
        } finally {
          clearInterval(watch);
        }
      },
    })) as A2aAnswer;
  } catch (error) {
    // The effect recorded what the cancel did; the run itself ends cancelled, not failed.
    if (error instanceof EffectFailure && error.code === 'RemoteTaskCancelled' && cx.cancelRequested()) throw new RunCancelled('cancelled');
    throw error;
  }
}
