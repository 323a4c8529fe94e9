/**
 * The REPL's `help`, as a person reads it: SendTo is the command, SentTo (the spelling of the
 * original MCPv2 command line) the same command under another name, and no line speaks of a
 * "seed" (a word from this project's history that means nothing to a user). The REPL as a real
 * process (the CLI's TypeScript entry through tsx), `help` and `exit` written to its stdin.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDataDir } from '../../tests/support/journal-support';

const ROOT = join(import.meta.dirname, '..', '..');

function replSession(lines: string[], dataDir: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src-main', 'cli', 'main.ts'), 'repl', '--data-dir', dataDir], {
      cwd: ROOT,
      env: { ...process.env, AGENTPLANE_DEMO_PEERS: '0' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(lines.map((l) => `${l}\n`).join(''));
  });
}

describe('agentplane repl: help', () => {
  it('shows SendTo with what it does, SentTo as the same command, and never the word seed', { timeout: 60_000 }, async () => {
    const session = await replSession(['help', 'exit'], tempDataDir('ap-repl-help-'));
    expect(session.code, session.stderr).toBe(0);
    const lines = session.stdout.split('\n');
    const sendTo = lines.findIndex((l) => /^ {2}SendTo "<prompt>"/.test(l));
    expect(sendTo, session.stdout).toBeGreaterThan(-1);
    expect(lines[sendTo + 1]).toMatch(/^ {6}ask the peer a prompt/);
    const sentTo = lines.findIndex((l) => /^ {2}SentTo /.test(l));
    expect(sentTo).toBeGreaterThan(sendTo);
    expect(lines[sentTo + 1]).toMatch(/^ {6}the same as SendTo\b/);
    expect(session.stdout).not.toMatch(/\bseed/i);
  });
});
