/**
 * Built-in tools an agent may be granted. Each is an effect: journaled once, replayed from the
 * record. `file.write` and `file.read` work inside the data dir's workspace/ folder only: the
 * path is resolved and must stay inside it (`..`, absolute paths and NUL bytes are refused),
 * so a granted write can never reach anything else on the machine.
 */
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { writePrivateFile } from '../base/private-files';
import { EffectFailure } from './run-signals';
import { NO_SPEND } from '../../src-shared/vocabulary/spend';
import type { EffectOutcome } from './run-context';
import type { FileLabels } from './file-labels';

export interface ToolContext {
  workspace: string;
  /** The workspace files' sensitivity labels (file-labels.ts); absent, files carry none. */
  labels?: FileLabels;
  /** The label the request carries, when above the lowest: what `file.write` stores for its file. */
  carried?: string;
}

export interface Tool {
  name: string;
  description: string;
  /** The arguments it reads, by name: what a grant's `protect:` may name (absent: any name, as `echo` takes anything). */
  args?: readonly string[];
  /** What the tool does to the world, for the approval screen. */
  destination(args: Record<string, unknown>, context: ToolContext): string | undefined;
  run(args: Record<string, unknown>, context: ToolContext): Promise<EffectOutcome>;
}

const MAX_FILE_BYTES = 1024 * 1024;

export function workspacePath(workspace: string, requested: unknown): string {
  if (typeof requested !== 'string' || requested.length === 0) throw new EffectFailure('BadArguments', 'path: a relative file name is required', 'DidNotHappen');
  if (requested.includes('\0')) throw new EffectFailure('BadArguments', 'path: NUL bytes are not allowed', 'DidNotHappen');
  if (isAbsolute(requested) || /^[a-zA-Z]:[\\/]/.test(requested)) throw new EffectFailure('BadArguments', 'path: must be relative to the workspace', 'DidNotHappen');
  const root = resolve(workspace);
  const target = resolve(root, requested.replace(/\\/g, '/'));
  const rel = relative(root, target);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.split(sep).includes('..')) {
    throw new EffectFailure('BadArguments', 'path: must stay inside the workspace', 'DidNotHappen');
  }
  return target;
}

const echo: Tool = {
  name: 'echo',
  description: 'returns its arguments',
  destination: () => undefined,
  run: async (args) => ({ result: args, spend: { ...NO_SPEND, effects: 1 }, provenance: 'plane' }),
};

const fileWrite: Tool = {
  name: 'file.write',
  description: 'writes a text file in the workspace',
  args: ['path', 'content'],
  destination: (args, context) => {
    try {
      return `file://${workspacePath(context.workspace, args.path)}`;
    } catch {
      return undefined;
    }
  },
  run: async (args, context) => {
    const target = workspacePath(context.workspace, args.path);
    if (typeof args.content !== 'string') throw new EffectFailure('BadArguments', 'content: text is required', 'DidNotHappen');
    if (Buffer.byteLength(args.content) > MAX_FILE_BYTES) throw new EffectFailure('BadArguments', `content: larger than ${MAX_FILE_BYTES} bytes`, 'DidNotHappen');
    // Inside the data dir, so the user's alone (0700 folders, 0600 files); O_NOFOLLOW keeps a
    // link at the target's name from redirecting the write outside the workspace.
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    writePrivateFile(target, args.content);
    const path = relative(context.workspace, target);
    // The file now holds what was written: its label is the request's (none when the lowest).
    context.labels?.set(path, context.carried);
    return { result: { path, bytes: Buffer.byteLength(args.content) }, spend: { ...NO_SPEND, effects: 1 }, provenance: 'plane' };
  },
};

const fileRead: Tool = {
  args: ['path'],
  name: 'file.read',
  description: 'reads a text file from the workspace',
  destination: () => undefined,
  run: async (args, context) => {
    const target = workspacePath(context.workspace, args.path);
    if (!existsSync(target)) throw new EffectFailure('NotFound', `no file ${String(args.path)} in the workspace`, 'DidNotHappen');
    const content = readFileSync(target, 'utf8').slice(0, MAX_FILE_BYTES);
    const path = relative(context.workspace, target);
    // A file a run wrote answers with the label of what was written into it (file-labels.ts).
    const label = context.labels?.get(path);
    return { result: { path, content }, spend: { ...NO_SPEND, effects: 1 }, provenance: 'plane', ...(label !== undefined ? { sensitivity: label } : {}) };
  },
};

export const builtinTools: ReadonlyMap<string, Tool> = new Map([echo, fileWrite, fileRead].map((t) => [t.name, t]));

export function workspaceOf(dataDir: string): string {
  const dir = join(dataDir, 'workspace');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
