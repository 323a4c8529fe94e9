/**
 * The MCPv2 peer protocol's wire, as zod schemas (types inferred from them). Every peer is a
 * client and a server: it answers POST /mcpv2 with a JSON array of JSON-RPC 2.0 "slots", each
 * answered independently and in order, and issues HMAC session tokens at GET /mcpv2/session.
 *
 * Batch semantics are JSON-RPC 2.0 section 6 ("batch"): an empty array is one Invalid Request
 * error; a non-object element is an Invalid Request error in its place; notifications (no
 * `id`) get no answer; a batch of only notifications gets no body at all.
 */
import { z } from 'zod';
import { RunIdSchema } from '../vocabulary/ids';

export const MCPV2_PROTOCOL_VERSION = '2.0';
export const MCPV2_SUPPORTED_VERSIONS = ['2.0'] as const;
/** The protocol's batch cap (docs/PEER-PROTOCOL.md): bounds memory and CPU per request. */
export const MAX_BATCH_SIZE = 100;
/**
 * The cap on one skill call's arguments, as bytes of JSON (upload_file's content aside: it is
 * staged outside the journal and capped by the file store). A call over it is -32602 before
 * anything is journaled; see src-main/peers/input-bounds.ts for why 1 MB.
 */
export const MAX_SKILL_ARGUMENT_BYTES = 1_000_000;

/** The protocol's error table (docs/PEER-PROTOCOL.md): stable across every peer and every release. */
export const Mcpv2Error = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  InvalidSession: -32001,
  SkillNotFound: -32002,
  SkillExecutionError: -32003,
  ToolExecutionError: -32004,
  RateLimited: -32005,
  ProtocolVersionMismatch: -32006,
  FileNotFound: -32007,
  PaymentFailed: -32008,
  CapabilityViolation: -32009,
  UnsupportedProvider: -32010,
} as const;
export type Mcpv2ErrorCode = (typeof Mcpv2Error)[keyof typeof Mcpv2Error];

/** The message of -32010 exactly as the protocol's table words it (docs/PEER-PROTOCOL.md). */
export const UNSUPPORTED_PROVIDER_MESSAGE = 'Unsupported provider';

/**
 * AgentPlane's status of a skill call that waits for a person. It travels as `approval` on every
 * such answer, and also as `status` except on `pay`, whose `status` is the protocol's.
 */
export const PENDING_APPROVAL = 'pending-approval';
/** `pay`'s `status` as the protocol fixes it (docs/PEER-PROTOCOL.md): no payment is ever settled. */
export const PAY_PROTOCOL_STATUS = 'pending';
/**
 * `pay`'s `transaction_id`: the protocol's field, filled with a name no payment system issues, so
 * nothing can take it for a real transaction. Derived from the run, so one call has one id.
 */
export function payTransactionId(runId: string): string {
  return `not-a-payment-${runId}`;
}

export const JsonRpcIdSchema = z.union([z.string(), z.number(), z.null()]);
export type JsonRpcId = z.infer<typeof JsonRpcIdSchema>;

export const SlotContextSchema = z
  .object({
    /** History format the caller speaks (translate, `/ai/{provider}`). */
    provider: z.string().optional(),
    /** LLM mode: which conversation an `ask` continues. */
    conversation: z.string().max(200).optional(),
    /**
     * Which run and step made this call, when a plane run calls a peer: the peer records it on
     * the skill run it admits, so the journal links the caller's effect and the callee's run
     * both ways. Checked by the peer (peer-server.ts) rather than here, so a malformed one is
     * refused as exactly that, not as a malformed slot.
     */
    caller: z.unknown().optional(),
  })
  .passthrough();

/** `context.caller`: a run id and the step of its effect that made the call. */
export const SlotCallerSchema = z.object({ runId: RunIdSchema, step: z.number().int().nonnegative() }).strict();
export type SlotCaller = z.infer<typeof SlotCallerSchema>;

export const SlotSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: JsonRpcIdSchema.optional(),
  method: z.string().min(1),
  params: z.union([z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
  context: SlotContextSchema.optional(),
});
export type Slot = z.infer<typeof SlotSchema>;

export const ErrorObjectSchema = z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() });
export const SlotResponseSchema = z.union([
  z.object({ jsonrpc: z.literal('2.0'), id: JsonRpcIdSchema, result: z.unknown() }),
  z.object({ jsonrpc: z.literal('2.0'), id: JsonRpcIdSchema, error: ErrorObjectSchema }),
]);
export type SlotResponse = z.infer<typeof SlotResponseSchema>;

export const SessionAnswerSchema = z.object({ sessionId: z.string(), expiresAt: z.number(), ttl: z.number() });
export type SessionAnswer = z.infer<typeof SessionAnswerSchema>;

export const ToolCallParamsSchema = z.object({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()).default({}) }).passthrough();

// ---- skill arguments (served as JSON Schema by tools/list) ----
export const skillArguments = {
  ping: z.object({}).strict(),
  // Characters, never more than the bytes the argument cap counts: the cap is the bound.
  ask: z.object({ query: z.string().min(1).max(MAX_SKILL_ARGUMENT_BYTES) }).strict(),
  upload_file: z
    .object({ filename: z.string().min(1).max(255), content: z.string().max(16 * 1024 * 1024), encoding: z.enum(['utf8', 'base64']).default('utf8') })
    .strict(),
  list_files: z.object({}).strict(),
  process_instructions: z.object({ filename: z.string().min(1).max(255), instructions: z.string().min(1).max(10_000) }).strict(),
  delete_file: z.object({ filename: z.string().min(1).max(255) }).strict(),
  get_skill: z.object({ name: z.string().min(1).max(200) }).strict(),
  negotiate: z.object({ versions: z.array(z.string().min(1)).min(1).max(20), capabilities: z.array(z.string().min(1)).max(100).default([]) }).strict(),
  pay: z.object({ amount: z.number().positive().max(1e9), currency: z.string().regex(/^[A-Z]{3}$/, 'a three-letter currency code'), payee: z.string().min(1).max(200) }).strict(),
  translate_history: z.object({ from: z.string().min(1), to: z.string().min(1), messages: z.unknown() }).strict(),
} as const;
export type BuiltinSkill = keyof typeof skillArguments;

export const PeerCapabilitiesSchema = z.object({
  llmMode: z.boolean(),
  /** Reported flag only, as in docs/PEER-PROTOCOL.md: TLS client certificates are a proxy's job. */
  mtls: z.boolean(),
  batch: z.object({ maxSize: z.number().int() }),
  /** How callers authenticate: sessions, peer credentials, or (alone) a token issuer's delegated access tokens. */
  auth: z.array(z.enum(['session', 'peer-credential', 'delegated-token'])),
});

export const SkillDescriptorSchema = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
  /** True when a person must approve before it acts (e.g. `pay`). */
  requiresApproval: z.boolean().default(false),
  custom: z.boolean().default(false),
});
export type SkillDescriptor = z.infer<typeof SkillDescriptorSchema>;

export const AgentCardSchema = z.object({
  name: z.string(),
  peerId: z.string(),
  protocol: z.literal('mcpv2'),
  protocolVersions: z.array(z.string()),
  address: z.string(),
  /** The peer's Ed25519 public key (JWK): who it is, beyond the shared secret. */
  identity: z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), x: z.string() }).optional(),
  capabilities: PeerCapabilitiesSchema,
  skills: z.array(SkillDescriptorSchema),
});
export type AgentCard = z.infer<typeof AgentCardSchema>;

export const HealthSchema = z.object({
  status: z.literal('ok'),
  peerId: z.string(),
  name: z.string(),
  version: z.string(),
  protocolVersion: z.string(),
  llmMode: z.boolean(),
  mtls: z.boolean(),
  uptimeSeconds: z.number(),
  activeSessions: z.number().int(),
});
export type Health = z.infer<typeof HealthSchema>;

/** `mcpv2://host:port/mcpv2[?sessionId=…]`, the protocol's address form (docs/PEER-PROTOCOL.md). */
export function parsePeerAddress(address: string): { host: string; port: number; sessionId: string | null } | null {
  const match = /^mcpv2:\/\/(\[[0-9a-fA-F:.]+\]|[^/:?#\s]+):(\d{1,5})(\/mcpv2)?\/?(\?sessionId=([^&#\s]+))?$/.exec(address.trim());
  if (!match) return null;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return null;
  return { host: match[1]!.replace(/^\[|\]$/g, ''), port, sessionId: match[5] ? decodeURIComponent(match[5]) : null };
}

export function formatPeerAddress(host: string, port: number, sessionId?: string): string {
  const h = host.includes(':') ? `[${host}]` : host;
  return `mcpv2://${h}:${port}/mcpv2${sessionId ? `?sessionId=${encodeURIComponent(sessionId)}` : ''}`;
}
