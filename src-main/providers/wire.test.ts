/**
 * The shared wire helpers: the SSE reader every streaming driver parses through, and the
 * retry window a 429/529 carries into the runtime's backoff.
 */
import { describe, expect, it } from 'vitest';
import { Deadline, ResponseTooLarge, type SseEvent, normalisedBaseUrl, readSse, readSseBatches, retryAfterOf, scrubSecret } from './wire';

async function* chunks(...parts: string[]): AsyncGenerator<Buffer> {
  for (const part of parts) yield Buffer.from(part, 'utf8');
}

async function collect(body: AsyncIterable<Buffer>, max = 1 << 20): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const event of readSse(body, max)) out.push(event);
  return out;
}

describe('readSse', () => {
  it('yields events whose lines are split across chunks, names from event: lines', async () => {
    const events = await collect(chunks('event: message_start\nda', 'ta: {"a":', '1}\n', '\nevent: ping\ndata: {}\n\n'));
    expect(events).toEqual([
      { event: 'message_start', data: '{"a":1}' },
      { event: 'ping', data: '{}' },
    ]);
  });

  it('defaults the event name to message and does not carry a name into the next event', async () => {
    const events = await collect(chunks('event: first\ndata: 1\n\ndata: 2\n\n'));
    expect(events).toEqual([
      { event: 'first', data: '1' },
      { event: 'message', data: '2' },
    ]);
  });

  it('ignores comments and other fields, joins multi-line data, and handles CRLF', async () => {
    const events = await collect(chunks(': keep-alive\r\n', 'id: 7\r\nretry: 10\r\nevent: x\r\ndata: a\r\ndata:b\r\n\r\n', ':\r\n\r\n'));
    expect(events).toEqual([{ event: 'x', data: 'a\nb' }]);
  });

  it('a CRLF split between chunks and a multi-byte character split between chunks survive', async () => {
    const euro = Buffer.from('data: €\r\n\r\n', 'utf8');
    async function* split(): AsyncGenerator<Buffer> {
      yield euro.subarray(0, 7); // inside the euro sign
      yield euro.subarray(7, 10); // before the \n of the first CRLF
      yield euro.subarray(10);
    }
    expect(await collect(split())).toEqual([{ event: 'message', data: '€' }]);
  });

  it('an event without data is not dispatched; a last event lacking its blank line still is', async () => {
    const events = await collect(chunks('event: lonely\n\n', 'event: last\ndata: end'));
    expect(events).toEqual([{ event: 'last', data: 'end' }]);
  });

  it('enforces the byte cap: nothing past it is parsed, what came before was yielded', async () => {
    const seen: SseEvent[] = [];
    const meter = { bytes: 0 };
    const read = async () => {
      for await (const event of readSse(chunks('data: 1\n\n', 'data: 22222222\n\n'), 12, meter)) seen.push(event);
    };
    const error = await read().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseTooLarge);
    expect((error as ResponseTooLarge).limit).toBe(12);
    expect(seen).toEqual([{ event: 'message', data: '1' }]);
    expect(meter.bytes).toBe(25);
  });

  it('of the chunk that crosses the cap, events complete inside the cap still count', async () => {
    const seen: SseEvent[] = [];
    const error = await (async () => {
      for await (const event of readSse(chunks('data: in\n\ndata: out-of-bounds\n\n'), 12)) seen.push(event);
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseTooLarge);
    expect(seen).toEqual([{ event: 'message', data: 'in' }]);
  });

  it('a transport error from the body propagates as it is', async () => {
    async function* broken(): AsyncGenerator<Buffer> {
      yield Buffer.from('data: 1\n\n');
      throw Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    }
    const seen: SseEvent[] = [];
    const error = await (async () => {
      for await (const event of readSse(broken(), 1000)) seen.push(event);
    })().catch((caught: unknown) => caught);
    expect((error as { code?: string }).code).toBe('UND_ERR_SOCKET');
    expect(seen).toHaveLength(1);
  });
});

describe('readSseBatches', () => {
  it('groups the events each chunk completes, never yields an empty batch, and keeps the cap', async () => {
    const batches: SseEvent[][] = [];
    for await (const batch of readSseBatches(chunks('data: 1\n\ndata: 2\n\nda', 'ta: 3', '\n\n', ': ping\n\n', 'data: 4'), 1 << 20)) batches.push(batch);
    expect(batches.map((batch) => batch.map((event) => event.data))).toEqual([['1', '2'], ['3'], ['4']]);
    const seen: string[] = [];
    const meter = { bytes: 0 };
    const capped = async () => {
      for await (const batch of readSseBatches(chunks('data: 1\n\ndata: 2\n\ndata: 333333\n\n'), 18, meter)) seen.push(...batch.map((event) => event.data));
    };
    await expect(capped()).rejects.toBeInstanceOf(ResponseTooLarge);
    expect(seen).toEqual(['1', '2']);
    expect(meter.bytes).toBe(32);
  });
});

describe('Deadline', () => {
  it('says how much of the whole-request deadline is left, never below zero', async () => {
    const deadline = new Deadline(60, undefined);
    try {
      expect(deadline.remainingMs()).toBeGreaterThan(40);
      expect(deadline.remainingMs()).toBeLessThanOrEqual(60);
      await new Promise((resolve) => setTimeout(resolve, 80));
      expect(deadline.remainingMs()).toBe(0);
      expect(deadline.signal.aborted).toBe(true);
    } finally {
      deadline.dispose();
    }
  });
});

describe('retryAfterOf', () => {
  it('reads delta-seconds, retry-after-ms (which wins), HTTP dates, and nothing else', () => {
    expect(retryAfterOf({ 'retry-after': '3' })).toBe(3000);
    expect(retryAfterOf({ 'retry-after': ' 0.5 ' })).toBe(500);
    expect(retryAfterOf({ 'retry-after': ['2', '9'] })).toBe(2000);
    expect(retryAfterOf({ 'retry-after': '3', 'retry-after-ms': '1250' })).toBe(1250);
    expect(retryAfterOf({ 'retry-after': '3', 'retry-after-ms': 'soon' })).toBe(3000);
    const inAMinute = retryAfterOf({ 'retry-after': new Date(Date.now() + 60_000).toUTCString() });
    expect(inAMinute).toBeGreaterThan(50_000);
    expect(inAMinute).toBeLessThanOrEqual(60_000);
    expect(retryAfterOf({ 'retry-after': new Date(Date.now() - 60_000).toUTCString() })).toBe(0);
    expect(retryAfterOf({ 'retry-after': 'soon' })).toBeNull();
    expect(retryAfterOf({})).toBeNull();
  });
});

describe('small guards', () => {
  it('normalisedBaseUrl refuses a URL that could carry a secret into the profile, naming the driver', () => {
    expect(normalisedBaseUrl('https://api.example.com/v1/')).toBe('https://api.example.com/v1');
    expect(() => normalisedBaseUrl('https://user:pw@api.example.com', 'anthropic')).toThrow(/^anthropic: baseUrl must not carry credentials/);
    expect(() => normalisedBaseUrl('https://api.example.com/?key=1', 'anthropic')).toThrow(/query or fragment/);
    expect(() => normalisedBaseUrl('file:///etc/passwd')).toThrow(/http or https/);
  });

  it('scrubSecret removes the key and any 8-character slice of it', () => {
    const key = 'sk-ant-0123456789abcdef';
    expect(scrubSecret(`bad key ${key}!`, key)).toBe('bad key [key]!');
    expect(scrubSecret('prefix 456789abcd suffix', key)).not.toContain('456789ab');
  });
});
