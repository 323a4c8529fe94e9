/**
 * Failure codes: what an effect's failure (the journal's EffectFailed) and a failed run's seal
 * (RunSealed) name as their `error.code`. One closed list, so a code is written by one build
 * the same way everywhere, and a reader (the CLI, the UI, a peer answering a skill's caller,
 * an A2A or MCP door reporting a task) can rely on the words it compares against.
 *
 * A record already in a journal keeps the code it was written with, which an older build may
 * have spelled otherwise: records are hashed and never rewritten. So the journal's schema reads
 * any string (src-shared/journal/records.ts), and only writers are held to this list, plus one
 * exception: a failure replayed from its record is carried on with the code it was recorded
 * with (RecordedFailureCode), so a run resumed by a newer build seals as it failed.
 */
import { z } from 'zod';

export const FailureCodeSchema = z.enum([
  // ---- The runtime: a step, a grant, a replay ----
  /** The plane stopped while the effect was in flight; whether it happened is unknown. */
  'InFlightAtStop',
  /** The manifest does not grant the effect to the agent. */
  'NotGranted',
  /** The effect threw something that is not an effect failure; whether it happened is unknown. */
  'EffectError',
  /** A person resolved an in-doubt effect as failed. */
  'RecoveryFailed',
  /** A protected field of the effect would take a value from an origin its grant refuses (docs/GOVERNED-RUNTIME.md, "Provenance at protected sinks"). */
  'ProvenanceRefused',
  /** The effect's request carries a value above its destination's or its agent's sensitivity ceiling (docs/GOVERNED-RUNTIME.md, "Sensitivity"). */
  'SensitivityCeiling',
  /** A step's template could not be filled in (a placeholder naming nothing). */
  'TemplateError',
  /** A step or tool was called with arguments it cannot take (a bad path, amount or content). */
  'BadArguments',
  /** A file tool was asked for a file the workspace does not hold. */
  'NotFound',
  /** No tool of that name. */
  'NoSuchTool',
  /** No model provider of that name is configured. */
  'NoSuchProvider',
  /** The plane hosts no peers, so a peer effect has nowhere to go. */
  'NoPeers',
  /** The plane reaches no MCP servers, so an MCP effect has nowhere to go. */
  'NoMcpServers',
  /** The plane calls no remote A2A agents, so an A2A effect has nowhere to go. */
  'NoA2aClient',
  /** This runtime starts no child runs, so an agent tool cannot be offered. */
  'NoAgentTools',
  /** Replay met a step whose key differs from the record: the run would do something else now. */
  'Divergence',
  /** A person denied what the run waited on (an approval, an input, a budget raise). */
  'Denied',
  /** The run failed inside the plane; the plane log has the detail. */
  'Internal',

  // ---- Model calls ----
  /** The provider refused the call before generating (nothing was spent). */
  'ModelRefused',
  /** The provider could not be reached or was unavailable (nothing was spent). */
  'ModelUnavailable',
  /** The stream died mid-generation: it happened, billed for what it burned. */
  'ModelInterrupted',
  /** The call consumed tokens the provider never reported. */
  'ModelUnaccounted',
  /** The model has no price and the run has a money ceiling its spend could not be held under. */
  'ModelUnpriced',
  /** The model was still calling tools after the step's maxTurns. */
  'ModelMaxTurns',
  /** The model's answer does not match the step's response schema. */
  'StructuredOutputInvalid',

  // ---- Child runs (another agent of the plane, called as a tool) ----
  /** No agent of that name is declared on this plane. */
  'NoSuchAgent',
  /** The agent is declared, but its manifest file does not load. */
  'AgentBroken',
  /** The run's agent is no longer declared (or is broken), so it cannot be resumed. */
  'AgentGone',
  /** The input does not match the child agent's input schema. */
  'AgentInputInvalid',
  /** The child run was refused at admission (policy, a halt). */
  'AgentNotStarted',
  /** The child's derived run id names a run that is not this call's child. */
  'AgentRunClash',
  /** The delegation chain would pass its depth cap, or policy refused the delegation. */
  'DelegationRefused',
  /** The child run sealed failed. */
  'AgentFailed',
  /** The child run was cancelled. */
  'AgentCancelled',
  /** The child run was denied by a person. */
  'AgentDenied',
  /** The child run was halted. */
  'AgentHalted',
  /** The child run was a watched session, not a run the plane executed. */
  'AgentObserved',

  // ---- Peers (the plane calling a peer's skill) ----
  /** No peer of that name in the plane's registry. */
  'UnknownPeer',
  /** The peer is revoked. */
  'PeerRevoked',
  /** The peer is not running. */
  'PeerStopped',
  /** The peer accepts peer credentials only, and the plane calls with a session. */
  'PeerAuth',
  /** The peer's address is malformed; nothing was sent. */
  'PeerAddress',
  /** The peer could not be reached; nothing was sent. */
  'PeerUnreachable',
  /** The peer refused the session or credential before running anything. */
  'PeerSession',
  /** The peer refused the request as a whole (a 4xx) before running any of it. */
  'PeerRefused',
  /** The request left and no usable answer came back; the peer may have run it. */
  'PeerNoAnswer',
  /** The peer answered the call with a JSON-RPC error. */
  'PeerCall',
  /** The token issuer refused the exchange for a delegated credential (its OAuth error code only); nothing was sent to the peer. */
  'TokenExchangeRefused',
  /** The token issuer could not be reached or gave no usable answer; nothing was sent to the peer. */
  'TokenIssuerUnavailable',
  /** The run's subject or agent was halted while the hop was being prepared; the call never left (the run waits on the halt). */
  'HaltedAtHop',

  // ---- A skill run on a peer: its MCPv2 error (docs/PEER-PROTOCOL.md), answered to the caller ----
  /** -32700 Parse error. */
  'mcpv2:-32700',
  /** -32600 Invalid Request. */
  'mcpv2:-32600',
  /** -32601 Method not found. */
  'mcpv2:-32601',
  /** -32602 Invalid params. */
  'mcpv2:-32602',
  /** -32603 Internal error. */
  'mcpv2:-32603',
  /** -32001 Invalid session. */
  'mcpv2:-32001',
  /** -32002 Skill not found. */
  'mcpv2:-32002',
  /** -32003 Skill execution error. */
  'mcpv2:-32003',
  /** -32004 Tool execution error. */
  'mcpv2:-32004',
  /** -32005 Rate limited. */
  'mcpv2:-32005',
  /** -32006 Protocol version mismatch. */
  'mcpv2:-32006',
  /** -32007 File not found. */
  'mcpv2:-32007',
  /** -32008 Payment failed. */
  'mcpv2:-32008',
  /** -32009 Capability violation. */
  'mcpv2:-32009',
  /** -32010 Unsupported provider. */
  'mcpv2:-32010',

  // ---- MCP servers (a tool on a server the plane reaches) ----
  /** No MCP server of that name is declared. */
  'McpServerNotDeclared',
  /** The MCP servers file does not read. */
  'McpServersFileInvalid',
  /** The server's connection could not be set up; nothing was sent. */
  'McpUnavailable',
  /** Connecting to the server failed; the tool was not called. */
  'McpConnectFailed',
  /** The connection was not open when the call was made; nothing was sent. */
  'McpNotConnected',
  /** Netguard refused the server's address; nothing was sent. */
  'McpAddressRefused',
  /** The server could not be reached; nothing was sent. */
  'McpUnreachable',
  /** The server refused the call before running the tool (unknown tool, bad arguments, a 4xx). */
  'McpRefused',
  /** The tool ran and reported an error. */
  'McpToolError',
  /** The server failed with an error the tool may have raised after starting. */
  'McpServerError',
  /** No answer within the deadline; whether the tool ran is unknown. */
  'McpTimeout',
  /** The connection was lost after the request was sent; whether the tool ran is unknown. */
  'McpConnectionLost',
  /** The call failed in a way that does not say whether the tool ran. */
  'McpCallFailed',

  // ---- Remote A2A agents ----
  /** The agent card could not be fetched. */
  'A2aCardUnreachable',
  /** The agent card's URL answered with an HTTP error. */
  'A2aCardUnavailable',
  /** The agent card is not a JSON object. */
  'A2aCardInvalid',
  /** The card is unsigned where a signature is required (a signed grant, or a pinned origin). */
  'A2aCardUnsigned',
  /** The card is signed, but its signature does not verify. */
  'A2aCardSignatureInvalid',
  /** The card is signed with a key other than the one its origin is pinned to. */
  'A2aPinnedKeyChanged',
  /** The file of pinned card keys does not read. */
  'A2aPinsUnreadable',
  /** The card offers no usable JSON-RPC interface. */
  'A2aNoInterface',
  /** The card's interface is not on the card's own origin; nothing was sent. */
  'A2aInterfaceOffOrigin',
  /** The remote answered with a redirect, which is not followed. */
  'A2aRedirectRefused',
  /** An answer was larger than the plane reads. */
  'A2aAnswerTooLarge',
  /** An answer is not the JSON-RPC the call expects. */
  'A2aAnswerInvalid',
  /** The remote answered with a JSON-RPC error. */
  'A2aRemoteError',
  /** The remote plane refused admission: this caller's quota of open tasks is full; nothing happened, retry later. */
  'A2aRemoteBusy',
  /** The remote plane refused admission: a halt covers the agent or this caller; nothing happened, do not retry. */
  'A2aRemoteHalted',
  /** The remote plane refused admission: it is shutting down; nothing happened, try later or elsewhere. */
  'A2aRemoteDraining',
  /** The message could not be sent. */
  'A2aUnreachable',
  /** The message left and no answer came; it may have been acted on. */
  'A2aNoAnswer',
  /** Following the remote task failed after it was created. */
  'A2aFollowLost',
  /** The remote task had not ended when following it timed out. */
  'A2aFollowExpired',
  /** The remote task asks for input, which this plane's client does not give. */
  'RemoteTaskNeedsInput',
  /** The remote task ended in a state other than completed (failed, rejected, cancelled). */
  'RemoteTaskFailed',
  /** The run was cancelled while following the remote task (which was asked to cancel too). */
  'RemoteTaskCancelled',
]);
export type FailureCode = z.infer<typeof FailureCodeSchema>;

declare const recorded: unique symbol;

/**
 * A code read back from an EffectFailed record, carried on unchanged: a failure replayed from
 * the journal is thrown (and may seal its run) with the code it was recorded with, which an
 * older build may have spelled otherwise. Only recordedFailureCode makes one, so a literal
 * written in code is always checked against FailureCode.
 */
export type RecordedFailureCode = string & { readonly [recorded]: true };

/** What a failure carries: a code of this build, or one read back from the journal. */
export type CarriedFailureCode = FailureCode | RecordedFailureCode;

/** A code as a record holds it (see RecordedFailureCode). */
export function recordedFailureCode(code: string): CarriedFailureCode {
  return code as RecordedFailureCode;
}

/** A failure as a writer writes it into a record: its code, and a message for people. */
export interface FailureInfo {
  code: CarriedFailureCode;
  message: string;
}
