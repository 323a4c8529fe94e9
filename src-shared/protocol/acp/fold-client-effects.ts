/**
 * What the agent asked the editor to do to the machine: fs/* and terminal/* requests become
 * client effects (one row each, its result from the editor's response), and terminals gather
 * their command, latest output and exit status. The editor performs these, not the plane; the
 * rows are the observed parties' account, shown so a person can see what touched their files.
 *
 * terminal/output returns the terminal's whole current output (not a delta), so the latest
 * answer replaces the last. A request naming a terminal never created (its terminal/create
 * behind a gap) still gets a terminal, with an empty command.
 */
import {
  CreateTerminalRequestSchema,
  ReadTextFileRequestSchema,
  TerminalRequestSchema,
  WriteTextFileRequestSchema,
  responseResultSchemas,
} from './acp-schema';
import { wireText } from './content-view';
import type { ClientEffectView, TerminalView } from './session-view';

export interface EffectState {
  readonly clientEffects: ClientEffectView[];
  readonly terminals: TerminalView[];
}

const CLIENT_EFFECT_METHODS = new Set([
  'fs/read_text_file',
  'fs/write_text_file',
  'terminal/create',
  'terminal/output',
  'terminal/wait_for_exit',
  'terminal/kill',
  'terminal/release',
]);

export function isClientEffectMethod(method: string): boolean {
  return CLIENT_EFFECT_METHODS.has(method);
}

function summaryOf(method: string, params: unknown): string {
  if (method === 'fs/read_text_file' || method === 'fs/write_text_file') {
    const p = (method === 'fs/read_text_file' ? ReadTextFileRequestSchema : WriteTextFileRequestSchema).safeParse(params);
    return p.success ? p.data.path : '';
  }
  if (method === 'terminal/create') {
    const p = CreateTerminalRequestSchema.safeParse(params);
    return p.success ? [p.data.command, ...(p.data.args ?? [])].join(' ') : '';
  }
  const p = TerminalRequestSchema.safeParse(params);
  return p.success ? p.data.terminalId : '';
}

function terminalFor(state: EffectState, terminalId: string, command = ''): TerminalView {
  const found = state.terminals.find((t) => t.terminalId === terminalId);
  if (found) return found;
  const made: TerminalView = { terminalId, command, output: '', truncated: false, exitStatus: null };
  state.terminals.push(made);
  return made;
}

/** Record a request as a pending client effect; returns its index in clientEffects. */
export function applyEffectRequest(state: EffectState, method: string, params: unknown, wire: number, at: string): number {
  state.clientEffects.push({ wire, at, method, summary: summaryOf(method, params), result: 'pending' });
  return state.clientEffects.length - 1;
}

/** Settle a client effect from the editor's answer, and update the terminal it names. */
export function applyEffectResponse(
  state: EffectState,
  index: number,
  method: string,
  params: unknown,
  answer: { result: unknown } | { error: string },
): void {
  const effect = state.clientEffects[index];
  if (effect === undefined) return;
  if ('error' in answer) {
    effect.result = `error: ${answer.error}`;
    return;
  }
  effect.result = 'done';
  if (method === 'terminal/create') {
    const created = responseResultSchemas[method].safeParse(answer.result);
    if (created.success) terminalFor(state, created.data.terminalId, effect.summary);
    return;
  }
  const req = TerminalRequestSchema.safeParse(params);
  if (!req.success) return;
  if (method === 'terminal/output') {
    const out = responseResultSchemas[method].safeParse(answer.result);
    if (!out.success) return;
    const terminal = terminalFor(state, req.data.terminalId);
    const text = wireText(out.data.output);
    terminal.output = text.text;
    terminal.truncated = out.data.truncated || text.truncated;
    const exit = out.data.exitStatus;
    if (exit) terminal.exitStatus = { exitCode: exit.exitCode ?? null, signal: exit.signal ?? null };
  } else if (method === 'terminal/wait_for_exit') {
    const exit = responseResultSchemas[method].safeParse(answer.result);
    if (exit.success) terminalFor(state, req.data.terminalId).exitStatus = { exitCode: exit.data.exitCode ?? null, signal: exit.data.signal ?? null };
  }
}
