/**
 * `agentplane repl`: the protocol's interactive MCPv2 client (docs/PEER-PROTOCOL.md, "The
 * interactive client"; the original is `mcpv2_cli.py`), prompt `mcpv2> `. It reads one command
 * per line from stdin — a TTY or a pipe alike, so a script or a test can drive it the way a
 * person does — runs each to completion before reading the next, and on `exit`, `quit`, end of
 * input or a signal stops every peer it started before leaving.
 *
 * Invariants, each carried over from a bug of the original client:
 * - `ReadyTo` really starts a peer (`agentplane peer start` as a child process) and reports it
 *   only once it is healthy; `StopTo` is confirmed by the port refusing connections afterwards
 *   (repl-peers.ts).
 * - `ConnectTo` proves a session authenticates (a real `ping`), not only that a port answers.
 *   When the session is refused (401) the retry uses `freshSession()`, which always asks the
 *   peer for a new token: the original client's retry re-read the address's cached token and
 *   failed the same way every time. The session fingerprints printed make the difference visible.
 * - Arguments are split like a shell (repl-parse.ts); unbalanced quotes are an error, never a
 *   silently different command.
 * - Secrets and session tokens are never printed in full: the secret reaches the child through
 *   its environment (not argv, which `ps` shows), and sessions are shown as fingerprints. The
 *   demo address is the exception the protocol makes on purpose (docs/PEER-PROTOCOL.md),
 *   labelled as same-host only.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import { HealthSchema, PENDING_APPROVAL, skillArguments } from '../../src-shared/protocol/mcpv2';
import { appRoot, resolveDataDir } from '../base/app-paths';
import { Mcpv2Client, PeerClientError, endpointOf, type PeerEndpoint } from '../peers/peer-client';
import { parseArgs, portFromWord, ReplParseError, tokenize, type ArgSpec, type ParsedArgs } from './repl-parse';
import { ReplCommandFailed, ReplPeers } from './repl-peers';

export const PROMPT = 'mcpv2> ';

/** Reaching a peer, getting a session, a ping: short. A model answering `ask`: long. */
const CONNECT_TIMEOUT_MS = 10_000;
const CALL_TIMEOUT_MS = 120_000;
const PROVIDERS = ['claude', 'openai', 'gemini', 'deepseek'] as const;
const MAX_UPLOAD_CHARS = skillArguments.upload_file.shape.content.maxLength ?? 16 * 1024 * 1024;

/** A mistake in what was typed (bad value, unknown port): printed after `error: `, the loop goes on. */
class ReplUsageError extends Error {
  override readonly name = 'ReplUsageError';
}

/** A short, stable name for a session token: enough to tell two apart, useless to an attacker. */
function fingerprint(sessionId: string): string {
  return `#${createHash('sha256').update(sessionId).digest('hex').slice(0, 8)}`;
}

/** Text if it decodes as UTF-8 and has no NUL byte; otherwise it travels as base64. */
function isText(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

const FAILURE_LABEL: Record<PeerClientError['stage'], string> = {
  address: 'malformed address',
  unreachable: 'unreachable',
  session: 'session refused',
  refused: 'request refused',
  'no-answer': 'no answer (the peer may have acted)',
  call: 'call rejected',
};

function isSessionRejected(error: unknown): boolean {
  return error instanceof PeerClientError && error.stage === 'session' && error.status === 401;
}

interface ReplCommand {
  name: string;
  aliases?: string[];
  usage: string;
  summary: string;
  spec: ArgSpec;
  run(args: ParsedArgs): Promise<'exit' | void>;
}

export interface ReplOptions {
  dataDir?: string;
  input?: Readable;
  output?: Writable;
  /** The `agentplane` launcher that `ReadyTo` runs; bin/agentplane.js of this install by default. */
  cliPath?: string;
}

export class Repl {
  private readonly peers: ReplPeers;
  /** One session per peer (`host:port`), fetched with freshSession() and renewed on a 401. */
  private readonly sessions = new Map<string, string>();
  private readonly commands: ReplCommand[];

  constructor(
    dataDir: string,
    private readonly say: (line: string) => void,
    cliPath: string,
  ) {
    // A stopped peer's session is forgotten with it.
    this.peers = new ReplPeers(dataDir, cliPath, say, (peer) => this.sessions.delete(sessionKey(endpointOf(peer.address))));
    this.commands = this.defineCommands();
  }

  /** Runs one typed line. Resolves 'exit' when the REPL should end; never rejects. */
  async execute(line: string): Promise<'exit' | void> {
    let words: string[];
    try {
      words = tokenize(line);
    } catch (error) {
      this.say(`error: ${(error as Error).message}`);
      return;
    }
    const [name, ...rest] = words;
    if (name === undefined) return;
    const command = this.commands.find((c) => [c.name, ...(c.aliases ?? [])].some((n) => n.toLowerCase() === name.toLowerCase()));
    if (!command) {
      this.say(`unknown command "${name}". Type help to see the commands.`);
      return;
    }
    try {
      return await command.run(parseArgs(command.name, rest, command.spec, command.usage));
    } catch (error) {
      if (error instanceof ReplParseError || error instanceof ReplUsageError) this.say(`error: ${error.message}`);
      else if (error instanceof ReplCommandFailed) this.say(error.message);
      else if (error instanceof PeerClientError) this.say(`${command.name} failed — ${FAILURE_LABEL[error.stage]}: ${error.message}`);
      else this.say(`${command.name} failed: ${(error as Error).message ?? String(error)}`);
    }
  }

  /** Stops every peer this REPL started; used by exit, end of input and signals. */
  async stopAll(): Promise<void> {
    await this.peers.stopAll();
  }

  /** Last resort on a second signal: SIGKILL every peer still running, without waiting. */
  killAllNow(): void {
    this.peers.killAllNow();
  }

  private defineCommands(): ReplCommand[] {
    const sendTo: Omit<ReplCommand, 'name' | 'aliases'> = {
      usage: 'SendTo "<prompt>" | <file> <address> [--provider claude|openai|gemini|deepseek]',
      summary: 'ask the peer a prompt (skill ask) and print its answer; a path to an existing file uploads it instead (upload_file)',
      spec: { positionals: ['a prompt or a file', 'an address'], flags: { provider: 'string' } },
      run: (args) => this.sendTo(args),
    };
    const stopTo: Omit<ReplCommand, 'name' | 'aliases'> = {
      usage: 'StopTo <port | mcpv2://host:port/mcpv2>',
      summary: 'stop a peer this REPL started (SIGTERM, SIGKILL after a deadline) and confirm its port is free',
      spec: { positionals: ['a port or an address'] },
      run: (args) => this.stopTo(args),
    };
    return [
      {
        name: 'ReadyTo',
        usage: 'ReadyTo [--port N] [--secret S] [--public-ip IP] [--llm-mode] [--bind-host H] [--port-fallback] [--name NAME]',
        summary: 'start a local peer, wait until it is healthy, print its shareable address and a same-host demo address',
        spec: { positionals: [], flags: { port: 'string', secret: 'string', 'public-ip': 'string', 'llm-mode': 'boolean', 'bind-host': 'string', 'port-fallback': 'boolean', name: 'string' } },
        run: (args) => this.readyTo(args),
      },
      { name: 'StopTo', ...stopTo },
      { name: 'StopPeer', ...stopTo, usage: 'StopPeer <port | mcpv2://host:port/mcpv2>', summary: 'the same as StopTo, under the name the original MCPv2 command line used' },
      {
        name: 'ConnectTo',
        usage: 'ConnectTo mcpv2://host:port/mcpv2[?sessionId=…]',
        summary: "check a peer end to end: reachable, a session, an authenticated ping (retried once with a fresh session on 401); prints its skills",
        spec: { positionals: ['an address'] },
        run: (args) => this.connectTo(args),
      },
      { name: 'SendTo', ...sendTo },
      // The original MCPv2 command line spelled it SentTo; scripts written for it still run.
      { name: 'SentTo', ...sendTo, usage: sendTo.usage.replace('SendTo', 'SentTo'), summary: 'the same as SendTo, under the spelling the original MCPv2 command line used' },
      {
        name: 'PayTo',
        usage: 'PayTo <amount> <address> [--currency USD] [--payee NAME]',
        summary: "request a payment (skill pay): it waits for a person's approval in the plane's inbox, and no money moves",
        spec: { positionals: ['an amount', 'an address'], flags: { currency: 'string', payee: 'string' } },
        run: (args) => this.payTo(args),
      },
      {
        name: 'PingTo',
        usage: 'PingTo <address>',
        summary: 'latency of an authenticated ping, in milliseconds',
        spec: { positionals: ['an address'] },
        run: (args) => this.pingTo(args),
      },
      {
        name: 'help',
        usage: 'help',
        summary: 'list the commands',
        spec: { positionals: [] },
        run: async () => this.help(),
      },
      {
        name: 'exit',
        aliases: ['quit'],
        usage: 'exit | quit',
        summary: 'stop every peer this REPL started and leave (end of input does the same)',
        spec: { positionals: [] },
        run: async () => 'exit',
      },
    ];
  }

  private help(): void {
    this.say('Commands (arguments are split like a shell: quote a prompt of several words, "like this"):');
    for (const command of this.commands) {
      this.say(`  ${command.usage}`);
      this.say(`      ${command.summary}`);
    }
  }

  // ---- ReadyTo / StopTo ----

  private async readyTo({ flags }: ParsedArgs): Promise<void> {
    const argv: string[] = [];
    if (flags.port !== undefined) {
      const port = String(flags.port);
      if (port !== '0' && portFromWord(port) === null) throw new ReplUsageError(`--port is a whole number from 1 to 65535 (or 0 for any free port), not "${port}"`);
      if (this.peers.has(Number(port))) throw new ReplUsageError(`this REPL already runs a peer on port ${port} (StopTo ${port} first)`);
      argv.push('--port', port);
    }
    for (const name of ['public-ip', 'bind-host', 'name'] as const) {
      if (typeof flags[name] === 'string') argv.push(`--${name}`, flags[name]);
    }
    if (flags['llm-mode']) argv.push('--llm-mode');
    if (flags['port-fallback']) argv.push('--port-fallback');
    const bindHost = typeof flags['bind-host'] === 'string' ? flags['bind-host'] : null;
    // The secret goes through the environment: argv is visible to every user through `ps`.
    const env: NodeJS.ProcessEnv = { ...process.env, ...(typeof flags.secret === 'string' ? { MCPV2_SECRET: flags.secret } : {}) };

    const peer = await this.peers.launch(argv, env, bindHost);
    this.say(`peer started on port ${peer.port} (pid ${peer.pid}; its output goes to ${peer.logFile})`);
    this.say(`  share this address:  ${peer.address}`);
    if (peer.demoAddress) {
      this.say(`  demo address (same host only: its session is valid only for a caller whose source IP is the peer's own):`);
      this.say(`                       ${peer.demoAddress}`);
    }
    this.say(`  a remote peer fetches its own session; stop this one with StopTo ${peer.port}`);
  }

  private async stopTo({ positionals }: ParsedArgs): Promise<void> {
    const target = positionals[0]!;
    let port = portFromWord(target);
    if (port === null) {
      if (!target.startsWith('mcpv2://')) throw new ReplUsageError(`StopTo takes a port (like 8000) or a peer address (mcpv2://host:port/mcpv2), not "${target}"`);
      port = endpointOf(target).port;
    }
    const peer = this.peers.get(port);
    if (!peer) {
      const mine = this.peers.ports();
      this.say(`no peer on port ${port} was started by this REPL${mine.length ? ` (it runs peers on port${mine.length === 1 ? '' : 's'} ${mine.join(', ')})` : ' (it runs none)'}; StopTo only stops peers started here with ReadyTo`);
      return;
    }
    await this.peers.stop(peer);
  }

  // ---- sessions ----

  /**
   * Runs `work` with a session for the address: the address's own `?sessionId=` if it carries
   * one, else the one kept for that peer, else a fresh one. On a 401 it fetches a genuinely
   * fresh session (never the address's or the kept one again) and retries once.
   */
  private async withSession<T>(address: string, work: (client: Mcpv2Client, sessionId: string) => Promise<T>): Promise<T> {
    const endpoint = endpointOf(address);
    const client = new Mcpv2Client(endpoint, CONNECT_TIMEOUT_MS);
    const key = sessionKey(endpoint);
    let session = endpoint.sessionId ?? this.sessions.get(key) ?? (await client.freshSession());
    try {
      const result = await work(client, session);
      this.sessions.set(key, session);
      return result;
    } catch (error) {
      if (!isSessionRejected(error)) throw error;
      this.sessions.delete(key);
      const stale = fingerprint(session);
      session = await client.freshSession();
      this.say(`(session ${stale} was rejected with 401; retrying once with fresh session ${fingerprint(session)})`);
      const result = await work(client, session);
      this.sessions.set(key, session);
      return result;
    }
  }

  // ---- ConnectTo ----

  private async connectTo({ positionals }: ParsedArgs): Promise<void> {
    const address = positionals[0]!;
    const endpoint = endpointOf(address);
    const client = new Mcpv2Client(endpoint, CONNECT_TIMEOUT_MS);
    const health = HealthSchema.safeParse(await client.health());
    this.say(`reachable: ${client.address}${health.success ? ` is ${health.data.name} (AgentPlane ${health.data.version}, protocol ${health.data.protocolVersion})` : ' answered its health check'}`);

    let session: string;
    if (endpoint.sessionId) {
      session = endpoint.sessionId;
      this.say(`session: ${fingerprint(session)}, carried in the address`);
    } else {
      session = await client.freshSession();
      this.say(`session: ${fingerprint(session)}, fresh from the peer`);
    }
    const ping = async () => {
      const started = performance.now();
      const pong = await client.callTool('ping', {}, { auth: { sessionId: session }, timeoutMs: CONNECT_TIMEOUT_MS });
      return { pong, ms: performance.now() - started };
    };
    let answer;
    try {
      answer = await ping();
    } catch (error) {
      if (!isSessionRejected(error)) throw error;
      const rejected = session;
      this.say(`session ${fingerprint(rejected)} was rejected (401: stale or invalid); fetching a genuinely fresh session and retrying once`);
      session = await client.freshSession();
      if (session === rejected) throw new PeerClientError('session', 'the peer handed back the same rejected session');
      this.say(`session: ${fingerprint(session)}, fresh from the peer`);
      answer = await ping();
      this.say('retry with the fresh session succeeded');
    }
    this.sessions.set(sessionKey(endpoint), session);
    const peerName = (answer.pong as { peer?: unknown } | null)?.peer;
    this.say(`ping: authenticated round trip in ${answer.ms.toFixed(1)} ms${typeof peerName === 'string' ? ` (pong from ${peerName})` : ''}`);

    const [listed] = await client.batch([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }], { auth: { sessionId: session }, timeoutMs: CONNECT_TIMEOUT_MS });
    const tools = listed && 'result' in listed ? ((listed.result as { tools?: Array<{ name?: unknown; description?: unknown }> } | null)?.tools ?? []) : [];
    this.say(`skills (${tools.length}):`);
    const width = Math.max(0, ...tools.map((t) => String(t.name).length));
    for (const tool of tools) {
      const description = String(tool.description ?? '');
      this.say(`  ${String(tool.name).padEnd(width)}  ${description.length > 90 ? `${description.slice(0, 89)}…` : description}`);
    }
    this.say(`connected to ${client.address}`);
  }

  // ---- SendTo (and SentTo) ----

  private async sendTo({ positionals, flags }: ParsedArgs): Promise<void> {
    const [content, address] = positionals as [string, string];
    const provider = flags.provider;
    if (provider !== undefined && !(PROVIDERS as readonly unknown[]).includes(provider)) {
      throw new ReplUsageError(`--provider is one of ${PROVIDERS.join(', ')}, not "${String(provider)}"`);
    }
    endpointOf(address); // a malformed address fails before any file is read
    const context = typeof provider === 'string' ? { provider } : undefined;
    const path = resolve(content);
    if (content.length > 0 && existsSync(path)) {
      const stat = statSync(path);
      if (!stat.isFile()) throw new ReplUsageError(`${content} is not a regular file; SendTo uploads files and sends anything else as a prompt`);
      await this.upload(path, stat.size, address, context);
      return;
    }
    if (content.trim().length === 0) throw new ReplUsageError('the prompt is empty');
    const started = performance.now();
    const result = await this.withSession(address, (client, sessionId) => client.callTool('ask', { query: content }, { auth: { sessionId }, timeoutMs: CALL_TIMEOUT_MS }, context));
    const ms = performance.now() - started;
    const answer = result as { response?: unknown; model?: unknown; conversation?: unknown; turn?: unknown } | null;
    const details = [typeof answer?.model === 'string' ? `model ${answer.model}` : null, typeof answer?.turn === 'number' ? `turn ${answer.turn}` : null, `${ms.toFixed(0)} ms`].filter(Boolean);
    this.say(`answer from ${endpointAddress(address)} (${details.join(', ')}):`);
    this.say(typeof answer?.response === 'string' ? answer.response : JSON.stringify(result, null, 2));
  }

  private async upload(path: string, size: number, address: string, context: { provider: string } | undefined): Promise<void> {
    // Checked before reading: a huge file is refused without loading it.
    if (size > MAX_UPLOAD_CHARS) throw new ReplUsageError(`${path} is ${size} bytes; a peer accepts at most ${MAX_UPLOAD_CHARS} characters of content`);
    const bytes = readFileSync(path);
    const encoding = isText(bytes) ? 'utf8' : 'base64';
    const content = encoding === 'utf8' ? bytes.toString('utf8') : bytes.toString('base64');
    if (content.length > MAX_UPLOAD_CHARS) throw new ReplUsageError(`${path} is ${content.length} characters as ${encoding}; a peer accepts at most ${MAX_UPLOAD_CHARS}`);
    const filename = basename(path);
    const result = await this.withSession(address, (client, sessionId) =>
      client.callTool('upload_file', { filename, content, encoding }, { auth: { sessionId }, timeoutMs: CALL_TIMEOUT_MS }, context),
    );
    const stored = result as { filename?: unknown; bytes?: unknown } | null;
    this.say(`uploaded ${path} to ${endpointAddress(address)} as ${String(stored?.filename ?? filename)} (${String(stored?.bytes ?? bytes.length)} bytes, sent as ${encoding})`);
  }

  // ---- PayTo ----

  private async payTo({ positionals, flags }: ParsedArgs): Promise<void> {
    const [amountWord, address] = positionals as [string, string];
    const amount = Number(amountWord);
    if (!/^\d+(\.\d+)?$/.test(amountWord) || !(amount > 0)) throw new ReplUsageError(`the amount is a positive number like 10.5, not "${amountWord}"`);
    const currency = (typeof flags.currency === 'string' ? flags.currency : 'USD').toUpperCase();
    if (!/^[A-Z]{3}$/.test(currency)) throw new ReplUsageError(`--currency is a three-letter code like USD, not "${String(flags.currency)}"`);
    const payee = typeof flags.payee === 'string' ? flags.payee : 'unspecified';
    const result = await this.withSession(address, (client, sessionId) => client.callTool('pay', { amount, currency, payee }, { auth: { sessionId }, timeoutMs: CALL_TIMEOUT_MS }));
    const answer = (result ?? {}) as { status?: unknown; approval?: unknown; runId?: unknown; moved?: unknown; note?: unknown; transaction_id?: unknown };
    this.say(`payment request sent to ${endpointAddress(address)}: ${amount} ${currency} to ${payee}`);
    // `status` is the protocol's (`pending`); AgentPlane's own is `approval` (docs/PEER-PROTOCOL.md).
    if (answer.approval === PENDING_APPROVAL) {
      this.say(`  status: pending approval${typeof answer.runId === 'string' ? ` (run ${answer.runId})` : ''}`);
      this.say("  it waits in the plane's approvals inbox for a person to approve or deny it");
    } else {
      this.say(`  status: ${String(answer.approval ?? answer.status)}`);
    }
    this.say(answer.moved === true ? '  the peer reports that money moved' : '  no money moves: AgentPlane records a payment intent and never settles it');
  }

  // ---- PingTo ----

  private async pingTo({ positionals }: ParsedArgs): Promise<void> {
    const address = positionals[0]!;
    const { ms, pong } = await this.withSession(address, async (client, sessionId) => {
      const started = performance.now();
      const answer = await client.callTool('ping', {}, { auth: { sessionId }, timeoutMs: CONNECT_TIMEOUT_MS });
      return { ms: performance.now() - started, pong: answer as { peer?: unknown } | null };
    });
    this.say(`pong from ${typeof pong?.peer === 'string' ? `${pong.peer} at ` : ''}${endpointAddress(address)} in ${ms.toFixed(1)} ms (authenticated ping)`);
  }
}

function sessionKey(endpoint: PeerEndpoint): string {
  return `${endpoint.host}:${endpoint.port}`;
}

/** The address without any session in it: what is safe to print back. */
function endpointAddress(address: string): string {
  return Mcpv2Client.at(address).address;
}

/**
 * The loop. Lines are read through one async iterator, so a line that arrives while a command
 * runs waits its turn (commands never overlap). The prompt is printed whether or not stdin is a
 * TTY: a script sees the same conversation a person does.
 */
export async function runRepl(options: ReplOptions = {}): Promise<void> {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const dataDir = resolveDataDir(options.dataDir);
  const say = (line: string) => void output.write(`${line}\n`);
  const repl = new Repl(dataDir, say, options.cliPath ?? join(appRoot(), 'bin', 'agentplane.js'));
  const terminal = Boolean((input as { isTTY?: boolean }).isTTY && (output as { isTTY?: boolean }).isTTY);
  const rl = createInterface({ input, output, terminal, prompt: PROMPT, historySize: terminal ? 200 : 0 });

  // Ctrl-C at the prompt, SIGTERM or SIGHUP: end the loop the way end of input does, so the
  // peers this REPL started are stopped rather than orphaned. A second signal leaves at once,
  // killing the peers outright. Ctrl-C is a way to leave (exit 0); SIGTERM and SIGHUP keep
  // their conventional exit codes.
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    const code = signal === 'SIGHUP' ? 129 : signal === 'SIGTERM' ? 143 : 0;
    if (signalled) {
      repl.killAllNow();
      process.exit(code || 130);
    }
    signalled = true;
    if (code) process.exitCode = code;
    rl.close();
  };
  // With a TTY, readline owns Ctrl-C (raw mode); without one, Ctrl-C is a process SIGINT.
  rl.on('SIGINT', () => onSignal('SIGINT'));
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);

  say(`AgentPlane MCPv2 REPL. Type help for the commands, exit to leave. Peers started here keep their journal in ${dataDir}.`);
  let exited = false;
  let closed = false;
  rl.once('close', () => (closed = true));
  try {
    rl.prompt();
    for await (const line of rl) {
      // Lines already read stay queued after a signal closes the interface; they are not run.
      if (signalled) break;
      if ((await repl.execute(line)) === 'exit') {
        exited = true;
        break;
      }
      // A signal may have closed the interface while the command ran; prompting it would throw.
      if (!closed) rl.prompt();
    }
    // End of input leaves the cursor after a prompt; start the goodbye on its own line.
    if (!exited) say('');
  } finally {
    rl.close();
    await repl.stopAll();
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(signal, onSignal);
  }
  say('bye');
}

export function addReplCommand(program: Command): void {
  program
    .command('repl')
    .description("an interactive MCPv2 client (prompt mcpv2>): ReadyTo, StopTo, ConnectTo, SendTo, PayTo, PingTo; reads stdin, a TTY or a pipe")
    .option('--data-dir <dir>', 'data folder for the peers ReadyTo starts (default: $AGENTPLANE_DATA_DIR or the OS user-data folder)')
    .action(async (options: { dataDir?: string }) => {
      await runRepl(options.dataDir !== undefined ? { dataDir: options.dataDir } : {});
    });
}
