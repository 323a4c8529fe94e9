/**
 * The tap's pure parts, line by line: framing (chunks, CRLF, over-long lines, a last line with
 * no newline), what the journaled copy of a message keeps (secrets redacted, bulk digested),
 * the bounded queue (a gap, never a wait), and which run each message lands in.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LineFramer, type FramedLine } from './wire-lines';
import { journaledMessage, redactedCommand, REDACTED } from './message-caps';
import { ObservationQueue } from './observation-queue';
import { SessionRuns, type RunWrite, type WireEvent } from './session-runs';

function frame(chunks: string[], max = 1024): FramedLine[] {
  const out: FramedLine[] = [];
  const framer = new LineFramer(max, (l) => out.push(l));
  for (const c of chunks) framer.push(Buffer.from(c));
  framer.end();
  return out;
}

describe('LineFramer', () => {
  it('joins partial chunks, strips LF and CRLF, and reports a last line without a newline', () => {
    const lines = frame(['{"a"', ':1}\r', '\n{"b":2}\n{"c"', ':3}']);
    expect(lines.map((l) => (l.kind === 'line' ? l.bytes.toString() : l.kind))).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });

  it("with shareChunks, reports a line read whole as a view of its chunk, and copies the start of a line that waits for the next chunk", () => {
    const out: FramedLine[] = [];
    const framer = new LineFramer(1024, (l) => out.push(l), true);
    // A chunk with memory of its own, as a pipe's read is (Buffer.from(string) would share Node's pool).
    const text = '{"a":1}\n{"b":2}\r\n{"c"';
    const first = Buffer.alloc(text.length);
    first.write(text);
    framer.push(first);
    const whole = out.map((l) => (l.kind === 'line' ? l.bytes : Buffer.alloc(0)));
    expect(whole.map(String)).toEqual(['{"a":1}', '{"b":2}']);
    // No copy of what was read whole: the lines share the chunk's memory.
    for (const bytes of whole) expect(bytes.buffer).toBe(first.buffer);
    // The waiting start was copied when it was read: a change to the chunk afterwards (a reader
    // reusing its buffer) does not reach it, and the chunk is not kept for it.
    first.fill(0x20);
    framer.push(Buffer.from(':3}\n'));
    const last = out[2];
    expect(last?.kind === 'line' ? String(last.bytes) : last).toBe('{"c":3}');
    expect(last?.kind === 'line' ? last.bytes.buffer : null).not.toBe(first.buffer);
  });

  it('without shareChunks, copies every line: a consumer may hold it for long without holding its chunk', () => {
    const out: FramedLine[] = [];
    const framer = new LineFramer(1024, (l) => out.push(l));
    const chunk = Buffer.alloc(16);
    chunk.write('{"a":1}\n{"b":2}\n');
    framer.push(chunk);
    expect(out.map((l) => (l.kind === 'line' ? String(l.bytes) : l.kind))).toEqual(['{"a":1}', '{"b":2}']);
    for (const line of out) expect(line.kind === 'line' ? line.bytes.buffer : null).not.toBe(chunk.buffer);
  });

  it('hashes an over-long line instead of buffering it', () => {
    const long = 'x'.repeat(5000);
    const [line] = frame([long.slice(0, 100), long.slice(100), '\n'], 1000);
    expect(line).toMatchObject({ kind: 'overlong', size: 5000, digest: createHash('sha256').update(long).digest('hex') });
  });
});

describe('journaledMessage', () => {
  it('redacts environment values, MCP headers and authentication payloads', () => {
    const newSession = journaledMessage(
      { jsonrpc: '2.0', id: 1, method: 'session/new', params: { cwd: '/', mcpServers: [{ name: 'm', env: [{ name: 'K', value: 'v' }], headers: [{ name: 'Authorization', value: 'Bearer t' }] }] } },
      { kind: 'request', method: 'session/new' },
    );
    expect(JSON.stringify(newSession)).not.toMatch(/"v"|Bearer/);
    expect(newSession).toMatchObject({ params: { mcpServers: [{ env: [{ name: 'K', value: '[redacted: env K]' }], headers: [{ name: 'Authorization', value: '[redacted: header Authorization]' }] }] } });
    const terminal = journaledMessage({ id: 2, method: 'terminal/create', params: { command: 'ls', env: [{ name: 'TOKEN', value: 'abc' }] } }, { kind: 'request', method: 'terminal/create' });
    expect(terminal).toMatchObject({ params: { command: 'ls', env: [{ name: 'TOKEN', value: '[redacted: env TOKEN]' }] } });
    const auth = journaledMessage({ id: 3, method: 'authenticate', params: { methodId: 'key', apiKey: 'sk-1' } }, { kind: 'request', method: 'authenticate' });
    expect(auth).toMatchObject({ params: { methodId: 'key', apiKey: REDACTED } });
  });

  it('digests media always, file bodies and terminal output past 16 KB, any string past 64 KB', () => {
    const big = 'y'.repeat(20_000);
    expect(journaledMessage({ id: 1, result: { content: big } }, { kind: 'response', method: 'fs/read_text_file' })).toMatchObject({ result: { content: { $size: 20_000 } } });
    expect(journaledMessage({ id: 1, result: { output: big } }, { kind: 'response', method: 'terminal/output' })).toMatchObject({ result: { output: { $size: 20_000 } } });
    expect(journaledMessage({ id: 1, method: 'fs/write_text_file', params: { path: '/a', content: big } }, { kind: 'request', method: 'fs/write_text_file' })).toMatchObject({ params: { content: { $omitted: expect.any(String) } } });
    // A short file body and an unrelated 20 KB string stay as they are.
    expect(journaledMessage({ id: 1, result: { content: 'short' } }, { kind: 'response', method: 'fs/read_text_file' })).toEqual({ id: 1, result: { content: 'short' } });
    expect(journaledMessage({ method: 'x', params: { s: big } }, { kind: 'notification', method: 'x' })).toEqual({ method: 'x', params: { s: big } });
    expect(journaledMessage({ method: 'x', params: { s: 'z'.repeat(70_000) } }, { kind: 'notification', method: 'x' })).toMatchObject({ params: { s: { $size: 70_000 } } });
    expect(journaledMessage({ params: { prompt: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] } }, { kind: 'request', method: 'session/prompt' })).toMatchObject({
      params: { prompt: [{ type: 'image', mimeType: 'image/png', data: { $size: 4, $omitted: 'image data' } }] },
    });
  });

  it('redacts secret-looking flag values in the agent command', () => {
    expect(redactedCommand(['agent', '--api-key', 'k', '--token=t', '--model', 'm', '-v'])).toEqual([
      'agent',
      '--api-key',
      '[redacted: value of --api-key]',
      '--token=[redacted: value of --token]',
      '--model',
      'm',
      '-v',
    ]);
  });

  // Each form an editor or agent puts a credential in, with the marker that names what went.
  const OPENAI = 'sk-proj-Q3x9TzLm2Vb7Nc4Rk8Wp1Ys6';
  const commandForms: Array<[string, string[], string[]]> = [
    ['an env assignment named like a secret', ['env', 'OPENAI_API_KEY=plainvalue', 'agent'], ['env', 'OPENAI_API_KEY=[redacted: value of OPENAI_API_KEY]', 'agent']],
    ['an env assignment holding a key-shaped value', ['env', 'MODEL_CREDS_X=' + OPENAI, 'agent'], ['env', 'MODEL_CREDS_X=[redacted: OpenAI-style key]', 'agent']],
    ['an env assignment named like a credential', ['env', 'GCP_CREDENTIALS=/x/y.json', 'agent'], ['env', 'GCP_CREDENTIALS=[redacted: value of GCP_CREDENTIALS]', 'agent']],
    ['--bearer V', ['agent', '--bearer', 'abc'], ['agent', '--bearer', '[redacted: value of --bearer]']],
    ['--password=V', ['agent', '--password=hunter2'], ['agent', '--password=[redacted: value of --password]']],
    ['--auth-header V', ['agent', '--auth-header', 'x'], ['agent', '--auth-header', '[redacted: value of --auth-header]']],
    ['-k V (a short flag whose value is key-shaped)', ['agent', '-k', OPENAI], ['agent', '-k', '[redacted: OpenAI-style key]']],
    ['-t V (a short flag whose name says token)', ['agent', '-token', 'abc'], ['agent', '-token', '[redacted: value of -token]']],
    ['--model=V holding a key-shaped value', ['agent', `--model=${OPENAI}`], ['agent', '--model=[redacted: OpenAI-style key]']],
    ['a bare key argument', ['agent', OPENAI], ['agent', '[redacted: OpenAI-style key]']],
    ['a bare Anthropic key', ['agent', 'sk-ant-api03-AbCdEfGhIjKlMnOpQrSt'], ['agent', '[redacted: Anthropic key]']],
    ['a bare GitHub token', ['agent', 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'], ['agent', '[redacted: GitHub token]']],
    ['a bare AWS access key id', ['agent', 'AKIAIOSFODNN7EXAMPLE'], ['agent', '[redacted: AWS access key id]']],
    ['a bare JWT', ['agent', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U'], ['agent', '[redacted: JWT]']],
    ['a long high-entropy token', ['agent', 'q8Zr3LxW0pN7vB2mK9tY4cJ6hF1sD5gA'], ['agent', '[redacted: high-entropy token]']],
    ['a header argument', ['agent', '-H', 'Authorization: Bearer abc'], ['agent', '-H', 'Authorization: [redacted: value of header Authorization]']],
    ['a URL with a password and a token parameter', ['agent', 'https://u:pw@example.test/x?token=abc&q=1'], ['agent', 'https://u:redacted@example.test/x?token=redacted&q=1']],
  ];
  for (const [form, argv, expected] of commandForms) {
    it(`redacts ${form} in a command line`, () => {
      expect(redactedCommand(argv)).toEqual(expected);
    });
  }

  it('keeps what only looks long: paths, UUIDs, plain words, short values', () => {
    const kept = ['agent', '--cwd', '/home/someone/projects/a-long-folder-name/2026', '--session', '0f8fad5b-d48e-4bd1-a7e3-1fd5a8a9c2b1', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', '--verbose', '-n', '3'];
    expect(redactedCommand(kept)).toEqual(kept);
  });

  it('redacts MCP server args and URLs in session/new, and secret-named _meta members', () => {
    const newSession = journaledMessage(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'session/new',
        params: { cwd: '/', mcpServers: [{ name: 'm', command: 'srv', args: ['--token', 'sk-live-secret-value-1234', '--port', '1'], env: [] }, { type: 'http', name: 'h', url: 'https://h.test/mcp?api_key=zzz', headers: [] }] },
      },
      { kind: 'request', method: 'session/new' },
    );
    expect(newSession).toMatchObject({
      params: { mcpServers: [{ args: ['--token', '[redacted: value of --token]', '--port', '1'] }, { url: 'https://h.test/mcp?api_key=redacted' }] },
    });
    const init = journaledMessage(
      { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true }, _meta: { apiKey: 'plain', nested: { sessionToken: 'x', theme: 'dark' } } } } },
      { kind: 'request', method: 'initialize' },
    );
    expect(init).toMatchObject({
      params: { clientCapabilities: { fs: { readTextFile: true }, _meta: { apiKey: '[redacted: _meta.apiKey]', nested: { sessionToken: '[redacted: _meta.nested.sessionToken]', theme: 'dark' } } } },
    });
  });

  it('replaces a credential inside any text in place, and nothing else of it', () => {
    const prompt = journaledMessage(
      { jsonrpc: '2.0', id: 5, method: 'session/prompt', params: { sessionId: 's', prompt: [{ type: 'text', text: `use ${OPENAI} for the call; task-abcdefghijklmnopqrstu stays` }] } },
      { kind: 'request', method: 'session/prompt' },
    );
    expect(prompt).toMatchObject({ params: { prompt: [{ text: 'use [redacted: OpenAI-style key] for the call; task-abcdefghijklmnopqrstu stays' }] } });
    const file = journaledMessage({ jsonrpc: '2.0', id: 6, result: { content: `A=1\nGITHUB_TOKEN=ghp_${'Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2'}\n` } }, { kind: 'response', method: 'fs/read_text_file' });
    expect(JSON.stringify(file)).not.toContain('ghp_Z9y8');
    expect(JSON.stringify(file)).toContain('[redacted: GitHub token]');
  });
});

describe('ObservationQueue', () => {
  it('drops what does not fit and says so as one gap before the next event', async () => {
    // Room for two 2-byte lines (2 + 64 each), not three.
    const queue = new ObservationQueue(140);
    const line = (wire: number): WireEvent => ({ kind: 'line', dir: 'toEditor', wire, at: 't', bytes: Buffer.from('{}') });
    for (let wire = 1; wire <= 6; wire++) queue.push(line(wire));
    expect(await queue.take(10)).toHaveLength(2);
    queue.push(line(7));
    queue.end();
    const rest = await queue.take(10);
    expect(rest.map((i) => i.kind)).toEqual(['gap', 'line', 'end']);
    expect(rest[0]).toMatchObject({ dropped: 4, fromWire: 3, toWire: 6 });
  });
  it('counts what it handed on to the worker against the bound until the worker releases it', () => {
    const queue = new ObservationQueue(140);
    const line = (wire: number): WireEvent => ({ kind: 'line', dir: 'toEditor', wire, at: 't', bytes: Buffer.from('{}') });
    queue.push(line(1));
    queue.push(line(2));
    const handed = queue.takeHeld();
    expect(handed.items).toHaveLength(2);
    // Still held by the worker: a third line does not fit.
    queue.push(line(3));
    expect(queue.takeHeld().items).toHaveLength(0);
    queue.release(handed.bytes);
    queue.push(line(4));
    const after = queue.takeHeld().items;
    expect(after.map((i) => i.kind)).toEqual(['gap', 'line']);
    expect(after[0]).toMatchObject({ dropped: 1, fromWire: 3, toWire: 3 });
  });
});

describe('ObservationQueue.takeWhenQuiet', () => {
  it('waits for the wire to pause before handing anything to the journal, unless the queue fills', async () => {
    // Half full at 50 of these 2-byte lines (2 + 64 bytes each): the 60 pushed at once below.
    const queue = new ObservationQueue(100 * 66);
    const line = (wire: number): WireEvent => ({ kind: 'line', dir: 'toEditor', wire, at: 't', bytes: Buffer.from('{}') });
    const started = Date.now();
    const traffic = setInterval(() => queue.push(line(1)), 5);
    setTimeout(() => clearInterval(traffic), 100);
    const first = await queue.takeWhenQuiet(1000, 30, 10_000);
    // Nothing was taken while lines kept arriving every 5 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(120);
    expect(first.length).toBeGreaterThan(5);
    for (let wire = 0; wire < 60; wire++) queue.push(line(wire));
    const t0 = Date.now();
    expect((await queue.takeWhenQuiet(1000, 10_000, 10_000)).length).toBe(60);
    expect(Date.now() - t0).toBeLessThan(50);
  });
});

describe('SessionRuns', () => {
  let n = 0;
  const runs = () => new SessionRuns((at) => ({ update: 'tap/started', detail: { at } }), () => `run-${String(++n).padStart(20, '0')}`);
  const msg = (dir: 'toAgent' | 'toEditor', wire: number, message: unknown): WireEvent => ({ kind: 'line', dir, wire, at: 't', bytes: Buffer.from(JSON.stringify(message)) });
  const updatesOf = (writes: RunWrite[]) => writes.flatMap((w) => w.observations.map((o) => `${w.sessionId}:${o.update}`));

  it('pairs responses with requests by direction, so both sides may use the same id', () => {
    const r = runs();
    const out: RunWrite[] = [];
    out.push(...r.place(msg('toAgent', 1, { jsonrpc: '2.0', id: 1, method: 'session/new', params: {} })));
    expect(out).toEqual([]);
    out.push(...r.place(msg('toEditor', 2, { jsonrpc: '2.0', id: 1, result: { sessionId: 's1' } })));
    // The agent's own request 1, and the editor's answer to it: still session s1, not another session/new.
    out.push(...r.place(msg('toEditor', 3, { jsonrpc: '2.0', id: 1, method: 'fs/read_text_file', params: { sessionId: 's1', path: '/a' } })));
    out.push(...r.place(msg('toAgent', 4, { jsonrpc: '2.0', id: 1, result: { content: 'a' } })));
    expect(updatesOf(out)).toEqual(['s1:tap/started', 's1:message', 's1:message', 's1:message', 's1:message']);
    const ended = r.end({ at: 't', reason: 'closed', exitCode: null, signal: null, stderrTail: '' });
    expect(ended).toEqual([expect.objectContaining({ sessionId: 's1', seal: expect.anything() })]);
  });

  it('opens a run for a session it first meets by name (session/load)', () => {
    const r = runs();
    const out = r.place(msg('toAgent', 1, { jsonrpc: '2.0', id: 1, method: 'session/load', params: { sessionId: 'old', cwd: '/', mcpServers: [] } }));
    expect(updatesOf(out)).toEqual(['old:tap/started', 'old:message']);
  });
});
