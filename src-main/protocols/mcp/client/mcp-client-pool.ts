/**
 * The plane as an MCP host: one official SDK `Client` per declared server
 * (`<data dir>/mcp-servers.json`), connected lazily on first use or on request, and the runtime's
 * `McpToolCaller` (runtime/mcp-effect.ts) on top of it. Beside it: mcp-connection.ts (opening one
 * server's connection, its host profile and versions, its view), mcp-call-failure.ts (what a
 * failed call means for the world), mcp-deadline.ts and mcp-client-text.ts.
 *
 * What is true, and why:
 *
 * - Every request carries a whole-request deadline (lazy connect included): the SDK transport
 *   itself would wait for ever, and a wedged server would hang a step with nothing journaled.
 * - Discovery is only a diff. The tools a server lists are shown, never granted: the grant is
 *   `mcp:<server>/<tool>` in the operator's manifest, and a server cannot grant itself a tool.
 * - A config edited in mcp-servers.json is a new connection: the old one is dropped on the next
 *   use of its name.
 * - Secrets: env and header values go to the transport only. Views carry their names; errors,
 *   logs and the stderr tail have every declared secret value replaced by `[redacted]`; the
 *   effect's request (the journal) holds server, tool and arguments only.
 * - HTTP answers are bounded (16 MiB by default per response body); stdio messages by the SDK's
 *   read buffer (10 MB).
 */
import type { Client } from '@modelcontextprotocol/client';
import type { Dispatcher } from 'undici';
import { type McpServerConfig, type McpServerView, McpServerConfigSchema, McpServerNameSchema } from '../../../../src-shared/protocol/mcp';
import type { Logger } from '../../../base/logger';
import type { McpToolCaller } from '../../../runtime/mcp-effect';
import type { EffectAt, OutsideHop } from '../../../runtime/run-context';
import { EffectFailure } from '../../../runtime/run-signals';
import { failureOf, failureOfErrorResult } from './mcp-call-failure';
import { displayUrl, messageOf, withoutUndefined } from './mcp-client-text';
import { McpConnectError, newConnection, openConnection, refreshListings, viewOf, type Connection, type ConnectionSettings } from './mcp-connection';
import { Deadline } from './mcp-deadline';
import { addMcpServer, McpServersFileError, readMcpServersFile, removeMcpServer } from './mcp-servers-file';

export { McpConnectError } from './mcp-connection';

export const DEFAULT_MCP_DEADLINE_MS = 60_000;
export const DEFAULT_MCP_MAX_RESPONSE_BYTES = 16 * 1024 * 1024;
const DEFAULT_PROBE_TIMEOUT_MS = 5_000;

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

/** A call other than tools/call (resources/read, prompts/get) failed. */
export class McpRequestError extends Error {
  override readonly name = 'McpRequestError';
}

export class McpClientPool implements McpToolCaller {
  private readonly connections = new Map<string, Connection>();
  private readonly deadlineMs: number;
  private readonly settings: ConnectionSettings;
  private closed = false;

  constructor(
    private readonly dataDir: string,
    private readonly logger: Logger,
    options: McpClientPoolOptions = {},
  ) {
    this.deadlineMs = options.deadlineMs ?? DEFAULT_MCP_DEADLINE_MS;
    this.settings = {
      dataDir,
      logger,
      probeTimeoutMs: Math.min(options.probeTimeoutMs ?? DEFAULT_PROBE_TIMEOUT_MS, this.deadlineMs),
      maxResponseBytes: options.maxResponseBytes ?? DEFAULT_MCP_MAX_RESPONSE_BYTES,
      clientVersion: options.clientVersion ?? '0.0.0',
      dispatcher: options.dispatcher,
    };
  }

  // ---- declared servers ----

  /** Every declared server with its state; never connects. */
  list(): McpServerView[] {
    const { servers } = readMcpServersFile(this.dataDir);
    return Object.entries(servers)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, config]) => viewOf(this.current(name, config) ?? newConnection(name, config)));
  }

  /** Declares a server (a name already declared is refused); it is not connected. */
  add(name: string, config: McpServerConfig): McpServerView {
    const checkedName = McpServerNameSchema.parse(name);
    const checked = McpServerConfigSchema.parse(config);
    addMcpServer(this.dataDir, checkedName, checked);
    return viewOf(newConnection(checkedName, checked));
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
      await refreshListings(connection, client, deadline);
    } catch {
      // The view carries the state and the error.
    } finally {
      deadline.dispose();
    }
    return viewOf(connection);
  }

  async disconnect(name: string): Promise<McpServerView> {
    const connection = this.connection(name);
    await this.drop(name);
    return viewOf(newConnection(name, connection.config));
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
  async callTool(server: string, tool: string, args: Record<string, unknown>, _at?: EffectAt, hop?: OutsideHop): Promise<{ result: unknown; provenance: string }> {
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
      // The last word before the tools/call leaves: a halt that came while the connection was
      // being opened (a spawn, a handshake, a slow server) stops the call here. What the SDK
      // does inside callTool before sending reads its own cache only, never the wire.
      hop?.beforeDispatch();
      let result: Awaited<ReturnType<Client['callTool']>>;
      try {
        result = await deadline.race(client.callTool({ name: tool, arguments: args }, { timeout: deadline.remaining(), maxTotalTimeout: deadline.remaining(), signal: deadline.signal }));
      } catch (error) {
        const failure = failureOf(connection, tool, error, deadline);
        this.logger.log('warn', 'mcp tool call failed', { server, tool, code: failure.code, disposition: failure.disposition });
        throw failure;
      }
      if (result.isError) {
        throw failureOfErrorResult(connection, tool, result.content);
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
      if (!connection.tools) await refreshListings(connection, client, deadline);
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

  /** The connection for a declared server (a new one when its config was edited). */
  private connection(name: string): Connection {
    if (this.closed) throw new McpConnectError('the plane is closing');
    const config = readMcpServersFile(this.dataDir).servers[name];
    if (!config) throw new McpServerNotDeclaredError(`no MCP server named ${name} is declared (agentplane mcp servers add ${name} …)`);
    const current = this.current(name, config);
    if (current) return current;
    const stale = this.connections.get(name);
    if (stale) void this.drop(name, stale);
    const created = newConnection(name, config);
    this.connections.set(name, created);
    return created;
  }

  /** The live connection of `name` when it was made with this same config. */
  private current(name: string, config: McpServerConfig): Connection | null {
    const connection = this.connections.get(name);
    return connection && connection.configKey === JSON.stringify(config) ? connection : null;
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
   * The connected client. The caller that starts a connect waits for it whole (openConnection()
   * is bounded by that caller's deadline, and settles the state before it answers); one that
   * joins a connect already under way waits no longer than its own deadline.
   */
  private ensure(connection: Connection, deadline: Deadline): Promise<Client> {
    if (connection.client) return Promise.resolve(connection.client);
    if (connection.connecting) return deadline.race(connection.connecting);
    const opening = openConnection(connection, deadline, this.settings).finally(() => {
      if (connection.connecting === opening) connection.connecting = null;
    });
    connection.connecting = opening;
    return opening;
  }
}

export function createMcpClientPool(dataDir: string, logger: Logger, options: McpClientPoolOptions = {}): McpClientPool {
  return new McpClientPool(dataDir, logger, options);
}
