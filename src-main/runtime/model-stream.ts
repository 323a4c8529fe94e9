/**
 * A model call's answer as it streams, for whoever watches the run live (the timeline).
 * docs/GOVERNED-RUNTIME.md: live deltas are labelled projections, not replay truth. The journal
 * holds only the sealed effect (EffectDone or EffectFailed); what passes through here is never
 * written down, is untrusted model output like the answer it previews, and ends when the effect
 * does.
 *
 * - Only a call really performed is watched: callModel asks for a watcher inside the effect's
 *   `perform`, which a replayed step never reaches, so strict replay emits nothing.
 * - Coalesced: at most one update per LIVE_TEXT_INTERVAL_MS (20 a second) per call, and a run
 *   makes one model call at a time, so per run too. A model streams tokens far faster than a
 *   person reads or a socket should carry them.
 * - Each update carries the text accumulated so far (its last LIVE_TEXT_MAX_CHARS characters,
 *   and how many came before them), never a bare delta: an update dropped or coalesced away
 *   loses nothing, the next one says it all again, and the carried size stays bounded however
 *   long the answer grows.
 * - Advisory: a sink that throws is ignored; the call goes on exactly as it would unwatched.
 */
import { LIVE_TEXT_MAX_CHARS, type EventPayload } from '../../src-shared/ipc/contract';
import type { ModelStreamObserver } from './model-provider';

/** One live view of a call's answer so far: exactly what the plane publishes as `runs.streaming`. */
export type ModelTextUpdate = EventPayload<'runs.streaming'>;

export type ModelTextSink = (update: ModelTextUpdate) => void;

/** 20 updates a second at most. */
export const LIVE_TEXT_INTERVAL_MS = 50;

export interface LiveTextClock {
  now(): number;
  setTimer(fn: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
}

const SYSTEM_CLOCK: LiveTextClock = {
  now: () => performance.now(),
  setTimer: (fn, ms) => setTimeout(fn, ms),
  clearTimer: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface LiveModelText {
  /** Hand this to ModelProvider.complete. */
  observer: ModelStreamObserver;
  /** The call has ended (either way): sends the last state with `done`, if anything was seen; later deltas are ignored. */
  finish(): void;
}

export interface LiveTextOptions {
  intervalMs?: number;
  maxChars?: number;
  clock?: LiveTextClock;
}

/**
 * A watcher for one performed model call at `at` (the run and step, as run-context.ts's EffectAt
 * names them; typed here by what an update carries, since run-context.ts holds the sink),
 * feeding `sink` coalesced updates.
 */
export function liveModelText(sink: ModelTextSink, at: Pick<ModelTextUpdate, 'runId' | 'step'>, options: LiveTextOptions = {}): LiveModelText {
  const intervalMs = options.intervalMs ?? LIVE_TEXT_INTERVAL_MS;
  const maxChars = options.maxChars ?? LIVE_TEXT_MAX_CHARS;
  const clock = options.clock ?? SYSTEM_CLOCK;
  /** The answer's tail; trimmed back to maxChars whenever it reaches twice that (amortised). */
  let tail = '';
  let total = 0;
  let sentTotal = 0;
  let lastSentAt = -Infinity;
  let timer: unknown = null;
  let finished = false;

  const send = (done: boolean) => {
    lastSentAt = clock.now();
    sentTotal = total;
    const text = tailOf(tail, maxChars);
    try {
      sink({ runId: at.runId, step: at.step, text, omittedChars: total - text.length, done });
    } catch {
      // Advisory: a watcher that fails loses its view, never the call.
    }
  };

  const flushLater = () => {
    timer = null;
    if (!finished && total > sentTotal) send(false);
  };

  return {
    observer: {
      onText(delta) {
        if (finished || delta === '') return;
        tail += delta;
        total += delta.length;
        if (tail.length >= 2 * maxChars) tail = tailOf(tail, maxChars);
        if (timer !== null) return;
        const wait = lastSentAt + intervalMs - clock.now();
        if (wait <= 0) send(false);
        else timer = clock.setTimer(flushLater, wait);
      },
    },
    finish() {
      if (finished) return;
      finished = true;
      if (timer !== null) clock.clearTimer(timer);
      timer = null;
      if (total > 0) send(true);
    },
  };
}

/** The last `max` characters of `text`, never starting inside a surrogate pair. */
function tailOf(text: string, max: number): string {
  if (text.length <= max) return text;
  let start = text.length - max;
  const code = text.charCodeAt(start);
  if (code >= 0xdc00 && code <= 0xdfff) start += 1;
  return text.slice(start);
}
