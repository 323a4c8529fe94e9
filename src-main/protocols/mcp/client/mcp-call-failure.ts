/**
 * What a failed tools/call means for the world, decided from what the wire said (the
 * EffectFailure dispositions of runtime/run-signals.ts):
 * - DidNotHappen (safe to retry): the server is not declared, cannot be started or reached,
 *   the handshake failed or timed out (the call was never sent); the server refused the call
 *   with a JSON-RPC error that is a refusal before running (parse, invalid request, unknown
 *   method, invalid params such as an unknown tool or arguments failing the tool's schema,
 *   resource not found, header/version refusals), also when the server's SDK wraps such a
 *   -32602 refusal into an `isError` result (`MCP error -32602: …`, as McpServer does); an
 *   HTTP 4xx.
 * - Landed: the tool ran and answered `isError: true`: it said it failed, whatever it did is
 *   done. The server's text is the failure's message.
 * - InDoubt (a person decides): the request left and no answer came: the deadline passed, the
 *   process died or the connection dropped, an HTTP 5xx, or any other JSON-RPC error
 *   (-32603 and server-defined codes can be raised after the tool started its work; treating
 *   them as proof that nothing happened is how a half-done action is sent twice).
 *
 * The failures not being declared or not connecting are the pool's own (McpClientPool.callTool).
 */
import { EffectFailure } from '../../../runtime/run-signals';
import { loadedClientSdk, type Connection } from './mcp-connection';
import { DeadlinePassed, type Deadline } from './mcp-deadline';
import { messageOf, shorten } from './mcp-client-text';

/** JSON-RPC codes a server answers when it refused a request before doing anything. */
const REFUSED_BEFORE_RUNNING = new Set<number>([
  -32700, // parse error
  -32600, // invalid request
  -32601, // method not found
  -32602, // invalid params: an unknown tool, arguments failing the tool's schema
  -32002, // resource not found
  -32020, // headers and body disagree (2026-07-28)
  -32021, // missing required header (2026-07-28)
  -32022, // unsupported protocol version (2026-07-28)
]);

/** What a tools/call that threw means for the world (the module comment says which is which). */
export function failureOf(connection: Connection, tool: string, error: unknown, deadline: Deadline): EffectFailure {
  const server = connection.name;
  const said = connection.redact(shorten(messageOf(error)));
  const garbage = connection.nonProtocol ? `; it wrote non-protocol output on stdout: "${connection.nonProtocol}"` : '';
  // A failed call means a client existed, so the SDK is loaded; without it nothing is the SDK's.
  const sdk = loadedClientSdk()?.client;
  const sdkError = sdk && error instanceof sdk.SdkError ? error : undefined;
  const sdkTimedOut = sdk !== undefined && sdkError !== undefined && sdkError.code === sdk.SdkErrorCode.RequestTimeout;
  if (error instanceof DeadlinePassed || sdkTimedOut || deadline.passed) {
    return new EffectFailure('McpTimeout', `${server}/${tool}: no answer within ${deadline.ms} ms${garbage}; the request was sent, so whether the tool ran is unknown`, 'InDoubt');
  }
  if (sdk && error instanceof sdk.ProtocolError) {
    if (REFUSED_BEFORE_RUNNING.has(error.code)) return new EffectFailure('McpRefused', `${server} refused ${tool}: ${said}`, 'DidNotHappen');
    return new EffectFailure('McpServerError', `${server}/${tool} failed with an error the tool may have raised after starting: ${said}`, 'InDoubt');
  }
  if (sdk && sdkError) {
    const status = (sdkError.data as { status?: unknown } | undefined)?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) return new EffectFailure('McpRefused', `${server} refused ${tool} with HTTP ${status}: ${said}`, 'DidNotHappen');
    if (sdkError.code === sdk.SdkErrorCode.NotConnected) return new EffectFailure('McpNotConnected', `${server}/${tool} was not sent: ${said}`, 'DidNotHappen');
    if (sdkError.code === sdk.SdkErrorCode.ConnectionClosed) {
      const how = connection.fault ?? (connection.config.transport === 'stdio' ? 'the server process exited or closed its pipes' : 'the connection closed');
      return new EffectFailure('McpConnectionLost', `${server}/${tool}: ${how} after the request was sent${garbage}; whether the tool ran is unknown`, 'InDoubt');
    }
  }
  // netguard refused the address at connect: nothing was sent, and retrying cannot help (a
  // forbidden address must not read as a server that is merely down).
  if (/netguard refused/.test(said)) return new EffectFailure('McpAddressRefused', `${server}/${tool} was not sent: ${said}`, 'DidNotHappen');
  const refusedBeforeSending = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(said);
  if (refusedBeforeSending) return new EffectFailure('McpUnreachable', `${server}/${tool} was not sent: ${said}`, 'DidNotHappen');
  return new EffectFailure('McpCallFailed', `${server}/${tool}: ${said}${garbage}; whether the tool ran is unknown`, 'InDoubt');
}

/** What a tools/call answered with `isError: true` means: the tool ran and failed, unless its words are a refusal. */
export function failureOfErrorResult(connection: Connection, tool: string, content: unknown): EffectFailure {
  const server = connection.name;
  const text = connection.redact(shorten(textOf(content) || 'no text', 1_000));
  // McpServer (both SDK generations) wraps its own refusals (an unknown tool, arguments
  // failing the schema) into an isError result: the tool never ran.
  if (/^MCP error -32602:/.test(text)) return new EffectFailure('McpRefused', `${server} refused ${tool}: ${text}`, 'DidNotHappen');
  return new EffectFailure('McpToolError', `${server}/${tool} ran and reported an error: ${text}`, 'Landed');
}

/** The text parts of a tool result's content, joined: what a tool that failed said. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => (part && typeof part === 'object' && (part as { type?: unknown }).type === 'text' ? String((part as { text?: unknown }).text ?? '') : ''))
    .filter(Boolean)
    .join('\n');
}
