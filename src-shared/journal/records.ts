/**
 * Journal record kinds. A record is an envelope (seq, runId, kind, v, time, body, prevHash,
 * hash) and a body whose schema depends on (kind, v). Every run, effect, decision and
 * observation the plane makes is one of these, and the UI's timelines and every stream read
 * them back.
 *
 * Designed for growth: a kind is a PascalCase name and `v` its body version. A reader that
 * meets a kind or version it does not know still reads the envelope, verifies the hash and
 * shows the body as unknown: a journal written by a newer AgentPlane must stay readable and
 * verifiable by an older one, never rejected. Writers, on the other hand, only write kinds
 * they know, validated against their schema.
 *
 * Credentials never appear here: no body field holds a token, and the credential type has no
 * JSON form at all (src-main/peers/peer-credential.ts), so it cannot be written by accident.
 * Costs are integers in micro-units of the currency (no floats in hashed records).
 */
import { z } from 'zod';
import { lazyEntries } from '../lazy-entries';
import { compileBodyPredicate, type BodyPredicate } from './fast-body-check';
import { DecisionSchema, DecisionValueSchema } from '../vocabulary/decisions';
import { DispositionSchema, EffectKindSchema } from '../vocabulary/effects';
import type { FailureInfo } from '../vocabulary/failures';
import { WaitIdSchema } from '../vocabulary/ids';
import { RunOutcomeSchema } from '../vocabulary/runs';
import { BudgetSchema, CeilingSchema, SpendSchema } from '../vocabulary/spend';
import { WaitReasonSchema, WaitSubjectSchema } from '../vocabulary/waits';
import { ProvenanceVerdictSchema } from '../vocabulary/provenance';

import { HashHexSchema } from './record-envelope';
import { HoldTargetKindSchema } from '../vocabulary/holds';

export { HASH_HEX, HashHexSchema, JournalRecordSchema, type JournalRecord } from './record-envelope';
export { HoldTargetKindSchema, type HoldTargetKind } from '../vocabulary/holds';
/** The most steps one EffectReused record holds. */
export const MAX_REUSED_STEPS = 1000;
/** prevHash of the first record. */
export const GENESIS_PREV_HASH = '0'.repeat(64);

const Json = z.unknown();
const Count = z.number().int().nonnegative();
const Step = z.number().int().nonnegative();
const IsoTime = z.string().min(1);

/**
 * Which credential a hop presented: never the token, its digest or its expiry. `delegated` is a
 * token the plane obtained by OAuth token exchange (RFC 8693) for `principal` at `issuer`
 * (docs/SECURITY.md, "Delegated credentials"); records written before it existed still parse.
 */
export const CredentialUseSchema = z.object({
  kind: z.enum(['subject', 'unbound', 'plane', 'delegated']),
  audience: z.string(),
  principal: z.string().optional(),
  /** The issuer's name in the plane's configuration (`delegated` only). */
  issuer: z.string().optional(),
});

/**
 * A failure as a record holds it (EffectFailed, RunSealed). Its code is read as any string:
 * records are hashed and never rewritten, and one written by an older build may hold a code
 * this build's list (FailureCode) no longer has, so the journal must still parse it. Writers
 * are held to the closed list by type instead (WrittenBody below).
 */
const ErrorInfo = z.object({ code: z.string(), message: z.string() });

/** The longest stream one nonce may key: 2^32 blocks of 16 bytes, the CTR counter's span. */
export const MAX_SEALED_STREAM_BYTES = 2 ** 36;

/**
 * A payload sealed under a subject's data key (docs/ERASURE.md): the record's data-carrying
 * fields (a run's input, an effect's request or result, a sealed run's result) as canonical JSON,
 * encrypted under the key `key` of `subject` for `period` (a UTC month). The record's hash covers
 * this ciphertext, so destroying the key (an erasure) leaves every hash, checkpoint and export
 * valid while nobody can read the payload again.
 *
 * Two forms. Version 2 of a kind (SealedPayloadSchema): AES-256-GCM per payload, a random 96-bit
 * nonce, subject, period and key id as associated data, the tag after the ciphertext. Version 3
 * (SealedSliceSchema): every payload a commit seals under one key is one AES-256-CTR stream with
 * a random 96-bit nonce and a 32-bit block counter from 0, and each record holds its own slice
 * of it (`at`, the slice's first byte in the stream): one cipher a commit instead of one a payload,
 * which was most of what sealing cost a group commit. It carries no tag of its own: a record's
 * integrity is its hash, the chain and the signed (and witnessed) checkpoints over it, as for
 * every clear record, and verify checks those without any key.
 */
const SealedKeyFields = {
  subject: z.string().min(1),
  /** The UTC month (YYYY-MM) the key serves: retention destroys old months' keys only. */
  period: z.string().regex(/^\d{4}-\d{2}$/, 'a UTC month as YYYY-MM'),
  /** The data key's id in the plane's subject key store. */
  key: z.string().regex(/^[0-9a-f]{32}$/, 'a key id as 32 lowercase hex digits'),
  nonce: z.string().regex(/^[A-Za-z0-9+/]{16}$/, 'a 12-byte nonce in base64'),
};
export const SealedPayloadSchema = z.object({
  ...SealedKeyFields,
  /** Ciphertext then the 16-byte GCM tag, base64. */
  data: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64'),
});
export const SealedSliceSchema = z.object({
  ...SealedKeyFields,
  /** The slice's first byte in its stream under this key and nonce (below MAX_SEALED_STREAM_BYTES: the sealer ends a stream first). */
  at: z.number().int().nonnegative(),
  /** The slice's ciphertext, base64. */
  data: z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'base64'),
});
export type SealedPayload = z.infer<typeof SealedPayloadSchema>;
export type SealedSlice = z.infer<typeof SealedSliceSchema>;

/** What a legal hold (HoldPlaced) is on: a subject (a run owner), or a case (the owners of the runs bound to it). */

/** RunAdmitted v1: what v2 keeps clear is this without `input`. */
const runAdmittedV1 = () =>
  z.object({
    agent: z.string(),
    /** The principal at the root of the delegation chain: whose run this is. */
    owner: z.string(),
    /** Who acts for whom, root first. */
    chain: z.array(z.string()),
    input: Json,
    /** Where the input came from: `user:<id>`, `peer:<id>`, `plane`. Untrusted unless `plane`. */
    inputProvenance: z.string(),
    /**
     * The input's sensitivity label (docs/GOVERNED-RUNTIME.md, "Sensitivity"), written only when
     * above the lowest label: absent, the input is the lowest, as every run before labels was.
     * An optional field v1 still parses, so records written before it and after it both check.
     */
    inputSensitivity: z.string().optional(),
    budget: BudgetSchema,
    trigger: z.object({ via: z.enum(['ipc', 'cli', 'web', 'peer', 'mcp', 'a2a', 'plane']), by: z.string() }),
    /**
     * The run whose effect made this call, and that effect's step, as the caller stated them
     * (a peer's skill run called by a plane run). A claim by the caller: the plane confirms it
     * against the parent's own EffectStarted before it shows the link as confirmed
     * (runtime/run-links.ts).
     */
    parentRunId: z.string().optional(),
    parentStep: Step.optional(),
    /** Which process executes the run: `plane` (when absent too) or `peer:<id>`. */
    host: z.string().optional(),
    /**
     * The context the run continues: the id of the run that opened it, which belongs to the
     * same owner and host (runtime.ts checks it at admission). Absent: the run is its own
     * context (every run before contexts existed reads so, with nothing migrated).
     */
    context: z.string().optional(),
  });

const effectStartedV1 = () =>
  z.object({
    step: Step,
    effect: EffectKindSchema,
    name: z.string(),
    /** Canonical hash of everything that defines the effect; replay compares it. */
    key: HashHexSchema,
    request: Json,
    destination: z.string().optional(),
    credential: CredentialUseSchema.optional(),
  });

const effectDoneV1 = () =>
  z.object({
    step: Step,
    key: HashHexSchema,
    result: Json,
    spend: SpendSchema,
    /** Label of what came back: `peer:<id>`, `model:<provider>`, `plane`. */
    provenance: z.string(),
    /** Its sensitivity label (docs/GOVERNED-RUNTIME.md, "Sensitivity"), written only when above the lowest; absent, the lowest. */
    sensitivity: z.string().optional(),
  });

const runSealedV1 = () =>
  z.object({
    outcome: RunOutcomeSchema,
    result: Json.optional(),
    error: ErrorInfo.optional(),
    spend: SpendSchema,
    /** How many records the run wrote before this one: a record deleted from a sealed run is detectable. */
    records: Count,
  });

/** One step of an EffectReused v1 (v2 keeps it without `request` and `result`). */
const reusedStepV1 = () =>
  z.object({
    step: Step,
    effect: EffectKindSchema,
    name: z.string(),
    key: HashHexSchema,
    request: Json,
    result: Json,
    provenance: z.string(),
    /** The parent's answer's sensitivity label, when above the lowest (as EffectDone.sensitivity). */
    sensitivity: z.string().optional(),
    from: z.object({ runId: z.string().min(1), seq: z.number().int().positive(), hash: HashHexSchema }),
  });

/** Suspended v1 before its refinement: what v2 keeps clear is this without `subject`. */
const suspendedV1 = () =>
  z.object({
    step: Step,
    reason: WaitReasonSchema,
    waitId: WaitIdSchema,
    /** Exactly what a person is asked to decide (effect, arguments, estimated cost). */
    subject: WaitSubjectSchema,
    /** Canonical hash of `subject`: a decision names it, so approving anything else is impossible. */
    subjectHash: HashHexSchema,
  });

/** Decision v2: what v3 keeps clear is this without `value` and `reason`. */
const decisionV2 = () =>
  z.object({
    waitId: WaitIdSchema,
    decision: DecisionSchema,
    by: z.string(),
    subjectHash: HashHexSchema,
    reason: z.string().optional(),
    /** For snooze: when to ask again. */
    until: IsoTime.optional(),
    /** What the person supplied, tagged with the reason of the wait it answers: a raised budget, the input asked for, a recovery resolution. */
    value: DecisionValueSchema.optional(),
    /**
     * An answer a protocol caller sent as a message (an A2A message continuing its task): that
     * message's id. With `by` it is the answer's identity, so the same message sent again finds
     * this record and is not applied twice (Runtime.answerInput).
     */
    messageId: z.string().min(1).max(200).optional(),
  });

/**
 * Body schemas by kind, then by version. Each is built the first time it is read
 * (lazyEntries): a process checks the bodies of the kinds it writes, and most (each CLI call, the
 * page in every window) check none, so building all of them on load was wasted start-up.
 */
export const recordBodies = {
  RunAdmitted: lazyEntries({
    1: () => runAdmittedV1(),
    /** v1 with `input` sealed under the owner's data key (docs/ERASURE.md). */
    2: () => runAdmittedV1().omit({ input: true }).extend({ sealed: SealedPayloadSchema }),
    /** v2 with the input's ciphertext a slice of its commit's stream (SealedSliceSchema). */
    3: () => runAdmittedV1().omit({ input: true }).extend({ sealed: SealedSliceSchema }),
  }),
  AdmissionRefused: lazyEntries({
    1: () => z.object({
      agent: z.string(),
      principal: z.string(),
      action: z.string(),
      resource: z.string(),
      reason: z.string(),
    }),
  }),
  EffectStarted: lazyEntries({
    1: () => effectStartedV1(),
    /** v1 with `request` sealed under the run owner's data key (docs/ERASURE.md). */
    2: () => effectStartedV1().omit({ request: true }).extend({ sealed: SealedPayloadSchema }),
    /** v2 with the request's ciphertext a slice of its commit's stream (SealedSliceSchema). */
    3: () => effectStartedV1().omit({ request: true }).extend({ sealed: SealedSliceSchema }),
  }),
  EffectDone: lazyEntries({
    1: () => effectDoneV1(),
    /** v1 with `result` sealed under the run owner's data key (docs/ERASURE.md). */
    2: () => effectDoneV1().omit({ result: true }).extend({ sealed: SealedPayloadSchema }),
    /** v2 with the result's ciphertext a slice of its commit's stream (SealedSliceSchema). */
    3: () => effectDoneV1().omit({ result: true }).extend({ sealed: SealedSliceSchema }),
  }),
  EffectFailed: lazyEntries({
    1: () => z.object({
      step: Step,
      key: HashHexSchema,
      disposition: DispositionSchema,
      error: ErrorInfo,
      /** What the failure consumed: a failed call is billed for what it burned. */
      spend: SpendSchema,
    }),
  }),
  BudgetVerdict: lazyEntries({
    1: () => z.object({
      step: Step,
      verdict: z.enum(['within', 'ceilingReached', 'raised']),
      ceiling: CeilingSchema.optional(),
      spent: SpendSchema,
      budget: BudgetSchema,
    }),
  }),
  /**
   * A protected field of the effect at `step` would take a value from an origin its grant does
   * not accept (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks"): `asked`, the run
   * waits for a person (the Suspended record after it); `refused`, the effect did not happen.
   * Written only when a field is not accepted; a check that passes writes nothing.
   */
  ProvenanceVerdict: lazyEntries({
    1: () => z.object({
      step: Step,
      grant: z.string(),
      verdict: ProvenanceVerdictSchema,
      fields: z.array(z.object({ field: z.string(), value: Json, provenance: z.array(z.string()), via: z.array(z.string()) })),
    }),
  }),
  Suspended: lazyEntries({
    /**
     * The subject is one of WaitSubject's shapes, its kind the record's reason: a writer cannot
     * journal anything else. Every runtime so far has written exactly these shapes, so records
     * already in journals still check; one that does not (another version's) is still read and
     * verified, its subject shown raw (readWaitSubject), never rejected.
     */
    1: () => suspendedV1().refine((body) => body.subject.kind === body.reason, { message: "the subject's kind must be the wait's reason", path: ['subject', 'kind'] }),
    /** v1 with `subject` (what the person is asked, arguments included) sealed under the run owner's data key (docs/ERASURE.md). */
    2: () => suspendedV1().omit({ subject: true }).extend({ sealed: SealedSliceSchema }),
  }),
  Decision: lazyEntries({
    /**
     * v1, written until values were tagged: `value` is whatever the person supplied, untagged
     * (`{budget}`, the bare input, `{resolution, result}`). Kept as a tolerant reader for the
     * records already in users' journals; decisionValueFromV1 reads their value by the reason
     * of the wait they answer.
     */
    1: () => z.object({
      waitId: z.string(),
      decision: DecisionSchema,
      by: z.string(),
      subjectHash: HashHexSchema,
      reason: z.string().optional(),
      /** For snooze: when to ask again. */
      until: IsoTime.optional(),
      value: Json.optional(),
    }),
    2: () => decisionV2(),
    /** v2 with `value` and `reason` (what the person supplied and wrote) sealed under the run owner's data key (docs/ERASURE.md). */
    3: () => decisionV2().omit({ value: true, reason: true }).extend({ sealed: SealedSliceSchema }),
  }),
  Cancelled: lazyEntries({
    1: () => z.object({ by: z.string(), reason: z.string().optional(), atStep: Step.optional() }),
  }),
  HaltApplied: lazyEntries({
    1: () => z.object({ scope: z.string(), lifted: z.boolean(), by: z.string(), reason: z.string().optional() }),
  }),
  RunSealed: lazyEntries({
    1: () => runSealedV1(),
    /** v1 with `result` sealed under the run owner's data key (docs/ERASURE.md). */
    2: () => runSealedV1().omit({ result: true }).extend({ sealed: SealedPayloadSchema }),
    /** v2 with the result's ciphertext a slice of its commit's stream (SealedSliceSchema). */
    3: () => runSealedV1().omit({ result: true }).extend({ sealed: SealedSliceSchema }),
  }),
  Observation: lazyEntries({
    1: () => z.object({
      source: z.enum(['acp']),
      sessionId: z.string(),
      /** The observed party's own account: never an effect, never authority. */
      update: z.string(),
      detail: Json,
    }),
  }),
  /**
   * An observed ACP session bound to a case (a matter) by a person: the session id and every run
   * that observed it, found through the index of sessions by id. Journaled with no run (runId
   * null): it says something about those runs, and their records stay as they were sealed.
   */
  CaseBound: lazyEntries({
    1: () => z.object({
      caseId: z.string().min(1).max(128),
      sessionId: z.string().min(1),
      runIds: z.array(z.string()),
      by: z.string().min(1),
      note: z.string().max(500).optional(),
    }),
  }),
  PeerLifecycle: lazyEntries({
    1: () => z.object({
      peerId: z.string(),
      event: z.enum(['created', 'starting', 'started', 'stopped', 'failed', 'revoked', 'removed']),
      address: z.string().optional(),
      detail: z.string().optional(),
    }),
  }),
  /**
   * A run of a team plane (a journal several plane instances share, docs/TEAM-PLANE.md) taken
   * over: the instance that held it (`from`, a runtime host) lost its lease, and `to` resumes it
   * from the journal under the disposition rules. Journaled on the run, so its timeline says who
   * held it when, and the run's host is the last `to`.
   */
  RunAdopted: lazyEntries({
    1: () => z.object({ from: z.string().min(1), to: z.string().min(1), reason: z.string() }),
  }),
  /**
   * A run forked from another (`runs.fork`; docs/GOVERNED-RUNTIME.md, "Fork, replay, diff"):
   * written right after its RunAdmitted, in the same commit. Its effects before `step` are
   * answered from `parent`'s records (EffectReused), the rest performed live. `changed` says
   * what differs from the parent; a changed manifest is kept whole (`manifest`), so the fork
   * runs the same program after a restart, and its digest names it.
   */
  RunForked: lazyEntries({
    1: () => z.object({
      parent: z.string().min(1),
      step: Step,
      changed: z.object({ input: z.boolean(), manifest: z.boolean(), model: z.string().nullable() }),
      manifest: z.object({ digest: HashHexSchema, source: z.record(z.string(), z.unknown()) }).optional(),
    }),
  }),
  /**
   * A fork's steps answered from its parent's records, performed by nobody and spending
   * nothing: for each, the parent's effect, arguments and answer, and the record that held them
   * (`from`: its run, seq and hash), which offline verify checks against the parent's own
   * record. Consecutive reused steps share one record (the runtime writes 1 to MAX_REUSED_STEPS
   * of them; no length check here, so the journal's quick body check applies, and verify refuses
   * a record with none): a fork of a long run writes one record per thousand steps, not one per step.
   */
  EffectReused: lazyEntries({
    1: () => z.object({ steps: z.array(reusedStepV1()) }),
    /** v1 with each step's `request` and `result` sealed, together, under the fork owner's data key (docs/ERASURE.md). */
    2: () => z.object({ steps: z.array(reusedStepV1().omit({ request: true, result: true })), sealed: SealedPayloadSchema }),
    /** v2 with the steps' ciphertext a slice of its commit's stream (SealedSliceSchema). */
    3: () => z.object({ steps: z.array(reusedStepV1().omit({ request: true, result: true })), sealed: SealedSliceSchema }),
  }),
  /**
   * A public key admitted to the plane's keyring: checkpoints it signs over this journal are the
   * plane's (offline verify refuses one signed by a key never admitted). Each instance of a team
   * plane admits its own key when it first serves the journal.
   */
  KeyAdmitted: lazyEntries({
    1: () => z.object({ keyId: z.string().min(1), publicJwk: z.record(z.string(), z.unknown()), instance: z.string().min(1) }),
  }),
  /**
   * A key retired from the keyring: a checkpoint it signs over more records than the journal
   * held when it was retired is refused; what it signed before stays valid.
   */
  KeyRetired: lazyEntries({
    1: () => z.object({ keyId: z.string().min(1), by: z.string().min(1), reason: z.string().optional() }),
  }),
  /**
   * A subject's data keys destroyed (docs/ERASURE.md): every payload sealed under them can no
   * longer be read, and reads as erased by `by` at this record's time because of `reason`. The
   * sealed records stay as written, so every hash, checkpoint and export still verifies.
   * `keys` names each key destroyed and the month it served; `retention` is set when the
   * plane's retention (not a person) erased them.
   */
  SubjectErased: lazyEntries({
    1: () =>
      z.object({
        subject: z.string().min(1),
        keys: z.array(z.object({ key: z.string().regex(/^[0-9a-f]{32}$/), period: z.string() })),
        by: z.string().min(1),
        reason: z.string().max(500),
        retention: z.object({ days: z.number().int().positive() }).optional(),
      }),
  }),
  /** A legal hold placed on a subject or a case: while it stands, neither erase nor retention destroys their keys. */
  HoldPlaced: lazyEntries({
    1: () =>
      z.object({
        holdId: z.string().min(1),
        target: z.object({ kind: HoldTargetKindSchema, id: z.string().min(1) }),
        by: z.string().min(1),
        reason: z.string().max(500).optional(),
      }),
  }),
  /** A legal hold lifted (it names the HoldPlaced's holdId). */
  HoldLifted: lazyEntries({
    1: () => z.object({ holdId: z.string().min(1), by: z.string().min(1), reason: z.string().max(500).optional() }),
  }),
} as const;

export type RecordKind = keyof typeof recordBodies;
export const recordKinds = Object.keys(recordBodies) as RecordKind[];

/** The version writers use for each kind (readers accept every version in recordBodies). */
export const CURRENT_VERSION = {
  RunAdmitted: 1,
  AdmissionRefused: 1,
  EffectStarted: 1,
  EffectDone: 1,
  EffectFailed: 1,
  BudgetVerdict: 1,
  Suspended: 1,
  Decision: 2,
  Cancelled: 1,
  HaltApplied: 1,
  RunSealed: 1,
  Observation: 1,
  CaseBound: 1,
  PeerLifecycle: 1,
  RunAdopted: 1,
  KeyAdmitted: 1,
  KeyRetired: 1,
  RunForked: 1,
  EffectReused: 1,
  ProvenanceVerdict: 1,
  SubjectErased: 1,
  HoldPlaced: 1,
  HoldLifted: 1,
} as const satisfies { [K in RecordKind]: keyof (typeof recordBodies)[K] };

/**
 * The kinds whose payload a data dir that seals payloads (docs/ERASURE.md) writes sealed, the
 * version it writes them at (`v`), the first version that held them sealed (`since`: every
 * version from it to `v` is sealed, and read), the first holding a slice of a stream (`slices`),
 * and the fields those versions move into `sealed`.
 * Every other field stays clear: kinds, steps, keys, spend and the owner are what the journal's
 * indexes, verify and the run list read, and none of them is what a person typed or a model answered.
 */
export const SEALED_VERSION = {
  RunAdmitted: { v: 3, since: 2, slices: 3, fields: ['input'] },
  EffectStarted: { v: 3, since: 2, slices: 3, fields: ['request'] },
  EffectDone: { v: 3, since: 2, slices: 3, fields: ['result'] },
  RunSealed: { v: 3, since: 2, slices: 3, fields: ['result'] },
  /** Each of `steps`' request and result. */
  EffectReused: { v: 3, since: 2, slices: 3, fields: ['request', 'result'], within: 'steps' },
  Suspended: { v: 2, since: 2, slices: 2, fields: ['subject'] },
  Decision: { v: 3, since: 3, slices: 3, fields: ['value', 'reason'] },
} as const satisfies { [K in RecordKind]?: { v: keyof (typeof recordBodies)[K]; since: keyof (typeof recordBodies)[K]; slices: keyof (typeof recordBodies)[K]; fields: readonly string[]; within?: string } };
export type SealedKind = keyof typeof SEALED_VERSION;

/** Whether a sealed record of this kind and version holds its payload as a slice of a stream (SealedSliceSchema), from its kind's `slices` version on, not as a payload of its own (SealedPayloadSchema). */
export function sealedAsSlice(kind: string, v: number): boolean {
  return Object.hasOwn(SEALED_VERSION, kind) && v >= SEALED_VERSION[kind as SealedKind].slices;
}

/** The fields a record of this kind and version holds sealed, or null when it holds none sealed. */
export function sealedFieldsOf(kind: string, v: number): readonly string[] | null {
  const sealed = Object.hasOwn(SEALED_VERSION, kind) ? SEALED_VERSION[kind as SealedKind] : undefined;
  return sealed !== undefined && v >= sealed.since && v <= sealed.v ? sealed.fields : null;
}

/** The array field whose items hold the sealed fields (EffectReused's `steps`), or null when they are the body's own. */
export function sealedWithin(kind: string): string | null {
  const sealed = Object.hasOwn(SEALED_VERSION, kind) ? (SEALED_VERSION[kind as SealedKind] as { within?: string }) : undefined;
  return sealed?.within ?? null;
}

/**
 * What a reader finds in place of a sealed payload whose key was destroyed (an opened body's
 * `erased`), or whose key this data dir does not hold (`erased` absent, `sealedUnreadable` set).
 */
export const ErasedPayloadSchema = z.object({ at: z.string(), by: z.string(), reason: z.string() });
export type ErasedPayload = z.infer<typeof ErasedPayloadSchema>;

type Bodies = typeof recordBodies;
/** The body a writer writes now, by kind: the kind's schema at its CURRENT_VERSION. */
type CurrentBodies = { [K in RecordKind]: z.infer<Extract<Bodies[K][keyof Bodies[K] & (typeof CURRENT_VERSION)[K]], z.ZodType>> };
export type RecordBody<K extends RecordKind> = CurrentBodies[K];

/**
 * The body a writer hands the journal: RecordBody, but a failure's code is one of FailureCode
 * (or one read back from a record, for a replayed failure), where a reader reads any string
 * (see ErrorInfo). Every WrittenBody is a RecordBody.
 */
type WrittenBodies = Omit<CurrentBodies, 'EffectFailed' | 'RunSealed'> & {
  EffectFailed: Omit<CurrentBodies['EffectFailed'], 'error'> & { error: FailureInfo };
  RunSealed: Omit<CurrentBodies['RunSealed'], 'error'> & { error?: FailureInfo };
};
export type WrittenBody<K extends RecordKind> = WrittenBodies[K];

/** A Decision as written before its value was tagged (read from older journals only). */
export type DecisionV1Body = z.infer<(typeof recordBodies)['Decision'][1]>;

/** The envelope every reader understands, whatever the kind. */

/** What a writer hands the journal: the store assigns seq, time and the hashes. */
export interface RecordDraft<K extends RecordKind = RecordKind> {
  runId: string | null;
  kind: K;
  body: WrittenBody<K>;
}

/** Any one draft, as a union over kinds (so a batch may mix kinds and stay type-checked). */
export type AnyRecordDraft = { [K in RecordKind]: RecordDraft<K> }[RecordKind];

/**
 * Why this build cannot read a record of this kind and version (newer than it), or null when it
 * can, without parsing the body: what a reader that shows records as written needs (the
 * journal's record view, which used to parse every body with zod only to discard the result).
 */
export function unknownVersion(kind: string, v: number): string | null {
  if (!Object.hasOwn(recordBodies, kind)) return `record kind ${kind} is newer than this AgentPlane`;
  if (!recordSchema(kind, v)) return `${kind} v${v} is newer than this AgentPlane`;
  return null;
}

function recordSchema(kind: string, v: number): z.ZodType | undefined {
  return Object.hasOwn(recordBodies, kind) ? (recordBodies as Record<string, Record<number, z.ZodType>>)[kind]![v] : undefined;
}

export type BodyCheck = { known: true; body: Record<string, unknown> } | { known: false; why: string } | { known: true; invalid: string };

/**
 * Checks a body against its kind's schema. An unknown kind or version is `known: false` (shown
 * as such, never rejected); a known kind whose body does not match is `invalid`.
 */
export function checkRecordBody(kind: string, v: number, body: unknown): BodyCheck {
  const why = unknownVersion(kind, v);
  if (why !== null) return { known: false, why };
  const parsed = recordSchema(kind, v)!.safeParse(body);
  if (!parsed.success) return { known: true, invalid: parsed.error.issues.map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`).join('; ') };
  return { known: true, body: parsed.data as Record<string, unknown> };
}

/** Each schema's quick yes (fast-body-check.ts), compiled the first time a body of it is written; null: zod only. */
const quickYes = new Map<z.ZodType, BodyPredicate | null>();

/**
 * Why a writer may not write this body (its kind or version unknown to this build, or the body
 * not what the schema says), or null when it may: checkRecordBody's verdict without zod's parsed
 * copy, which a writer does not use (it writes the body it was given). A body the schema's quick
 * yes accepts is not walked by zod at all; anything else is, and zod's message is the answer.
 */
export function recordBodyProblem(kind: string, v: number, body: unknown): string | null {
  const why = unknownVersion(kind, v);
  if (why !== null) return why;
  const schema = recordSchema(kind, v)!;
  let quick = quickYes.get(schema);
  if (quick === undefined) {
    quick = compileBodyPredicate(schema);
    quickYes.set(schema, quick);
  }
  if (quick?.(body)) return null;
  const check = checkRecordBody(kind, v, body);
  return 'invalid' in check ? check.invalid : null;
}
