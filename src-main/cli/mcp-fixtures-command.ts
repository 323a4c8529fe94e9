/**
 * `agentplane mcp fixtures --port N [--stdio]`: the plane's MCP server module (the same HTTP and
 * stdio transports `agentplane mcp` serves the plane through) with the official conformance
 * suites' fixture tools, resources and prompts registered instead of the plane's agents. It is
 * what the conformance suites and the MCP inspector are pointed at.
 *
 * It opens no data dir and no plane: the fixtures are a test surface with nothing behind them.
 * HTTP binds loopback only, with the Host and Origin checks on and no token (principal
 * `mcp:anonymous`). The URL is printed on stdout on its own line,
 * `AGENTPLANE_MCP_URL=http://127.0.0.1:<port>/mcp`, for a script to read. Over `--stdio`, stdout
 * is the protocol: logs go to stderr, always.
 */
import { type Command, InvalidArgumentError } from 'commander';
import type { Logger } from '../base/logger';

function port(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65_535) throw new InvalidArgumentError('a port number from 0 to 65535 (0: any free port)');
  return n;
}

export function addMcpFixturesCommand(mcp: Command): void {
  mcp
    .command('fixtures')
    .description('serve the MCP conformance fixtures through the plane\'s MCP server module (for the conformance suites and the inspector; no plane, no data dir)')
    .option('--port <n>', 'loopback port for Streamable HTTP (0: any free port)', port, 0)
    .option('--stdio', 'serve over stdin/stdout instead of HTTP')
    .option('--verbose', 'log every session and caller on stderr (default: warnings and errors only)')
    .action(async (flags: { port: number; stdio?: boolean; verbose?: boolean }) => {
      process.exitCode = await fixtures(flags);
    });
}

async function fixtures(flags: { port: number; stdio?: boolean; verbose?: boolean }): Promise<number> {
  // The MCP server SDK and the fixtures, loaded only when this command runs (program.ts).
  const [{ createLogger }, { startMcpHttpServer }, { serveMcpStdio }, { FIXTURES_MAX_SESSIONS, createFixturesSurface }] = await Promise.all([
    import('../base/logger'),
    import('../protocols/mcp/mcp-http'),
    import('../protocols/mcp/mcp-stdio'),
    import('../protocols/mcp/fixtures/fixtures-factory'),
  ]);
  // createLogger without a file echoes warnings and errors to stderr; --verbose echoes every line.
  const logger: Logger = flags.verbose ? { log: (level, message, fields) => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`) } : createLogger(null);
  const surface = createFixturesSurface();
  const stopped = new Promise<void>((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve());
  });

  if (flags.stdio) {
    const served = await serveMcpStdio(surface.factory, logger);
    await Promise.race([served.closed, stopped]);
    await served.close().catch(() => undefined);
    return 0;
  }

  let server;
  try {
    server = await startMcpHttpServer({ factory: surface.factory, token: null, logger, port: flags.port, host: '127.0.0.1', maxSessionsPerCaller: FIXTURES_MAX_SESSIONS });
  } catch (error) {
    process.stderr.write(`agentplane mcp fixtures: cannot listen on 127.0.0.1:${flags.port}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  surface.bindNotifier(server.notify);
  process.stdout.write(`AGENTPLANE_MCP_URL=${server.url}\n`);
  await stopped;
  await server.close();
  return 0;
}
