/**
 * What an effect is, as run code hands it to the run's context (run-context.ts), and what the
 * context is given to govern it: the spec, its outcome, what a fork takes from its parent, and
 * the run's grants and halts. Kept apart from RunContext so that the effect modules
 * (peer-effect.ts, model-tools.ts, agent-effect.ts, …) name what they build without the
 * context's machinery.
 */
import type { z } from 'zod';
import type { CredentialUseSchema } from '../../src-shared/journal/records';
import type { EffectKind } from '../../src-shared/vocabulary/effects';
import type { Spend } from '../../src-shared/vocabulary/spend';
import type { ProtectRule, Traced } from '../../src-shared/vocabulary/provenance';
import type { Sensitivity } from '../../src-shared/vocabulary/sensitivity';
import type { RunHistory } from './run-history';

export interface EffectOutcome {
  result: unknown;
  spend: Spend;
  provenance: string;
  /** Its sensitivity label, when the effect knows it (a stored file's own); absent: its destination's result label. */
  sensitivity?: string;
}

/** Which run and step an effect is performed for. */
export interface EffectAt {
  runId: string;
  step: number;
  /** The sensitivity label the request carries, when above the lowest (a file written keeps it: file-labels.ts). */
  carried?: string;
}

/**
 * What an effect that reaches outside hands the caller performing its hop (a peer, an MCP
 * server, an A2A agent): the run's last word before the request leaves. Halts are checked
 * between steps, but a caller does work of its own first (a token exchange, a connect and
 * handshake, a card fetch), and a halt can come meanwhile; `beforeDispatch` is called after
 * that work, immediately before the request is sent, and throws an EffectFailure (DidNotHappen)
 * when it must not leave. RunContext.hop makes it; docs/GOVERNED-RUNTIME.md, "Halts at the hop".
 */
export interface OutsideHop {
  beforeDispatch(): void;
}

export interface EffectSpec {
  effect: EffectKind;
  name: string;
  /** Everything that defines the effect, and nothing secret: it is journaled and hashed. */
  request: unknown;
  destination?: string;
  /** Part of the key but not shown: e.g. a model provider's request profile. */
  identity?: unknown;
  /** `kind:name` of the grant this effect needs; null for plane-internal effects (clock, random). */
  grant: string | null;
  /** What it may cost, for the ceiling check before it runs. */
  estimate: Spend;
  /** Which credential a hop presents (kind and audience only: never the token). */
  credential?: z.infer<typeof CredentialUseSchema>;
  /**
   * Performing it again cannot do it twice: its far side is keyed by this effect (a child run
   * whose id is derived from the run, step and key; agent-effect.ts), so a second perform
   * attaches to what the first one started. An attempt found open after the plane stopped is
   * then continued rather than put to a person as in doubt. Only for effects that really are
   * keyed so: anything else left open is InDoubt.
   */
  resumable?: true;
  /** The values its protected fields are about to take, with their origins (sink-check.ts); absent: none is protected. */
  sinks?: Readonly<Record<string, Traced>>;
  /**
   * It touches nothing outside the plane and only reads (a file listing, a stored file, earlier
   * turns from the journal): performing it twice cannot do anything twice, so, like a clock read,
   * it needs no durable start before it is performed. Its start and answer are held with the
   * run's other local records and committed with the run's next durable record (see `held`).
   */
  local?: true;
  /**
   * A failed perform throws EffectFailure (or anything: then it is InDoubt). `at` names the run
   * and step performing it, for an effect that tells its callee who called (a peer call).
   */
  perform(at: EffectAt): Promise<EffectOutcome>;
}

/**
 * What a fork takes from its parent (runtime-forks.ts reads it from the parent's records): the
 * answers of the steps before `until`, each with the record that held it, the parent's answers
 * to its input questions, and the outside effects it performed (payment, peer, MCP, A2A) by step
 * and key. docs/GOVERNED-RUNTIME.md, "Fork, replay, diff".
 */
export interface ForkReuse {
  parentRunId: string;
  /** The first step performed live. */
  until: number;
  /** The parent's answer at a step, read from its history when the step is reached (nothing copied ahead). */
  answerAt(step: number): ReuseAnswer | undefined;
  inputs: ReadonlyMap<number, { by: string; input: unknown }>;
  /** The key of the outside effect the parent performed at a step, if it performed one. */
  outsideAt(step: number): string | undefined;
}

/** One recorded answer a fork may take: the parent's effect key, its result, and the record that held it. */
export interface ReuseAnswer {
  key: string;
  result: unknown;
  provenance: string;
  /** Its sensitivity label, when the parent's record holds one above the lowest. */
  sensitivity?: string;
  seq: number;
  hash: string;
}

export interface RunGovernance {
  grants: ReadonlyMap<string, { approve: boolean; protect?: Readonly<Record<string, ProtectRule>> }>;
  approveEveryEffect: boolean;
  /** The operator's labels and ceilings (docs/GOVERNED-RUNTIME.md, "Sensitivity"); absent: none configured. */
  sensitivity?: Sensitivity;
  /** The halted scope that withholds this run, if any. */
  haltedBy(history: RunHistory): string | null;
  cancelRequested(runId: string): boolean;
}
