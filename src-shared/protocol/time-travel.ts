/**
 * Time travel over recorded runs (docs/GOVERNED-RUNTIME.md, "Fork, replay, diff"): the shapes of
 * `runs.fork`, `runs.replay` and `runs.diff`, which the CLI, the UI and scripts read.
 *
 * Steps are numbered from 0, in the order a run performed its effects, as the timeline shows
 * them (each EffectStarted's `step`).
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';
import { RunIdSchema } from '../vocabulary/ids';
import { RunOutcomeSchema, RunStatusSchema } from '../vocabulary/runs';
import { SpendSchema } from '../vocabulary/spend';

/** A manifest as its file holds it (YAML or JSON text), at most 256 KiB. */
const ManifestText = z.string().min(1).max(256 * 1024);
/** Every model step's provider and model: `provider:model`. */
export const ModelOverrideSchema = z.string().regex(/^[a-z0-9][a-z0-9._-]*:[^\s]+$/, 'a model as provider:model');

/** What a fork (or a dry replay) changes of the parent run; nothing given, nothing changed. */
const Changes = {
  /** The run's input instead of the parent's. */
  input: z.unknown().optional(),
  /** The agent's manifest instead of the declared one (its `name` must be the parent's agent). */
  manifest: ManifestText.optional(),
  /** Every model step's provider and model instead of the manifest's. */
  model: ModelOverrideSchema.optional(),
};

export const ForkRequestSchema = deferred(() =>
  z
    .object({
      runId: RunIdSchema,
      /** The first step performed live; every step before it is taken from the parent's record. */
      at: z.number().int().nonnegative(),
      ...Changes,
      wait: z.boolean().default(false),
    })
    .strict(),
);
export type ForkRequest = z.input<typeof ForkRequestSchema>;

export const ReplayRequestSchema = deferred(() => z.object({ runId: RunIdSchema, ...Changes }).strict());
export type ReplayRequest = z.input<typeof ReplayRequestSchema>;

/**
 * Why two runs (or a run and its replay) part at a step: `effect` a different effect or name,
 * `arguments` the same effect with a different request, `grant` the effect is no longer granted
 * (replay only), `missing` one side has no such step, `outcome` the same effect ended
 * differently (one failed, or a different result).
 */
export const DivergenceReasonSchema = z.enum(['effect', 'arguments', 'grant', 'missing', 'outcome']);
export type DivergenceReason = z.infer<typeof DivergenceReasonSchema>;

/** A value compared by digest: shown whole when small, else opened on demand by its record's seq. */
export const ValueRefSchema = deferred(() =>
  z.object({
    /** sha256 of its canonical JSON. */
    digest: z.string(),
    /** Bytes of its canonical JSON. */
    size: z.number().int().nonnegative(),
    /** The value itself, when `size` is at most 2 KiB. */
    value: z.unknown().optional(),
  }),
);
export type ValueRef = z.infer<typeof ValueRefSchema>;

/** One step as a run's records hold it: what it did, with which arguments, how it ended. */
export const StepSideSchema = deferred(() =>
  z.object({
    effect: z.string(),
    name: z.string(),
    key: z.string(),
    request: ValueRefSchema,
    /** The answer (EffectDone), or null when it failed or has not ended. */
    result: ValueRefSchema.nullable(),
    failed: z.object({ code: z.string(), disposition: z.string(), message: z.string() }).nullable(),
    spend: SpendSchema,
    /** Taken from the parent's record (a fork's step before its fork point): nothing performed. */
    fromParent: z.boolean(),
    /** The seq of the record holding its answer (or its start), to open it. */
    seq: z.number().int(),
  }),
);
export type StepSide = z.infer<typeof StepSideSchema>;

export const DivergenceSchema = deferred(() =>
  z.object({
    step: z.number().int().nonnegative(),
    reason: DivergenceReasonSchema,
    /** One line saying what differs. */
    message: z.string(),
  }),
);
export type Divergence = z.infer<typeof DivergenceSchema>;

export const ReplayReportSchema = deferred(() =>
  z.object({
    runId: RunIdSchema,
    /** Steps of the recorded run the replay walked before it stopped (all of them when it did not diverge). */
    replayed: z.number().int().nonnegative(),
    steps: z.number().int().nonnegative(),
    divergesAt: DivergenceSchema.nullable(),
    /** The step the replay would perform next and what: the first effect the record does not hold. */
    expected: StepSideSchema.nullable(),
    actual: z.object({ effect: z.string(), name: z.string(), key: z.string(), request: ValueRefSchema }).nullable(),
  }),
);
export type ReplayReport = z.infer<typeof ReplayReportSchema>;

const DiffRun = deferred(() =>
  z.object({
    runId: RunIdSchema,
    agent: z.string(),
    status: RunStatusSchema,
    outcome: RunOutcomeSchema.nullable(),
    input: ValueRefSchema,
    result: ValueRefSchema.nullable(),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    spend: SpendSchema,
    steps: z.number().int().nonnegative(),
    /** Set when the run is a fork: its parent and the step it was forked at. */
    forkOf: z.object({ runId: RunIdSchema, step: z.number().int().nonnegative() }).nullable(),
  }),
);

export const SpendDifferenceSchema = z.object({
  effects: z.number().int(),
  inputTokens: z.number().int(),
  outputTokens: z.number().int(),
  reasoningTokens: z.number().int(),
  costMicros: z.number().int(),
});
export type SpendDifference = z.infer<typeof SpendDifferenceSchema>;

export const DiffStepSchema = deferred(() =>
  z.object({
    step: z.number().int().nonnegative(),
    a: StepSideSchema.nullable(),
    b: StepSideSchema.nullable(),
    /** The same effect, arguments and outcome on both sides (by digest). */
    same: z.boolean(),
    /** Either side took this step from its parent's record. */
    fromParent: z.boolean(),
  }),
);
export type DiffStep = z.infer<typeof DiffStepSchema>;

export const RunDiffSchema = deferred(() =>
  z.object({
    a: DiffRun,
    b: DiffRun,
    /** The first step where they part; null when every step is the same. */
    divergesAt: DivergenceSchema.nullable(),
    /** One entry per step, from 0, to the longer run's last. */
    steps: z.array(DiffStepSchema),
    /** b's spend less a's, field by field (negative where b spent less). */
    spendDifference: SpendDifferenceSchema,
    /** The two inputs are the same (by digest). */
    sameInput: z.boolean(),
  }),
);
export type RunDiff = z.infer<typeof RunDiffSchema>;

export const DiffRequestSchema = deferred(() => z.object({ a: RunIdSchema, b: RunIdSchema }).strict());
