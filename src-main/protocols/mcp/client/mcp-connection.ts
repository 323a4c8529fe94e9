/**
 * One declared server's connection: the official SDK `Client` opened over its transport, what
 * the server said about itself, and the view the pool shows of it.
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
 * - A stdio server must write only JSON-RPC on stdout. The SDK skips a line that is not JSON
 *   without a word, so a server logging to stdout looks like one that never answers; the
 *   connection watches the pipe and names the server and its offending line in the error. It does
 *   not refuse such a server outright: many write a banner and then speak the protocol correctly.
 * - A stdio server's environment is the SDK's short list of safe variables (HOME, PATH, USER,
 *   …) plus the env declared for it: never the plane's own environment and whatever it holds.
 * - HTTP answers are bounded (the pool's maxResponseBytes per response body): a deadline says how
 *   long the far side may take and nothing about how much it may send. stdio messages are bounded
 *   by the SDK's read buffer (10 MB).
 */
import type { Client, FetchLike, Transport } from '@modelcontextprotocol/client';
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type * as ClientModule from '@modelcontextprotocol/client';
import type * as StdioModule from '@modelcontextprotocol/client/stdio';
import type { Dispatcher } from 'undici';
import { undici } from '../../../net/undici';
import { MCP_PROTOCOL_VERSIONS, type McpServerConfig, type McpServerView } from '../../../../src-shared/protocol/mcp';
import type { Logger } from '../../../base/logger';
import { workspaceOf } from '../../../runtime/tools';
import { DeadlinePassed, type Deadline } from './mcp-deadline';
import { displayUrl, MAX_LINE_CHARS, messageOf, secretRedactor, shorten, withoutUndefined } from './mcp-client-text';

/**
 * The official client SDK, loaded when the first server is connected rather than with the
 * plane: most planes never connect one, and loading it (with its stdio transport) is about 75 ms
 * of every `serve`'s start (bench serve-startup). Errors can only be the SDK's once a client
 * exists, so `failureOf` (mcp-call-failure.ts) reads the loaded module and needs no load of its
 * own.
 */
export interface ClientSdk {
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

/** The SDK once a connect has loaded it; undefined before (then no error can be the SDK's). */
export const loadedClientSdk = (): ClientSdk | undefined => loadedSdk;

const STDERR_TAIL_LINES = 50;

/** Connecting failed; the message says why, in the server's words where it gave any. */
export class McpConnectError extends Error {
  override readonly name = 'McpConnectError';
}

type ToolInfo = NonNullable<McpServerView['tools']>[number];
type PromptInfo = NonNullable<McpServerView['prompts']>[number];
type ResourceInfo = NonNullable<McpServerView['resources']>[number];

export interface Connection {
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

/** What opening a connection needs from the pool. */
export interface ConnectionSettings {
  /** The data dir: a stdio server without a declared cwd runs in its workspace. */
  dataDir: string;
  logger: Logger;
  /** How long the `server/discover` probe may wait before falling back to `initialize`. */
  probeTimeoutMs: number;
  /** The most bytes one HTTP response body may carry. */
  maxResponseBytes: number;
  /** The version this client announces (the app's). */
  clientVersion: string;
  /** The dispatcher HTTP servers are reached through (netguard's, from the plane). */
  dispatcher: Dispatcher | undefined;
}

/** A connection not yet opened, for a server declared with `config`. */
export function newConnection(name: string, config: McpServerConfig): Connection {
  return { name, config, configKey: JSON.stringify(config), redact: secretRedactor(config), client: null, connecting: null, state: 'disconnected', stderrTail: [], nonProtocol: null, fault: null, closing: false };
}

/** fetch says only "fetch failed"; netguard's refusal (its cause) names the address and why, so it is what the person sees. */
function unwrapRefusal(error: unknown): never {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof Error && cause.name === 'NetguardRefusal') throw cause;
  throw error;
}

/**
 * A fetch whose answer bodies stop at `limit` bytes: past it the body errors and `onExceeded`
 * runs (the pool drops the connection, so the requests waiting on it fail at once rather than at
 * their deadline: the SDK reports a broken stream to onerror, not to the request).
 */
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

function transportFor(connection: Connection, sdk: ClientSdk, settings: ConnectionSettings): Transport {
  const { config } = connection;
  if (config.transport === 'http') {
    const exceeded = () => {
      connection.fault = `an answer exceeded ${settings.maxResponseBytes} bytes`;
      void connection.client?.close();
    };
    return new sdk.client.StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers }, fetch: boundedFetch(settings.maxResponseBytes, exceeded, settings.dispatcher) });
  }
  const transport = new sdk.stdio.StdioClientTransport({ command: config.command, args: config.args, env: config.env, cwd: config.cwd ?? workspaceOf(settings.dataDir), stderr: 'pipe' });
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
    watchStdout(connection, transport, settings.logger);
  };
  return transport;
}

/**
 * Notes a stdout line that is not JSON (the SDK drops it silently). The child process is not
 * public API of the transport: it is read structurally, and where it is absent the check is off.
 */
function watchStdout(connection: Connection, transport: StdioClientTransport, logger: Logger): void {
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
        logger.log('warn', 'mcp server wrote non-protocol output on stdout', { server: connection.name });
      }
    }
  });
}

/**
 * Opens the connection within the caller's deadline: the SDK loaded, the transport started, the
 * handshake, the settled version checked. The connection's state and error say how it went.
 */
export async function openConnection(connection: Connection, deadline: Deadline, settings: ConnectionSettings): Promise<Client> {
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
    { name: 'agentplane', version: settings.clientVersion },
    {
      // No elicitation, sampling or roots: see the module comment.
      capabilities: {},
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: Math.min(settings.probeTimeoutMs, deadline.remaining()) } },
      inputRequired: { autoFulfill: false },
    },
  );
  client.onerror = (error) => {
    const said = connection.redact(shorten(messageOf(error), 200));
    // A stdout line that is JSON but no JSON-RPC message: the SDK's own parse error says so.
    if (connection.config.transport === 'stdio' && error.name === 'ZodError') connection.nonProtocol = `a JSON line that is no JSON-RPC message (${said})`;
    settings.logger.log('warn', 'mcp transport error', { server: name, error: said });
  };
  client.onclose = () => {
    if (connection.closing || connection.client !== client) return;
    connection.client = null;
    connection.state = 'failed';
    connection.error = connection.fault ?? (connection.config.transport === 'stdio' ? `the server process of ${name} exited` : `the connection to ${name} closed`);
    settings.logger.log('warn', 'mcp server connection closed', { server: name });
  };
  try {
    let transport: Transport;
    try {
      transport = transportFor(connection, sdk, settings);
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
    settings.logger.log('info', 'mcp server connected', { server: name, version, serverName: info?.name });
    return client;
  } catch (error) {
    connection.closing = true;
    await client.close().catch(() => undefined);
    connection.closing = false;
    connection.state = 'failed';
    connection.error = error instanceof McpConnectError ? error.message : `cannot connect to ${name}: ${connection.redact(messageOf(error))}`;
    settings.logger.log('warn', 'mcp server connect failed', { server: name, error: connection.error });
    throw error instanceof McpConnectError ? error : new McpConnectError(connection.error);
  }
}

/** Lists what the server offers (by its capabilities). A listing that fails is noted, not fatal. */
export async function refreshListings(connection: Connection, client: Client, deadline: Deadline): Promise<void> {
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

/** The connection as the pool shows it: names of env and headers, never their values. */
export function viewOf(connection: Connection): McpServerView {
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
