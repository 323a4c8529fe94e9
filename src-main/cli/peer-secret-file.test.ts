/**
 * `peer start --secret-file`: the secret off argv, from a file only its user can read. Refusals
 * happen before anything of the data dir is touched.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Command } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { addPeerCommands } from './peer-commands';
import { readSecretFile } from './peer-run';

const ROOT = join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'ap-secret-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function secretFile(name: string, content: string, mode: number): string {
  const file = join(dir, name);
  writeFileSync(file, content);
  chmodSync(file, mode);
  return file;
}

function peerStart(...args: string[]): Promise<unknown> {
  const program = new Command().exitOverride();
  addPeerCommands(program, () => undefined);
  return program.parseAsync(['node', 'agentplane', 'peer', 'start', ...args]);
}

describe('peer start --secret-file', () => {
  it('reads the secret, trimmed, from a file only its owner can read', () => {
    expect(readSecretFile(secretFile('ok', '  s3cret-value\n', 0o600))).toBe('s3cret-value');
    expect(readSecretFile(secretFile('owner-only-read', 's3cret', 0o400))).toBe('s3cret');
  });

  it.skipIf(process.platform === 'win32')('refuses a file that group or others can read or write, naming the fix', () => {
    for (const mode of [0o640, 0o604, 0o620, 0o644]) {
      const file = secretFile(`shared-${mode.toString(8)}`, 's3cret', mode);
      expect(() => readSecretFile(file)).toThrow(`--secret-file ${file} is readable or writable by group or others (mode 0${mode.toString(8)}); run chmod 600 ${file}`);
    }
  });

  it('refuses an empty file, a missing one, and a folder', () => {
    expect(() => readSecretFile(secretFile('empty', ' \n\t\n', 0o600))).toThrow(/is empty/);
    expect(() => readSecretFile(join(dir, 'missing'))).toThrow(/cannot be read: ENOENT/);
    expect(() => readSecretFile(dir)).toThrow(/is not a regular file/);
  });

  it('is refused by `peer start` before the data dir is created, and does not combine with --secret', async () => {
    const dataDir = join(dir, 'data');
    await expect(peerStart('--secret-file', secretFile('loose', 's3cret', 0o644), '--data-dir', dataDir, '--port', '0')).rejects.toThrow(/readable or writable by group or others/);
    await expect(peerStart('--secret-file', secretFile('fine', 's3cret', 0o600), '--secret', 'x', '--data-dir', dataDir, '--port', '0')).rejects.toThrow(/--secret or --secret-file, not both/);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('says in the help that --secret is visible to other local users and points at --secret-file', () => {
    const program = new Command();
    addPeerCommands(program, () => undefined);
    const help = program.commands.find((c) => c.name() === 'peer')!.commands.find((c) => c.name() === 'start')!.helpInformation();
    expect(help).toMatch(/--secret-file <file>/);
    expect(help.replace(/\s+/g, ' ')).toMatch(/--secret <secret> +the secret itself: visible to other local users in the process list; prefer --secret-file/);
  });

  it('`peer start --secret` warns on stderr that the secret is in the process list, naming --secret-file and $MCPV2_SECRET, and never echoes it', async () => {
    const secret = 'argv-secret-7c1f9e2a';
    // The real CLI, as a person runs it: the warning is for the terminal the secret was typed in.
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'src-main', 'cli', 'main.ts'), 'peer', 'start', '--secret', secret, '--port', '0', '--data-dir', join(dir, 'argv-data')], {
      cwd: ROOT,
      env: { ...process.env, AGENTPLANE_DEMO_PEERS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    // Up (its port printed) or gone: either way everything it said at start is in hand.
    await new Promise<void>((resolve) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        stdout += `${line}\n`;
        if (line.startsWith('MCPV2_BOUND_PORT=')) resolve();
      });
      void exited.then(() => resolve());
    });
    child.kill('SIGTERM');
    expect(await exited, stderr).toBe(0);
    expect(stdout).toMatch(/MCPV2_BOUND_PORT=\d+/);
    expect(stderr).toMatch(/--secret .*process list/);
    expect(stderr).toContain('--secret-file');
    expect(stderr).toContain('$MCPV2_SECRET');
    expect(stdout + stderr).not.toContain(secret);
  });
});
