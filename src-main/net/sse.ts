/**
 * Server-sent events read from bytes: the one parser behind every client that reads an event
 * stream (the model drivers through readSse/readSseBatches, the A2A client's SubscribeToTask).
 *
 * What is true, and why:
 * - Bytes in, never text decoded chunk by chunk: a chunk boundary can fall inside a UTF-8
 *   character, and decoding each chunk alone turns its two halves into replacement characters.
 *   Text is decoded only up to a line end (CR and LF never occur inside a UTF-8 sequence); the
 *   unfinished line after it is kept as bytes until its end arrives.
 * - A line ends at CR, LF or CRLF (the stream format allows all three), a CRLF split across two
 *   chunks included: it is one line end, not a line end and a blank line.
 * - Caps count bytes, since bytes are what a far side sends and what memory holds:
 *   readSseBatches caps the whole body, the parser's `maxEventBytes` caps one event (for a
 *   stream with no end, where only each event can be bounded).
 * - `data:` lines are joined with LF until a blank line dispatches the event; `event:` names it
 *   ('message' when none); one space after the colon is dropped; comments (`:`) and the other
 *   fields (`id:`, `retry:`) are ignored: no reader here resumes a stream by event id, nor lets
 *   the far side set its retry delay. An event with no data line is not dispatched.
 * - A byte-order mark opening the stream is dropped.
 */

/** One server-sent event: its `event:` name ('message' when none was given) and its joined `data:` lines. */
export interface SseEvent {
  event: string;
  data: string;
}

/** A body, or one event of it, grew over its cap; `bytes` is how many had been read when it was refused. */
export class ResponseTooLarge extends Error {
  override readonly name = 'ResponseTooLarge';
  constructor(
    readonly bytes: number,
    readonly limit: number,
    /** `body`: the whole response (readSse); `event`: one event (SseParser's maxEventBytes). */
    readonly part: 'body' | 'event' = 'body',
  ) {
    super(part === 'body' ? `response grew over the ${limit}-byte cap` : `one event grew over the ${limit}-byte cap`);
  }
}

export interface SseParserOptions {
  /**
   * The most bytes one event may hold: its `data:` and `event:` lines (their UTF-8 length) and
   * the line still arriving. Past it push() throws ResponseTooLarge (part `event`). Default: no cap.
   */
  maxEventBytes?: number;
}

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const BOM = 0xfeff;

/**
 * Server-sent events parsed incrementally from bytes: push() each chunk as it arrives and get
 * the events it completes; end() at a clean end of stream. See the module comment for the rules.
 */
export class SseParser {
  // ignoreBOM: each run of whole lines is decoded alone, and a decoder left to its default would
  // drop a U+FEFF opening any run, not only the one opening the stream.
  readonly #decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  readonly #maxEventBytes: number;
  /** The unfinished line's bytes, copied: a caller may reuse its chunk's memory. */
  #partial: Uint8Array[] = [];
  #partialBytes = 0;
  /** The last chunk ended in CR: an LF opening the next one ends no second line. */
  #afterCr = false;
  #firstLine = true;
  #data: string[] = [];
  #event = '';
  /** UTF-8 bytes the current event holds: its data and event lines. */
  #eventBytes = 0;

  constructor(options: SseParserOptions = {}) {
    this.#maxEventBytes = options.maxEventBytes ?? Infinity;
  }

  /** The events this chunk completes (often none). Throws ResponseTooLarge past maxEventBytes. */
  push(chunk: Uint8Array): SseEvent[] {
    const out: SseEvent[] = [];
    let start = 0;
    if (this.#afterCr && chunk.length > 0) {
      this.#afterCr = false;
      if (chunk[0] === LF) start = 1;
    }
    // The chunk's whole lines run up to its last line end, where no character can be cut: they
    // are decoded at once (one decode per chunk, not per line: this runs for every streamed
    // token), then split as text. What follows the last line end waits, as bytes, for the next.
    const last = Math.max(chunk.lastIndexOf(LF), chunk.lastIndexOf(CR));
    if (last >= start) {
      this.#lines(this.#decoder.decode(this.#withPartial(chunk.subarray(start, last + 1))), out);
      // A CR ending the chunk may be the first half of a CRLF.
      if (last === chunk.length - 1 && chunk[last] === CR) this.#afterCr = true;
      start = last + 1;
    }
    if (start < chunk.length) {
      this.#partial.push(new Uint8Array(chunk.subarray(start)));
      this.#partialBytes += chunk.length - start;
      this.#checkCap();
    }
    return out;
  }

  /** At a clean end of stream: a last line without its line end, and a last event without its blank line, still count. */
  end(): SseEvent[] {
    const out: SseEvent[] = [];
    if (this.#partialBytes > 0) this.#line(this.#decoder.decode(this.#withPartial(new Uint8Array(0))), out);
    this.#dispatch(out);
    return out;
  }

  /** `tail` after the unfinished line's bytes, which it then no longer holds. */
  #withPartial(tail: Uint8Array): Uint8Array {
    if (this.#partial.length === 0) return tail;
    const whole = new Uint8Array(this.#partialBytes + tail.length);
    let at = 0;
    for (const piece of this.#partial) {
      whole.set(piece, at);
      at += piece.length;
    }
    whole.set(tail, at);
    this.#partial = [];
    this.#partialBytes = 0;
    return whole;
  }

  /** Whole lines, the last one ended too; each ends at CR, LF or CRLF. */
  #lines(text: string, out: SseEvent[]): void {
    // Both line ends are searched and each search kept until passed: a stream that never sends
    // CR pays for one search of it per chunk, not one per line.
    let at = 0;
    let lf = text.indexOf('\n');
    let cr = text.indexOf('\r');
    while (lf >= 0 || cr >= 0) {
      const end = cr < 0 || (lf >= 0 && lf < cr) ? lf : cr;
      this.#line(text.slice(at, end), out);
      at = end + 1;
      if (end === cr) {
        if (text.charCodeAt(at) === LF) at += 1;
        cr = text.indexOf('\r', at);
      }
      if (lf >= 0 && lf < at) lf = text.indexOf('\n', at);
    }
  }

  #line(line: string, out: SseEvent[]): void {
    if (this.#firstLine) {
      this.#firstLine = false;
      if (line.charCodeAt(0) === BOM) line = line.slice(1);
    }
    if (line === '') {
      this.#dispatch(out);
      return;
    }
    if (line.charCodeAt(0) === COLON) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    if (field !== 'data' && field !== 'event') return;
    const valueAt = colon < 0 ? line.length : line.charCodeAt(colon + 1) === SPACE ? colon + 2 : colon + 1;
    const value = line.slice(valueAt);
    if (field === 'data') this.#data.push(value);
    else this.#event = value;
    if (this.#maxEventBytes !== Infinity) {
      this.#eventBytes += utf8Length(line);
      this.#checkCap();
    }
  }

  #dispatch(out: SseEvent[]): void {
    if (this.#data.length) out.push({ event: this.#event || 'message', data: this.#data.join('\n') });
    this.#data = [];
    this.#event = '';
    this.#eventBytes = 0;
  }

  #checkCap(): void {
    const held = this.#eventBytes + this.#partialBytes;
    if (held > this.#maxEventBytes) throw new ResponseTooLarge(held, this.#maxEventBytes, 'event');
  }
}

/**
 * The UTF-8 length of decoded text: the bytes it came from when they were well-formed (a
 * malformed sequence counts as the three bytes of the replacement character it became).
 */
function utf8Length(text: string): number {
  let bytes = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    // 2 bytes below U+0800, 3 above; a surrogate pair is 4, 2 for each half.
    if (unit >= 0x80) bytes += unit >= 0x800 && (unit < 0xd800 || unit > 0xdfff) ? 2 : 1;
  }
  return bytes;
}

/** Counts the bytes readSse has taken from the body (the caller may read it when the call is cut). */
export interface ByteMeter {
  bytes: number;
}

/**
 * Reads a body as server-sent events, yielding each as soon as its blank line arrives. The
 * byte cap is checked on every chunk: of the chunk that crosses `maxBytes` only the bytes
 * inside the cap are parsed (events they complete are yielded), then it throws
 * ResponseTooLarge (the caller decides what that means: for a model driver a 2xx body that
 * size was produced, so never `unavailable`). Transport errors (socket closed, deadline)
 * propagate as they are. At a clean end a last event without its blank line is still yielded.
 * The caller owns the body: break out of the loop and destroy it (the generator does not, so a
 * caller can stop at `[DONE]`).
 */
export async function* readSse(body: AsyncIterable<Uint8Array>, maxBytes: number, meter: ByteMeter = { bytes: 0 }): AsyncGenerator<SseEvent, void, undefined> {
  for await (const batch of readSseBatches(body, maxBytes, meter)) yield* batch;
}

/**
 * readSse by the chunk: the events each network chunk completes, as one array (never empty).
 * Same cap, same errors, same last event at a clean end. For the per-token path: an async
 * generator's every `yield` is a promise round trip, and a chunk carries dozens of token
 * events, so a driver that loops over the batch itself pays that once per chunk, not once per
 * token (bench/providers.bench.ts).
 */
export async function* readSseBatches(body: AsyncIterable<Uint8Array>, maxBytes: number, meter: ByteMeter = { bytes: 0 }): AsyncGenerator<SseEvent[], void, undefined> {
  const parser = new SseParser();
  for await (const piece of body) {
    const before = meter.bytes;
    meter.bytes += piece.length;
    if (meter.bytes > maxBytes) {
      // The bytes inside the cap were read legitimately: events they complete still count
      // (one may carry the usage that decides the rung), then reading stops.
      const inside = parser.push(piece.subarray(0, maxBytes - before));
      if (inside.length) yield inside;
      throw new ResponseTooLarge(meter.bytes, maxBytes);
    }
    const events = parser.push(piece);
    if (events.length) yield events;
  }
  const last = parser.end();
  if (last.length) yield last;
}
