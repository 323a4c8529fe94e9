/**
 * MCP over stdio, for a host that launches `agentplane mcp --stdio` itself. The SDK's
 * `serveStdio` serves both revisions on one connection (a 2025-11-25 opening pins the connection
 * to that era; a 2026-07-28 client's requests each carry their envelope).
 *
 * No host is authenticated over stdio: whoever could launch the process already runs as this
 * user. The principal is `mcp:stdio`. Stdout is the protocol, so nothing else may ever be written
 * there: this module logs through the given logger, which the caller points at stderr.
 *
 * The host closing stdin ends the connection only after every request read before it has been
 * answered, or the drain deadline (STDIO_DRAIN_MS, stdio-drain.ts) has passed.
 */
import type { Readable, Writable } from 'node:stream';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Logger } from '../../base/logger';
import { errorFields } from '../../base/logger';
import { PRINCIPAL_STDIO, type McpServerFactory } from './mcp-factory';
import { drainingStdio } from './stdio-drain';

export async function serveMcpStdio(
  factory: McpServerFactory,
  logger: Logger,
  streams: { stdin: Readable; stdout: Writable } = { stdin: process.stdin, stdout: process.stdout },
  options: { drainMs?: number } = {},
): Promise<{ closed: Promise<void>; close(): Promise<void> }> {
  // The connection ends when the host closes our stdin (the stdio binding's signal to exit), but
  // only once every request read before that is answered, within a deadline (stdio-drain.ts):
  // the SDK's transport reads the drained stdin, whose EOF comes after the answers.
  const drain = drainingStdio(streams, { logger, ...(options.drainMs !== undefined ? { drainMs: options.drainMs } : {}) });
  const transport = new StdioServerTransport(drain.stdin, drain.stdout);
  let announced = false;
  const handle = serveStdio(
    (ctx) => {
      if (!announced) {
        announced = true;
        logger.log('info', 'mcp stdio connection', { principal: PRINCIPAL_STDIO, era: ctx.era });
      }
      return factory({ principal: PRINCIPAL_STDIO, era: ctx.era });
    },
    { transport, onerror: (error) => logger.log('warn', 'mcp stdio error', errorFields(error)) },
  );
  // Closed through the handle first, while the transport is still open: open subscriptions get
  // their closing answer; then the held stdin ends.
  const closed = drain.drained.then(async () => {
    await handle.close().catch(() => undefined);
    drain.release();
  });
  return {
    closed,
    close: async () => {
      await handle.close();
      drain.release();
    },
  };
}
