/**
 * What one observed ACP session looks like to a person: the fold of its wire messages
 * (session-fold.ts) into the conversation, the plan, the tool calls, the permission requests
 * and the counts the Editor sessions view shows. Every field is derived from Observation records
 * (the observed party's account of itself) and from Decision records a person wrote at the
 * plane; nothing here is authority.
 *
 * Shared by the plane (which folds a session's records to answer `acp.sessions` and
 * `acp.session`) and the renderer (which renders it), so both read one shape.
 */
import type { PermissionOutcome } from '../../vocabulary/decisions';

/** Which way a message went through the tap. */
export type WireDirection = 'toAgent' | 'toEditor';

/** `active` (a prompt turn runs), `waiting` (a permission request is open), `idle`, `ended`. */
export type SessionState = 'active' | 'waiting' | 'idle' | 'ended';

export interface PartyInfo {
  name: string | null;
  title: string | null;
  version: string | null;
}

/** A content block as shown: text, or what stood in for content the journal keeps as digest and size. */
export type ContentView =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio' | 'resource' | 'resource_link' | 'other'; label: string; digest?: string; size?: number };

export type ConversationItem =
  /** One user prompt (session/prompt), its blocks in order. */
  | { kind: 'prompt'; wire: number; at: string; blocks: ContentView[] }
  /** Consecutive agent_message_chunk updates merged into one message. */
  | { kind: 'message'; wire: number; at: string; text: string }
  /** Consecutive agent_thought_chunk updates merged; shown collapsed. */
  | { kind: 'thought'; wire: number; at: string; text: string }
  /** A tool call, by id (its card is in `toolCalls`). */
  | { kind: 'toolCall'; wire: number; at: string; toolCallId: string }
  /** A permission request (its card is in `permissions`). */
  | { kind: 'permission'; wire: number; at: string; requestKey: string }
  /** A prompt turn's end: the stopReason the agent gave (end_turn, cancelled, refusal, …). */
  | { kind: 'turnEnd'; wire: number; at: string; stopReason: string }
  /** A session/update kind this build does not know: recorded raw, shown as such. */
  | { kind: 'unknownUpdate'; wire: number; at: string; update: string; raw: unknown };

export interface PlanEntryView {
  content: string;
  priority: string;
  status: string;
}

export interface ToolCallView {
  toolCallId: string;
  title: string;
  /** read, edit, delete, move, search, execute, think, fetch, switch_mode, other (or a word we do not know). */
  toolKind: string;
  status: string;
  /** Every status it went through, with the wire index and time of each change. */
  statusChanges: Array<{ status: string; wire: number; at: string }>;
  locations: Array<{ path: string; line?: number }>;
  content: Array<
    | { type: 'content'; content: ContentView }
    | { type: 'diff'; path: string; oldText: string | null; newText: string; truncated?: boolean }
    | { type: 'terminal'; terminalId: string }
  >;
  rawInput?: unknown;
  rawOutput?: unknown;
}

export interface PermissionView {
  /** `<direction>:<json-rpc id>` of the request: unique within the session. */
  requestKey: string;
  wire: number;
  at: string;
  toolCall: { toolCallId: string; title: string | null; toolKind: string | null; locations: Array<{ path: string; line?: number }> };
  options: Array<{ optionId: string; name: string; kind: string }>;
  /** Open until answered; then who answered (`editor`, `plane:<by>`, `cancelled`) and what. */
  outcome: null | { by: string; outcome: PermissionOutcome; optionId?: string; at: string };
  /** Set under `--policy inbox`: the approvals-inbox wait this request became. */
  waitId?: string;
}

/** An effect the agent asked the editor to perform (fs/write_text_file, terminal/create, …). */
export interface ClientEffectView {
  wire: number;
  at: string;
  method: string;
  /** Path or command, for the row. */
  summary: string;
  /** `pending`, `done` or `error: <message>`. */
  result: string;
}

export interface TerminalView {
  terminalId: string;
  command: string;
  output: string;
  truncated: boolean;
  exitStatus: { exitCode: number | null; signal: string | null } | null;
}

export interface SessionSummary {
  runId: string;
  /** The ACP sessionId ('' while the connection has not opened a session). */
  sessionId: string;
  /** `--name` given to the tap, or the agent command's basename. */
  tapName: string;
  policy: 'observe' | 'inbox';
  client: PartyInfo;
  agent: PartyInfo;
  cwd: string | null;
  startedAt: string;
  lastAt: string;
  state: SessionState;
  /** How it ended, once ended: agent exit (code, signal, stderr tail), editor disconnect, closed. */
  ended: null | { reason: 'agent-exit' | 'editor-disconnect' | 'closed'; exitCode: number | null; signal: string | null; stderrTail: string | null };
  /**
   * prompts: prompt items (session/prompt requests, and user turns a session/load replayed);
   * toolCalls, permissions: cards; messages: well-formed JSON-RPC messages folded (either way);
   * malformed: lines that were not JSON-RPC; gaps: gap records (messages the tap dropped).
   */
  counts: { prompts: number; toolCalls: number; permissions: number; messages: number; malformed: number; gaps: number };
}

export interface SessionView extends SessionSummary {
  conversation: ConversationItem[];
  plan: PlanEntryView[];
  toolCalls: ToolCallView[];
  permissions: PermissionView[];
  clientEffects: ClientEffectView[];
  terminals: TerminalView[];
  /** The session's mode (session/new's modes, session/set_mode, current_mode_update); absent if never named. */
  currentModeId?: string;
  /** The slash commands the agent last advertised (available_commands_update). */
  availableCommands?: Array<{ name: string; description: string }>;
  /** The agent's last usage_update: context tokens used of the window's size, and cost if given. */
  usage?: { used: number; size: number; cost: { amount: number; currency: string } | null };
}
