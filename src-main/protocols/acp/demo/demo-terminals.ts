/**
 * The demo client's terminals: ACP's `terminal/*` methods served by really running the command
 * the agent names, as an editor's integrated terminal would. Run without a shell (argv as
 * given, so nothing in the agent's text is interpreted), in a cwd inside the demo workspace,
 * with output kept to the agent's `outputByteLimit` by dropping the oldest bytes (ACP: the
 * client truncates from the beginning, at a character boundary, and says so).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  RequestError,
  type CreateTerminalRequest,
  type TerminalExitStatus,
  type TerminalOutputResponse,
  type WaitForTerminalExitResponse,
} from '@agentclientprotocol/sdk';

/** The exit code reported when the command could not be started at all (a shell's "not found"). */
export const NOT_STARTED_EXIT_CODE = 127;

interface DemoTerminal {
  child: ChildProcess;
  output: string;
  truncated: boolean;
  limit: number | null;
  exitStatus: TerminalExitStatus | null;
  exited: Promise<WaitForTerminalExitResponse>;
}

export interface TerminalEvents {
  started(terminalId: string, argv: readonly string[], cwd: string): void;
  exited(terminalId: string, status: TerminalExitStatus, output: string): void;
}

export class DemoTerminals {
  private readonly terminals = new Map<string, DemoTerminal>();
  private count = 0;

  /** `resolveCwd` maps the requested cwd (or none) to a folder inside the workspace, or throws. */
  constructor(
    private readonly resolveCwd: (cwd: string | null | undefined) => string,
    private readonly events: TerminalEvents,
  ) {}

  create(params: CreateTerminalRequest): string {
    const cwd = this.resolveCwd(params.cwd);
    this.count += 1;
    const terminalId = `term-${this.count}`;
    const env = { ...process.env, ...Object.fromEntries((params.env ?? []).map((variable) => [variable.name, variable.value])) };
    const args = params.args ?? [];
    const child = spawn(params.command, args, { cwd, env, shell: false, stdio: ['ignore', 'pipe', 'pipe'] });
    const terminal: DemoTerminal = {
      child,
      output: '',
      truncated: false,
      limit: params.outputByteLimit ?? null,
      exitStatus: null,
      exited: Promise.resolve({}),
    };
    const append = (chunk: Buffer | string): void => {
      terminal.output += chunk.toString();
      if (terminal.limit !== null && Buffer.byteLength(terminal.output) > terminal.limit) {
        terminal.output = keepLastBytes(terminal.output, terminal.limit);
        terminal.truncated = true;
      }
    };
    child.stdout?.on('data', append);
    child.stderr?.on('data', append);
    terminal.exited = new Promise((resolve) => {
      const finish = (status: TerminalExitStatus): void => {
        if (terminal.exitStatus) return;
        terminal.exitStatus = status;
        this.events.exited(terminalId, status, terminal.output);
        resolve({ exitCode: status.exitCode ?? null, signal: status.signal ?? null });
      };
      child.once('error', (error) => {
        append(`${error.message}\n`);
        finish({ exitCode: NOT_STARTED_EXIT_CODE, signal: null });
      });
      // 'close', not 'exit': by then stdout and stderr are drained, so the output is whole.
      child.once('close', (code, signal) => finish({ exitCode: code, signal }));
    });
    this.terminals.set(terminalId, terminal);
    this.events.started(terminalId, [params.command, ...args], cwd);
    return terminalId;
  }

  output(terminalId: string): TerminalOutputResponse {
    const terminal = this.get(terminalId);
    return { output: terminal.output, truncated: terminal.truncated, exitStatus: terminal.exitStatus };
  }

  waitForExit(terminalId: string): Promise<WaitForTerminalExitResponse> {
    return this.get(terminalId).exited;
  }

  kill(terminalId: string): void {
    const terminal = this.get(terminalId);
    if (!terminal.exitStatus) terminal.child.kill('SIGTERM');
  }

  /** Kills the command if it still runs and forgets the terminal; its id is invalid afterwards. */
  release(terminalId: string): void {
    this.kill(terminalId);
    this.terminals.delete(terminalId);
  }

  /** At the end of the demo: no command outlives the client. */
  releaseAll(): void {
    for (const terminalId of [...this.terminals.keys()]) this.release(terminalId);
  }

  private get(terminalId: string): DemoTerminal {
    const terminal = this.terminals.get(terminalId);
    if (!terminal) throw RequestError.invalidParams({ terminalId }, `no terminal ${terminalId} (never created, or released)`);
    return terminal;
  }
}

/** The last `limit` bytes of `text`, starting at a character boundary. */
function keepLastBytes(text: string, limit: number): string {
  const bytes = Buffer.from(text);
  let start = bytes.length - limit;
  // Skip UTF-8 continuation bytes (10xxxxxx) so the kept text starts with a whole character.
  while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start += 1;
  return bytes.subarray(start).toString('utf8');
}
