// A stdio MCP server (2025-11-25, hand-written JSON-RPC, no SDK) that answers the handshake and
// the listings properly and then misbehaves in one chosen way, so the plane's MCP client can be
// tested against a real process.
// Usage: node misbehaving-mcp-server.mjs MODE
// Modes:
//   garbage   prints lines that are not JSON-RPC on stdout, and answers nothing
//   json-noise  prints a JSON line that is no JSON-RPC message before each answer, and answers
//             nothing to tools/call
//   silent    answers the handshake and listings; a tools/call is read and never answered
//   die       answers the handshake and listings; a tools/call is read, then the process exits
//   polite    answers everything (the control case): `echo` echoes, `fail` answers isError
//             ("disk full": the tool ran and said it failed), `big` answers 100 KiB of text
//   old       answers the handshake with protocol version 2024-11-05 (one the plane does not speak)
// Every tools/call that reaches it is appended to the file named by COUNT_FILE, when set, so a
// test can tell "the request left" from "it never did"; every initialize's params go to INIT_FILE,
// when set, so a test can read what the client declared. Its own chatter goes to stderr, including
// the value of SECRET_TOKEN when set (as a careless server might), so a test can check the plane
// never shows it.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const mode = process.argv[2] ?? 'polite';
const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const tools = [
  { name: 'echo', description: 'echoes its message', inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] } },
  { name: 'fail', description: 'runs and reports a failure', inputSchema: { type: 'object' } },
  { name: 'big', description: 'answers 100 KiB of text', inputSchema: { type: 'object' } },
];

process.stderr.write(`misbehaving-mcp-server: mode ${mode}\n`);
if (process.env.SECRET_TOKEN) process.stderr.write(`misbehaving-mcp-server: using token ${process.env.SECRET_TOKEN}\n`);
if (mode === 'garbage') process.stdout.write('Server starting... this line is not JSON-RPC\n');

createInterface({ input: process.stdin }).on('line', (line) => {
  if (mode === 'garbage') {
    process.stdout.write(`not json: ${line.length} bytes received\n`);
    return;
  }
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const { id, method, params } = message;
  if (mode === 'json-noise') process.stdout.write(`${JSON.stringify({ log: `handling ${method}` })}\n`);
  if (mode === 'json-noise' && method === 'tools/call') return;
  if (id === undefined) return; // a notification
  switch (method) {
    case 'initialize':
      if (process.env.INIT_FILE) appendFileSync(process.env.INIT_FILE, `${JSON.stringify(params)}\n`);
      return send({ id, result: { protocolVersion: mode === 'old' ? '2024-11-05' : '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'misbehaving', version: '0.0.1' } } });
    case 'tools/list':
      return send({ id, result: { tools } });
    case 'ping':
      return send({ id, result: {} });
    case 'tools/call': {
      if (process.env.COUNT_FILE) appendFileSync(process.env.COUNT_FILE, `${params?.name}\n`);
      process.stderr.write(`misbehaving-mcp-server: tools/call ${params?.name} read\n`);
      if (mode === 'silent') return;
      if (mode === 'die') process.exit(3);
      if (params?.name === 'fail') return send({ id, result: { isError: true, content: [{ type: 'text', text: 'disk full' }] } });
      if (params?.name === 'big') return send({ id, result: { content: [{ type: 'text', text: 'x'.repeat(100 * 1024) }] } });
      return send({ id, result: { content: [{ type: 'text', text: String(params?.arguments?.message ?? '') }] } });
    }
    default:
      return send({ id, error: { code: -32601, message: `Method not found: ${method}` } });
  }
});
