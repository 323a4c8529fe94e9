/**
 * MCP over stdio, for a host that launches `agentplane mcp --stdio` itself. The SDK's
 * `serveStdio` serves both revisions on one connection (a 2025-11-25 opening pins the connection
 * to that era; a 2026-07-28 client's requests each carry their envelope).
 *
 * No host is authenticated over stdio: whoever could launch the process already runs as this
 * user. The principal is `mcp:stdio`. Stdout is the protocol, so nothing else may ever be written
 * there: this module logs through the given logger, which the caller points at stderr.
 */
import type { Readable, Writable } from 'node:stream';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Logger } from '../../base/logger';
import { errorFields } from '../../base/logger';
import { PRINCIPAL_STDIO, type McpServerFactory } from './mcp-factory';

export async function serveMcpStdio(
  factory: McpServerFactory,
  logger: Logger,
  streams: { stdin: Readable; stdout: Writable } = { stdin: process.stdin, stdout: process.stdout },
): Promise<{ closed: Promise<void>; close(): Promise<void> }> {
  const transport = new StdioServerTransport(streams.stdin, streams.stdout);
  // The connection ends when the host closes our stdin (the stdio binding's signal to exit).
  const closed = new Promise<void>((resolve) => {
    streams.stdin.once('end', () => resolve());
    streams.stdin.once('close', () => resolve());
  });
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
  void closed.then(() => handle.close().catch(() => undefined));
  return {
    closed,
    close: () => handle.close(),
  };
}
