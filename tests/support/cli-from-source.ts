/**
 * The CLI run from its TypeScript source (tsx), as a real process: for CLI tests that need no
 * build. Demo peers are off, so a command that starts a plane starts no peer of its own.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

export interface SourceCliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runCliFromSource(args: string[], env: Record<string, string> = {}): Promise<SourceCliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src-main', 'cli', 'main.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, AGENTPLANE_DEMO_PEERS: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
