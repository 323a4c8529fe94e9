// A peer process that takes MCPv2 calls and then misbehaves in one chosen way, so the plane's
// disposition of a failed hop can be tested against a real socket and a real process.
// Usage: node misbehaving-peer.mjs MODE   (prints `PORT=<n>` once listening on 127.0.0.1)
// Modes:
//   stall-headers   read the request, never answer (the caller's headers timeout fires)
//   stall-body      send 200 and half a JSON body, then stall (the body timeout fires)
//   reset-mid-body  send 200 and half a JSON body, then reset the connection
//   bad-gateway     answer 502 with an HTML page, no JSON-RPC answer
//   not-jsonrpc     answer 200 with JSON that is no JSON-RPC response
//   rate-limited    answer 429 with the protocol's RateLimited error (refused before running)
//   skill-failed    answer 200 with a SkillExecutionError for the call (it ran and failed)
//   bad-params      answer 200 with an InvalidParams error (refused before running)
// Every request that reaches it is counted in the file named by COUNT_FILE, when set, so a
// test can tell "the request left" from "it never did".
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';

const mode = process.argv[2];
const answer = (id, error) => JSON.stringify([{ jsonrpc: '2.0', id, error }]);

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (process.env.COUNT_FILE) appendFileSync(process.env.COUNT_FILE, `${req.method} ${req.url}\n`);
    let id = 1;
    try {
      id = JSON.parse(body)[0]?.id ?? 1;
    } catch {
      // Not a batch: answer for id 1.
    }
    switch (mode) {
      case 'stall-headers':
        return; // never answer
      case 'stall-body':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.write('[{"jsonrpc":"2.0","id":1,"res');
      case 'reset-mid-body':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('[{"jsonrpc":"2.0","id":1,"res');
        return setTimeout(() => req.socket.resetAndDestroy(), 50);
      case 'bad-gateway':
        res.writeHead(502, { 'content-type': 'text/html' });
        return res.end('<html><body>502 Bad Gateway</body></html>');
      case 'not-jsonrpc':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"hello":"world"}');
      case 'rate-limited':
        res.writeHead(429, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32005, message: 'rate limited' } }));
      case 'skill-failed':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(answer(id, { code: -32003, message: 'the skill failed halfway' }));
      case 'bad-params':
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(answer(id, { code: -32602, message: 'invalid params: query is required' }));
      default:
        res.writeHead(500);
        return res.end(`unknown mode ${mode}`);
    }
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT=${server.address().port}\n`));
