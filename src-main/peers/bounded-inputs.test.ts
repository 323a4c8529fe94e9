/**
 * Bounded inputs (docs/SECURITY.md), against real peers over HTTP (fetch to a loopback port):
 *
 * - size caps on skill arguments, checked before anything is journaled: a refused call costs
 *   the journal nothing (it used to cost it the call's whole size);
 * - large but allowed inputs (and translate_history's large answers) are journaled as digest
 *   and size, never as text, and still work: the skill gets the text, LLM mode remembers it;
 * - JSON nesting depth capped with -32602, and the peer keeps serving after a 100,000-deep body;
 * - one request budget per client IP across all its sessions, with per-session limits kept.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { translateHistory } from '../../src-shared/protocol/history';
import { Mcpv2Error } from '../../src-shared/protocol/mcpv2';
import { silentLogger } from '../base/logger';
import { createLocalProvider } from '../providers/local-provider';
import { settingsFromEnv, startPeer, type PeerSettings, type StartedPeer } from '../plane/peer-host';
import { PeerRegistry } from './peer-registry';
import { mintSession } from './session-token';

const SECRET = 'bounded-inputs-secret';
const dirs: string[] = [];
const peers: StartedPeer[] = [];

async function launch(id: string, settings: Partial<PeerSettings> = {}, llmMode = false): Promise<StartedPeer> {
  const dataDir = mkdtempSync(join(tmpdir(), `agentplane-${id}-`));
  dirs.push(dataDir);
  const skills = join(dataDir, 'skills.json');
  writeFileSync(
    skills,
    JSON.stringify({
      skills: [{ name: 'note', description: 'takes a note', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, response: { noted: true } }],
    }),
  );
  const registry = new PeerRegistry(dataDir);
  const record = registry.create({ id, port: 0, publicIp: '127.0.0.1', secret: SECRET, llmMode, customSkills: skills });
  const peer = await startPeer({ dataDir, record, settings: { ...settingsFromEnv({}), ...settings }, logger: silentLogger, providers: new Map([['local', createLocalProvider()]]) });
  peers.push(peer);
  return peer;
}

afterAll(async () => {
  for (const peer of peers) await peer.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const session = () => mintSession({ secret: SECRET, clientIp: '127.0.0.1', ttlSeconds: 3600 }).sessionId;
const call = (id: number, name: string, args: unknown, context?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args }, ...(context ? { context } : {}) });

interface Slot {
  id: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

async function post(peer: StartedPeer, body: string | unknown, token = session(), path = '/mcpv2'): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`http://127.0.0.1:${peer.port}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as unknown) : null };
}

async function one(peer: StartedPeer, slot: unknown): Promise<Slot> {
  const { json } = await post(peer, [slot]);
  return (json as Slot[])[0]!;
}

/** Records appended since `seq`, with the total of their bodies' bytes. */
async function journaledSince(peer: StartedPeer, seq: number): Promise<{ bytes: number; texts: string[] }> {
  const records = await peer.journal.readRange(seq + 1, null, 100_000);
  return { bytes: records.reduce((n, r) => n + Buffer.byteLength(r.bodyText), 0), texts: records.map((r) => r.bodyText) };
}

function journalFileBytes(dataDir: string): number {
  let total = 0;
  for (const name of ['journal.sqlite', 'journal.sqlite-wal']) {
    try {
      total += statSync(join(dataDir, name)).size;
    } catch {
      // no WAL yet
    }
  }
  return total;
}

const MB = 1024 * 1024;
/** OpenAI-format messages of about `total` bytes, in 1 MiB messages. */
function bigHistory(total: number, marker: string): Array<{ role: string; content: string }> {
  const messages: Array<{ role: string; content: string }> = [];
  for (let left = total; left > 0; left -= MB) messages.push({ role: messages.length % 2 ? 'assistant' : 'user', content: `${marker} ${'x'.repeat(Math.min(MB, left) - marker.length - 1)}` });
  return messages;
}

describe('size caps, checked before anything is journaled', () => {
  let peer: StartedPeer;
  let dataDir: string;
  beforeAll(async () => {
    peer = await launch('caps', { ratePerSecond: 100_000 });
    dataDir = dirs.at(-1)!;
  });

  it('refuses an 18 MB translate_history with -32602 naming the cap; the journal grows by almost nothing', async () => {
    const head = (await peer.journal.head()).seq;
    const files = journalFileBytes(dataDir);
    const answer = await one(peer, call(1, 'translate_history', { from: 'openai', to: 'claude', messages: bigHistory(18 * MB, 'HUGE-HISTORY') }));
    expect(answer.error).toMatchObject({ code: Mcpv2Error.InvalidParams, message: expect.stringMatching(/messages is 18\.\d MB; the cap is 1 MB/) });
    expect((await journaledSince(peer, head)).bytes).toBeLessThan(100_000);
    expect(journalFileBytes(dataDir) - files).toBeLessThan(100_000);
  });

  it('refuses an oversized ask, custom-skill call or stray argument the same way', async () => {
    const head = (await peer.journal.head()).seq;
    const big = 'y'.repeat(2 * MB);
    const half = 'h'.repeat(600_000);
    const [ask, custom, split, stray] = (
      await post(peer, [call(1, 'ask', { query: big }), call(2, 'note', { text: big }), call(3, 'note', { text: half, more: half }), call(4, 'ping', { junk: big })])
    ).json as Slot[];
    expect(ask!.error).toMatchObject({ code: Mcpv2Error.InvalidParams, message: expect.stringMatching(/query is 2\.\d MB; the cap is 1 MB/) });
    expect(custom!.error).toMatchObject({ code: Mcpv2Error.InvalidParams, message: expect.stringMatching(/text is 2\.\d MB; the cap is 1 MB/) });
    // No one argument is over the cap, all of them together are.
    expect(split!.error).toMatchObject({ code: Mcpv2Error.InvalidParams, message: expect.stringMatching(/arguments is 1\.2 MB; the cap is 1 MB/) });
    expect(stray!.error).toMatchObject({ code: Mcpv2Error.InvalidParams, message: expect.stringMatching(/junk is 2\.\d MB; the cap is 1 MB/) });
    expect((await journaledSince(peer, head)).bytes).toBeLessThan(100_000);
  });
});

describe('large but allowed inputs are journaled as digest and size', () => {
  let peer: StartedPeer;
  beforeAll(async () => {
    peer = await launch('large', { ratePerSecond: 100_000 }, true);
  });

  it('a 200 KB ask prompt is answered, and the journal holds its digest and size, not its text', async () => {
    const marker = 'ASK-MARKER-7f3a';
    const query = `My name is Ada and this is a long document. ${`${marker} `.repeat(200 * 1024 / (marker.length + 1))}`;
    const head = (await peer.journal.head()).seq;
    const first = await one(peer, call(1, 'ask', { query }, { conversation: 'doc' }));
    expect(first.result).toMatchObject({ response: expect.stringContaining('[local model]'), turn: 1 });
    const journaled = await journaledSince(peer, head);
    expect(journaled.texts.some((t) => t.includes(marker))).toBe(false);
    expect(journaled.bytes).toBeLessThan(50_000);
    const admitted = journaled.texts.map((t) => JSON.parse(t) as { input?: unknown }).find((b) => b.input !== undefined);
    expect(JSON.stringify(admitted)).toMatch(/"sha256":"[0-9a-f]{64}"/);
    expect(JSON.stringify(admitted)).toContain(`"bytes":${Buffer.byteLength(JSON.stringify(query))}`);
    // LLM mode still remembers the large turn: the next one is answered with it in context.
    const second = await one(peer, call(2, 'ask', { query: 'What is my name?' }, { conversation: 'doc' }));
    expect(second.result).toMatchObject({ turn: 2, response: expect.stringContaining('earlier: My name is Ada and this is a') });
  });

  it('LLM mode carries only the most recent turns that fit in one argument\'s cap', async () => {
    const long = (words: string) => `${words} ${'filler '.repeat(600_000 / 7)}`;
    await one(peer, call(1, 'ask', { query: long('First long turn about apples') }, { conversation: 'capped' }));
    await one(peer, call(2, 'ask', { query: long('Second long turn about pears') }, { conversation: 'capped' }));
    const third = await one(peer, call(3, 'ask', { query: 'Which fruit?' }, { conversation: 'capped' }));
    // Turn 3 of the conversation, but the first turn (600 KB) no longer fits beside the second.
    expect(third.result).toMatchObject({ turn: 3, response: expect.stringContaining('(turn 2; earlier: Second long turn about pears') });
  });

  it('a 200 KB translate_history is answered in full, with neither the history nor its translation in the journal', async () => {
    const marker = 'HISTORY-MARKER-c41e';
    const messages = [
      { role: 'user', content: `${marker} ${'a'.repeat(100 * 1024)}` },
      { role: 'assistant', content: `${marker} ${'b'.repeat(100 * 1024)}` },
    ];
    const head = (await peer.journal.head()).seq;
    const answer = await one(peer, call(1, 'translate_history', { from: 'openai', to: 'gemini', messages }));
    expect(answer.result).toEqual({ from: 'openai', to: 'gemini', messages: translateHistory({ from: 'openai', to: 'gemini', messages }) });
    const journaled = await journaledSince(peer, head);
    expect(journaled.texts.some((t) => t.includes(marker))).toBe(false);
    expect(journaled.bytes).toBeLessThan(50_000);
  });

  it('a 200 KB custom-skill argument reaches the skill, and only its digest reaches the journal', async () => {
    const marker = 'CUSTOM-MARKER-91bd';
    const head = (await peer.journal.head()).seq;
    const answer = await one(peer, call(1, 'note', { text: `${marker} ${'z'.repeat(200 * 1024)}` }));
    expect(answer.result).toEqual({ noted: true });
    const journaled = await journaledSince(peer, head);
    expect(journaled.texts.some((t) => t.includes(marker))).toBe(false);
    expect(journaled.bytes).toBeLessThan(50_000);
  });
});

describe('JSON nesting depth', () => {
  let peer: StartedPeer;
  beforeAll(async () => {
    peer = await launch('deep', { ratePerSecond: 100_000 });
  });
  const DEPTH = 100_000;
  const deepArrays = '['.repeat(DEPTH) + ']'.repeat(DEPTH);
  const deepObject = '{"a":'.repeat(DEPTH) + '1' + '}'.repeat(DEPTH);

  it('refuses deeply nested arguments with -32602 and keeps serving', async () => {
    const body = `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"note","arguments":{"text":"x","deep":${deepArrays}}}}]`;
    const answer = await post(peer, body);
    expect(answer.status).toBe(200);
    expect((answer.json as Slot[])[0]!.error).toMatchObject({ code: Mcpv2Error.InvalidParams, message: expect.stringMatching(/nest.*64/) });
    expect(((await post(peer, [call(2, 'ping', {})])).json as Slot[])[0]!.result).toMatchObject({ pong: true });
  });

  it('a body that is itself 100,000 levels deep (batch element, single object) is answered, not a stack overflow', async () => {
    const batch = await post(peer, `[${deepArrays}, ${JSON.stringify(call(2, 'ping', {}))}]`);
    expect(batch.status).toBe(200);
    const [deep, ping] = batch.json as Slot[];
    expect(deep!.error?.code).toBe(Mcpv2Error.InvalidParams);
    expect(ping!.result).toMatchObject({ pong: true });
    const single = await post(peer, deepObject);
    expect(single.status).toBe(200);
    expect((single.json as Slot).error?.code).toBe(Mcpv2Error.InvalidParams);
    const proto = await post(peer, '{"a":'.repeat(DEPTH) + '{"__proto__":1}' + '}'.repeat(DEPTH));
    expect(proto.status).toBeLessThan(500);
    expect(((await post(peer, [call(3, 'ping', {})])).json as Slot[])[0]!.result).toMatchObject({ pong: true });
  });

  it('the provider-native endpoint refuses deep messages with -32602 too', async () => {
    const answer = await post(peer, `{"messages":[{"role":"user","content":${deepArrays}}]}`, session(), '/mcpv2/ai/openai');
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({ error: { code: Mcpv2Error.InvalidParams, message: expect.stringMatching(/nest.*64/) } });
  });

  it('nesting within the cap is served', async () => {
    const nested = '{"a":'.repeat(40) + '1' + '}'.repeat(40);
    const answer = await post(peer, `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"note","arguments":{"text":"x","deep":${nested}}}}]`);
    expect((answer.json as Slot[])[0]!.result).toEqual({ noted: true });
  });
});

describe('one request budget per client IP', () => {
  it('twenty fresh sessions from one address together get no more than the address budget', async () => {
    const peer = await launch('perip'); // the protocol's defaults (docs/PEER-PROTOCOL.md): 200/s a session, 20 sessions/s an address
    const tokens: string[] = [];
    for (let i = 0; i < 20; i++) {
      const response = await fetch(`http://127.0.0.1:${peer.port}/mcpv2/session`);
      expect(response.status).toBe(200);
      tokens.push(((await response.json()) as { sessionId: string }).sessionId);
    }
    const list = (n: number) => Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: n * 100 + i, method: 'tools/list' }));
    const started = Date.now();
    const answers = await Promise.all(tokens.flatMap((token, s) => [post(peer, list(2 * s), token), post(peer, list(2 * s + 1), token)]));
    const elapsed = (Date.now() - started) / 1000;
    let served = 0;
    let limited = 0;
    for (const { status, json } of answers) {
      if (status === 429) {
        expect(json).toMatchObject({ error: { code: Mcpv2Error.RateLimited } });
        limited += 100;
        continue;
      }
      for (const slot of json as Slot[]) {
        if (slot.result) served++;
        else if (slot.error?.code === Mcpv2Error.RateLimited) limited++;
      }
    }
    expect(served + limited).toBe(4000);
    // The address budget: twice one session's rate (400/s, a burst of 400), for all of them.
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThanOrEqual(400 + Math.ceil(400 * elapsed) + 1);
    expect(limited).toBeGreaterThanOrEqual(4000 - 400 - Math.ceil(400 * elapsed) - 1);
  });

  it('one session\'s burst, refused by its own limit, does not spend its address\'s budget for the others', async () => {
    const peer = await launch('sibling', { ratePerSecond: 5 }); // 5/s a session, so 10/s the address
    const greedy = session();
    const started = Date.now();
    const burst = await Promise.all(Array.from({ length: 25 }, (_, i) => post(peer, [{ jsonrpc: '2.0', id: i, method: 'tools/list' }], greedy)));
    // The bucket's burst, plus what it refilled (5/s) while the 25 were being answered: on a
    // loaded machine the burst can take longer than the 200 ms one more token needs.
    const refilled = Math.floor(5 * ((Date.now() - started) / 1000));
    expect(burst.filter((a) => a.status === 200).length).toBeLessThanOrEqual(6 + refilled);
    const other = await post(peer, [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }]);
    expect(other.status).toBe(200);
  });

  it('a single session is still held to its own rate inside the address budget', async () => {
    const peer = await launch('persession');
    const token = session();
    const list = (n: number) => Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: n * 100 + i, method: 'tools/list' }));
    const started = Date.now();
    let served = 0;
    for (let n = 0; n < 3; n++) {
      const { status, json } = await post(peer, list(n), token);
      if (status === 200) served += (json as Slot[]).filter((s) => s.result).length;
    }
    const elapsed = (Date.now() - started) / 1000;
    expect(served).toBeGreaterThanOrEqual(200);
    expect(served).toBeLessThanOrEqual(200 + Math.ceil(200 * elapsed) + 1);
  });
});
