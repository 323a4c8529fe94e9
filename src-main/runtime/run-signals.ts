/**
 * How a run's code is stopped at a step boundary. These are thrown by the run context and
 * caught by the executor, which turns each into the right record: a suspension leaves the run
 * waiting (nothing sealed), a cancel or a denial seals it, a divergence seals it failed, loudly.
 */
import type { Disposition, EffectKind } from '../../src-shared/vocabulary/effects';
import type { CarriedFailureCode } from '../../src-shared/vocabulary/failures';

/** The run waits for a person (or a lifted halt); it is resumed by replay, not by this stack. */
export class RunSuspended extends Error {
  override readonly name = 'RunSuspended';
  constructor(readonly waitId: string) {
    super(`run is waiting on ${waitId}`);
  }
}

export class RunCancelled extends Error {
  override readonly name = 'RunCancelled';
}

export class RunDenied extends Error {
  override readonly name = 'RunDenied';
}

/** Replay met a step whose key differs from the record: the run would do something else now. */
export class DivergenceError extends Error {
  override readonly name = 'DivergenceError';
  constructor(
    readonly step: number,
    readonly recordedKey: string,
    readonly replayKey: string,
    /** The effect and name the run now asks for at that step. */
    readonly what: string,
  ) {
    super(`replay diverged at step ${step} (${what}): the journal recorded key ${recordedKey.slice(0, 16)}…, the run now asks for ${replayKey.slice(0, 16)}…`);
  }
}

/**
 * An effect failed; the disposition says whether it reached the far side. The code is one of
 * FailureCode, or the code a replayed failure was recorded with (recordedFailureCode).
 */
export class EffectFailure extends Error {
  override readonly name = 'EffectFailure';
  constructor(
    readonly code: CarriedFailureCode,
    message: string,
    readonly disposition: Disposition,
  ) {
    super(message);
  }
}

/**
 * A dry replay reached a step its record does not hold: it stops there, performing nothing.
 * `spec` is the effect it would perform (null for a question or anything else it would write).
 */
export class ReplayStop extends Error {
  override readonly name = 'ReplayStop';
  constructor(
    readonly step: number,
    readonly key: string | null,
    readonly spec: { effect: EffectKind; name: string; request: unknown } | null,
  ) {
    super(`the replay reached step ${step}, which the record does not hold`);
  }
}

/** A dry replay met a recorded step whose grant the changed manifest no longer gives. */
export class ReplayUngranted extends Error {
  override readonly name = 'ReplayUngranted';
  constructor(
    readonly step: number,
    readonly grant: string,
  ) {
    super(`step ${step} needs ${grant}, which the manifest no longer grants`);
  }
}
