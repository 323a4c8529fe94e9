// The tap benchmark's agent (bench/acp-tap.bench.ts): newline-delimited JSON-RPC on stdio,
// answering every request at once with a response of about 1 KB, so the only work on the
// wire is the transport's. It answers just enough of ACP v1 to open a session (initialize,
// session/new with a sessionId); any other request gets `{ stopReason: 'end_turn' }` padded to
// ~1 KB in `_meta`. Notifications and responses are ignored. It exits when stdin ends (nothing else
// keeps it alive).
//
//   node acp-echo-agent.mjs [--bytes N]   (N: the size of an answer line, default 1024)
const args = process.argv.slice(2);
const bytesAt = args.indexOf('--bytes');
const LINE_BYTES = bytesAt === -1 ? 1024 : Number(args[bytesAt + 1]);

/** `result` padded so the whole line, newline included, is LINE_BYTES long (for ids up to 9 digits). */
function paddedAnswer(result) {
  const bare = JSON.stringify({ jsonrpc: '2.0', id: 999_999_999, result: { ...result, _meta: { pad: '' } } }).length + 1;
  return { ...result, _meta: { pad: 'x'.repeat(Math.max(0, LINE_BYTES - bare)) } };
}
const ANSWER = paddedAnswer({ stopReason: 'end_turn' });

let sessions = 0;

function answer(message) {
  const { id, method } = message;
  if (method === 'initialize') return { protocolVersion: 1, agentCapabilities: {}, authMethods: [], agentInfo: { name: 'echo-agent', version: '0.0.1' } };
  if (method === 'session/new') {
    sessions += 1;
    return { sessionId: `echo-${sessions}` };
  }
  return id === undefined ? null : ANSWER;
}

let buffered = '';
let out = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  buffered += chunk;
  let start = 0;
  for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n', start)) {
    const line = buffered.slice(start, nl);
    start = nl + 1;
    if (line.trim() === '') continue;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      process.stderr.write(`echo agent: not JSON (${line.length} chars)\n`);
      continue;
    }
    if (typeof message.method !== 'string' || message.id === undefined) continue;
    const result = answer(message);
    if (result !== null) out += `${JSON.stringify({ jsonrpc: '2.0', id: message.id, result })}\n`;
  }
  buffered = buffered.slice(start);
  // Every answer this chunk produced goes out in one write, before the next chunk is read.
  if (out !== '') {
    process.stdout.write(out);
    out = '';
  }
});
