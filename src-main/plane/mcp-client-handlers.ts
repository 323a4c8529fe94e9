/**
 * The `mcp.servers.*` commands: the MCP servers the user declares for the plane's agents to call
 * (`<data dir>/mcp-servers.json`, through the plane's client pool).
 *
 * `list` never connects by itself: showing the list must not start a process or open a
 * connection the person did not ask for. `connect` answers a view either way: a server that
 * cannot be reached is a view in state `failed` with its error, not a refused command, because
 * that is an answer about the server, not about the request. A malformed servers file is a bad
 * request naming the file and the field; it is never overwritten.
 */
import type { CommandsOf } from '../../src-shared/ipc/contract';
import type { CommandHandlers } from './dispatch';
import { PlaneError } from '../base/plane-error';
import { ErrorCode } from '../../src-shared/ipc/errors';
import { McpServerNotDeclaredError, type McpClientPool } from '../protocols/mcp/client/mcp-client-pool';
import { McpServerExistsError, McpServersFileError } from '../protocols/mcp/client/mcp-servers-file';

type McpClientCommands = CommandsOf<'mcp.servers'>;

/** The pool's refusals as the contract's errors; anything else is the plane's own fault. */
async function refusals<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof McpServerNotDeclaredError) throw new PlaneError(ErrorCode.NotFound, error.message);
    if (error instanceof McpServerExistsError) throw new PlaneError(ErrorCode.Conflict, error.message);
    if (error instanceof McpServersFileError) throw new PlaneError(ErrorCode.BadRequest, error.message);
    throw error;
  }
}

export function mcpClientHandlers(pool: McpClientPool): Pick<CommandHandlers, McpClientCommands> {
  return {
    'mcp.servers.list': () => refusals(() => ({ servers: pool.list() })),
    'mcp.servers.add': ({ name, config }) => refusals(() => pool.add(name, config)),
    'mcp.servers.remove': ({ name }) => refusals(async () => ({ removed: await pool.remove(name) })),
    'mcp.servers.connect': ({ name }) => refusals(() => pool.connect(name)),
    'mcp.servers.disconnect': ({ name }) => refusals(() => pool.disconnect(name)),
  };
}
