/**
 * The Agent Client Protocol, version 1, as the tap must understand it: the JSON-RPC 2.0
 * envelope, and the params and results of the methods an editor (the ACP client) and its agent
 * exchange. Written from the stable v1 schema the official SDK ships (@agentclientprotocol/sdk
 * 2.4.0, schema/v1/schema.json); content, tool calls and plans are in acp-content.ts.
 *
 * These schemas describe an observed wire, not one this plane speaks, so they are tolerant
 * (see acp-content.ts): objects pass unknown fields through, the observed party's vocabularies
 * (stop reason, permission option kind, tool kind, statuses) are strings, and a session/update
 * of a kind this build does not know parses as the unknown branch. A plane that refused a
 * notification over an unfamiliar word would stop recording the session it is there to record.
 *
 * Direction on the wire: the editor sends initialize, authenticate, session/* requests and
 * session/cancel to the agent; the agent sends session/update, session/request_permission,
 * fs/* and terminal/* to the editor. A response travels opposite to its request.
 */
import { z } from 'zod';
import { isRecord } from '../../plain-object';
import {
  AvailableCommandSchema,
  ContentBlockSchema,
  PlanEntrySchema,
  ToolCallSchema,
  ToolCallUpdateSchema,
  WireTextSchema,
  lenientArray,
} from './acp-content';

/** The protocol version the tap understands (an integer on this wire, negotiated at initialize). */
export const ACP_PROTOCOL_VERSION = 1;

const opt = <T extends z.ZodType>(schema: T) => schema.nullish();
const params = <T extends z.ZodRawShape>(shape: T) => z.object(shape).passthrough();

// ---- JSON-RPC 2.0 envelope (ACP sends one message per line; it has no batches) ----

export const RequestIdSchema = z.union([z.string(), z.number(), z.null()]);
export type RequestId = z.infer<typeof RequestIdSchema>;

export const JsonRpcRequestSchema = z
  .object({ jsonrpc: z.literal('2.0'), id: RequestIdSchema, method: z.string(), params: z.unknown().optional() })
  .passthrough();
export const JsonRpcNotificationSchema = z
  .object({ jsonrpc: z.literal('2.0'), method: z.string(), params: z.unknown().optional() })
  .passthrough();
export const JsonRpcErrorSchema = z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).passthrough();
export const JsonRpcResultResponseSchema = z.object({ jsonrpc: z.literal('2.0'), id: RequestIdSchema, result: z.unknown() }).passthrough();
export const JsonRpcErrorResponseSchema = z
  .object({ jsonrpc: z.literal('2.0'), id: RequestIdSchema, error: JsonRpcErrorSchema })
  .passthrough();

// ---- initialize, authenticate ----

export const ImplementationSchema = params({ name: z.string(), title: opt(z.string()), version: z.string() });
export const ClientCapabilitiesSchema = params({
  fs: opt(params({ readTextFile: opt(z.boolean()), writeTextFile: opt(z.boolean()) })),
  terminal: opt(z.boolean()),
});
export const AgentCapabilitiesSchema = params({
  loadSession: opt(z.boolean()),
  promptCapabilities: opt(params({ image: opt(z.boolean()), audio: opt(z.boolean()), embeddedContext: opt(z.boolean()) })),
  mcpCapabilities: opt(params({ http: opt(z.boolean()), sse: opt(z.boolean()) })),
});
export const AuthMethodSchema = params({ id: z.string(), name: z.string(), description: opt(z.string()) });

export const InitializeRequestSchema = params({
  protocolVersion: z.number(),
  clientCapabilities: opt(ClientCapabilitiesSchema),
  clientInfo: opt(ImplementationSchema),
});
export const InitializeResponseSchema = params({
  protocolVersion: z.number(),
  agentCapabilities: opt(AgentCapabilitiesSchema),
  agentInfo: opt(ImplementationSchema),
  authMethods: opt(lenientArray(AuthMethodSchema)),
});
export const AuthenticateRequestSchema = params({ methodId: z.string() });
export const AuthenticateResponseSchema = params({});

// ---- sessions ----

/** stdio servers have no `type`; http and sse say so. Kept loose: the tap only shows names. */
export const McpServerSchema = params({ name: z.string() });
export const SessionModeStateSchema = params({
  currentModeId: z.string(),
  availableModes: lenientArray(params({ id: z.string(), name: z.string(), description: opt(z.string()) })),
});

export const NewSessionRequestSchema = params({ cwd: z.string(), mcpServers: z.array(McpServerSchema) });
export const NewSessionResponseSchema = params({ sessionId: z.string(), modes: opt(SessionModeStateSchema) });
export const LoadSessionRequestSchema = params({ sessionId: z.string(), cwd: z.string(), mcpServers: z.array(McpServerSchema) });
export const LoadSessionResponseSchema = params({ modes: opt(SessionModeStateSchema) });
export const SetSessionModeRequestSchema = params({ sessionId: z.string(), modeId: z.string() });

export const PromptRequestSchema = params({ sessionId: z.string(), prompt: z.array(ContentBlockSchema) });
/** end_turn, max_tokens, max_turn_requests, refusal, cancelled — or a word a later agent uses. */
export const PromptResponseSchema = params({ stopReason: z.string() });
export const CancelNotificationSchema = params({ sessionId: z.string() });

// ---- session/update ----

const ContentChunkShape = { content: ContentBlockSchema, messageId: opt(z.string()) };

/** Every sessionUpdate kind the stable v1 schema defines. */
export const KnownSessionUpdateSchema = z.discriminatedUnion('sessionUpdate', [
  params({ sessionUpdate: z.literal('user_message_chunk'), ...ContentChunkShape }),
  params({ sessionUpdate: z.literal('agent_message_chunk'), ...ContentChunkShape }),
  params({ sessionUpdate: z.literal('agent_thought_chunk'), ...ContentChunkShape }),
  ToolCallSchema.extend({ sessionUpdate: z.literal('tool_call') }),
  ToolCallUpdateSchema.extend({ sessionUpdate: z.literal('tool_call_update') }),
  params({ sessionUpdate: z.literal('plan'), entries: lenientArray(PlanEntrySchema) }),
  params({ sessionUpdate: z.literal('available_commands_update'), availableCommands: lenientArray(AvailableCommandSchema) }),
  params({ sessionUpdate: z.literal('current_mode_update'), currentModeId: z.string() }),
  params({ sessionUpdate: z.literal('config_option_update'), configOptions: z.array(z.unknown()) }),
  params({ sessionUpdate: z.literal('session_info_update'), title: opt(z.string()), updatedAt: opt(z.string()) }),
  params({
    sessionUpdate: z.literal('usage_update'),
    used: z.number(),
    size: z.number(),
    cost: opt(params({ amount: z.number(), currency: z.string() })),
  }),
  params({ sessionUpdate: z.literal('notice'), severity: z.string(), title: z.string() }),
  params({ sessionUpdate: z.literal('compaction_update'), compactionId: z.string(), status: z.string() }),
  params({ sessionUpdate: z.literal('compaction_summary_chunk'), compactionId: z.string(), content: ContentBlockSchema }),
]);
export type KnownSessionUpdate = z.infer<typeof KnownSessionUpdateSchema>;

/** A kind this build does not know, or a known kind whose shape is broken: kept raw, never refused. */
export const UnknownSessionUpdateSchema = params({ sessionUpdate: z.string() });

export const SessionUpdateSchema = z.union([KnownSessionUpdateSchema, UnknownSessionUpdateSchema]);
export type SessionUpdate = z.infer<typeof SessionUpdateSchema>;

export const SessionNotificationSchema = params({ sessionId: z.string(), update: SessionUpdateSchema });

// ---- permission ----

export const PermissionOptionSchema = params({ optionId: z.string(), name: z.string(), kind: z.string() });
export const RequestPermissionRequestSchema = params({
  sessionId: z.string(),
  toolCall: ToolCallUpdateSchema,
  options: z.array(PermissionOptionSchema),
});
export const RequestPermissionOutcomeSchema = z.discriminatedUnion('outcome', [
  params({ outcome: z.literal('cancelled') }),
  params({ outcome: z.literal('selected'), optionId: z.string() }),
]);
export const RequestPermissionResponseSchema = params({ outcome: RequestPermissionOutcomeSchema });

// ---- the editor's file system and terminals ----

export const ReadTextFileRequestSchema = params({ sessionId: z.string(), path: z.string(), line: opt(z.number()), limit: opt(z.number()) });
export const ReadTextFileResponseSchema = params({ content: WireTextSchema });
export const WriteTextFileRequestSchema = params({ sessionId: z.string(), path: z.string(), content: WireTextSchema });
export const WriteTextFileResponseSchema = params({});

export const CreateTerminalRequestSchema = params({
  sessionId: z.string(),
  command: z.string(),
  args: opt(z.array(z.string())),
  env: opt(z.array(params({ name: z.string(), value: z.string() }))),
  cwd: opt(z.string()),
  outputByteLimit: opt(z.number()),
});
export const CreateTerminalResponseSchema = params({ terminalId: z.string() });
/** terminal/output, terminal/wait_for_exit, terminal/kill and terminal/release all name one terminal. */
export const TerminalRequestSchema = params({ sessionId: z.string(), terminalId: z.string() });
export const TerminalExitStatusSchema = params({ exitCode: opt(z.number()), signal: opt(z.string()) });
export const TerminalOutputResponseSchema = params({
  output: WireTextSchema,
  truncated: z.boolean(),
  exitStatus: opt(TerminalExitStatusSchema),
});
export const WaitForTerminalExitResponseSchema = TerminalExitStatusSchema;

/** Params schema by method, for the methods the fold reads. */
export const requestParamsSchemas = {
  initialize: InitializeRequestSchema,
  authenticate: AuthenticateRequestSchema,
  'session/new': NewSessionRequestSchema,
  'session/load': LoadSessionRequestSchema,
  'session/set_mode': SetSessionModeRequestSchema,
  'session/prompt': PromptRequestSchema,
  'session/request_permission': RequestPermissionRequestSchema,
  'fs/read_text_file': ReadTextFileRequestSchema,
  'fs/write_text_file': WriteTextFileRequestSchema,
  'terminal/create': CreateTerminalRequestSchema,
  'terminal/output': TerminalRequestSchema,
  'terminal/wait_for_exit': TerminalRequestSchema,
  'terminal/kill': TerminalRequestSchema,
  'terminal/release': TerminalRequestSchema,
} as const;

/** Result schema by method, for the methods whose answer the fold reads. */
export const responseResultSchemas = {
  initialize: InitializeResponseSchema,
  authenticate: AuthenticateResponseSchema,
  'session/new': NewSessionResponseSchema,
  'session/load': LoadSessionResponseSchema,
  'session/prompt': PromptResponseSchema,
  'session/request_permission': RequestPermissionResponseSchema,
  'fs/read_text_file': ReadTextFileResponseSchema,
  'fs/write_text_file': WriteTextFileResponseSchema,
  'terminal/create': CreateTerminalResponseSchema,
  'terminal/output': TerminalOutputResponseSchema,
  'terminal/wait_for_exit': WaitForTerminalExitResponseSchema,
} as const;

export const notificationParamsSchemas = {
  'session/update': SessionNotificationSchema,
  'session/cancel': CancelNotificationSchema,
} as const;

// ---- classification ----

export interface MessageClass {
  type: 'request' | 'notification' | 'response' | 'invalid';
  method?: string;
  id?: RequestId;
  /**
   * The ACP session the message belongs to: `params.sessionId` when present; for a response,
   * `result.sessionId` (the only place session/new names the session it opened).
   */
  sessionId?: string;
}

function sessionIdIn(v: unknown): string | undefined {
  return isRecord(v) && typeof v.sessionId === 'string' ? v.sessionId : undefined;
}

/**
 * What one parsed line is: request (method and id), notification (method, no id), response (id
 * with result or error), or invalid (anything else, a batch included: ACP has none). Only the
 * envelope is checked; params are judged by the method's schema where they are used.
 */
export function classifyMessage(json: unknown): MessageClass {
  if (!isRecord(json) || json.jsonrpc !== '2.0') return { type: 'invalid' };
  const hasId = 'id' in json;
  const idOk = RequestIdSchema.safeParse(json.id);
  if (hasId && !idOk.success) return { type: 'invalid' };
  const id = idOk.success ? idOk.data : undefined;
  const withSession = (c: MessageClass, sessionId: string | undefined): MessageClass =>
    sessionId === undefined ? c : { ...c, sessionId };
  if (typeof json.method === 'string') {
    const sessionId = sessionIdIn(json.params);
    if (hasId) return withSession({ type: 'request', method: json.method, id: id ?? null }, sessionId);
    return withSession({ type: 'notification', method: json.method }, sessionId);
  }
  if ('method' in json) return { type: 'invalid' };
  if (hasId && ('result' in json || JsonRpcErrorSchema.safeParse(json.error).success)) {
    return withSession({ type: 'response', id: id ?? null }, sessionIdIn(json.result));
  }
  return { type: 'invalid' };
}
