/**
 * Newline-delimited framing of one direction of the tap's wire, for observation only: the bytes
 * themselves are forwarded as they arrive (acp-tap.ts pipes them), so nothing here can delay,
 * split or change what the other side reads. A line may arrive in any number of chunks and end
 * in LF or CRLF; its terminator is not part of what is observed.
 *
 * Memory is bounded per direction: a line that grows past `maxLineBytes` stops being buffered
 * and is only hashed and measured (with its first bytes kept for a preview) until its newline,
 * then reported as over-long. A final line without a newline is reported when the stream ends.
 *
 * With `shareChunks`, a line that begins and ends in one chunk is reported as a view of that
 * chunk, not a copy: the forwarding thread frames every message, and a copy per line (a pool
 * allocation and a memcpy of the whole message) was the largest part of framing in bench
 * acp-tap's profile. A view keeps its whole chunk alive while the line is held, which the
 * queue's byte bound does not count (one short line can hold a read of 64 KB), so it is only
 * for a consumer that lets go of every line within the turn it was read: the tap's journal
 * worker path, whose flush copies the turn's lines into the buffer it transfers
 * (observation-worker.ts). The start of a line that the next chunk ends is copied either way:
 * it waits for that chunk for as long as the wire stays quiet, and a view would keep the whole
 * chunk with it. A line assembled from several chunks is one new Buffer (Buffer.concat).
 */
import { createHash, type Hash } from 'node:crypto';

export type FramedLine = { kind: 'line'; bytes: Buffer } | { kind: 'overlong'; size: number; digest: string; head: Buffer };

const HEAD_BYTES = 512;

export class LineFramer {
  private parts: Buffer[] = [];
  private buffered = 0;
  private overlong: { hash: Hash; size: number; head: Buffer } | null = null;

  constructor(
    private readonly maxLineBytes: number,
    private readonly emit: (line: FramedLine) => void,
    /** Whether a line read whole may be a view of its chunk (see above); copied otherwise. */
    private readonly shareChunks = false,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        if (start < chunk.length) this.append(chunk.subarray(start), true);
        return;
      }
      this.append(chunk.subarray(start, nl), false);
      this.finishLine();
      start = nl + 1;
    }
  }

  /** The stream ended: a last line without a newline is still a line. */
  end(): void {
    if (this.buffered > 0 || this.overlong) this.finishLine();
  }

  /** `waits`: the piece ends its chunk, so it waits for the next one (always copied, see above). */
  private append(piece: Buffer, waits: boolean): void {
    if (piece.length === 0) return;
    if (this.overlong) {
      this.overlong.hash.update(piece);
      this.overlong.size += piece.length;
      return;
    }
    if (this.buffered + piece.length <= this.maxLineBytes) {
      this.parts.push(waits || !this.shareChunks ? Buffer.from(piece) : piece);
      this.buffered += piece.length;
      return;
    }
    const sofar = Buffer.concat([...this.parts, piece]);
    const hash = createHash('sha256').update(sofar);
    this.overlong = { hash, size: sofar.length, head: Buffer.from(sofar.subarray(0, HEAD_BYTES)) };
    this.parts = [];
    this.buffered = 0;
  }

  private finishLine(): void {
    if (this.overlong) {
      const { hash, size, head } = this.overlong;
      this.overlong = null;
      // The terminator's CR, when there was one, is hashed with the line: an over-long line is
      // reported as the bytes it was, not re-read to strip one byte.
      this.emit({ kind: 'overlong', size, digest: hash.digest('hex'), head });
      return;
    }
    let bytes = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts);
    this.parts = [];
    this.buffered = 0;
    if (bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    this.emit({ kind: 'line', bytes });
  }
}
