/**
 * What one observed ACP session looks like to a person: the fold of its wire messages
 * (session-fold.ts) into the conversation, the plan, the tool calls, the permission requests
 * and the counts the Editor sessions view shows. Every field is derived from Observation records
 * (the observed party's account of itself) and from Decision records a person wrote at the
 * plane; nothing here is authority.
 *
 * Shared by the plane (which folds a session's records to answer `acp.sessions` and
 * `acp.session`) and the renderer (which renders it), so both read one shape. Written as zod
 * schemas, the types inferred from them: the contract checks every answer against these, as it
 * does every other reply, so a client never takes in a session of another shape.
 */
import { z } from 'zod';
import { deferred } from '../../deferred-schema';
import { PermissionOutcomeSchema } from '../../vocabulary/decisions';

/** Which way a message went through the tap. */
export const WireDirectionSchema = z.enum(['toAgent', 'toEditor']);
export type WireDirection = z.infer<typeof WireDirectionSchema>;

/** `active` (a prompt turn runs), `waiting` (a permission request is open), `idle`, `ended`. */
/** How a tap treats permission requests: `observe` records them; `inbox` also offers them to a person at the plane. */
export const TapPolicySchema = z.enum(['observe', 'inbox']);
export type TapPolicy = z.infer<typeof TapPolicySchema>;

/** Why a tapped session ended: the agent exited, the editor disconnected, or the tap was told to close. */
export const TapEndReasonSchema = z.enum(['agent-exit', 'editor-disconnect', 'closed']);
export type TapEndReason = z.infer<typeof TapEndReasonSchema>;

export const SessionStateSchema = z.enum(['active', 'waiting', 'idle', 'ended']);
export type SessionState = z.infer<typeof SessionStateSchema>;

export const PartyInfoSchema = deferred(() => z.object({ name: z.string().nullable(), title: z.string().nullable(), version: z.string().nullable() }));
export type PartyInfo = z.infer<typeof PartyInfoSchema>;

/** A content block as shown: text, or what stood in for content the journal keeps as digest and size. */
export const ContentViewSchema = deferred(() => z.union([
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.enum(['image', 'audio', 'resource', 'resource_link', 'other']), label: z.string(), digest: z.string().optional(), size: z.number().optional() }),
]));
export type ContentView = z.infer<typeof ContentViewSchema>;

const At = { wire: z.number(), at: z.string() };
export const ConversationItemSchema = deferred(() => z.discriminatedUnion('kind', [
  /** One user prompt (session/prompt), its blocks in order. */
  z.object({ kind: z.literal('prompt'), ...At, blocks: z.array(ContentViewSchema) }),
  /** Consecutive agent_message_chunk updates merged into one message. */
  z.object({ kind: z.literal('message'), ...At, text: z.string() }),
  /** Consecutive agent_thought_chunk updates merged; shown collapsed. */
  z.object({ kind: z.literal('thought'), ...At, text: z.string() }),
  /** A tool call, by id (its card is in `toolCalls`). */
  z.object({ kind: z.literal('toolCall'), ...At, toolCallId: z.string() }),
  /** A permission request (its card is in `permissions`). */
  z.object({ kind: z.literal('permission'), ...At, requestKey: z.string() }),
  /** A prompt turn's end: the stopReason the agent gave (end_turn, cancelled, refusal, …). */
  z.object({ kind: z.literal('turnEnd'), ...At, stopReason: z.string() }),
  /** A session/update kind this build does not know: recorded raw, shown as such. */
  z.object({ kind: z.literal('unknownUpdate'), ...At, update: z.string(), raw: z.unknown() }),
]));
export type ConversationItem = z.infer<typeof ConversationItemSchema>;

export const PlanEntryViewSchema = deferred(() => z.object({ content: z.string(), priority: z.string(), status: z.string() }));
export type PlanEntryView = z.infer<typeof PlanEntryViewSchema>;

const LocationSchema = deferred(() => z.object({ path: z.string(), line: z.number().optional() }));

export const ToolCallViewSchema = deferred(() => z.object({
  toolCallId: z.string(),
  title: z.string(),
  /** read, edit, delete, move, search, execute, think, fetch, switch_mode, other (or a word we do not know). */
  toolKind: z.string(),
  status: z.string(),
  /** Every status it went through, with the wire index and time of each change. */
  statusChanges: z.array(z.object({ status: z.string(), ...At })),
  locations: z.array(LocationSchema),
  content: z.array(
    z.discriminatedUnion('type', [
      z.object({ type: z.literal('content'), content: ContentViewSchema }),
      z.object({ type: z.literal('diff'), path: z.string(), oldText: z.string().nullable(), newText: z.string(), truncated: z.boolean().optional() }),
      z.object({ type: z.literal('terminal'), terminalId: z.string() }),
    ]),
  ),
  rawInput: z.unknown().optional(),
  rawOutput: z.unknown().optional(),
}));
export type ToolCallView = z.infer<typeof ToolCallViewSchema>;

export const PermissionViewSchema = deferred(() => z.object({
  /** `<direction>:<json-rpc id>` of the request: unique within the session. */
  requestKey: z.string(),
  ...At,
  toolCall: z.object({ toolCallId: z.string(), title: z.string().nullable(), toolKind: z.string().nullable(), locations: z.array(LocationSchema) }),
  options: z.array(z.object({ optionId: z.string(), name: z.string(), kind: z.string() })),
  /** Open until answered; then who answered (`editor`, `plane:<by>`, `cancelled`) and what. */
  outcome: z.object({ by: z.string(), outcome: PermissionOutcomeSchema, optionId: z.string().optional(), at: z.string() }).nullable(),
  /** Set under `--policy inbox`: the approvals-inbox wait this request became. */
  waitId: z.string().optional(),
}));
export type PermissionView = z.infer<typeof PermissionViewSchema>;

/** An effect the agent asked the editor to perform (fs/write_text_file, terminal/create, …). */
export const ClientEffectViewSchema = deferred(() => z.object({
  ...At,
  method: z.string(),
  /** Path or command, for the row. */
  summary: z.string(),
  /** `pending`, `done` or `error: <message>`. */
  result: z.string(),
}));
export type ClientEffectView = z.infer<typeof ClientEffectViewSchema>;

export const TerminalViewSchema = deferred(() => z.object({
  terminalId: z.string(),
  command: z.string(),
  output: z.string(),
  truncated: z.boolean(),
  exitStatus: z.object({ exitCode: z.number().nullable(), signal: z.string().nullable() }).nullable(),
}));
export type TerminalView = z.infer<typeof TerminalViewSchema>;

export const SessionSummarySchema = deferred(() => z.object({
  runId: z.string(),
  /** The ACP sessionId ('' while the connection has not opened a session). */
  sessionId: z.string(),
  /** `--name` given to the tap, or the agent command's basename. */
  tapName: z.string(),
  policy: TapPolicySchema,
  client: PartyInfoSchema,
  agent: PartyInfoSchema,
  cwd: z.string().nullable(),
  startedAt: z.string(),
  lastAt: z.string(),
  state: SessionStateSchema,
  /** How it ended, once ended: agent exit (code, signal, stderr tail), editor disconnect, closed. */
  ended: z
    .object({ reason: TapEndReasonSchema, exitCode: z.number().nullable(), signal: z.string().nullable(), stderrTail: z.string().nullable() })
    .nullable(),
  /**
   * prompts: prompt items (session/prompt requests, and user turns a session/load replayed);
   * toolCalls, permissions: cards; messages: well-formed JSON-RPC messages folded (either way);
   * malformed: lines that were not JSON-RPC; gaps: gap records (messages the tap dropped).
   */
  counts: z.object({ prompts: z.number(), toolCalls: z.number(), permissions: z.number(), messages: z.number(), malformed: z.number(), gaps: z.number() }),
}));
export type SessionSummary = z.infer<typeof SessionSummarySchema>;

export const SessionViewSchema = deferred(() => SessionSummarySchema.extend({
  conversation: z.array(ConversationItemSchema),
  plan: z.array(PlanEntryViewSchema),
  toolCalls: z.array(ToolCallViewSchema),
  permissions: z.array(PermissionViewSchema),
  clientEffects: z.array(ClientEffectViewSchema),
  terminals: z.array(TerminalViewSchema),
  /** The session's mode (session/new's modes, session/set_mode, current_mode_update); absent if never named. */
  currentModeId: z.string().optional(),
  /** The slash commands the agent last advertised (available_commands_update). */
  availableCommands: z.array(z.object({ name: z.string(), description: z.string() })).optional(),
  /**
   * Present for a session recorded as evidence (the tap's default): its conversation, thoughts,
   * plan and modes come from the transcript store beside the journal, not from the journal.
   * `leftOut`: what the journal left out, by wire name (its records' own counts); `kept`: the
   * lines the store still holds (fewer once erased or past `retentionDays`).
   */
  transcript: z.object({ leftOut: z.record(z.string(), z.number()), kept: z.number(), retentionDays: z.number() }).optional(),
  /** The agent's last usage_update: context tokens used of the window's size, and cost if given. */
  usage: z.object({ used: z.number(), size: z.number(), cost: z.object({ amount: z.number(), currency: z.string() }).nullable() }).optional(),
}));
export type SessionView = z.infer<typeof SessionViewSchema>;
