/**
 * A run calling a remote A2A 1.0 agent: `callA2a`. The message is sent by one governed effect
 * (effect kind `a2a`): journaled once, replayed from the record and never performed twice,
 * granted, budgeted, approved when the grant says so. When the remote answers with a task still
 * working, a second `a2a` effect (`follow:<task id>`) follows that task until it ends.
 *
 * - Why two: "did the peer act?" is decided at the send, and once the send's result (the remote
 *   task's id and the interface it lives at) is journaled, the rest is reading. Were both one
 *   effect, a plane killed while following would leave it in doubt for a person though nothing
 *   about the send is in doubt any more. The follow is `resumable` (run-context.ts) instead: the
 *   next plane performs it again, which re-attaches to the same task by its id (GetTask and
 *   SubscribeToTask are reads, safe to repeat) and completes the run without a person. Only a
 *   kill during the SendMessage itself leaves the send in doubt. The follow needs no grant or approval of its own
 *   (it reads a task the granted send created) and costs no effect. A record written before the
 *   split (one effect holding the whole answer) replays as it is.
 *
 * - Authority: the grant is `a2a:<card URL>`, exactly, from the operator's manifest. A card is a
 *   description and never a grant: what a card says about itself (skills, interfaces, security)
 *   cannot widen what this run may send, so a forged card's worst is a wasted request.
 * - Reaching the agent (fetching and verifying the card, the pinned key, choosing the interface,
 *   the wire, netguard, what a failure on it means) is behind `A2aCaller`, an interface this
 *   layer owns and protocols/a2a/client implements: the runtime never imports the SDK or undici.
 * - Disposition ("did the peer act?" is not a detail for long-running, stateful tasks):
 *   refused before anything was sent (card fetch failed, signature refused, a changed key,
 *   netguard refused the address, a clean JSON-RPC refusal, a remote plane's marked admission
 *   refusal: quota, halted or draining, each its own code) → DidNotHappen; the send left and no
 *   answer came, or the answer was -32603 / -32006 (both can be raised after a peer started
 *   work) → InDoubt, for a person to resolve like any in-doubt effect; a remote task that ended
 *   failed, rejected or canceled → Landed (the peer created it and reported its outcome, so
 *   nothing is left to discover). Following a task that was created and then losing it is
 *   InDoubt too: the task exists, its outcome is unknown.
 * - Cancellation: a run cancelled while it follows a remote task asks the peer to cancel it
 *   (CancelTask), best effort, so the peer does not keep spending on an answer nobody reads. The
 *   follow is then recorded as a Landed failure naming the task and what the cancel got, and the
 *   run is sealed cancelled (replay reads the same record and never calls again). A cancel that
 *   lands between the send and the follow is passed on too.
 * - Halts: checked between steps and again at the hop, after the card is fetched and judged and
 *   right before SendMessage leaves (run-context.ts `hop`, as for a peer call): a halt that came
 *   during the card fetch stops the send there, journaled `HaltedAtHop` (DidNotHappen).
 * - What comes back is labelled `a2a:<origin>`: untrusted.
 * - Signed cards only: a grant with `signed: true` (manifest.ts) makes verification mandatory for
 *   its card. It reaches the caller as `requireSigned` on the request, and an unsigned card is
 *   then refused before anything is sent (DidNotHappen). Verification that runs only when a
 *   signature is present is one an attacker downgrades by stripping it; the grant is where the
 *   operator says this agent's answers matter enough to refuse that. It is authority, like
 *   `approve`, not part of what is sent, so it is not in the effect's key.
 * - Large values (large-values.ts, as mcp-effect.ts does): a message larger than
 *   LARGE_VALUE_BYTES of JSON is journaled as its digest and size while the remote receives it
 *   whole; the digest still pins the key, so replay matches and an edited message diverges. An
 *   answer whose artifacts are that large reaches the run, on the first execution and on replay
 *   alike, as the same digest and size it is journaled as (its task id and card kept).
 */
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import type { Traced } from '../../src-shared/vocabulary/provenance';
import { journaledValue, LARGE_VALUE_BYTES, type LargeValue } from './large-values';
import type { Grant } from './grants';
import type { EffectAt, OutsideHop, RunContext } from './run-context';
import { EffectFailure, RunCancelled } from './run-signals';

/** What is sent: a text part (a string) or a data part (an object, as is). */
export type A2aMessageInput = string | Record<string, unknown>;

export interface A2aSendRequest {
  /** The card's URL, exactly as granted. */
  card: string;
  /** The capability, written to message.metadata.skill (never inferred from prose by the peer). */
  skill?: string;
  message: A2aMessageInput;
  /** The grant says `signed: true`: an unsigned card is refused before anything is sent. */
  requireSigned?: true;
  /** Where the message came from, for the grant's `protect:` (its `message`); never sent. */
  sinks?: { message: Traced };
  /**
   * The agent whose run sends it, for the caller-context extension the client declares (the
   * sender's own account of its request). Not part of the effect's key: the run is.
   */
  agent?: string;
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

/** Where a remote task lives: the interface the card named (its URL and tenant) and whether it streams. */
export interface A2aTaskEndpoint {
  url: string;
  tenant?: string;
  streaming: boolean;
}

/**
 * A message the remote accepted as a task that is still working: the send effect's result, so
 * the remote task's id and where it lives are journaled before anything follows it.
 */
export interface A2aAccepted {
  taskId: string;
  card: A2aAnswer['card'];
  following: A2aTaskEndpoint;
}

/** What following a task ends with: its artifacts and value (the card was judged at the send). */
export type A2aFollowed = Omit<A2aAnswer, 'card'> & { taskId: string };

/**
 * How runs reach remote A2A agents. Implemented in protocols/a2a/client, wired in plane/.
 * Every failure is an `EffectFailure` whose disposition follows the rules above.
 */
export interface A2aCaller {
  /** Where a call goes, for the effect's key: the card URL's origin. */
  destinationOf(card: string): string;
  /**
   * Fetches and judges the card and sends the message (SendMessage, returnImmediately): the
   * answer when it came at once (a message, or a task already ended), else the accepted task.
   * `hop`'s `beforeDispatch` is called after the card is judged, immediately before each
   * SendMessage leaves: a halt that came meanwhile stops the send there.
   */
  send(request: A2aSendRequest, at: EffectAt, hop: OutsideHop): Promise<A2aAnswer | A2aAccepted>;
  /**
   * Follows an accepted task until it ends (streaming or polling, as the card allows). Only
   * reads (SubscribeToTask, GetTask), so it may be performed again after a restart. `signal`
   * aborts it when the run is cancelled: the caller then sends CancelTask (best effort) and fails
   * with code `RemoteTaskCancelled` (Landed), naming what the cancel got. A plane closing parks
   * it (RunParked: nothing is written, the next plane re-attaches).
   */
  follow(task: A2aAccepted, at: EffectAt, signal: AbortSignal): Promise<A2aFollowed>;
  /** CancelTask, best effort: what it got, in words (never throws). */
  cancel(task: A2aAccepted): Promise<string>;
}

/** The cards whose grant says `signed: true`, from an agent's grants (the operator's manifest). */
export function signedOnlyCards(grants: readonly Grant[]): ReadonlySet<string> {
  return new Set(grants.flatMap((g) => (g.kind === 'a2a' && g.signed ? [g.name] : [])));
}

/** An answer as the journal and the run hold it: whole, or its artifacts as their digest and size. */
function journaledAnswer<T extends { artifacts: A2aAnswer['artifacts']; value: unknown }>(answer: T, card: string): T {
  const journaled = journaledValue(answer.artifacts);
  if (!journaled.large) return answer;
  const value: LargeValue = { large: journaled.large, note: `the answer of ${card} was larger than ${LARGE_VALUE_BYTES} bytes of JSON; the journal keeps its artifacts' digest and size only` };
  return { ...answer, artifacts: [], value };
}

const isAccepted = (sent: A2aAnswer | A2aAccepted): sent is A2aAccepted => 'following' in sent && typeof sent.following === 'object' && sent.following !== null;

/** How often a following effect looks whether its run was cancelled, ms. */
const CANCEL_POLL_MS = 100;

export async function callA2a(cx: RunContext, caller: A2aCaller, request: A2aSendRequest): Promise<A2aAnswer> {
  const { card, skill, message, requireSigned, sinks } = request;
  const journaledMessage = journaledValue(message);
  const destination = caller.destinationOf(card);
  const provenance = `a2a:${destination}`;
  // The send: the one act, under the grant. Its result journals the remote task's id and where
  // it lives before anything follows it, so a plane killed while following knows what to re-attach to.
  const sent = (await cx.effect({
    ...(sinks ? { sinks } : {}),
    effect: 'a2a',
    name: skill ?? 'message',
    request: { card, ...(skill !== undefined ? { skill } : {}), message: journaledMessage.large ? { large: journaledMessage.large } : message },
    destination,
    grant: `a2a:${card}`,
    estimate: { ...NO_SPEND, effects: 1 },
    async perform(at) {
      // The remote receives the whole message; only the journal holds its digest.
      const answer = await caller.send({ card, ...(skill !== undefined ? { skill } : {}), message, ...(requireSigned ? { requireSigned } : {}), agent: cx.agent }, at, cx.hop());
      return { result: isAccepted(answer) ? answer : journaledAnswer(answer, card), spend: { ...NO_SPEND, effects: 1 }, provenance };
    },
  })) as A2aAnswer | A2aAccepted;
  // A record written before the send and the follow were two effects holds the whole answer.
  if (!isAccepted(sent)) return sent;

  // The follow: reads of a task the granted send created (SubscribeToTask, GetTask), so it needs
  // no grant or approval of its own and costs no effect; keyed by the task id. Marked resumable:
  // reading again cannot act twice, so an attempt a killed or closed plane left open is simply
  // performed again (re-attaching to the same remote task) instead of put to a person as in doubt.
  try {
    const followed = (await cx.effect({
      effect: 'a2a',
      name: `follow:${sent.taskId}`,
      request: { card, follow: sent.taskId },
      destination,
      grant: null,
      estimate: NO_SPEND,
      resumable: true,
      async perform(at) {
        // The run's cancel is noticed here, between the far side's events: it aborts the follow,
        // and the caller turns that into a CancelTask on the peer.
        const abort = new AbortController();
        const watch = setInterval(() => {
          if (cx.cancelRequested()) abort.abort(new RunCancelled('cancelled'));
        }, CANCEL_POLL_MS);
        try {
          if (cx.cancelRequested()) abort.abort(new RunCancelled('cancelled'));
          const result = await caller.follow(sent, at, abort.signal);
          return { result: journaledAnswer(result, card), spend: NO_SPEND, provenance };
        } finally {
          clearInterval(watch);
        }
      },
    })) as A2aFollowed;
    return { ...followed, card: sent.card };
  } catch (error) {
    // The effect recorded what the cancel did; the run itself ends cancelled, not failed.
    if (error instanceof EffectFailure && error.code === 'RemoteTaskCancelled' && cx.cancelRequested()) throw new RunCancelled('cancelled');
    // Cancelled between the send and the follow's start (the boundary refused to begin it): the
    // remote task exists all the same, so the cancel is passed on, best effort, as a follow would.
    if (error instanceof RunCancelled) await caller.cancel(sent);
    throw error;
  }
}
