/**
 * The one server-sent-events parser (net/sse.ts): bytes in, lines cut at CR, LF or CRLF on the
 * bytes, so a character or a CRLF split between chunks survives; caps counted in bytes; and
 * readSse/readSseBatches, the body reader every streaming model driver parses through.
 */
import { describe, expect, it } from 'vitest';
import { ResponseTooLarge, type SseEvent, SseParser, readSse, readSseBatches } from './sse';

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

/** Every event the parser yields for these chunks, the clean end included. */
function parse(parts: Uint8Array[], parser = new SseParser()): SseEvent[] {
  return [...parts.flatMap((part) => parser.push(part)), ...parser.end()];
}

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('SseParser', () => {
  // 2-, 3- and 4-byte characters (é, €, 𝄞) and a surrogate-pair emoji, beside ASCII.
  const text = 'é€𝄞 👋 ok';
  const stream = utf8(`event: greet\r\ndata: ${text}\r\n\r\n`);

  it('a multi-byte character split at every byte boundary is decoded whole', () => {
    for (let cut = 0; cut <= stream.length; cut++) {
      const events = parse([stream.subarray(0, cut), stream.subarray(cut)]);
      expect(events, `cut at byte ${cut}`).toEqual([{ event: 'greet', data: text }]);
    }
  });

  it('a stream fed one byte at a time, and cut at every pair of boundaries, reads the same', () => {
    expect(parse([...stream].map((byte) => Uint8Array.of(byte)))).toEqual([{ event: 'greet', data: text }]);
    for (let first = 0; first <= stream.length; first++) {
      for (let second = first; second <= stream.length; second++) {
        const events = parse([stream.subarray(0, first), stream.subarray(first, second), stream.subarray(second)]);
        expect(events, `cuts at ${first} and ${second}`).toEqual([{ event: 'greet', data: text }]);
      }
    }
  });

  it('a CRLF split between chunks is one line end, also across an empty chunk', () => {
    expect(parse([utf8('data: a\r'), utf8('\n\r'), utf8('\n')])).toEqual([{ event: 'message', data: 'a' }]);
    expect(parse([utf8('data: a\r'), new Uint8Array(0), utf8('\ndata: b\r\n\r\n')])).toEqual([{ event: 'message', data: 'a\nb' }]);
  });

  it('CR alone and LF alone end lines too, mixed in one stream', () => {
    expect(parse([utf8('data: a\rdata: b\n\rdata: c\r\n\n')])).toEqual([
      { event: 'message', data: 'a\nb' },
      { event: 'message', data: 'c' },
    ]);
    // CR CR: a line end, then a blank line (not one CRLF).
    expect(parse([utf8('data: x\r'), utf8('\rdata: y\n\n')])).toEqual([
      { event: 'message', data: 'x' },
      { event: 'message', data: 'y' },
    ]);
  });

  it('drops exactly one space after the colon; a field with no colon has an empty value', () => {
    expect(parse([utf8('data:  two\ndata:none\ndata\n\n')])).toEqual([{ event: 'message', data: ' two\nnone\n' }]);
  });

  it('drops a byte-order mark opening the stream, even split, and only there', () => {
    const bom = Uint8Array.of(0xef, 0xbb, 0xbf);
    expect(parse([bom.subarray(0, 1), new Uint8Array([...bom.subarray(1), ...utf8('data: 1\n\n')])])).toEqual([{ event: 'message', data: '1' }]);
    // Elsewhere it is part of the field name, which is then no field this parser reads.
    expect(parse([utf8('data: 1\n\n\ufeffdata: 2\n\n')])).toEqual([{ event: 'message', data: '1' }]);
  });

  it('keeps its own copy of an unfinished line: the caller may reuse its chunk', () => {
    const parser = new SseParser();
    const chunk = utf8('data: abc');
    expect(parser.push(chunk)).toEqual([]);
    chunk.fill(0x21);
    expect(parser.push(utf8('def\n\n'))).toEqual([{ event: 'message', data: 'abcdef' }]);
  });

  it('maxEventBytes counts the bytes of one event, not its characters', () => {
    // 10 euro signs: 10 characters, 30 bytes, plus "data: " (6 bytes).
    const euros = utf8(`data: ${'€'.repeat(10)}\n\n`);
    expect(parse([euros], new SseParser({ maxEventBytes: 36 }))).toEqual([{ event: 'message', data: '€'.repeat(10) }]);
    const error = (() => {
      try {
        parse([euros.subarray(0, 20), euros.subarray(20)], new SseParser({ maxEventBytes: 35 }));
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ResponseTooLarge);
    expect(error).toMatchObject({ part: 'event', limit: 35, bytes: 36 });
  });

  it('maxEventBytes refuses an unfinished line as it grows, before its end arrives', () => {
    const parser = new SseParser({ maxEventBytes: 16 });
    expect(parser.push(utf8('data: 0123456789'))).toEqual([]);
    expect(() => parser.push(utf8('a'))).toThrow(ResponseTooLarge);
  });

  it('maxEventBytes bounds each event alone: many small events and comments in one chunk pass', () => {
    const many = utf8(': keep-alive\n\n'.repeat(10) + 'data: 1234\n\n'.repeat(50));
    const events = parse([many], new SseParser({ maxEventBytes: 10 }));
    expect(events).toHaveLength(50);
  });
});

describe('readSse caps in bytes', () => {
  it('counts bytes, not characters, against maxBytes', async () => {
    const body = Buffer.from(`data: ${'€'.repeat(10)}\n\n`, 'utf8');
    expect(body.toString('utf8').length).toBeLessThan(20);
    const read = async (max: number) => {
      const out: SseEvent[] = [];
      for await (const event of readSse(chunks(body.toString('utf8')), max)) out.push(event);
      return out;
    };
    expect(await read(body.length)).toEqual([{ event: 'message', data: '€'.repeat(10) }]);
    await expect(read(body.length - 1)).rejects.toMatchObject({ name: 'ResponseTooLarge', part: 'body', limit: body.length - 1, bytes: body.length });
  });
});
