/**
 * The A2A client reading a SubscribeToTask stream byte by byte as a far side sends it: a plain
 * node:http server on 127.0.0.1 (no SDK, so the test decides where each chunk ends) streams a
 * status event whose text is multi-byte characters, written in two chunks cut inside a
 * character. Our client reads it through netguard with the origin allowed, as the plane does.
 * The event is bounded by answerMaxBytes in bytes (net/sse.ts): a character split between two
 * chunks is one character, and an event of few characters but many bytes is over the cap.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { useTempFolders } from '../../../../tests/helpers/temp-folders';
import { createNetguard, staticAllowList, type Netguard } from '../../../net/netguard';
import { EffectFailure } from '../../../runtime/run-signals';
import { createA2aClient } from './a2a-client';

const tempDir = useTempFolders('agentplane-a2a-sse-');
const servers: Server[] = [];
const guards: Netguard[] = [];
afterEach(async () => {
  for (const g of guards.splice(0)) await g.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    s.close();
    await once(s, 'close');
  }
});

const at = { runId: 'run-00000000000000000000', step: 1 };
const TASK = 'task-1';

/**
 * A remote whose SubscribeToTask answers one terminal status event carrying `text`, its bytes
 * written in two chunks cut where `cutInside` says; `chunks` records what was written.
 */
async function remote(text: string, cutInside: (event: Buffer) => number) {
  const chunks: Buffer[] = [];
  const server = createServer({ noDelay: true }, (req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ name: 'bytes', capabilities: { streaming: true }, supportedInterfaces: [{ url: `${origin}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] }));
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (piece: string) => (body += piece));
    req.on('end', () => {
      const rpc = JSON.parse(body) as { id: string; method: string };
      const answer = (result: unknown) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result }));
      };
      if (rpc.method === 'SendMessage') return answer({ task: { id: TASK, status: { state: 'TASK_STATE_WORKING' } } });
      if (rpc.method === 'GetTask') return answer({ id: TASK, status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ artifactId: 'a', parts: [{ text: 'done' }] }] });
      if (rpc.method !== 'SubscribeToTask') return answer({});
      const status = { taskId: TASK, status: { state: 'TASK_STATE_COMPLETED', message: { role: 'ROLE_AGENT', parts: [{ text }] } } };
      const event = Buffer.from(`data: ${JSON.stringify({ jsonrpc: '2.0', id: rpc.id, result: { statusUpdate: status } })}\n\n`, 'utf8');
      const cut = cutInside(event);
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      chunks.push(event.subarray(0, cut));
      res.write(event.subarray(0, cut));
      // Apart in time, so the client reads them as two chunks.
      setTimeout(() => {
        chunks.push(event.subarray(cut));
        res.end(event.subarray(cut));
      }, 50);
    });
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, cardUrl: `${origin}/.well-known/agent-card.json`, chunks };
}

function client(origin: string, answerMaxBytes: number) {
  const netguard = createNetguard({ allow: staticAllowList([origin]) });
  guards.push(netguard);
  return createA2aClient({ dataDir: tempDir(), dispatcher: netguard.dispatcher, poll: { initialMs: 20, maxMs: 100 }, answerMaxBytes });
}

/** The byte offset one byte into the first euro sign (E2 82 AC) of the event. */
const insideEuro = (event: Buffer) => event.indexOf(Buffer.from('€', 'utf8')) + 1;

describe('a SubscribeToTask event whose characters are split between chunks', () => {
  const text = '€'.repeat(200);

  it('is read whole and followed to the end when its bytes are within answerMaxBytes', async () => {
    const far = await remote(text, insideEuro);
    const a2a = client(far.origin, 4096);
    const answer = await a2a.call({ card: far.cardUrl, skill: 'x', message: 'go' }, at, new AbortController().signal);
    expect(answer.value).toBe('done');
    // The stream really was cut inside a character: the first chunk ends with a euro sign's lead bytes.
    expect(far.chunks).toHaveLength(2);
    expect(far.chunks[0]!.at(-1)).toBe(0xe2);
  });

  it('is refused when its bytes exceed answerMaxBytes though its characters do not: the cap counts bytes', async () => {
    const far = await remote(text, insideEuro);
    // 200 euro signs: about 300 characters of event, about 700 bytes.
    const cap = 500;
    const a2a = client(far.origin, cap);
    const failure = await a2a.call({ card: far.cardUrl, skill: 'x', message: 'go' }, at, new AbortController().signal).catch((error: unknown) => error);
    const event = Buffer.concat(far.chunks);
    expect(event.toString('utf8').length).toBeLessThan(cap);
    expect(event.length).toBeGreaterThan(cap);
    expect(failure).toBeInstanceOf(EffectFailure);
    expect((failure as Error).message).toContain(`one SubscribeToTask event is larger than ${cap} bytes`);
  });
});
