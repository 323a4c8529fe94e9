/**
 * Reading a run's calls to MCP tools out of its journal records, for the timeline, the record
 * inspector and the approvals card. The runtime writes a call as one effect: `effect: 'mcp'`,
 * `name: '<server>/<tool>'`, `request: {server, tool, arguments}`; its EffectDone carries the
 * tool's result (the protocol's CallToolResult: `content` blocks, maybe `structuredContent`)
 * labelled `mcp:<server>`, untrusted. A result too large for the journal is there as its digest
 * and size (`{large: {sha256, bytes}, note}`, runtime/mcp-effect.ts). Records are read as written by any version: a shape that
 * does not match is reported as not an MCP call, and shown raw by the caller.
 */
import { oneLineJson } from './display-format';
import { isRecord } from '../../../src-shared/plain-object';

export interface McpCall {
  server: string;
  tool: string;
  arguments: unknown;
}


/** The call an effect names, or null when it is not an MCP call (or not one this build can read). */
export function readMcpCall(effect: unknown, request: unknown): McpCall | null {
  // A model step's lookup of a tool's schema (`describe: true`) is an MCP effect but not a call.
  if (effect !== 'mcp' || !isRecord(request) || request.describe === true) return null;
  const { server, tool } = request;
  if (typeof server !== 'string' || typeof tool !== 'string') return null;
  return { server, tool, arguments: request.arguments ?? {} };
}

/** The server an EffectDone's provenance names (`mcp:<server>`), or null for any other effect. */
export function mcpServerOfProvenance(provenance: unknown): string | null {
  return typeof provenance === 'string' && provenance.startsWith('mcp:') ? provenance.slice('mcp:'.length) : null;
}

/** `MCP tool echo on everything`: how the timeline and an approval name a call. */
export function mcpCallWords(call: Pick<McpCall, 'server' | 'tool'>): string {
  return `MCP tool ${call.tool} on ${call.server}`;
}

/**
 * A large value the journal holds as its digest and size instead: a DigestRef itself, or the
 * runtime's `{large: DigestRef, note}` (runtime/mcp-effect.ts) in place of a whole result.
 */
function digestWords(value: unknown): string | null {
  const ref = isRecord(value) && isRecord(value.large) ? value.large : value;
  if (!isRecord(ref) || typeof ref.sha256 !== 'string' || typeof ref.bytes !== 'number') return null;
  return `${ref.bytes} bytes, kept as their SHA-256 ${ref.sha256.slice(0, 12)}…`;
}

/**
 * What a tool's result says, as text: its text blocks joined, then what the other blocks are
 * (an image, a resource link…), or its structured content when it gave no text. Null when the
 * value is not a CallToolResult (it is then shown as JSON).
 */
export function mcpResultText(result: unknown): string | null {
  const digest = digestWords(result);
  if (digest) return `a large result: ${digest}`;
  if (!isRecord(result) || !Array.isArray(result.content)) return null;
  const parts: string[] = [];
  for (const block of result.content) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    else if (block.type === 'text') parts.push(digestWords(block.text) ?? '[text]');
    else if (block.type === 'resource_link' || block.type === 'resource') {
      const uri = typeof block.uri === 'string' ? block.uri : isRecord(block.resource) && typeof block.resource.uri === 'string' ? block.resource.uri : '';
      parts.push(`[resource${uri ? ` ${uri}` : ''}]`);
    } else parts.push(`[${typeof block.type === 'string' ? block.type : 'content'}${typeof block.mimeType === 'string' ? ` ${block.mimeType}` : ''}]`);
  }
  if (parts.length === 0 && result.structuredContent !== undefined) return oneLineJson(result.structuredContent, 4000);
  return parts.join(' ');
}

/** At most `max` characters of a text, on one line. */
export function clip(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
