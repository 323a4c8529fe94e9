/**
 * The folder the demo's coding session works in: the stand-in for a project open in an editor.
 * It holds one small file the demo agent reads, proposes to edit and checks, so every step of
 * the scripted session (a file read, a diff, a write, a terminal) has something real to act on.
 *
 * A folder the user names is never clobbered: the seed file is written only when it is absent.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The file the demo agent works on, relative to the session's cwd. */
export const DEMO_FILE = 'greeting.ts';

/** The seed text. The agent's scripted edit turns the concatenation into a friendlier template. */
export const DEMO_FILE_TEXT = ["export function greet(name: string): string {", "  return 'Hello, ' + name;", '}', ''].join('\n');

/**
 * Returns the workspace's real absolute path (symlinks resolved, so later containment checks
 * compare like with like): `dir` when given (created if missing), else a new temporary folder.
 */
export function prepareDemoWorkspace(dir?: string): string {
  let root: string;
  if (dir === undefined) {
    root = mkdtempSync(join(tmpdir(), 'agentplane-acp-demo-'));
  } else {
    root = resolve(dir);
    mkdirSync(root, { recursive: true });
  }
  const file = join(root, DEMO_FILE);
  if (!existsSync(file)) writeFileSync(file, DEMO_FILE_TEXT, { flag: 'wx' });
  return realpathSync(root);
}
