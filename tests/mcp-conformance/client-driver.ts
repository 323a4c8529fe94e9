/**
 * The plane's MCP client (protocols/mcp/client/mcp-client-pool.ts) as the conformance suite's
 * client under test: `conformance client --command "node --import tsx client-driver.ts"`
 * appends the scenario server's URL as the last argument and names the scenario in
 * MCP_CONFORMANCE_SCENARIO (and, for some, the calls to make in MCP_CONFORMANCE_CONTEXT). The
 * driver declares that URL as a server in a temporary data dir, connects through the pool
 * (handshake, then tools, prompts and resources listed) and calls tools through the pool's
 * callTool: the calls the context names, else every tool listed, with arguments made from its
 * input schema. For the JSON Schema preservation scenario it echoes the focal tool's inputSchema
 * as the pool's view holds it, which is what that scenario checks. A call that fails is said on
 * stderr; the suite judges what it saw on the wire.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMcpClientPool } from '../../src-main/protocols/mcp/client/mcp-client-pool';
import { writeMcpServersFile } from '../../src-main/protocols/mcp/client/mcp-servers-file';
import { silentLogger } from '../../src-main/base/logger';

const url = process.argv.at(-1) ?? '';
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '(none)';

/** Arguments a tool's schema asks for: its required properties, each with a plain value. */
function argumentsFor(name: string, schema: Record<string, unknown>): Record<string, unknown> {
  if (name === 'add_numbers') return { a: 2, b: 3 };
  const properties = (schema.properties ?? {}) as Record<string, { type?: string }>;
  const required = (schema.required ?? []) as string[];
  const values: Record<string, unknown> = {};
  for (const key of required) {
    const type = properties[key]?.type;
    values[key] = type === 'number' || type === 'integer' ? 1 : type === 'boolean' ? true : type === 'object' ? {} : type === 'array' ? [] : 'test';
  }
  return values;
}

const dataDir = mkdtempSync(join(tmpdir(), 'ap-mcp-conformance-'));
const pool = createMcpClientPool(dataDir, silentLogger, { deadlineMs: 10_000, clientVersion: '0.0.0-conformance' });
let exitCode = 0;
try {
  writeMcpServersFile(dataDir, { servers: { scenario: { transport: 'http', url, headers: {} } } });
  const view = await pool.connect('scenario');
  process.stderr.write(`client-driver: ${scenario}: ${view.state}, MCP ${view.negotiatedVersion ?? '-'}${view.error ? `, ${view.error}` : ''}\n`);
  if (view.state !== 'connected') exitCode = 1;
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as { toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }> };
  const tools = view.tools ?? [];
  const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool');
  const calls =
    context.toolCalls ??
    (focal && tools.some((t) => t.name === 'json_schema_echo')
      ? [{ name: 'json_schema_echo', arguments: { schema: focal.inputSchema } }]
      : tools.map((t) => ({ name: t.name, arguments: argumentsFor(t.name, t.inputSchema) })));
  for (const call of calls) {
    try {
      await pool.callTool('scenario', call.name, call.arguments);
      process.stderr.write(`client-driver: called ${call.name}\n`);
    } catch (error) {
      process.stderr.write(`client-driver: ${call.name} failed: ${(error as Error).message}\n`);
    }
  }
} finally {
  await pool.close();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(exitCode);
