// A scripted ACP agent for the tap's tests: newline-delimited JSON-RPC on stdio, answering just
// enough of ACP v1 to open sessions and run a prompt turn, plus the misbehaviours a tap must
// survive. Every byte it reads and writes is also copied to files (--in FILE, --out FILE), so a
// test can prove the tap forwarded both directions unchanged.
//
//   node acp-fake-agent.mjs [--in FILE] [--out FILE] [--mode normal|crash|flood|grandchild] [--flood N]
//
// crash: after answering initialize, writes to stderr and exits with status 3.
// flood: after answering initialize, writes N session/update notifications in one burst.
// permission: a prompt turn asks session/request_permission (id 200) and reports the outcome as
//   an agent_message_chunk `chose <optionId|cancelled>`; session/cancel ends the turn as cancelled.
// grandchild: starts `sleep 60` in its own process group, says its pid on stderr, and ignores
//   SIGTERM, so only the tap's SIGKILL of the whole group ends them.
// hostile: a prompt turn writes an agent_message_chunk `before`, then one hostile line (--hostile
//   deep: a session/update nested --depth levels deep; surrogate: one holding a lone surrogate,
//   valid JSON with no UTF-8 form), then a chunk `after`, then ends the turn.
import { appendFileSync } from 'node:fs';
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const flag = (name, fallback) => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : args[i + 1];
};
const inFile = flag('--in', null);
const outFile = flag('--out', null);
const mode = flag('--mode', 'normal');
const flood = Number(flag('--flood', '100'));
const hostile = flag('--hostile', 'deep');
const depth = Number(flag('--depth', '1000'));

function send(message) {
  const line = `${JSON.stringify(message)}\n`;
  if (outFile) appendFileSync(outFile, line);
  process.stdout.write(line);
}

if (mode === 'grandchild') {
  process.on('SIGTERM', () => undefined);
  setInterval(() => undefined, 1000);
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  process.stderr.write(`GRANDCHILD ${child.pid}\n`);
}

let sessions = 0;
let openPrompt = null;
let nextId = 100;
const waiting = new Map();
let buffer = '';

function handle(line) {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    process.stderr.write(`fake agent: not JSON (${line.length} chars)\n`);
    return;
  }
  if (message.method === undefined && message.id !== undefined) {
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
    return;
  }
  const { id, method, params } = message;
  if (method === 'initialize') {
    send({ jsonrpc: '2.0', id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [], agentInfo: { name: 'fake-agent', version: '0.0.1' } } });
    if (mode === 'crash') {
      process.stderr.write('fatal: boom\n');
      process.exit(3);
    }
    if (mode === 'flood') {
      let burst = '';
      for (let i = 0; i < flood; i++) burst += `${JSON.stringify({ jsonrpc: '2.0', method: 'session/update', params: { sessionId: 'none', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `chunk ${i}` } } } })}\n`;
      if (outFile) appendFileSync(outFile, burst);
      process.stdout.write(burst);
    }
    return;
  }
  if (method === 'session/new') {
    sessions += 1;
    send({ jsonrpc: '2.0', id, result: { sessionId: `sess-${sessions}` } });
    return;
  }
  if (method === 'session/prompt' && mode === 'permission') {
    const sessionId = params.sessionId;
    openPrompt = id;
    waiting.set(200, (answer) => {
      const outcome = answer.result?.outcome;
      const chose = outcome?.outcome === 'selected' ? outcome.optionId : 'cancelled';
      send({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `chose ${chose}` } } } });
      if (openPrompt === id) send({ jsonrpc: '2.0', id, result: { stopReason: 'end_turn' } });
      openPrompt = null;
    });
    send({
      jsonrpc: '2.0',
      id: 200,
      method: 'session/request_permission',
      params: { sessionId, toolCall: { toolCallId: 't1', title: 'Write file' }, options: [{ optionId: 'allow', name: 'Allow', kind: 'allow_once' }, { optionId: 'reject', name: 'Reject', kind: 'reject_once' }] },
    });
    return;
  }
  if (method === 'session/cancel') {
    if (openPrompt !== null) send({ jsonrpc: '2.0', id: openPrompt, result: { stopReason: 'cancelled' } });
    openPrompt = null;
    return;
  }
  if (method === 'session/prompt' && mode === 'hostile') {
    const sessionId = params.sessionId;
    const chunk = (text) => send({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } });
    chunk('before');
    const line =
      hostile === 'surrogate'
        ? `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":${JSON.stringify(sessionId)},"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"\\ud800"}}}}\n`
        : `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":${JSON.stringify(sessionId)},"update":${'['.repeat(depth)}${']'.repeat(depth)}}}\n`;
    if (outFile) appendFileSync(outFile, line);
    process.stdout.write(line);
    chunk('after');
    send({ jsonrpc: '2.0', id, result: { stopReason: 'end_turn' } });
    return;
  }
  if (method === 'session/prompt') {
    const sessionId = params.sessionId;
    send({ jsonrpc: '2.0', method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'reading' } } } });
    const readId = nextId++;
    waiting.set(readId, () => send({ jsonrpc: '2.0', id, result: { stopReason: 'end_turn' } }));
    send({ jsonrpc: '2.0', id: readId, method: 'fs/read_text_file', params: { sessionId, path: '/tmp/big.txt' } });
    return;
  }
  if (id !== undefined) send({ jsonrpc: '2.0', id, result: {} });
}

process.stdin.on('data', (chunk) => {
  if (inFile) appendFileSync(inFile, chunk);
  buffer += chunk.toString('utf8');
  let nl;
  while ((nl = buffer.indexOf('\n')) !== -1) {
    const line = buffer.slice(0, nl).replace(/\r$/, '');
    buffer = buffer.slice(nl + 1);
    if (line.trim()) handle(line);
  }
});
process.stdin.on('end', () => {
  if (mode !== 'grandchild') process.exit(0);
});
