/**
 * The one IPC contract. Every command the UI (or the CLI, or a script over the web bridge)
 * can send is a name mapped to `{request, response}` zod schemas, and every event a name
 * mapped to its payload schema. Types are inferred from the schemas, never written beside
 * them. Main registers a handler for every command through `CommandHandlers` (a mapped type:
 * a missing handler is a compile error); the preload and the web client are both built by
 * iterating this object, so a command exists on every transport or on none.
 *
 * Everything here is plain JSON: no Date, Map or class instances cross a boundary. Times are
 * ISO-8601 strings, durations milliseconds.
 */
import { z } from 'zod';
import { deferred } from '../deferred-schema';
import { lazyEntries } from '../lazy-entries';
import { HashHexSchema, JournalRecordSchema } from '../journal/record-envelope';
import { DecisionSchema, DecisionValueSchema, PermissionOutcomeSchema, RecoveryResolutionSchema } from '../vocabulary/decisions';
import { PeerIdSchema, RunIdSchema, WaitIdSchema } from '../vocabulary/ids';
import { NewPeerSchema, PeerAuthModeSchema, PeerStatusSchema, SessionRowSchema, IdentityRowSchema, TokenIssuerTrustSchema } from '../vocabulary/peers';
import { RunOutcomeSchema, RunStatusSchema } from '../vocabulary/runs';
import { BudgetSchema, SpendSchema } from '../vocabulary/spend';
import { AgentWaitSchema, RecordedWaitSubjectSchema, WaitReasonSchema } from '../vocabulary/waits';
import { SessionSummarySchema, SessionViewSchema } from '../protocol/acp/session-view';
import { TranscriptLineSchema } from '../protocol/acp/evidence';
import { AuditSchema, CaseBindingSchema, CaseIdSchema, CaseRowSchema } from '../protocol/acp/cases';
import { ErasureReasonSchema, ErasureSchema, ErasureSettingsSchema, HoldSchema, RetentionDaysSchema, RetentionPassSchema, SubjectIdSchema } from '../protocol/erasure';
import { McpEndpointViewSchema, McpServerConfigSchema, McpServerNameSchema, McpServerViewSchema } from '../protocol/mcp';
import { A2aRemotesRequestSchema, A2aRemotesSchema } from '../protocol/a2a';
import { NetAllowEntrySchema, NetAllowListSchema, NetOriginInputSchema } from '../protocol/net-allow';
import { WitnessStatusSchema } from '../protocol/witness';
import { DiffRequestSchema, ForkRequestSchema, ReplayRequestSchema, ReplayReportSchema, RunDiffSchema } from '../protocol/time-travel';
import { ProviderModelSchema, ProviderSetRequestSchema, ProvidersListSchema, ProviderTestResultSchema, ProviderViewSchema, SettableProviderSchema } from '../protocol/providers';

/** One origin's pinned A2A card key: its id and when, never more (protocols/a2a/client/a2a-pins.ts). */
const A2aPinViewSchema = deferred(() => z.object({ origin: z.string(), keyId: z.string(), pinnedAt: z.string(), pending: z.object({ keyId: z.string(), seenAt: z.string() }).optional() }));

const Empty = deferred(() => z.object({}).strict());

export const PlaneStatusSchema = deferred(() => z.object({
  version: z.string(),
  dataDir: z.string(),
  /** Where the journal is: the data dir's SQLite file, or the shared PostgreSQL database's URL with its password masked. */
  journal: z.string(),
  /** On a shared journal (a team plane), this instance's runtime host: `plane@<instance id>`. */
  instance: z.string().optional(),
  /** ISO-8601 instant the plane finished starting. */
  startedAt: z.string(),
  uptimeMs: z.number().int().nonnegative(),
  /** Which face is hosting this plane. */
  host: z.enum(['electron', 'headless']),
  state: z.enum(['running', 'stopping']),
}));
export type PlaneStatus = z.infer<typeof PlaneStatusSchema>;

export const PeerSummarySchema = deferred(() => z.object({
  id: PeerIdSchema,
  name: z.string(),
  status: PeerStatusSchema,
  /** `mcpv2://host:port/mcpv2` while running. */
  address: z.string().nullable(),
  port: z.number().int(),
  publicIp: z.string(),
  llmMode: z.boolean(),
  auth: PeerAuthModeSchema,
  revoked: z.boolean(),
  pid: z.number().int().nullable(),
  startedAt: z.string().nullable(),
  /** Why it failed to start or stopped unexpectedly. */
  error: z.string().nullable(),
  /** Which peers may call which of its skills. */
  allow: z.record(z.string(), z.array(z.string())),
}));
export type PeerSummary = z.infer<typeof PeerSummarySchema>;

/** A run as the journal lists it (derived from its records, never stored beside them). */
export const RunSummarySchema = deferred(() => z.object({
  runId: z.string(),
  agent: z.string().nullable(),
  firstSeq: z.number().int(),
  lastSeq: z.number().int(),
  records: z.number().int(),
  startedAt: z.string(),
  lastAt: z.string(),
  lastKind: z.string(),
}));
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** A record as the UI shows it: the envelope, and whether this build knows its kind. */
export const RecordViewSchema = deferred(() => JournalRecordSchema.extend({
  known: z.boolean(),
  /** Why the body is shown raw: a kind or version from a newer AgentPlane. */
  note: z.string().optional(),
  /**
   * A sealed record's body as stored and hashed (docs/ERASURE.md), where `body` is what it opens
   * to (its payload, or `erased`): what a hash check recomputes from.
   */
  stored: z.record(z.string(), z.unknown()).optional(),
}));
export type RecordView = z.infer<typeof RecordViewSchema>;

export const VerifyReportSchema = deferred(() => z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    /** Records verified and covered by a signed checkpoint (seqs 1..count), and that signed root. */
    count: z.number().int(),
    root: z.string(),
    checkpointSize: z.number().int(),
    /** Records after the newest signed checkpoint: chained, vouched for by nobody yet, not in `count`. */
    unsigned: z.number().int(),
    /** Their seqs, present only when there are any (signed at the data dir's next open or checkpoint). */
    unsignedTail: z.object({ fromSeq: z.number().int(), toSeq: z.number().int() }).optional(),
    unknownKinds: z.number().int(),
  }),
  z.object({ ok: z.literal(false), seq: z.number().int().nullable(), reason: z.string(), count: z.number().int() }),
]));
export type VerifyReportView = z.infer<typeof VerifyReportSchema>;

export const AgentSummarySchema = deferred(() => z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  grants: z.array(z.object({ kind: z.string(), name: z.string(), approve: z.boolean() })),
  budget: BudgetSchema,
  source: z.string(),
  /** The system prompts of its model steps, verbatim and in step order (absent: not declared by this door). */
  systemPrompts: z.array(z.string()).optional(),
  /** Why its runs may wait for a person (vocabulary/waits.ts); absent: this door does not say. */
  mayWaitFor: z.array(AgentWaitSchema).optional(),
}));
export type AgentSummary = z.infer<typeof AgentSummarySchema>;

/** An agent file of the person's (<data dir>/agents) that does not load: not runnable, shown with what to fix. */
export const BrokenAgentSchema = deferred(() => z.object({
  /** The name the file declares when it can be read, else the file's name without its extension. */
  name: z.string(),
  /** The file. */
  source: z.string(),
  /** The field at fault, dotted (`input`, `steps.0.model.prompt`); null for the file as a whole. */
  field: z.string().nullable(),
  /** The line at fault, for a file that does not parse. */
  line: z.number().int().nullable(),
  /** What is wrong and how to fix it. */
  problem: z.string(),
}));
export type BrokenAgent = z.infer<typeof BrokenAgentSchema>;

/** The agents a plane can run and the agent files it could not load: `agents.list`, and the `agents.changed` event. */
export const AgentsViewSchema = deferred(() => z.object({ agents: z.array(AgentSummarySchema), broken: z.array(BrokenAgentSchema) }));
export type AgentsView = z.infer<typeof AgentsViewSchema>;

export const WaitSchema = deferred(() => z.object({
  waitId: WaitIdSchema,
  reason: WaitReasonSchema,
  step: z.number().int(),
  /**
   * Exactly what is asked: the effect, its arguments, what it may cost, for whom; its `kind` is
   * `reason`. A subject this build does not recognise (another version's) comes as
   * `{kind: 'unrecognized', raw}`, to be shown as it is.
   */
  subject: RecordedWaitSubjectSchema,
  subjectHash: z.string(),
  since: z.string(),
  seq: z.number().int(),
  snoozedUntil: z.string().optional(),
}));
export type Wait = z.infer<typeof WaitSchema>;

export const RunViewSchema = deferred(() => z.object({
  runId: RunIdSchema,
  agent: z.string(),
  owner: z.string(),
  chain: z.array(z.string()),
  /** Which process executes it: `plane`, or `peer:<id>` for a peer's skill run. */
  host: z.string(),
  /**
   * The context the run continues (`runs.start`'s `context`: the id of the run that opened it).
   * Absent: the run is its own context, i.e. its context is its own runId.
   */
  context: RunIdSchema.optional(),
  status: RunStatusSchema,
  outcome: RunOutcomeSchema.nullable(),
  admittedAt: z.string(),
  lastAt: z.string(),
  records: z.number().int(),
  lastSeq: z.number().int(),
  spend: SpendSchema,
  budget: BudgetSchema,
  pending: WaitSchema.nullable(),
  result: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /** A fork (`runs.fork`): its parent run and the first step it performed live. */
  forkOf: z.object({ runId: RunIdSchema, step: z.number().int().nonnegative() }).optional(),
  /** Its owner's payloads erased (docs/ERASURE.md): when, by whom and why; its input and result are gone. */
  erased: z.object({ at: z.string(), by: z.string(), reason: z.string() }).optional(),
}));
export type RunView = z.infer<typeof RunViewSchema>;

/**
 * One end of a call between runs: a plane run's peer call and the skill run the peer admitted
 * for it. `confirmed`: the caller's own record at `step` is a call to that peer and skill made
 * before the callee was admitted (the callee's parent is otherwise only the caller's claim).
 */
export const RunLinkSchema = deferred(() => z.object({
  runId: z.string(),
  agent: z.string(),
  host: z.string(),
  step: z.number().int().nullable(),
  confirmed: z.boolean(),
  status: RunStatusSchema,
  outcome: RunOutcomeSchema.nullable(),
}));
export type RunLink = z.infer<typeof RunLinkSchema>;
export const RunLinksSchema = deferred(() => z.object({ calledBy: RunLinkSchema.nullable(), calls: z.array(RunLinkSchema) }));
export type RunLinks = z.infer<typeof RunLinksSchema>;

/**
 * What one commit (or one catch-up) did to a run, as far as its records say without folding
 * the run: the kind of its last record there, and the status that record leaves it in
 * (RunSealed: sealed with its outcome; Suspended or a snooze: suspended; anything else:
 * running). A client re-reads the run (`runs.get`) for everything else.
 */
export const RunChangeSchema = deferred(() => z.object({
  runId: z.string(),
  kind: z.string(),
  status: RunStatusSchema,
  outcome: RunOutcomeSchema.nullable(),
}));
export type RunChange = z.infer<typeof RunChangeSchema>;

/** What the journal gained after a seq (`journal.changes`): the resume answer of every client. */
export const JournalChangesSchema = deferred(() => z.object({
  /** Which journal this is: a client that followed another one re-reads everything. */
  journalId: z.string(),
  head: z.number().int().nonnegative(),
  runs: z.array(RunChangeSchema),
  /** Too much changed to list (or the client's seq is not this journal's): re-read every view. */
  truncated: z.boolean(),
}));
export type JournalChanges = z.infer<typeof JournalChangesSchema>;

export const SpendRowSchema = deferred(() => z.object({
  /** The agent's name, `peer:<id>`, or the run id, by the table it is in. */
  key: z.string(),
  runs: z.number().int(),
  spend: SpendSchema,
  /** The ceiling it is held against, where one applies (a run's budget). */
  budget: BudgetSchema.optional(),
}));

/**
 * Payment intents in one currency, folded from the journal: requests still waiting for a person
 * (`pending`), approved intents (`approved`, an EffectDone of a payment effect) and what actually
 * moved (`moved`: results that say so; AgentPlane moves no money, so 0 today). Never model cost.
 */
export const PaymentIntentsRowSchema = deferred(() => z.object({
  currency: z.string(),
  pending: z.number(),
  pendingCount: z.number().int(),
  approved: z.number(),
  approvedCount: z.number().int(),
  moved: z.number(),
}));
export type PaymentIntentsRow = z.infer<typeof PaymentIntentsRowSchema>;

export const SpendSummarySchema = deferred(() => z.object({
  /** Payment intents by currency, kept apart from model and effect spend. */
  paymentIntents: z.array(PaymentIntentsRowSchema),
  byAgent: z.array(SpendRowSchema),
  byPeer: z.array(SpendRowSchema),
  byRun: z.array(SpendRowSchema),
  /** Cumulative spend over time, one point per run end (or per run start while running). */
  timeline: z.array(z.object({ at: z.string(), tokens: z.number().int(), costMicros: z.number().int(), effects: z.number().int() })),
  total: SpendSchema,
}));
export type SpendSummary = z.infer<typeof SpendSummarySchema>;

/**
 * One observation the ACP tap sends (`acp.record`): an Observation body's `update` and
 * `detail`; the plane adds `source` and `sessionId`. The detail is the observed party's
 * account, kept as sent (already redacted and capped by the tap).
 */
export const AcpObservationDraftSchema = deferred(() => z.object({ update: z.string().min(1).max(64), detail: z.unknown() }).strict());
export type AcpObservationDraft = z.infer<typeof AcpObservationDraftSchema>;

/** A folded session (src-shared/protocol/acp/session-fold.ts), checked on arrival like every other answer. */
export const AcpSessionSummarySchema = SessionSummarySchema;
export const AcpSessionViewSchema = SessionViewSchema;

// The contract's commands are about two hundred zod schemas, and every process that loads the
// contract (each CLI call, `serve`, the page in every window) needs only the few it sends or
// answers: each command's are built on its first use (lazy-entries.ts).
export const commands = lazyEntries({
  'plane.status': () => ({ request: Empty, response: PlaneStatusSchema }),
  'peers.list': () => ({ request: Empty, response: z.object({ peers: z.array(PeerSummarySchema) }) }),
  /**
   * What a client asks on every (re)connect: which runs changed after the last journal seq it
   * saw (null: it has seen none). Past a cap, or for a seq this journal never reached, the
   * answer is `truncated` and the client re-reads its views instead.
   */
  'journal.changes': () => ({
    request: z.object({ afterSeq: z.number().int().nonnegative().nullable() }).strict(),
    response: JournalChangesSchema,
  }),
  'journal.runs': () => ({
    request: z.object({ limit: z.number().int().min(1).max(1000).default(200) }).strict(),
    response: z.object({ runs: z.array(RunSummarySchema) }),
  }),
  /**
   * Records in seq order: one run's (runId set) or all (runId null), from fromSeq, at most limit.
   * With a run, `position` starts at the run's record at that place in it (0: its first) instead
   * of fromSeq: where a run's records are interleaved with others', a place far into it is one
   * read away, not a read of every record before it.
   */
  'journal.records': () => ({
    request: z
      .object({
        runId: RunIdSchema.nullable().default(null),
        fromSeq: z.number().int().min(1).default(1),
        position: z.number().int().min(0).optional(),
        limit: z.number().int().min(1).max(5000).default(500),
      })
      .strict()
      .refine((r) => r.position === undefined || r.runId !== null, { message: 'position is a place in one run: give runId too', path: ['runId'] }),
    response: z.object({
      records: z.array(RecordViewSchema),
      /** Where the next page starts (null: nothing more now). */
      nextSeq: z.number().int().nullable(),
      headSeq: z.number().int(),
    }),
  }),
  /** Verifies the whole journal of this data dir against its signed checkpoints. */
  'journal.verify': () => ({ request: Empty, response: VerifyReportSchema }),

  /** The agents this plane can run, and the agent files it could not load (each with its file, field and fix). */
  'agents.list': () => ({ request: Empty, response: AgentsViewSchema }),
  /**
   * Reads <data dir>/agents again now (the plane also watches it): by agent name, what became
   * runnable (`added`), what still runs from a changed file (`changed`) and what no longer runs
   * (`removed`: its file gone or now broken), and every file that does not load. A person's command only.
   */
  'agents.reload': () => ({
    request: Empty,
    response: z.object({ added: z.array(z.string()), changed: z.array(z.string()), removed: z.array(z.string()), broken: z.array(BrokenAgentSchema) }),
  }),
  /**
   * The newest runs (by last activity). With `owner`: that owner's runs only, newest admission
   * first, read through the journal's index of each owner's admissions (another owner's runs are
   * never read), with `total` and a cursor; `context`, `activeSince` and `beforeSeq` read that
   * index and so go with `owner`. `status` is applied to the page after reading (it needs each
   * run folded), so it is not part of `total`.
   */
  'runs.list': () => ({
    request: z
      .object({
        limit: z.number().int().min(1).max(1000).default(200),
        agent: z.string().optional(),
        status: RunStatusSchema.optional(),
        owner: z.string().min(1).optional(),
        /** `plane` or `peer:<id>`. */
        host: z.string().min(1).optional(),
        /** The runs of one context: its opening run and the runs started into it. */
        context: RunIdSchema.optional(),
        /** Runs with a record at or after this ISO time, whenever they were admitted. */
        activeSince: z.iso.datetime({ offset: true }).optional(),
        /** The previous page's `nextBeforeSeq`. */
        beforeSeq: z.number().int().min(1).optional(),
      })
      .strict()
      .refine((r) => r.owner !== undefined || (r.context === undefined && r.activeSince === undefined && r.beforeSeq === undefined), {
        message: 'context, activeSince and beforeSeq read the index of one owner\'s runs: give owner too',
        path: ['owner'],
      }),
    response: z.object({
      runs: z.array(RunViewSchema),
      /** With `owner`: how many runs match every filter but `status`, `limit` and `beforeSeq` (exact, counted from the index). */
      total: z.number().int().nonnegative().optional(),
      /** With `owner`, when more runs follow this page: pass it as `beforeSeq` for the next. */
      nextBeforeSeq: z.number().int().optional(),
    }),
  }),
  'runs.get': () => ({ request: z.object({ runId: RunIdSchema }).strict(), response: RunViewSchema }),
  /** The run that called this one (its peer call) and the runs this one's peer calls admitted. */
  'runs.links': () => ({ request: z.object({ runId: RunIdSchema }).strict(), response: RunLinksSchema }),
  /** Admits a run (policy first) and returns at once; `runs.get` or the events follow it. */
  'runs.start': () => ({
    request: z
      .object({
        agent: z.string().min(1),
        input: z.unknown().default({}),
        wait: z.boolean().default(false),
        /** Continue a context: the id of the run that opened it, admitted for the same caller (refused otherwise). */
        context: RunIdSchema.optional(),
        /** The input's sensitivity label (one of the plane's labels; docs/GOVERNED-RUNTIME.md, "Sensitivity"); absent: the agent's declared one, else the lowest. */
        sensitivity: z.string().min(1).max(64).optional(),
      })
      .strict(),
    response: RunViewSchema,
  }),
  'runs.cancel': () => ({ request: z.object({ runId: RunIdSchema, reason: z.string().max(500).optional() }).strict(), response: RunViewSchema }),
  /**
   * A new run of the same agent, linked to its parent: every step before `at` is answered from
   * the parent's record (nothing performed, nothing spent), each step from `at` on is performed
   * live under today's policy, grants and budgets (docs/GOVERNED-RUNTIME.md, "Fork, replay, diff").
   */
  'runs.fork': () => ({ request: ForkRequestSchema, response: RunViewSchema }),
  /** Replays a recorded run against a changed manifest, input or model, performing nothing: where it would first diverge, and why. */
  'runs.replay': () => ({ request: ReplayRequestSchema, response: ReplayReportSchema }),
  /** Two runs step by step: where they part, which steps a fork took from its parent, spend of each and the difference. */
  'runs.diff': () => ({ request: DiffRequestSchema, response: RunDiffSchema }),
  /** Every run waiting for a person, whatever suspended it. */
  'approvals.list': () => ({ request: Empty, response: z.object({ waiting: z.array(RunViewSchema) }) }),
  'approvals.decide': () => ({
    request: z
      .object({
        runId: RunIdSchema,
        waitId: WaitIdSchema,
        decision: DecisionSchema,
        /** The hash of what was shown: approving anything else is refused. */
        subjectHash: HashHexSchema,
        reason: z.string().max(2000).optional(),
        until: z.string().optional(),
        /** With an approval of a budget, input or recovery wait: what the person supplies, tagged with that reason. */
        value: DecisionValueSchema.optional(),
      })
      .strict(),
    response: RunViewSchema,
  }),
  /**
   * A protocol caller's answer to the question its OWN run asks (an input wait), sent as a
   * message (A2A: a message naming its task). Not a person's decision: approving an effect,
   * raising a budget or resolving an in-doubt effect stays `approvals.decide` at this plane.
   * The caller and `messageId` are the answer's identity: the same message again answers the
   * run as it stands (`repeated`) and journals nothing. Refused for a person (no protocol caller).
   */
  'runs.answer': () => ({
    request: z
      .object({
        runId: RunIdSchema,
        /** The wait answered; absent: the one the run stands on now. */
        waitId: WaitIdSchema.optional(),
        messageId: z.string().min(1).max(200),
        input: z.unknown(),
      })
      .strict(),
    response: z.object({ run: RunViewSchema, repeated: z.boolean() }),
  }),
  /** Runs waiting because an effect is in doubt (the plane stopped while it was in flight). */
  'recovery.list': () => ({ request: Empty, response: z.object({ waiting: z.array(RunViewSchema) }) }),
  'recovery.resolve': () => ({
    request: z
      .object({
        runId: RunIdSchema,
        waitId: WaitIdSchema,
        subjectHash: HashHexSchema,
        resolution: RecoveryResolutionSchema,
        result: z.unknown().optional(),
        reason: z.string().max(2000).optional(),
      })
      .strict(),
    response: RunViewSchema,
  }),
  'peers.create': () => ({ request: NewPeerSchema, response: PeerSummarySchema }),
  'peers.start': () => ({ request: z.object({ id: PeerIdSchema }).strict(), response: PeerSummarySchema }),
  'peers.stop': () => ({ request: z.object({ id: PeerIdSchema }).strict(), response: PeerSummarySchema }),
  'peers.restart': () => ({ request: z.object({ id: PeerIdSchema }).strict(), response: PeerSummarySchema }),
  /** A running peer's shared-secret sessions and the identity credentials in use, with their use. */
  'peers.sessions': () => ({
    request: z.object({ id: PeerIdSchema }).strict(),
    response: z.object({ sessions: z.array(SessionRowSchema), identities: z.array(IdentityRowSchema) }),
  }),
  /** Opens a session on a running peer and pings with it: the round trip and the session's label. */
  'peers.ping': () => ({ request: z.object({ id: PeerIdSchema }).strict(), response: z.object({ label: z.string(), latencyMs: z.number().nonnegative() }) }),
  'peers.revokeSession': () => ({ request: z.object({ id: PeerIdSchema, label: z.string() }).strict(), response: z.object({ revoked: z.boolean() }) }),
  /** Lets peer `caller` call `skills` of peer `callee` (identity mode). */
  'peers.allow': () => ({ request: z.object({ callee: PeerIdSchema, caller: PeerIdSchema, skills: z.array(z.string().min(1)) }).strict(), response: PeerSummarySchema }),
  /**
   * Peer `from` calls a skill of peer `to` with its own identity: a credential signed with
   * `from`'s key for `to` alone. What `to` may be asked is the registry's allow list.
   */
  'peers.call': () => ({
    request: z.object({ from: PeerIdSchema, to: PeerIdSchema, skill: z.string().min(1), arguments: z.record(z.string(), z.unknown()).default({}) }).strict(),
    response: z.object({ result: z.unknown() }),
  }),
  /**
   * Makes a peer accept only a token issuer's delegated access tokens (`trust`), or, with null,
   * what its auth mode says again (docs/SECURITY.md, "Delegated credentials").
   */
  'peers.trustIssuer': () => ({ request: z.object({ id: PeerIdSchema, trust: TokenIssuerTrustSchema.nullable() }).strict(), response: PeerSummarySchema }),
  /** Revokes a peer's identity: it may call nothing and be called by nobody, and cannot start. */
  'peers.revoke': () => ({ request: z.object({ id: PeerIdSchema }).strict(), response: PeerSummarySchema }),
  /** Spend per agent, per peer and per run, against ceilings, and over time. */
  'spend.summary': () => ({ request: z.object({ limit: z.number().int().min(1).max(1000).default(500) }).strict(), response: SpendSummarySchema }),
  /** A run as a self-contained, verifiable bundle (JSONL text), for the UI to save. */
  'journal.exportRun': () => ({
    request: z.object({ runId: RunIdSchema }).strict(),
    response: z.object({ fileName: z.string(), content: z.string(), records: z.number().int(), rootHash: z.string() }),
  }),
  'halts.list': () => ({ request: Empty, response: z.object({ scopes: z.array(z.string()) }) }),
  'halts.apply': () => ({ request: z.object({ scope: z.string().min(1), reason: z.string().max(500).optional() }).strict(), response: z.object({ scopes: z.array(z.string()) }) }),
  'halts.lift': () => ({ request: z.object({ scope: z.string().min(1) }).strict(), response: z.object({ scopes: z.array(z.string()) }) }),
  /**
   * From `agentplane acp tap`: observations of one ACP session's run, appended in one commit,
   * the run sealed as `observed` after them when `seal` is given. Only a run the tap began: a new
   * run id's first observation is tap/started; an existing run must start with an acp
   * Observation and not be sealed.
   */
  'acp.record': () => ({
    request: z
      .object({
        runId: RunIdSchema,
        sessionId: z.string().max(1024),
        observations: z.array(AcpObservationDraftSchema).max(1000),
        /** Presentation the journal leaves out (src-shared/protocol/acp/evidence.ts): kept in the transcript store, before the observations. */
        transcript: z.array(TranscriptLineSchema).max(1000).optional(),
        seal: z.object({ result: z.unknown() }).strict().optional(),
      })
      .strict(),
    response: z.object({ seq: z.number().int().nonnegative(), records: z.number().int().nonnegative() }),
  }),
  /** Observed ACP sessions, the most recently active first. */
  'acp.sessions': () => ({
    request: z.object({ limit: z.number().int().min(1).max(500).default(100) }).strict(),
    response: z.object({ sessions: z.array(AcpSessionSummarySchema) }),
  }),
  /** One observed session, folded. */
  'acp.session': () => ({ request: z.object({ runId: RunIdSchema }).strict(), response: AcpSessionViewSchema }),
  /**
   * A person answers an open permission request of a session tapped with `--policy inbox`: the
   * plane journals the answer (a `decision` observation) and the tap, which polls
   * `acp.decisions`, gives it to the agent unless the editor answered first.
   */
  'acp.answer': () => ({
    request: z
      .object({
        runId: RunIdSchema,
        requestKey: z.string().min(1).max(300),
        outcome: PermissionOutcomeSchema,
        optionId: z.string().min(1).max(300).optional(),
      })
      .strict(),
    response: z.object({ seq: z.number().int().positive() }),
  }),
  /**
   * Erases the transcript (not the journal) of an ACP session, every run of it: the conversation
   * people read goes; the evidence, and the journal's count of what it left out, stay.
   */
  'acp.transcriptErase': () => ({
    request: z.object({ sessionId: z.string().min(1).max(1024) }).strict(),
    response: z.object({ sessionId: z.string(), runIds: z.array(z.string()), lines: z.number().int().nonnegative() }),
  }),
  /** The transcript store's retention in days (set when `days` is given, and applied at once: `removed` lines went). */
  'acp.transcriptRetention': () => ({
    request: z.object({ days: z.number().int().min(1).max(3650).optional() }).strict(),
    response: z.object({ days: z.number().int().positive(), removed: z.number().int().nonnegative() }),
  }),
  /** Binds an observed ACP session (every run of it, found by its session id) to a case: a CaseBound record. */
  'cases.bind': () => ({
    request: z.object({ caseId: CaseIdSchema, sessionId: z.string().min(1).max(1024), note: z.string().max(500).optional() }).strict(),
    response: CaseBindingSchema,
  }),
  /** Every case with a binding, the most recently bound first. */
  'cases.list': () => ({
    request: z.object({ limit: z.number().int().min(1).max(1000).default(200) }).strict(),
    response: z.object({ cases: z.array(CaseRowSchema) }),
  }),
  /** One case's bindings, in the order they were journaled. */
  'cases.show': () => ({
    request: z.object({ caseId: CaseIdSchema }).strict(),
    response: z.object({ caseId: z.string(), bindings: z.array(CaseBindingSchema) }),
  }),
  /** Runs the plane admitted, counted, beside the observed runs nothing admitted, listed as unadmitted. */
  'audit.runs': () => ({
    request: z.object({ limit: z.number().int().min(1).max(1000).default(200) }).strict(),
    response: AuditSchema,
  }),
  /**
   * Erases a subject (docs/ERASURE.md): its data keys destroyed and a SubjectErased record
   * journaled; every payload sealed under them then reads as erased. Refused for a subject under
   * a legal hold (naming the hold) and for one with no sealed payload here.
   */
  'erasure.erase': () => ({
    request: z.object({ subject: SubjectIdSchema, reason: ErasureReasonSchema.optional() }).strict(),
    response: ErasureSchema,
  }),
  /** The data dir's erasure settings (sealing of new payloads, retention in days; null: none), set when given. */
  'erasure.settings': () => ({
    request: z.object({ sealPayloads: z.boolean().optional(), retentionDays: RetentionDaysSchema.nullable().optional() }).strict(),
    response: ErasureSettingsSchema,
  }),
  /** Applies retention now (the plane also does, in the background): erases every unheld key whose month ended `retentionDays` ago. */
  'erasure.retentionApply': () => ({ request: Empty, response: RetentionPassSchema }),
  /** Places a legal hold on a subject or a case (a HoldPlaced record). */
  'holds.add': () => ({
    request: z.object({ subject: SubjectIdSchema.optional(), caseId: CaseIdSchema.optional(), reason: ErasureReasonSchema.optional() }).strict(),
    response: HoldSchema,
  }),
  /** The legal holds in force, oldest first. */
  'holds.list': () => ({ request: Empty, response: z.object({ holds: z.array(HoldSchema) }) }),
  /** Lifts the holds on a subject or a case (HoldLifted records). */
  'holds.remove': () => ({
    request: z.object({ subject: SubjectIdSchema.optional(), caseId: CaseIdSchema.optional(), reason: ErasureReasonSchema.optional() }).strict(),
    response: z.object({ removed: z.array(HoldSchema) }),
  }),
  /** The answers people gave at the plane in one observed session after `afterSeq`: what the tap polls. */
  'acp.decisions': () => ({
    request: z.object({ runId: RunIdSchema, afterSeq: z.number().int().nonnegative().default(0) }).strict(),
    response: z.object({
      decisions: z.array(z.object({ seq: z.number().int(), requestKey: z.string(), outcome: PermissionOutcomeSchema, optionId: z.string().optional() })),
      lastSeq: z.number().int().nonnegative(),
    }),
  }),
  /** The plane's own MCP endpoint (URL, bearer token, stdio command) for a host's config. */
  'mcp.endpoint': () => ({ request: Empty, response: McpEndpointViewSchema }),
  /** The MCP servers declared in `<data dir>/mcp-servers.json`, with their connection state. */
  'mcp.servers.list': () => ({ request: Empty, response: z.object({ servers: z.array(McpServerViewSchema) }) }),
  /** Declares a server (written to mcp-servers.json); a name already declared is refused. */
  'mcp.servers.add': () => ({
    request: z.object({ name: McpServerNameSchema, config: McpServerConfigSchema }).strict(),
    response: McpServerViewSchema,
  }),
  /** Disconnects and forgets a server. */
  'mcp.servers.remove': () => ({ request: z.object({ name: McpServerNameSchema }).strict(), response: z.object({ removed: z.boolean() }) }),
  /** Connects (handshake, then tools, prompts and resources listed); a failure is in the view's `error`. */
  'mcp.servers.connect': () => ({ request: z.object({ name: McpServerNameSchema }).strict(), response: McpServerViewSchema }),
  'mcp.servers.disconnect': () => ({ request: z.object({ name: McpServerNameSchema }).strict(), response: McpServerViewSchema }),
  /** Origins netguard lets through whatever they resolve to: the person's list and those derived from configured providers and MCP servers. A person's command only. */
  'net.allow.list': () => ({ request: Empty, response: NetAllowListSchema }),
  /** Adds an exact origin (`scheme://host:port`) to `<data dir>/net-allow.json`. */
  'net.allow.add': () => ({ request: z.object({ origin: NetOriginInputSchema }).strict(), response: NetAllowEntrySchema }),
  /** Removes an origin from the person's list (a derived entry goes with its provider or server). */
  'net.allow.remove': () => ({ request: z.object({ origin: NetOriginInputSchema }).strict(), response: z.object({ removed: z.boolean() }) }),
  /** The outside witness this plane submits its checkpoints to, and the newest size it cosigned (docs/WITNESS.md). */
  'witness.status': () => ({ request: Empty, response: WitnessStatusSchema }),
  /** The keys remote A2A agents' cards are pinned to, per origin (`<data dir>/a2a-pins.json`), with any changed key waiting for a person. A person's command only. */
  'a2a.pins.list': () => ({ request: Empty, response: z.object({ pins: z.array(A2aPinViewSchema) }) }),
  /** A person accepts the changed key an origin's card was refused for; it becomes the pin. */
  'a2a.pins.accept': () => ({ request: z.object({ origin: z.string().url() }).strict(), response: A2aPinViewSchema }),
  /** The remote A2A agents the newest runs called (from the journal's `a2a` effects), each with its card's verification state and its tasks. A person's command only. */
  'a2a.remotes': () => ({ request: A2aRemotesRequestSchema, response: A2aRemotesSchema }),
  /** Model providers as configured (env over Settings, field by field); never a key, at most its last four characters. A person's command only. */
  'providers.list': () => ({ request: Empty, response: ProvidersListSchema }),
  /** Stores a provider's key, base URL or default model (null clears) and applies it live. */
  'providers.set': () => ({ request: ProviderSetRequestSchema, response: ProviderViewSchema }),
  /** Forgets what Settings stored for a provider (the environment's values stay in force). */
  'providers.remove': () => ({ request: z.object({ provider: SettableProviderSchema }).strict(), response: z.object({ removed: z.boolean(), provider: ProviderViewSchema }) }),
  /** One tiny real call through the provider's driver (not journaled); a failure is the provider's own message. */
  'providers.test': () => ({ request: z.object({ provider: SettableProviderSchema, model: ProviderModelSchema.optional() }).strict(), response: ProviderTestResultSchema }),
});

/** The most answer text one `runs.streaming` event carries (its tail): 64 KiB of characters. */
export const LIVE_TEXT_MAX_CHARS = 64 * 1024;

export const events = {
  /** The plane's status changed (started, stopping). */
  'plane.statusChanged': PlaneStatusSchema,
  /** The set of peers or one peer's state changed; the payload is the whole list. */
  'peers.changed': deferred(() => z.object({ peers: z.array(PeerSummarySchema) })),
  /** Agent files were added, changed or removed while the plane runs; the payload is `agents.list`'s whole answer. */
  'agents.changed': AgentsViewSchema,
  /**
   * The journal grew (one notification per commit, or per batch of other processes' appends):
   * it now holds every seq up to `seq`, and `fromSeq` is the first it did not announce before
   * (the previous notification's `seq` + 1). A client that has seen up to N applies one with
   * `fromSeq` <= N + 1, drops one with `seq` <= N, and on a gap asks `journal.changes`.
   */
  'journal.appended': deferred(() => z.object({
    fromSeq: z.number().int().positive(),
    seq: z.number().int().positive(),
    runs: z.array(RunChangeSchema),
  })),
  /**
   * A model call's answer while it streams: a labelled projection, not the record
   * (docs/GOVERNED-RUNTIME.md).
   * Never journaled and carrying no seq: the journal's EffectDone or EffectFailed for this
   * step is the truth, and a client drops the live text once it has that record. `text` is the
   * answer so far (its last LIVE_TEXT_MAX_CHARS characters, `omittedChars` before them), never a
   * bare delta, so a lost or coalesced event loses nothing. Untrusted model output, like the
   * answer it previews; reasoning is never in it. `done`: the provider has finished.
   */
  'runs.streaming': deferred(() => z.object({
    runId: RunIdSchema,
    step: z.number().int().nonnegative(),
    text: z.string().max(LIVE_TEXT_MAX_CHARS),
    omittedChars: z.number().int().nonnegative(),
    done: z.boolean(),
  })),
  /**
   * An observed session's transcript grew (presentation the journal leaves out): never
   * journaled and carrying no seq; a client showing that session re-reads it (`acp.session`).
   */
  'acp.transcript': deferred(() => z.object({ runId: RunIdSchema, lastWire: z.number().int().nonnegative() })),
} as const;

export type Commands = typeof commands;
export type CommandName = keyof Commands;
/**
 * The commands of a family, by the prefix of their names: `CommandsOf<'runs'>` is every `runs.*`
 * command. A handler file serving a family names it so, and a command added to the family here
 * is one tsc asks that file to serve.
 */
export type CommandsOf<Family extends string> = Extract<CommandName, `${Family}.${string}`>;
export type CommandRequest<K extends CommandName> = z.input<Commands[K]['request']>;
export type ParsedRequest<K extends CommandName> = z.output<Commands[K]['request']>;
export type CommandResponse<K extends CommandName> = z.output<Commands[K]['response']>;

export type Events = typeof events;
export type EventName = keyof Events;
export type EventPayload<K extends EventName> = z.output<Events[K]>;

const eventOf = <K extends EventName>(name: K) => z.object({ name: z.literal(name), payload: events[name] });

/**
 * An event as it travels, on every transport: `{name, payload}`, plain JSON. Events carry no
 * sequence of their own: the journal's seq orders what happened (`journal.appended`), and the
 * other events are whole snapshots, re-read on every reconnect, so the latest one is the truth.
 */
export const PlaneEventSchema = deferred(() => z.discriminatedUnion('name', [eventOf('plane.statusChanged'), eventOf('peers.changed'), eventOf('agents.changed'), eventOf('journal.appended'), eventOf('runs.streaming'), eventOf('acp.transcript')]));
export type PlaneEvent = z.infer<typeof PlaneEventSchema>;
/** Every event of `events` is in PlaneEventSchema (a missing one does not compile). */
const _everyEventTravels: Exclude<EventName, PlaneEvent['name']> extends never ? true : never = true;

export const commandNames = Object.keys(commands) as CommandName[];
export const eventNames = Object.keys(events) as EventName[];

export function isCommandName(name: string): name is CommandName {
  return Object.prototype.hasOwnProperty.call(commands, name);
}

export function isEventName(name: string): name is EventName {
  return Object.prototype.hasOwnProperty.call(events, name);
}
