/**
 * The plane as an MCP host: one official SDK `Client` per declared server
 * (`<data dir>/mcp-servers.json`), connected lazily on first use or on request, and the runtime's
 * `McpToolCaller` (runtime/mcp-effect.ts) on top of it.
 *
 * What is true, and why:
 *
 * - The host profile is explicit and small. The client advertises no elicitation, sampling or
 *   roots capability, and answers a 2026-07-28 `input_required` result with an error rather than
 *   fulfilling it: the runtime has no governed callback path for those, and handling a server's
 *   request inside one effect would put a person's, a model's or the file system's work inside
 *   that effect and off the journal.
 * - Versions: `versionNegotiation: auto` probes with `server/discover` and falls back to the
 *   2025 `initialize`. MCP answers an offered version with one the server speaks and the
 *   connection proceeds on it (a designed downgrade), so the version the handshake settled on is
 *   kept and shown: a downgrade costs silence (an older server never returns a task). A settled
 *   version outside MCP_PROTOCOL_VERSIONS is refused at connect: an unknown dialect cannot even
 *   be downgraded to.
 * - Every request carries a whole-request deadline (lazy connect included): the SDK transport
 *   itself would wait for ever, and a wedged server would hang a step with nothing journaled.
 * - Discovery is only a diff. The tools a server lists are shown, never granted: the grant is
 *   `mcp:<server>/<tool>` in the operator's manifest, and a server cannot grant itself a tool.
 * - What a failed call means for the world is decided here, from what the wire said (the
 *   EffectFailure dispositions of runtime/run-signals.ts):
 *   - DidNotHappen (safe to retry): the server is not declared, cannot be started or reached,
 *     the handshake failed or timed out (the call was never sent); the server refused the call
 *     with a JSON-RPC error that is a refusal before running (parse, invalid request, unknown
 *     method, invalid params such as an unknown tool or arguments failing the tool's schema,
 *     resource not found, header/version refusals), also when the server's SDK wraps such a
 *     -32602 refusal into an `isError` result (`MCP error -32602: …`, as McpServer does); an
 *     HTTP 4xx.
 *   - Landed: the tool ran and answered `isError: true`: it said it failed, whatever it did is
 *     done. The server's text is the failure's message.
 *   - InDoubt (a person decides): the request left and no answer came: the deadline passed, the
 *     process died or the connection dropped, an HTTP 5xx, or any other JSON-RPC error
 *     (-32603 and server-defined codes can be raised after the tool started its work; treating
 *     them as proof that nothing happened is how a half-done action is sent twice).
 * - A stdio server must write only JSON-RPC on stdout. The SDK skips a line that is not JSON
 *   without a word, so a server logging to stdout looks like one that never answers; the pool
 *   watches the pipe and names the server and its offending line in the error. It does not
 *   refuse such a server outright: many write a banner and then speak the protocol correctly.
 * - A stdio server's environment is the SDK's short list of safe variables (HOME, PATH, USER,
 *   …) plus the env declared for it: never the plane's own environment and whatever it holds.
 * - Secrets: env and header values go to the transport only. Views carry their names; errors,
 *   logs and the stderr tail have every declared secret value replaced by `[redacted]`; the
 *   effect's request (the journal) holds server, tool and arguments only.
 * - HTTP answers are bounded (16 MiB by default per response body): a deadline says how long
 *   the far side may take and nothing about how much it may send. stdio messages are bounded by
 *   the SDK's read buffer (10 MB).
 */
import type { Client, FetchLike, Transport } from '@modelcontextprotocol/client';
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type * as ClientModule from '@modelcontextprotocol/client';
import type * as StdioModule from '@modelcontextprotocol/client/stdio';
import type { Dispatcher } from 'undici';
import { undici } from '../../../net/undici';
import {
  MCP_PROTOCOL_VERSIONS,
  type McpServerConfig,
  type McpServerView,
  McpServerConfigSchema,
  McpServerNameSchema,
} from '../../../../src-shared/protocol/mcp';
import type { Logger } from '../../../base/logger';
import type { McpToolCaller } from '../../../runtime/mcp-effect';
import type { EffectAt } from '../../../runtime/run-context';
import { EffectFailure } from '../../../runtime/run-signals';
import { workspaceOf } from '../../../runtime/tools';
import { addMcpServer, McpServersFileError, readMcpServersFile, removeMcpServer } from './mcp-servers-file';

/**
 * The official client SDK, loaded when the first server is connected rather than with the
 * plane: most planes never connect one, and loading it (with its stdio transport) is about 75 ms
 * of every `serve`'s start (bench serve-startup). Errors can only be the SDK's once a client
 * exists, so `failureOf` reads the loaded module and needs no load of its own.
 */
interface ClientSdk {
  client: typeof ClientModule;
  stdio: typeof StdioModule;
}
let sdkLoad: Promise<ClientSdk> | undefined;
let loadedSdk: ClientSdk | undefined;
function loadClientSdk(): Promise<ClientSdk> {
  sdkLoad ??= Promise.all([import('@modelcontextprotocol/client'), import('@modelcontextprotocol/client/stdio')]).then(
    ([client, stdio]) => (loadedSdk = { client, stdio }),
    (error: unknown) => {
      // A failed load is not kept: the next connect tries again rather than failing for good.
      sdkLoad = undefined;
      throw error;
    },
  );
  return sdkLoad;
}

export const DEFAULT_MCP_DEADLINE_MS = 60_000;
export const DEFAULT_MCP_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const DEFAULT_PROBE_TIMEOUT_MS = 5_000;
const STDERR_TAIL_LINES = 50;
const MAX_LINE_CHARS = 500;

export interface McpClientPoolOptions {
  /** The whole-request deadline of a call, lazy connect included (default 60 s). */
  deadlineMs?: number;
  /** How long the `server/discover` probe may wait before falling back to `initialize`. */
  probeTimeoutMs?: number;
  /** The most bytes one HTTP response body may carry. */
  maxResponseBytes?: number;
  /** The version this client announces (the app's). */
  clientVersion?: string;
  /**
   * The dispatcher HTTP servers are reached through: the plane passes netguard's, which judges
   * every address at connect (a server URL in mcp-servers.json is an allow entry for exactly its
   * origin). Absent: undici's global dispatcher (tests that build a pool directly).
   */
  dispatcher?: Dispatcher;
}

/** The server is not in mcp-servers.json. */
export class McpServerNotDeclaredError extends Error {
  override readonly name = 'McpServerNotDeclaredError';
}

/** Connecting failed; the message says why, in the server's words where it gave any. */
export class McpConnectError extends Error {
  override readonly name = 'McpConnectError';
}

/** A call other than tools/call (resources/read, prompts/get) failed. */
export class McpRequestError extends Error {
  override readonly name = 'McpRequestError';
}

type ToolInfo = NonNullable<McpServerView['tools']>[number];
type PromptInfo = NonNullable<McpServerView['prompts']>[number];
type ResourceInfo = NonNullable<McpServerView['resources']>[number];

interface Connection {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly configKey: string;
  readonly redact: (text: string) => string;
  client: Client | null;
  connecting: Promise<Client> | null;
  state: McpServerView['state'];
  negotiatedVersion?: string;
  serverInfo?: { name: string; version?: string };
  error?: string;
  stderrTail: string[];
  /** The last line the server wrote on stdout that was not JSON-RPC (redacted, shortened). */
  nonProtocol: string | null;
  tools?: ToolInfo[];
  prompts?: PromptInfo[];
  resources?: ResourceInfo[];
  /** Why the pool dropped the connection itself (an answer over the size bound), for the errors. */
  fault: string | null;
  /** Set while the pool itself closes the client, so its onclose is not read as a failure. */
  closing: boolean;
}

/** JSON-RPC codes a server answers when it refused a request before doing anything. */
const REFUSED_BEFORE_RUNNING = new Set<number>([
  -32700, // parse error
  -32600, // invalid request
  -32601, // method not found
  -32602, // invalid params: an unknown tool, arguments failing the tool's schema
  -32002, // resource not found
  -32020, // headers and body disagree (2026-07-28)
  -32021, // missing required header (2026-07-28)
  -32022, // unsupported protocol version (2026-07-28)
]);

/** The whole-request deadline: a timer and the signal it aborts. */
class Deadline {
  readonly controller = new AbortController();
  private readonly endsAt: number;
  private readonly timer: NodeJS.Timeout;
  constructor(readonly ms: number) {
    // undici is loaded first (net/undici.ts: on the first request): loading it is the plane's
    // own cost, and must not eat into the time the far side is given.
    undici();
    this.endsAt = Date.now() + ms;
    this.timer = setTimeout(() => this.controller.abort(new DeadlinePassed(ms)), ms);
  }
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  get passed(): boolean {
    return this.controller.signal.aborted || Date.now() >= this.endsAt;
  }
  remaining(): number {
    return Math.max(1, this.endsAt - Date.now());
  }
  /** `work`, or a DeadlinePassed rejection when the deadline fires first (whatever the SDK does). */
  async race<T>(work: Promise<T>): Promise<T> {
    work.catch(() => undefined);
    if (this.signal.aborted) throw new DeadlinePassed(this.ms);
    let onAbort = (): void => undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new DeadlinePassed(this.ms));
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([work, aborted]);
    } finally {
      this.signal.removeEventListener('abort', onAbort);
    }
  }
  dispose(): void {
    clearTimeout(this.timer);
  }
}

class DeadlinePassed extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${ms} ms`);
  }
}

function secretRedactor(config: McpServerConfig): (text: string) => string {
  const values = Object.values(config.transport === 'stdio' ? config.env : config.headers).filter((v) => v.length >= 4);
  // Longest first, so a secret containing another is replaced whole.
  values.sort((a, b) => b.length - a.length);
  return (text) => values.reduce((out, value) => out.split(value).join('[redacted]'), text);
}

/** A URL as shown and keyed: without user info (a password in a URL is a credential). */
function displayUrl(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString();
}

function shorten(text: string, max = MAX_LINE_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function messageOf(error: unknown): string {
  if (error instanceof DeadlinePassed) return error.message;
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    let text = `${error.message}${typeof code === 'number' ? ` (code ${code})` : ''}`;
    // fetch says only "fetch failed"; the reason (ECONNREFUSED, a TLS error) is a cause or two down.
    let cause = (error as { cause?: unknown }).cause;
    for (let depth = 0; depth < 3 && cause instanceof Error; depth += 1) {
      const detail = (cause as { code?: unknown }).code ?? cause.message;
      if (typeof detail === 'string' && detail && !text.includes(detail)) text += ` (${detail})`;
      cause = (cause as { cause?: unknown }).cause;
    }
    return text;
  }
  return String(error);
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * A fetch whose answer bodies stop at `limit` bytes: past it the body errors and `onExceeded`
 * runs (the pool drops the connection, so the requests waiting on it fail at once rather than at
 * their deadline: the SDK reports a broken stream to onerror, not to the request).
 */
/** fetch says only "fetch failed"; netguard's refusal (its cause) names the address and why, so it is what the person sees. */
function unwrapRefusal(error: unknown): never {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof Error && cause.name === 'NetguardRefusal') throw cause;
  throw error;
}

function boundedFetch(limit: number, onExceeded: () => void, dispatcher?: Dispatcher): FetchLike {
  return async (url, init) => {
    // undici's own fetch, so `dispatcher` is honoured (Node's global fetch bundles another undici).
    const response = dispatcher ? ((await undici().fetch(url, { ...(init as object), dispatcher } as never).catch(unwrapRefusal)) as unknown as Response) : await fetch(url, init);
    if (!response.body) return response;
    let seen = 0;
    const counted = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength;
          if (seen <= limit) return controller.enqueue(chunk);
          controller.error(new Error(`the server's answer exceeded ${limit} bytes`));
          onExceeded();
        },
      }),
    );
    return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

/** The text parts of a tool result's content, joined: what a tool that failed said. */
function textOf(content: unknown): string {
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => (part && typeof part === 'object' && (part as { type?: unknown }).type === 'text' ? String((part as { text?: unknown }).text ?? '') : ''))
    .filter(Boolean)
    .join('\n');
}

export class McpClientPool implements McpToolCaller {
  private readonly connections = new Map<string, Connection>();
  private readonly deadlineMs: number;
  private readonly probeTimeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly clientVersion: string;
  private readonly dispatcher: Dispatcher | undefined;
  private closed = false;

  constructor(
    private readonly dataDir: string,
    private readonly logger: Logger,
    options: McpClientPoolOptions = {},
  ) {
    this.deadlineMs = options.deadlineMs ?? DEFAULT_MCP_DEADLINE_MS;
    this.probeTimeoutMs = Math.min(options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS, this.deadlineMs);
    this.maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MCP_MAX_RESPONSE_BYTES;
    this.clientVersion = options.clientVersion ?? '0.0.0';
    this.dispatcher = options.dispatcher;
  }

  // ---- declared servers ----

  /** Every declared server with its state; never connects. */
  list(): McpServerView[] {
    const { servers } = readMcpServersFile(this.dataDir);
    return Object.entries(servers)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, config]) => this.viewOf(this.current(name, config) ?? this.fresh(name, config)));
  }

  /** Declares a server (a name already declared is refused); it is not connected. */
  add(name: string, config: McpServerConfig): McpServerView {
    const checkedName = McpServerNameSchema.parse(name);
    const checked = McpServerConfigSchema.parse(config);
    addMcpServer(this.dataDir, checkedName, checked);
    return this.viewOf(this.fresh(checkedName, checked));
  }

  /** Disconnects and forgets a server; false when none had that name. */
  async remove(name: string): Promise<boolean> {
    await this.drop(name);
    return removeMcpServer(this.dataDir, name);
  }

  /** Connects (or reuses the connection) and lists tools, prompts and resources; a failure is in the view. */
  async connect(name: string): Promise<McpServerView> {
    const connection = this.connection(name);
    const deadline = new Deadline(this.deadlineMs);
    try {
      const client = await this.ensure(connection, deadline);
      await this.refreshListings(connection, client, deadline);
    } catch {
      // The view carries the state and the error.
    } finally {
      deadline.dispose();
    }
    return this.viewOf(connection);
  }

  async disconnect(name: string): Promise<McpServerView> {
    const connection = this.connection(name);
    await this.drop(name);
    return this.viewOf(this.fresh(name, connection.config));
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.connections.keys()].map((name) => this.drop(name)));
  }

  // ---- McpToolCaller ----

  destinationOf(server: string): string {
    let config: McpServerConfig | undefined;
    try {
      config = readMcpServersFile(this.dataDir).servers[server];
    } catch {
      config = undefined;
    }
    if (!config) return `mcp:${server}`;
    return config.transport === 'http' ? displayUrl(config.url) : `stdio:${config.command}`;
  }

  // `_at` (the run and step) is not sent: an MCP server has no use for the plane's run ids.
  async callTool(server: string, tool: string, args: Record<string, unknown>, _at?: EffectAt): Promise<{ result: unknown; provenance: string }> {
    let connection: Connection;
    try {
      connection = this.connection(server);
    } catch (error) {
      const code = error instanceof McpServerNotDeclaredError ? 'McpServerNotDeclared' : error instanceof McpServersFileError ? 'McpServersFileInvalid' : 'McpUnavailable';
      throw new EffectFailure(code, (error as Error).message, 'DidNotHappen');
    }
    const deadline = new Deadline(this.deadlineMs);
    try {
      let client: Client;
      try {
        client = await this.ensure(connection, deadline);
      } catch (error) {
        // The call was never sent: nothing can have happened.
        throw new EffectFailure('McpConnectFailed', `${server}/${tool} was not called: ${(error as Error).message}`, 'DidNotHappen');
      }
      let result: Awaited<ReturnType<Client['callTool']>>;
      try {
        result = await deadline.race(client.callTool({ name: tool, arguments: args }, { timeout: deadline.remaining(), maxTotalTimeout: deadline.remaining(), signal: deadline.signal }));
      } catch (error) {
        const failure = this.failureOf(connection, tool, error, deadline);
        this.logger.log('warn', 'mcp tool call failed', { server, tool, code: failure.code, disposition: failure.disposition });
        throw failure;
      }
      if (result.isError) {
        const text = connection.redact(shorten(textOf(result.content) || 'no text', 1_000));
        // McpServer (both SDK generations) wraps its own refusals (an unknown tool, arguments
        // failing the schema) into an isError result: the tool never ran.
        if (/^MCP error -32602:/.test(text)) throw new EffectFailure('McpRefused', `${server} refused ${tool}: ${text}`, 'DidNotHappen');
        throw new EffectFailure('McpToolError', `${server}/${tool} ran and reported an error: ${text}`, 'Landed');
      }
      const answer = withoutUndefined({ content: result.content, structuredContent: result.structuredContent });
      return { result: answer, provenance: `mcp:${server}` };
    } finally {
      deadline.dispose();
    }
  }

  // ---- reads (not effects: for the CLI, the UI and tests) ----

  /** The tool as the server lists it (connecting if needed), for a model step offering it; null when not listed. */
  async describeTool(server: string, tool: string): Promise<{ description?: string; inputSchema: Record<string, unknown> } | null> {
    const connection = this.connection(server);
    const deadline = new Deadline(this.deadlineMs);
    try {
      const client = await this.ensure(connection, deadline);
      // Listings are read on connect(); a connection opened by a call has none yet.
      if (!connection.tools) await this.refreshListings(connection, client, deadline);
    } finally {
      deadline.dispose();
    }
    const found = (connection.tools ?? []).find((t) => t.name === tool);
    return found ? { ...(found.description ? { description: found.description } : {}), inputSchema: found.inputSchema ?? { type: 'object' } } : null;
  }

  async readResource(server: string, uri: string): Promise<unknown> {
    return this.request(server, `resources/read ${uri}`, (client, options) => client.readResource({ uri }, options));
  }

  async getPrompt(server: string, name: string, args: Record<string, string> = {}): Promise<unknown> {
    return this.request(server, `prompts/get ${name}`, (client, options) => client.getPrompt({ name, arguments: args }, options));
  }

  // ---- internals ----

  private async request<T>(server: string, what: string, send: (client: Client, options: { timeout: number; maxTotalTimeout: number; signal: AbortSignal }) => Promise<T>): Promise<T> {
    const connection = this.connection(server);
    const deadline = new Deadline(this.deadlineMs);
    try {
      const client = await this.ensure(connection, deadline);
      return await deadline.race(send(client, { timeout: deadline.remaining(), maxTotalTimeout: deadline.remaining(), signal: deadline.signal }));
    } catch (error) {
      if (error instanceof McpConnectError) throw error;
      throw new McpRequestError(`${server}: ${what} failed: ${connection.redact(messageOf(error))}`);
    } finally {
      deadline.dispose();
    }
  }

  /** What a failed tools/call means for the world (see the module comment). */
  private failureOf(connection: Connection, tool: string, error: unknown, deadline: Deadline): EffectFailure {
    const server = connection.name;
    const said = connection.redact(shorten(messageOf(error)));
    const garbage = connection.nonProtocol ? `; it wrote non-protocol output on stdout: "${connection.nonProtocol}"` : '';
    // A failed call means a client existed, so the SDK is loaded; without it nothing is the SDK's.
    const sdk = loadedSdk?.client;
    const sdkError = sdk && error instanceof sdk.SdkError ? error : undefined;
    const sdkTimedOut = sdk !== undefined && sdkError !== undefined && sdkError.code === sdk.SdkErrorCode.RequestTimeout;
    if (error instanceof DeadlinePassed || sdkTimedOut || deadline.passed) {
      return new EffectFailure('McpTimeout', `${server}/${tool}: no answer within ${deadline.ms} ms${garbage}; the request was sent, so whether the tool ran is unknown`, 'InDoubt');
    }
    if (sdk && error instanceof sdk.ProtocolError) {
      if (REFUSED_BEFORE_RUNNING.has(error.code)) return new EffectFailure('McpRefused', `${server} refused ${tool}: ${said}`, 'DidNotHappen');
      return new EffectFailure('McpServerError', `${server}/${tool} failed with an error the tool may have raised after starting: ${said}`, 'InDoubt');
    }
    if (sdk && sdkError) {
      const status = (sdkError.data as { status?: unknown } | undefined)?.status;
      if (typeof status === 'number' && status >= 400 && status < 500) return new EffectFailure('McpRefused', `${server} refused ${tool} with HTTP ${status}: ${said}`, 'DidNotHappen');
      if (sdkError.code === sdk.SdkErrorCode.NotConnected) return new EffectFailure('McpNotConnected', `${server}/${tool} was not sent: ${said}`, 'DidNotHappen');
      if (sdkError.code === sdk.SdkErrorCode.ConnectionClosed) {
        const how = connection.fault ?? (connection.config.transport === 'stdio' ? 'the server process exited or closed its pipes' : 'the connection closed');
        return new EffectFailure('McpConnectionLost', `${server}/${tool}: ${how} after the request was sent${garbage}; whether the tool ran is unknown`, 'InDoubt');
      }
    }
    // netguard refused the address at connect: nothing was sent, and retrying cannot help (a
    // forbidden address must not read as a server that is merely down).
    if (/netguard refused/.test(said)) return new EffectFailure('McpAddressRefused', `${server}/${tool} was not sent: ${said}`, 'DidNotHappen');
    const refusedBeforeSending = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN/.test(said);
    if (refusedBeforeSending) return new EffectFailure('McpUnreachable', `${server}/${tool} was not sent: ${said}`, 'DidNotHappen');
    return new EffectFailure('McpCallFailed', `${server}/${tool}: ${said}${garbage}; whether the tool ran is unknown`, 'InDoubt');
  }

  /** The connection for a declared server (a new one when its config was edited). */
  private connection(name: string): Connection {
    if (this.closed) throw new McpConnectError('the plane is closing');
    const config = readMcpServersFile(this.dataDir).servers[name];
    if (!config) throw new McpServerNotDeclaredError(`no MCP server named ${name} is declared (agentplane mcp servers add ${name} …)`);
    const current = this.current(name, config);
    if (current) return current;
    const stale = this.connections.get(name);
    if (stale) void this.drop(name, stale);
    const created = this.fresh(name, config);
    this.connections.set(name, created);
    return created;
  }

  /** The live connection of `name` when it was made with this same config. */
  private current(name: string, config: McpServerConfig): Connection | null {
    const connection = this.connections.get(name);
    return connection && connection.configKey === JSON.stringify(config) ? connection : null;
  }

  private fresh(name: string, config: McpServerConfig): Connection {
    return { name, config, configKey: JSON.stringify(config), redact: secretRedactor(config), client: null, connecting: null, state: 'disconnected', stderrTail: [], nonProtocol: null, fault: null, closing: false };
  }

  private async drop(name: string, connection = this.connections.get(name)): Promise<void> {
    if (!connection) return;
    if (this.connections.get(name) === connection) this.connections.delete(name);
    connection.closing = true;
    const client = connection.client ?? (await connection.connecting?.catch(() => null)) ?? null;
    connection.client = null;
    connection.state = 'disconnected';
    await client?.close().catch(() => undefined);
  }

  /**
   * The connected client. The caller that starts a connect waits for it whole (open() is bounded
   * by that caller's deadline, and settles the state before it answers); one that joins a connect
   * already under way waits no longer than its own deadline.
   */
  private ensure(connection: Connection, deadline: Deadline): Promise<Client> {
    if (connection.client) return Promise.resolve(connection.client);
    if (connection.connecting) return deadline.race(connection.connecting);
    const opening = this.open(connection, deadline).finally(() => {
      if (connection.connecting === opening) connection.connecting = null;
    });
    connection.connecting = opening;
    return opening;
  }

  private transportFor(connection: Connection, sdk: ClientSdk): Transport {
    const { config } = connection;
    if (config.transport === 'http') {
      const exceeded = () => {
        connection.fault = `an answer exceeded ${this.maxResponseBytes} bytes`;
        void connection.client?.close();
      };
      return new sdk.client.StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers }, fetch: boundedFetch(this.maxResponseBytes, exceeded, this.dispatcher) });
    }
    const transport = new sdk.stdio.StdioClientTransport({ command: config.command, args: config.args, env: config.env, cwd: config.cwd ?? workspaceOf(this.dataDir), stderr: 'pipe' });
    let partial = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = (lines.pop() ?? '').slice(-MAX_LINE_CHARS);
      for (const line of lines) {
        if (line.trim() === '') continue;
        connection.stderrTail.push(connection.redact(shorten(line)));
        if (connection.stderrTail.length > STDERR_TAIL_LINES) connection.stderrTail.shift();
      }
    });
    // Replaced on the instance, not by a subclass: the SDK runs the auto probe on a disposable
    // sibling process only for its own StdioClientTransport class.
    const start = transport.start.bind(transport);
    transport.start = async () => {
      await start();
      this.watchStdout(connection, transport);
    };
    return transport;
  }

  /**
   * Notes a stdout line that is not JSON (the SDK drops it silently). The child process is not
   * public API of the transport: it is read structurally, and where it is absent the check is off.
   */
  private watchStdout(connection: Connection, transport: StdioClientTransport): void {
    const stdout = (transport as unknown as { _process?: { stdout?: NodeJS.ReadableStream | null } })._process?.stdout;
    if (!stdout) return;
    let partial = '';
    stdout.on('data', (chunk: Buffer | string) => {
      const lines = (partial + chunk.toString()).split('\n');
      partial = (lines.pop() ?? '').slice(-65_536);
      for (const line of lines) {
        if (line.trim() === '') continue;
        try {
          JSON.parse(line);
        } catch {
          connection.nonProtocol = connection.redact(shorten(line, 200));
          this.logger.log('warn', 'mcp server wrote non-protocol output on stdout', { server: connection.name });
        }
      }
    });
  }

  private async open(connection: Connection, deadline: Deadline): Promise<Client> {
    const { name } = connection;
    connection.state = 'connecting';
    connection.error = undefined;
    connection.nonProtocol = null;
    connection.fault = null;
    let sdk: ClientSdk;
    try {
      sdk = await loadClientSdk();
    } catch (error) {
      connection.state = 'failed';
      connection.error = `cannot connect to ${name}: the MCP client could not be loaded (${messageOf(error)})`;
      throw new McpConnectError(connection.error);
    }
    const client = new sdk.client.Client(
      { name: 'agentplane', version: this.clientVersion },
      {
        // No elicitation, sampling or roots: see the module comment.
        capabilities: {},
        versionNegotiation: { mode: 'auto', probe: { timeoutMs: Math.min(this.probeTimeoutMs, deadline.remaining()) } },
        inputRequired: { autoFulfill: false },
      },
    );
    client.onerror = (error) => {
      const said = connection.redact(shorten(messageOf(error), 200));
      // A stdout line that is JSON but no JSON-RPC message: the SDK's own parse error says so.
      if (connection.config.transport === 'stdio' && error.name === 'ZodError') connection.nonProtocol = `a JSON line that is no JSON-RPC message (${said})`;
      this.logger.log('warn', 'mcp transport error', { server: name, error: said });
    };
    client.onclose = () => {
      if (connection.closing || connection.client !== client) return;
      connection.client = null;
      connection.state = 'failed';
      connection.error = connection.fault ?? (connection.config.transport === 'stdio' ? `the server process of ${name} exited` : `the connection to ${name} closed`);
      this.logger.log('warn', 'mcp server connection closed', { server: name });
    };
    try {
      let transport: Transport;
      try {
        transport = this.transportFor(connection, sdk);
      } catch (error) {
        throw new McpConnectError(`cannot start ${name}: ${connection.redact(messageOf(error))}`);
      }
      try {
        await deadline.race(client.connect(transport, { timeout: deadline.remaining(), signal: deadline.signal }));
      } catch (error) {
        const garbage = connection.nonProtocol ? `; it wrote non-protocol output on stdout (an MCP stdio server writes only JSON-RPC there, its logs go to stderr): "${connection.nonProtocol}"` : '';
        const why = error instanceof DeadlinePassed || deadline.passed ? `no handshake within ${deadline.ms} ms` : connection.redact(shorten(messageOf(error)));
        throw new McpConnectError(`cannot connect to ${name}: ${why}${garbage}`);
      }
      const version = client.getNegotiatedProtocolVersion();
      if (!version || !(MCP_PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
        throw new McpConnectError(`${name} settled on MCP protocol version ${version ?? '(none)'}, which this plane does not speak (it speaks ${MCP_PROTOCOL_VERSIONS.join(', ')})`);
      }
      const info = client.getServerVersion();
      connection.negotiatedVersion = version;
      connection.serverInfo = info ? withoutUndefined({ name: info.name, version: info.version }) : undefined;
      connection.client = client;
      connection.state = 'connected';
      connection.closing = false;
      this.logger.log('info', 'mcp server connected', { server: name, version, serverName: info?.name });
      return client;
    } catch (error) {
      connection.closing = true;
      await client.close().catch(() => undefined);
      connection.closing = false;
      connection.state = 'failed';
      connection.error = error instanceof McpConnectError ? error.message : `cannot connect to ${name}: ${connection.redact(messageOf(error))}`;
      this.logger.log('warn', 'mcp server connect failed', { server: name, error: connection.error });
      throw error instanceof McpConnectError ? error : new McpConnectError(connection.error);
    }
  }

  /** Lists what the server offers (by its capabilities). A listing that fails is noted, not fatal. */
  private async refreshListings(connection: Connection, client: Client, deadline: Deadline): Promise<void> {
    const capabilities = client.getServerCapabilities() ?? {};
    const options = () => ({ timeout: deadline.remaining(), maxTotalTimeout: deadline.remaining(), signal: deadline.signal });
    const problems: string[] = [];
    const attempt = async (what: string, work: () => Promise<void>) => {
      try {
        await work();
      } catch (error) {
        problems.push(`${what}: ${connection.redact(shorten(messageOf(error), 200))}`);
      }
    };
    if (capabilities.tools) {
      await attempt('tools/list', async () => {
        const { tools } = await deadline.race(client.listTools(undefined, options()));
        connection.tools = tools.map((t) => withoutUndefined({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema as Record<string, unknown> }));
      });
    }
    if (capabilities.prompts) {
      await attempt('prompts/list', async () => {
        const { prompts } = await deadline.race(client.listPrompts(undefined, options()));
        connection.prompts = prompts.map((p) =>
          withoutUndefined({ name: p.name, title: p.title, description: p.description, arguments: (p.arguments ?? []).map((a) => withoutUndefined({ name: a.name, description: a.description, required: a.required })) }),
        );
      });
    }
    if (capabilities.resources) {
      await attempt('resources/list', async () => {
        const { resources } = await deadline.race(client.listResources(undefined, options()));
        connection.resources = resources.map((r) => withoutUndefined({ uri: r.uri, name: r.name, title: r.title, description: r.description, mimeType: r.mimeType }));
      });
    }
    connection.error = problems.length > 0 ? `connected, but ${problems.join('; ')}` : undefined;
  }

  private viewOf(connection: Connection): McpServerView {
    const { config } = connection;
    const where =
      config.transport === 'stdio'
        ? { transport: 'stdio' as const, command: config.command, args: config.args, envNames: Object.keys(config.env) }
        : { transport: 'http' as const, url: displayUrl(config.url), headerNames: Object.keys(config.headers) };
    return withoutUndefined({
      name: connection.name,
      ...where,
      state: connection.state,
      negotiatedVersion: connection.state === 'connected' ? connection.negotiatedVersion : undefined,
      serverInfo: connection.serverInfo,
      error: connection.error,
      stderrTail: connection.stderrTail.length > 0 ? [...connection.stderrTail] : undefined,
      tools: connection.tools,
      prompts: connection.prompts,
      resources: connection.resources,
    });
  }
}

export function createMcpClientPool(dataDir: string, logger: Logger, options: McpClientPoolOptions = {}): McpClientPool {
  return new McpClientPool(dataDir, logger, options);
}
