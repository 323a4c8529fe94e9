/**
 * A CLI command that runs for a while next to the test, as a real child process: `node
 * bin/agentplane.js acp demo …` while the page watches what it does. runCli (serve-process.ts)
 * waits for the command to finish; this one hands the process back at once, so the test can act
 * while it runs (answer its permission request in the UI) and then wait for its end.
 *
 * The child leads its own process group, so dispose() reaches what it started (the tap, and the
 * agent behind it) even when the test failed half way through.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, childEnv, REPO_ROOT, type Exit } from './serve-process';

export interface CliProcess {
  readonly child: ChildProcess;
  /** Everything written so far. */
  stdout(): string;
  stderr(): string;
  /** True once the process has exited. */
  hasExited(): boolean;
  /** Resolves with the exit once the process has ended, or fails after `withinMs` with its output. */
  finished(withinMs: number): Promise<Exit & { stdout: string; stderr: string }>;
  /** SIGKILL to the process group if anything of it still runs. For afterAll, never the tested path. */
  dispose(): void;
}

export function spawnCli(args: string[], options: { env?: Record<string, string> } = {}): CliProcess {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // 'close', not 'exit': the output has been read to its end when it fires.
  const closed = new Promise<Exit>((resolveExit) => child.once('close', (code, signal) => resolveExit({ code, signal })));
  let exited = false;
  void closed.then(() => (exited = true));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    hasExited: () => exited,
    async finished(withinMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`agentplane ${args.join(' ')} did not exit within ${withinMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`)),
          withinMs,
        );
      });
      try {
        const exit = await Promise.race([closed, timeout]);
        return { ...exit, stdout, stderr };
      } finally {
        clearTimeout(timer);
      }
    },
    dispose() {
      if (exited || child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // The group is already gone.
      }
    },
  };
}
