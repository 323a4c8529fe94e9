/**
 * A caller's message, checked and read as the agent's input. The message holds exactly one part,
 * the agent input: a data part is that object, a text part is the value of the agent's one
 * required string field. Its declared mediaType must agree with the part, and a skill it names
 * must be this agent's. raw and url parts are refused (-32005): file parts are not served yet.
 */
import type { AgentSummary } from '../../../src-shared/ipc/contract';
import { A2A_ERRORS, RpcError, type Json } from './a2a-wire';

/** The agent's input from a message's parts (the rules are in this module's comment). */
export function inputOf(message: Json, agent: AgentSummary): unknown {
  const parts = message.parts;
  if (!Array.isArray(parts) || parts.length === 0) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.parts must hold one text or data part', { field: 'message.parts' });
  if (parts.length > 1) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.parts must hold exactly one part (the agent input)', { field: 'message.parts' });
  const part = parts[0] as Json;
  const members = ['text', 'data', 'raw', 'url'].filter((k) => part[k] !== undefined);
  if (members.length !== 1) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: a part holds exactly one of text, data, raw, url', { field: 'message.parts[0]' });
  checkMediaType(part, members[0]!);
  if (members[0] === 'data') {
    if (typeof part.data !== 'object' || part.data === null || Array.isArray(part.data)) {
      throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.parts[0].data must be an object (the agent input)', { field: 'message.parts[0].data' });
    }
    return part.data;
  }
  if (members[0] !== 'text') throw new RpcError(A2A_ERRORS.contentTypeNotSupported, 'raw and url parts are not accepted: send the input as a data part (or text, for a one-string input)', { field: 'message.parts[0]' });
  if (typeof part.text !== 'string') throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.parts[0].text must be a string', { field: 'message.parts[0].text' });
  const schema = agent.inputSchema as { required?: unknown; properties?: Record<string, { type?: unknown }> };
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const only = required.length === 1 ? required[0]! : null;
  if (only === null || schema.properties?.[only]?.type !== 'string') {
    throw new RpcError(
      A2A_ERRORS.invalidParams,
      `Invalid params: ${agent.name}'s input schema needs ${required.length === 0 ? 'an object' : `the fields ${required.join(', ')}`}, not one text; send a data part matching ${JSON.stringify(agent.inputSchema)}`,
      { field: 'message.parts[0]', inputSchema: agent.inputSchema },
    );
  }
  return { [only]: part.text };
}

/**
 * A part's declared mediaType must agree with the member it chose (docs/GOVERNED-RUNTIME.md,
 * "Parts are a oneof"): text declared as JSON, or data declared as plain text, is a sender that
 * does not know what it sent, and guessing which half it meant would run the agent on a
 * misreading. Empty is unset (ProtoJSON's default). raw and url parts are refused after this anyway.
 */
function checkMediaType(part: Json, member: string): void {
  const declared = part.mediaType;
  if (declared === undefined || declared === '') return;
  const type = typeof declared === 'string' ? declared.split(';')[0]!.trim().toLowerCase() : null;
  const json = type !== null && (type === 'application/json' || type.endsWith('+json'));
  const agrees = type !== null && (member === 'text' ? type.startsWith('text/') : member === 'data' ? json : true);
  if (!agrees) {
    const expected = member === 'text' ? 'a text/* type' : 'application/json (or a +json type)';
    throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: message.parts[0] is a ${member} part but declares mediaType ${JSON.stringify(declared)}; a ${member} part's mediaType is ${expected}`, { field: 'message.parts[0].mediaType' });
  }
}

/**
 * The capability is named, never inferred (docs/GOVERNED-RUNTIME.md): `message.metadata.skill`,
 * when present, must be this card's one skill (the agent's name). A message meant for another
 * skill is refused rather than run by whichever agent it happened to reach.
 */
export function checkSkill(message: Json, agent: AgentSummary): void {
  const metadata = message.metadata;
  if (metadata === undefined || metadata === null) return;
  if (typeof metadata !== 'object' || Array.isArray(metadata)) throw new RpcError(A2A_ERRORS.invalidParams, 'Invalid params: message.metadata must be an object', { field: 'message.metadata' });
  const skill = (metadata as Json).skill;
  if (skill === undefined) return;
  if (skill !== agent.name) {
    throw new RpcError(A2A_ERRORS.invalidParams, `Invalid params: message.metadata.skill ${JSON.stringify(skill).slice(0, 80)} is not a skill of this agent; its card declares one skill, ${agent.name}`, { field: 'message.metadata.skill', skills: [agent.name] });
  }
}

/** The input field a runtime refusal names (`input.<field>:`, or a missing required property), for the error's `field`. */
export function fieldOfRuntime(message: string): string | null {
  return /input\.([^:;\s]+):/.exec(message)?.[1] ?? /required property '([^']+)'/.exec(message)?.[1] ?? null;
}
