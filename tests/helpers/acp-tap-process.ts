/**
 * `agentplane acp tap` as a real child process (the CLI from source, through tsx), with the test
 * playing the editor on its stdio and tests/doubles/acp-fake-agent.mjs as the agent. Everything
 * the tap writes to stdout is kept byte for byte, so a test can compare it with what the agent
 * wrote; stderr is kept as text.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';

export const REPO_ROOT = resolve(import.meta.dirname, '..', '..');
const CLI_SOURCE = join(REPO_ROOT, 'src-main', 'cli', 'main.ts');
export const FAKE_AGENT = join(REPO_ROOT, 'tests', 'doubles', 'acp-fake-agent.mjs');

export interface TapProcess {
  child: ChildProcess;
  /** Every byte the tap wrote to stdout so far. */
  stdout(): Buffer;
  stderr(): string;
  send(text: string | Buffer): void;
  /** The next JSON line on stdout (after those already taken) that `match` accepts. */
  next(match: (message: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  closeStdin(): void;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Every byte the test sent. */
  sent(): Buffer;
}

export function startTapProcess(dataDir: string, tapArgs: string[], agentArgs: string[], env: Record<string, string> = {}): TapProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, AGENTPLANE_DEMO_PEERS: '0', ...env };
  delete childEnv.AGENTPLANE_DATA_DIR;
  const child = spawn(process.execPath, ['--import', 'tsx', CLI_SOURCE, 'acp', 'tap', '--data-dir', dataDir, ...tapArgs, '--', process.execPath, FAKE_AGENT, ...agentArgs], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: childEnv,
    cwd: REPO_ROOT,
  });
  const out: Buffer[] = [];
  const sentBytes: Buffer[] = [];
  let err = '';
  let taken = 0;
  const lines: string[] = [];
  let partial = '';
  const waiters = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    out.push(chunk);
    partial += chunk.toString('utf8');
    let nl;
    while ((nl = partial.indexOf('\n')) !== -1) {
      lines.push(partial.slice(0, nl));
      partial = partial.slice(nl + 1);
    }
    for (const w of [...waiters]) w();
  });
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  child.stdin!.on('error', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  return {
    child,
    stdout: () => Buffer.concat(out),
    stderr: () => err,
    send(text) {
      const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
      sentBytes.push(bytes);
      child.stdin!.write(bytes);
    },
    sent: () => Buffer.concat(sentBytes),
    next(match, timeoutMs = 15_000) {
      return new Promise((resolveLine, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no matching line within ${timeoutMs} ms; stderr: ${err}`));
        }, timeoutMs);
        function check(): void {
          while (taken < lines.length) {
            const line = lines[taken++]!;
            let message: Record<string, unknown>;
            try {
              message = JSON.parse(line) as Record<string, unknown>;
            } catch {
              continue;
            }
            if (match(message)) {
              clearTimeout(timer);
              waiters.delete(check);
              resolveLine(message);
              return;
            }
          }
        }
        waiters.add(check);
        check();
      });
    },
    closeStdin: () => child.stdin!.end(),
    exited,
  };
}
