/**
 * `agentplane repl` driven the way a person drives it (docs/PEER-PROTOCOL.md, "The interactive
 * client"): the real
 * built CLI as a child process, one command per line written to its stdin, its stdout read up
 * to the next `mcpv2> ` prompt. Nothing of the REPL is imported; what a command claims is
 * checked from outside — a direct HTTP health call, a direct authenticated call with the
 * printed demo session, `list_files` through an independent MCPv2 client, and, for every
 * stop, a TCP connect that must fail (the process really died, not just a message printed).
 *
 * The REPL's stderr goes to a file and its peers' output to their own log files: an unread
 * pipe fills and blocks the writer, which would look like a hang in the REPL.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Mcpv2Client } from '../src-main/peers/peer-client';
import { CLI, childEnv, makeTempDir, portAcceptsConnections, REPO_ROOT, requireBuild, type Exit } from './support/serve-process';

const PROMPT = 'mcpv2> ';
const COMMANDS = ['ReadyTo', 'StopTo', 'StopPeer', 'ConnectTo', 'SentTo', 'SendTo', 'PayTo', 'PingTo', 'help', 'exit', 'quit'];

const dirs: string[] = [];
const repls: ReplProcess[] = [];
/** Every peer pid a REPL printed: killed in afterAll if a failed test left one running. */
const peerPids = new Set<number>();

function tempDir(name: string): string {
  const dir = makeTempDir(name);
  dirs.push(dir);
  return dir;
}

/** A port nothing listens on right now: bind port 0 on loopback, note it, let it go. */
function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolvePort(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The REPL as a child process: send a line, get back everything it printed before the next prompt. */
class ReplProcess {
  private buffer = '';
  private consumed = 0;
  private wake: (() => void) | null = null;
  readonly exited: Promise<Exit>;
  private exit: Exit | null = null;

  private constructor(
    readonly child: ChildProcess,
    readonly stderrFile: string,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      this.buffer += chunk;
      this.wake?.();
    });
    this.exited = new Promise((resolveExit) =>
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolveExit(this.exit);
        this.wake?.();
      }),
    );
  }

  static async start(dataDir: string): Promise<{ repl: ReplProcess; banner: string }> {
    const stderrFile = join(tempDir('repl-stderr'), 'stderr.log');
    const fd = openSync(stderrFile, 'w');
    let child: ChildProcess;
    try {
      child = spawn(process.execPath, [CLI, 'repl', '--data-dir', dataDir], { cwd: REPO_ROOT, env: childEnv(), stdio: ['pipe', 'pipe', fd] });
    } finally {
      closeSync(fd);
    }
    const repl = new ReplProcess(child, stderrFile);
    repls.push(repl);
    return { repl, banner: await repl.untilPrompt(15_000) };
  }

  stderr(): string {
    return existsSync(this.stderrFile) ? readFileSync(this.stderrFile, 'utf8') : '';
  }

  /** Everything printed since the last prompt, up to the next one. */
  async untilPrompt(timeoutMs: number): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const at = this.buffer.indexOf(PROMPT, this.consumed);
      if (at !== -1) {
        const text = this.buffer.slice(this.consumed, at);
        this.consumed = at + PROMPT.length;
        return text;
      }
      if (this.exit) throw new Error(`the REPL exited (${this.exit.code ?? this.exit.signal}) before its next prompt; it printed:\n${this.buffer.slice(this.consumed)}\nstderr:\n${this.stderr()}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no prompt within ${timeoutMs} ms; the REPL printed:\n${this.buffer.slice(this.consumed)}\nstderr:\n${this.stderr()}`);
      await new Promise<void>((resolveWake) => {
        const timer = setTimeout(resolveWake, left);
        this.wake = () => (clearTimeout(timer), resolveWake());
      });
      this.wake = null;
    }
  }

  /** Types one command and returns its output (what came before the next prompt). */
  async run(command: string, timeoutMs = 40_000): Promise<string> {
    this.child.stdin!.write(`${command}\n`);
    const output = await this.untilPrompt(timeoutMs);
    for (const match of output.matchAll(/\(pid (\d+)[;)]/g)) peerPids.add(Number(match[1]));
    return output;
  }

  /** Ends the session (a command such as `exit`, or end of input) and returns what it printed last. */
  async leave(how: { command: string } | 'end-of-input', withinMs = 20_000): Promise<{ exit: Exit; output: string }> {
    if (how === 'end-of-input') this.child.stdin!.end();
    else this.child.stdin!.write(`${how.command}\n`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the REPL did not exit within ${withinMs} ms; it printed:\n${this.buffer.slice(this.consumed)}`)), withinMs);
    });
    try {
      const exit = await Promise.race([this.exited, timeout]);
      return { exit, output: this.buffer.slice(this.consumed) };
    } finally {
      clearTimeout(timer);
    }
  }

  dispose(): void {
    if (this.exit === null) this.child.kill('SIGKILL');
  }
}

/** What ReadyTo printed: the shareable address, the demo address, the port and the pid. */
function readied(output: string): { address: string; demoAddress: string; port: number; pid: number } {
  const address = /share this address:\s+(mcpv2:\/\/\S+)/.exec(output)?.[1];
  const demoAddress = /demo address \(same host only[^\n]*\n\s+(mcpv2:\/\/\S+)/.exec(output)?.[1];
  const port = /peer started on port (\d+)/.exec(output)?.[1];
  const pid = /\(pid (\d+)/.exec(output)?.[1];
  if (!address || !demoAddress || !port || !pid) throw new Error(`ReadyTo did not print a started peer:\n${output}`);
  return { address, demoAddress, port: Number(port), pid: Number(pid) };
}

/** The session an address carries (`?sessionId=…`). */
function sessionOf(address: string): string {
  const session = new URL(address.replace(/^mcpv2:/, 'http:')).searchParams.get('sessionId');
  if (!session) throw new Error(`no sessionId in ${address}`);
  return session;
}

beforeAll(() => requireBuild());

afterAll(() => {
  for (const repl of repls) repl.dispose();
  for (const pid of peerPids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('agentplane repl, driven over stdin (the interactive client suite)', () => {
  let repl: ReplProcess;
  let dataDir: string;
  let work: string;
  let peer: ReturnType<typeof readied>;

  beforeAll(async () => {
    dataDir = tempDir('repl-data');
    work = tempDir('repl-files');
    const started = await ReplProcess.start(dataDir);
    repl = started.repl;
    expect(started.banner).toContain('Type help for the commands');
  });

  it('help lists every command with a description', async () => {
    const output = await repl.run('help');
    // `quit` shares the `exit | quit` line.
    for (const name of COMMANDS) expect(output).toMatch(new RegExp(`^  (exit \\| )?${name}\\b`, 'm'));
    // Every usage line is followed by its one-line description.
    expect(output.split('\n').filter((l) => /^ {6}\S/.test(l)).length).toBe(COMMANDS.length - 1); // exit | quit share a line
  });

  it('an unknown command, unbalanced quotes and a malformed address are reported and the loop goes on', async () => {
    expect(await repl.run('FlyTo the moon')).toContain('unknown command "FlyTo". Type help');
    expect(await repl.run('SentTo "hello there mcpv2://127.0.0.1:1/mcpv2')).toContain('unbalanced quotes: the double quote (") at column 8 is never closed');
    expect(await repl.run('ConnectTo http://127.0.0.1:8000/')).toContain('ConnectTo failed — malformed address');
    expect(await repl.run('ConnectTo mcpv2://127.0.0.1:99999/mcpv2')).toContain('malformed address');
    expect(await repl.run('SentTo hello there mcpv2://127.0.0.1:1/mcpv2')).toContain('SentTo takes 2 arguments but got 3; quote an argument of several words');
    expect(await repl.run('')).toBe('');
  });

  it('ConnectTo against nothing listening fails clearly, at the reachability step, without hanging', async () => {
    const port = await freePort();
    const started = performance.now();
    const output = await repl.run(`ConnectTo mcpv2://127.0.0.1:${port}/mcpv2`, 15_000);
    expect(output).toContain('ConnectTo failed — unreachable');
    expect(output).toContain('ECONNREFUSED');
    expect(output).not.toContain('connected to');
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('ReadyTo starts a real peer and prints a working address and a same-host demo address', async () => {
    const port = await freePort();
    const output = await repl.run(`ReadyTo --port ${port} --secret s3cret --public-ip 127.0.0.1`);
    peer = readied(output);
    expect(peer.port).toBe(port);
    expect(peer.address).toBe(`mcpv2://127.0.0.1:${port}/mcpv2`);
    expect(output).toMatch(/demo address \(same host only/);
    expect(output).not.toContain('s3cret'); // the secret reached the child through its environment
    expect(alive(peer.pid)).toBe(true);

    // Independently of the REPL: the printed address answers a plain HTTP health check ...
    const health = await fetch(`http://127.0.0.1:${port}/mcpv2/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok', peerId: `peer-${port}` });
    // ... and the demo address's session authenticates a direct call from this host.
    const call = await fetch(`http://127.0.0.1:${port}/mcpv2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${sessionOf(peer.demoAddress)}` },
      body: JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'ping', arguments: {} } }]),
    });
    expect(call.status).toBe(200);
    expect(await call.json()).toMatchObject([{ id: 1, result: { pong: true } }]);
  });

  it('PingTo reports the latency of an authenticated ping', async () => {
    const output = await repl.run(`PingTo ${peer.address}`);
    expect(output).toMatch(new RegExp(`pong from peer-${peer.port} at mcpv2://127\\.0\\.0\\.1:${peer.port}/mcpv2 in \\d+\\.\\d ms \\(authenticated ping\\)`));
  });

  it('ConnectTo with a fresh session proves an authenticated round trip and lists the skills', async () => {
    const output = await repl.run(`ConnectTo ${peer.address}`);
    expect(output).toContain(`reachable: ${peer.address} is peer-${peer.port}`);
    expect(output).toMatch(/session: #[0-9a-f]{8}, fresh from the peer/);
    expect(output).toMatch(/ping: authenticated round trip in \d+\.\d ms \(pong from peer-\d+\)/);
    expect(output).toMatch(/skills \(\d+\):/);
    for (const skill of ['ping', 'ask', 'upload_file', 'list_files', 'pay', 'translate_history']) expect(output).toMatch(new RegExp(`^  ${skill} `, 'm'));
    expect(output).toContain(`connected to ${peer.address}`);
    expect(output).not.toContain('rejected');
  });

  it('ConnectTo recovers from a stale session in the address: detects the 401, fetches a genuinely new session, retries, succeeds', async () => {
    const good = sessionOf(peer.demoAddress);
    const stale = good.slice(0, -1) + (good.endsWith('0') ? '1' : '0'); // signature no longer matches
    const output = await repl.run(`ConnectTo ${peer.address}?sessionId=${stale}`);
    const carried = /session: (#[0-9a-f]{8}), carried in the address/.exec(output)?.[1];
    const rejected = /session (#[0-9a-f]{8}) was rejected \(401/.exec(output)?.[1];
    const fresh = /session: (#[0-9a-f]{8}), fresh from the peer/.exec(output)?.[1];
    expect(carried, output).toBeDefined();
    expect(rejected).toBe(carried);
    expect(fresh, output).toBeDefined();
    expect(fresh).not.toBe(carried); // the retry did not reuse the address's token (docs/PEER-PROTOCOL.md, "The interactive client")
    expect(output).toContain('retry with the fresh session succeeded');
    expect(output).toContain(`connected to ${peer.address}`);
  });

  it('SentTo sends a quoted multi-word prompt whole, and SendTo is the same command', async () => {
    const output = await repl.run(`SentTo "hello there, quoted world" ${peer.address}`);
    expect(output).toContain(`answer from ${peer.address}`);
    expect(output).toContain('hello there, quoted world');
    const alias = await repl.run(`SendTo 'the alias, single-quoted' ${peer.address} --provider claude`);
    expect(alias).toContain('the alias, single-quoted');
    expect(await repl.run(`SentTo hi ${peer.address} --provider llama`)).toContain('--provider is one of claude, openai, gemini, deepseek');
  });

  it('SentTo a path to an existing file uploads it (text as utf8, binary as base64), as list_files confirms', async () => {
    const text = join(work, 'notes for the peer.md');
    writeFileSync(text, '# Notes\nhéllo\n');
    const binary = join(work, 'blob.bin');
    writeFileSync(binary, Buffer.from(Array.from({ length: 256 }, (_, i) => i)));

    // A path with spaces needs the quoting a whitespace split could not do (docs/PEER-PROTOCOL.md).
    expect(await repl.run(`SentTo "${text}" ${peer.address}`)).toContain('as notes for the peer.md (15 bytes, sent as utf8)');
    expect(await repl.run(`SendTo ${binary} ${peer.address}`)).toContain('as blob.bin (256 bytes, sent as base64)');

    const client = Mcpv2Client.at(peer.address, 10_000);
    const listed = (await client.callTool('list_files', {}, { auth: { sessionId: await client.freshSession() } })) as { files: Array<{ filename: string; bytes: number }> };
    expect(listed.files).toEqual(expect.arrayContaining([expect.objectContaining({ filename: 'notes for the peer.md', bytes: 15 }), expect.objectContaining({ filename: 'blob.bin', bytes: 256 })]));
  });

  it('PayTo requests a payment that waits for approval in the inbox and moves no money', async () => {
    const output = await repl.run(`PayTo 10.5 ${peer.address} --payee "Ada Lovelace"`);
    expect(output).toContain(`payment request sent to ${peer.address}: 10.5 USD to Ada Lovelace`);
    expect(output).toMatch(/status: pending approval \(run run-[0-9a-f]+\)/);
    expect(output).toContain("approvals inbox");
    expect(output).toContain('no money moves');
    expect(await repl.run(`PayTo ten ${peer.address}`)).toContain('the amount is a positive number');
  });

  it("ReadyTo on a busy port reports the peer's own error and the REPL goes on", async () => {
    const holder: Server = createServer();
    await new Promise<void>((ready) => holder.listen(0, '127.0.0.1', ready));
    const busy = (holder.address() as AddressInfo).port;
    try {
      const output = await repl.run(`ReadyTo --port ${busy}`);
      expect(output).toContain('ReadyTo failed — the peer exited before it was ready');
      expect(output).toContain(`port ${busy} on 127.0.0.1 is already in use`);
    } finally {
      await new Promise((closed) => holder.close(closed));
    }
  });

  it('StopTo by bare port, StopTo by full address and the StopPeer alias each really stop the peer: its port refuses connections', async () => {
    const b = readied(await repl.run(`ReadyTo --port ${await freePort()}`));
    const c = readied(await repl.run(`ReadyTo --port ${await freePort()}`));
    for (const p of [b, c]) expect(await portAcceptsConnections(p.port)).toBe(true);

    // SIGTERM was enough (the peer closed its journal itself); SIGKILL is only the fallback.
    expect(await repl.run(`StopTo ${b.port}`)).toContain(`(pid ${b.pid}) stopped (SIGTERM); port ${b.port} is free`);
    expect(await portAcceptsConnections(b.port)).toBe(false);
    expect(alive(b.pid)).toBe(false);

    expect(await repl.run(`StopTo ${c.address}`)).toContain(`port ${c.port} is free`);
    expect(await portAcceptsConnections(c.port)).toBe(false);
    expect(alive(c.pid)).toBe(false);

    expect(await repl.run(`StopPeer ${peer.port}`)).toContain(`port ${peer.port} is free`);
    expect(await portAcceptsConnections(peer.port)).toBe(false);
    expect(alive(peer.pid)).toBe(false);

    expect(await repl.run(`StopTo ${b.port}`)).toContain(`no peer on port ${b.port} was started by this REPL`);
    expect(await repl.run(`PingTo ${peer.address}`)).toContain('PingTo failed — unreachable');
  });

  it('exit stops a peer that was never explicitly stopped, then leaves with code 0', async () => {
    const d = readied(await repl.run(`ReadyTo --port ${await freePort()}`));
    expect(await portAcceptsConnections(d.port)).toBe(true);
    const { exit, output } = await repl.leave({ command: 'exit' });
    expect(exit).toEqual({ code: 0, signal: null });
    expect(output).toContain(`port ${d.port} is free`);
    expect(output).toContain('bye');
    expect(await portAcceptsConnections(d.port)).toBe(false);
    expect(alive(d.pid)).toBe(false);
  });
});

describe('agentplane repl at end of input', () => {
  it('stops the peers it started and exits 0 when stdin closes', async () => {
    const { repl } = await ReplProcess.start(tempDir('repl-eof'));
    const d = readied(await repl.run(`ReadyTo --port ${await freePort()} --llm-mode`));
    const { exit, output } = await repl.leave('end-of-input');
    expect(exit).toEqual({ code: 0, signal: null });
    expect(output).toContain(`peer on port ${d.port} (pid ${d.pid}) stopped (SIGTERM); port ${d.port} is free`);
    expect(await portAcceptsConnections(d.port)).toBe(false);
    expect(alive(d.pid)).toBe(false);
  });
});
