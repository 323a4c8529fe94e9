/**
 * The fold of one observed ACP session: the tap's journaled account of the wire, in order, into
 * the SessionView a person reads (session-view.ts). Pure and total: the same observations give
 * the same view, and nothing the observed parties sent can make it throw — a message whose
 * shape is wrong is folded as far as it can be and the rest is left out, because the view of a
 * session must survive the session misbehaving.
 *
 * Rules, each a reason:
 * - A response is matched to its request by (the request's direction, id): each party numbers
 *   its own requests, so an id alone is ambiguous; a response travels opposite to its request.
 *   A response with no request is ignored (its request may be behind a gap).
 * - Permission outcomes: the first answer wins — the editor's response (`editor`), a person's
 *   decision at the plane (`plane:<by>`), or the turn ending as cancelled (`cancelled`). ACP
 *   asks the editor to answer open requests as cancelled when it cancels a turn, but the turn's
 *   `cancelled` stop reason alone says no option was chosen, so an editor that forgets (or a
 *   gap that swallowed its answer) cannot leave a request open forever.
 * - Messages naming another session are skipped, so one connection's sessions fold apart.
 */
import { isStandIn, ToolCallUpdateSchema, lenientArray, type StandIn } from './acp-content';
import {
  JsonRpcErrorSchema,
  KnownSessionUpdateSchema,
  PermissionOptionSchema,
  SessionNotificationSchema,
  classifyMessage,
  requestParamsSchemas,
  responseResultSchemas,
  type KnownSessionUpdate,
  type RequestId,
} from './acp-schema';
import { contentViewOf, textOfBlock } from './content-view';
import { applyEffectRequest, applyEffectResponse, isClientEffectMethod, type EffectState } from './fold-client-effects';
import { upsertToolCall } from './fold-tool-calls';
import type { ConversationItem, PartyInfo, SessionSummary, SessionView, TapEndReason, TapPolicy, WireDirection } from './session-view';
import type { PermissionOutcome } from '../../vocabulary/decisions';

/** Re-exported so a reader of folded observations needs one import to recognise a stand-in. */
export { isStandIn, type StandIn };

/** One entry of a session's journal, as the tap wrote it (Observation records, in order). */
export type ObservedMessage =
  /** A JSON-RPC message as journaled (large strings possibly replaced by stand-ins). */
  | { update: 'message'; dir: WireDirection; wire: number; at: string; message: unknown }
  /**
   * A line that could not be journaled as a message (not UTF-8 or JSON, too long, too deep, text
   * with no UTF-8 form): kept as its size, digest, a preview and why (absent in older journals).
   */
  | { update: 'malformed'; dir: WireDirection; wire: number; at: string; size: number; digest: string; preview: string; why?: string }
  /**
   * Messages the tap forwarded but could not journal: its queue overflowed, or the journal did
   * not take them (then `why` says what it answered).
   */
  | { update: 'gap'; dropped: number; fromWire: number; toWire: number; at: string; why?: string }
  | { update: 'tap/started'; at: string; tapName: string; policy: TapPolicy; command: string[] }
  | { update: 'tap/ended'; at: string; reason: TapEndReason; exitCode: number | null; signal: string | null; stderrTail: string | null }
  /** A person answered a permission request at the plane. */
  | { update: 'decision'; at: string; requestKey: string; by: string; outcome: PermissionOutcome; optionId?: string };

/** The key of a request: `<direction>:<JSON of its id>` (so the string "1" and the number 1 differ). */
export function requestKeyOf(dir: WireDirection, id: RequestId): string {
  return `${dir}:${JSON.stringify(id)}`;
}

const opposite = (dir: WireDirection): WireDirection => (dir === 'toAgent' ? 'toEditor' : 'toAgent');

interface Pending {
  method: string;
  params: unknown;
  wire: number;
  at: string;
  /** Index into clientEffects, for fs/* and terminal/* requests. */
  effect?: number;
}

type OpenChunk = { kind: 'message' | 'thought' | 'prompt'; item: ConversationItem; messageId: string | null } | null;

function emptyParty(): PartyInfo {
  return { name: null, title: null, version: null };
}

function partyOf(v: { name: string; title?: string | null; version: string } | null | undefined): PartyInfo {
  return v ? { name: v.name, title: v.title ?? null, version: v.version } : emptyParty();
}

function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

class SessionFold implements EffectState {
  readonly view: SessionView;
  private readonly pending = new Map<string, Pending>();
  private openChunk: OpenChunk = null;

  constructor(runId: string, sessionId: string) {
    this.view = {
      runId,
      sessionId,
      tapName: '',
      policy: 'observe',
      client: emptyParty(),
      agent: emptyParty(),
      cwd: null,
      startedAt: '',
      lastAt: '',
      state: 'idle',
      ended: null,
      counts: { prompts: 0, toolCalls: 0, permissions: 0, messages: 0, malformed: 0, gaps: 0 },
      conversation: [],
      plan: [],
      toolCalls: [],
      permissions: [],
      clientEffects: [],
      terminals: [],
    };
  }

  get clientEffects() {
    return this.view.clientEffects;
  }
  get terminals() {
    return this.view.terminals;
  }

  observe(o: ObservedMessage): void {
    // Observations come from the journal with their detail unchecked (a tap of another build
    // may have written them), so a missing time is read as none rather than trusted.
    const at: string = typeof o.at === 'string' ? o.at : '';
    if (this.view.startedAt === '') this.view.startedAt = at;
    if (at > this.view.lastAt) this.view.lastAt = at;
    switch (o.update) {
      case 'tap/started':
        this.view.startedAt = at;
        this.view.tapName = typeof o.tapName === 'string' ? o.tapName : '';
        this.view.policy = o.policy === 'inbox' ? 'inbox' : 'observe';
        return;
      case 'tap/ended':
        this.view.ended = { reason: o.reason, exitCode: o.exitCode ?? null, signal: o.signal ?? null, stderrTail: o.stderrTail ?? null };
        return;
      case 'malformed':
        this.view.counts.malformed += 1;
        return;
      case 'gap':
        this.view.counts.gaps += 1;
        return;
      case 'decision': {
        const outcome = { by: `plane:${o.by}`, outcome: o.outcome, at: o.at, ...(o.optionId === undefined ? {} : { optionId: o.optionId }) };
        this.answerPermission(o.requestKey, outcome);
        return;
      }
      case 'message':
        this.message(o.dir, o.wire, o.at, o.message);
        return;
    }
  }

  /** Does a message naming `sessionId` belong to this fold? ('' folds whatever comes.) */
  private ours(sessionId: string | undefined): boolean {
    return sessionId === undefined || this.view.sessionId === '' || sessionId === this.view.sessionId;
  }

  private message(dir: WireDirection, wire: number, at: string, message: unknown): void {
    const c = classifyMessage(message);
    // JSON that is no JSON-RPC message is as unreadable to this view as a line that is no JSON.
    if (c.type === 'invalid') {
      this.view.counts.malformed += 1;
      return;
    }
    if ((c.type === 'request' || c.type === 'notification') && !this.ours(c.sessionId)) return;
    const m = record(message);
    if (c.type === 'response') {
      const key = requestKeyOf(opposite(dir), c.id ?? null);
      const request = this.pending.get(key);
      if (request === undefined) return;
      this.pending.delete(key);
      this.view.counts.messages += 1;
      const error = JsonRpcErrorSchema.safeParse(m.error);
      this.response(key, request, wire, at, error.success ? { error: error.data.message } : { result: m.result });
      return;
    }
    this.view.counts.messages += 1;
    const method = c.method ?? '';
    if (c.type === 'notification') {
      if (method === 'session/update') this.sessionUpdate(m.params, wire, at);
      return;
    }
    const key = requestKeyOf(dir, c.id ?? null);
    const pending: Pending = { method, params: m.params, wire, at };
    this.pending.set(key, pending);
    if (method === 'initialize') {
      const req = requestParamsSchemas.initialize.safeParse(m.params);
      if (req.success) this.view.client = partyOf(req.data.clientInfo);
    } else if (method === 'session/prompt') this.prompt(m.params, wire, at);
    else if (method === 'session/request_permission') this.permissionRequest(key, m.params, wire, at);
    else if (isClientEffectMethod(method)) pending.effect = applyEffectRequest(this, method, m.params, wire, at);
  }

  private response(key: string, request: Pending, wire: number, at: string, answer: { result: unknown } | { error: string }): void {
    const { method } = request;
    if (request.effect !== undefined) applyEffectResponse(this, request.effect, method, request.params, answer);
    if (method === 'session/request_permission') {
      // An error answer (or one whose outcome cannot be read) selects no option: nothing was allowed.
      const parsed = 'result' in answer ? responseResultSchemas[method].safeParse(answer.result) : null;
      const outcome = parsed?.success ? parsed.data.outcome : { outcome: 'cancelled' as const };
      this.answerPermission(key, { by: 'editor', at, ...outcome });
      return;
    }
    if (method === 'session/prompt') {
      const parsed = 'result' in answer ? responseResultSchemas[method].safeParse(answer.result) : null;
      const stopReason = parsed?.success ? parsed.data.stopReason : 'error' in answer ? `error: ${answer.error}` : 'unknown';
      this.push({ kind: 'turnEnd', wire, at, stopReason });
      if (stopReason === 'cancelled') {
        for (const p of this.view.permissions) this.answerPermission(p.requestKey, { by: 'cancelled', outcome: 'cancelled', at });
      }
      return;
    }
    if (!('result' in answer)) return;
    if (method === 'initialize') {
      const parsed = responseResultSchemas.initialize.safeParse(answer.result);
      if (parsed.success) this.view.agent = partyOf(parsed.data.agentInfo);
    } else if (method === 'session/new') {
      const opened = responseResultSchemas[method].safeParse(answer.result);
      const req = requestParamsSchemas[method].safeParse(request.params);
      if (opened.success && req.success && this.ours(opened.data.sessionId)) this.opened(req.data.cwd, opened.data.modes);
    } else if (method === 'session/load') {
      // The request names the session; its ownership was checked when the request was folded.
      const loaded = responseResultSchemas[method].safeParse(answer.result ?? {});
      const req = requestParamsSchemas[method].safeParse(request.params);
      if (loaded.success && req.success) this.opened(req.data.cwd, loaded.data.modes);
    } else if (method === 'session/set_mode') {
      const req = requestParamsSchemas[method].safeParse(request.params);
      if (req.success) this.view.currentModeId = req.data.modeId;
    }
  }

  private opened(cwd: string, modes: { currentModeId: string } | null | undefined): void {
    this.view.cwd = cwd;
    if (modes) this.view.currentModeId = modes.currentModeId;
  }

  private push(item: ConversationItem): void {
    this.view.conversation.push(item);
    this.openChunk = null;
  }

  private prompt(params: unknown, wire: number, at: string): void {
    const parsed = requestParamsSchemas['session/prompt'].safeParse(params);
    const raw = parsed.success ? parsed.data.prompt : record(params).prompt;
    const blocks = Array.isArray(raw) ? raw.map(contentViewOf) : [];
    this.push({ kind: 'prompt', wire, at, blocks });
    this.view.counts.prompts += 1;
  }

  private promptTurnOpen(): boolean {
    for (const p of this.pending.values()) if (p.method === 'session/prompt') return true;
    return false;
  }

  private sessionUpdate(params: unknown, wire: number, at: string): void {
    const parsed = SessionNotificationSchema.safeParse(params);
    const raw = parsed.success ? parsed.data.update : record(params).update;
    const known = KnownSessionUpdateSchema.safeParse(raw);
    if (!known.success) {
      const kind = record(raw).sessionUpdate;
      this.push({ kind: 'unknownUpdate', wire, at, update: typeof kind === 'string' ? kind : '', raw });
      return;
    }
    this.knownUpdate(known.data, wire, at);
  }

  private knownUpdate(u: KnownSessionUpdate, wire: number, at: string): void {
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
        return this.chunk('message', u.content, u.messageId ?? null, wire, at);
      case 'agent_thought_chunk':
        return this.chunk('thought', u.content, u.messageId ?? null, wire, at);
      case 'user_message_chunk':
        // Outside a turn these replay a loaded session's history; inside one they can only echo
        // the prompt the session/prompt request already showed.
        if (!this.promptTurnOpen()) this.chunk('prompt', u.content, u.messageId ?? null, wire, at);
        return;
      case 'tool_call':
      case 'tool_call_update': {
        const { card, created } = upsertToolCall(this.view.toolCalls, u, wire, at);
        if (created) {
          this.push({ kind: 'toolCall', wire, at, toolCallId: card.toolCallId });
          this.view.counts.toolCalls += 1;
        }
        return;
      }
      case 'plan':
        this.view.plan = u.entries.map((e) => ({ content: e.content, priority: e.priority, status: e.status }));
        return;
      case 'current_mode_update':
        this.view.currentModeId = u.currentModeId;
        return;
      case 'available_commands_update':
        this.view.availableCommands = u.availableCommands.map((c) => ({ name: c.name, description: c.description }));
        return;
      case 'usage_update':
        this.view.usage = { used: u.used, size: u.size, cost: u.cost ? { amount: u.cost.amount, currency: u.cost.currency } : null };
        return;
      // Presentation this view has no place for yet: parsed (so never refused), not shown.
      case 'config_option_update':
      case 'session_info_update':
      case 'notice':
      case 'compaction_update':
      case 'compaction_summary_chunk':
        return;
    }
  }

  /** Consecutive chunks of one kind (and one messageId, when the agent gives them) merge. */
  private chunk(kind: 'message' | 'thought' | 'prompt', content: unknown, messageId: string | null, wire: number, at: string): void {
    const open = this.openChunk;
    const continues = open !== null && open.kind === kind && (messageId === null || open.messageId === null || open.messageId === messageId);
    if (continues) {
      const item = open.item;
      if (item.kind === 'prompt') item.blocks.push(contentViewOf(content));
      else if (item.kind === 'message' || item.kind === 'thought') item.text += textOfBlock(content);
      if (messageId !== null) open.messageId = messageId;
      return;
    }
    const item: ConversationItem =
      kind === 'prompt' ? { kind, wire, at, blocks: [contentViewOf(content)] } : { kind, wire, at, text: textOfBlock(content) };
    this.push(item);
    this.openChunk = { kind, item, messageId };
    if (kind === 'prompt') this.view.counts.prompts += 1;
  }

  private permissionRequest(requestKey: string, params: unknown, wire: number, at: string): void {
    const p = record(params);
    const toolCall = ToolCallUpdateSchema.safeParse(p.toolCall);
    const tc = toolCall.success ? toolCall.data : null;
    const card = tc ? this.view.toolCalls.find((c) => c.toolCallId === tc.toolCallId) : undefined;
    const locations = tc?.locations?.map((l) => (typeof l.line === 'number' ? { path: l.path, line: l.line } : { path: l.path }));
    const options = lenientArray(PermissionOptionSchema).safeParse(Array.isArray(p.options) ? p.options : []);
    this.view.permissions.push({
      requestKey,
      wire,
      at,
      toolCall: {
        toolCallId: tc?.toolCallId ?? '',
        title: tc?.title ?? card?.title ?? null,
        toolKind: tc?.kind ?? card?.toolKind ?? null,
        locations: locations ?? card?.locations ?? [],
      },
      options: options.success ? options.data.map((o) => ({ optionId: o.optionId, name: o.name, kind: o.kind })) : [],
      outcome: null,
    });
    this.push({ kind: 'permission', wire, at, requestKey });
    this.view.counts.permissions += 1;
  }

  /** The first answer wins; later ones (and answers to requests never seen) change nothing. */
  private answerPermission(requestKey: string, outcome: { by: string; outcome: PermissionOutcome; optionId?: string; at: string }): void {
    const p = this.view.permissions.find((x) => x.requestKey === requestKey);
    if (p === undefined || p.outcome !== null) return;
    p.outcome = outcome.outcome === 'selected' ? outcome : { by: outcome.by, outcome: 'cancelled', at: outcome.at };
  }

  finish(): SessionView {
    const v = this.view;
    if (v.ended !== null) v.state = 'ended';
    else if (v.permissions.some((p) => p.outcome === null)) v.state = 'waiting';
    else if (this.promptTurnOpen()) v.state = 'active';
    else v.state = 'idle';
    return v;
  }
}

/** Fold a session's observations, in journal order, into what a person sees. */
export function foldSession(runId: string, sessionId: string, observed: ObservedMessage[]): SessionView {
  const fold = new SessionFold(runId, sessionId);
  for (const o of observed) if (typeof o === 'object' && o !== null) fold.observe(o);
  return fold.finish();
}

/** The row of the sessions list: the fold's summary fields only. */
export function summarizeSession(runId: string, sessionId: string, observed: ObservedMessage[]): SessionSummary {
  const v = foldSession(runId, sessionId, observed);
  return {
    runId: v.runId,
    sessionId: v.sessionId,
    tapName: v.tapName,
    policy: v.policy,
    client: v.client,
    agent: v.agent,
    cwd: v.cwd,
    startedAt: v.startedAt,
    lastAt: v.lastAt,
    state: v.state,
    ended: v.ended,
    counts: v.counts,
  };
}
